//! ArgMin and ArgMax end to end: the seed's examples and tie-breaking
//! examples on both backends, validation errors in the seed's words, feature
//! levels, a deterministic sweep of every table combination, and a property:
//! for valid descriptors the specs' generated strategies draw over every
//! data-type combination and feature level of the tables, the GPU output
//! equals the CPU reference bit for bit.

use std::collections::BTreeMap;

use ops::{argmax, argmin, ArgMaxDesc, ArgMinDesc};
use ops_core::fuzz;
use ops_core::{
    AttrValue, DataType, FeatureLevel, HostTensor, OpArgs, OpError, Operator, TensorDesc,
};
use ops_tests::{assert_bitwise_eq, float_pairs, gpu, tensor_with_edges, Rng};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn seed_input() -> HostTensor {
    HostTensor::from_slice([3, 3], &[1f32, 2., 3., 3., 0., 4., 2., 5., 2.]).unwrap()
}

/// Runs on both backends and checks they agree; returns the output.
fn run_both(op: &dyn ops_core::Operator, inputs: &[&HostTensor]) -> HostTensor {
    let cpu = op.run_cpu(inputs).unwrap().remove(0);
    let gpu_out = gpu().run(op, inputs).unwrap().remove(0);
    assert_bitwise_eq(&gpu_out, &cpu, &format!("{op:?}"));
    cpu
}

#[test]
fn argmin_seed_examples_on_both_backends() {
    let input = seed_input();
    let cases: [(&[u32], [u32; 2], &[u32]); 3] = [
        (&[0], [1, 3], &[0, 1, 2]),
        (&[1], [3, 1], &[0, 1, 0]),
        (&[0, 1], [1, 1], &[4]),
    ];
    for (axes, sizes, want) in cases {
        let d = ArgMinDesc::builder()
            .input(input.desc().clone())
            .output(TensorDesc::new(DataType::Uint32, sizes))
            .axes(axes)
            .build()
            .unwrap();
        d.validate(FeatureLevel::FL3_0).unwrap();
        let out = run_both(&d, &[&input]);
        assert_eq!(out.sizes(), sizes);
        assert_eq!(out.to_vec::<u32>().unwrap(), want, "axes {axes:?}");
    }
}

#[test]
fn axes_in_any_order_count_row_major_in_increasing_axis_order() {
    let input = seed_input();
    for axes in [[0u32, 1], [1, 0]] {
        let d = ArgMaxDesc::builder()
            .input(input.desc().clone())
            .output_dtype(DataType::Int64)
            .axes(axes)
            .build()
            .unwrap();
        let out = run_both(&d, &[&input]);
        assert_eq!(
            out.to_vec::<i64>().unwrap(),
            [7],
            "5 sits at row 2, column 1"
        );
    }
}

#[test]
fn tie_breaking_follows_axis_direction() {
    let input = HostTensor::from_slice([5], &[1f32, 2., 3., 2., 1.]).unwrap();
    for (dir, want) in [
        (argmin::AxisDirection::Increasing, 0u64),
        (argmin::AxisDirection::Decreasing, 4),
    ] {
        let d = ArgMinDesc::builder()
            .input(input.desc().clone())
            .output_dtype(DataType::Uint64)
            .axes([0])
            .axis_direction(dir)
            .build()
            .unwrap();
        assert_eq!(run_both(&d, &[&input]).to_vec::<u64>().unwrap(), [want]);
    }
    let input = HostTensor::from_slice([5], &[3i8, 2, 3, 2, 3]).unwrap();
    for (dir, want) in [
        (argmax::AxisDirection::Increasing, 0i32),
        (argmax::AxisDirection::Decreasing, 4),
    ] {
        let d = ArgMaxDesc::builder()
            .input(input.desc().clone())
            .output_dtype(DataType::Int32)
            .axes([0])
            .axis_direction(dir)
            .build()
            .unwrap();
        assert_eq!(run_both(&d, &[&input]).to_vec::<i32>().unwrap(), [want]);
    }
}

