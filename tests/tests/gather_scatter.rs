//! GatherND1 and Scatter end to end: the seeds' examples on both backends,
//! the collision rule, negative and out-of-range indices, and validation of
//! the shape rules and the feature-level tables.

use ops::{GatherND1Desc, ScatterDesc};
use ops_core::{DataType, FeatureLevel, HostTensor, OpError, Operator, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu};

fn run_both(op: &dyn ops_core::Operator, inputs: &[&HostTensor]) -> HostTensor {
    let cpu = op.run_cpu(inputs).unwrap().remove(0);
    let g = gpu().run(op, inputs).unwrap().remove(0);
    assert_bitwise_eq(&g, &cpu, &format!("{op:?}"));
    cpu
}

fn gather(input: &HostTensor, indices: &HostTensor, ic: u32, xc: u32, b: u32) -> GatherND1Desc {
    GatherND1Desc::builder()
        .input(input.desc().clone())
        .indices(indices.desc().clone())
        .input_dimension_count(ic)
        .indices_dimension_count(xc)
        .batch_dimension_count(b)
        .build()
        .unwrap()
}

#[test]
fn gather_nd1_seed_examples() {
    let input = HostTensor::from_slice([2, 2], &[0f32, 1., 2., 3.]).unwrap();
    let indices = HostTensor::from_slice([2, 1], &[1u32, 0]).unwrap();
    let d = gather(&input, &indices, 2, 2, 0);
    d.validate(FeatureLevel::FL3_0).unwrap();
    let out = run_both(&d, &[&input, &indices]);
    assert_eq!(
        (out.sizes(), out.to_vec::<f32>().unwrap()),
        (&[2u32, 2][..], vec![2., 3., 0., 1.])
    );

    let input =
        HostTensor::from_slice([1, 3, 2, 2], &(0..12).map(|v| v as f32).collect::<Vec<_>>())
            .unwrap();
    let indices =
        HostTensor::from_slice([1, 3, 2, 2], &[0u32, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0]).unwrap();
    let d = gather(&input, &indices, 3, 3, 1);
    d.validate(FeatureLevel::FL3_0).unwrap();
    assert_eq!(d.output.sizes, [1, 1, 3, 2]);
    let out = run_both(&d, &[&input, &indices]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [0., 3., 7., 4., 9., 10.]);
}

#[test]
fn gather_nd1_output_shape_of_the_seed() {
    let d = GatherND1Desc::builder()
        .input(TensorDesc::new(DataType::Float32, [3, 4, 5, 6, 7]))
        .indices(TensorDesc::new(DataType::Uint32, [1, 1, 1, 2, 3]))
        .input_dimension_count(5)
        .indices_dimension_count(3)
        .build()
        .unwrap();
    d.validate(FeatureLevel::FL3_0).unwrap();
    assert_eq!(d.output.sizes, [1, 1, 2, 6, 7]);
}

