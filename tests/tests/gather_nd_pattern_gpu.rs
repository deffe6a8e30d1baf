//! The `gather_nd` pattern's WGSL kernels against its CPU reference.
//!
//! For all 44 (data type, index type) pairs of GatherND1's tables, the
//! kernels are generated here with `ops_core::family::gather_nd::wgsl`, run through
//! `ops_gpu` on random shapes (1 to 5 dimensions, padding, batch dimensions,
//! every tuple size, long rows) with edge-value data (NaN payloads, signed
//! zeros, subnormals, 64-bit values past 2^32 and 2^53) and negative indices,
//! and compared bit for bit with `gather_nd_cpu`; a third of the cases
//! gather along an axis instead (`GatherShape::Axis`: every batch before the
//! axis reads the same indices). Out-of-range indices (too
//! large, too negative, negative through unsigned types, 64-bit values whose
//! high word is wrong) must fail the plan's index check at the lowest bad
//! element, and `gather_nd_index_error` must phrase that position exactly as
//! the CPU reference does.
//!
//! Runs on whatever adapter `ops_gpu` finds (Mesa's lavapipe on machines
//! without a GPU); finding none is a failure, not a skip.

use ops_core::family::gather_nd::wgsl::{
    gather_nd_kernel, gather_nd_kernel_key, GATHER_ND_BINDINGS, GATHER_ND_ENTRY,
};
use ops_core::family::gather_nd::{
    gather_nd_cpu, gather_nd_index_error, gather_nd_plan, params, GatherCall, GatherNdGeometry,
    GatherShape, GatherVariant, WORKGROUP_SIZE,
};
use ops_core::fuzz::Rng;
use ops_core::{DataType, DeviceClass, HostTensor, Kernel, OpError, TensorDesc};
use ops_gpu::{Context, ExecError};

const ORIGIN: &str = "tests/tests/gather_nd_pattern_gpu.rs";
const OPERATOR: &str = "GatherND1";
const INDICES: &str = "indices";

const INDEX_TYPES: [DataType; 4] = [
    DataType::Int64,
    DataType::Int32,
    DataType::Uint64,
    DataType::Uint32,
];

fn ctx() -> &'static Context {
    ops_gpu::shared().unwrap_or_else(|e| {
        panic!("the gather_nd kernels need a GPU adapter: {e} (install Mesa's lavapipe, `mesa-vulkan-drivers`)")
    })
}

/// The kernels of one data and index type, in [`GatherVariant::ALL`] order.
type Kernels = [&'static Kernel; GatherVariant::ALL.len()];

/// Generates and leaks the kernels of every variant, as generated code holds
/// them in statics.
fn kernel(data: DataType, index: DataType) -> &'static Kernels {
    Box::leak(Box::new(GatherVariant::ALL.map(|v| {
        let key = gather_nd_kernel_key(OPERATOR, v, data, index);
        let wgsl = gather_nd_kernel(v, data, index, &key, ORIGIN);
        ops_spec::wgsl::segments::leak_kernel(
            &key,
            &wgsl,
            GATHER_ND_ENTRY,
            GATHER_ND_BINDINGS,
            WORKGROUP_SIZE,
        )
    })))
}

/// The random seed: `OPS_GATHER_ND_SEED` (decimal or `0x` hex) or a fixed default.
fn seed() -> u64 {
    let parsed =
        std::env::var("OPS_GATHER_ND_SEED")
            .ok()
            .and_then(|s| match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => s.parse().ok(),
            });
    parsed.filter(|&s| s != 0).unwrap_or(0x9a7e_4e2d_0b5e_55ed)
}

/// Edge values of a data type, as raw bits.
fn edges(dt: DataType) -> Vec<u64> {
    match dt {
        DataType::Float64 => vec![
            0x7ff8_0000_0000_0000,
            0xfff0_0000_0000_0001, // negative signalling NaN, payload 1
            0x7ff0_0000_0001_0000, // NaN whose payload lies in the low word only
            0x7ff0_0000_0000_0000,
            0x8000_0000_0000_0000, // -0.0
            1,                     // smallest subnormal
            0x800f_ffff_ffff_ffff, // largest negative subnormal
            0x3ff0_0000_0000_0001,
        ],
        DataType::Float32 => vec![
            0x7fc0_0001,
            0xff80_0001,
            0x8000_0000,
            1,
            0x807f_ffff,
            0x7f80_0000,
        ],
        DataType::Float16 => vec![0x7e01, 0xfc01, 0x8000, 1, 0x83ff, 0x7c00],
        DataType::Int64 | DataType::Uint64 => vec![
            1 << 63,
            u64::MAX,
            (1 << 53) + 1,
            (1 << 32) + 1,
            0xffff_ffff,
            (-(1i64 << 53) - 1) as u64,
        ],
        DataType::Int32 | DataType::Uint32 => vec![0x8000_0000, 0xffff_ffff, 0x7fff_ffff],
        DataType::Int16 | DataType::Uint16 => vec![0x8000, 0xffff, 0x7fff],
        DataType::Int8 | DataType::Uint8 => vec![0x80, 0xff, 0x7f],
        DataType::Bool => vec![0, 1],
    }
}

