//! Scatters that add floats with heavy collisions give the same bits on
//! every GPU run, equal to the CPU reference (which applies the updates in
//! row-major order): ONNX ScatterElements and ScatterND with `reduction`
//! add, where GPU libraries usually give up determinism.

use ops::onnx::scatterelements::ScatterReduction;
use ops::onnx::scatternd::ScatterNDReduction;
use ops_core::fuzz::Rng;
use ops_core::{HostTensor, Operator};
use ops_tests::{assert_bitwise_eq, gpu};

/// Floats of many magnitudes, so that the order of a sum changes its bits.
fn floats(n: usize, rng: &mut Rng) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let m = (rng.below(1 << 20) as f32) / (1 << 20) as f32 - 0.5;
            let e = rng.below(24) as i32 - 12;
            m * 2f32.powi(e)
        })
        .collect()
}

/// Runs `op` 100 times on the GPU: every run's bits equal the first's and
/// the CPU reference's.
fn hundred_runs(op: &dyn Operator, inputs: &[&HostTensor], what: &str) {
    let want = op.run_cpu(inputs).unwrap();
    for run in 0..100 {
        let got = gpu().run(op, inputs).unwrap();
        assert_bitwise_eq(&got[0], &want[0], &format!("{what}, run {run}"));
    }
}

#[test]
fn float_scatter_adds_are_deterministic() {
    let mut rng = Rng::new(0xadd5);
    // ScatterElements: 4,096 updates per column into 4 rows of 64 columns.
    let data = HostTensor::from_slice([4, 64], &floats(4 * 64, &mut rng)).unwrap();
    let updates = HostTensor::from_slice([4096, 64], &floats(4096 * 64, &mut rng)).unwrap();
    let idx: Vec<i64> = (0..4096 * 64).map(|_| rng.below(4) as i64).collect();
    let indices = HostTensor::from_slice([4096, 64], &idx).unwrap();
    let op = ops::onnx::ScatterElementsDesc::builder()
        .data(data.desc().clone())
        .indices(indices.desc().clone())
        .updates(updates.desc().clone())
        .axis(0)
        .reduction(ScatterReduction::Add)
        .build()
        .unwrap();
    hundred_runs(&op, &[&data, &indices, &updates], "ScatterElements add");
    // The order matters: the same updates summed in another order differ.
    let mut sum = 0f32;
    let mut reversed = 0f32;
    for u in 0..4096 {
        if idx[u * 64] == 0 {
            sum += updates.get::<f32>(u * 64);
        }
        if idx[(4095 - u) * 64] == 0 {
            reversed += updates.get::<f32>((4095 - u) * 64);
        }
    }
    assert_ne!(
        sum.to_bits(),
        reversed.to_bits(),
        "the test's sums do not depend on order"
    );

    // ScatterND: 20,000 rows of 8 added into 3 rows, across passes.
    let data = HostTensor::from_slice([3, 8], &floats(24, &mut rng)).unwrap();
    let updates = HostTensor::from_slice([20_000, 8], &floats(20_000 * 8, &mut rng)).unwrap();
    let idx: Vec<i64> = (0..20_000).map(|_| rng.below(3) as i64 - 1).collect();
    let indices = HostTensor::from_slice([20_000, 1], &idx).unwrap();
    let op = ops::onnx::ScatterNDDesc::builder()
        .data(data.desc().clone())
        .indices(indices.desc().clone())
        .updates(updates.desc().clone())
        .reduction(ScatterNDReduction::Add)
        .build()
        .unwrap();
    assert!(op.gpu_plan_for(gpu().device_class()).unwrap().passes.len() > 1);
    hundred_runs(&op, &[&data, &indices, &updates], "ScatterND add");
}
