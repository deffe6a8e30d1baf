//! The element-wise family on the GPU against the CPU reference (which
//! computes in `f64` and rounds once: the accuracy contract's reference).
//!
//! - Every unary float operator of the catalog on every FLOAT16 value and
//!   on FLOAT32 edge values plus 65,536 values spread over every binade,
//!   within the operator's declared bound.
//! - The binary float operators on every pair of FLOAT32 and FLOAT16 edge
//!   values (NaN, the infinities, both zeros, subnormals, extremes),
//!   broadcast as a column against a row.
//! - The kernel's thresholds: packed 8- and 16-bit outputs whose element
//!   count is not a multiple of a word, broadcasting of every dimension
//!   slot, the segmented variant of one-input kernels, the error of
//!   several-input kernels beyond one binding, and a dispatch of more than
//!   65,535 workgroups.

use std::collections::BTreeMap;

use ops_core::fuzz::{compare_within, edge_bits};
use ops_core::{DataType, HostTensor, OpArgs, OpError, Operator, TensorDesc};
use ops_gpu::Context;
use ops_tests::{gpu, tensor_with_edges, Rng};

/// Builds the ONNX operator `name` over `inputs` (by tensor name).
fn build(name: &str, inputs: &[(&str, &HostTensor)]) -> Box<dyn Operator> {
    build_in("onnx", name, inputs)
}

/// Builds the operator `name` of `namespace` over `inputs` (by tensor
/// name): the instance of a spec with optional or variadic tensors whose
/// inputs these are.
fn build_in(namespace: &str, name: &str, inputs: &[(&str, &HostTensor)]) -> Box<dyn Operator> {
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
    (info.build)(&args).unwrap_or_else(|e| panic!("onnx::{name}: {e}"))
}

/// Runs `op` on `ctx` and on the CPU and compares within its tolerance.
fn check(ctx: &Context, op: &dyn Operator, inputs: &[&HostTensor], context: &str) {
    let want = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{context}: cpu: {e}"));
    let got = ctx
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{context}: gpu: {e}"));
    if let Err(e) = compare_within(&got, &want, op.tolerance()) {
        panic!("{context}: {e}");
    }
}

fn from_bits(dt: DataType, bits: impl Iterator<Item = u64>) -> HostTensor {
    let w = dt.size_bytes();
    let bytes: Vec<u8> = bits.flat_map(|b| b.to_le_bytes()[..w].to_vec()).collect();
    let n = (bytes.len() / w) as u32;
    HostTensor::from_bytes(TensorDesc::new(dt, [n]), bytes).unwrap()
}

/// Every FLOAT16 value; FLOAT32 edges and 65,536 values a fixed step apart
/// over all bit patterns (every binade, both signs, NaNs).
fn float_inputs(dt: DataType) -> HostTensor {
    match dt {
        DataType::Float16 => from_bits(dt, 0..1 << 16),
        _ => from_bits(
            dt,
            edge_bits(dt)
                .into_iter()
                .chain((0..1u64 << 16).map(|i| (i * 65_537) & 0xffff_ffff)),
        ),
    }
}

