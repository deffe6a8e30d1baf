//! ONNX-shaped case files: the reader over inline JSON, against the real
//! catalog's `onnx` namespace and a fake ONNX reduction with a host `axes`
//! input; case-level tolerances.

use super::common;

use crate::case::{parse_cases, Case, CaseErrors};
use crate::runner::{run_case, run_files, CpuExecutor, Format, Outcome};
use ops_core::__private::support::SupportTable;
use ops_core::{
    AttrInfo, AttrKind, AttrValue, DataType, OpError, OperatorInfo, TensorDesc, TensorInfo,
    Tolerance,
};

/// A fake ONNX reduction: `data`, host `axes`, `reduced`; `keepdims`.
static REDUCE_FAKE: OperatorInfo = OperatorInfo {
    name: "ReduceFake",
    instance: "",
    groups: &[],
    namespace: "onnx",
    aliases: &[],
    inputs: &["data", "axes"],
    outputs: &["reduced"],
    introduced: None,
    kernels: &[],
    build: |_| Err(OpError::InvalidArgument("not built in these tests".into())),
    tensors: &[
        TensorInfo {
            name: "data",
            seed: "data",
            output: false,
            host: false,
        },
        TensorInfo {
            name: "axes",
            seed: "axes",
            output: false,
            host: true,
        },
        TensorInfo {
            name: "reduced",
            seed: "reduced",
            output: true,
            host: false,
        },
    ],
    attrs: &[AttrInfo {
        name: "keepdims",
        seed: "keepdims",
        kind: AttrKind::Bool,
        has_default: true,
    }],
    table: &TABLE,
    rules: &[],
    strided_inputs: false,
};

static TABLE: SupportTable = SupportTable {
    operator: "ReduceFake",
    selector: None,
    introduced: None,
    entries: &[],
    tensor_names: &["data", "axes", "reduced"],
    seed_names: &["data", "axes", "reduced"],
};

fn catalog() -> Vec<&'static OperatorInfo> {
    let mut c: Vec<&'static OperatorInfo> = ops::catalog().to_vec();
    c.push(&REDUCE_FAKE);
    c
}

fn parse(text: &str) -> Result<Vec<Case>, CaseErrors> {
    parse_cases("cases/onnx__t.json", text.as_bytes(), &catalog())
}

fn one(text: &str) -> Case {
    parse(text).unwrap_or_else(|e| panic!("{e}")).remove(0)
}

const ARGMAX: &str = r#"{
  "source": "onnx:test_argmax_keepdims_example",
  "op": "ArgMax", "opset": 13,
  "attributes": {"keepdims": 0, "select_last_index": 1},
  "default_attributes": {"axis": 0, "select_last_index": 0},
  "node_inputs": ["x"], "node_outputs": ["y"],
  "inputs":  [{"name": "x", "dtype": "float32", "shape": [2, 2], "data": [2.0, "NaN", 3.0, "NaN"]}],
  "outputs": [{"name": "y", "dtype": "int64", "shape": [2], "data": [1, 1]}]
}"#;

#[test]
fn reads_an_onnx_case_against_the_onnx_namespace() {
    let c = one(ARGMAX);
    assert_eq!(c.name, "onnx:test_argmax_keepdims_example");
    assert_eq!(c.info.namespace, "onnx");
    assert_eq!(c.info.name, "ArgMax");
    assert_eq!(c.op, "onnx::ArgMax");
    // Attributes by seed name, 0/1 into bools, `attributes` over defaults.
    assert_eq!(c.attributes["keepdims"], AttrValue::Bool(false));
    assert_eq!(c.attributes["select_last_index"], AttrValue::Bool(true));
    assert_eq!(c.attributes["axis"], AttrValue::Int(0));
    assert_eq!(c.inputs[0].name, "data");
    assert_eq!(c.outputs[0].name, "reduced");
    assert_eq!(c.outputs[0].desc, TensorDesc::new(DataType::Int64, [2]));
    assert_eq!(c.tolerance, Some(crate::case::onnx::ONNX_TOLERANCE));
    // It runs: the last NaN of each column (select_last_index).
    for r in run_case(&c, &[&CpuExecutor]) {
        assert_eq!(r.outcome, Outcome::Pass, "{r}");
    }
}

