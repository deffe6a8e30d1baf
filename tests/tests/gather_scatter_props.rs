//! Properties of GatherND1 and Scatter through their generated descriptors:
//! for random valid descriptors over every table entry (feature level x
//! data types x ranks), the GPU output equals the CPU reference bit for bit;
//! Scatter also with heavily colliding indices; out-of-range indices are the
//! same error on both backends.

use ops::{GatherND1Desc, ScatterDesc};
use ops_core::{DataType, FeatureLevel, HostTensor, OpError, Operator, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu, tensor_with_edges, Rng};
use proptest::prelude::*;

const DATA_3_0: [DataType; 8] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::Uint32,
    DataType::Uint16,
    DataType::Uint8,
];
const INDEX: [DataType; 4] = [
    DataType::Int64,
    DataType::Int32,
    DataType::Uint64,
    DataType::Uint32,
];

/// An index tensor of `dtype` whose values lie in `[-bound, bound)` (signed)
/// or `[0, bound)` per element, `bounds[i % bounds.len()]`.
fn index_tensor(dtype: DataType, sizes: &[u32], bounds: &[u32], rng: &mut Rng) -> HostTensor {
    let n: usize = sizes.iter().product::<u32>() as usize;
    let mut bytes = Vec::new();
    for i in 0..n {
        let b = i64::from(bounds[i % bounds.len()].max(1));
        let v = if dtype.is_signed_int() {
            rng.below(2 * b as u64) as i64 - b
        } else {
            rng.below(b as u64) as i64
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..dtype.size_bytes()]);
    }
    HostTensor::from_bytes(TensorDesc::new(dtype, sizes.to_vec()), bytes).unwrap()
}

fn both_agree(op: &dyn Operator, inputs: &[&HostTensor]) {
    let cpu = op.run_cpu(inputs);
    let g = gpu().run(op, inputs);
    match (cpu, g) {
        (Ok(mut c), Ok(mut g)) => assert_bitwise_eq(&g.remove(0), &c.remove(0), &format!("{op:?}")),
        (Err(c), Err(g)) => assert_eq!(c, g, "{op:?}"),
        (c, g) => panic!("{op:?}: cpu {c:?}, gpu {g:?}"),
    }
}

#[derive(Debug, Clone)]
struct GatherCase {
    data: DataType,
    index: DataType,
    rank: usize,
    input_rank: usize,
    indices_rank: usize,
    batch: usize,
    tuple: usize,
    sizes: Vec<u32>,
    index_sizes: Vec<u32>,
    seed: u64,
}

fn gather_case() -> impl Strategy<Value = GatherCase> {
    (1usize..=6, any::<u64>(), 0usize..8, 0usize..4)
        .prop_flat_map(|(rank, seed, d, x)| {
            let mut rng = Rng::new(seed);
            let input_rank = 1 + rng.below(rank as u64) as usize;
            let indices_rank = 1 + rng.below(rank as u64) as usize;
            let batch = rng.below(input_rank.min(indices_rank) as u64) as usize;
            let tuple = 1 + rng.below((input_rank - batch) as u64) as usize;
            let mut sizes = vec![1u32; rank];
            for s in sizes.iter_mut().skip(rank - input_rank) {
                *s = 1 + rng.below(4) as u32;
            }
            let mut index_sizes = vec![1u32; rank];
            for s in index_sizes.iter_mut().skip(rank - indices_rank) {
                *s = 1 + rng.below(3) as u32;
            }
            index_sizes[rank - 1] = tuple as u32;
            for b in 0..batch {
                index_sizes[rank - indices_rank + b] = sizes[rank - input_rank + b];
            }
            let fits = (indices_rank - 1) + (input_rank - batch - tuple) <= rank;
            let case = GatherCase {
                data: DATA_3_0[d],
                index: INDEX[x],
                rank,
                input_rank,
                indices_rank,
                batch,
                tuple,
                sizes,
                index_sizes,
                seed,
            };
            if fits {
                Just(Some(case)).boxed()
            } else {
                Just(None).boxed()
            }
        })
        .prop_filter_map("the output fits the dimension count", |c| c)
}

#[derive(Debug, Clone)]
struct ScatterCase {
    level: FeatureLevel,
    data: DataType,
    index: DataType,
    sizes: Vec<u32>,
    index_axis: u32,
    axis: usize,
    collide: bool,
    seed: u64,
}

