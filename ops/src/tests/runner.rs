//! The comparator and the runner, over the fake catalog.

use super::common;

use crate::runner::{
    compare, coordinates, run_case, run_files, run_files_with, Backend, CpuExecutor, Executor,
    Format, MismatchKind, Outcome, RunOptions, Step, Summary,
};
use common::parse;
use ops_core::{f16, HostTensor, OpError, Operator};

fn f32s(sizes: &[u32], v: &[f32]) -> HostTensor {
    HostTensor::from_slice(sizes.to_vec(), v).unwrap()
}

#[test]
fn first_mismatch_with_coordinates() {
    let expected = HostTensor::from_slice([2, 3], &[0u32, 1, 2, 3, 4, 5]).unwrap();
    let actual = HostTensor::from_slice([2, 3], &[0u32, 1, 2, 3, 9, 7]).unwrap();
    let m = compare("output", &expected, &actual).unwrap_err();
    assert_eq!(
        m.kind,
        MismatchKind::Element {
            coords: vec![1, 1],
            got: "9".into(),
            expected: "4".into(),
            count: 2,
            total: 6,
        }
    );
    assert_eq!(
        m.to_string(),
        "output[1, 1]: got 9, expected 4 (2 of 6 elements differ)"
    );
    let actual = HostTensor::from_slice([2, 3], &[0u32, 1, 3, 3, 4, 5]).unwrap();
    assert_eq!(
        compare("output", &expected, &actual)
            .unwrap_err()
            .to_string(),
        "output[0, 2]: got 3, expected 2"
    );
    assert!(compare("output", &expected, &expected).is_ok());
}

#[test]
fn integers_compare_exactly() {
    let a = HostTensor::from_slice([1], &[i64::MAX]).unwrap();
    let b = HostTensor::from_slice([1], &[i64::MAX - 1]).unwrap();
    assert_eq!(
        compare("x", &a, &b).unwrap_err().to_string(),
        "x[0]: got 9223372036854775806, expected 9223372036854775807"
    );
    let a = HostTensor::from_slice([1], &[u64::MAX]).unwrap();
    assert!(compare("x", &a, &a).is_ok());
}

#[test]
fn nan_matches_nan_and_negative_zero_matches_zero() {
    let a = f32s(&[3], &[f32::NAN, -0.0, 1.5]);
    let b = f32s(&[3], &[-f32::NAN, 0.0, 1.5]);
    assert!(compare("out", &a, &b).is_ok());
    let c = f32s(&[3], &[1.0, 0.0, 1.5]);
    assert_eq!(
        compare("out", &a, &c).unwrap_err().to_string(),
        "out[0]: got 1, expected NaN"
    );
    let d = f32s(&[3], &[f32::NAN, 0.0, f32::INFINITY]);
    assert_eq!(
        compare("out", &a, &d).unwrap_err().to_string(),
        "out[2]: got Infinity, expected 1.5"
    );
    let h = |v: f32| f16::from_f32(v);
    let a = HostTensor::from_slice([2], &[h(f32::NAN), h(-0.0)]).unwrap();
    let b = HostTensor::from_slice([2], &[f16::from_bits(0x7e01), h(0.0)]).unwrap();
    assert!(compare("out", &a, &b).is_ok());
    let a = HostTensor::from_slice([2], &[f64::NAN, -0.0]).unwrap();
    let b = HostTensor::from_slice([2], &[f64::NAN, 0.0]).unwrap();
    assert!(compare("out", &a, &b).is_ok());
}

#[test]
fn different_descriptions_do_not_compare() {
    let a = f32s(&[2, 1], &[1.0, 2.0]);
    let b = f32s(&[1, 2], &[1.0, 2.0]);
    assert_eq!(
        compare("out", &a, &b).unwrap_err().to_string(),
        "out: got FLOAT32 [1, 2], expected FLOAT32 [2, 1]"
    );
    let c = HostTensor::from_slice([2, 1], &[1i32, 2]).unwrap();
    assert!(compare("out", &a, &c).is_err());
}

#[test]
fn coordinates_are_row_major() {
    assert_eq!(coordinates(&[2, 3, 4], 23), [1, 2, 3]);
    assert_eq!(coordinates(&[2, 3, 4], 4), [0, 1, 0]);
    assert_eq!(coordinates(&[], 0), Vec::<u32>::new());
}