#[test]
fn signed_zeros_tie_and_nan_is_selected() {
    let input = HostTensor::from_slice([4], &[0f32, -0.0, 0.0, -0.0]).unwrap();
    for (dir, want) in [
        (argmin::AxisDirection::Increasing, 0u32),
        (argmin::AxisDirection::Decreasing, 3),
    ] {
        let d = ArgMinDesc::builder()
            .input(input.desc().clone())
            .output_dtype(DataType::Uint32)
            .axes([0])
            .axis_direction(dir)
            .build()
            .unwrap();
        assert_eq!(run_both(&d, &[&input]).to_vec::<u32>().unwrap(), [want]);
    }
    let input =
        HostTensor::from_slice([5], &[1f32, f32::NAN, f32::NEG_INFINITY, f32::NAN, 7.0]).unwrap();
    for (dir, want) in [
        (argmin::AxisDirection::Increasing, 1u32),
        (argmin::AxisDirection::Decreasing, 3),
    ] {
        let d = ArgMinDesc::builder()
            .input(input.desc().clone())
            .output_dtype(DataType::Uint32)
            .axes([0])
            .axis_direction(dir)
            .build()
            .unwrap();
        assert_eq!(run_both(&d, &[&input]).to_vec::<u32>().unwrap(), [want]);
        let d = ArgMaxDesc::builder()
            .input(input.desc().clone())
            .output_dtype(DataType::Uint32)
            .axes([0])
            .build()
            .unwrap();
        assert_eq!(
            run_both(&d, &[&input]).to_vec::<u32>().unwrap(),
            [1],
            "NaN wins ArgMax too"
        );
    }
}

#[test]
fn float_pairs_select_as_the_cpu_reference() {
    for (rows, columns) in float_pairs() {
        for (input, axis) in [(&rows, 1), (&columns, 0)] {
            for dir in [
                argmin::AxisDirection::Increasing,
                argmin::AxisDirection::Decreasing,
            ] {
                let d = ArgMinDesc::builder()
                    .input(input.desc().clone())
                    .output_dtype(DataType::Uint32)
                    .axes([axis])
                    .axis_direction(dir)
                    .build()
                    .unwrap();
                let picks = run_both(&d, &[input]).to_vec::<u32>().unwrap();
                assert!(
                    picks.contains(&0) && picks.contains(&1),
                    "{d:?}: both sides win"
                );
            }
            let d = ArgMaxDesc::builder()
                .input(input.desc().clone())
                .output_dtype(DataType::Uint32)
                .axes([axis])
                .build()
                .unwrap();
            run_both(&d, &[input]);
        }
    }
}

#[test]
fn sixty_four_bit_values_compare_exactly() {
    let a = (1i64 << 53) + 1;
    let input = HostTensor::from_slice([4], &[a, a - 1, i64::MAX, a - 1]).unwrap();
    let d = ArgMinDesc::builder()
        .input(input.desc().clone())
        .output_dtype(DataType::Uint32)
        .axes([0])
        .build()
        .unwrap();
    d.validate(FeatureLevel::FL4_1).unwrap();
    assert_eq!(run_both(&d, &[&input]).to_vec::<u32>().unwrap(), [1]);
    let input = HostTensor::from_slice([3], &[u64::MAX, 1 << 63, (1 << 63) - 1]).unwrap();
    let d = ArgMaxDesc::builder()
        .input(input.desc().clone())
        .output_dtype(DataType::Uint32)
        .axes([0])
        .build()
        .unwrap();
    assert_eq!(run_both(&d, &[&input]).to_vec::<u32>().unwrap(), [0]);
}

fn validation_error(d: &ArgMinDesc, level: FeatureLevel) -> String {
    d.validate(level).expect_err("must be rejected").to_string()
}