#[test]
fn written_back_it_reads_as_the_qualified_operator() {
    let c = one(ARGMAX);
    let again = parse_cases("back.json", c.to_json(None, &[]).as_bytes(), &catalog())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    assert!(std::ptr::eq(again.info, c.info));
    assert_eq!(again.attributes, c.attributes);
}

#[test]
fn node_inputs_name_the_tensors_in_node_order() {
    // The list order differs from the node's; `""` is an absent optional input.
    let c = one(
        r#"{"op": "ReduceFake", "opset": 18, "node_inputs": ["d", ""], "node_outputs": ["r"],
            "inputs": [{"name": "d", "dtype": "bool", "shape": [2], "data": [true, false], "initializer": true}],
            "outputs": [{"name": "r", "dtype": "bool", "shape": [1], "data": [false]}]}"#,
    );
    assert_eq!(c.name, "onnx__t", "the file's name when there is no source");
    assert_eq!(c.inputs[0].tensor.to_vec::<bool>().unwrap(), [true, false]);
    // The absent `axes`: an empty INT64 tensor of shape [0].
    assert_eq!(c.inputs[1].name, "axes");
    assert_eq!(
        c.inputs[1].tensor.desc(),
        &TensorDesc::new(DataType::Int64, [0])
    );
    assert_eq!(
        c.attributes.get("keepdims"),
        None,
        "left to the spec's default"
    );
}

#[test]
fn an_axes_attribute_of_older_opsets_becomes_the_axes_input() {
    let c = one(
        r#"{"op": "ReduceFake", "opset": 11, "attributes": {"axes": [0, -1], "keepdims": 1},
            "inputs": [{"name": "d", "dtype": "float32", "shape": [2, 2], "data": [1, 2, 3, 4]}],
            "outputs": [{"name": "r", "dtype": "float32", "shape": [1, 1]}]}"#,
    );
    assert_eq!(c.attributes["keepdims"], AttrValue::Bool(true));
    let axes = &c.inputs[1].tensor;
    assert_eq!(axes.desc(), &TensorDesc::new(DataType::Int64, [2]));
    assert_eq!(axes.to_vec::<i64>().unwrap(), [0, -1]);
}

