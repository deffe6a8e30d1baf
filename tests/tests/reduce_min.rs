//! ReduceMin-1 end to end: the seed's four shape examples, the decisions
//! its spec documents (NaN, signed zeros, empty dimensions), validation of
//! `axes`, and GPU == CPU bitwise over every data type.

use ops::ReduceMinDesc;
use ops_core::fuzz;
use ops_core::{DataType, FeatureLevel, HostTensor, OpError, Operator, TensorDesc};
use ops_tests::{assert_bitwise_eq, float_pairs, gpu, tensor_with_edges, Rng};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn desc(data: TensorDesc, axes: &[i64], keep_dims: bool) -> (ReduceMinDesc, HostTensor) {
    let axes = HostTensor::from_slice([axes.len() as u32], axes).unwrap();
    let d = ReduceMinDesc::builder()
        .data(data)
        .axes(axes.clone())
        .keep_dims(keep_dims)
        .build()
        .unwrap();
    (d, axes)
}

fn run_both(d: &ReduceMinDesc, data: &HostTensor, axes: &HostTensor) -> HostTensor {
    let cpu = d.run_cpu(&[data, axes]).unwrap().remove(0);
    let g = gpu().run(d, &[data, axes]).unwrap().remove(0);
    assert_bitwise_eq(&g, &cpu, &format!("{d:?}"));
    cpu
}

#[test]
fn seed_shape_examples() {
    let data = TensorDesc::new(DataType::Float32, [6, 12, 10, 24]);
    let cases: [(&[i64], bool, &[u32]); 4] = [
        (&[2, 3], true, &[6, 12, 1, 1]),
        (&[2, 3], false, &[6, 12]),
        (&[1], false, &[6, 10, 24]),
        (&[-2], false, &[6, 12, 24]),
    ];
    for (axes, keep, want) in cases {
        let (d, a) = desc(data.clone(), axes, keep);
        d.validate(FeatureLevel::HIGHEST).unwrap();
        assert_eq!(d.output.sizes, want, "axes {axes:?} keep_dims {keep}");
        assert_eq!(d.output.dtype, DataType::Float32);
        let x = tensor_with_edges(DataType::Float32, &data.sizes, &mut Rng::new(7));
        let out = run_both(&d, &x, &a);
        assert_eq!(out.sizes(), want);
    }
}

#[test]
fn float_pairs_reduce_as_the_cpu_reference() {
    for (rows, columns) in float_pairs() {
        for (input, axis) in [(&rows, 1), (&columns, 0)] {
            let (d, a) = desc(input.desc().clone(), &[axis], false);
            let out = run_both(&d, input, &a);
            assert_eq!(out.sizes(), &input.sizes()[1 - axis as usize..][..1]);
        }
    }
}

#[test]
fn values_empty_axes_and_all_axes() {
    let x = HostTensor::from_slice([2, 3], &[5i16, -2, 7, 3, 9, -8]).unwrap();
    let (d, a) = desc(x.desc().clone(), &[1], false);
    assert_eq!(run_both(&d, &x, &a).to_vec::<i16>().unwrap(), [-2, -8]);
    let (d, a) = desc(x.desc().clone(), &[], false);
    assert_eq!(run_both(&d, &x, &a), x, "empty axes is the identity");
    let (d, a) = desc(x.desc().clone(), &[-1, 0], true);
    let out = run_both(&d, &x, &a);
    assert_eq!(
        (out.sizes(), out.to_vec::<i16>().unwrap()),
        (&[1u32, 1][..], vec![-8])
    );
    // A scalar axes tensor.
    let axes = HostTensor::from_slice(Vec::<u32>::new(), &[0u8]).unwrap();
    let d = ReduceMinDesc::builder()
        .data(x.desc().clone())
        .axes(axes.clone())
        .build()
        .unwrap();
    d.validate(FeatureLevel::HIGHEST).unwrap();
    assert_eq!(
        run_both(&d, &x, &axes).to_vec::<i16>().unwrap(),
        [3, -2, -8]
    );
}

