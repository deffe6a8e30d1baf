//! Hostile case files: a few hundred bytes that ask for an output of 32 GiB,
//! files without end, tensors declared past the host limit, names of
//! megabytes. Each is refused with a short message, in bounded memory.

use super::common;

use crate::case::{parse_cases, read_cases, MAX_CASE_FILE_BYTES};
use crate::runner::{run_case, run_files, CpuExecutor, Executor, Format, GpuExecutor, Outcome};

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

/// Expand, Pad, OneHot and a broadcast Add to 65,535² INT64 elements
/// (32 GiB): every backend refuses each with `TooLarge` naming the host
/// limit, instead of aborting on the allocation.
#[test]
fn outputs_of_32_gib_are_too_large_on_both_backends() {
    let n = 65_535u32;
    let big = i64::from(n);
    let ones = vec![1i64; n as usize];
    let files = [
        onnx_case(
            "Expand",
            &[("input", &[1], &[7]), ("shape", &[2], &[big, big])],
            &[n, n],
        ),
        onnx_case(
            "Pad",
            &[
                ("data", &[1, 1], &[5]),
                ("pads", &[4], &[0, 0, big - 1, big - 1]),
            ],
            &[n, n],
        ),
        onnx_case(
            "OneHot",
            &[
                ("indices", &[1], &[0]),
                ("depth", &[], &[big * big]),
                ("values", &[2], &[0, 1]),
            ],
            &[1, n * n],
        ),
        onnx_case(
            "Add",
            &[("A", &[n, 1], &ones), ("B", &[1, n], &ones)],
            &[n, n],
        ),
    ];
    let gpu = ops_gpu::shared().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
    let executors: [&dyn Executor; 2] = [&CpuExecutor, &GpuExecutor(gpu)];
    for text in &files {
        let cases = parse_cases("hostile.json", text.as_bytes(), ops::catalog())
            .unwrap_or_else(|e| panic!("{e}\n{}", &text[..200.min(text.len())]));
        let reports = run_case(&cases[0], &executors);
        assert_eq!(reports.len(), 2, "{reports:?}");
        for r in &reports {
            let error = r.error.as_deref().unwrap_or_default();
            assert!(matches!(r.outcome, Outcome::Fail(_)), "{r}");
            assert!(
                error.starts_with("too large: ") && error.contains("of 34358689800 bytes"),
                "{r}"
            );
            assert!(error.contains("the host limit of"), "{r}");
        }
    }
}

/// A tensor a case file declares past the host limit is refused before its
/// data is read into a tensor.
#[test]
fn declared_tensors_past_the_host_limit_are_refused() {
    let e = common::one_error(
        r#"{"name": "t", "op": "Fake", "attributes": {"mode": "copy"},
            "inputs": {"input": {"dtype": "float16", "shape": [65536, 65536], "data": []}},
            "outputs": {"output": {"dtype": "float16", "shape": [1]}}}"#,
    );
    assert!(
        e.starts_with("t.json: $.inputs.input.data: too large: the tensor of 8589934592 bytes"),
        "{e}"
    );
    assert!(e.contains("host limit"), "{e}");
}

/// `/dev/zero` and a file past [`MAX_CASE_FILE_BYTES`] are bad input, read
/// no further than the limit.
#[test]
fn endless_and_oversized_files_are_bad_input() {
    let dir = std::env::temp_dir().join(format!("ops-hostile-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.json");
    // Sparse: no disk is written.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(MAX_CASE_FILE_BYTES + 1)
        .unwrap();
    for path in [std::path::PathBuf::from("/dev/zero"), big] {
        let e = read_cases(&path, common::catalog()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: the file is larger than a case file may be ({MAX_CASE_FILE_BYTES} bytes)",
                path.display()
            )
        );
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let summary = run_files(
            &[&path],
            common::catalog(),
            &[&CpuExecutor],
            Format::Text,
            &mut out,
            &mut err,
        )
        .unwrap();
        assert_eq!((summary.errors, summary.exit_code()), (1, 2));
    }
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