#[test]
fn validation_names_the_rule_with_the_numbers() {
    let f32_3x3 = TensorDesc::new(DataType::Float32, [3, 3]);
    let base = || {
        ArgMinDesc::builder()
            .input(f32_3x3.clone())
            .output_dtype(DataType::Uint32)
    };
    let e = validation_error(&base().axes([0, 0]).build().unwrap(), FeatureLevel::FL3_0);
    assert!(
        e.contains("Axes must not contain duplicate values") && e.contains("[0, 0]"),
        "{e}"
    );
    let e = validation_error(&base().axes([2]).build().unwrap(), FeatureLevel::FL3_0);
    assert!(
        e.contains("Axes values must be in the range")
            && e.contains("`axes[i]` is 2, `rank(input)` is 2 (for i = 0)"),
        "{e}"
    );
    let e = validation_error(
        &base().axes(Vec::<u32>::new()).build().unwrap(),
        FeatureLevel::FL3_0,
    );
    assert!(e.contains("AxisCount must be at least 1"), "{e}");
    let d = ArgMinDesc::builder()
        .input(f32_3x3.clone())
        .output(TensorDesc::new(DataType::Uint32, [3, 3]))
        .axes([1])
        .build()
        .unwrap();
    let e = validation_error(&d, FeatureLevel::FL3_0);
    assert!(e.contains("OutputTensor.Sizes must match InputTensor.Sizes except for dimensions included in the reduced Axes") && e.contains("[3, 3], expected [3, 1]"), "{e}");
    let d = ArgMinDesc::builder()
        .input(f32_3x3.clone())
        .output(TensorDesc::new(DataType::Uint32, [9]))
        .axes([1])
        .build()
        .unwrap();
    let e = validation_error(&d, FeatureLevel::FL3_0);
    assert!(
        e.contains("OutputTensor.DimensionCount must match InputTensor.DimensionCount")
            && e.contains("is 1")
            && e.contains("is 2"),
        "{e}"
    );
    let d = base()
        .output_dtype(DataType::Float32)
        .axes([0])
        .build()
        .unwrap();
    let e = validation_error(&d, FeatureLevel::FL3_0);
    assert!(
        e.contains("OutputTensor.DataType must be one of INT64, INT32, UINT64, UINT32")
            && e.contains("FLOAT32"),
        "{e}"
    );
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [1; 9]))
        .output_dtype(DataType::Uint32)
        .axes([0])
        .build()
        .unwrap();
    let e = validation_error(&d, FeatureLevel::FL4_1);
    assert!(
        e.contains("InputTensor.DimensionCount must be 1 to 8") && e.contains("is 9"),
        "{e}"
    );
    let e = validation_error(&base().axes([0]).build().unwrap(), FeatureLevel::FL2_1);
    assert!(
        e.contains("ArgMin was introduced in feature level 3.0") && e.contains("2.1"),
        "{e}"
    );
}

#[test]
fn int64_input_needs_feature_level_4_1() {
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Int64, [4, 2]))
        .output_dtype(DataType::Int64)
        .axes([1])
        .build()
        .unwrap();
    let e = validation_error(&d, FeatureLevel::FL3_0);
    assert!(
        e.contains("InputTensor.DataType must be one of")
            && e.contains("at feature level 3.0")
            && e.contains("INT64"),
        "{e}"
    );
    d.validate(FeatureLevel::FL4_1).unwrap();
    d.validate(FeatureLevel::FL6_0).unwrap();
    assert_eq!(d.min_feature_level(), Some(FeatureLevel::FL4_1));
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Uint8, [4, 2]))
        .output_dtype(DataType::Int64)
        .axes([1])
        .build()
        .unwrap();
    assert_eq!(d.min_feature_level(), Some(FeatureLevel::FL3_0));
    let bad = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Uint8, [4, 2]))
        .output_dtype(DataType::Int64)
        .axes([1, 1])
        .build()
        .unwrap();
    assert_eq!(bad.min_feature_level(), None);
}