#[test]
fn nan_propagates_and_negative_zero_is_the_minimum() {
    let nan = f32::from_bits(0x7FC0_1234);
    let x = HostTensor::from_slice([2, 3], &[1f32, nan, -5.0, 0.0, -0.0, 0.0]).unwrap();
    let (d, a) = desc(x.desc().clone(), &[1], false);
    let out = run_both(&d, &x, &a).to_vec::<f32>().unwrap();
    assert_eq!(out[0].to_bits(), 0x7FC0_1234, "the NaN's own bits");
    assert_eq!(out[1].to_bits(), 0x8000_0000, "min(+0, -0, +0) is -0");
    let x = HostTensor::from_slice([2], &[0f64, -0.0]).unwrap();
    let (d, a) = desc(x.desc().clone(), &[0], false);
    assert_eq!(
        run_both(&d, &x, &a).to_vec::<f64>().unwrap()[0].to_bits(),
        (-0f64).to_bits()
    );
}

#[test]
fn reducing_an_empty_dimension_is_an_error() {
    let x = HostTensor::from_slice([2, 0], &[] as &[f32]).unwrap();
    let (d, a) = desc(x.desc().clone(), &[1], false);
    assert!(
        matches!(d.run_cpu(&[&x, &a]), Err(OpError::InvalidArgument(m)) if m.contains("empty dimension"))
    );
    assert!(
        matches!(gpu().run(&d, &[&x, &a]), Err(OpError::InvalidArgument(m)) if m.contains("empty dimension"))
    );
    // Keeping the empty dimension gives an empty output.
    let (d, a) = desc(x.desc().clone(), &[0], true);
    let out = run_both(&d, &x, &a);
    assert_eq!((out.sizes(), out.len()), (&[1u32, 0][..], 0));
}

#[test]
fn axes_rules() {
    let data = TensorDesc::new(DataType::Int8, [2, 3, 4]);
    let (d, _) = desc(data.clone(), &[3], false);
    let e = d.validate(FeatureLevel::HIGHEST).unwrap_err().to_string();
    assert!(
        e.contains("axes values must be in the range [-r, r-1]")
            && e.contains("3")
            && e.contains("(for i = 0)"),
        "{e}"
    );
    let (d, _) = desc(data.clone(), &[-4], false);
    assert!(d.validate(FeatureLevel::HIGHEST).is_err());
    let (d, _) = desc(data.clone(), &[1, -2], false);
    let e = d.validate(FeatureLevel::HIGHEST).unwrap_err().to_string();
    assert!(
        e.contains("axes values must be unique") && e.contains("[1, 1]"),
        "{e}"
    );
    let axes = HostTensor::from_slice([1, 1], &[0i32]).unwrap();
    let d = ReduceMinDesc::builder()
        .data(data.clone())
        .axes(axes)
        .build()
        .unwrap();
    let e = d.validate(FeatureLevel::HIGHEST).unwrap_err().to_string();
    assert!(
        e.contains("axes must be a scalar or a 1-D tensor") && e.contains("is 2"),
        "{e}"
    );
    assert_eq!(
        d.min_feature_level(),
        None,
        "ReduceMin has no feature levels"
    );
    // Floating-point axes are read truncated, as `cast<INT64>` converts
    // (`ops_core::args::host_values`), and the table lists integer axes
    // only: validation refuses them, whatever the output.
    let axes = HostTensor::from_slice([1], &[0f32]).unwrap();
    let d = ReduceMinDesc::builder()
        .data(data.clone())
        .axes(axes)
        .output(data)
        .build()
        .unwrap();
    assert!(d.validate(FeatureLevel::HIGHEST).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz::cases(32), ..ProptestConfig::default() })]

    /// Every data type, ranks 0 to 8, `axes` of every integer type (scalar
    /// or 1-D, negative values for signed types), with and without
    /// `keep_dims`: drawn by the strategy the spec generates.
    #[test]
    fn gpu_equals_cpu_for_every_data_type(c in ReduceMinDesc::valid_cases()) {
        prop_assert_eq!(c.op.min_feature_level(), None, "ReduceMin has no feature levels");
        let backend = |op: &dyn Operator, inputs: &[&HostTensor]| gpu().run(op, inputs);
        fuzz::check_valid(&c, Some(&backend)).map_err(TestCaseError::fail)?;
    }
}
