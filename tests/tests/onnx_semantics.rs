//! ONNX semantics that ONNX Runtime and ONNX's reference agree on, on both
//! backends, element by element (bits for the sign of zeros):
//!
//! - Tile of a rank-0 input, Transpose and Reshape of an empty tensor with
//!   huge dimensions.
//! - Pad crops negative pads before `wrap`, `reflect` and `edge` fill.
//! - Clip's absent bounds are the type's finite limits.
//! - Tanh and the other odd functions keep the sign of zero.
//! - Pow uses its exponent in the exponent's own type (Pow-15): parity of
//!   large integer exponents, subnormal FLOAT64 exponents, a FLOAT32
//!   exponent of a FLOAT16 base.

use ops_core::{DataType, FeatureLevel, HostTensor, Operator, TensorDesc};
use ops_tests::gpu;

/// `op` validated, then run on `inputs` on the CPU reference and the GPU:
/// `[cpu, gpu]`, the first output of each.
fn both(op: &dyn Operator, inputs: &[&HostTensor]) -> [HostTensor; 2] {
    let name = op.info().name;
    for level in FeatureLevel::ALL {
        op.validate(level)
            .unwrap_or_else(|e| panic!("{name}: at {level}: {e}"));
    }
    let cpu = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{name}: cpu: {e}"));
    let got = gpu()
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{name}: gpu: {e}"));
    [cpu[0].clone(), got[0].clone()]
}

#[test]
fn empty_and_rank_0_views_are_valid() {
    // Tile of a scalar: repeats of shape [0].
    let x = HostTensor::from_slice([], &[7i32]).unwrap();
    let repeats = HostTensor::zeros(TensorDesc::new(DataType::Int64, [0])).unwrap();
    let op = ops::onnx::TileDesc::builder()
        .input(x.desc().clone())
        .repeats(repeats.clone())
        .build()
        .unwrap_or_else(|e| panic!("Tile of a scalar: {e}"));
    for t in both(&op, &[&x, &repeats]) {
        assert_eq!(t, x, "Tile of a scalar");
    }
    // 0 elements beside dimensions whose row-major steps pass i64.
    let huge = TensorDesc::new(DataType::Float32, [0, u32::MAX, u32::MAX, u32::MAX]);
    let x = HostTensor::zeros(huge.clone()).unwrap();
    let op = ops::onnx::TransposeDesc::builder()
        .data(huge.clone())
        .build()
        .unwrap();
    for t in both(&op, &[&x]) {
        assert_eq!(t.sizes(), [u32::MAX, u32::MAX, u32::MAX, 0], "Transpose");
    }
    let shape =
        HostTensor::from_slice([4], &[u32::MAX as i64, u32::MAX as i64, 0, u32::MAX as i64])
            .unwrap();
    let op = ops::onnx::ReshapeDesc::builder()
        .data(huge)
        .shape(shape.clone())
        .allowzero(true)
        .build()
        .unwrap_or_else(|e| panic!("Reshape: {e}"));
    for t in both(&op, &[&x, &shape]) {
        assert_eq!(t.sizes(), [u32::MAX, u32::MAX, 0, u32::MAX], "Reshape");
    }
}

fn pad(data: &HostTensor, pads: &[i64], mode: ops::onnx::pad::PadMode) -> Vec<i32> {
    let pads = HostTensor::from_slice([pads.len() as u32], pads).unwrap();
    let none = HostTensor::zeros(TensorDesc::new(data.dtype(), [0])).unwrap();
    let axes = HostTensor::zeros(TensorDesc::new(DataType::Int64, [0])).unwrap();
    let op = ops::onnx::PadDesc::builder()
        .data(data.desc().clone())
        .pads(pads.clone())
        .constant_value(none.clone())
        .axes(axes.clone())
        .mode(mode)
        .build()
        .unwrap();
    let [cpu, got] = both(&op, &[data, &pads, &none, &axes]);
    assert_eq!(cpu, got, "{mode:?} {pads:?}: the GPU differs");
    cpu.to_vec::<i32>().unwrap()
}

