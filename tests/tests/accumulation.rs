//! The CPU backend computes floats in the accumulator type the specs
//! declare (`f32` for FLOAT32 and FLOAT16), as the GPU does, while the
//! accuracy contracts are stated against the `f64` yardstick:
//!
//! - ONNX ReduceSum, ReduceMean, ReduceL2 and ReduceLogSum whose `f32`
//!   partial sums overflow are +infinity on both backends, through every
//!   GPU plan, where the yardstick is finite;
//! - ONNX Sum and Mean add left to right in `f32` (FLOAT16 too, rounded
//!   once on store): where the adds cancel, both backends give numpy's
//!   left-to-right `f32` result bit for bit, not the yardstick's;
//! - Mean of two FLT_MAX (ONNX's and DirectML's) is +infinity on both;
//! - the fuzzers' contract check accepts these answers and holds the GPU
//!   to them.

use std::collections::BTreeMap;

use half::f16;
use ops_core::fuzz::{compare_contract, compare_within};
use ops_core::{DeviceClass, HostTensor, OpArgs, Operator};
use ops_tests::{assert_bitwise_eq, gpu};

/// Builds the ONNX operator `name` over `inputs` (by tensor name).
fn build(namespace: &str, name: &str, inputs: &[(&str, &HostTensor)]) -> Box<dyn Operator> {
    let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == namespace && i.name == name)
        .and_then(|i| i.instance_with_inputs(ops::catalog(), &names))
        .unwrap_or_else(|| panic!("no {namespace}::{name} of inputs {names:?}"));
    let args = OpArgs {
        tensors: inputs
            .iter()
            .map(|(n, t)| (n.to_string(), t.desc().clone()))
            .collect::<BTreeMap<_, _>>(),
        ..OpArgs::default()
    };
    (info.build)(&args).unwrap_or_else(|e| panic!("{namespace}::{name}: {e}"))
}

fn f32s(v: &[f32]) -> HostTensor {
    HostTensor::from_slice([v.len() as u32], v).unwrap()
}

fn f16s(v: &[f32]) -> HostTensor {
    let h: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
    HostTensor::from_slice([v.len() as u32], &h).unwrap()
}

/// Runs `op` on the CPU backend, the GPU's default plan and every plan
/// variant; asserts the GPU's outputs meet the contract against the CPU's
/// answer and yardstick, and returns the CPU's answer, the yardstick and
/// the default plan's outputs (first output each).
fn run(op: &dyn Operator, inputs: &[&HostTensor], what: &str) -> [HostTensor; 3] {
    run_plans(op, inputs, what, true)
}

/// [`run`] through both device classes' plans, and with `variants` every
/// other plan variant too.
fn run_plans(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    what: &str,
    variants: bool,
) -> [HostTensor; 3] {
    let cpu = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{what}: cpu: {e}"));
    let yardstick = op.run_yardstick(inputs).unwrap();
    let got = gpu()
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{what}: gpu: {e}"));
    compare_contract(&got, &cpu, &yardstick, op.tolerance())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut plans: Vec<_> = DeviceClass::ALL
        .into_iter()
        .map(|c| (format!("{c:?}"), op.gpu_plan_for(c).unwrap()))
        .collect();
    if variants {
        plans.extend(op.gpu_plan_variants().unwrap());
    }
    for (name, plan) in plans {
        let v = gpu().run_plan(op, inputs, &plan).unwrap();
        compare_contract(&v, &cpu, &yardstick, op.tolerance())
            .unwrap_or_else(|e| panic!("{what} {name}: {e}"));
    }
    let first = |mut v: Vec<HostTensor>| v.remove(0);
    [first(cpu), first(yardstick), first(got)]
}

#[test]
fn reductions_whose_f32_sums_overflow_are_infinite_on_both_backends() {
    use ops::onnx;
    let axes = HostTensor::from_slice([1u32].as_slice(), &[0i64]).unwrap();
    // `$variants`: through every plan variant, not only both device
    // classes' plans (which fold these few values in one row-major pass).
    macro_rules! case {
        ($desc:ident, $data:expr, $yardstick:expr, $variants:expr) => {{
            let x = f32s(&$data);
            let op = onnx::$desc::builder()
                .data(x.desc().clone())
                .axes(axes.clone())
                .keepdims(false)
                .build()
                .unwrap();
            let what = stringify!($desc);
            let [cpu, yardstick, got] = run_plans(&op, &[&x, &axes], what, $variants);
            assert_eq!(cpu.to_vec::<f32>().unwrap(), [f32::INFINITY], "{what}: cpu");
            assert_eq!(got.to_vec::<f32>().unwrap(), [f32::INFINITY], "{what}: gpu");
            // The `f64` yardstick is finite: the contract's bound cannot
            // hold, the backends agree on infinity instead.
            let y = yardstick.to_vec::<f32>().unwrap()[0];
            assert_eq!(y, $yardstick, "{what}: yardstick");
            assert!(compare_within(&[got], &[yardstick], op.tolerance()).is_err());
        }};
    }
    // Values of both signs: another order of the adds may give another
    // non-finite value (chunks `[3e38, 3e38]` and `[-3e38]`: +infinity,
    // `[3e38]` and `[3e38, -3e38]`: 3e38), so only the row-major plans.
    case!(ReduceSumDesc, [3e38f32, 3e38, -3e38], 3e38, false);
    // Values of one sign overflow in every order.
    case!(ReduceMeanDesc, [3e38f32, 3e38], 3e38, true);
    let (big, large) = (f64::from(3e38f32), f64::from(3e19f32));
    case!(
        ReduceL2Desc,
        [3e19f32, 3e19],
        (2.0 * large * large).sqrt() as f32,
        true
    );
    case!(
        ReduceLogSumDesc,
        [3e38f32, 3e38],
        (2.0 * big).ln() as f32,
        true
    );
}

