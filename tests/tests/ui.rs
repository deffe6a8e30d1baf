//! Spec mistakes are compile errors that point into the spec file: each
//! `ui/<category>/<mistake>.rs` (in this crate) expands `<mistake>.op` beside it, and
//! the reviewed `.stderr` holds the diagnostics (file, line, column, the
//! quoted line, the near miss). Regenerate with `TRYBUILD=overwrite`.

#[test]
fn spec_mistakes_are_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*/*.rs");
}
