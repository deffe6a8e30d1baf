//! The `scatter_elements` pattern's WGSL kernels against its CPU reference.
//!
//! For every data type (11) and every index type of the Scatter tables
//! (INT64, INT32, UINT64, UINT32), the kernels of both algorithms (two
//! passes with winner words, or one pass walking each column) are generated
//! here with `ops_core::family::scatter::wgsl`, run through `ops_gpu` on random
//! shapes of rank 1 to 5 along every axis, with edge-value data (NaN
//! payloads, signed zeros, subnormals, integer extremes, 64-bit values that
//! differ only in one word), negative indices and heavy collisions (indices
//! drawn from a tiny range, so that many updates hit one element), and
//! compared bit for bit with `scatter_elements_cpu`. Every plan runs several
//! times: the last write in row-major order must win every time.
//! Out-of-range indices must give `ExecError::Index` with the lowest bad
//! position, phrased by `scatter_elements_index_error` exactly as the CPU
//! reference's error.
//!
//! Runs on whatever adapter `ops_gpu` finds (Mesa's lavapipe on machines
//! without a GPU); finding none is a failure, not a skip.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use ops_core::family::scatter::wgsl::{
    scatter_bindings, scatter_kernel, scatter_kernel_key, SCATTER_ENTRY,
};
use ops_core::family::scatter::{
    scatter_elements_cpu, scatter_elements_index_error, scatter_elements_plan_with, ScatterKernels,
    ScatterStage, ScatterStrategy, ScatterTuning, LOCKSTEP_ROWS, WORKGROUP_SIZE,
};
use ops_core::fuzz::Rng;
use ops_core::{DataType, DeviceClass, GpuPlan, HostTensor, Kernel, OpError, TensorDesc};
use ops_gpu::{Context, ExecError};

const ORIGIN: &str = "tests/tests/scatter_pattern_gpu.rs";

/// The index types of the Scatter tables.
const INDEX_TYPES: [DataType; 4] = [
    DataType::Int64,
    DataType::Int32,
    DataType::Uint64,
    DataType::Uint32,
];

/// How many times each plan runs (the results must agree).
const REPEATS: usize = 3;

/// Every call runs with every algorithm (`ColumnVectors` where `inner` is
/// whole vectors, `ColumnWords` where the data is 8- or 16-bit and `inner`
/// whole words, `Columns` otherwise).
const STRATEGIES: [ScatterStrategy; 4] = [
    ScatterStrategy::TwoPass,
    ScatterStrategy::Columns,
    ScatterStrategy::ColumnWords,
    ScatterStrategy::ColumnVectors,
];

fn ctx() -> &'static Context {
    ops_gpu::shared().unwrap_or_else(|e| {
        panic!("the scatter kernels need a GPU adapter: {e} (install Mesa's lavapipe, `mesa-vulkan-drivers`)")
    })
}

/// Generates and leaks one kernel, as generated code holds them in statics.
fn kernel(stage: ScatterStage, data: DataType, index: DataType) -> &'static Kernel {
    let key = scatter_kernel_key("Scatter", stage, data, index);
    let wgsl = scatter_kernel(stage, data, index, &key, ORIGIN);
    ops_spec::wgsl::segments::leak_kernel(
        &key,
        &wgsl,
        SCATTER_ENTRY,
        scatter_bindings(stage),
        WORKGROUP_SIZE,
    )
}

/// The kernels of every (data, index) pair, generated once.
fn kernels(data: DataType, index: DataType) -> ScatterKernels {
    static ALL: Mutex<Option<HashMap<(DataType, DataType), ScatterKernels>>> = Mutex::new(None);
    let mut all = ALL.lock().unwrap_or_else(|e| e.into_inner());
    *all.get_or_insert_with(HashMap::new)
        .entry((data, index))
        .or_insert_with(|| ScatterKernels {
            winner: kernel(ScatterStage::Winner, data, index),
            write: kernel(ScatterStage::Write, data, index),
            columns: kernel(ScatterStage::Columns, data, index),
            column_words: ScatterStage::ColumnWords
                .serves(data)
                .then(|| kernel(ScatterStage::ColumnWords, data, index)),
            column_vectors: kernel(ScatterStage::ColumnVectors, data, index),
        })
}

