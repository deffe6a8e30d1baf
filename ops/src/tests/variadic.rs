//! ONNX's variadic operators past their widest instance: Sum, Max, Min and
//! Concat of any number of inputs, as chains of instances, on the CPU
//! reference and the GPU, against values computed here.

use serde_json::{json, Value};

use crate::case::parse_cases;
use crate::runner::{run_case, CpuExecutor, Executor, GpuExecutor, Outcome};

/// An ONNX-shaped case of `op` over `inputs` (dtype, shape, data each),
/// expecting `output`.
fn onnx_case(
    op: &str,
    attributes: Value,
    inputs: &[(&str, Vec<u32>, Value)],
    output: (&str, Vec<u32>, Value),
) -> String {
    let names: Vec<String> = (0..inputs.len()).map(|k| format!("x{k}")).collect();
    let tensors: Vec<Value> = inputs
        .iter()
        .zip(&names)
        .map(|((dtype, shape, data), name)| {
            json!({"name": name, "dtype": dtype, "shape": shape, "data": data})
        })
        .collect();
    json!({
        "source": format!("{op} of {}", inputs.len()),
        "op": op, "opset": 13,
        "attributes": attributes,
        "node_inputs": names, "node_outputs": ["y"],
        "inputs": tensors,
        "outputs": [{"name": "y", "dtype": output.0, "shape": output.1, "data": output.2}],
    })
    .to_string()
}

