//! Fuzzing an operator declared outside the catalog with the strategies its
//! own spec generated: GPU == CPU bit for bit on valid descriptors,
//! rejections that name the broken rule on invalid ones, and
//! `min_feature_level()`.

use ops_core::fuzz::{self, proptest};
use ops_core::{DataType, FeatureLevel, HostTensor, OpError, Operator, TensorDesc};
use ops_downstream_example::{CountNonZeroDesc, GainReluDesc, ReduceMaxDesc, RmsDesc};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/fuzz.txt");

fn gpu_run(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    ops_gpu::shared()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .run(op, inputs)
}

proptest! {
    #![proptest_config(fuzz::config(64, Some(REGRESSIONS)))]

    #[test]
    fn valid_cases_gpu_equals_cpu(case in ReduceMaxDesc::valid_cases()) {
        fuzz::check_valid(&case, Some(&gpu_run)).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn invalid_cases_are_rejected_naming_the_rule(case in ReduceMaxDesc::invalid_cases()) {
        fuzz::check_invalid(&case).map_err(TestCaseError::fail)?;
    }

    /// The RMS within its declared ULP bound on the GPU, every plan variant.
    #[test]
    fn rms_valid_cases_gpu_within_the_contract(case in RmsDesc::valid_cases()) {
        let cpu = fuzz::check_valid(&case, Some(&gpu_run)).map_err(TestCaseError::fail)?;
        fuzz::check_variants(&case, &cpu, &gpu_plan).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn rms_invalid_cases_are_rejected_naming_the_rule(case in RmsDesc::invalid_cases()) {
        fuzz::check_invalid(&case).map_err(TestCaseError::fail)?;
    }

    /// Counts (a cast in the arithmetic) exact on the GPU, every plan
    /// variant, on data with NaN, both zeros and every edge value.
    #[test]
    fn count_nonzero_valid_cases_gpu_equals_cpu(case in CountNonZeroDesc::valid_cases()) {
        let cpu = fuzz::check_valid(&case, Some(&gpu_run)).map_err(TestCaseError::fail)?;
        fuzz::check_variants(&case, &cpu, &gpu_plan).map_err(TestCaseError::fail)?;
    }

    /// The fused element-wise operator within its bound on the GPU.
    #[test]
    fn gain_relu_valid_cases_gpu_within_the_contract(case in GainReluDesc::valid_cases()) {
        fuzz::check_valid(&case, Some(&gpu_run)).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn gain_relu_invalid_cases_are_rejected_naming_the_rule(case in GainReluDesc::invalid_cases()) {
        fuzz::check_invalid(&case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn count_nonzero_invalid_cases_are_rejected_naming_the_rule(case in CountNonZeroDesc::invalid_cases()) {
        fuzz::check_invalid(&case).map_err(TestCaseError::fail)?;
    }
}

fn gpu_plan(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    plan: &ops_core::GpuPlan,
) -> Result<Vec<HostTensor>, OpError> {
    ops_gpu::shared()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .run_plan(op, inputs, plan)
}

#[test]
fn rms_means_what_its_spec_says() {
    let x = HostTensor::from_slice([2, 2], &[3f32, 4., 1., 7.]).unwrap();
    let d = RmsDesc::builder()
        .input(x.desc().clone())
        .axes([1])
        .build()
        .unwrap();
    d.validate(FeatureLevel::HIGHEST).unwrap();
    let want = [(12.5f64).sqrt() as f32, (25f64).sqrt() as f32];
    for got in [d.run_cpu(&[&x]).unwrap(), gpu_run(&d, &[&x]).unwrap()] {
        let got = got[0].to_vec::<f32>().unwrap();
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 4.0 * f32::EPSILON * w, "{got:?}");
        }
    }
    // The contract grows with the count: 2 * 2 + 4.
    assert_eq!(d.tolerance(), ops_core::Tolerance::Ulp(8));
    // A float attribute in the arithmetic: sqrt(mean + epsilon).
    let e = RmsDesc::builder()
        .input(x.desc().clone())
        .axes([1])
        .epsilon(11.5)
        .build()
        .unwrap();
    for got in [e.run_cpu(&[&x]).unwrap(), gpu_run(&e, &[&x]).unwrap()] {
        let got = got[0].to_vec::<f32>().unwrap();
        assert!((got[0] - 24f32.sqrt()).abs() < 1e-5, "{got:?}");
        assert!((got[1] - 36.5f32.sqrt()).abs() < 1e-5, "{got:?}");
    }
    // Everything, by empty axes.
    let all = RmsDesc::builder()
        .input(x.desc().clone())
        .axes(Vec::<i32>::new())
        .build()
        .unwrap();
    assert_eq!(all.output_descs()[0].sizes, Vec::<u32>::new());
}

#[test]
fn count_nonzero_counts_what_is_not_zero() {
    let x = HostTensor::from_slice(
        [2, 4],
        &[0f32, -0.0, f32::NAN, 3.5, 1e-45, f32::INFINITY, 0.0, -2.0],
    )
    .unwrap();
    let d = CountNonZeroDesc::builder()
        .input(x.desc().clone())
        .axes([1])
        .build()
        .unwrap();
    d.validate(FeatureLevel::HIGHEST).unwrap();
    let cpu = d.run_cpu(&[&x]).unwrap().remove(0);
    assert_eq!(
        cpu.to_vec::<f32>().unwrap(),
        [2.0, 3.0],
        "NaN counts, -0.0 does not"
    );
    assert_eq!(gpu_run(&d, &[&x]).unwrap().remove(0), cpu);
    assert_eq!(d.tolerance(), ops_core::Tolerance::Exact);
    // An INT8 count wraps: 200 nonzero elements are -56.
    let x = HostTensor::from_slice([200], &[-1i8; 200]).unwrap();
    let d = CountNonZeroDesc::builder()
        .input(x.desc().clone())
        .axes(Vec::<i32>::new())
        .build()
        .unwrap();
    let cpu = d.run_cpu(&[&x]).unwrap().remove(0);
    assert_eq!(cpu.to_vec::<i8>().unwrap(), [-56]);
    assert_eq!(gpu_run(&d, &[&x]).unwrap().remove(0), cpu);
}

#[test]
fn acceptance_is_above_five_percent() {
    use ops_core::OperatorType;
    let a = fuzz::acceptance(<ReduceMaxDesc as OperatorType>::INFO, 2000);
    println!(
        "ReduceMax: {:.1}% of drawn descriptors are valid",
        100.0 * a.rate()
    );
    assert!(a.rate() > 0.05, "{a:?}");
}

#[test]
fn the_spec_means_what_it_says() {
    let x = HostTensor::from_slice([2, 3], &[1f32, f32::NAN, -5.0, -0.0, 0.0, -0.0]).unwrap();
    let d = ReduceMaxDesc::builder()
        .input(x.desc().clone())
        .axes([-1])
        .keep_dims(false)
        .build()
        .unwrap();
    d.validate(FeatureLevel::FL5_0).unwrap();
    assert!(
        d.validate(FeatureLevel::FL4_1).is_err(),
        "introduced in 5.0"
    );
    assert_eq!(d.min_feature_level(), Some(FeatureLevel::FL5_0));
    let cpu = d.run_cpu(&[&x]).unwrap().remove(0);
    let out = cpu.to_vec::<f32>().unwrap();
    assert!(out[0].is_nan(), "NaN propagates");
    assert_eq!(out[1].to_bits(), 0, "max(-0, +0, -0) is +0");
    let gpu = gpu_run(&d, &[&x]).unwrap().remove(0);
    assert_eq!(gpu, cpu);
    // 64-bit types need level 6.0.
    let d = ReduceMaxDesc::builder()
        .input(TensorDesc::new(DataType::Int64, [4]))
        .axes([0])
        .build()
        .unwrap();
    assert_eq!(d.min_feature_level(), Some(FeatureLevel::FL6_0));
}

#[test]
fn gain_relu_is_one_pass_with_a_broadcast_gain() {
    let x = HostTensor::from_slice([2, 3], &[1f32, -2., 3., f32::NAN, 0.5, -0.25]).unwrap();
    let gain = HostTensor::from_slice([3], &[0.5f32, 1., -10.]).unwrap();
    let d = GainReluDesc::builder()
        .x(x.desc().clone())
        .gain(gain.desc().clone())
        .scale(2.0)
        .build()
        .unwrap();
    d.validate(FeatureLevel::HIGHEST).unwrap();
    assert_eq!(d.gpu_plan().unwrap().passes.len(), 1, "fused: one pass");
    let cpu = d.run_cpu(&[&x, &gain]).unwrap().remove(0);
    let out = cpu.to_vec::<f32>().unwrap();
    assert_eq!(out[..3], [1.0, 0.0, 0.0]);
    assert!(out[3].is_nan(), "NaN propagates");
    assert_eq!(out[4..], [1.0, 5.0]);
    assert_eq!(gpu_run(&d, &[&x, &gain]).unwrap().remove(0), cpu);
    // A gain that would grow the output is refused, in the rule's words.
    let wide = TensorDesc::new(DataType::Float32, [4, 2, 3]);
    let e = GainReluDesc::builder()
        .x(x.desc().clone())
        .gain(wide)
        .build()
        .and_then(|d| d.validate(FeatureLevel::HIGHEST).map_err(Into::into));
    let e = format!("{:?}", e.err());
    assert!(e.contains("Gain must broadcast to the shape of X"), "{e}");
}