/// Random data of `sizes`: mostly random bits (distinct, so a wrong offset
/// shows), with edge values mixed in.
fn data_tensor(dt: DataType, sizes: &[u32], rng: &mut Rng) -> HostTensor {
    let n: usize = sizes.iter().map(|&s| s as usize).product();
    let pool = edges(dt);
    let width = dt.size_bytes();
    let mut bytes = Vec::with_capacity(n * width);
    for _ in 0..n {
        let v = if rng.chance(1, 4) {
            pool[rng.index(pool.len())]
        } else {
            rng.next_u64()
        };
        // BOOL holds 0 or 1.
        let v = if dt == DataType::Bool { v & 1 } else { v };
        bytes.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    HostTensor::from_bytes(TensorDesc::new(dt, sizes.to_vec()), bytes).unwrap()
}

/// An index tensor from values (two's complement, truncated to the type).
fn index_tensor(dt: DataType, sizes: &[u32], values: &[i128]) -> HostTensor {
    let width = dt.size_bytes();
    let mut bytes = Vec::with_capacity(values.len() * width);
    for &v in values {
        bytes.extend_from_slice(&(v as u128).to_le_bytes()[..width]);
    }
    HostTensor::from_bytes(TensorDesc::new(dt, sizes.to_vec()), bytes).unwrap()
}

/// One random gather: padded sizes and the three counts.
#[derive(Debug)]
struct Case {
    input: Vec<u32>,
    indices: Vec<u32>,
    input_rank: usize,
    indices_rank: usize,
    batch_dims: usize,
    /// `Some(axis)`: a gather along `axis` ([`GatherShape::Axis`], all of
    /// `indices` meaningful); the three counts are then unused.
    axis: Option<usize>,
}

impl Case {
    fn shape(&self) -> GatherShape {
        match self.axis {
            Some(axis) => GatherShape::Axis {
                axis,
                indices_rank: self.indices.len(),
            },
            None => nd(self.input_rank, self.indices_rank, self.batch_dims),
        }
    }
}

fn nd(input_rank: usize, indices_rank: usize, batch_dims: usize) -> GatherShape {
    GatherShape::Nd {
        input_rank,
        indices_rank,
        batch_dims,
    }
}

fn pad(sizes: Vec<u32>, d: usize) -> Vec<u32> {
    let mut padded = vec![1; d - sizes.len()];
    padded.extend(sizes);
    padded
}

fn random_case(rng: &mut Rng) -> Case {
    if rng.chance(1, 3) {
        return random_axis_case(rng);
    }
    loop {
        let d = 1 + rng.index(5);
        let input_rank = 1 + rng.index(d);
        let indices_rank = 1 + rng.index(d);
        let batch_dims = rng.index(input_rank.min(indices_rank));
        let q = 1 + rng.index(input_rank - batch_dims);
        let batch: Vec<u32> = (0..batch_dims).map(|_| 1 + rng.index(3) as u32).collect();
        let mut input = batch.clone();
        input.extend((0..q).map(|_| 1 + rng.index(5) as u32));
        for _ in batch_dims + q..input_rank {
            // Now and then a long row: slices of many contiguous elements.
            input.push(if rng.chance(1, 5) {
                40 + rng.index(400) as u32
            } else {
                1 + rng.index(4) as u32
            });
        }
        let mut indices = batch;
        indices.extend((batch_dims..indices_rank - 1).map(|_| 1 + rng.index(4) as u32));
        indices.push(q as u32);
        let case = Case {
            input: pad(input, d),
            indices: pad(indices, d),
            input_rank,
            indices_rank,
            batch_dims,
            axis: None,
        };
        let g = geometry(&case);
        if g.output_count <= 20_000 && g.input_count <= 20_000 {
            return case;
        }
    }
}

/// A gather along an axis: 1 to 4 input dimensions (now and then a long
/// row after the axis), 0 to 3 index dimensions, broadcast over the
/// dimensions before the axis.
fn random_axis_case(rng: &mut Rng) -> Case {
    loop {
        let r = 1 + rng.index(4);
        let axis = rng.index(r);
        let input: Vec<u32> = (0..r)
            .map(|d| {
                if d > axis && rng.chance(1, 5) {
                    40 + rng.index(400) as u32
                } else {
                    1 + rng.index(4) as u32
                }
            })
            .collect();
        let indices: Vec<u32> = (0..rng.index(4)).map(|_| 1 + rng.index(4) as u32).collect();
        let case = Case {
            input,
            indices,
            input_rank: 0,
            indices_rank: 0,
            batch_dims: 0,
            axis: Some(axis),
        };
        let g = geometry(&case);
        if g.output_count <= 20_000 && g.input_count <= 20_000 {
            return case;
        }
    }
}

fn geometry(case: &Case) -> GatherNdGeometry {
    GatherNdGeometry::of(&case.input, &case.indices, case.shape())
        .unwrap_or_else(|e| panic!("{case:?}: {e}"))
}

/// In-range index values: negative half of the time for signed types.
fn valid_indices(g: &GatherNdGeometry, index: DataType, rng: &mut Rng) -> Vec<i128> {
    (0..g.index_count)
        .map(|p| {
            let n = g.dims[p as usize % g.tuple_size].0 as i128;
            let v = rng.index(n as usize) as i128;
            if index.is_signed_int() && rng.chance(1, 2) {
                v - n
            } else {
                v
            }
        })
        .collect()
}

/// An out-of-range value of `index` for a dimension of size `n`.
fn bad_index(index: DataType, n: i128, rng: &mut Rng) -> i128 {
    let valid = rng.index(n as usize) as i128;
    let choices: Vec<i128> = match index {
        DataType::Int64 => vec![
            n,
            -n - 1,
            (1 << 32) + valid,  // low word in range, high word 1
            -(1 << 32) + valid, // high word all ones, but far below -n
            -(1 << 32),         // low word 0, high word all ones
            i128::from(i64::MIN),
            i128::from(i64::MAX),
        ],
        DataType::Int32 => vec![n, n + 7, -n - 1, i128::from(i32::MIN), i128::from(i32::MAX)],
        DataType::Uint64 => vec![
            n,
            (1 << 32) + valid,
            i128::from(u64::MAX), // -1 through an unsigned type
            1 << 63,
        ],
        DataType::Uint32 => vec![n, n + 3, i128::from(u32::MAX), 1 << 31],
        other => panic!("not an index type: {other}"),
    };
    choices[rng.index(choices.len())]
}

fn output_desc(g: &GatherNdGeometry, data: DataType, d: usize) -> TensorDesc {
    let sizes = g
        .padded_output_sizes(d)
        .unwrap_or_else(|| g.output_sizes.clone());
    TensorDesc::new(data, sizes)
}

fn first_difference(dt: DataType, got: &[u8], want: &[u8]) -> String {
    let w = dt.size_bytes();
    for (i, (g, e)) in got.chunks(w).zip(want.chunks(w)).enumerate() {
        if g != e {
            return format!("element {i}: gpu {g:02x?}, cpu {e:02x?}");
        }
    }
    format!("lengths {} and {}", got.len(), want.len())
}

fn plan_for(
    input: &HostTensor,
    indices: &HostTensor,
    out: &TensorDesc,
    case: &Case,
    k: &'static Kernels,
) -> ops_core::GpuPlan {
    plan_on(DeviceClass::Hardware, input, indices, out, case, k)
}

/// [`plan_for`] on an adapter of `class`.
fn plan_on(
    class: DeviceClass,
    input: &HostTensor,
    indices: &HostTensor,
    out: &TensorDesc,
    case: &Case,
    k: &'static Kernels,
) -> ops_core::GpuPlan {
    gather_nd_plan(
        &GatherCall {
            input: input.desc(),
            input_slot: 0,
            indices: indices.desc(),
            indices_slot: 1,
            output: out,
            output_slot: 0,
            shape: case.shape(),
            kernel: &|v| {
                let i = GatherVariant::ALL.iter().position(|&x| x == v)?;
                Some(k[i])
            },
        },
        class,
    )
    .unwrap_or_else(|e| panic!("{case:?}: plan: {e}"))
}

#[test]
fn gpu_matches_cpu_reference_bitwise() {
    let ctx = ctx();
    let seed = seed();
    let mut rng = Rng::new(seed);
    let mut runs = 0;
    let mut long_rows = 0;
    let mut negatives = 0;
    let mut singles = 0;
    let mut single_vectors = 0;
    let mut shared_indices = 0;
    for data in DataType::ALL {
        for index in INDEX_TYPES {
            let k = kernel(data, index);
            for _ in 0..10 {
                let case = random_case(&mut rng);
                let g = geometry(&case);
                let input = data_tensor(data, &case.input, &mut rng);
                let values = valid_indices(&g, index, &mut rng);
                negatives += values.iter().filter(|&&v| v < 0).count();
                let indices = index_tensor(index, &case.indices, &values);
                let out = output_desc(&g, data, case.input.len());
                let what = format!("seed {seed:#x}: {data}/{index} {case:?}");
                let want = gather_nd_cpu(&input, &indices, &out, case.shape(), INDICES)
                    .unwrap_or_else(|e| panic!("{what}: cpu: {e}"));
                let plan = plan_for(&input, &indices, &out, &case, k);
                let got = ctx
                    .execute(&plan, &[&input, &indices], std::slice::from_ref(&out))
                    .unwrap_or_else(|e| panic!("{what}: gpu: {e}"));
                assert_eq!(got[0].desc(), &out, "{what}");
                assert!(
                    got[0].bytes() == want.bytes(),
                    "{what}: {}",
                    first_difference(data, got[0].bytes(), want.bytes())
                );
                runs += 1;
                if case.axis.is_some() && g.tuple_count > g.tuples_per_batch {
                    shared_indices += 1;
                }
                if g.slice_len >= 40 {
                    long_rows += 1;
                }
                if plan
                    .passes
                    .first()
                    .is_some_and(|p| p.kernel.key.contains(GatherVariant::Singles.name()))
                {
                    singles += 1;
                }
                // Software plans, where they take another kernel.
                let software = plan_on(DeviceClass::Software, &input, &indices, &out, &case, k);
                let key = |p: &ops_core::GpuPlan| p.passes.first().map(|p| p.kernel.key);
                if key(&software) != key(&plan) {
                    let got = ctx
                        .execute(&software, &[&input, &indices], std::slice::from_ref(&out))
                        .unwrap_or_else(|e| panic!("{what}: software plan: {e}"));
                    assert!(
                        got[0].bytes() == want.bytes(),
                        "{what}: software plan: {}",
                        first_difference(data, got[0].bytes(), want.bytes())
                    );
                    single_vectors += 1;
                }
            }
        }
    }
    assert_eq!(runs, DataType::ALL.len() * 4 * 10);
    assert!(long_rows > 20, "{long_rows} long-row cases");
    assert!(negatives > 100, "{negatives} negative indices");
    assert!(singles > 20, "{singles} single-element cases");
    assert!(single_vectors > 10, "{single_vectors} single-vector cases");
    assert!(
        shared_indices > 20,
        "{shared_indices} gathers along an axis with several batches sharing the indices"
    );
}

#[test]
fn out_of_range_indices_fail_the_index_check() {
    let ctx = ctx();
    let seed = seed() ^ 0xbad;
    let mut rng = Rng::new(seed);
    for data in DataType::ALL {
        for index in INDEX_TYPES {
            let k = kernel(data, index);
            for _ in 0..3 {
                let case = random_case(&mut rng);
                let g = geometry(&case);
                let input = data_tensor(data, &case.input, &mut rng);
                let mut values = valid_indices(&g, index, &mut rng);
                let mut lowest = u64::MAX;
                for _ in 0..1 + rng.index(3) {
                    let p = rng.index(values.len());
                    let n = g.dims[p % g.tuple_size].0 as i128;
                    values[p] = bad_index(index, n, &mut rng);
                    lowest = lowest.min(p as u64);
                }
                let indices = index_tensor(index, &case.indices, &values);
                let out = output_desc(&g, data, case.input.len());
                let what = format!("seed {seed:#x}: {data}/{index} {case:?} {values:?}");
                let want =
                    gather_nd_cpu(&input, &indices, &out, case.shape(), INDICES).expect_err(&what);
                assert!(
                    matches!(want, OpError::IndexOutOfRange { .. }),
                    "{what}: {want}"
                );
                for class in [DeviceClass::Hardware, DeviceClass::Software] {
                    let plan = plan_on(class, &input, &indices, &out, &case, k);
                    let what = format!("{what} {class:?}");
                    assert_eq!(plan.index_checks, [1], "{what}");
                    match ctx.execute(&plan, &[&input, &indices], std::slice::from_ref(&out)) {
                        Err(ExecError::Index { check, position }) => {
                            assert_eq!(check, 0, "{what}");
                            assert_eq!(position, lowest, "{what}");
                            let got = gather_nd_index_error(
                                input.desc(),
                                &indices,
                                case.shape(),
                                INDICES,
                                position,
                            );
                            assert_eq!(got, want, "{what}");
                        }
                        other => panic!("{what}: {other:?}"),
                    }
                }
            }
        }
    }
}

/// The seed examples and hand-checked negative indices through the GPU.
#[test]
fn gpu_seed_examples() {
    let ctx = ctx();
    let run = |input: &HostTensor, indices: &HostTensor, ranks: (usize, usize, usize)| {
        let case = Case {
            input: input.sizes().to_vec(),
            indices: indices.sizes().to_vec(),
            input_rank: ranks.0,
            indices_rank: ranks.1,
            batch_dims: ranks.2,
            axis: None,
        };
        let g = geometry(&case);
        let out = output_desc(&g, input.dtype(), case.input.len());
        let k = kernel(input.dtype(), indices.dtype());
        let plan = plan_for(input, indices, &out, &case, k);
        let got = ctx
            .execute(&plan, &[input, indices], std::slice::from_ref(&out))
            .unwrap();
        let want = gather_nd_cpu(input, indices, &out, case.shape(), INDICES).unwrap();
        assert_eq!(got[0], want);
        got.into_iter().next().unwrap()
    };
    let input = HostTensor::from_slice([2, 2], &[0.0f32, 1.0, 2.0, 3.0]).unwrap();
    let indices = HostTensor::from_slice([2, 1], &[1u32, 0]).unwrap();
    let out = run(&input, &indices, (2, 2, 0));
    assert_eq!(out.sizes(), [2, 2]);
    assert_eq!(out.to_vec::<f32>().unwrap(), [2.0, 3.0, 0.0, 1.0]);

    let input =
        HostTensor::from_slice([1, 3, 2, 2], &(0..12).map(|v| v as f32).collect::<Vec<_>>())
            .unwrap();
    let indices =
        HostTensor::from_slice([1, 3, 2, 2], &[0u32, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0]).unwrap();
    let out = run(&input, &indices, (3, 3, 1));
    assert_eq!(out.sizes(), [1, 1, 3, 2]);
    assert_eq!(
        out.to_vec::<f32>().unwrap(),
        [0.0, 3.0, 7.0, 4.0, 9.0, 10.0]
    );

    // Negative indices, 8-bit data packed four to a word, 64-bit indices.
    let input = HostTensor::from_slice([2, 3], &[10i8, 11, 12, 13, 14, 15]).unwrap();
    let indices = HostTensor::from_slice([5, 2], &[-1i64, -1, 0, -3, -2, 1, 1, 0, 0, 2]).unwrap();
    let out = run(&input, &indices, (2, 2, 0));
    assert_eq!(out.to_vec::<i8>().unwrap(), [15, 10, 11, 13, 12]);
}

/// Empty slices still check every index value; no work needs no pass.
#[test]
fn empty_tensors() {
    let ctx = ctx();
    let k = kernel(DataType::Uint8, DataType::Int32);
    let input = HostTensor::zeros(TensorDesc::new(DataType::Uint8, [4, 0])).unwrap();
    let case = Case {
        input: vec![4, 0],
        indices: vec![3, 1],
        input_rank: 2,
        indices_rank: 2,
        batch_dims: 0,
        axis: None,
    };
    let out = TensorDesc::new(DataType::Uint8, [3, 0]);
    let ok = HostTensor::from_slice([3, 1], &[3i32, -4, 0]).unwrap();
    let plan = plan_for(&input, &ok, &out, &case, k);
    assert_eq!(plan.passes.len(), 1);
    let got = ctx
        .execute(&plan, &[&input, &ok], std::slice::from_ref(&out))
        .unwrap();
    assert!(got[0].is_empty());
    let bad = HostTensor::from_slice([3, 1], &[3i32, -5, 4]).unwrap();
    let want = gather_nd_cpu(&input, &bad, &out, nd(2, 2, 0), INDICES).unwrap_err();
    match ctx.execute(&plan, &[&input, &bad], std::slice::from_ref(&out)) {
        Err(ExecError::Index { check: 0, position }) => {
            assert_eq!(position, 1);
            assert_eq!(
                gather_nd_index_error(input.desc(), &bad, nd(2, 2, 0), INDICES, position),
                want
            );
        }
        other => panic!("{other:?}"),
    }

    let input = HostTensor::from_slice([2, 2], &[1u8, 2, 3, 4]).unwrap();
    let none = HostTensor::zeros(TensorDesc::new(DataType::Int32, [0, 1])).unwrap();
    let case = Case {
        input: vec![2, 2],
        indices: vec![0, 1],
        ..case
    };
    let out = TensorDesc::new(DataType::Uint8, [0, 2]);
    let plan = plan_for(&input, &none, &out, &case, k);
    assert!(plan.passes.is_empty());
    let got = ctx
        .execute(&plan, &[&input, &none], std::slice::from_ref(&out))
        .unwrap();
    assert!(got[0].is_empty());
}

/// Software plans' single-vector kernels (a vector of single elements a
/// thread: 16 of 8-bit data, 8 of 16-bit, 4 of 32- and 64-bit): tuples of
/// one and two index values, every index type, 8- to 64-bit data, several
/// workgroups and a last thread of fewer elements, without a
/// batch dimension and with one of size 1 (a batch dimension of size 2
/// takes the element-by-element kernels); bad indices in the vector path
/// (the lowest of two, in the sixth tuple's last value) and in the last
/// thread.
#[test]
fn single_vectors_four_elements_a_thread() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0x5e4);
    let mut runs = 0;
    for data in [
        DataType::Float32,
        DataType::Int32,
        DataType::Uint64,
        DataType::Float16,
        DataType::Int8,
    ] {
        for index in INDEX_TYPES {
            let k = kernel(data, index);
            for (q, batches) in [(1usize, 0u32), (2, 0), (2, 1), (1, 2)] {
                let tuples = 16 * 260 + 1 + rng.index(15) as u32;
                let dims: Vec<u32> = (0..q).map(|_| 3 + rng.index(60) as u32).collect();
                let (mut input, mut indices) = (Vec::new(), Vec::new());
                if batches > 0 {
                    input.push(batches);
                    indices.push(batches);
                }
                let batch = usize::from(batches > 0);
                input.extend(&dims);
                indices.extend([tuples / batches.max(1), q as u32]);
                let case = Case {
                    input_rank: input.len(),
                    indices_rank: indices.len(),
                    input,
                    indices,
                    batch_dims: batch,
                    axis: None,
                };
                let g = geometry(&case);
                let x = data_tensor(data, &case.input, &mut rng);
                let values = valid_indices(&g, index, &mut rng);
                let ix = index_tensor(index, &case.indices, &values);
                let out = output_desc(&g, data, case.input.len());
                let what = format!("{data}/{index} {case:?}");
                let plan = plan_on(DeviceClass::Software, &x, &ix, &out, &case, k);
                let key = plan.passes[0].kernel.key;
                match (q, batches) {
                    (_, 2) => assert!(!key.contains("single_vectors"), "{what}"),
                    (1, _) => assert!(key.contains("single_vectors_1"), "{what}"),
                    _ => assert!(key.contains("single_vectors_2"), "{what}"),
                }
                let want = gather_nd_cpu(&x, &ix, &out, case.shape(), INDICES).unwrap();
                let got = ctx
                    .execute(&plan, &[&x, &ix], std::slice::from_ref(&out))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(
                    got[0].bytes() == want.bytes(),
                    "{what}: {}",
                    first_difference(data, got[0].bytes(), want.bytes())
                );
                // Bad values: at positions p and later ones, the lowest wins.
                let last = values.len() - 1;
                for bad_at in [
                    vec![5 * q + q - 1, 40 * q],
                    vec![last],
                    vec![last - 1, last],
                ] {
                    let mut bad = values.clone();
                    for &p in &bad_at {
                        bad[p] = bad_index(index, i128::from(g.dims[p % q].0 as u32), &mut rng);
                    }
                    let ix = index_tensor(index, &case.indices, &bad);
                    match ctx.execute(&plan, &[&x, &ix], std::slice::from_ref(&out)) {
                        Err(ExecError::Index { position, .. }) => {
                            assert_eq!(position, bad_at[0] as u64, "{what} bad at {bad_at:?}");
                        }
                        other => panic!("{what} bad at {bad_at:?}: {other:?}"),
                    }
                }
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 5 * 4 * 4);
}

/// Rows of an odd byte count keep element mode (one output word a work
/// item, four work items a thread): 16,800,001 words over 16,407 workgroups,
/// the last one part-filled. (Row mode runs over more than 65,535
/// workgroups below.)
#[test]
fn long_odd_rows_in_element_mode() {
    let ctx = ctx();
    let row = 33_600_001u32;
    let bytes: Vec<u8> = (0..2 * row)
        .map(|v| v.wrapping_mul(0x9e37_79b9) as u8)
        .collect();
    let input = HostTensor::from_slice([2, row], &bytes).unwrap();
    let indices = HostTensor::from_slice([2, 1], &[-1i32, 0]).unwrap();
    let case = Case {
        input: vec![2, row],
        indices: vec![2, 1],
        input_rank: 2,
        indices_rank: 2,
        batch_dims: 0,
        axis: None,
    };
    let out = TensorDesc::new(DataType::Uint8, [2, row]);
    let plan = plan_for(
        &input,
        &indices,
        &out,
        &case,
        kernel(DataType::Uint8, DataType::Int32),
    );
    assert_eq!(plan.passes[0].params[params::ROW_BLOCKS], 0);
    assert!(plan.passes[0].kernel.key.contains("/gather_nd_elements/"));
    assert_eq!(plan.passes[0].params[params::WORK_COUNT], 16_800_001);
    assert_eq!(plan.passes[0].workgroups, 16_407);
    let got = ctx
        .execute(&plan, &[&input, &indices], std::slice::from_ref(&out))
        .unwrap();
    let want = gather_nd_cpu(&input, &indices, &out, nd(2, 2, 0), INDICES).unwrap();
    assert!(
        got[0] == want,
        "{}",
        first_difference(DataType::Uint8, got[0].bytes(), want.bytes())
    );
}

/// Row mode over more than 65,535 workgroups: 70,000 tuples of one block
/// (rows of 129 words, not whole 16-byte vectors).
#[test]
fn two_dimensional_grid_in_row_mode() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0x2d);
    let (rows, tuples) = (1000u32, 70_000u32);
    let input = data_tensor(DataType::Uint32, &[rows, 129], &mut rng);
    let values: Vec<i128> = (0..tuples)
        .map(|_| rng.index(rows as usize) as i128)
        .collect();
    let indices = index_tensor(DataType::Uint32, &[tuples, 1], &values);
    let case = Case {
        input: vec![rows, 129],
        indices: vec![tuples, 1],
        input_rank: 2,
        indices_rank: 2,
        batch_dims: 0,
        axis: None,
    };
    let out = TensorDesc::new(DataType::Uint32, [tuples, 129]);
    let plan = plan_for(
        &input,
        &indices,
        &out,
        &case,
        kernel(DataType::Uint32, DataType::Uint32),
    );
    assert_eq!(plan.passes[0].params[params::ROW_BLOCKS], 1);
    assert_eq!(plan.passes[0].params[params::SLICE_VECTORS], 0);
    assert!(plan.passes[0].kernel.key.contains("/gather_nd_rows/"));
    assert_eq!(plan.passes[0].workgroups, 70_000);
    let got = ctx
        .execute(&plan, &[&input, &indices], std::slice::from_ref(&out))
        .unwrap();
    let want = gather_nd_cpu(&input, &indices, &out, nd(2, 2, 0), INDICES).unwrap();
    assert!(
        got[0] == want,
        "{}",
        first_difference(DataType::Uint32, got[0].bytes(), want.bytes())
    );
}

