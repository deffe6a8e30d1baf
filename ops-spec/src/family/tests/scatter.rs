//! Scatter specs through the spec compiler: what compiles and the
//! diagnostics of what does not (the `collisions` word, the `combine`
//! instruction, the family's misuse and its table check).

/// A scatter spec whose compute block ends with `tail`, `types` in its
/// data rows.
fn spec(types: &str, tail: &str) -> String {
    format!(
        "operator T {{
            input x: tensor \"X\"
            input i: tensor \"I\"
            input u: tensor \"U\"
            output y: tensor \"Y\"
            rules {{ shape y = x.sizes => \"y\"; }}
            support {{ ranks 1..=4 {{ x: {types}; i: INT32; u: {types}; y: {types}; }} }}
            compute scatter_elements {{
                input: x  indices: i  updates: u  output: y  axis: 0
                {tail}
            }}
        }}"
    )
}

fn errors(src: &str) -> Vec<String> {
    match crate::codegen::expand("t.op", src) {
        Ok(_) => Vec::new(),
        Err(f) => f.diagnostics.into_iter().map(|d| d.message).collect(),
    }
}

#[test]
fn collisions_or_a_combine() {
    assert_eq!(
        errors(&spec("FLOAT32 INT8", "collisions: last_write_wins")),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&spec("FLOAT32 INT8 FLOAT64", "combine: b")),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&spec("FLOAT16 INT64", "combine: max(a, b) + 1")),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&spec("FLOAT32", "")),
        ["pattern `scatter_elements` needs either `collisions` or `combine`"]
    );
    assert_eq!(
        errors(&spec("FLOAT32", "collisions: last_write_wins combine: b")),
        ["pattern `scatter_elements` needs either `collisions` or `combine`"]
    );
    assert_eq!(
        errors(&spec("FLOAT32", "combine: a < b")),
        ["`combine` is BOOL, but the pattern needs a `T` (the scattered tensor's data type)"]
    );
    assert_eq!(
        errors(&spec("FLOAT32", "combine: a + x")),
        ["`combine` cannot use `x`"]
    );
    assert_eq!(
        errors(&spec("FLOAT32 INT32", "combine: sqrt(a + b)")),
        ["INT32 cannot be combined: `sqrt` is not defined on INT32"]
    );
    // FLOAT64 adds, divides and takes powers on the GPU (word pairs).
    assert_eq!(
        errors(&spec("FLOAT64", "combine: a + b")),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&spec("FLOAT64", "combine: a / b")),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&spec("FLOAT64", "combine: pow(a, b)")),
        Vec::<String>::new()
    );
}
