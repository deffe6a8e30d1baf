//! The element-wise family: ONNX Add with multidirectional broadcasting,
//! and DirectML's broadcasting through strides (a stride of 0 repeats a
//! dimension), on the GPU and on the CPU reference.
//!
//! `cargo run -p ops --example elementwise`

use ops::{onnx, DataType, ElementWiseAddDesc, FeatureLevel, HostTensor, Operator, TensorDesc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = ops::gpu::shared()?;

    // ONNX: [2, 3] + [3], the row broadcast over the rows.
    let a = HostTensor::from_slice([2, 3], &[0f32, 1., 2., 10., 11., 12.])?;
    let row = HostTensor::from_slice([3], &[100f32, 200., 300.])?;
    let add = onnx::AddDesc::builder()
        .a(a.desc().clone())
        .b(row.desc().clone())
        .build()?;
    let out = gpu.run(&add, &[&a, &row])?;
    assert_eq!(out, add.run_cpu(&[&a, &row])?);
    println!("onnx::Add    {:?}", out[0].to_vec::<f32>().unwrap());

    // DirectML: the same row described with the output's sizes and a
    // stride of 0 on the rows; its buffer holds the row once.
    let strided = HostTensor::from_bytes(
        TensorDesc::new(DataType::Float32, [2, 3]).with_strides([0, 1]),
        row.bytes().to_vec(),
    )?;
    let dml_add = ElementWiseAddDesc::builder()
        .a(a.desc().clone())
        .b(strided.desc().clone())
        .build()?;
    dml_add.validate(FeatureLevel::FL5_1)?;
    let dml_out = gpu.run(&dml_add, &[&a, &strided])?;
    assert_eq!(dml_out[0].bytes(), out[0].bytes());
    println!("ElementWiseAdd {:?}", dml_out[0].to_vec::<f32>().unwrap());
    Ok(())
}
