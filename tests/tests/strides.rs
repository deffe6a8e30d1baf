//! Strided inputs (`TensorDesc::strides`, DirectML's
//! `DML_BUFFER_TENSOR_DESC.Strides`): the element-wise family reads them
//! on both backends as it reads the same values packed; every other
//! family, and every output, refuses them with a validation error.
//!
//! - Random DirectML and ONNX element-wise calls whose inputs are laid out
//!   at random (stride-0 broadcasting, padded rows, permuted dimensions,
//!   packed), on every data type of ADD's table and IF's condition: the
//!   CPU reference on the strided inputs equals, bit for bit, the CPU
//!   reference on the same values packed, and the GPU equals it within the
//!   operator's contract.
//! - Broadcasting the DirectML way (the output's sizes, a stride of 0) of a
//!   row and of a column over a matrix, checked against hand-computed sums.
//! - Malformed strides (one per dimension is the rule), strides on an
//!   output and strides on an operator of another family: errors from
//!   `validate`, from the CPU reference and from the GPU, never a panic.

use std::collections::BTreeMap;

use ops_core::fuzz::{compare_contract, compare_within, random_layout};
use ops_core::{DataType, FeatureLevel, HostTensor, OpArgs, OpError, Operator, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu, tensor_with_edges, Rng};

/// The packed tensor holding the logical elements of `t`.
fn packed(t: &HostTensor) -> HostTensor {
    let desc = TensorDesc::new(t.dtype(), t.sizes());
    let width = t.dtype().size_bytes();
    let strides = t.desc().element_strides();
    let count = desc.element_count().unwrap() as usize;
    let mut bytes = Vec::with_capacity(count * width);
    let mut coords = vec![0u32; desc.rank()];
    for i in 0..count {
        if i > 0 {
            for d in (0..coords.len()).rev() {
                coords[d] += 1;
                if coords[d] < desc.sizes[d] {
                    break;
                }
                coords[d] = 0;
            }
        }
        let at: u64 = coords
            .iter()
            .zip(&strides)
            .map(|(&c, &s)| u64::from(c) * s)
            .sum();
        let at = at as usize * width;
        bytes.extend_from_slice(&t.bytes()[at..at + width]);
    }
    HostTensor::from_bytes(desc, bytes).unwrap()
}

/// A tensor of `dtype` and `sizes` with edge values, laid out by `strides`.
fn strided_tensor(
    dtype: DataType,
    sizes: &[u32],
    strides: Option<Vec<u64>>,
    rng: &mut Rng,
) -> HostTensor {
    let mut desc = TensorDesc::new(dtype, sizes);
    if let Some(s) = strides {
        desc = desc.with_strides(s);
    }
    let n = desc.buffer_elements().unwrap() as u32;
    let buffer = tensor_with_edges(dtype, &[n], rng);
    HostTensor::from_bytes(desc, buffer.into_bytes()).unwrap()
}

/// The operator `name` of `namespace` built over `inputs` (by tensor name).
fn build(namespace: &str, name: &str, inputs: &[(&str, &TensorDesc)]) -> Box<dyn Operator> {
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == namespace && i.name == name)
        .unwrap_or_else(|| panic!("no {namespace}::{name}"));
    let args = OpArgs {
        tensors: inputs
            .iter()
            .map(|(n, t)| (n.to_string(), (*t).clone()))
            .collect::<BTreeMap<_, _>>(),
        ..OpArgs::default()
    };
    (info.build)(&args).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `op` on `inputs` (strided) against `packed_op` on the same values
/// packed: the CPU references agree bit for bit, and the GPU agrees.
fn check_against_packed(
    op: &dyn Operator,
    packed_op: &dyn Operator,
    inputs: &[&HostTensor],
    context: &str,
) {
    op.validate(FeatureLevel::HIGHEST)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let flat: Vec<HostTensor> = inputs.iter().map(|t| packed(t)).collect();
    let flat: Vec<&HostTensor> = flat.iter().collect();
    let want = packed_op
        .run_cpu(&flat)
        .unwrap_or_else(|e| panic!("{context}: packed cpu: {e}"));
    let cpu = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{context}: cpu: {e}"));
    assert_eq!(cpu.len(), 1, "{context}");
    assert_bitwise_eq(&cpu[0], &want[0], &format!("{context}: cpu"));
    let got = gpu()
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{context}: gpu: {e}"));
    // The GPU within the operator's contract (exact here, NaN payloads
    // aside: the float path may quiet a signaling NaN).
    if let Err(e) = compare_within(&got, &want, op.tolerance()) {
        panic!("{context}: gpu: {e}");
    }
}