/// A `Fake` case in `mode`, with optional extra top-level JSON.
fn fake_case(mode: &str, extra: &str) -> crate::case::Case {
    let text = format!(
        r#"{{"name": "f-{mode}", "op": "Fake", "attributes": {{"mode": "{mode}"}} {extra},
            "inputs": {{"input": {{"dtype": "int32", "shape": [2, 2], "data": [1, 2, 3, 4]}}}},
            "outputs": {{"output": {{"dtype": "int32", "shape": [2, 2]{data}}}}}}}"#,
        data = if extra.contains("expect_error") {
            ""
        } else {
            r#", "data": [1, 2, 3, 4]"#
        }
    );
    parse(&text).unwrap_or_else(|e| panic!("{e}")).remove(0)
}

/// Runs on two "backends": the CPU and a fake GPU that runs the CPU reference.
struct FakeGpu;

impl Executor for FakeGpu {
    fn backend(&self) -> Backend {
        Backend::Gpu
    }
    fn run(&self, op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        op.run_cpu(inputs)
    }
}

fn run(mode: &str, extra: &str) -> Vec<String> {
    run_case(&fake_case(mode, extra), &[&CpuExecutor, &FakeGpu])
        .iter()
        .map(|r| r.to_string())
        .collect()
}

#[test]
fn passing_runs_report_one_line_per_backend() {
    let reports = run_case(&fake_case("copy", ""), &[&CpuExecutor, &FakeGpu]);
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0].step, Step::Run(Backend::Cpu));
    assert_eq!(reports[0].outcome, Outcome::Pass);
    assert_eq!(reports[0].to_string(), "PASS f-copy [cpu]");
    assert_eq!(reports[1].to_string(), "PASS f-copy [gpu]");
    let out = reports[0].outputs.as_ref().unwrap();
    assert_eq!(out[0].to_vec::<i32>().unwrap(), [1, 2, 3, 4]);
}

#[test]
fn failing_runs_name_the_first_mismatch() {
    assert_eq!(
        run("plus_one", ""),
        [
            "FAIL f-plus_one [cpu]: output[0, 1]: got 3, expected 2",
            "FAIL f-plus_one [gpu]: output[0, 1]: got 3, expected 2"
        ]
    );
    assert_eq!(
        run("device", ""),
        [
            "FAIL f-device [cpu]: device error: lost",
            "FAIL f-device [gpu]: device error: lost"
        ]
    );
    let panicked = run("panic", "");
    assert_eq!(
        panicked[0],
        "FAIL f-panic [cpu]: panicked: the fake operator panicked"
    );
}

#[test]
fn unsupported_skips_on_the_gpu_only() {
    assert_eq!(
        run("unsupported", ""),
        [
            "FAIL f-unsupported [cpu]: unsupported: no such thing",
            "SKIP f-unsupported [gpu]: no such thing"
        ]
    );
}

