//! The tail of a classifier, on the device: the largest logit of each row
//! (DirectML REDUCE with MAX), its class (ARGMAX), and that class's label id
//! (GATHER_ND1 of a label table by the arg-max indices) — three operators
//! in one submission, the intermediate tensors never leaving the device,
//! one read-back. Checked against the CPU reference.
//!
//! `cargo run --release --example device_chain`

use ops::reduce::{ReduceDesc, ReduceFunction};
use ops::{ArgMaxDesc, DataType, GatherND1Desc, HostTensor, Operator, TensorDesc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (rows, classes) = (4u32, 10u32);
    // Logits with one clear winner per row, at class (3 * row + 1) % 10.
    let logits: Vec<f32> = (0..rows * classes)
        .map(|i| {
            let (r, c) = (i / classes, i % classes);
            if c == (3 * r + 1) % classes {
                5.0 + r as f32
            } else {
                (c as f32 * 0.37 + r as f32).sin()
            }
        })
        .collect();
    let logits = HostTensor::from_slice([rows, classes], &logits)?;
    // The label table, one row: class k has label id 100 + k.
    let labels: Vec<u32> = (0..classes).map(|k| 100 + k).collect();
    let labels = HostTensor::from_slice([1, classes], &labels)?;

    let max = ReduceDesc::builder()
        .input(logits.desc().clone())
        .output_dtype(DataType::Float32)
        .function(ReduceFunction::Max)
        .axes([1])
        .build()?;
    let argmax = ArgMaxDesc::builder()
        .input(logits.desc().clone())
        .output_dtype(DataType::Uint32)
        .axes([1])
        .build()?;
    // [rows, 1] indices, one coordinate each, into the last dimension.
    let gather = GatherND1Desc::builder()
        .input(labels.desc().clone())
        .indices(TensorDesc::new(DataType::Uint32, [rows, 1]))
        .input_dimension_count(1)
        .indices_dimension_count(2)
        .build()?;

    let ctx = ops::gpu::shared()?;
    let logits_d = ctx.upload(&logits)?;
    let labels_d = ctx.upload(&labels)?;
    let mut rec = ctx.record();
    let best = rec.run(&max, &[&logits_d])?;
    let class = rec.run(&argmax, &[&logits_d])?;
    let label = rec.run(&gather, &[&labels_d, &class[0]])?;
    rec.read(&best[0])?;
    rec.read(&label[0])?;
    let got = rec.submit()?.wait()?;

    // The same chain on the CPU reference.
    let best_cpu = max.run_cpu(&[&logits])?;
    let class_cpu = argmax.run_cpu(&[&logits])?;
    let label_cpu = gather.run_cpu(&[&labels, &class_cpu[0]])?;
    if got[0] != best_cpu[0] || got[1] != label_cpu[0] {
        return Err(format!(
            "the device chain disagrees with the CPU reference: {:?} {:?} vs {:?} {:?}",
            got[0], got[1], best_cpu[0], label_cpu[0]
        )
        .into());
    }
    let best = got[0].to_vec::<f32>().ok_or("FLOAT32 maxima")?;
    let label = got[1].to_vec::<u32>().ok_or("UINT32 labels")?;
    for r in 0..rows as usize {
        println!("row {r}: label {} (logit {})", label[r], best[r]);
    }
    println!(
        "3 operators, 1 submission, 1 read-back on {} (equal to the CPU reference)",
        ctx.adapter().name
    );
    Ok(())
}