#[test]
fn what_the_catalog_lacks_is_unsupported_not_malformed() {
    let e = parse(r#"{"op": "Einsum", "opset": 12, "inputs": [], "outputs": []}"#).unwrap_err();
    assert!(e.all_unsupported());
    assert_eq!(
        e.to_string(),
        "cases/onnx__t.json: $.op: no ONNX operator `Einsum` in the catalog"
    );
    let e = parse(&ARGMAX.replace("\"keepdims\": 0", "\"keepdims\": 0, \"foo\": 1")).unwrap_err();
    assert!(e.all_unsupported());
    assert!(
        e.to_string()
            .ends_with("onnx::ArgMax has no attribute `foo`"),
        "{e}"
    );
    // An unknown default attribute is ignored: the spec does the default.
    parse(&ARGMAX.replace("\"axis\": 0,", "\"axis\": 0, \"foo\": 1,")).unwrap();
}

#[test]
fn mistakes_of_the_file_are_malformed() {
    for (from, to, message) in [
        (
            "\"keepdims\": 0",
            "\"keepdims\": 2",
            "$.attributes.keepdims: `keepdims` is 0 or 1, got 2",
        ),
        (
            "\"node_inputs\": [\"x\"]",
            "\"node_inputs\": [\"z\"]",
            "$.node_inputs[0]: no tensor named `z` in `inputs`",
        ),
        (
            "\"dtype\": \"float32\"",
            "\"dtype\": \"float31\"",
            "$.inputs[0].dtype: unknown dtype `float31`; did you mean `float32`?",
        ),
        (
            "\"shape\": [2, 2]",
            "\"shape\": [2, 3]",
            "$.inputs[0].data: data holds 4 values, but shape [2, 3] has 6 elements",
        ),
        ("\"name\": \"x\",", "", "$.inputs[0]: missing `name`"),
    ] {
        let e = parse(&ARGMAX.replace(from, to)).unwrap_err();
        assert!(!e.all_unsupported(), "{e}");
        assert_eq!(e.to_string(), format!("cases/onnx__t.json: {message}"));
    }
}

#[test]
fn duplicate_and_unused_tensors_are_malformed() {
    for (from, to, message) in [
        // A second output of one name: its expected values would be skipped.
        (
            r#""data": [1, 1]}]"#,
            r#""data": [1, 1]}, {"name": "y", "dtype": "int64", "shape": [2], "data": [7, 7]}]"#,
            "$.outputs[1].name: duplicate tensor `y`: `$.outputs[0]` has the same name",
        ),
        // An output the node does not name.
        (
            r#""data": [1, 1]}]"#,
            r#""data": [1, 1]}, {"name": "z", "dtype": "int64", "shape": [2], "data": [7, 7]}]"#,
            "$.outputs[1]: tensor `z` is not in `node_outputs`: the node never uses it",
        ),
        // An input the node does not name, or a second of one name.
        (
            r#""data": [2.0, "NaN", 3.0, "NaN"]}]"#,
            r#""data": [2.0, "NaN", 3.0, "NaN"]}, {"name": "w", "dtype": "int64", "shape": [], "data": [0]}]"#,
            "$.inputs[1]: tensor `w` is not in `node_inputs`: the node never uses it",
        ),
        (
            r#""data": [2.0, "NaN", 3.0, "NaN"]}]"#,
            r#""data": [2.0, "NaN", 3.0, "NaN"]}, {"name": "x", "dtype": "int64", "shape": [], "data": [0]}]"#,
            "$.inputs[1].name: duplicate tensor `x`: `$.inputs[0]` has the same name",
        ),
    ] {
        let e = parse(&ARGMAX.replace(from, to)).unwrap_err();
        assert!(!e.all_unsupported(), "{e}");
        assert_eq!(e.to_string(), format!("cases/onnx__t.json: {message}"));
    }
    // Without `node_outputs`, the list is the node's outputs: a duplicate still is one.
    let text = ARGMAX.replace(r#", "node_outputs": ["y"]"#, "").replace(
        r#""data": [1, 1]}]"#,
        r#""data": [1, 1]}, {"name": "y", "dtype": "int64", "shape": [2], "data": [7, 7]}]"#,
    );
    let e = parse(&text).unwrap_err();
    assert!(!e.all_unsupported(), "{e}");
    assert!(e.to_string().contains("duplicate tensor `y`"), "{e}");
}

#[test]
fn a_node_of_the_wrong_arity_is_malformed_not_a_gap() {
    // 23 inputs and no outputs for ArgMax, whose schema has one of each.
    let inputs = vec![r#""x""#; 23].join(", ");
    let text = ARGMAX
        .replace(
            r#""node_inputs": ["x"]"#,
            &format!(r#""node_inputs": [{inputs}]"#),
        )
        .replace(r#""node_outputs": ["y"]"#, r#""node_outputs": []"#)
        .replace(
            r#", {"name": "y", "dtype": "int64", "shape": [2], "data": [1, 1]}"#,
            "",
        )
        .replace(
            r#"[{"name": "y", "dtype": "int64", "shape": [2], "data": [1, 1]}]"#,
            "[]",
        );
    let e = parse(&text).unwrap_err();
    assert!(!e.all_unsupported(), "{e}");
    assert!(
        e.to_string()
            .contains("$.node_inputs: onnx::ArgMax takes 1 input, the node has 23"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("$.node_outputs: onnx::ArgMax has 1 output, the node has 0"),
        "{e}"
    );
    // A variadic operator: Sum of no inputs, Split into no outputs.
    let sum = r#"{"op": "Sum", "opset": 13, "node_inputs": [], "node_outputs": ["s"], "inputs": [],
        "outputs": [{"name": "s", "dtype": "float32", "shape": [1]}]}"#;
    let e = parse(sum).unwrap_err();
    assert!(!e.all_unsupported(), "{e}");
    assert!(
        e.to_string()
            .contains("$.node_inputs: onnx::Sum: `data` takes 1 to"),
        "{e}"
    );
    let split = r#"{"op": "Split", "opset": 18, "node_inputs": ["x"], "node_outputs": [],
        "inputs": [{"name": "x", "dtype": "float32", "shape": [2], "data": [1, 2]}], "outputs": []}"#;
    let e = parse(split).unwrap_err();
    assert!(!e.all_unsupported(), "{e}");
    assert!(
        e.to_string()
            .contains("$.node_outputs: onnx::Split: `outputs` takes 1 to"),
        "{e}"
    );
    // The same through `ops run`: bad input, exit status 2.
    let dir = std::env::temp_dir().join(format!("ops-onnx-arity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("argmax.json");
    std::fs::write(&file, &text).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let summary = run_files(
        &[&file],
        ops::catalog(),
        &[&CpuExecutor],
        Format::Text,
        &mut out,
        &mut err,
    )
    .unwrap();
    assert_eq!(summary.exit_code(), 2, "{}", String::from_utf8_lossy(&err));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bool_data_reads_true_false_and_0_1() {
    let c = one(r#"{"op": "ReduceFake", "opset": 18,
            "inputs": [{"name": "d", "dtype": "bool", "shape": [4], "data": [true, 0, 1, false]}],
            "outputs": [{"name": "r", "dtype": "bool", "shape": [], "data": [false]}]}"#);
    assert_eq!(
        c.inputs[0].tensor.to_vec::<bool>().unwrap(),
        [true, false, true, false]
    );
    let e = parse(
        r#"{"op": "ReduceFake", "opset": 18,
            "inputs": [{"name": "d", "dtype": "bool", "shape": [1], "data": [2]}],
            "outputs": [{"name": "r", "dtype": "bool", "shape": []}]}"#,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .ends_with("expected true, false, 0 or 1 for a bool, got number 2"),
        "{e}"
    );
}

#[test]
fn rtol_and_atol_override_the_operators_tolerance() {
    // `plus_one` moves element 1 of a float32 tensor by one ULP.
    let case = |extra: &str| {
        let text = format!(
            r#"{{"name": "t", "op": "Fake", "attributes": {{"mode": "plus_one"}} {extra},
                "inputs": {{"input": {{"dtype": "float32", "shape": [2], "data": [1, 2]}}}},
                "outputs": {{"output": {{"dtype": "float32", "shape": [2], "data": [1, 2]}}}}}}"#
        );
        common::parse(&text)
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0)
    };
    let exact = case("");
    assert_eq!(exact.tolerance, None);
    let r = &run_case(&exact, &[&CpuExecutor])[0];
    assert!(matches!(r.outcome, Outcome::Fail(_)), "{r}");
    let close = case(r#", "rtol": 1e-6"#);
    assert_eq!(
        close.tolerance,
        Some(Tolerance::Close {
            rtol: 1e-6,
            atol: 0.0
        })
    );
    assert_eq!(run_case(&close, &[&CpuExecutor])[0].outcome, Outcome::Pass);
    let tight = case(r#", "atol": 1e-9"#);
    let r = &run_case(&tight, &[&CpuExecutor])[0];
    assert!(
        r.to_string()
            .ends_with("(tolerance: rtol 0, atol 0.000000001)"),
        "{r}"
    );
    assert!(common::parse(&exact_with(r#", "rtol": -1"#)).is_err());
    // Written back, the tolerance reads back.
    let again = common::parse(&close.to_json(None, &[])).unwrap().remove(0);
    assert_eq!(again.tolerance, close.tolerance);
}

fn exact_with(extra: &str) -> String {
    format!(
        r#"{{"name": "t", "op": "Fake", "attributes": {{"mode": "copy"}} {extra},
            "inputs": {{"input": {{"dtype": "float32", "shape": [1], "data": [1]}}}},
            "outputs": {{"output": {{"dtype": "float32", "shape": [1]}}}}}}"#
    )
}

#[test]
fn ops_run_counts_an_unsupported_case_as_failed() {
    let dir = std::env::temp_dir().join(format!("ops-onnx-cases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gather = dir.join("gather.json");
    std::fs::write(
        &gather,
        r#"{"op": "Einsum", "opset": 12, "inputs": [], "outputs": []}"#,
    )
    .unwrap();
    let argmax = dir.join("argmax.json");
    std::fs::write(&argmax, ARGMAX).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let summary = run_files(
        &[&gather, &argmax],
        ops::catalog(),
        &[&CpuExecutor],
        Format::Text,
        &mut out,
        &mut err,
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert_eq!(
        (summary.passed, summary.failed, summary.errors),
        (1, 1, 0),
        "{out}"
    );
    assert_eq!(summary.exit_code(), 1);
    assert!(
        out.contains("FAIL ") && out.contains("$.op: no ONNX operator `Einsum` in the catalog"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