/// Random sizes of rank 1 to 5 (1 to 6 each, so words of packed types end
/// mid-word).
fn random_sizes(rng: &mut Rng) -> Vec<u32> {
    let rank = 1 + rng.below(5) as usize;
    (0..rank).map(|_| 1 + rng.below(6) as u32).collect()
}

#[test]
fn directml_add_reads_any_layout_on_every_data_type() {
    let mut rng = Rng::new(0x5eed_0001);
    // ADD's table: every data type but FLOAT64 and BOOL.
    let dtypes = &DataType::ALL[1..11];
    for round in 0..60 {
        let dtype = dtypes[round % dtypes.len()];
        let sizes = random_sizes(&mut rng);
        let a = strided_tensor(dtype, &sizes, random_layout(&sizes, &mut rng), &mut rng);
        let b = strided_tensor(dtype, &sizes, random_layout(&sizes, &mut rng), &mut rng);
        let op = build("", "ElementWiseAdd", &[("a", a.desc()), ("b", b.desc())]);
        let flat = build(
            "",
            "ElementWiseAdd",
            &[
                ("a", &TensorDesc::new(dtype, &sizes[..])),
                ("b", &TensorDesc::new(dtype, &sizes[..])),
            ],
        );
        let context = format!(
            "round {round}: {dtype} {sizes:?} strides {:?} and {:?}",
            a.desc().strides,
            b.desc().strides
        );
        check_against_packed(op.as_ref(), flat.as_ref(), &[&a, &b], &context);
    }
}

#[test]
fn directml_if_and_onnx_where_read_strided_conditions() {
    let mut rng = Rng::new(0x5eed_0002);
    for round in 0..24 {
        let sizes = random_sizes(&mut rng);
        let dtype = [DataType::Float16, DataType::Int8, DataType::Float32][round % 3];
        let (ns, name, cond_type, names) = if round % 2 == 0 {
            (
                "",
                "ElementWiseIf",
                DataType::Uint8,
                ["condition", "a", "b"],
            )
        } else {
            ("onnx", "Where", DataType::Bool, ["condition", "x", "y"])
        };
        let c = strided_tensor(cond_type, &sizes, random_layout(&sizes, &mut rng), &mut rng);
        let a = strided_tensor(dtype, &sizes, random_layout(&sizes, &mut rng), &mut rng);
        let b = strided_tensor(dtype, &sizes, random_layout(&sizes, &mut rng), &mut rng);
        let descs = [c.desc(), a.desc(), b.desc()];
        let strided: Vec<(&str, &TensorDesc)> = names.iter().copied().zip(descs).collect();
        let flat_descs = descs.map(|d| TensorDesc::new(d.dtype, &d.sizes[..]));
        let flat: Vec<(&str, &TensorDesc)> = names.iter().copied().zip(&flat_descs).collect();
        let op = build(ns, name, &strided);
        let flat = build(ns, name, &flat);
        let context = format!("round {round}: {name} {dtype} {sizes:?}");
        check_against_packed(op.as_ref(), flat.as_ref(), &[&c, &a, &b], &context);
    }
}

#[test]
fn a_stride_of_zero_broadcasts_a_row_and_a_column() {
    // [[0, 1, 2], [10, 11, 12]] plus the row [100, 200, 300] (stride 0 on
    // the rows) and plus the column [1000, 2000] (stride 0 on the columns).
    let m = HostTensor::from_slice([2, 3], &[0i32, 1, 2, 10, 11, 12]).unwrap();
    let row = HostTensor::from_bytes(
        TensorDesc::new(DataType::Int32, [2, 3]).with_strides([0, 1]),
        HostTensor::from_slice([3], &[100i32, 200, 300])
            .unwrap()
            .into_bytes(),
    )
    .unwrap();
    let col = HostTensor::from_bytes(
        TensorDesc::new(DataType::Int32, [2, 3]).with_strides([1, 0]),
        HostTensor::from_slice([2], &[1000i32, 2000])
            .unwrap()
            .into_bytes(),
    )
    .unwrap();
    for (b, want) in [
        (&row, [100, 201, 302, 110, 211, 312]),
        (&col, [1000, 1001, 1002, 2010, 2011, 2012]),
    ] {
        let op = build("", "ElementWiseAdd", &[("a", m.desc()), ("b", b.desc())]);
        op.validate(FeatureLevel::HIGHEST).unwrap();
        let cpu = op.run_cpu(&[&m, b]).unwrap();
        let got = gpu().run(op.as_ref(), &[&m, b]).unwrap();
        assert_eq!(cpu[0].to_vec::<i32>().unwrap(), want);
        assert_eq!(got[0].to_vec::<i32>().unwrap(), want);
        assert_eq!(got[0].desc().strides, None, "outputs are packed");
    }
}

