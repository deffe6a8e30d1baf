//! Hostile case files: names of megabytes. Each is refused with a short
//! message.

use super::common;

use crate::case::parse_cases;

/// An ONNX-shaped case of `op` with INT64 `inputs` (name, shape, data)
/// and one output `y` of `out` INT64 elements, without expected data.
fn onnx_case(op: &str, inputs: &[(&str, &[u32], &[i64])], out: &[u32]) -> String {
    let tensors: Vec<String> = inputs
        .iter()
        .map(|(name, shape, data)| {
            format!(
                r#"{{"name": "{name}", "dtype": "int64", "shape": {shape:?}, "data": {data:?}}}"#
            )
        })
        .collect();
    let names: Vec<String> = inputs.iter().map(|(n, _, _)| format!("{n:?}")).collect();
    format!(
        r#"{{"op": "{op}", "opset": 18, "node_inputs": [{}], "node_outputs": ["y"],
            "inputs": [{}], "outputs": [{{"name": "y", "dtype": "int64", "shape": {out:?}}}]}}"#,
        names.join(", "),
        tensors.join(", ")
    )
}

/// An operator, attribute or tensor name of 10 MB is quoted cut short, with
/// its control characters escaped.
#[test]
fn long_names_are_cut_and_escaped_in_messages() {
    let name = format!("\u{1b}[31m{}", "x".repeat(10 << 20));
    let cases = [
        format!(
            r#"{{"name": "t", "op": "{}", "inputs": {{}}, "outputs": {{}}}}"#,
            json(&name)
        ),
        format!(
            r#"{{"name": "t", "op": "Fake", "attributes": {{"mode": "copy", "{}": 1}},
                "inputs": {{"input": {{"dtype": "uint8", "shape": [1], "data": [1]}}}},
                "outputs": {{"output": {{"dtype": "uint8", "shape": [1]}}}}}}"#,
            json(&name)
        ),
        format!(
            r#"{{"name": "t", "op": "Fake", "attributes": {{"mode": "copy"}},
                "inputs": {{"input": {{"dtype": "uint8", "shape": [1], "data": [1]}}, "{}": {{}}}},
                "outputs": {{"output": {{"dtype": "uint8", "shape": [1]}}}}}}"#,
            json(&name)
        ),
        onnx_case(&json(&name), &[], &[1]),
    ];
    for text in &cases {
        let e = match parse_cases("t.json", text.as_bytes(), common::catalog()) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        };
        assert!(e.len() < 600, "{} bytes: {}", e.len(), &e[..600]);
        assert!(!e.contains('\u{1b}'), "{e}");
        assert!(e.contains("\\u{1b}[31mxxx"), "{e}");
        assert!(e.contains("... (10485765 bytes)"), "{e}");
    }
}

/// `s` as the inside of a JSON string literal.
fn json(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}
