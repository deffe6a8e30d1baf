//! Every catalog descriptor's page carries a compiled example (a doctest
//! of the `ops` crate), but for those listed here, whose specs the example
//! search (`ops_spec::codegen::example`) finds no descriptor for: their
//! pages keep the text sketch. The list is empty; it may only shrink, never
//! grow silently: a spec that loses its example fails this test.

use std::path::Path;

/// Descriptors without a compiled example (base names, as `{name}Desc`).
const WITHOUT_EXAMPLE: &[&str] = &[];

#[test]
fn catalog_descriptors_have_compiled_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("onnx")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "op") {
                files.push(path);
            }
        }
    }
    files.sort();
    let (mut with, mut without) = (0, Vec::new());
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let ns = if f.parent() == Some(root.as_path()) {
            ""
        } else {
            "onnx::"
        };
        let examples = ops_spec::codegen::examples(&src);
        assert!(!examples.is_empty(), "{}: no descriptor", f.display());
        for (name, ex) in examples {
            match ex {
                Some(_) => with += 1,
                None => without.push(format!("{ns}{name}")),
            }
        }
    }
    eprintln!(
        "{with} descriptors with a compiled example, {} without: {without:?}",
        without.len()
    );
    assert_eq!(
        without, WITHOUT_EXAMPLE,
        "descriptors without a compiled example"
    );
}