#[test]
fn malformed_or_refused_strides_are_errors() {
    let m = HostTensor::from_slice([2, 3], &[0f32; 6]).unwrap();
    // One stride per dimension: a tensor of the wrong count cannot even be
    // made, and a descriptor holding one does not validate.
    let short = TensorDesc::new(DataType::Float32, [2, 3]).with_strides([1]);
    assert!(matches!(
        HostTensor::from_bytes(short.clone(), vec![0; 24]),
        Err(OpError::InvalidArgument(_))
    ));
    assert!(matches!(
        HostTensor::zeros(short.clone()),
        Err(OpError::InvalidArgument(_))
    ));
    let op = build("", "ElementWiseAdd", &[("a", m.desc()), ("b", &short)]);
    let e = op.validate(FeatureLevel::HIGHEST).unwrap_err();
    assert!(e.rule.contains("Strides must have DimensionCount"), "{e}");

    // Another family reads packed inputs: its descriptor with a strided
    // input fails validation and both backends refuse the call.
    let wide = TensorDesc::new(DataType::Float32, [2, 3]).with_strides([4, 1]);
    let x = HostTensor::zeros(wide.clone()).unwrap();
    let argmin = ops::ArgMinDesc::builder()
        .input(wide.clone())
        .axes([1u32])
        .output_dtype(DataType::Uint32)
        .build()
        .unwrap();
    let e = argmin.validate(FeatureLevel::HIGHEST).unwrap_err();
    assert!(e.rule.contains("reads packed tensors"), "{e}");
    assert!(matches!(argmin.run_cpu(&[&x]), Err(OpError::Validation(_))));
    assert!(matches!(
        gpu().run(&argmin, &[&x]),
        Err(OpError::Validation(_))
    ));
    // Packed strides written out are no strides at all.
    let spelled = TensorDesc::new(DataType::Float32, [2, 3]).with_strides([3, 1]);
    let argmin = ops::ArgMinDesc::builder()
        .input(spelled)
        .axes([1u32])
        .output_dtype(DataType::Uint32)
        .build()
        .unwrap();
    argmin.validate(FeatureLevel::HIGHEST).unwrap();

    // Outputs are written packed.
    let op = ops::ElementWiseAddDesc::builder()
        .a(m.desc().clone())
        .b(m.desc().clone())
        .output(TensorDesc::new(DataType::Float32, [2, 3]).with_strides([0, 1]))
        .build()
        .unwrap();
    let e = op.validate(FeatureLevel::HIGHEST).unwrap_err();
    assert!(e.rule.contains("is written packed"), "{e}");
    assert!(matches!(op.run_cpu(&[&m, &m]), Err(OpError::Validation(_))));
    assert!(matches!(
        gpu().run(&op, &[&m, &m]),
        Err(OpError::Validation(_))
    ));
}

#[test]
fn the_fuzzer_lays_out_inputs_of_strided_operators_only() {
    use ops_core::fuzz::proptest::strategy::{Strategy, ValueTree};
    use ops_core::fuzz::proptest::test_runner::TestRunner;
    let count = |name: &str| {
        let info = ops::catalog()
            .iter()
            .copied()
            .find(|i| i.namespace.is_empty() && i.name == name)
            .unwrap();
        let mut runner = TestRunner::deterministic();
        let strategy = ops_core::fuzz::valid_cases(info);
        let mut strided = 0;
        for _ in 0..90 {
            let case = strategy.new_tree(&mut runner).unwrap().current();
            let laid_out = case.inputs.iter().any(|t| !t.desc().is_packed());
            if laid_out {
                // The fuzzer's cases hold to the contract on both backends.
                let want = case.op.run_cpu(&case.input_refs()).unwrap();
                let yardstick = case.op.run_yardstick(&case.input_refs()).unwrap();
                let got = gpu().run(case.op.as_ref(), &case.input_refs()).unwrap();
                compare_contract(&got, &want, &yardstick, case.op.tolerance()).unwrap();
            }
            strided += usize::from(laid_out);
        }
        strided
    };
    let add = count("ElementWiseAdd");
    assert!((10..=60).contains(&add), "{add} of 90 ADD cases strided");
    assert_eq!(count("ArgMin"), 0);
}