#[test]
fn pad_crops_before_it_fills() {
    use ops::onnx::pad::PadMode;
    let x = HostTensor::from_slice([3], &[1i32, 2, 3]).unwrap();
    // numpy.pad of x[:2] by (1, 0), and of x[1:] by (0, 2).
    assert_eq!(pad(&x, &[1, -1], PadMode::Wrap), [2, 1, 2]);
    assert_eq!(pad(&x, &[1, -1], PadMode::Reflect), [2, 1, 2]);
    assert_eq!(pad(&x, &[1, -1], PadMode::Edge), [1, 1, 2]);
    assert_eq!(pad(&x, &[-1, 2], PadMode::Wrap), [2, 3, 2, 3]);
    assert_eq!(pad(&x, &[-1, 2], PadMode::Reflect), [2, 3, 2, 3]);
    assert_eq!(pad(&x, &[-1, 2], PadMode::Edge), [2, 3, 3, 3]);
    assert_eq!(pad(&x, &[-1, 2], PadMode::Constant), [2, 3, 0, 0]);
    // Two dimensions, cropped on one side of each.
    let x = HostTensor::from_slice([2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(
        pad(&x, &[-1, 2, 1, -1], PadMode::Wrap),
        [4, 5, 4, 5, 4, 5, 4, 5]
    );
}

/// Asserts both backends give `want`, bit for bit (any two NaNs match).
fn assert_f32s(op: &dyn Operator, inputs: &[&HostTensor], want: &[f32], what: &str) {
    for (backend, t) in ["cpu", "gpu"].iter().zip(both(op, inputs)) {
        let got = t.to_vec::<f32>().unwrap();
        let same = got.len() == want.len()
            && got
                .iter()
                .zip(want)
                .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()));
        assert!(same, "{what} [{backend}]: got {got:?}, expected {want:?}");
    }
}

fn f32s(v: &[f32]) -> HostTensor {
    HostTensor::from_slice([v.len() as u32], v).unwrap()
}

#[test]
fn clip_without_a_bound_clamps_to_the_finite_limits() {
    let x = f32s(&[f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -0.0, 1.5]);
    let op = ops::onnx::ClipNoMinNoMaxDesc::builder()
        .input(x.desc().clone())
        .build()
        .unwrap();
    assert_f32s(
        &op,
        &[&x],
        &[f32::MAX, -f32::MAX, f32::NAN, -0.0, 1.5],
        "Clip(x)",
    );
    let lo = HostTensor::from_slice([], &[1.0f32]).unwrap();
    let op = ops::onnx::ClipNoMaxDesc::builder()
        .input(x.desc().clone())
        .min(lo.desc().clone())
        .build()
        .unwrap();
    assert_f32s(
        &op,
        &[&x, &lo],
        &[f32::MAX, 1.0, f32::NAN, 1.0, 1.5],
        "Clip(x, min)",
    );
    let hi = HostTensor::from_slice([], &[1.0f32]).unwrap();
    let op = ops::onnx::ClipNoMinDesc::builder()
        .input(x.desc().clone())
        .max(hi.desc().clone())
        .build()
        .unwrap();
    assert_f32s(
        &op,
        &[&x, &hi],
        &[1.0, -f32::MAX, f32::NAN, -0.0, 1.0],
        "Clip(x, max = 1)",
    );
    let h = |v: f32| half::f16::from_f32(v);
    let x = HostTensor::from_slice([2], &[h(f32::INFINITY), h(f32::NEG_INFINITY)]).unwrap();
    let op = ops::onnx::ClipNoMinNoMaxDesc::builder()
        .input(x.desc().clone())
        .build()
        .unwrap();
    for (backend, t) in ["cpu", "gpu"].iter().zip(both(&op, &[&x])) {
        assert_eq!(
            t.to_vec::<half::f16>().unwrap(),
            [h(65504.0), h(-65504.0)],
            "FLOAT16 Clip(x) [{backend}]"
        );
    }
}

