//! The scatter families: ONNX ScatterND with `reduction` add, colliding
//! float updates applied in the updates' row-major order on the GPU as on
//! the CPU, bit for bit.
//!
//! `cargo run -p ops --example scatter`

use ops::onnx::{self, scatternd::ScatterNDReduction};
use ops::{HostTensor, Operator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = HostTensor::from_slice([4], &[0f32; 4])?;
    let indices = HostTensor::from_slice([6, 1], &[1i64, 1, 3, 1, 3, 0])?;
    let updates = HostTensor::from_slice([6], &[0.1f32, 1e8, 0.2, -1e8, 0.3, 5.0])?;
    let scatter = onnx::ScatterNDDesc::builder()
        .data(data.desc().clone())
        .indices(indices.desc().clone())
        .updates(updates.desc().clone())
        .reduction(ScatterNDReduction::Add)
        .build()?;
    let inputs = [&data, &indices, &updates];
    let cpu = scatter.run_cpu(&inputs)?;
    let gpu = ops::gpu::shared()?.run(&scatter, &inputs)?;
    assert_eq!(gpu[0].bytes(), cpu[0].bytes(), "deterministic, in order");
    println!("scatter-add {:?}", gpu[0].to_vec::<f32>().unwrap());
    Ok(())
}
