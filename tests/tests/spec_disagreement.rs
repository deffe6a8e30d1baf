//! A spec whose shape rule disagrees with its pattern fuzzes red (issue 18,
//! item 4): a descriptor that validates must run on both backends and
//! agree, unless the error is one the specs document for valid descriptors
//! (an index out of range, reducing an empty dimension, too large).

use std::sync::Arc;

use ops::{ArgMinDesc, DataType, FeatureLevel, GatherND1Desc, HostTensor, OpError, TensorDesc};
use ops_core::fuzz::{self, Outcome, ValidCase};
use ops_core::{OpArgs, Operator, OperatorType};
use ops_tests::gpu;
use proptest::test_runner::{TestCaseError, TestRunner};

ops_macros::operator!("../specs/gather_wrong_shape.op");

fn gpu_run(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    gpu().run(op, inputs)
}

fn case(op: Arc<dyn Operator>, inputs: Vec<HostTensor>, expect_index_error: bool) -> ValidCase {
    let level = op.min_feature_level().unwrap_or(FeatureLevel::HIGHEST);
    ValidCase {
        info: op.info(),
        level,
        args: OpArgs::default(),
        op,
        inputs,
        expect_index_error,
        hostile: false,
    }
}

fn gather_inputs(indices: &[u32]) -> Vec<HostTensor> {
    vec![
        HostTensor::from_slice([4, 2], &[1f32, 2., 3., 4., 5., 6., 7., 8.]).unwrap(),
        HostTensor::from_slice([2, 1], indices).unwrap(),
    ]
}

#[test]
fn a_shape_rule_that_disagrees_with_the_pattern_fails() {
    let d = GatherWrongShapeDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [4, 2]))
        .indices(TensorDesc::new(DataType::Uint32, [2, 1]))
        .input_dimension_count(2)
        .indices_dimension_count(2)
        .build()
        .unwrap();
    // The spec's shape rule sizes the output as the input; the gather
    // yields 2 tuples of 2 elements.
    assert_eq!(d.output_descs()[0].sizes, vec![4, 2]);
    d.validate(FeatureLevel::FL3_0).unwrap();
    let c = case(Arc::new(d), gather_inputs(&[0, 3]), false);
    // Both backends fail alike: what used to pass as "the same error".
    let cpu = c.op.run_cpu(&c.input_refs());
    let on_gpu = gpu_run(c.op.as_ref(), &c.input_refs());
    assert!(matches!(cpu, Err(OpError::InvalidArgument(_))), "{cpu:?}");
    assert_eq!(cpu, on_gpu);
    for backend in [None, Some(&gpu_run as fuzz::Backend<'_>)] {
        let e = fuzz::check_valid(&c, backend).unwrap_err();
        assert!(e.contains("the spec does not document"), "{e}");
    }
    // The generated strategies find it too, and so does the check the
    // catalog's generated test runs.
    let info = <GatherWrongShapeDesc as OperatorType>::INFO;
    let r = TestRunner::new(fuzz::config(32, None)).run(&fuzz::valid_cases(info), |c| {
        fuzz::check_valid(&c, None)
            .map(|_| ())
            .map_err(TestCaseError::fail)
    });
    let e = r.unwrap_err().to_string();
    assert!(e.contains("the spec does not document"), "{e}");
    let e = fuzz::check_spec(info, 16).unwrap_err();
    assert!(e.contains("GatherWrongShape"), "{e}");
}

#[test]
fn documented_errors_of_valid_descriptors_still_pass() {
    // An index out of range: the same `IndexOutOfRange` from both backends.
    let d = GatherND1Desc::builder()
        .input(TensorDesc::new(DataType::Float32, [4, 2]))
        .indices(TensorDesc::new(DataType::Uint32, [2, 1]))
        .input_dimension_count(2)
        .indices_dimension_count(2)
        .build()
        .unwrap();
    let c = case(Arc::new(d.clone()), gather_inputs(&[0, 4]), true);
    let out = fuzz::check_valid(&c, Some(&gpu_run)).unwrap();
    assert!(
        matches!(out, Outcome::Error(OpError::IndexOutOfRange { .. })),
        "{out:?}"
    );
    // In range, the real GatherND1 passes with outputs.
    let c = case(Arc::new(d), gather_inputs(&[0, 3]), false);
    assert!(matches!(
        fuzz::check_valid(&c, Some(&gpu_run)).unwrap(),
        Outcome::Outputs(_)
    ));
    // Reducing an empty dimension.
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [0, 3]))
        .output_dtype(DataType::Uint32)
        .axes([0])
        .build()
        .unwrap();
    let input = HostTensor::zeros(TensorDesc::new(DataType::Float32, [0, 3])).unwrap();
    let c = case(Arc::new(d), vec![input], false);
    let out = fuzz::check_valid(&c, Some(&gpu_run)).unwrap();
    assert!(
        matches!(&out, Outcome::Error(e) if fuzz::documented_error(e)),
        "{out:?}"
    );
    // Too large is documented; a mismatch of element counts is not.
    assert!(fuzz::documented_error(&OpError::TooLarge {
        what: "`output`".into(),
        limit: "u32 element addressing".into()
    }));
    assert!(!fuzz::documented_error(&OpError::InvalidArgument(
        "the output holds 8 elements but the gather yields 4".into()
    )));
}
