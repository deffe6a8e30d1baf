//! The `one_hot` pattern's kernels against its CPU reference, bit for bit:
//! every values x indices data-type pair of `onnx::OneHot` (whose tables
//! hold every pair the family generates) on edge values (NaN payloads,
//! infinities, -0.0, fractions and huge values as float indices, integer
//! extremes), element counts that are not a multiple of a word's lanes, the
//! segmented variant, and a dispatch of more than 65,535 workgroups.

use ops::onnx::OneHotDesc;
use ops_core::family::one_hot::{ELEMENTS_PER_THREAD, WORKGROUP_SIZE};
use ops_core::fuzz::{index_tensor, IndexMode};
use ops_core::{DataType, HostTensor, IndexBounds, Operator, OutOfRange, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu, segmented_context_for, tensor_with_edges, Rng};

const VALUES: [DataType; 12] = [
    DataType::Float64,
    DataType::Float32,
    DataType::Float16,
    DataType::Int64,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::Uint64,
    DataType::Uint32,
    DataType::Uint16,
    DataType::Uint8,
    DataType::Bool,
];

/// The depth as the operator's host input: an INT64 scalar.
fn depth_tensor(depth: u32) -> HostTensor {
    HostTensor::from_slice([], &[i64::from(depth)]).unwrap()
}

fn one_hot(indices: &HostTensor, depth: u32, values: &HostTensor, axis: i64) -> OneHotDesc {
    OneHotDesc::builder()
        .indices(indices.desc().clone())
        .depth(depth_tensor(depth))
        .values(values.desc().clone())
        .axis(axis)
        .build()
        .unwrap()
}

/// Runs `op` on `ctx` and on the CPU, asserting equal bits; returns the output.
fn same_on_both(
    ctx: &ops_gpu::Context,
    op: &OneHotDesc,
    indices: &HostTensor,
    depth: u32,
    values: &HostTensor,
    what: &str,
) -> HostTensor {
    let depth = depth_tensor(depth);
    let inputs = [indices, &depth, values];
    let cpu = op
        .run_cpu(&inputs)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let gpu = ctx
        .run(op, &inputs)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_bitwise_eq(&gpu[0], &cpu[0], what);
    cpu.into_iter().next().unwrap()
}

/// Index data of `dtype`: in range (negative too), one or two out of range,
/// or edge values (for floats: NaN, infinities, -0.0, subnormals, huge).
fn index_data(dtype: DataType, sizes: &[u32], depth: u32, k: usize, rng: &mut Rng) -> HostTensor {
    let bounds = IndexBounds {
        tensor: 0,
        addresses: 2,
        sizes: vec![depth],
        out_of_range: OutOfRange::Ignored,
    };
    match k % 3 {
        0 => index_tensor(dtype, sizes, &bounds, IndexMode::InRange, rng).0,
        1 => index_tensor(dtype, sizes, &bounds, IndexMode::OutOfRange, rng).0,
        _ => tensor_with_edges(dtype, sizes, rng),
    }
}

#[test]
fn every_kernel_matches_the_reference_on_edge_values() {
    let mut rng = Rng::new(11);
    let mut hot = 0usize;
    for index in VALUES.into_iter().filter(|&d| d != DataType::Bool) {
        for value in VALUES {
            // 45 and 7 output elements: neither a multiple of 2 nor of 4.
            for (k, (sizes, depth, axis)) in [
                (vec![3u32, 5], 3u32, 0i64),
                (vec![3, 5], 3, 1),
                (vec![3, 5], 3, -1),
                (vec![], 7, 0),
            ]
            .into_iter()
            .enumerate()
            {
                let idx = index_data(index, &sizes, depth, k, &mut rng);
                let vals = tensor_with_edges(value, &[2], &mut rng);
                let op = one_hot(&idx, depth, &vals, axis);
                let what = format!("OneHot {value} by {index} {sizes:?} axis {axis}");
                let out = same_on_both(gpu(), &op, &idx, depth, &vals, &what);
                let w = value.size_bytes();
                let (off, on) = (&vals.bytes()[..w], &vals.bytes()[w..2 * w]);
                // Every element is one of the two values, and at most one a
                // sequence is on (when they differ).
                for e in out.bytes().chunks(w) {
                    assert!(e == off || e == on, "{what}: {e:02x?}");
                }
                if off != on {
                    let ons = out.bytes().chunks(w).filter(|e| *e == on).count();
                    assert!(ons <= idx.len().max(1), "{what}: {ons} on values");
                    hot += ons;
                }
            }
        }
    }
    // The in-range draws put on values somewhere.
    assert!(hot > 500, "{hot} on values in all");
}

#[test]
fn the_segmented_variant_matches_the_reference() {
    let mut rng = Rng::new(12);
    for value in [DataType::Uint8, DataType::Float16, DataType::Int64] {
        let idx = index_data(DataType::Int32, &[37, 29], 11, 0, &mut rng);
        let vals = tensor_with_edges(value, &[2], &mut rng);
        let op = one_hot(&idx, 11, &vals, 1);
        let bytes = op.output_descs()[0].element_count().unwrap() * value.size_bytes() as u64;
        let ctx = segmented_context_for(bytes).expect("a segmented context");
        same_on_both(
            ctx,
            &op,
            &idx,
            11,
            &vals,
            &format!("segmented OneHot {value}"),
        );
    }
}

/// 65,600 x 1,024 FLOAT32 elements (268 MB: the segmented variant on
/// lavapipe): one work item each, 65,600 workgroups, more than one grid
/// dimension holds.
#[test]
fn more_than_65535_workgroups() {
    let mut rng = Rng::new(13);
    let depth = 65_600u32;
    let idx = index_data(DataType::Int64, &[1024], depth, 0, &mut rng);
    let vals = HostTensor::from_slice([2], &[0f32, 1.]).unwrap();
    let op = one_hot(&idx, depth, &vals, 0);
    let plan = op.gpu_plan().unwrap();
    let per_group = ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE);
    assert!(
        plan.passes[0].workgroups > 65_535,
        "{} workgroups of {per_group}",
        plan.passes[0].workgroups
    );
    let out = same_on_both(gpu(), &op, &idx, depth, &vals, "OneHot of 65,600 x 1,024");
    // One on value per sequence (the indices are all in range).
    let ons = out
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .filter(|&&v| v == 1.)
        .count();
    assert_eq!(ons, 1024);
    assert_eq!(
        out.desc(),
        &TensorDesc::new(DataType::Float32, [depth, 1024])
    );
}