fn scatter_case() -> impl Strategy<Value = ScatterCase> {
    (
        0usize..4,
        0usize..11,
        0usize..4,
        prop::collection::vec(1u32..=5, 1..=8),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(l, d, x, mut sizes, collide, seed)| {
            let level = [
                FeatureLevel::FL1_0,
                FeatureLevel::FL2_1,
                FeatureLevel::FL3_0,
                FeatureLevel::FL4_1,
            ][l];
            let (data, index) = match level {
                FeatureLevel::FL1_0 => (
                    [DataType::Float32, DataType::Float16][d % 2],
                    DataType::Uint32,
                ),
                FeatureLevel::FL2_1 => (DATA_3_0[d % 8], DataType::Uint32),
                FeatureLevel::FL3_0 => (DATA_3_0[d % 8], INDEX[x]),
                _ => (DataType::ALL[d], INDEX[x]),
            };
            if level < FeatureLevel::FL3_0 {
                sizes.resize(4, 2);
            }
            while sizes.iter().product::<u32>() > 2000 {
                let m = sizes.iter().position(|&s| s > 1).unwrap();
                sizes[m] -= 1;
            }
            let mut rng = Rng::new(seed);
            let axis = rng.below(sizes.len() as u64) as usize;
            let index_axis = 1 + rng.below(6) as u32;
            ScatterCase {
                level,
                data,
                index,
                sizes,
                index_axis,
                axis,
                collide,
                seed,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn gather_nd1_gpu_equals_cpu(c in gather_case()) {
        let d = GatherND1Desc::builder()
            .input(TensorDesc::new(c.data, c.sizes.clone()))
            .indices(TensorDesc::new(c.index, c.index_sizes.clone()))
            .input_dimension_count(c.input_rank as u32)
            .indices_dimension_count(c.indices_rank as u32)
            .batch_dimension_count(c.batch as u32)
            .build()
            .unwrap();
        prop_assert!(d.validate(FeatureLevel::FL3_0).is_ok(), "{:?}", d.validate(FeatureLevel::FL3_0));
        prop_assert_eq!(d.min_feature_level(), Some(FeatureLevel::FL3_0));
        let mut rng = Rng::new(c.seed);
        let input = tensor_with_edges(c.data, &c.sizes, &mut rng);
        let first = c.rank - c.input_rank + c.batch;
        let bounds: Vec<u32> = (0..c.tuple).map(|j| c.sizes[first + j]).collect();
        let indices = index_tensor(c.index, &c.index_sizes, &bounds, &mut rng);
        both_agree(&d, &[&input, &indices]);
        // One index pushed out of range: the same error from both backends.
        let mut bad = indices.clone().into_bytes();
        let w = c.index.size_bytes();
        let n = bad.len() / w;
        let at = (rng.below(n as u64) as usize) * w;
        bad[at..at + w].copy_from_slice(&(7_000_000_000u64.to_le_bytes())[..w]);
        let bad = HostTensor::from_bytes(indices.desc().clone(), bad).unwrap();
        let cpu_err = d.run_cpu(&[&input, &bad]);
        prop_assert!(matches!(cpu_err, Err(OpError::IndexOutOfRange { .. })), "{:?}", cpu_err);
        both_agree(&d, &[&input, &bad]);
    }

    #[test]
    fn scatter_gpu_equals_cpu(c in scatter_case()) {
        let mut index_sizes = c.sizes.clone();
        index_sizes[c.axis] = c.index_axis;
        let d = ScatterDesc::builder()
            .input(TensorDesc::new(c.data, c.sizes.clone()))
            .indices(TensorDesc::new(c.index, index_sizes.clone()))
            .updates(TensorDesc::new(c.data, index_sizes.clone()))
            .axis(c.axis as u32)
            .build()
            .unwrap();
        prop_assert!(d.validate(c.level).is_ok(), "{:?}", d.validate(c.level));
        prop_assert!(d.min_feature_level().is_some_and(|m| m <= c.level));
        let mut rng = Rng::new(c.seed);
        let input = tensor_with_edges(c.data, &c.sizes, &mut rng);
        let updates = tensor_with_edges(c.data, &index_sizes, &mut rng);
        let bound = if c.collide { 1.min(c.sizes[c.axis]) } else { c.sizes[c.axis] };
        let indices = index_tensor(c.index, &index_sizes, &[bound], &mut rng);
        both_agree(&d, &[&input, &indices, &updates]);
    }
}

#[test]
fn scatter_collisions_on_one_element_keep_the_last_update() {
    let n = 5000u32;
    let input = HostTensor::from_slice([4], &[0u8; 4]).unwrap();
    let indices = HostTensor::from_slice([n], &vec![2u32; n as usize]).unwrap();
    let updates: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let updates = HostTensor::from_slice([n], &updates).unwrap();
    let mut d = ScatterDesc::builder()
        .input(input.desc().clone())
        .indices(indices.desc().clone())
        .updates(updates.desc().clone())
        .axis(0)
        .build()
        .unwrap();
    // Indices larger than the input on the axis are allowed (sizes may differ there).
    d.validate(FeatureLevel::FL3_0).unwrap();
    for _ in 0..5 {
        let out = gpu()
            .run(&d, &[&input, &indices, &updates])
            .unwrap()
            .remove(0);
        assert_eq!(
            out.to_vec::<u8>().unwrap(),
            [0, 0, ((n - 1) % 251) as u8, 0]
        );
    }
    d.axis = 0;
    assert_eq!(
        d.run_cpu(&[&input, &indices, &updates]).unwrap()[0]
            .to_vec::<u8>()
            .unwrap()[2],
        ((n - 1) % 251) as u8
    );
}