#[test]
fn expected_index_errors() {
    assert_eq!(
        run("index", r#", "expect_error": "index""#),
        ["PASS f-index [cpu]", "PASS f-index [gpu]"]
    );
    assert_eq!(
        run("copy", r#", "expect_error": "index""#),
        [
            "FAIL f-copy [cpu]: expected an index-out-of-range error, but the run succeeded",
            "FAIL f-copy [gpu]: expected an index-out-of-range error, but the run succeeded"
        ]
    );
    assert_eq!(
        run("device", r#", "expect_error": "index""#)[0],
        "FAIL f-device [cpu]: expected an index-out-of-range error, got: device error: lost"
    );
    let unexpected = run("index", "");
    assert!(
        unexpected[0].starts_with("FAIL f-index [cpu]: index out of range in `input`"),
        "{unexpected:?}"
    );
}

#[test]
fn validation_is_one_backend_independent_step() {
    assert_eq!(
        run("invalid", r#", "expect_error": "validation""#),
        ["PASS f-invalid [validate]"]
    );
    assert_eq!(
        run("reject", r#", "expect_error": "validation""#),
        ["PASS f-reject [validate]"]
    );
    assert_eq!(
        run(
            "copy",
            r#", "expect_error": "validation", "feature_level": "2.1""#
        ),
        ["PASS f-copy [validate]"]
    );
    assert_eq!(
        run(
            "invalid",
            r#", "expect_error": "validation", "expect_message": "must not be `invalid`""#
        ),
        ["PASS f-invalid [validate]"]
    );
    assert_eq!(
        run(
            "reject",
            r#", "expect_error": "validation", "expect_message": "must not be `invalid`""#
        ),
        ["FAIL f-reject [validate]: expected a validation error containing `must not be `invalid``, got: Fake: mode must not be `reject`: it is"]
    );
    assert_eq!(
        run("copy", r#", "expect_error": "validation", "feature_level": "3.0""#),
        ["FAIL f-copy [validate]: expected a validation error, but the descriptor is valid at feature level 3.0"]
    );
    assert_eq!(
        run("invalid", ""),
        ["FAIL f-invalid [validate]: validation failed at feature level 6.0: Fake: mode must not be `invalid`: it is"]
    );
    assert_eq!(
        run("reject", ""),
        ["FAIL f-reject [validate]: validation failed: Fake: mode must not be `reject`: it is"]
    );
}

#[test]
fn a_descriptor_that_cannot_be_built_is_bad_input() {
    let reports = run_case(
        &fake_case("bad_build", r#", "expect_error": "validation""#),
        &[&CpuExecutor],
    );
    assert_eq!(
        reports[0].to_string(),
        "ERROR f-bad_build [validate]: t.json: $: cannot build the Fake descriptor: invalid argument: the fake builder refuses"
    );
    let mut s = Summary::default();
    s.add(&reports[0].outcome);
    assert_eq!(s.exit_code(), 2);
}

#[test]
fn a_refused_attribute_is_named_by_file_and_json_path() {
    // `axes` is u32[]: the reader takes any non-negative integer, the
    // builder refuses one beyond u32.
    let argmin = |axes: &str| {
        format!(
            r#"{{"name": "a", "op": "ArgMin", "attributes": {{"axes": {axes}}},
                "inputs": {{"input": {{"dtype": "float32", "shape": [2], "data": [1, 2]}}}},
                "outputs": {{"output": {{"dtype": "uint32", "shape": [1]}}}}}}"#
        )
    };
    let text = format!("[{}, {}]", argmin("[0]"), argmin("[5000000000]"));
    let cases = crate::case::parse_cases("cases/x.json", text.as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}"));
    let report = &run_case(&cases[1], &[&CpuExecutor])[0];
    assert_eq!(
        report.to_string(),
        "ERROR a [validate]: cases/x.json: $[1].attributes.axes: cannot build the ArgMin descriptor: invalid argument: ArgMin: attribute `axes`: 5000000000 is out of range for u32"
    );
    // An ONNX-shaped case's attribute, by the key it is written under.
    let onnx = r#"{"op": "ArgMax", "opset": 13, "attributes": {"axis": 99999999999999999999},
        "inputs": [{"name": "x", "dtype": "float32", "shape": [2], "data": [1, 2]}],
        "outputs": [{"name": "y", "dtype": "int64", "shape": [1]}]}"#;
    let case = crate::case::parse_cases("cases/o.json", onnx.as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let report = run_case(&case, &[&CpuExecutor])[0].to_string();
    assert!(
        report.contains(": cases/o.json: $.attributes.axis: cannot build the ArgMax descriptor: "),
        "{report}"
    );
}

#[test]
fn output_descriptions_are_checked() {
    // Fake copies the input, whose shape differs from the declared output; validation
    // catches it, so bypass it with a run that declares a matching but wrong dtype.
    let text = r#"{"name": "pair", "op": "Pair",
        "inputs": {"first": {"dtype": "int32", "shape": [1], "data": [1]},
                   "second": {"dtype": "int32", "shape": [1], "data": [2]}},
        "outputs": {"low": {"dtype": "uint32", "shape": [1]}, "high": {"dtype": "int32", "shape": [1], "data": [2]}}}"#;
    let case = parse(text).unwrap().remove(0);
    let reports = run_case(&case, &[&CpuExecutor]);
    assert_eq!(
        reports[0].to_string(),
        "FAIL pair [cpu]: low: got a INT32 tensor of shape [1], expected UINT32 of shape [1]"
    );
}

#[test]
fn summary_and_exit_codes() {
    let mut s = Summary::default();
    assert_eq!(s.exit_code(), 0);
    s.add(&Outcome::Pass);
    s.add(&Outcome::Skip("x".into()));
    assert_eq!(s.exit_code(), 0);
    assert_eq!(s.to_string(), "1 passed, 0 failed, 1 skipped");
    s.add(&Outcome::Fail("x".into()));
    assert_eq!(s.exit_code(), 1);
    s.add(&Outcome::Error("x".into()));
    assert_eq!(s.exit_code(), 2);
    assert_eq!(s.to_string(), "1 passed, 1 failed, 1 skipped, 1 error");
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ops-runner-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run_paths(paths: &[std::path::PathBuf], format: Format) -> (Summary, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let s = run_files(
        paths,
        common::catalog(),
        &[&CpuExecutor],
        format,
        &mut out,
        &mut err,
    )
    .unwrap();
    (
        s,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

const GOOD: &str = r#"[
  {"name": "copy", "op": "Fake", "attributes": {"mode": "copy"},
   "inputs": {"input": {"dtype": "float16", "shape": [3], "data": [1, "NaN", -0.0]}},
   "outputs": {"output": {"dtype": "float16", "shape": [3], "data": [1, "NaN", 0]}}},
  {"name": "bad-level", "op": "Fake", "attributes": {"mode": "copy"}, "feature_level": "2.0",
   "expect_error": "validation",
   "inputs": {"input": {"dtype": "uint8", "shape": [1], "data": [1]}},
   "outputs": {"output": {"dtype": "uint8", "shape": [1]}}}
]"#;

#[test]
fn run_files_reports_lines_and_summary() {
    let good = temp_file("good.json", GOOD);
    let (s, out, err) = run_paths(std::slice::from_ref(&good), Format::Text);
    assert_eq!(s.exit_code(), 0, "{out}{err}");
    assert_eq!(
        out,
        "PASS copy [cpu]\nPASS bad-level [validate]\n2 passed, 0 failed\n"
    );
    assert_eq!(err, "");

    let failing = temp_file(
        "failing.json",
        &GOOD.replace(r#""data": [1, "NaN", 0]"#, r#""data": [1, "NaN", 2]"#),
    );
    let (s, out, _) = run_paths(&[failing], Format::Text);
    assert_eq!(s.exit_code(), 1);
    assert!(
        out.contains("FAIL copy [cpu]: output[2]: got -0, expected 2\n"),
        "{out}"
    );
    assert!(out.ends_with("1 passed, 1 failed\n"), "{out}");

    let malformed = temp_file("malformed.json", "{\"name\": ");
    let missing = std::path::PathBuf::from("/nonexistent/x.json");
    let (s, out, err) = run_paths(&[malformed.clone(), good, missing], Format::Text);
    assert_eq!(s.exit_code(), 2);
    assert_eq!(s.errors, 2);
    assert_eq!(s.passed, 2, "the good file still runs");
    assert!(out.ends_with("2 passed, 0 failed, 2 errors\n"), "{out}");
    let malformed = malformed.display().to_string();
    assert!(
        err.starts_with(&format!("{malformed}: line 1, column 9: malformed JSON")),
        "{err}"
    );
    assert!(
        err.contains("/nonexistent/x.json: cannot read the file"),
        "{err}"
    );
}

/// `run_files` writes plain text; `run_files_with` colours the outcome
/// words when asked and reports where it is after each case and file.
#[test]
fn run_files_with_colours_and_reports_progress() {
    let good = temp_file("good-colour.json", GOOD);
    let missing = std::path::PathBuf::from("/nonexistent/x.json");
    let paths = [good, missing];
    let (_, out, err) = run_paths(&paths, Format::Text);
    assert!(!out.contains('\x1b') && !err.contains('\x1b'), "{out}{err}");

    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut seen = Vec::new();
    let options = RunOptions {
        format: Format::Text,
        color: true,
    };
    let s = run_files_with(
        &paths,
        common::catalog(),
        &[&CpuExecutor],
        options,
        &mut out,
        &mut err,
        &mut |p| seen.push((p.files_done, p.files, p.cases_done, p.cases)),
    )
    .unwrap();
    assert_eq!(s.passed, 2);
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.starts_with("\x1b[32mPASS\x1b[0m copy [cpu]\n"),
        "{out:?}"
    );
    assert!(out.ends_with("\n2 passed, 0 failed, 1 error\n"), "{out:?}");
    assert_eq!(
        seen,
        [
            (0, 2, 0, 0),
            (0, 2, 1, 2),
            (1, 2, 2, 2),
            (1, 2, 0, 0),
            (2, 2, 0, 0)
        ]
    );
}

#[test]
fn json_output_reads_back_as_cases() {
    let good = temp_file("good-json.json", GOOD);
    let (s, out, err) = run_paths(&[good], Format::Json);
    assert_eq!(s.exit_code(), 0);
    assert_eq!(err, "2 passed, 0 failed\n");
    let cases = parse(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(cases.len(), 2);
    let produced = cases[0].outputs[0].expected.as_ref().unwrap();
    let v = produced.to_vec::<f16>().unwrap();
    assert!(v[1].is_nan());
    assert_eq!(v[2].to_bits(), 0x8000, "the produced -0 is written as such");
    assert!(out.contains("\"backend\": \"cpu\""));
    assert!(out.contains("\"backend\": \"validate\""));
    assert!(
        out.contains("\"error\": \"Fake: Fake needs feature level 3.0: got 2.0\""),
        "{out}"
    );

    let (_, out, _) = run_paths(&[], Format::Json);
    assert_eq!(out, "[]\n");
}
