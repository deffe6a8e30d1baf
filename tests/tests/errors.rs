//! Nothing a user feeds in makes an operator panic: mismatched inputs,
//! wrong sizes, huge sizes, element counts past `u32` and `u64`, absurd
//! attribute values. Each is an error of the documented class from the
//! public API — the builders, `OperatorInfo::build`, `validate`, the CPU
//! reference, `gpu_plan` and the GPU runtime.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ops::{ArgMinDesc, GatherND1Desc, ReduceMinDesc, ScatterDesc};
use ops_core::{
    AttrKind, AttrValue, DataType, FeatureLevel, HostTensor, OpArgs, OpError, Operator,
    OperatorInfo, TensorDesc,
};
use ops_tests::gpu;

/// The levels every operator is validated at.
const LEVELS: [FeatureLevel; 3] = [
    FeatureLevel::FL1_0,
    FeatureLevel::FL3_0,
    FeatureLevel::HIGHEST,
];

fn info(name: &str) -> &'static OperatorInfo {
    ops::catalog()
        .iter()
        .copied()
        .find(|i| i.answers_to(name))
        .unwrap_or_else(|| panic!("no operator {name}"))
}

/// Zero-filled inputs matching `op`, when they are small enough to make.
fn inputs_of(op: &dyn Operator) -> Option<Vec<HostTensor>> {
    op.input_descs()
        .into_iter()
        .map(|d| {
            let small = d.byte_size().is_some_and(|b| b <= 1 << 20);
            small.then(|| HostTensor::zeros(d).unwrap())
        })
        .collect()
}

/// Exercises every entry point of `op` (with `host` standing for its host
/// tensors), asserting that none panics; returns the CPU and GPU results
/// when inputs could be made.
#[allow(clippy::type_complexity)]
fn exercise(
    op: &dyn Operator,
) -> Option<(
    Result<Vec<HostTensor>, OpError>,
    Result<Vec<HostTensor>, OpError>,
)> {
    let what = format!("{op:?}");
    catch_unwind(AssertUnwindSafe(|| {
        for level in LEVELS {
            let _ = op.validate(level);
        }
        let _ = op.min_feature_level();
        let _ = op.gpu_plan();
        let inputs = inputs_of(op)?;
        let refs: Vec<&HostTensor> = inputs.iter().collect();
        for check in 0..3 {
            for position in [0, 1, u64::from(u32::MAX), u64::MAX] {
                let _ = op.index_error(&refs, check, position);
                let _ = op.index_error(&[], check, position);
            }
        }
        let _ = op.run_cpu(&[]);
        let _ = gpu().run(op, &[]);
        Some((op.run_cpu(&refs), gpu().run(op, &refs)))
    }))
    .unwrap_or_else(|_| panic!("{what} panicked"))
}