#[test]
fn builder_infers_the_output_and_reports_missing_members() {
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float16, [2, 3, 4]))
        .output_dtype(DataType::Int32)
        .axes([2, 0])
        .build()
        .unwrap();
    assert_eq!(d.output, TensorDesc::new(DataType::Int32, [1, 3, 1]));
    assert_eq!(
        d.axis_direction,
        argmin::AxisDirection::Increasing,
        "the spec's default"
    );
    let e = ArgMinDesc::builder()
        .output_dtype(DataType::Int32)
        .axes([0])
        .build()
        .unwrap_err();
    assert!(
        matches!(e, OpError::InvalidArgument(ref m) if m.contains("`input` is required")),
        "{e}"
    );
    let e = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float16, [2]))
        .axes([0])
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("needs a data type"), "{e}");
}

#[test]
fn wrong_inputs_are_errors_not_panics() {
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [3, 3]))
        .output_dtype(DataType::Uint32)
        .axes([0])
        .build()
        .unwrap();
    let other = HostTensor::from_slice([9], &[0f32; 9]).unwrap();
    assert!(matches!(
        d.run_cpu(&[&other]),
        Err(OpError::InvalidArgument(_))
    ));
    assert!(matches!(
        gpu().run(&d, &[&other]),
        Err(OpError::InvalidArgument(_))
    ));
    assert!(matches!(d.run_cpu(&[]), Err(OpError::InvalidArgument(_))));
}

#[test]
fn descriptor_docs_carry_the_support_table() {
    // The rustdoc text is generated from the spec; the catalog exposes its facts.
    let info = <ArgMinDesc as ops_core::OperatorType>::INFO;
    assert_eq!(info.name, "ArgMin");
    assert_eq!(info.introduced, Some(FeatureLevel::FL3_0));
    assert_eq!(info.inputs, ["input"]);
    // 10 input types x 4 output types x every reduce variant.
    let variants = ops_core::family::reduce::ReduceVariant::ALL.len();
    assert_eq!(info.kernels.len(), 10 * 4 * variants);
}

/// One ArgMin/ArgMax call of the deterministic sweep.
#[derive(Debug, Clone)]
struct Case {
    op: &'static str,
    input: DataType,
    output: DataType,
    sizes: Vec<u32>,
    axes: Vec<u32>,
    direction: &'static str,
}

const IN_3_0: [DataType; 8] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::Uint32,
    DataType::Uint16,
    DataType::Uint8,
];
const IN_4_1: [DataType; 10] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Int64,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::Uint64,
    DataType::Uint32,
    DataType::Uint16,
    DataType::Uint8,
];
const OUT: [DataType; 4] = [
    DataType::Int64,
    DataType::Int32,
    DataType::Uint64,
    DataType::Uint32,
];

