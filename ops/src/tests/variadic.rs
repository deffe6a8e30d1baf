//! ONNX's variadic operators past their widest instance: Sum, Max, Min,
//! Mean and Concat of any number of inputs and Split into any number of
//! outputs, as chains of catalog calls, on the CPU reference and the GPU,
//! against values computed here (bit for bit the spec's single call where
//! it has one).

use half::f16;
use ops::HostTensor;
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

/// An ONNX Split of `x` ([2, 55] INT16, `x[r][c] = 100 r + c`) along
/// axis 1 into 10 parts of lengths 1 to 10 given by `split`.
fn split_case() -> String {
    let x: Vec<i32> = (0..2)
        .flat_map(|r| (0..55).map(move |c| 100 * r + c))
        .collect();
    let lengths: Vec<i64> = (1..=10).collect();
    let inputs = [
        json!({"name": "x", "dtype": "int16", "shape": [2, 55], "data": x}),
        json!({"name": "s", "dtype": "int64", "shape": [10], "data": lengths}),
    ];
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
        "node_inputs": ["x", "s"], "node_outputs": node_outputs,
        "inputs": inputs, "outputs": outputs,
    })
    .to_string()
}

#[test]
fn split_into_10_outputs() {
    passes_on_both(&split_case());
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

/// Runs the case `text` on the CPU and the GPU: both pass, and each gives
/// `expected` bit for bit.
fn bits_on_both(text: &str, expected: &[HostTensor]) {
    let case = parse_cases("variadic.json", text.as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let gpu = ops_gpu::shared().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
    let gpu = GpuExecutor(gpu);
    let executors: [&dyn Executor; 2] = [&CpuExecutor, &gpu];
    for r in run_case(&case, &executors) {
        assert_eq!(r.outcome, Outcome::Pass, "{r}");
        let got = r.outputs.as_deref().unwrap_or_default();
        assert_eq!(got.len(), expected.len(), "{r}");
        for (k, (g, e)) in got.iter().zip(expected).enumerate() {
            assert_eq!(g.desc(), e.desc(), "{r}: output {k}");
            assert!(
                g.bytes() == e.bytes(),
                "{r}: output {k} differs from the single call's value:\n got {g:?}\nwant {e:?}"
            );
        }
    }
}

/// The `n` inputs of [`float_inputs`] scaled into FLOAT16 values whose
/// `f32` sums round differently when a partial is rounded to FLOAT16.
fn half_inputs(n: usize) -> Vec<(Vec<u32>, Vec<f32>)> {
    float_inputs(n)
        .into_iter()
        .enumerate()
        .map(|(k, (s, d))| {
            let d = d
                .iter()
                .map(|x| f16::from_f32(x * 0.0371 + 0.01 * k as f32).to_f32())
                .collect();
            (s, d)
        })
        .collect()
}

/// An ONNX case of `op` over `inputs` as `dtype` (`float16`, `float32` or
/// `float64`), expecting `expected`'s values (its bits are checked apart).
fn float_case(op: &str, dtype: &str, inputs: &[(Vec<u32>, Vec<f32>)], expected: Value) -> String {
    let given: Vec<(&str, Vec<u32>, Value)> = inputs
        .iter()
        .map(|(s, d)| (dtype, s.clone(), json!(d)))
        .collect();
    onnx_case(op, json!({}), &given, (dtype, vec![2, 3], expected))
}

#[test]
fn float16_sum_of_9_and_of_20_inputs_rounds_once() {
    // The spec: FLOAT16 inputs added left to right in `f32`, rounded once.
    for n in [9, 20] {
        let inputs = half_inputs(n);
        let sum = fold(&inputs, |a, b| a + b);
        let want: Vec<f16> = sum.iter().map(|&x| f16::from_f32(x)).collect();
        // A chain rounding its partials to FLOAT16 gives another answer.
        let rounded = fold(&inputs, |a, b| f16::from_f32(a + b).to_f32());
        assert_ne!(
            want,
            rounded
                .iter()
                .map(|&x| f16::from_f32(x))
                .collect::<Vec<_>>()
        );
        let text = float_case("Sum", "float16", &inputs, json!(sum));
        bits_on_both(&text, &[HostTensor::from_slice([2, 3], &want).unwrap()]);
    }
}

#[test]
fn mean_of_10_and_of_20_inputs_divides_once() {
    // The spec: the sum in `f32` (FLOAT16 too; FLOAT64 in `f64`), divided
    // by the count once, rounded once to the output type.
    for n in [10, 20] {
        let inputs = float_inputs(n);
        let mean: Vec<f32> = fold(&inputs, |a, b| a + b)
            .iter()
            .map(|&s| s / n as f32)
            .collect();
        let text = float_case("Mean", "float32", &inputs, json!(mean));
        bits_on_both(&text, &[HostTensor::from_slice([2, 3], &mean).unwrap()]);

        let halves = half_inputs(n);
        let mean: Vec<f32> = fold(&halves, |a, b| a + b)
            .iter()
            .map(|&s| s / n as f32)
            .collect();
        let want: Vec<f16> = mean.iter().map(|&x| f16::from_f32(x)).collect();
        let text = float_case("Mean", "float16", &halves, json!(mean));
        bits_on_both(&text, &[HostTensor::from_slice([2, 3], &want).unwrap()]);

        // FLOAT64: thirds, which `f64` adds and divides with rounding.
        let doubles: Vec<(Vec<u32>, Vec<f64>)> = inputs
            .iter()
            .map(|(s, d)| (s.clone(), d.iter().map(|&x| f64::from(x) / 3.0).collect()))
            .collect();
        let mean: Vec<f64> = (0..6)
            .map(|i| {
                let at = |(s, d): &(Vec<u32>, Vec<f64>)| match s.as_slice() {
                    [2, 3] => d[i],
                    [3] => d[i % 3],
                    _ => d[0],
                };
                doubles[1..].iter().fold(at(&doubles[0]), |a, x| a + at(x)) / n as f64
            })
            .collect();
        let given: Vec<(&str, Vec<u32>, Value)> = doubles
            .iter()
            .map(|(s, d)| ("float64", s.clone(), json!(d)))
            .collect();
        let text = onnx_case(
            "Mean",
            json!({}),
            &given,
            ("float64", vec![2, 3], json!(mean)),
        );
        bits_on_both(&text, &[HostTensor::from_slice([2, 3], &mean).unwrap()]);
    }
}

#[test]
fn mean_of_8_scalars_and_of_mixed_types() {
    // Rank 0: the count is a scalar too.
    let xs: Vec<f32> = (0..8).map(|k| 0.1 * k as f32 + 0.3).collect();
    let mean = xs[1..].iter().fold(xs[0], |a, &x| a + x) / 8.0;
    let given: Vec<(&str, Vec<u32>, Value)> =
        xs.iter().map(|x| ("float32", vec![], json!([x]))).collect();
    let text = onnx_case(
        "Mean",
        json!({}),
        &given,
        ("float32", vec![], json!([mean])),
    );
    bits_on_both(&text, &[HostTensor::from_slice([], &[mean]).unwrap()]);
    // One FLOAT32 among FLOAT16 inputs breaks the spec's rule.
    let mut given: Vec<(&str, Vec<u32>, Value)> =
        xs.iter().map(|x| ("float16", vec![], json!([x]))).collect();
    given[7].0 = "float32";
    let text = onnx_case(
        "Mean",
        json!({}),
        &given,
        ("float16", vec![], json!([mean])),
    );
    let case = parse_cases("variadic.json", text.as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let r = &run_case(&case, &[&CpuExecutor])[0];
    assert!(
        matches!(&r.outcome, Outcome::Fail(m) if m.contains("all inputs must have the same element type T")),
        "{r}"
    );
}

/// An ONNX Split of `x` ([rows, cols] INT16, `x[r][c] = 100 r + c`) along
/// `axis` into `n` equal parts (opset 18's `num_outputs`, or opset 13's
/// count of outputs): the case and the parts, each `ceil(dim / n)` long
/// but the last, which holds what remains.
fn equal_split_case(
    rows: u32,
    cols: u32,
    axis: i64,
    n: usize,
    opset18: bool,
) -> (String, Vec<HostTensor>) {
    let x: Vec<i16> = (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (100 * r + c) as i16))
        .collect();
    let a = if axis < 0 { axis + 2 } else { axis } as usize;
    let dim = if a == 0 { rows } else { cols };
    let chunk = dim.div_ceil(n as u32);
    let (mut outputs, mut parts, mut start) = (Vec::new(), Vec::new(), 0);
    for k in 0..n {
        let len = if k + 1 < n {
            chunk
        } else {
            dim - chunk * (n as u32 - 1)
        };
        let mut sizes = vec![rows, cols];
        sizes[a] = len;
        let data: Vec<i16> = (0..sizes[0])
            .flat_map(|r| (0..sizes[1]).map(move |c| (r, c)))
            .map(|(r, c)| {
                let (r, c) = if a == 0 {
                    (r + start, c)
                } else {
                    (r, c + start)
                };
                x[(r * cols + c) as usize]
            })
            .collect();
        outputs
            .push(json!({"name": format!("y{k}"), "dtype": "int16", "shape": sizes, "data": data}));
        parts.push(HostTensor::from_slice(sizes, &data).unwrap());
        start += len;
    }
    let mut attributes = json!({"axis": axis});
    if opset18 {
        attributes["num_outputs"] = json!(n);
    }
    let node_outputs: Vec<String> = (0..n).map(|k| format!("y{k}")).collect();
    let text = json!({
        "source": format!("Split into {n} equal parts"), "op": "Split",
        "opset": if opset18 { 18 } else { 13 },
        "attributes": attributes,
        "node_inputs": ["x"], "node_outputs": node_outputs,
        "inputs": [{"name": "x", "dtype": "int16", "shape": [rows, cols], "data": x}],
        "outputs": outputs,
    })
    .to_string();
    (text, parts)
}

#[test]
fn split_into_20_equal_parts() {
    // Opset 18: 59 columns in 20 parts, 19 of 3 and the last of 2.
    let (text, parts) = equal_split_case(2, 59, 1, 20, true);
    bits_on_both(&text, &parts);
    // Opset 13, no `split`: 40 rows in 20 parts of 2.
    let (text, parts) = equal_split_case(40, 3, 0, 20, false);
    bits_on_both(&text, &parts);
    // Along axis -1, 25 columns in 9 parts: 8 of 3 and the last of 1.
    let (text, parts) = equal_split_case(2, 25, -1, 9, true);
    bits_on_both(&text, &parts);
}

#[test]
fn split_into_too_many_equal_parts_breaks_the_rule() {
    // 55 in 20 parts: parts of 3 need 57 for the first 19.
    let x: Vec<i16> = (0..110).collect();
    let outputs: Vec<Value> = (0..20)
        .map(|k| json!({"name": format!("y{k}"), "dtype": "int16", "shape": [2, 3]}))
        .collect();
    let v = json!({
        "op": "Split", "opset": 18,
        "attributes": {"axis": 1, "num_outputs": 20},
        "node_inputs": ["x"], "node_outputs": (0..20).map(|k| format!("y{k}")).collect::<Vec<_>>(),
        "inputs": [{"name": "x", "dtype": "int16", "shape": [2, 55], "data": x}],
        "outputs": outputs,
        "expect_error": "validation",
    });
    let case = parse_cases("variadic.json", v.to_string().as_bytes(), ops::catalog())
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let r = &run_case(&case, &[&CpuExecutor])[0];
    assert_eq!(r.outcome, Outcome::Pass, "{r}");
    assert!(
        r.error
            .as_deref()
            .is_some_and(|m| m.contains("the split axis is too short for that many equal parts")),
        "{r:?}"
    );
}