#[test]
fn gather_nd1_negative_and_bad_indices() {
    let input = HostTensor::from_slice([2, 3], &[10i8, 11, 12, 20, 21, 22]).unwrap();
    let indices = HostTensor::from_slice([2, 2], &[-1i64, -3, 0, 2]).unwrap();
    let d = gather(&input, &indices, 2, 2, 0);
    assert_eq!(
        run_both(&d, &[&input, &indices]).to_vec::<i8>().unwrap(),
        [20, 12]
    );
    let bad = HostTensor::from_slice([2, 2], &[0i32, 1, 1, -4]).unwrap();
    let d = gather(&input, &bad, 2, 2, 0);
    for r in [d.run_cpu(&[&input, &bad]), gpu().run(&d, &[&input, &bad])] {
        match r {
            Err(OpError::IndexOutOfRange {
                tensor,
                position,
                value,
                low,
                high,
            }) => {
                assert_eq!(
                    (tensor.as_str(), position, value, low, high),
                    ("indices", vec![1, 1], -4, -3, 2)
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn gather_nd1_validation() {
    let base = || {
        GatherND1Desc::builder()
            .input(TensorDesc::new(DataType::Float32, [1, 4, 6]))
            .indices(TensorDesc::new(DataType::Int32, [1, 5, 2]))
            .input_dimension_count(2)
            .indices_dimension_count(2)
    };
    base()
        .build()
        .unwrap()
        .validate(FeatureLevel::FL3_0)
        .unwrap();
    // Inference may already fail in `build`; otherwise `validate` must.
    let rejected = |b: ops::gathernd1::GatherND1Builder| match b.build() {
        Ok(d) => d.validate(FeatureLevel::FL3_0).unwrap_err().to_string(),
        Err(e) => e.to_string(),
    };
    let e = rejected(
        base()
            .input_dimension_count(4)
            .output(TensorDesc::new(DataType::Float32, [1, 5, 6])),
    );
    assert!(
        e.contains("InputDimensionCount must be in the range [1, InputTensor.DimensionCount]")
            && e.contains("is 4"),
        "{e}"
    );
    let e = rejected(base().indices(TensorDesc::new(DataType::Int32, [1, 5, 3])));
    assert!(e.contains("coordinates per index tuple"), "{e}");
    let e = rejected(base().batch_dimension_count(2));
    assert!(
        e.contains("BatchDimensionCount must be in the range"),
        "{e}"
    );
    let e = rejected(base().input(TensorDesc::new(DataType::Float32, [2, 4, 6])));
    assert!(
        e.contains("InputTensor.Sizes must be 1 in the leading dimensions"),
        "{e}"
    );
    let d = base()
        .output(TensorDesc::new(DataType::Float16, [1, 1, 5]))
        .build()
        .unwrap();
    let e = d.validate(FeatureLevel::FL3_0).unwrap_err().to_string();
    assert!(
        e.contains("InputTensor and OutputTensor must have the same DataType"),
        "{e}"
    );
    let d = base()
        .indices(TensorDesc::new(DataType::Int16, [1, 5, 2]))
        .build()
        .unwrap();
    assert!(d
        .validate(FeatureLevel::FL3_0)
        .unwrap_err()
        .to_string()
        .contains("IndicesTensor.DataType must be one of INT64, INT32, UINT64, UINT32"));
    let e = base()
        .build()
        .unwrap()
        .validate(FeatureLevel::FL2_1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("GatherND1 was introduced in feature level 3.0"),
        "{e}"
    );
}

fn scatter(
    input: &HostTensor,
    indices: &HostTensor,
    updates: &HostTensor,
    axis: u32,
) -> ScatterDesc {
    ScatterDesc::builder()
        .input(input.desc().clone())
        .indices(indices.desc().clone())
        .updates(updates.desc().clone())
        .axis(axis)
        .build()
        .unwrap()
}

#[test]
fn scatter_seed_examples_and_last_write_wins() {
    let input = HostTensor::from_slice([5], &[0f32, 1., 2., 3., 4.]).unwrap();
    let indices = HostTensor::from_slice([4], &[3u32, 1, 3, 0]).unwrap();
    let updates = HostTensor::from_slice([4], &[5f32, 6., 7., 8.]).unwrap();
    let d = scatter(&input, &indices, &updates, 0);
    d.validate(FeatureLevel::FL3_0).unwrap();
    for _ in 0..20 {
        assert_eq!(
            run_both(&d, &[&input, &indices, &updates])
                .to_vec::<f32>()
                .unwrap(),
            [8., 6., 2., 7., 4.]
        );
    }
    let input = HostTensor::from_slice([3, 3], &[0f32; 9]).unwrap();
    let indices = HostTensor::from_slice([2, 3], &[1u32, 0, 2, 0, 2, 1]).unwrap();
    let updates = HostTensor::from_slice([2, 3], &[10f32, 11., 12., 20., 21., 22.]).unwrap();
    let d = scatter(&input, &indices, &updates, 0);
    d.validate(FeatureLevel::FL3_0).unwrap();
    let out = run_both(&d, &[&input, &indices, &updates]);
    assert_eq!(
        out.to_vec::<f32>().unwrap(),
        [20., 11., 0., 10., 0., 22., 0., 21., 12.]
    );
}

#[test]
fn scatter_float64_moves_raw_bits() {
    let payload = f64::from_bits(0x7FF8_0000_DEAD_BEEF);
    let input = HostTensor::from_slice([4], &[1f64, 2., 3., 4.]).unwrap();
    let indices = HostTensor::from_slice([3], &[-1i64, 0, 1]).unwrap();
    let updates = HostTensor::from_slice([3], &[payload, -0.0, f64::from_bits(1)]).unwrap();
    let d = scatter(&input, &indices, &updates, 0);
    d.validate(FeatureLevel::FL4_1).unwrap();
    assert!(
        d.validate(FeatureLevel::FL3_0).is_err(),
        "FLOAT64 needs 4.1"
    );
    let out = run_both(&d, &[&input, &indices, &updates])
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(
        out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        [(-0f64).to_bits(), 1, 3f64.to_bits(), 0x7FF8_0000_DEAD_BEEF]
    );
}

#[test]
fn scatter_levels_and_rules() {
    let four_d = |dt: DataType, it: DataType| {
        ScatterDesc::builder()
            .input(TensorDesc::new(dt, [2, 2, 2, 2]))
            .indices(TensorDesc::new(it, [2, 2, 1, 2]))
            .updates(TensorDesc::new(dt, [2, 2, 1, 2]))
            .axis(2)
            .build()
            .unwrap()
    };
    assert_eq!(
        four_d(DataType::Float16, DataType::Uint32).min_feature_level(),
        Some(FeatureLevel::FL1_0)
    );
    assert_eq!(
        four_d(DataType::Int8, DataType::Uint32).min_feature_level(),
        Some(FeatureLevel::FL2_1)
    );
    assert_eq!(
        four_d(DataType::Int8, DataType::Int32).min_feature_level(),
        Some(FeatureLevel::FL3_0)
    );
    assert_eq!(
        four_d(DataType::Uint64, DataType::Int64).min_feature_level(),
        Some(FeatureLevel::FL4_1)
    );
    let three_d = ScatterDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [2, 2, 2]))
        .indices(TensorDesc::new(DataType::Uint32, [2, 2, 2]))
        .updates(TensorDesc::new(DataType::Float32, [2, 2, 2]))
        .axis(0)
        .build()
        .unwrap();
    let e = three_d
        .validate(FeatureLevel::FL2_1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("InputTensor.DimensionCount must be 4 at feature level 2.1"),
        "{e}"
    );
    assert_eq!(three_d.min_feature_level(), Some(FeatureLevel::FL3_0));
    let bad = ScatterDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [2, 3]))
        .indices(TensorDesc::new(DataType::Uint32, [2, 2]))
        .updates(TensorDesc::new(DataType::Float32, [2, 2]))
        .axis(0)
        .build()
        .unwrap();
    let e = bad.validate(FeatureLevel::FL3_0).unwrap_err().to_string();
    assert!(
        e.contains("IndicesTensor.Sizes must match InputTensor.Sizes except in the Axis dimension")
            && e.contains("`indices.sizes[d]` is 2, `input.sizes[d]` is 3")
            && e.contains("for d = 1"),
        "{e}"
    );
    let e = ScatterDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [2, 3]))
        .indices(TensorDesc::new(DataType::Uint32, [2, 3]))
        .updates(TensorDesc::new(DataType::Float32, [2, 3]))
        .axis(2)
        .build()
        .unwrap()
        .validate(FeatureLevel::FL3_0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Axis must be in the range [0, InputTensor.DimensionCount)")
            && e.contains("is 2"),
        "{e}"
    );
    assert!(ops::catalog()
        .iter()
        .any(|i| i.answers_to("scatterelements")));
}

#[test]
fn scatter_bad_index_is_an_error_on_both_backends() {
    let input = HostTensor::from_slice([2, 3], &[0u16; 6]).unwrap();
    let indices = HostTensor::from_slice([2, 3], &[0i32, 1, 2, 3, 0, 1]).unwrap();
    let updates = HostTensor::from_slice([2, 3], &[1u16, 2, 3, 4, 5, 6]).unwrap();
    let d = scatter(&input, &indices, &updates, 1);
    for r in [
        d.run_cpu(&[&input, &indices, &updates]),
        gpu().run(&d, &[&input, &indices, &updates]),
    ] {
        match r {
            Err(OpError::IndexOutOfRange {
                tensor,
                position,
                value,
                low,
                high,
            }) => {
                assert_eq!(
                    (tensor.as_str(), position, value, low, high),
                    ("indices", vec![1, 0], 3, -3, 2)
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
