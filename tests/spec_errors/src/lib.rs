//! Spec mistakes are compile errors that point into the spec file: each
//! `ui/<category>/<mistake>.rs` (in this crate) expands `<mistake>.op`
//! beside it, and the reviewed `.stderr` holds the diagnostics (file, line,
//! column, the quoted line, the near miss). Regenerate with
//! `TRYBUILD=overwrite cargo test -p ops-spec-errors`.
//!
//! A crate of its own so that trybuild, which builds the dependencies of
//! the crate it runs in once more, builds only the spec compiler and
//! `ops-core`.

#[cfg(test)]
mod tests {
    #[test]
    fn spec_mistakes_are_compile_errors() {
        let t = trybuild::TestCases::new();
        t.compile_fail("ui/*/*.rs");
    }
}