/// The random seed: `OPS_SCATTER_SEED` (decimal or `0x` hex) or a fixed default.
fn seed() -> u64 {
    let parsed = std::env::var("OPS_SCATTER_SEED")
        .ok()
        .and_then(|s| match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        });
    parsed.filter(|&s| s != 0).unwrap_or(0x5ca7_7e12_0bad_f00d)
}

/// Edge values of a data type, as raw bits.
fn edges(dt: DataType) -> Vec<u64> {
    match dt {
        DataType::Float64 => vec![
            0x7ff8_0000_0000_0000, // quiet NaN
            0xfff0_0000_0000_0001, // negative signalling NaN, payload 1
            0x7ff0_0000_0001_0000, // NaN whose payload lies in the low word only
            0x7ff0_0000_0000_0000, // +inf
            0xfff0_0000_0000_0000, // -inf
            0,
            0x8000_0000_0000_0000, // -0.0
            1,                     // smallest subnormal
            0x8000_0000_0000_0001,
            0x000f_ffff_ffff_ffff, // largest subnormal
            0x7fef_ffff_ffff_ffff, // MAX
            0x3ff0_0000_0000_0001, // 1.0 + ulp: differs in the low word only
        ],
        DataType::Float32 => vec![
            0x7fc0_0000,
            0xff80_0001,
            0x7f80_0000,
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x7f7f_ffff,
        ],
        DataType::Float16 => vec![0x7e00, 0xfc01, 0x7c00, 0, 0x8000, 1, 0x8001, 0x03ff, 0x7bff],
        DataType::Int64 | DataType::Uint64 => vec![
            1 << 63,
            (1 << 63) - 1,
            0,
            u64::MAX,
            1 << 32,
            (1 << 32) + 1,
            0xffff_ffff,
            (1 << 53) + 1,
        ],
        DataType::Int32 | DataType::Uint32 => {
            vec![0x8000_0000, 0x7fff_ffff, 0, 0xffff_ffff, 1]
        }
        DataType::Int16 | DataType::Uint16 => vec![0x8000, 0x7fff, 0, 0xffff, 1],
        DataType::Int8 | DataType::Uint8 => vec![0x80, 0x7f, 0, 0xff, 1],
        DataType::Bool => vec![0, 1],
    }
}

