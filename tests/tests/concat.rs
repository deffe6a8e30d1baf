//! ONNX Concat and Split on the GPU against the CPU reference at the sizes where
//! their kernels change behaviour: packed 8- and 16-bit outputs whose words
//! straddle two inputs, every axis of a rank-8 tensor, one to seven inputs
//! (the widest kernel: seven inputs and the output), Split into one to six,
//! the one-input kernel's segmented variant (tensors beyond one binding)
//! and the TooLarge error of several inputs beyond one binding.

use std::collections::BTreeMap;

use ops::{AttrValue, DataType, HostTensor, OpArgs, OpError, Operator, TensorDesc};
use ops_gpu::Context;
use ops_tests::{gpu, tensor_with_edges, Rng};

/// ONNX Concat of `inputs` along `axis`: the instance of their count.
fn concat(inputs: &[&HostTensor], axis: i64) -> Box<dyn Operator> {
    let names: Vec<String> = (0..inputs.len()).map(|k| format!("inputs_{k}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == "onnx" && i.name == "Concat")
        .and_then(|i| i.instance_with_inputs(ops::catalog(), &refs))
        .unwrap_or_else(|| panic!("no onnx::Concat of {} inputs", inputs.len()));
    let args = OpArgs {
        tensors: names
            .iter()
            .zip(inputs)
            .map(|(n, t)| (n.clone(), t.desc().clone()))
            .collect::<BTreeMap<_, _>>(),
        attributes: [("axis".to_string(), AttrValue::Int(i128::from(axis)))].into(),
        ..OpArgs::default()
    };
    (info.build)(&args).unwrap_or_else(|e| panic!("onnx::Concat: {e}"))
}

/// GPU and CPU agree bit for bit.
fn check(ctx: &Context, op: &dyn Operator, inputs: &[&HostTensor], context: &str) {
    op.validate(ops::FeatureLevel::FL6_0)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let want = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{context}: cpu: {e}"));
    let got = ctx
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{context}: gpu: {e}"));
    assert_eq!(got[0].bytes(), want[0].bytes(), "{context}");
}

#[test]
fn packed_words_straddle_inputs_on_every_axis() {
    let mut rng = Rng::new(30);
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Bool,
        DataType::Int64,
        DataType::Float32,
    ] {
        // Odd extents: the output's words mix elements of two and three inputs.
        for extents in [
            vec![1u32],
            vec![1, 2],
            vec![3, 1, 5],
            vec![1, 1, 1, 1, 1, 2],
            vec![2, 1, 1, 3, 1, 1, 2],
        ] {
            let parts: Vec<HostTensor> = extents
                .iter()
                .map(|&e| tensor_with_edges(dt, &[3, e, 5], &mut rng))
                .collect();
            let refs: Vec<&HostTensor> = parts.iter().collect();
            let op = concat(&refs, 1);
            check(
                gpu(),
                op.as_ref(),
                &refs,
                &format!("{dt} extents {extents:?}"),
            );
        }
    }
    // Every axis of a rank-8 tensor, negative axes too.
    let base = [2u32, 1, 3, 2, 1, 2, 3, 1];
    for axis in -8i64..8 {
        let d = axis.rem_euclid(8) as usize;
        let mut other = base;
        other[d] += 2;
        let a = tensor_with_edges(DataType::Int8, &base, &mut rng);
        let b = tensor_with_edges(DataType::Int8, &other, &mut rng);
        let op = concat(&[&a, &b], axis);
        check(
            gpu(),
            op.as_ref(),
            &[&a, &b],
            &format!("rank 8 axis {axis}"),
        );
    }
}

#[test]
fn one_input_runs_segmented_and_several_refuse_beyond_a_binding() {
    let ctx = Context::new()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .with_max_binding_size(4096);
    let mut rng = Rng::new(31);
    // 12 KiB and more: three segments of 4 KiB each.
    for dt in [DataType::Float32, DataType::Float16, DataType::Int8] {
        let x = tensor_with_edges(dt, &[3, 4096 / dt.size_bytes() as u32 + 1], &mut rng);
        let op = concat(&[&x], 0);
        check(&ctx, op.as_ref(), &[&x], &format!("{dt} segmented"));
    }
    let a = tensor_with_edges(DataType::Float32, &[2048], &mut rng);
    let op = concat(&[&a, &a], 0);
    match ctx.run(op.as_ref(), &[&a, &a]) {
        Err(OpError::TooLarge { limit, .. }) => {
            assert!(limit.contains("max_storage_buffer_binding_size"), "{limit}")
        }
        other => panic!("Concat beyond one binding: {other:?}"),
    }
    // Shapes that do not concatenate are validation errors, not panics.
    let b = HostTensor::zeros(TensorDesc::new(DataType::Float32, [3, 2])).unwrap();
    let c = HostTensor::zeros(TensorDesc::new(DataType::Float32, [2, 2])).unwrap();
    let op = concat(&[&b, &c], 1);
    let e = op
        .validate(ops::FeatureLevel::FL6_0)
        .expect_err("sizes differ off the axis");
    assert!(e.to_string().contains("same shape"), "{e}");
}

/// ONNX Split of `input` along `axis` into parts of `lengths`.
fn split(input: &HostTensor, axis: i64, lengths: &[i64]) -> (Box<dyn Operator>, HostTensor) {
    let outputs: Vec<String> = (0..lengths.len()).map(|k| format!("outputs_{k}")).collect();
    let refs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == "onnx" && i.name == "Split")
        .and_then(|i| i.instance_with(ops::catalog(), &["input", "split"], Some(&refs)))
        .unwrap_or_else(|| panic!("no onnx::Split of {} outputs", lengths.len()));
    let split = HostTensor::from_slice([lengths.len() as u32], lengths).unwrap();
    let args = OpArgs {
        tensors: [("input".to_string(), input.desc().clone())].into(),
        host_data: [("split".to_string(), split.clone())].into(),
        attributes: [("axis".to_string(), AttrValue::Int(i128::from(axis)))].into(),
        ..OpArgs::default()
    };
    let op = (info.build)(&args).unwrap_or_else(|e| panic!("onnx::Split: {e}"));
    (op, split)
}

#[test]
fn split_parts_cut_packed_words_on_every_output() {
    let mut rng = Rng::new(32);
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Bool,
        DataType::Uint64,
    ] {
        for (axis, lengths) in [
            (1i64, vec![1i64, 2, 4]),
            (-1, vec![7]),
            (0, vec![1, 0, 2]),
            (1, vec![1, 0, 1, 1, 1, 3]),
        ] {
            let x = tensor_with_edges(dt, &[3, 7], &mut rng);
            let (op, s) = split(&x, axis, &lengths);
            op.validate(ops::FeatureLevel::FL6_0)
                .unwrap_or_else(|e| panic!("{dt} {lengths:?}: {e}"));
            let want = op.run_cpu(&[&x, &s]).unwrap();
            let got = gpu().run(op.as_ref(), &[&x, &s]).unwrap();
            assert_eq!(want.len(), lengths.len());
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.bytes(), w.bytes(), "{dt} axis {axis} {lengths:?}");
            }
        }
    }
}