/// `((a + b) + c)` in `f32`: numpy's `np.sum([a, b, c], axis=0)` of
/// `float32` arrays, and the spec's adds for FLOAT16 values.
fn f32_sum(a: f32, b: f32, c: f32) -> f32 {
    (a + b) + c
}

#[test]
fn sum_and_mean_add_left_to_right_in_f32() {
    let a = [1e8f32, 3e38, 1.0, 16_777_216.0, -0.0, 0.1];
    let b = [1.0f32, 3e38, 1e-8, 1.0, -0.0, 0.2];
    let c = [-1e8f32, -3e38, -1.0, -16_777_216.0, -0.0, 0.3];
    let (x0, x1, x2) = (f32s(&a), f32s(&b), f32s(&c));
    let inputs = [("data_0", &x0), ("data_1", &x1), ("data_2", &x2)];
    let refs = [&x0, &x1, &x2];
    let sums: Vec<f32> = (0..a.len()).map(|i| f32_sum(a[i], b[i], c[i])).collect();
    let means: Vec<f32> = sums.iter().map(|s| s / 3.0).collect();
    for (name, want) in [("Sum", &sums), ("Mean", &means)] {
        let op = build("onnx", name, &inputs);
        let [cpu, yardstick, got] = run(op.as_ref(), &refs, name);
        assert_bitwise_eq(&cpu, &f32s(want), &format!("{name}: cpu"));
        assert_bitwise_eq(&got, &cpu, &format!("{name}: gpu"));
        // The adds cancel: 0 where the yardstick says 1, and infinity
        // where it says 3e38.
        let y = yardstick.to_vec::<f32>().unwrap();
        assert_eq!(cpu.to_vec::<f32>().unwrap()[..2], [0.0, f32::INFINITY]);
        assert_ne!(y[..2], [0.0, f32::INFINITY], "{name}: yardstick");
    }
}

#[test]
fn float16_sum_and_mean_add_in_f32_and_round_once() {
    // FLOAT16 values, added in `f32`: `65504 + 2^-10` is 65504 there.
    let a = [65504.0f32, 2048.0, -0.5, 1000.0];
    let b = [0.000_976_562_5f32, 1.0, 0.000_976_562_5, 0.1];
    let c = [-65504.0f32, 1.0, 0.25, -1000.0];
    let (x0, x1, x2) = (f16s(&a), f16s(&b), f16s(&c));
    let inputs = [("data_0", &x0), ("data_1", &x1), ("data_2", &x2)];
    let refs = [&x0, &x1, &x2];
    let value = |t: &HostTensor, i: usize| t.to_vec::<f16>().unwrap()[i].to_f32();
    let sums: Vec<f32> = (0..a.len())
        .map(|i| f32_sum(value(&x0, i), value(&x1, i), value(&x2, i)))
        .collect();
    let means: Vec<f32> = sums.iter().map(|s| s / 3.0).collect();
    for (name, want) in [("Sum", &sums), ("Mean", &means)] {
        let op = build("onnx", name, &inputs);
        let [cpu, yardstick, got] = run(op.as_ref(), &refs, name);
        assert_bitwise_eq(&cpu, &f16s(want), &format!("{name} FLOAT16: cpu"));
        assert_bitwise_eq(&got, &cpu, &format!("{name} FLOAT16: gpu"));
        assert_eq!(value(&cpu, 0), 0.0, "{name} FLOAT16");
        assert_ne!(value(&yardstick, 0), 0.0, "{name} FLOAT16: yardstick");
    }
}

#[test]
fn mean_of_two_flt_max_is_infinite_on_both_backends() {
    let max = f32s(&[f32::MAX, -f32::MAX, 1.0]);
    for (namespace, name, [a, b]) in [
        ("onnx", "Mean", ["data_0", "data_1"]),
        ("", "ElementWiseMean", ["a", "b"]),
    ] {
        let op = build(namespace, name, &[(a, &max), (b, &max)]);
        let [cpu, yardstick, got] = run(op.as_ref(), &[&max, &max], name);
        let want = [f32::INFINITY, -f32::INFINITY, 1.0];
        assert_eq!(cpu.to_vec::<f32>().unwrap(), want, "{name}: cpu");
        assert_eq!(got.to_vec::<f32>().unwrap(), want, "{name}: gpu");
        assert_eq!(
            yardstick.to_vec::<f32>().unwrap(),
            [f32::MAX, -f32::MAX, 1.0],
            "{name}: yardstick"
        );
    }
    // FLOAT16 sums in `f32`: 65504 + 65504 does not overflow there.
    let h = f16s(&[65504.0]);
    let op = build("onnx", "Mean", &[("data_0", &h), ("data_1", &h)]);
    let [cpu, _, got] = run(op.as_ref(), &[&h, &h], "Mean FLOAT16");
    assert_bitwise_eq(&cpu, &h, "Mean FLOAT16: cpu");
    assert_bitwise_eq(&got, &h, "Mean FLOAT16: gpu");
}
