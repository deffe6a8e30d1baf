//! The fold family: ONNX ReduceSum over one axis, its axes a host tensor,
//! on the GPU within the spec's accuracy contract of the `f64` reference.
//!
//! `cargo run -p ops --example reduce`

use ops::fuzz::compare_within;
use ops::{onnx, HostTensor, Operator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data: Vec<f32> = (0..12).map(|i| i as f32 * 0.5).collect();
    let x = HostTensor::from_slice([3, 4], &data)?;
    let axes = HostTensor::from_slice([1], &[1i64])?;
    let sum = onnx::ReduceSumDesc::builder()
        .data(x.desc().clone())
        .axes(axes.clone())
        .keepdims(false)
        .build()?;
    // A host input is passed as the descriptor holds it.
    let cpu = sum.run_cpu(&[&x, &axes])?;
    let gpu = ops::gpu::shared()?.run(&sum, &[&x, &axes])?;
    compare_within(&gpu, &cpu, sum.tolerance())?;
    println!(
        "row sums {:?} ({:?})",
        gpu[0].to_vec::<f32>().unwrap(),
        sum.tolerance()
    );
    Ok(())
}
