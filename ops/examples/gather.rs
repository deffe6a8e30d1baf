//! The gather family: ONNX Gather of embedding rows by token ids, and an
//! out-of-range id reported by the GPU as the CPU reports it.
//!
//! `cargo run -p ops --example gather`

use ops::{onnx, HostTensor, OpError, Operator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A vocabulary of 4 tokens, 3 features each.
    let table: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let table = HostTensor::from_slice([4, 3], &table)?;
    let ids = HostTensor::from_slice([2, 2], &[3i64, 0, 1, -1])?; // -1 is the last row
    let gather = onnx::GatherDesc::builder()
        .data(table.desc().clone())
        .indices(ids.desc().clone())
        .axis(0)
        .build()?;
    let gpu = ops::gpu::shared()?;
    let out = gpu.run(&gather, &[&table, &ids])?;
    assert_eq!(out, gather.run_cpu(&[&table, &ids])?);
    println!(
        "embeddings {:?} {:?}",
        out[0].sizes(),
        out[0].to_vec::<f32>().unwrap()
    );

    let bad = HostTensor::from_slice([2, 2], &[3i64, 0, 9, 1])?;
    let e = gpu.run(&gather, &[&table, &bad]).unwrap_err();
    assert!(matches!(e, OpError::IndexOutOfRange { .. }));
    assert_eq!(Err(e.clone()), gather.run_cpu(&[&table, &bad]));
    println!("out of range: {e}");
    Ok(())
}