#[test]
fn unary_float_operators_meet_their_bounds_on_every_binade() {
    let ops = [
        ("Exp", "input"),
        ("Log", "input"),
        ("Tanh", "input"),
        ("Sqrt", "X"),
        ("Reciprocal", "X"),
        ("Sigmoid", "X"),
        ("Relu", "X"),
        ("LeakyRelu", "X"),
        ("Abs", "X"),
        ("Neg", "X"),
        ("Floor", "X"),
        ("Ceil", "X"),
        ("Round", "X"),
        ("Sign", "input"),
        ("IsNaN", "X"),
        ("IsInf", "X"),
        ("Elu", "X"),
        ("HardSigmoid", "X"),
    ];
    // The DirectML ones, with their defaults (no `ScaleBias`).
    let dml = [
        "ElementWiseIdentity",
        "ElementWiseAbs",
        "ElementWiseCeil",
        "ElementWiseFloor",
        "ElementWiseRound",
        "ElementWiseSign",
        "ElementWiseNegate",
        "ElementWiseSqrt",
        "ElementWiseExp",
        "ElementWiseLog",
        "ElementWiseRecip",
        "ActivationRelu",
        "ActivationLeakyRelu",
        "ActivationSigmoid",
        "ActivationTanh",
        "ActivationElu",
        "ActivationHardSigmoid",
    ];
    for dt in [DataType::Float32, DataType::Float16] {
        let x = float_inputs(dt);
        for (name, input) in ops {
            let op = build(name, &[(&input.to_ascii_lowercase(), &x)]);
            check(gpu(), op.as_ref(), &[&x], &format!("{name} {dt}"));
        }
        for name in dml {
            let op = build_in("", name, &[("input", &x)]);
            check(gpu(), op.as_ref(), &[&x], &format!("{name} {dt}"));
        }
    }
}

#[test]
fn binary_float_operators_on_every_pair_of_edge_values() {
    let ops = [
        ("Add", ["a", "b"]),
        ("Sub", ["a", "b"]),
        ("Mul", ["a", "b"]),
        ("Div", ["a", "b"]),
        ("Pow", ["x", "y"]),
        ("Max", ["data_0", "data_1"]),
        ("Min", ["data_0", "data_1"]),
        ("Equal", ["a", "b"]),
        ("Less", ["a", "b"]),
        ("GreaterOrEqual", ["a", "b"]),
    ];
    for dt in [DataType::Float32, DataType::Float16] {
        let edges = edge_bits(dt);
        let n = edges.len() as u32;
        let column = from_bits(dt, edges.iter().copied());
        let column =
            HostTensor::from_bytes(TensorDesc::new(dt, [n, 1]), column.into_bytes()).unwrap();
        let row = from_bits(dt, edges.iter().copied());
        for (name, [a, b]) in ops {
            let op = build(name, &[(a, &column), (b, &row)]);
            assert_eq!(op.output_descs()[0].sizes, [n, n], "{name}");
            check(
                gpu(),
                op.as_ref(),
                &[&column, &row],
                &format!("{name} {dt}"),
            );
        }
        // fmod needs its attribute.
        let info = ops::catalog()
            .iter()
            .find(|i| i.namespace == "onnx" && i.name == "Mod")
            .unwrap();
        let mut args = OpArgs::default();
        args.tensors.insert("a".into(), column.desc().clone());
        args.tensors.insert("b".into(), row.desc().clone());
        args.attributes
            .insert("fmod".into(), ops_core::AttrValue::Bool(true));
        let op = (info.build)(&args).unwrap();
        check(
            gpu(),
            op.as_ref(),
            &[&column, &row],
            &format!("Mod fmod {dt}"),
        );
    }
}

#[test]
fn packed_outputs_and_broadcasting_of_every_dimension_slot() {
    let mut rng = Rng::new(20);
    // 8- and 16-bit outputs whose counts leave a partial last word, and
    // a BOOL output from FLOAT32 inputs.
    for (dt, name) in [
        (DataType::Uint8, "Add"),
        (DataType::Int8, "Mul"),
        (DataType::Int16, "Sub"),
        (DataType::Float16, "Add"),
        (DataType::Float32, "Less"),
        (DataType::Int64, "Add"),
    ] {
        for count in [1u32, 2, 3, 5, 1023, 1025, 4099] {
            let a = tensor_with_edges(dt, &[count], &mut rng);
            let b = tensor_with_edges(dt, &[count], &mut rng);
            let op = build(name, &[("a", &a), ("b", &b)]);
            check(
                gpu(),
                op.as_ref(),
                &[&a, &b],
                &format!("{name} {dt} [{count}]"),
            );
        }
    }
    // Eight dimensions, each broadcast by one input or the other.
    let full = [2u32, 3, 1, 2, 3, 2, 1, 3];
    for k in 0..8 {
        let mut a_sizes = full;
        let mut b_sizes = full;
        a_sizes[k] = 1;
        b_sizes[(k + 3) % 8] = 1;
        let a = tensor_with_edges(DataType::Float32, &a_sizes, &mut rng);
        let b = tensor_with_edges(DataType::Float32, &b_sizes[k % 4..], &mut rng);
        let op = build("Add", &[("a", &a), ("b", &b)]);
        check(
            gpu(),
            op.as_ref(),
            &[&a, &b],
            &format!("Add broadcast slot {k}"),
        );
    }
}

