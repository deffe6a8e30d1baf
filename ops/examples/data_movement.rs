//! The view and concat families: ONNX Transpose of the last two axes and
//! ONNX Concat of two tensors (one descriptor type per input count).
//!
//! `cargo run -p ops --example data_movement`

use ops::{onnx, HostTensor, Operator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = ops::gpu::shared()?;
    let x = HostTensor::from_slice([1, 2, 3], &[1u8, 2, 3, 4, 5, 6])?;
    let transpose = onnx::TransposeDesc::builder()
        .data(x.desc().clone())
        .perm([0i64, 2, 1])
        .build()?;
    let t = gpu.run(&transpose, &[&x])?;
    assert_eq!(t, transpose.run_cpu(&[&x])?);
    println!(
        "transposed {:?} {:?}",
        t[0].sizes(),
        t[0].to_vec::<u8>().unwrap()
    );

    let y = HostTensor::from_slice([1, 3, 2], &[7u8, 8, 9, 10, 11, 12])?;
    let concat = onnx::Concat2Desc::builder()
        .inputs_0(t[0].desc().clone())
        .inputs_1(y.desc().clone())
        .axis(1)
        .build()?;
    let c = gpu.run(&concat, &[&t[0], &y])?;
    assert_eq!(c, concat.run_cpu(&[&t[0], &y])?);
    println!(
        "concatenated {:?} {:?}",
        c[0].sizes(),
        c[0].to_vec::<u8>().unwrap()
    );
    Ok(())
}