/// A tensor of `sizes` whose elements are edge values or random bits.
fn data_tensor(dt: DataType, sizes: &[u32], rng: &mut Rng) -> HostTensor {
    let n: usize = sizes.iter().map(|&s| s as usize).product();
    let width = dt.size_bytes();
    let pool = edges(dt);
    let mut bytes = Vec::with_capacity(n * width);
    for _ in 0..n {
        let v = if rng.below(2) == 0 {
            pool[rng.below(pool.len() as u64) as usize]
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
fn index_tensor(dt: DataType, sizes: &[u32], values: &[i64]) -> HostTensor {
    let width = dt.size_bytes();
    let mut bytes = Vec::with_capacity(values.len() * width);
    for &v in values {
        bytes.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    HostTensor::from_bytes(TensorDesc::new(dt, sizes.to_vec()), bytes).unwrap()
}

/// How a case's index values are drawn.
#[derive(Clone, Copy, Debug)]
enum Spread {
    /// Anywhere in the valid range, negative values included for signed types.
    Full,
    /// From a range of one or two elements: collisions everywhere.
    Tiny,
}

/// Valid index values along an axis of `len` (> 0) elements.
fn index_values(index: DataType, len: u32, n: usize, spread: Spread, rng: &mut Rng) -> Vec<i64> {
    let len = i64::from(len);
    let low = if index.is_signed_int() { -len } else { 0 };
    (0..n)
        .map(|_| match spread {
            Spread::Full => rng.range(low, len - 1),
            Spread::Tiny if index.is_signed_int() => {
                // 0 and -len name the same element; so do len-1 and -1.
                [0, -len, len - 1, -1][rng.below(2) as usize + 2 * (len > 3) as usize]
            }
            Spread::Tiny => rng.range(0, (len - 1).min(1)),
        })
        .collect()
}

/// One scatter call.
struct Call {
    input: HostTensor,
    indices: HostTensor,
    updates: HostTensor,
    axis: usize,
}

impl Call {
    fn plan(&self) -> Result<GpuPlan, OpError> {
        self.plan_with(None)
    }

    /// The plan with a forced algorithm (`None`: the one the geometry picks).
    fn plan_with(&self, strategy: Option<ScatterStrategy>) -> Result<GpuPlan, OpError> {
        scatter_elements_plan_with(
            strategy,
            self.input.desc(),
            0,
            self.indices.desc(),
            1,
            self.updates.desc(),
            2,
            self.input.desc(),
            0,
            self.axis,
            DeviceClass::Hardware,
            &kernels(self.input.dtype(), self.indices.dtype()),
        )
    }

    fn cpu(&self) -> Result<HostTensor, OpError> {
        scatter_elements_cpu(
            &self.input,
            &self.indices,
            &self.updates,
            self.input.desc(),
            self.axis,
            "IndicesTensor",
        )
    }

    fn gpu(&self, ctx: &Context, plan: &GpuPlan) -> Result<HostTensor, ExecError> {
        let mut out = ctx.execute(
            plan,
            &[&self.input, &self.indices, &self.updates],
            std::slice::from_ref(self.input.desc()),
        )?;
        Ok(out.remove(0))
    }

    fn what(&self) -> String {
        format!(
            "{} <- {} {:?} along axis {} of {:?}",
            self.input.dtype(),
            self.indices.dtype(),
            self.indices.sizes(),
            self.axis,
            self.input.sizes()
        )
    }

    /// Runs the plan of each algorithm [`REPEATS`] times and checks every
    /// result against the CPU reference, bit for bit.
    fn check(&self, ctx: &Context, context: &str) {
        for strategy in STRATEGIES {
            self.check_with(ctx, &format!("{context} {strategy:?}"), Some(strategy));
        }
    }

    /// [`check_with`](Self::check_with) the algorithm `strategy` forces,
    /// asserting that its plan runs the kernel named `kernel`.
    fn check_forced(&self, ctx: &Context, strategy: ScatterStrategy, kernel: &str) {
        let plan = self.plan_with(Some(strategy)).unwrap();
        let key = plan.passes[0].kernel.key;
        assert!(key.contains(kernel), "{}: {key}", self.what());
        self.check_with(ctx, kernel, Some(strategy));
    }

    fn check_with(&self, ctx: &Context, context: &str, strategy: Option<ScatterStrategy>) {
        let what = format!("{context}: {}", self.what());
        let want = self.cpu().unwrap_or_else(|e| panic!("{what}: cpu: {e}"));
        let plan = self
            .plan_with(strategy)
            .unwrap_or_else(|e| panic!("{what}: plan: {e}"));
        for run in 0..REPEATS {
            let got = self
                .gpu(ctx, &plan)
                .unwrap_or_else(|e| panic!("{what}: gpu run {run}: {e}"));
            assert_eq!(got.desc(), want.desc(), "{what}");
            assert!(
                got.bytes() == want.bytes(),
                "{what}: gpu run {run}: {}",
                first_difference(want.dtype(), got.bytes(), want.bytes())
            );
        }
    }
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

/// A random call: rank and axis given, sizes, data and indices random.
fn random_call(
    data: DataType,
    index: DataType,
    rank: usize,
    axis: usize,
    spread: Spread,
    rng: &mut Rng,
) -> Call {
    let sizes: Vec<u32> = (0..rank)
        .map(|_| 1 + rng.below(if rank > 3 { 3 } else { 6 }) as u32)
        .collect();
    let mut index_sizes = sizes.clone();
    // Fewer or more updates than the axis holds; many more for collisions.
    index_sizes[axis] = match spread {
        Spread::Full => 1 + rng.below(2 * u64::from(sizes[axis]) + 1) as u32,
        Spread::Tiny => 2 + rng.below(12) as u32,
    };
    let n: usize = index_sizes.iter().map(|&s| s as usize).product();
    let values = index_values(index, sizes[axis], n, spread, rng);
    Call {
        input: data_tensor(data, &sizes, rng),
        indices: index_tensor(index, &index_sizes, &values),
        updates: data_tensor(data, &index_sizes, rng),
        axis,
    }
}

/// Every data type x index type, every axis of ranks 1 to 5.
#[test]
fn gpu_matches_cpu_reference_bitwise() {
    let ctx = ctx();
    let seed = seed();
    let mut rng = Rng::new(seed);
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let mut runs = 0usize;
    for data in DataType::ALL {
        for index in INDEX_TYPES {
            for rank in 1..=5 {
                for axis in 0..rank {
                    let spread = if (runs + axis).is_multiple_of(2) {
                        Spread::Full
                    } else {
                        Spread::Tiny
                    };
                    let call = random_call(data, index, rank, axis, spread, &mut rng);
                    call.check(ctx, &format!("seed {seed:#x}: {spread:?}"));
                    seen.insert((rank, axis));
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, DataType::ALL.len() * 4 * 15);
    assert_eq!(seen.len(), 15);
}

/// Tens of thousands of updates on a handful of elements, across many
/// workgroups: the last one in row-major order must win every time.
#[test]
fn heavy_collisions_are_deterministic() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0x0c01_11de);
    for (data, index) in [
        (DataType::Uint8, DataType::Int64),
        (DataType::Float16, DataType::Uint32),
        (DataType::Int32, DataType::Int32),
        (DataType::Float64, DataType::Uint64),
    ] {
        // 3 x 20000 x 2 updates onto 3 x 3 x 2 elements, along axis 1.
        let sizes = [3u32, 3, 2];
        let index_sizes = [3u32, 20_000, 2];
        let n = 3 * 20_000 * 2;
        let values = index_values(index, 3, n, Spread::Full, &mut rng);
        let call = Call {
            input: data_tensor(data, &sizes, &mut rng),
            indices: index_tensor(index, &index_sizes, &values),
            updates: data_tensor(data, &index_sizes, &mut rng),
            axis: 1,
        };
        call.check(ctx, "heavy collisions");
        // Everything onto one element: the very last update wins.
        let values = vec![if index.is_signed_int() { -1 } else { 2 }; n];
        let call = Call {
            indices: index_tensor(index, &index_sizes, &values),
            ..call
        };
        call.check(ctx, "one target per row");
        let got = call.gpu(ctx, &call.plan().unwrap()).unwrap();
        let w = data.size_bytes();
        // Output (0, 2, 0) is the last update of row 0: updates (0, 19999, 0).
        let (t, u) = (2 * 2, 19_999 * 2);
        assert_eq!(
            got.bytes()[t * w..(t + 1) * w],
            call.updates.bytes()[u * w..(u + 1) * w]
        );
    }
}

/// The seed document's examples, through the GPU.
#[test]
fn gpu_seed_examples() {
    let ctx = ctx();
    let call = Call {
        input: HostTensor::from_slice([5], &[0.0f32, 1.0, 2.0, 3.0, 4.0]).unwrap(),
        indices: HostTensor::from_slice([4], &[3u32, 1, 3, 0]).unwrap(),
        updates: HostTensor::from_slice([4], &[5.0f32, 6.0, 7.0, 8.0]).unwrap(),
        axis: 0,
    };
    call.check(ctx, "example 1");
    let got = call.gpu(ctx, &call.plan().unwrap()).unwrap();
    assert_eq!(got.to_vec::<f32>().unwrap(), [8.0, 6.0, 2.0, 7.0, 4.0]);

    let call = Call {
        input: HostTensor::from_slice([3, 3], &[0.0f32; 9]).unwrap(),
        indices: HostTensor::from_slice([2, 3], &[1i64, 0, 2, 0, 2, 1]).unwrap(),
        updates: HostTensor::from_slice([2, 3], &[10.0f32, 11.0, 12.0, 20.0, 21.0, 22.0]).unwrap(),
        axis: 0,
    };
    call.check(ctx, "example 2");
    let got = call.gpu(ctx, &call.plan().unwrap()).unwrap();
    assert_eq!(
        got.to_vec::<f32>().unwrap(),
        [20.0, 11.0, 0.0, 10.0, 0.0, 22.0, 0.0, 21.0, 12.0]
    );

    // Negative indices and narrow data: neighbours in one word stay intact.
    let call = Call {
        input: HostTensor::from_slice([2, 4], &[1u8, 2, 3, 4, 5, 6, 7, 8]).unwrap(),
        indices: HostTensor::from_slice([2, 2], &[-1i32, -4, 1, -3]).unwrap(),
        updates: HostTensor::from_slice([2, 2], &[0xa0u8, 0xa1, 0xb0, 0xb1]).unwrap(),
        axis: 1,
    };
    call.check(ctx, "negative");
    let got = call.gpu(ctx, &call.plan().unwrap()).unwrap();
    assert_eq!(
        got.to_vec::<u8>().unwrap(),
        [0xa1, 2, 3, 0xa0, 5, 0xb1, 7, 8]
    );
}

/// Raw index values that lie outside an axis of `len` elements.
fn bad_values(index: DataType, len: u32) -> Vec<u64> {
    let len = u64::from(len);
    let mut v = vec![len, len + 7];
    match index {
        DataType::Int64 => v.extend([
            (-(len as i64) - 1) as u64,
            i64::MIN as u64,
            i64::MAX as u64,
            1 << 32,               // low word 0, a valid-looking low word
            (1 << 32) + 1,         // hi 1, lo 1
            0xffff_ffff_0000_0000, // -2^32
            0xffff_fffe_ffff_ffff, // hi not all ones, lo like -1
            0xffff_ffff,           // 2^32 - 1: positive, hi 0
        ]),
        DataType::Uint64 => v.extend([u64::MAX, 1 << 32, (1 << 32) + 1, 1 << 63, 0xffff_ffff]),
        DataType::Int32 => v.extend([
            (-(len as i64) - 1) as u64,
            0x8000_0000,
            0x7fff_ffff,
            0xffff_ff00,
        ]),
        DataType::Uint32 => v.extend([0xffff_ffff, 0x8000_0000]),
        _ => unreachable!(),
    }
    v
}

/// Bad indices: `ExecError::Index` for the lowest bad position, phrased by
/// `scatter_elements_index_error` exactly as the CPU reference says it.
#[test]
fn out_of_range_indices_are_reported() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0xbad);
    let mut cases = 0;
    for data in [
        DataType::Float64,
        DataType::Uint8,
        DataType::Float16,
        DataType::Int32,
    ] {
        for index in INDEX_TYPES {
            for (b, &bad) in bad_values(index, 5).iter().enumerate() {
                let rank = 1 + b % 4;
                let axis = b % rank;
                let mut call = random_call(data, index, rank, axis, Spread::Full, &mut rng);
                // Resize the axis to 5 so that the bad values are bad.
                let mut sizes = call.input.sizes().to_vec();
                sizes[axis] = 5;
                call.input = data_tensor(data, &sizes, &mut rng);
                let n = call.indices.len();
                let values = index_values(index, 5, n, Spread::Full, &mut rng);
                let mut bytes = index_tensor(index, call.indices.sizes(), &values).into_bytes();
                let w = index.size_bytes();
                let mut bad_at: Vec<usize> = (0..1 + b % 3)
                    .map(|_| rng.below(n as u64) as usize)
                    .collect();
                bad_at.sort_unstable();
                let lowest = bad_at[0];
                for &p in &bad_at {
                    bytes[p * w..(p + 1) * w].copy_from_slice(&bad.to_le_bytes()[..w]);
                }
                call.indices = HostTensor::from_bytes(call.indices.desc().clone(), bytes).unwrap();
                let what = format!("{} bad {bad:#x} at {bad_at:?}", call.what());
                let cpu = call.cpu().expect_err(&what);
                assert!(
                    matches!(&cpu, OpError::IndexOutOfRange { tensor, .. } if tensor == "IndicesTensor"),
                    "{what}: {cpu}"
                );
                for strategy in STRATEGIES {
                    let plan = call.plan_with(Some(strategy)).unwrap();
                    let what = format!("{what} {strategy:?}");
                    match call.gpu(ctx, &plan) {
                        Err(ExecError::Index { check, position }) => {
                            assert_eq!(check, 0, "{what}");
                            assert_eq!(plan.index_checks[check], 1, "{what}");
                            assert_eq!(position, lowest as u64, "{what}");
                            let e = scatter_elements_index_error(
                                call.input.desc(),
                                &call.indices,
                                axis,
                                "IndicesTensor",
                                position,
                            );
                            assert_eq!(e, cpu, "{what}");
                        }
                        other => panic!("{what}: {other:?}"),
                    }
                }
                cases += 1;
            }
        }
    }
    assert!(cases > 50);
}

/// Many columns (more than the hardware tuning's `columns_min`): the
/// geometry picks the one-pass `Columns` algorithm; neighbouring columns
/// share the words of 8- and 16-bit outputs, and many updates of a column
/// collide.
#[test]
fn wide_scatters_run_in_one_pass() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0x3c01);
    let cols = ScatterTuning::of(DeviceClass::Hardware).columns_min as u32 + 37;
    for (data, index) in [
        (DataType::Uint8, DataType::Int32),
        (DataType::Float16, DataType::Int64),
        (DataType::Float64, DataType::Uint32),
    ] {
        let (rows, k) = (3u32, 12u32);
        let n = (k * cols) as usize;
        let values = index_values(index, rows, n, Spread::Full, &mut rng);
        let call = Call {
            input: data_tensor(data, &[rows, cols], &mut rng),
            indices: index_tensor(index, &[k, cols], &values),
            updates: data_tensor(data, &[k, cols], &mut rng),
            axis: 0,
        };
        let plan = call.plan().unwrap();
        assert_eq!(plan.passes.len(), 1);
        assert!(plan.scratch_bytes.is_empty());
        call.check_with(ctx, "wide", None);
    }
}

/// 8- and 16-bit data a word of columns per thread (`ColumnWords`, plain
/// word stores): along the first and the last axis, with inner sizes of
/// whole words, unique targets and heavy collisions, and a bad index in a
/// word's later column reported at its own position.
#[test]
fn column_words_store_whole_words() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0xc01d);
    let mut runs = 0;
    for data in [DataType::Float16, DataType::Uint8, DataType::Int16] {
        for index in [DataType::Int32, DataType::Int64] {
            for (sizes, axis) in [
                (vec![3u32, 5, 8], 1usize),
                (vec![6, 12], 0),
                (vec![4, 8], 0),
            ] {
                for spread in [Spread::Full, Spread::Tiny] {
                    let mut index_sizes = sizes.clone();
                    index_sizes[axis] = 2 + rng.below(7) as u32;
                    let n: usize = index_sizes.iter().map(|&s| s as usize).product();
                    let values = index_values(index, sizes[axis], n, spread, &mut rng);
                    let call = Call {
                        input: data_tensor(data, &sizes, &mut rng),
                        indices: index_tensor(index, &index_sizes, &values),
                        updates: data_tensor(data, &index_sizes, &mut rng),
                        axis,
                    };
                    call.check_forced(ctx, ScatterStrategy::ColumnWords, "scatter_column_words");
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 3 * 2 * 3 * 2);
    // A bad index in the second column of a word: its own position.
    let sizes = [4u32, 6];
    let values: Vec<i64> = vec![0, 1, 2, 3, 0, 9, 1, 2, 3, 0, 1, 2];
    let call = Call {
        input: data_tensor(DataType::Float16, &sizes, &mut rng),
        indices: index_tensor(DataType::Int32, &[2, 6], &values),
        updates: data_tensor(DataType::Float16, &[2, 6], &mut rng),
        axis: 0,
    };
    let plan = call.plan_with(Some(ScatterStrategy::ColumnWords)).unwrap();
    match call.gpu(ctx, &plan) {
        Err(ExecError::Index { position, .. }) => assert_eq!(position, 5),
        other => panic!("{other:?}"),
    }
}

/// A vector of columns per thread (`ColumnVectors`: 16 / element bytes
/// neighbouring columns, the workgroup's threads in lock step), for every
/// data type: walks longer than `LOCKSTEP_ROWS`, more than one workgroup
/// with idle threads in the last, unique targets and heavy collisions,
/// indices read as whole vectors (INT32 and INT64 for data no wider) and a
/// word at a time (INT32 for 64-bit data). Bad indices: the lowest
/// position wins across threads and rows, also when another thread's bad
/// index lies in an earlier lock-step window, and a bad index in a
/// vector's later column is reported at its own position.
#[test]
fn column_vectors_walk_in_lock_step() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0x7ec);
    let mut runs = 0;
    for data in DataType::ALL {
        let per = 16 / data.size_bytes() as u32;
        for index in [DataType::Int32, DataType::Int64] {
            // [outer, axis, inner] along the axis: 1 or 2 workgroups + 3 threads.
            let threads = if runs % 2 == 0 { 3 } else { WORKGROUP_SIZE + 3 };
            for (sizes, axis, walk) in [
                (vec![2u32, 5, 2 * per], 1usize, 3u32),
                (vec![9, threads * per], 0, LOCKSTEP_ROWS + 9),
            ] {
                for spread in [Spread::Full, Spread::Tiny] {
                    let mut index_sizes = sizes.clone();
                    index_sizes[axis] = walk;
                    let n: usize = index_sizes.iter().map(|&s| s as usize).product();
                    let values = index_values(index, sizes[axis], n, spread, &mut rng);
                    let call = Call {
                        input: data_tensor(data, &sizes, &mut rng),
                        indices: index_tensor(index, &index_sizes, &values),
                        updates: data_tensor(data, &index_sizes, &mut rng),
                        axis,
                    };
                    call.check_forced(
                        ctx,
                        ScatterStrategy::ColumnVectors,
                        "scatter_column_vectors",
                    );
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, DataType::ALL.len() * 2 * 2 * 2);
    // FLOAT32 [9, 4 * 259] along axis 0, walks of 80 rows: 259 threads.
    let (rows, cols, walk) = (9u32, 4 * 259u32, 80u32);
    let n = (walk * cols) as usize;
    let good = index_values(DataType::Int32, rows, n, Spread::Full, &mut rng);
    let bad_run = |bad_at: &[usize]| {
        let mut values = good.clone();
        for &p in bad_at {
            values[p] = i64::from(rows) + 3;
        }
        let call = Call {
            input: data_tensor(DataType::Float32, &[rows, cols], &mut Rng::new(5)),
            indices: index_tensor(DataType::Int32, &[walk, cols], &values),
            updates: data_tensor(DataType::Float32, &[walk, cols], &mut Rng::new(6)),
            axis: 0,
        };
        let plan = call
            .plan_with(Some(ScatterStrategy::ColumnVectors))
            .unwrap();
        match call.gpu(ctx, &plan) {
            Err(ExecError::Index { position, .. }) => position,
            other => panic!("bad at {bad_at:?}: {other:?}"),
        }
    };
    let at = |row: u32, col: u32| (row * cols + col) as usize;
    // The third column of a vector: its own position, not the vector's.
    assert_eq!(bad_run(&[at(2, 6)]), at(2, 6) as u64);
    // Two threads: one bad in row 70 (second window), one in row 3; and in
    // the last workgroup's only thread's columns, rows 1 and 75.
    assert_eq!(bad_run(&[at(70, 1), at(3, 9)]), at(3, 9) as u64);
    assert_eq!(
        bad_run(&[at(75, cols - 1), at(1, cols - 2)]),
        at(1, cols - 2) as u64
    );
    assert_eq!(bad_run(&[at(79, 0)]), at(79, 0) as u64);
}

/// Just-in-range extremes: `-len` and `len - 1` for every index type, on
/// wide 64-bit index values that only the low word tells apart.
#[test]
fn boundary_indices() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0xb0);
    for index in INDEX_TYPES {
        for data in [DataType::Float64, DataType::Int8, DataType::Uint16] {
            let len = 7u32;
            let mut values: Vec<i64> = vec![6, 0, 5];
            if index.is_signed_int() {
                values.extend([-7, -1, -6]);
            }
            let k = values.len() as u32;
            let call = Call {
                input: data_tensor(data, &[3, len], &mut rng),
                indices: index_tensor(index, &[3, k], &values.repeat(3)),
                updates: data_tensor(data, &[3, k], &mut rng),
                axis: 1,
            };
            call.check(ctx, "boundaries");
        }
    }
}

/// No updates: no pass, the output is the input. An empty axis with
/// updates: every index is out of range.
#[test]
fn empty_tensors() {
    let ctx = ctx();
    let mut rng = Rng::new(3);
    let call = Call {
        input: data_tensor(DataType::Float16, &[2, 3], &mut rng),
        indices: index_tensor(DataType::Int64, &[2, 0], &[]),
        updates: data_tensor(DataType::Float16, &[2, 0], &mut rng),
        axis: 1,
    };
    assert!(call.plan().unwrap().passes.is_empty());
    call.check(ctx, "no updates");
    let call = Call {
        input: data_tensor(DataType::Int8, &[0, 3], &mut rng),
        indices: index_tensor(DataType::Uint32, &[0, 2], &[]),
        updates: data_tensor(DataType::Int8, &[0, 2], &mut rng),
        axis: 1,
    };
    call.check(ctx, "empty input");
    let call = Call {
        input: data_tensor(DataType::Uint64, &[2, 0], &mut rng),
        indices: index_tensor(DataType::Int32, &[2, 1], &[0, -1]),
        updates: data_tensor(DataType::Uint64, &[2, 1], &mut rng),
        axis: 1,
    };
    let cpu = call.cpu().unwrap_err();
    assert!(
        matches!(&cpu, OpError::IndexOutOfRange { position, low: 0, high: -1, .. } if *position == [0, 0]),
        "{cpu}"
    );
    match call.gpu(ctx, &call.plan().unwrap()) {
        Err(ExecError::Index { check: 0, position }) => {
            assert_eq!(position, 0);
            let e = scatter_elements_index_error(
                call.input.desc(),
                &call.indices,
                1,
                "IndicesTensor",
                position,
            );
            assert_eq!(e, cpu);
        }
        other => panic!("{other:?}"),
    }
}

/// More than 65,535 workgroups: the runtime spreads them over x and y and
/// the kernels linearise `x + y * num_workgroups.x`, guarding the tail.
#[test]
fn two_dimensional_grid() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0x2d);
    let n = 65_536 * WORKGROUP_SIZE as usize + 3;
    let len = 1000u32;
    let values: Vec<i64> = (0..n).map(|_| rng.range(-1000, 999)).collect();
    let call = Call {
        input: data_tensor(DataType::Uint8, &[len], &mut rng),
        indices: index_tensor(DataType::Int32, &[n as u32], &values),
        updates: data_tensor(DataType::Uint8, &[n as u32], &mut rng),
        axis: 0,
    };
    let plan = call.plan().unwrap();
    assert!(plan.passes.iter().all(|p| p.workgroups == 65_537));
    let want = call.cpu().unwrap();
    let got = call.gpu(ctx, &plan).unwrap();
    assert!(
        got.bytes() == want.bytes(),
        "{}",
        first_difference(DataType::Uint8, got.bytes(), want.bytes())
    );
}