#[test]
fn odd_functions_keep_the_sign_of_zero() {
    let x = f32s(&[-0.0, 0.0]);
    let tanh = ops::onnx::TanhDesc::builder()
        .input(x.desc().clone())
        .build()
        .unwrap();
    assert_f32s(&tanh, &[&x], &[-0.0, 0.0], "Tanh");
    let neg = ops::onnx::NegDesc::builder()
        .x(x.desc().clone())
        .build()
        .unwrap();
    assert_f32s(&neg, &[&x], &[0.0, -0.0], "Neg");
    let abs = ops::onnx::AbsDesc::builder()
        .x(x.desc().clone())
        .build()
        .unwrap();
    assert_f32s(&abs, &[&x], &[0.0, 0.0], "Abs");
    let sign = ops::onnx::SignDesc::builder()
        .input(x.desc().clone())
        .build()
        .unwrap();
    let [cpu, got] = both(&sign, &[&x]);
    assert_eq!(
        cpu.bytes(),
        got.bytes(),
        "Sign: the GPU differs from the CPU"
    );
    let x = HostTensor::from_slice([2], &[half::f16::NEG_ZERO, half::f16::ZERO]).unwrap();
    let tanh = ops::onnx::TanhDesc::builder()
        .input(x.desc().clone())
        .build()
        .unwrap();
    for (backend, t) in ["cpu", "gpu"].iter().zip(both(&tanh, &[&x])) {
        assert_eq!(t.bytes(), x.bytes(), "FLOAT16 Tanh of zeros [{backend}]");
    }
}

fn pow(x: &HostTensor, y: &HostTensor) -> ops::onnx::PowDesc {
    ops::onnx::PowDesc::builder()
        .x(x.desc().clone())
        .y(y.desc().clone())
        .build()
        .unwrap()
}

#[test]
fn pow_uses_the_exponent_in_its_own_type() {
    // An odd INT64 and INT32 exponent above 2^24 (FLOAT32 rounds it even).
    let x = f32s(&[-1.0, -1.0, -2.0, -0.0, 2.0]);
    let y = HostTensor::from_slice([5], &[16_777_217i64, 16_777_216, 3, -3, 3]).unwrap();
    assert_f32s(
        &pow(&x, &y),
        &[&x, &y],
        &[-1.0, 1.0, -8.0, f32::NEG_INFINITY, 8.0],
        "FLOAT32 ^ INT64",
    );
    let y = HostTensor::from_slice([5], &[16_777_217i32, 16_777_216, 3, -3, 3]).unwrap();
    assert_f32s(
        &pow(&x, &y),
        &[&x, &y],
        &[-1.0, 1.0, -8.0, f32::NEG_INFINITY, 8.0],
        "FLOAT32 ^ INT32",
    );
    // FLOAT64 exponents FLOAT32 cannot hold: an odd integer above 2^24 and
    // subnormals (not 0: 0^tiny is 0, a negative base gives NaN).
    let x = f32s(&[-1.0, 0.0, -2.0, 2.0, 0.0]);
    let y =
        HostTensor::from_slice([5], &[16_777_217f64, 1e-310, -1e-310, 5e-324, -1e-310]).unwrap();
    assert_f32s(
        &pow(&x, &y),
        &[&x, &y],
        &[-1.0, 0.0, f32::NAN, 1.0, f32::INFINITY],
        "FLOAT32 ^ FLOAT64",
    );
    // A FLOAT64 base with an odd INT64 exponent above 2^53.
    let x = HostTensor::from_slice([2], &[-1.0f64, -1.0]).unwrap();
    let y = HostTensor::from_slice([2], &[(1i64 << 53) + 1, 1i64 << 53]).unwrap();
    for (backend, t) in ["cpu", "gpu"].iter().zip(both(&pow(&x, &y), &[&x, &y])) {
        assert_eq!(
            t.to_vec::<f64>().unwrap(),
            [-1.0, 1.0],
            "FLOAT64 ^ INT64 [{backend}]"
        );
    }
    // A FLOAT16 base with a FLOAT32 exponent FLOAT16 rounds (2049 to 2048).
    let x = HostTensor::from_slice([1], &[half::f16::from_f32(-1.0)]).unwrap();
    let y = f32s(&[2049.0]);
    for (backend, t) in ["cpu", "gpu"].iter().zip(both(&pow(&x, &y), &[&x, &y])) {
        assert_eq!(
            t.to_vec::<half::f16>().unwrap()[0].to_f32(),
            -1.0,
            "FLOAT16 ^ FLOAT32 [{backend}]"
        );
    }
}