/// Row mode (slices of at least `GatherTuning::ROW_MIN_WORDS` whole words,
/// not whole 16-byte vectors) for every data width: batches, several blocks
/// per slice with a partial last one, negative indices, and a bad index
/// reported at its lowest position.
#[test]
fn row_mode_copies_whole_words() {
    // (data, slice elements, tuples per batch): word-multiple slices of 129
    // words to ~2.2 blocks.
    let cases = [
        (DataType::Uint8, 516u32, 5),
        (DataType::Int8, 4 * 5001, 5),
        (DataType::Float16, 258, 5),
        (DataType::Uint16, 2 * 1501, 5),
        (DataType::Float32, 129, 5),
        (DataType::Int32, 9001, 5),
        (DataType::Float64, 65, 5),
        (DataType::Uint64, 2101, 5),
    ];
    copy_slices(&cases, 0x20f, Mode::Row);
}

/// Vector mode (slices of at least `GatherTuning::VECTOR_MIN` whole 16-byte
/// vectors) for every data width: batches, a few long slices over several
/// workgroups' blocks, many short ones (of odd vector counts, below and
/// above one workgroup's step) crossing threads' steps and blocks, negative
/// indices, and a bad index reported at its lowest position.
#[test]
fn vector_mode_copies_whole_vectors() {
    // (data, slice elements, tuples per batch).
    let cases = [
        (DataType::Uint8, 512u32, 5),
        (DataType::Int8, 16 * 3001, 5),
        (DataType::Uint8, 16 * 33, 300),
        (DataType::Float16, 256, 5),
        (DataType::Float16, 8 * 257, 40),
        (DataType::Uint16, 8 * 1500, 5),
        (DataType::Float32, 128, 5),
        (DataType::Float32, 4 * 35, 250),
        (DataType::Int32, 9000, 5),
        (DataType::Float64, 64, 5),
        (DataType::Uint64, 2 * 1111, 7),
    ];
    copy_slices(&cases, 0x7ec, Mode::Vector);
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Row,
    Vector,
}