/// Runs the case `text` on the CPU and the GPU: both pass, with equal bits.
fn passes_on_both(text: &str) {
    let case = parse_cases("variadic.json", text.as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let gpu = ops_gpu::shared().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
    let gpu = GpuExecutor(gpu);
    let executors: [&dyn Executor; 2] = [&CpuExecutor, &gpu];
    let reports = run_case(&case, &executors);
    assert_eq!(reports.len(), 2, "{reports:?}");
    for r in &reports {
        assert_eq!(r.outcome, Outcome::Pass, "{r}");
    }
    assert_eq!(reports[0].outputs, reports[1].outputs, "{}", case.name);
}

/// `n` FLOAT32 inputs: input `k` of shape `[2, 3]`, `[3]` or `[1]` in turn
/// (broadcast to `[2, 3]`), with values that differ per input and element.
fn float_inputs(n: usize) -> Vec<(Vec<u32>, Vec<f32>)> {
    (0..n)
        .map(|k| {
            let sizes = match k % 3 {
                0 => vec![2, 3],
                1 => vec![3],
                _ => vec![1],
            };
            let count: u32 = sizes.iter().product();
            let data = (0..count)
                .map(|i| ((k * 7 + i as usize * 5) % 11) as f32 * 0.375 - 1.5)
                .collect();
            (sizes, data)
        })
        .collect()
}

/// Element `i` of `[2, 3]` of an input of `sizes`, broadcast.
fn at(sizes: &[u32], data: &[f32], i: usize) -> f32 {
    match sizes {
        [2, 3] => data[i],
        [3] => data[i % 3],
        _ => data[0],
    }
}

/// The left-to-right fold `f` of the inputs, element by element.
fn fold(inputs: &[(Vec<u32>, Vec<f32>)], f: impl Fn(f32, f32) -> f32) -> Vec<f32> {
    (0..6)
        .map(|i| {
            let mut acc = at(&inputs[0].0, &inputs[0].1, i);
            for (sizes, data) in &inputs[1..] {
                acc = f(acc, at(sizes, data, i));
            }
            acc
        })
        .collect()
}

fn fold_case(op: &str, n: usize, f: impl Fn(f32, f32) -> f32) -> String {
    let inputs = float_inputs(n);
    let expected = fold(&inputs, f);
    let given: Vec<(&str, Vec<u32>, Value)> = inputs
        .iter()
        .map(|(s, d)| ("float32", s.clone(), json!(d)))
        .collect();
    onnx_case(
        op,
        json!({}),
        &given,
        ("float32", vec![2, 3], json!(expected)),
    )
}

#[test]
fn sum_of_9_and_of_20_inputs() {
    for n in [9, 20] {
        passes_on_both(&fold_case("Sum", n, |a, b| a + b));
    }
}

#[test]
fn max_and_min_of_9_and_of_20_inputs() {
    for n in [9, 20] {
        passes_on_both(&fold_case("Max", n, f32::max));
        passes_on_both(&fold_case("Min", n, f32::min));
    }
}

#[test]
fn concat_of_10_inputs() {
    // Input k is [2, k + 1] of INT32, concatenated along axis 1 (and -1).
    let inputs: Vec<Vec<i32>> = (0..10)
        .map(|k| (0..2 * (k + 1)).map(|i| k * 100 + i).collect())
        .collect();
    let width: usize = (1..=10).sum();
    let mut expected = Vec::new();
    for row in 0..2 {
        for (k, data) in inputs.iter().enumerate() {
            expected.extend_from_slice(&data[row * (k + 1)..(row + 1) * (k + 1)]);
        }
    }
    let given: Vec<(&str, Vec<u32>, Value)> = inputs
        .iter()
        .enumerate()
        .map(|(k, d)| ("int32", vec![2, k as u32 + 1], json!(d)))
        .collect();
    for axis in [1, -1] {
        passes_on_both(&onnx_case(
            "Concat",
            json!({ "axis": axis }),
            &given,
            ("int32", vec![2, width as u32], json!(expected)),
        ));
    }
}

#[test]
fn a_wrong_expected_value_of_a_chain_fails() {
    // The chain's outputs are compared: one wrong element of 20 inputs' sum.
    let text = fold_case("Sum", 20, |a, b| a + b);
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let first = &mut v["outputs"][0]["data"][5];
    *first = json!(first.as_f64().unwrap() + 1.0);
    let case = parse_cases("variadic.json", v.to_string().as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let r = &run_case(&case, &[&CpuExecutor])[0];
    assert!(
        matches!(&r.outcome, Outcome::Fail(m) if m.contains("sum[1, 2]")),
        "{r}"
    );
}

#[test]
fn mean_past_its_instances_stays_a_gap() {
    // A chain of Means is no Mean (the division comes once, at the end).
    let e = parse_cases(
        "variadic.json",
        fold_case("Mean", 9, |a, b| a + b).as_bytes(),
        ops::catalog(),
    )
    .unwrap_err();
    assert!(e.all_unsupported(), "{e}");
    assert!(
        e.to_string()
            .contains("onnx::Mean: `data` takes 1 to 7 tensors, the node gives 9"),
        "{e}"
    );
}

/// An ONNX Split of `x` ([2, 55] INT16, `x[r][c] = 100 r + c`) along
/// axis 1 into 10 parts of lengths 1 to 10, with `split` given or not.
fn split_case(with_lengths: bool) -> String {
    let x: Vec<i32> = (0..2)
        .flat_map(|r| (0..55).map(move |c| 100 * r + c))
        .collect();
    let mut names = vec!["x".to_owned()];
    let mut inputs = vec![json!({"name": "x", "dtype": "int16", "shape": [2, 55], "data": x})];
    if with_lengths {
        names.push("s".to_owned());
        let lengths: Vec<i64> = (1..=10).collect();
        inputs.push(json!({"name": "s", "dtype": "int64", "shape": [10], "data": lengths}));
    }
    let mut outputs = Vec::new();
    let mut start = 0;
    for k in 0..10 {
        let len = k + 1;
        let data: Vec<i32> = (0..2)
            .flat_map(|r| (start..start + len).map(move |c| 100 * r + c))
            .collect();
        outputs.push(
            json!({"name": format!("y{k}"), "dtype": "int16", "shape": [2, len], "data": data}),
        );
        start += len;
    }
    let node_outputs: Vec<String> = (0..10).map(|k| format!("y{k}")).collect();
    json!({
        "source": "Split into 10", "op": "Split", "opset": 18,
        "attributes": {"axis": 1},
        "node_inputs": names, "node_outputs": node_outputs,
        "inputs": inputs, "outputs": outputs,
    })
    .to_string()
}

#[test]
fn split_into_10_outputs() {
    passes_on_both(&split_case(true));
}

#[test]
fn split_into_10_equal_parts_stays_a_gap() {
    // Without `split`, the parts are the spec's rule of the whole count.
    let case = parse_cases(
        "variadic.json",
        split_case(false).as_bytes(),
        ops::catalog(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .remove(0);
    let r = &run_case(&case, &[&CpuExecutor])[0];
    assert!(
        matches!(&r.outcome, Outcome::Fail(m) if m.contains("equal parts of more than 6 outputs: give `split`")),
        "{r}"
    );
}

#[test]
fn the_projects_own_format_takes_a_chained_list_and_reads_back() {
    // An ONNX-shaped chained case, written back in the project's format.
    let onnx = parse_cases(
        "variadic.json",
        fold_case("Sum", 9, |a, b| a + b).as_bytes(),
        ops::catalog(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .remove(0);
    let text = onnx.to_json(None, &[]);
    let again = parse_cases("back.json", text.as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .remove(0);
    let names: Vec<&str> = again.inputs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        (0..9).map(|k| format!("data_{k}")).collect::<Vec<_>>()
    );
    assert_eq!(run_case(&again, &[&CpuExecutor])[0].outcome, Outcome::Pass);
    // A tensor left out in between is missing, not skipped.
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["inputs"].as_object_mut().unwrap().remove("data_6");
    let e = parse_cases("back.json", v.to_string().as_bytes(), ops::catalog()).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("$.inputs: missing input tensor `data_6`"),
        "{e}"
    );
}