/// FLOAT64 (word pairs on the GPU) through the binary operators that take
/// it, on every pair of its edge values.
#[test]
fn float64_operators_on_every_pair_of_edge_values() {
    let dt = DataType::Float64;
    let edges = edge_bits(dt);
    let n = edges.len() as u32;
    let column = from_bits(dt, edges.iter().copied());
    let column = HostTensor::from_bytes(TensorDesc::new(dt, [n, 1]), column.into_bytes()).unwrap();
    let row = from_bits(dt, edges.iter().copied());
    for (name, [a, b]) in [
        ("Add", ["a", "b"]),
        ("Sub", ["a", "b"]),
        ("Mul", ["a", "b"]),
        ("Max", ["data_0", "data_1"]),
        ("Min", ["data_0", "data_1"]),
        ("Equal", ["a", "b"]),
        ("Less", ["a", "b"]),
        ("GreaterOrEqual", ["a", "b"]),
    ] {
        let op = build(name, &[(a, &column), (b, &row)]);
        assert_eq!(op.output_descs()[0].sizes, [n, n], "{name}");
        check(
            gpu(),
            op.as_ref(),
            &[&column, &row],
            &format!("{name} {dt}"),
        );
    }
}

#[test]
fn one_input_kernels_run_segmented_and_wider_ones_refuse_beyond_a_binding() {
    let ctx = Context::new()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .with_max_binding_size(4096);
    let mut rng = Rng::new(21);
    // 12 KiB tensors: three segments of 4 KiB each.
    for dt in [
        DataType::Float32,
        DataType::Float16,
        DataType::Int8,
        DataType::Float64,
    ] {
        let x = tensor_with_edges(dt, &[12_288 / dt.size_bytes() as u32 + 3], &mut rng);
        let name = if dt.is_float() { "Neg" } else { "Abs" };
        let op = build(name, &[("x", &x)]);
        check(&ctx, op.as_ref(), &[&x], &format!("{name} {dt} segmented"));
    }
    let a = tensor_with_edges(DataType::Float32, &[4096], &mut rng);
    let op = build("Add", &[("a", &a), ("b", &a)]);
    match ctx.run(op.as_ref(), &[&a, &a]) {
        Err(OpError::TooLarge { limit, .. }) => {
            assert!(limit.contains("max_storage_buffer_binding_size"), "{limit}")
        }
        other => panic!("Add beyond one binding: {other:?}"),
    }
}

/// 65,536 * 1024 + 7 FLOAT32 elements (268 MB, two segments of the 128 MiB
/// binding): 65,537 workgroups, more than one grid dimension holds.
#[test]
fn more_than_65535_workgroups() {
    let n = (1u32 << 26) + 7;
    let bits = (0..u64::from(n)).map(|i| (i * 2_654_435_761) & 0xffff_ffff);
    let x = from_bits(DataType::Float32, bits.clone());
    let op = build("Neg", &[("x", &x)]);
    let plan = op.gpu_plan().unwrap();
    assert!(
        plan.passes[0].workgroups > 65_535,
        "{}",
        plan.passes[0].workgroups
    );
    let got = gpu().run(op.as_ref(), &[&x]).unwrap();
    let want = from_bits(DataType::Float32, bits.map(|b| b ^ 0x8000_0000));
    assert!(got[0].bytes() == want.bytes(), "Neg of 2^26 + 7 elements");
}