fn build(c: &Case) -> Box<dyn ops_core::Operator> {
    let mut args = OpArgs::default();
    args.tensors
        .insert("input".into(), TensorDesc::new(c.input, c.sizes.clone()));
    let out_sizes: Vec<u32> = c
        .sizes
        .iter()
        .enumerate()
        .map(|(d, &s)| if c.axes.contains(&(d as u32)) { 1 } else { s })
        .collect();
    args.tensors
        .insert("output".into(), TensorDesc::new(c.output, out_sizes));
    args.attributes = BTreeMap::from([
        (
            "axes".to_string(),
            AttrValue::Ints(c.axes.iter().map(|&a| i128::from(a)).collect()),
        ),
        (
            "axis_direction".to_string(),
            AttrValue::Enum(c.direction.into()),
        ),
    ]);
    let info = ops::catalog().iter().find(|i| i.name == c.op).unwrap();
    (info.build)(&args).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz::cases(32), ..ProptestConfig::default() })]

    /// Valid descriptors over every table entry, level, data-type
    /// combination and rank, with ties, NaNs and signed zeros in the data:
    /// drawn by the strategies the specs generate.
    #[test]
    fn gpu_equals_cpu_for_every_table_entry(
        c in prop_oneof![ArgMinDesc::valid_cases(), ArgMaxDesc::valid_cases()]
    ) {
        let backend = |op: &dyn Operator, inputs: &[&HostTensor]| gpu().run(op, inputs);
        fuzz::check_valid(&c, Some(&backend)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn every_table_combination_runs_on_the_gpu() {
    // Deterministic sweep: each (level, input, output) triple once, both ops.
    let mut n = 0;
    for op in ["ArgMin", "ArgMax"] {
        for (level, inputs) in [
            (FeatureLevel::FL3_0, &IN_3_0[..]),
            (FeatureLevel::FL4_1, &IN_4_1[..]),
        ] {
            for &input in inputs {
                for output in OUT {
                    let c = Case {
                        op,
                        input,
                        output,
                        sizes: vec![3, 70],
                        axes: vec![1],
                        direction: "decreasing",
                    };
                    let op = build(&c);
                    op.validate(level).unwrap();
                    let x = tensor_with_edges(input, &c.sizes, &mut Rng::new(n));
                    let cpu = op.run_cpu(&[&x]).unwrap().remove(0);
                    assert_bitwise_eq(
                        &gpu().run(op.as_ref(), &[&x]).unwrap().remove(0),
                        &cpu,
                        &format!("{c:?}"),
                    );
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 2 * (8 + 10) * 4);
}

/// `Context::run` asks for the plans of its device class; a context set to
/// `DeviceClass::Hardware` runs the GPU-shaped plans (workgroup trees over
/// wide teams, wider column splits) on whatever adapter this is, and they
/// match the CPU reference bit for bit, like the software ones. The shapes
/// reach every hardware strategy: all axes in many chunks, rows of 64 and
/// of 1,000 vectors, outer and middle column axes.
#[test]
fn hardware_class_plans_match_the_cpu_reference() {
    let hw = ops_gpu::Context::new()
        .unwrap()
        .with_device_class(ops_core::DeviceClass::Hardware);
    assert_eq!(hw.device_class(), ops_core::DeviceClass::Hardware);
    let mut rng = Rng::new(0x4a7d_c1a5);
    let shapes: [(&[u32], &[u32]); 5] = [
        (&[64, 64, 64], &[0, 1, 2]),
        (&[96, 256], &[1]),
        (&[3, 4000], &[1]),
        (&[128, 4096], &[0]),
        (&[8, 64, 128], &[1]),
    ];
    let mut variants = std::collections::BTreeSet::new();
    for dtype in [DataType::Float32, DataType::Float16, DataType::Int64] {
        for (sizes, axes) in shapes {
            let input = tensor_with_edges(dtype, sizes, &mut rng);
            for max in [false, true] {
                let op: Box<dyn Operator> = if max {
                    Box::new(
                        ArgMaxDesc::builder()
                            .input(input.desc().clone())
                            .output_dtype(DataType::Int64)
                            .axes(axes.to_vec())
                            .axis_direction(argmax::AxisDirection::Decreasing)
                            .build()
                            .unwrap(),
                    )
                } else {
                    Box::new(
                        ArgMinDesc::builder()
                            .input(input.desc().clone())
                            .output_dtype(DataType::Uint32)
                            .axes(axes.to_vec())
                            .build()
                            .unwrap(),
                    )
                };
                let plan = op.gpu_plan_for(ops_core::DeviceClass::Hardware).unwrap();
                variants.extend(
                    plan.passes
                        .iter()
                        .map(|p| p.kernel.key.split('/').nth(1).unwrap()),
                );
                let want = op.run_cpu(&[&input]).unwrap();
                let got = hw.run(op.as_ref(), &[&input]).unwrap();
                assert_bitwise_eq(&got[0], &want[0], &format!("{op:?}"));
            }
        }
    }
    for v in [
        "reduce_split_lanes_tree",
        "reduce_split_columns",
        "reduce_combine",
    ] {
        assert!(variants.contains(v), "{variants:?}");
    }
}
