//! Zero-size dimensions, operator by operator, on both backends: the result
//! each spec file documents (an empty output, an unchanged copy, or an
//! error), and the same from the CPU reference and the GPU.

use ops::{ArgMaxDesc, ArgMinDesc, GatherND1Desc, ReduceMinDesc, ScatterDesc};
use ops_core::{DataType, FeatureLevel, HostTensor, OpError, Operator, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu, tensor_with_edges, Rng};

/// Runs `op` on both backends: equal outputs, or equal errors.
fn both(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    let cpu = op.run_cpu(inputs);
    let gpu = gpu().run(op, inputs);
    match (&cpu, &gpu) {
        (Ok(c), Ok(g)) => {
            assert_eq!(c.len(), g.len());
            for (g, c) in g.iter().zip(c) {
                assert_bitwise_eq(g, c, &format!("{op:?}"));
            }
        }
        (Err(c), Err(g)) => assert_eq!(c, g, "{op:?}"),
        _ => panic!("{op:?}: the CPU gave {cpu:?}, the GPU {gpu:?}"),
    }
    cpu
}

fn empty(dtype: DataType, sizes: &[u32]) -> HostTensor {
    HostTensor::zeros(TensorDesc::new(dtype, sizes.to_vec())).unwrap()
}

fn empty_reduction(r: Result<Vec<HostTensor>, OpError>) {
    match r {
        Err(OpError::InvalidArgument(m)) => {
            assert!(m.contains("cannot reduce over an empty dimension"), "{m}")
        }
        other => panic!("expected the empty-reduction error, got {other:?}"),
    }
}

fn out_of_range(r: Result<Vec<HostTensor>, OpError>) -> (i128, i128) {
    match r {
        Err(OpError::IndexOutOfRange { low, high, .. }) => (low, high),
        other => panic!("expected IndexOutOfRange, got {other:?}"),
    }
}

fn argmin(input: &[u32], axes: &[u32]) -> ArgMinDesc {
    ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float32, input.to_vec()))
        .output_dtype(DataType::Uint32)
        .axes(axes.to_vec())
        .build()
        .unwrap()
}

/// ArgMin/ArgMax: a kept dimension of size 0 gives an empty output (also
/// when a reduced one is 0 too: there is no output element to reduce for);
/// reducing a dimension of size 0 for at least one output is an error.
#[test]
fn argmin_argmax() {
    for (sizes, axes, out) in [
        (&[0u32, 3][..], &[1u32][..], &[0u32, 1][..]),
        (&[3, 0], &[0], &[1, 0]),
        (&[0, 0], &[1], &[0, 1]),
        (&[2, 0, 4], &[0, 2], &[1, 0, 1]),
    ] {
        let d = argmin(sizes, axes);
        d.validate(FeatureLevel::FL3_0).unwrap();
        assert_eq!(d.output.sizes, out);
        let x = empty(DataType::Float32, sizes);
        let y = both(&d, &[&x]).unwrap();
        assert!(y[0].is_empty() && y[0].sizes() == out);
    }
    for (sizes, axes) in [
        (&[3u32, 0][..], &[1u32][..]),
        (&[0, 0], &[0, 1]),
        (&[0], &[0]),
        (&[2, 0, 4], &[1]),
    ] {
        let d = argmin(sizes, axes);
        // The descriptor is valid: the sizes are only known to be empty at run time.
        d.validate(FeatureLevel::FL3_0).unwrap();
        empty_reduction(both(&d, &[&empty(DataType::Float32, sizes)]));
        let d = ArgMaxDesc::builder()
            .input(TensorDesc::new(DataType::Int8, sizes.to_vec()))
            .output_dtype(DataType::Int64)
            .axes(axes.to_vec())
            .axis_direction(ops::argmax::AxisDirection::Decreasing)
            .build()
            .unwrap();
        empty_reduction(both(&d, &[&empty(DataType::Int8, sizes)]));
    }
}

fn reduce_min_desc(sizes: &[u32], axes: &[i64], keep_dims: bool) -> (ReduceMinDesc, HostTensor) {
    let axes = HostTensor::from_slice([axes.len() as u32], axes).unwrap();
    let d = ReduceMinDesc::builder()
        .data(TensorDesc::new(DataType::Float64, sizes.to_vec()))
        .axes(axes.clone())
        .keep_dims(keep_dims)
        .build()
        .unwrap();
    (d, axes)
}