/// Gathers slices of `(data, slice elements, tuples per batch)` for every
/// index type, checking the plan's mode, the output bit for bit, and the
/// index check with two bad values.
fn copy_slices(cases: &[(DataType, u32, u32)], salt: u64, mode: Mode) {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ salt);
    for &(data, slice, tuples) in cases {
        for index in INDEX_TYPES {
            // A batch of 2, `tuples` tuples of 2 over [3, 4] each, slices of
            // `slice`.
            let case = Case {
                input: vec![2, 3, 4, slice],
                indices: vec![1, 2, tuples, 2],
                input_rank: 4,
                indices_rank: 3,
                batch_dims: 1,
                axis: None,
            };
            let g = geometry(&case);
            match mode {
                Mode::Row => {
                    assert!(g.row_blocks(data).is_some(), "{data} {slice}");
                    assert!(g.slice_vectors(data).is_none(), "{data} {slice}");
                }
                Mode::Vector => assert!(g.slice_vectors(data).is_some(), "{data} {slice}"),
            }
            let input = data_tensor(data, &case.input, &mut rng);
            let values = valid_indices(&g, index, &mut rng);
            let indices = index_tensor(index, &case.indices, &values);
            let out = output_desc(&g, data, case.input.len());
            let what = format!("{data}/{index} {case:?}");
            let want = gather_nd_cpu(&input, &indices, &out, nd(4, 3, 1), INDICES)
                .unwrap_or_else(|e| panic!("{what}: cpu: {e}"));
            let plan = plan_for(&input, &indices, &out, &case, kernel(data, index));
            let p = &plan.passes[0].params;
            let variant = match mode {
                Mode::Row => GatherVariant::Rows,
                Mode::Vector => GatherVariant::Vectors,
            };
            assert!(
                plan.passes[0].kernel.key.contains(variant.name()),
                "{what}: {}",
                plan.passes[0].kernel.key
            );
            match mode {
                Mode::Row => assert!(
                    p[params::ROW_BLOCKS] > 0 && p[params::SLICE_VECTORS] == 0,
                    "{what}"
                ),
                // Row mode's words may stand beside (a plan forced to row
                // mode reads them); the vector kernel reads its own.
                Mode::Vector => assert_eq!(
                    u64::from(p[params::SLICE_VECTORS]),
                    u64::from(slice) * data.size_bytes() as u64 / 16,
                    "{what}"
                ),
            }
            if index.is_signed_int() {
                assert!(values.iter().any(|&v| v < 0), "{what}: no negative index");
            }
            let got = ctx
                .execute(&plan, &[&input, &indices], std::slice::from_ref(&out))
                .unwrap_or_else(|e| panic!("{what}: gpu: {e}"));
            assert!(
                got[0].bytes() == want.bytes(),
                "{what}: {}",
                first_difference(data, got[0].bytes(), want.bytes())
            );
            // Two bad values: the lowest position is reported.
            let mut bad = values.clone();
            let (p1, p2) = (3 + rng.index(5), 12 + rng.index(values.len() - 12));
            bad[p1] = bad_index(index, g.dims[p1 % 2].0 as i128, &mut rng);
            bad[p2] = bad_index(index, g.dims[p2 % 2].0 as i128, &mut rng);
            let indices = index_tensor(index, &case.indices, &bad);
            match ctx.execute(&plan, &[&input, &indices], std::slice::from_ref(&out)) {
                Err(ExecError::Index { check: 0, position }) => {
                    assert_eq!(position, p1 as u64, "{what}")
                }
                other => panic!("{what}: {other:?}"),
            }
        }
    }
}