fn invalid_argument<T: std::fmt::Debug>(r: Result<T, OpError>) -> String {
    match r {
        Err(OpError::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

fn too_large<T: std::fmt::Debug>(r: Result<T, OpError>) -> (String, String) {
    match r {
        Err(OpError::TooLarge { what, limit }) => (what, limit),
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

fn argmin(input: TensorDesc, axes: &[u32]) -> ArgMinDesc {
    ArgMinDesc::builder()
        .input(input)
        .output_dtype(DataType::Uint32)
        .axes(axes.to_vec())
        .build()
        .unwrap()
}

#[test]
fn mismatched_inputs_are_invalid_arguments() {
    let x = HostTensor::from_slice([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let d = argmin(x.desc().clone(), &[1]);
    let y = HostTensor::from_slice([3, 2], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let z = HostTensor::from_slice([2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
    for inputs in [vec![], vec![&x, &x], vec![&y], vec![&z]] {
        let cpu = invalid_argument(d.run_cpu(&inputs));
        let gpu = invalid_argument(gpu().run(&d, &inputs));
        assert!(
            cpu.contains("ArgMin") && gpu.contains("ArgMin"),
            "{cpu} / {gpu}"
        );
    }
    // Scatter with its three inputs in the wrong order.
    let input = HostTensor::from_slice([2, 2], &[0f32; 4]).unwrap();
    let idx = HostTensor::from_slice([2, 2], &[0u32, 1, 1, 0]).unwrap();
    let d = ScatterDesc::builder()
        .input(input.desc().clone())
        .indices(idx.desc().clone())
        .updates(input.desc().clone())
        .axis(0)
        .build()
        .unwrap();
    invalid_argument(d.run_cpu(&[&input, &input, &idx]));
    invalid_argument(gpu().run(&d, &[&input, &input, &idx]));
    // Bytes that do not match the description.
    invalid_argument(HostTensor::from_bytes(
        TensorDesc::new(DataType::Float64, [3]),
        vec![0; 23],
    ));
}

#[test]
fn absurd_attributes_are_errors() {
    let x = TensorDesc::new(DataType::Float32, [2, 3]);
    // Axis 4e9 fits the u32 attribute; validate names the rule, the
    // backends refuse it.
    let d = argmin(x.clone(), &[4_000_000_000]);
    let e = d.validate(FeatureLevel::HIGHEST).unwrap_err();
    assert!(e.rule.contains("Axes values must be in the range"), "{e}");
    assert!(e.detail.contains("4000000000"), "{e}");
    // The backends check the rules too: the same error, not a panic.
    let (cpu, gpu) = exercise(&d).unwrap();
    assert_eq!(cpu, Err(OpError::Validation(e.clone())));
    assert_eq!(gpu, Err(OpError::Validation(e)));
    // Duplicated axes, and more axes than dimensions.
    for axes in [&[1u32, 1][..], &[0, 1, 0, 1, 0, 1, 0, 1, 0]] {
        let d = argmin(x.clone(), axes);
        let e = d.validate(FeatureLevel::HIGHEST).unwrap_err();
        let (cpu, gpu) = exercise(&d).unwrap();
        assert_eq!(cpu, Err(OpError::Validation(e.clone())));
        assert_eq!(gpu, Err(OpError::Validation(e)));
    }
    // Scatter's axis and GatherND1's counts at u32::MAX.
    let s = ScatterDesc::builder()
        .input(x.clone())
        .indices(TensorDesc::new(DataType::Uint32, [2, 3]))
        .updates(x.clone())
        .axis(u32::MAX)
        .build()
        .unwrap();
    let e = s.validate(FeatureLevel::HIGHEST).unwrap_err();
    assert!(e.rule.contains("Axis must be in the range"), "{e}");
    let (cpu, gpu) = exercise(&s).unwrap();
    assert_eq!(cpu, Err(OpError::Validation(e.clone())));
    assert_eq!(gpu, Err(OpError::Validation(e)));
    for (ic, xc, b) in [
        (u32::MAX, 2, 0),
        (2, u32::MAX, 0),
        (2, 2, u32::MAX),
        (0, 0, 0),
    ] {
        let g = GatherND1Desc::builder()
            .input(x.clone())
            .indices(TensorDesc::new(DataType::Int64, [2, 1]))
            .input_dimension_count(ic)
            .indices_dimension_count(xc)
            .batch_dimension_count(b)
            .build();
        // Without a valid geometry the output cannot be inferred: the
        // builder may refuse, or leave an output that validate rejects.
        if let Ok(g) = g {
            assert!(g.validate(FeatureLevel::HIGHEST).is_err(), "{g:?}");
            let _ = exercise(&g);
        }
    }
    // ReduceMin's host-read axes at the ends of INT64.
    let axes = HostTensor::from_slice([3], &[i64::MIN, i64::MAX, -1]).unwrap();
    let r = ReduceMinDesc::builder().data(x.clone()).axes(axes).build();
    if let Ok(r) = r {
        let e = r.validate(FeatureLevel::HIGHEST).unwrap_err().to_string();
        assert!(
            e.contains("axes values must be in the range [-r, r-1]"),
            "{e}"
        );
        let _ = exercise(&r);
    }
}

/// Every operator of the catalog built from dynamic arguments with absurd
/// values in each attribute (and the wrong kind of value): `build` gives an
/// error or a descriptor whose every entry point returns.
#[test]
fn absurd_dynamic_arguments_never_panic() {
    let absurd = [
        AttrValue::Int(4_000_000_000),
        AttrValue::Int(-1),
        AttrValue::Int(i128::MAX),
        AttrValue::Int(i128::MIN),
        AttrValue::Ints(vec![u32::MAX.into(); 3]),
        AttrValue::Ints(vec![-(1 << 40), 1 << 40]),
        AttrValue::Ints(vec![]),
        AttrValue::Bool(true),
        AttrValue::Enum("SIDEWAYS".into()),
    ];
    for info in ops::catalog() {
        for attr in info.attrs {
            for value in &absurd {
                let mut args = plausible_args(info);
                args.attributes.insert(attr.name.to_string(), value.clone());
                let what = format!("{} {} = {value:?}", info.name, attr.name);
                let built = catch_unwind(AssertUnwindSafe(|| (info.build)(&args)))
                    .unwrap_or_else(|_| panic!("{what}: build panicked"));
                match built {
                    Ok(op) => {
                        let _ = exercise(op.as_ref());
                    }
                    Err(OpError::InvalidArgument(m)) => {
                        assert!(
                            m.contains(attr.name) || m.contains(info.name),
                            "{what}: {m}"
                        )
                    }
                    Err(OpError::Validation(_)) => {}
                    Err(e) => panic!("{what}: unexpected {e:?}"),
                }
            }
        }
    }
}

/// Valid-looking dynamic arguments of `info`: FLOAT32 data of sizes [2, 3]
/// (host tensors: one INT64 value 0; outputs the caller describes alike), UINT32 indices, integer attributes 1,
/// lists [1], enums their first member.
fn plausible_args(info: &OperatorInfo) -> OpArgs {
    let mut tensors = BTreeMap::new();
    let mut host_data = BTreeMap::new();
    for (i, t) in info.tensors.iter().enumerate() {
        if t.output && !info.is_given(i) {
            continue;
        }
        if t.host {
            host_data.insert(
                t.name.to_string(),
                HostTensor::from_slice([1], &[0i64]).unwrap(),
            );
        } else {
            let dtype = if t.name.contains("ind") {
                DataType::Uint32
            } else {
                DataType::Float32
            };
            tensors.insert(t.name.to_string(), TensorDesc::new(dtype, [2, 3]));
        }
    }
    let attributes = info
        .attrs
        .iter()
        .map(|a| {
            let v = match a.kind {
                AttrKind::Int { .. } => AttrValue::Int(1),
                AttrKind::List { .. } => AttrValue::Ints(vec![1]),
                AttrKind::Bool => AttrValue::Bool(false),
                AttrKind::Float => AttrValue::Float(1.0),
                AttrKind::Number => AttrValue::Int(1),
                AttrKind::Enum(members) => AttrValue::Enum(members[0].to_string()),
            };
            (a.name.to_string(), v)
        })
        .collect();
    // The index outputs of ArgMin/ArgMax have no data-type rule.
    let output_dtypes = info
        .tensors
        .iter()
        .filter(|t| t.output && info.name.starts_with("Arg"))
        .map(|t| (t.name.to_string(), DataType::Uint32))
        .collect();
    OpArgs {
        tensors,
        output_dtypes,
        host_data,
        attributes,
    }
}

/// Tensors whose element counts pass `u32` or overflow `u64`: descriptors
/// can describe them, nothing can run them, and every refusal is an error.
#[test]
fn huge_sizes_are_too_large() {
    // 2^33 elements: the plan refuses u32 word addressing.
    let d = argmin(
        TensorDesc::new(DataType::Float32, [1 << 16, 1 << 16, 2]),
        &[2],
    );
    d.validate(FeatureLevel::HIGHEST).unwrap();
    let (_, limit) = too_large(d.gpu_plan());
    assert!(limit.contains("u32"), "{limit}");
    // The element count overflows u64: the descriptor still validates
    // (the seed sets no size limit); nothing can hold such a tensor.
    let huge = TensorDesc::new(DataType::Uint64, [u32::MAX; 4]);
    assert_eq!(huge.element_count(), None);
    let d = argmin(huge.clone(), &[0]);
    let _ = exercise(&d);
    too_large(d.gpu_plan());
    too_large(HostTensor::zeros(huge.clone()));
    too_large(HostTensor::from_bytes(huge.clone(), vec![]));
    let g = GatherND1Desc::builder()
        .input(TensorDesc::new(DataType::Float32, [u32::MAX; 4]))
        .indices(TensorDesc::new(DataType::Uint32, [1, 1, 1, 4]))
        .input_dimension_count(4)
        .indices_dimension_count(4)
        .build()
        .unwrap();
    let _ = exercise(&g);
    too_large(g.gpu_plan());
    // A scatter whose output would not fit u32 elements.
    let big = TensorDesc::new(DataType::Uint8, [1 << 16, 1 << 16, 2]);
    let s = ScatterDesc::builder()
        .input(big.clone())
        .indices(TensorDesc::new(DataType::Uint32, [1, 1 << 16, 2]))
        .updates(TensorDesc::new(DataType::Uint8, [1, 1 << 16, 2]))
        .axis(0)
        .build()
        .unwrap();
    s.validate(FeatureLevel::HIGHEST).unwrap();
    too_large(s.gpu_plan());
    // The GPU runtime refuses such plans before allocating anything.
    let plan = ScatterDesc::builder()
        .input(TensorDesc::new(DataType::Uint8, [4, 2]))
        .indices(TensorDesc::new(DataType::Uint32, [1, 2]))
        .updates(TensorDesc::new(DataType::Uint8, [1, 2]))
        .axis(0)
        .build()
        .unwrap()
        .gpu_plan()
        .unwrap();
    let input = HostTensor::zeros(TensorDesc::new(DataType::Uint8, [4, 2])).unwrap();
    let idx = HostTensor::zeros(TensorDesc::new(DataType::Uint32, [1, 2])).unwrap();
    match gpu().execute(&plan, &[&input, &idx, &input], &[huge]) {
        Err(ops_gpu::ExecError::Op(OpError::TooLarge { .. }))
        | Err(ops_gpu::ExecError::Op(OpError::InvalidArgument(_))) => {}
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Index errors carry the tensor, the element's coordinates, the value and
/// the bounds, from both backends, whatever the index type's extremes.
#[test]
fn index_errors_name_tensor_position_value_and_bounds() {
    let x = HostTensor::from_slice([2, 3], &[1u16, 2, 3, 4, 5, 6]).unwrap();
    for (idx, value, low) in [
        (
            HostTensor::from_slice([2, 1], &[0i64, i64::MIN]).unwrap(),
            i128::from(i64::MIN),
            -2,
        ),
        (
            HostTensor::from_slice([2, 1], &[1u64, u64::MAX]).unwrap(),
            i128::from(u64::MAX),
            0,
        ),
        (
            HostTensor::from_slice([2, 1], &[-1i32, i32::MAX]).unwrap(),
            i128::from(i32::MAX),
            -2,
        ),
    ] {
        let d = GatherND1Desc::builder()
            .input(x.desc().clone())
            .indices(idx.desc().clone())
            .input_dimension_count(2)
            .indices_dimension_count(2)
            .build()
            .unwrap();
        let want = OpError::IndexOutOfRange {
            tensor: "indices".into(),
            position: vec![1, 0],
            value,
            low,
            high: 1,
        };
        assert_eq!(d.run_cpu(&[&x, &idx]).unwrap_err(), want);
        assert_eq!(gpu().run(&d, &[&x, &idx]).unwrap_err(), want);
    }
}

/// A data type outside an operator's tables is a validation error at every
/// level; the GPU, which has no kernel for it, says it is unsupported, while
/// the CPU reference (which moves any type) still runs it. A level below
/// the one that introduced a data type is a validation error naming it.
#[test]
fn unsupported_data_types_and_levels() {
    let x = HostTensor::from_slice([2, 2], &[1.5f64, -0.0, 2.0, f64::NAN]).unwrap();
    let d = argmin(x.desc().clone(), &[1]);
    for level in LEVELS {
        assert!(d.validate(level).is_err());
    }
    assert_eq!(d.min_feature_level(), None);
    assert_eq!(
        d.run_cpu(&[&x]).unwrap()[0].to_vec::<u32>().unwrap(),
        [1, 1]
    );
    match gpu().run(&d, &[&x]) {
        Err(OpError::Unsupported(m)) => assert!(m.contains("FLOAT64"), "{m}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let s = ScatterDesc::builder()
        .input(TensorDesc::new(DataType::Float64, [2, 2]))
        .indices(TensorDesc::new(DataType::Int64, [2, 2]))
        .updates(TensorDesc::new(DataType::Float64, [2, 2]))
        .axis(1)
        .build()
        .unwrap();
    // FLOAT64 arrived at 4.1.
    let e = s.validate(FeatureLevel::FL3_0).unwrap_err();
    assert_eq!(e.operator, "Scatter");
    assert!(e.to_string().contains("FLOAT64"), "{e}");
    s.validate(FeatureLevel::FL4_1).unwrap();
    assert_eq!(s.min_feature_level(), Some(FeatureLevel::FL4_1));
    assert!(std::ptr::eq(info("ScatterElements"), info("Scatter")));
}

/// ReduceMin of FLOAT32 `[2, 3]` data over the INT64 `axes` given, and the
/// axes tensor.
fn reduce_min_2x3(axes: &[i64]) -> (ReduceMinDesc, HostTensor) {
    let axes = HostTensor::from_slice([axes.len() as u32], axes).unwrap();
    let d = ReduceMinDesc::builder()
        .data(TensorDesc::new(DataType::Float32, [2, 3]))
        .axes(axes.clone())
        .build()
        .unwrap();
    (d, axes)
}

/// A host-read input given at run time must hold the values the descriptor
/// was built from: ReduceMin built with axes `[0]` and run with `[1]` is an
/// error naming `axes` on both backends, not the axis-0 answer.
#[test]
fn host_inputs_must_match_the_descriptor() {
    let x = HostTensor::from_slice([2, 3], &[5f32, 1., 3., 0., 4., 2.]).unwrap();
    let (d, axes0) = reduce_min_2x3(&[0]);
    let (_, axes1) = reduce_min_2x3(&[1]);
    let on_cpu = invalid_argument(d.run_cpu(&[&x, &axes1]));
    let on_gpu = invalid_argument(gpu().run(&d, &[&x, &axes1]));
    assert!(
        on_cpu.contains("ReduceMin") && on_cpu.contains("`axes`"),
        "{on_cpu}"
    );
    assert_eq!(on_cpu, on_gpu);
    // The values the descriptor holds run.
    let want = HostTensor::from_slice([3], &[0f32, 1., 2.]).unwrap();
    assert_eq!(d.run_cpu(&[&x, &axes0]).unwrap()[0], want);
    assert_eq!(gpu().run(&d, &[&x, &axes0]).unwrap()[0], want);
}

/// Both backends phrase the same mistake alike: the input count (singular
/// and plural), an input that does not match its description, a host
/// input that does not hold the descriptor's values, and an output too
/// large to address.
#[test]
fn both_backends_phrase_the_same_mistake_alike() {
    fn same(op: &dyn Operator, inputs: &[&HostTensor]) -> String {
        let cpu = op.run_cpu(inputs).unwrap_err().to_string();
        let gpu = gpu().run(op, inputs).unwrap_err().to_string();
        assert_eq!(cpu, gpu, "{op:?}");
        cpu
    }
    let x = HostTensor::from_slice([2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let d = argmin(x.desc().clone(), &[1]);
    assert_eq!(
        same(&d, &[]),
        "invalid argument: ArgMin takes 1 input (`input`), got 0"
    );
    assert_eq!(
        same(&d, &[&x, &x]),
        "invalid argument: ArgMin takes 1 input (`input`), got 2"
    );
    let y = HostTensor::from_slice([3, 2], &[1i32, 2, 3, 4, 5, 6]).unwrap();
    let m = same(&d, &[&y]);
    assert!(m.contains("`input`") && m.contains("INT32"), "{m}");
    let s = ScatterDesc::builder()
        .input(x.desc().clone())
        .indices(TensorDesc::new(DataType::Uint32, [2, 3]))
        .updates(x.desc().clone())
        .axis(0)
        .build()
        .unwrap();
    assert_eq!(
        same(&s, &[&x]),
        "invalid argument: Scatter takes 3 inputs (`input`, `indices`, `updates`), got 1"
    );
    let (r, _) = reduce_min_2x3(&[0]);
    let (_, axes1) = reduce_min_2x3(&[1]);
    let m = same(&r, &[&x, &axes1]);
    assert!(m.contains("`axes`"), "{m}");
    // 2^33 output elements gathered from 4 MiB.
    let input = HostTensor::zeros(TensorDesc::new(DataType::Float32, [1, 1 << 20])).unwrap();
    let idx = HostTensor::zeros(TensorDesc::new(DataType::Uint32, [1 << 13, 1])).unwrap();
    let g = GatherND1Desc::builder()
        .input(input.desc().clone())
        .indices(idx.desc().clone())
        .input_dimension_count(2)
        .indices_dimension_count(2)
        .build()
        .unwrap();
    let m = same(&g, &[&input, &idx]);
    assert!(m.starts_with("too large: "), "{m}");
}

/// Rule evaluation is linear in what it reads: a ReduceMin whose `axes`
/// holds a million values, and one whose `data` has a million dimensions,
/// are refused at once (the time is printed, not asserted).
#[test]
fn huge_host_tensors_and_ranks_are_refused_quickly() {
    let n = 1_000_000u32;
    let data = TensorDesc::new(DataType::Float32, [2, 3]);
    // All in range but not unique: every value is read.
    let zeros = HostTensor::from_slice([n], &vec![0i64; n as usize]).unwrap();
    // Out of range from the third value on.
    let counting: Vec<i64> = (0..i64::from(n)).collect();
    let counting = HostTensor::from_slice([n], &counting).unwrap();
    let high_rank = TensorDesc::new(DataType::Float32, vec![1; n as usize]);
    for (what, data, axes, rule) in [
        ("1M zero axes", &data, &zeros, "axes values must be unique"),
        (
            "1M counting axes",
            &data,
            &counting,
            "axes values must be in the range",
        ),
        (
            "1M counting axes, rank 1M",
            &high_rank,
            &counting,
            "DimensionCount",
        ),
    ] {
        let start = std::time::Instant::now();
        let built = ReduceMinDesc::builder()
            .data(data.clone())
            .axes(axes.clone())
            .build();
        let e = match built {
            Ok(d) => d.validate(FeatureLevel::HIGHEST).unwrap_err(),
            Err(e) => panic!("{what}: build failed: {e}"),
        };
        println!("{what}: refused in {:?}: {e:.200}", start.elapsed());
        assert!(e.rule.contains(rule), "{what}: {e:.500}");
    }
}

/// Rules that iterate over a list inside an iteration over another (ONNX
/// Unsqueeze's output shape: for each output dimension, whether `axes`
/// holds it) stop after `RULE_STEPS` steps: 200,000 and 2,000,000 axes are
/// refused naming the list, where the quadratic evaluation took 21 s (and
/// would take hours in a debug build) before the rank limit refused them.
#[test]
fn quadratic_rules_over_huge_lists_are_refused() {
    let data = TensorDesc::new(DataType::Float32, [2, 3]);
    for n in [200_000i64, 2_000_000] {
        let axes: Vec<i64> = (0..n).collect();
        let axes = HostTensor::from_slice([n as u32], &axes).unwrap();
        let e = match ops::onnx::UnsqueezeDesc::builder()
            .data(data.clone())
            .axes(axes)
            .build()
        {
            Ok(d) => d.validate(FeatureLevel::HIGHEST).unwrap_err(),
            Err(OpError::Validation(e)) => e,
            Err(e) => panic!("{n} axes: {e}"),
        };
        let steps = ops_core::expr::RULE_STEPS;
        assert!(
            e.detail.starts_with(&format!(
                "evaluating the rules takes more than {steps} steps"
            )),
            "{n} axes: {e:.500}"
        );
        assert!(
            e.detail
                .contains(&format!("(`values(axes)` holds {n} values)")),
            "{e:.500}"
        );
    }
}

/// An output the caller describes (DirectML SPLIT's `OutputTensors`) has no
/// inference to fall back on: leaving it out is an error naming it.
#[test]
fn a_given_output_left_out_is_an_error_naming_it() {
    for info in ops::catalog() {
        let Some(given) = (0..info.tensors.len()).find(|&t| info.is_given(t)) else {
            continue;
        };
        let mut args = plausible_args(info);
        args.tensors.remove(info.tensors[given].name);
        let m = invalid_argument((info.build)(&args));
        assert!(
            m.contains(&format!("`{}` is required", info.tensors[given].name))
                && m.contains("the caller describes its sizes"),
            "{}: {m}",
            info.instance_name()
        );
    }
}