/// ReduceMin: as ArgMin, and empty `axes` (the identity) copies an empty
/// tensor.
#[test]
fn reduce_min() {
    for (sizes, axes, keep, out) in [
        (&[0u32, 5][..], &[1i64][..], false, &[0u32][..]),
        (&[0, 5], &[-1], true, &[0, 1]),
        (&[4, 0], &[0], false, &[0]),
        (&[0, 5], &[], false, &[0, 5]),
        (&[0], &[], true, &[0]),
    ] {
        let (d, a) = reduce_min_desc(sizes, axes, keep);
        d.validate(FeatureLevel::HIGHEST).unwrap();
        assert_eq!(d.output.sizes, out);
        let x = empty(DataType::Float64, sizes);
        assert!(both(&d, &[&x, &a]).unwrap()[0].is_empty());
    }
    for (sizes, axes) in [
        (&[4u32, 0][..], &[1i64][..]),
        (&[0], &[0]),
        (&[3, 0], &[0, 1]),
    ] {
        let (d, a) = reduce_min_desc(sizes, axes, false);
        d.validate(FeatureLevel::HIGHEST).unwrap();
        empty_reduction(both(&d, &[&empty(DataType::Float64, sizes), &a]));
    }
    // A rank-0 tensor is one element, not an empty one.
    let x = HostTensor::from_slice([], &[2.5f64]).unwrap();
    let (d, a) = reduce_min_desc(&[], &[], false);
    assert_eq!(both(&d, &[&x, &a]).unwrap()[0], x);
}

fn gather(input: &HostTensor, indices: &HostTensor) -> GatherND1Desc {
    GatherND1Desc::builder()
        .input(input.desc().clone())
        .indices(indices.desc().clone())
        .input_dimension_count(input.sizes().len() as u32)
        .indices_dimension_count(indices.sizes().len() as u32)
        .build()
        .unwrap()
}

/// GatherND1: empty slices or no index tuples give an empty output, and
/// every index value is still checked; an index into a dimension of size 0
/// is out of range (`[0, -1]` admits nothing).
#[test]
fn gather_nd1() {
    let mut rng = Rng::new(3);
    // Empty slices: [3, 0] gathered by two rows.
    let x = empty(DataType::Float16, &[3, 0]);
    let idx = HostTensor::from_slice([2, 1], &[2i64, -3]).unwrap();
    let y = both(&gather(&x, &idx), &[&x, &idx]).unwrap();
    assert_eq!(y[0].sizes(), [2, 0]);
    // ... whose indices are checked all the same.
    let bad = HostTensor::from_slice([2, 1], &[1i64, 3]).unwrap();
    assert_eq!(out_of_range(both(&gather(&x, &bad), &[&x, &bad])), (-3, 2));
    // No tuples.
    let x = tensor_with_edges(DataType::Int32, &[3, 4], &mut rng);
    let idx = empty(DataType::Uint32, &[0, 1]);
    let y = both(&gather(&x, &idx), &[&x, &idx]).unwrap();
    assert_eq!(y[0].sizes(), [0, 4]);
    // An index into a dimension of size 0.
    let x = empty(DataType::Int32, &[0, 4]);
    let idx = HostTensor::from_slice([1, 1], &[0u32]).unwrap();
    assert_eq!(out_of_range(both(&gather(&x, &idx), &[&x, &idx])), (0, -1));
    // ... unless there is no index at all.
    let idx = empty(DataType::Uint32, &[0, 1]);
    assert!(both(&gather(&x, &idx), &[&x, &idx]).unwrap()[0].is_empty());
}

fn scatter(input: &HostTensor, indices: &HostTensor, axis: u32) -> ScatterDesc {
    let d = ScatterDesc::builder()
        .input(input.desc().clone())
        .indices(indices.desc().clone())
        .updates(TensorDesc::new(input.dtype(), indices.sizes().to_vec()))
        .axis(axis)
        .build()
        .unwrap();
    d.validate(FeatureLevel::HIGHEST).unwrap();
    d
}

