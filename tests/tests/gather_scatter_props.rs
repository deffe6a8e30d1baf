//! Properties of GatherND1 and Scatter through their generated descriptors,
//! drawn by the strategies their specs generate (`valid_cases()`): for
//! valid descriptors over every table entry (feature level x data types x
//! ranks), the GPU output equals the CPU reference bit for bit; index data
//! is mostly in range (negative values for signed types), collides often
//! (Scatter's last update wins on both backends) and is sometimes out of
//! range, which must be the same error on both backends.

use ops::{GatherND1Desc, ScatterDesc};
use ops_core::fuzz;
use ops_core::{FeatureLevel, HostTensor, OpError, Operator};
use ops_tests::gpu;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn gpu_run(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    gpu().run(op, inputs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz::cases(32), ..ProptestConfig::default() })]

    #[test]
    fn gather_nd1_gpu_equals_cpu(c in GatherND1Desc::valid_cases()) {
        prop_assert_eq!(c.op.min_feature_level(), Some(FeatureLevel::FL3_0));
        fuzz::check_valid(&c, Some(&gpu_run)).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn scatter_gpu_equals_cpu(c in ScatterDesc::valid_cases()) {
        prop_assert!(c.op.min_feature_level().is_some_and(|m| m <= c.level));
        fuzz::check_valid(&c, Some(&gpu_run)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn scatter_collisions_on_one_element_keep_the_last_update() {
    let n = 5000u32;
    let input = HostTensor::from_slice([4], &[0u8; 4]).unwrap();
    let indices = HostTensor::from_slice([n], &vec![2u32; n as usize]).unwrap();
    let updates: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let updates = HostTensor::from_slice([n], &updates).unwrap();
    let mut d = ScatterDesc::builder()
        .input(input.desc().clone())
        .indices(indices.desc().clone())
        .updates(updates.desc().clone())
        .axis(0)
        .build()
        .unwrap();
    // Indices larger than the input on the axis are allowed (sizes may differ there).
    d.validate(FeatureLevel::FL3_0).unwrap();
    for _ in 0..5 {
        let out = gpu()
            .run(&d, &[&input, &indices, &updates])
            .unwrap()
            .remove(0);
        assert_eq!(
            out.to_vec::<u8>().unwrap(),
            [0, 0, ((n - 1) % 251) as u8, 0]
        );
    }
    d.axis = 0;
    assert_eq!(
        d.run_cpu(&[&input, &indices, &updates]).unwrap()[0]
            .to_vec::<u8>()
            .unwrap()[2],
        ((n - 1) % 251) as u8
    );
}