/// Scatter: no updates leave the input unchanged; an empty input gives an
/// empty output; an axis of size 0 admits no index value.
#[test]
fn scatter_elements() {
    let mut rng = Rng::new(4);
    let x = tensor_with_edges(DataType::Float64, &[3, 2], &mut rng);
    let idx = empty(DataType::Int64, &[0, 2]);
    let up = empty(DataType::Float64, &[0, 2]);
    let y = both(&scatter(&x, &idx, 0), &[&x, &idx, &up]).unwrap();
    assert_eq!(y[0], x, "no updates: the input, unchanged");
    let x = empty(DataType::Uint8, &[3, 0]);
    let idx = empty(DataType::Uint32, &[5, 0]);
    let up = empty(DataType::Uint8, &[5, 0]);
    let y = both(&scatter(&x, &idx, 0), &[&x, &idx, &up]).unwrap();
    assert_eq!(y[0].sizes(), [3, 0]);
    let x = empty(DataType::Int16, &[0, 2]);
    let idx = HostTensor::from_slice([1, 2], &[0i32, -1]).unwrap();
    let up = HostTensor::from_slice([1, 2], &[7i16, 8]).unwrap();
    assert_eq!(
        out_of_range(both(&scatter(&x, &idx, 0), &[&x, &idx, &up])),
        (0, -1)
    );
}

/// An element count with a zero dimension is zero whatever the order of the
/// sizes: neither order overflows, in the descriptions nor in the reduce
/// pattern (a ReduceMin copy, an ArgMin over a kept zero-size dimension, and
/// over the zero-size one), on both backends.
#[test]
fn zero_dimensions_never_overflow() {
    let m = u32::MAX;
    for sizes in [[m, m, m, 0], [0, m, m, m], [m, 0, m, m]] {
        let desc = TensorDesc::new(DataType::Float32, sizes);
        assert_eq!(desc.element_count(), Some(0), "{sizes:?}");
        assert_eq!(desc.byte_size(), Some(0), "{sizes:?}");
        let x = HostTensor::zeros(desc.clone()).unwrap();
        assert!(x.is_empty());
        // The identity reduction copies nothing.
        let axes = HostTensor::from_slice([0], &[0i64; 0]).unwrap();
        let d = ReduceMinDesc::builder()
            .data(desc.clone())
            .axes(axes.clone())
            .build()
            .unwrap();
        d.validate(FeatureLevel::HIGHEST).unwrap();
        assert!(both(&d, &[&x, &axes]).unwrap()[0].is_empty(), "{sizes:?}");
        // Over another dimension, keeping the zero-size one: no output.
        let zero_at = sizes.iter().position(|&s| s == 0).unwrap() as u32;
        let d = argmin(&sizes, &[(zero_at + 1) % 4]);
        d.validate(FeatureLevel::HIGHEST).unwrap();
        assert!(both(&d, &[&x]).unwrap()[0].is_empty(), "{sizes:?}");
        // Over the zero-size one: nothing to reduce for each of the other
        // elements (or too many of them), the same error from both.
        let d = argmin(&sizes, &[zero_at]);
        d.validate(FeatureLevel::HIGHEST).unwrap();
        let r = both(&d, &[&x]);
        assert!(
            matches!(
                &r,
                Err(OpError::InvalidArgument(_) | OpError::TooLarge { .. })
            ),
            "{sizes:?}: {r:?}"
        );
    }
}

/// The same for a scatter of nothing into, and a gather of no tuples from,
/// a `[4294967295, 4294967295, 4294967295, 0]` tensor.
#[test]
fn zero_dimensions_never_overflow_in_gathers_and_scatters() {
    let m = u32::MAX;
    // The zero last, then first (the sizes after it multiply past u64).
    for sizes in [[m, m, m, 0], [0, m, m, m]] {
        let x = empty(DataType::Float32, &sizes);
        let idx = empty(DataType::Uint32, &sizes);
        let s = scatter(&x, &idx, 0);
        assert_eq!(both(&s, &[&x, &idx, &x]).unwrap()[0], x);
        let idx = empty(DataType::Uint32, &[1, 1, 0, 4]);
        let g = ops_tests::gather_nd1(&x, &idx, 4);
        g.validate(FeatureLevel::HIGHEST).unwrap();
        assert!(both(&g, &[&x, &idx]).unwrap()[0].is_empty());
    }
}
