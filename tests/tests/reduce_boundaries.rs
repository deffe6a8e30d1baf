//! Correct at every size: every kernel variant the reduce planner can
//! choose, run on the GPU against the CPU reference at the sizes where its
//! plans change.
//!
//! The boundaries are not listed by hand. Each family of shapes varies one
//! extent (a row's length, the rows of a column reduction, the outputs) in
//! steps that keep its 16-byte alignment fixed, and the planner itself is
//! asked for its strategy at every step of a range, on both device
//! classes: every step where the strategy's shape changes (its variants,
//! its team sizes, one chunk or several, its combine team, phases or
//! segments) is a boundary, and the steps just below, at and above it run.
//! So a threshold added to the planner adds its boundaries here by itself.
//! Beside those, in each stretch of one shape, the first step whose last
//! chunk holds a single position runs (the chunk arithmetic's edge).
//!
//! At each such size every strategy of `ReduceGeometry::strategies` runs
//! (the planner's picks on both classes, the word strategies past their
//! thresholds, the column strategies split and not, both combine
//! variants), for 8-, 16-, 32- and 64-bit data, with data whose elements
//! are all equal (ties everywhere), data of NaNs and signed zeros (integer
//! extremes for integers) and random data, through ArgMin, ArgMax (both
//! tie rules), ReduceMin and ReduceMax; the planner's own picks also
//! through their segmented kernels, the input bound in 2 to 4 segments
//! (`segmented_context_for`). Sizes above [`MAX_ELEMENTS`] are counted and
//! printed, not run.
//!
//! Without a GPU, `no_split_plan_has_an_empty_chunk` checks every step of
//! every range: each split plan's chunks cover the reduced positions with
//! none empty.

use std::collections::{BTreeSet, HashMap};

use ops_core::family::reduce::{
    params, per_vector, reduce_cpu, reduce_plan, reduce_plan_with, Keep, ReduceCall, ReduceConfig,
    ReduceGeometry, ReduceStrategy, ReduceVariant, Select, Ties, Zeros, WORKGROUP_SIZE,
};
use ops_core::family::reduce::{reduce_kernel, reduce_kernel_key, REDUCE_BINDINGS, REDUCE_ENTRY};
use ops_core::fuzz::Rng;
use ops_core::{DataType, DeviceClass, HostTensor, Kernel, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu, segmented_context_for};

const ORIGIN: &str = "tests/tests/reduce_boundaries.rs";

/// Largest input run on the GPU (elements); larger boundary sizes are
/// reported, not run.
const MAX_ELEMENTS: u64 = 3 << 20;

/// Inputs above this many elements run each strategy with one kind of
/// data, in turn, instead of all three.
const ALL_DATA_ELEMENTS: u64 = 1 << 17;

/// One data type of each width.
const DTYPES: [DataType; 4] = [
    DataType::Uint8,
    DataType::Float16,
    DataType::Float32,
    DataType::Int64,
];

/// A family of shapes: `sizes(n)` for the scanned extent `n = first + k *
/// step`, `k` up to `steps`, reduced over `axes`.
struct Family {
    name: &'static str,
    axes: &'static [u32],
    sizes: fn(u64, DataType) -> Vec<u32>,
    /// The scanned extent's step and offset, in elements, for a data type:
    /// steps of whole vectors keep the alignment of the shape fixed.
    step: fn(DataType) -> (u64, u64),
    /// The largest scanned extent.
    max: u64,
}

fn whole(dt: DataType) -> (u64, u64) {
    (per_vector(dt), per_vector(dt))
}

fn ragged(dt: DataType) -> (u64, u64) {
    (per_vector(dt), per_vector(dt) + 1)
}

fn ones(_: DataType) -> (u64, u64) {
    (1, 1)
}

/// Steps of 16: a multiple of every inner block's phases.
fn sixteens(_: DataType) -> (u64, u64) {
    (16, 16)
}

/// Steps of 16 off by one: never a multiple of two phases.
fn sixteens_off(_: DataType) -> (u64, u64) {
    (16, 17)
}

fn n32(n: u64) -> u32 {
    u32::try_from(n).unwrap()
}

/// The shape families: rows (whole vectors and ragged), columns (inner
/// blocks of whole vectors and not), a middle axis, segmented rows, and a
/// reduction no vector layout reads.
fn families() -> Vec<Family> {
    vec![
        Family {
            name: "[n] all axes",
            axes: &[0],
            sizes: |n, _| vec![n32(n)],
            step: whole,
            max: 300_000,
        },
        Family {
            name: "[n] all axes, ragged",
            axes: &[0],
            sizes: |n, _| vec![n32(n)],
            step: ragged,
            max: 300_000,
        },
        Family {
            name: "[3, n] inner axis",
            axes: &[1],
            sizes: |n, _| vec![3, n32(n)],
            step: whole,
            max: 300_000,
        },
        Family {
            name: "[3, n] inner axis, ragged",
            axes: &[1],
            sizes: |n, _| vec![3, n32(n)],
            step: ragged,
            max: 300_000,
        },
        Family {
            name: "[n, one vector] outer axis",
            axes: &[0],
            sizes: |n, dt| vec![n32(n), n32(per_vector(dt))],
            step: ones,
            max: 140_000,
        },
        Family {
            name: "[n, 3] outer axis",
            axes: &[0],
            sizes: |n, _| vec![n32(n), 3],
            step: sixteens,
            max: 140_000,
        },
        Family {
            name: "[n, 3] outer axis, rows not a multiple of the phases",
            axes: &[0],
            sizes: |n, _| vec![n32(n), 3],
            step: sixteens_off,
            max: 140_000,
        },
        Family {
            name: "[64, n] outer axis, columns scanned",
            axes: &[0],
            sizes: |n, _| vec![64, n32(n)],
            step: whole,
            max: 20_000,
        },
        Family {
            name: "[2, n, 8] middle axis",
            axes: &[1],
            sizes: |n, _| vec![2, n32(n), 8],
            step: sixteens,
            max: 60_000,
        },
        Family {
            name: "[2, 3, n] first and last axes",
            axes: &[0, 2],
            sizes: |n, _| vec![2, 3, n32(n)],
            step: whole,
            max: 200_000,
        },
        Family {
            name: "[n, 3, 2] first and last axes",
            axes: &[0, 2],
            sizes: |n, _| vec![n32(n), 3, 2],
            step: ones,
            max: 140_000,
        },
    ]
}

/// The extents a family scans for a data type.
fn extents(f: &Family, dt: DataType) -> impl Iterator<Item = u64> {
    let (step, first) = (f.step)(dt);
    let max = f.max;
    (0..)
        .map(move |k| first + k * step)
        .take_while(move |&n| n <= max)
}

/// What makes two plans of one family differ in kind: the strategy with
/// its chunk count reduced to one or several.
fn shape_of(s: ReduceStrategy) -> ReduceStrategy {
    let several = |c: u32| c.min(2);
    match s {
        ReduceStrategy::SplitRows {
            chunks,
            combine_team,
        } => ReduceStrategy::SplitRows {
            chunks: several(chunks),
            combine_team,
        },
        ReduceStrategy::SplitTree {
            team,
            chunks,
            combine_team,
        } => ReduceStrategy::SplitTree {
            team,
            chunks: several(chunks),
            combine_team,
        },
        ReduceStrategy::SplitLanes {
            segments,
            team,
            chunks,
            combine_team,
        } => ReduceStrategy::SplitLanes {
            segments,
            team,
            chunks: several(chunks),
            combine_team,
        },
        ReduceStrategy::SplitLanesTree {
            segments,
            team,
            chunks,
            combine_team,
        } => ReduceStrategy::SplitLanesTree {
            segments,
            team,
            chunks: several(chunks),
            combine_team,
        },
        ReduceStrategy::SplitLanesRagged {
            segments,
            team,
            chunks,
            combine_team,
        } => ReduceStrategy::SplitLanesRagged {
            segments,
            team,
            chunks: several(chunks),
            combine_team,
        },
        ReduceStrategy::SplitColumns {
            phases,
            chunks,
            combine_team,
        } => ReduceStrategy::SplitColumns {
            phases,
            chunks: several(chunks),
            combine_team,
        },
        s => s,
    }
}

/// A kernel standing for a variant where only the plan's shape matters.
fn placeholder(v: ReduceVariant) -> Option<&'static Kernel> {
    static KERNELS: std::sync::OnceLock<HashMap<ReduceVariant, &'static Kernel>> =
        std::sync::OnceLock::new();
    KERNELS
        .get_or_init(|| {
            ReduceVariant::ALL
                .into_iter()
                .map(|v| {
                    let k: &'static Kernel = Box::leak(Box::new(Kernel::new(
                        v.name(),
                        "",
                        REDUCE_ENTRY,
                        REDUCE_BINDINGS,
                        WORKGROUP_SIZE,
                    )));
                    (v, k)
                })
                .collect()
        })
        .get(&v)
        .copied()
}

const ARG_MIN: ReduceConfig = ReduceConfig {
    keep: Keep::Index,
    select: Select::Min,
    zeros: Zeros::Equal,
};

/// The positions one chunk of a split pass covers and how many there are
/// to cover, from the pass's parameter words; `None` for one-pass plans.
fn chunking(variant: &str, p: &[u32], dt: DataType) -> Option<(u64, u64, u64)> {
    let word = |i: usize| u64::from(p[i]);
    let chunks = word(params::CHUNK_COUNT);
    let extent = match variant {
        "reduce_split_rows" | "reduce_split_tree" => word(params::REDUCE_LEN),
        "reduce_split_columns" => word(params::REDUCE_LEN) / word(params::PHASES),
        "reduce_split_lanes" | "reduce_split_lanes_tree" | "reduce_split_lanes_ragged" => {
            word(params::VECTORS) * per_vector(dt)
        }
        _ => return None,
    };
    Some((word(params::CHUNK_LEN), chunks, extent))
}

/// Steps of a family checked one by one before [`no_split_plan_has_an_empty_chunk`]
/// takes every [`SPARSE_STRIDE`]th.
const DENSE_STEPS: usize = 8192;
const SPARSE_STRIDE: usize = 7;

/// Every step of every family (every seventh past the first 8192), every
/// strategy: a split plan's chunks cover its positions, and its last chunk
/// is not empty.
#[test]
fn no_split_plan_has_an_empty_chunk() {
    let mut split_plans = 0u64;
    for f in families() {
        for dt in DTYPES {
            let out_dt = DataType::Uint32;
            let steps = extents(&f, dt)
                .enumerate()
                .filter(|&(k, _)| k < DENSE_STEPS || k % SPARSE_STRIDE == 0);
            for (_, n) in steps {
                let sizes = (f.sizes)(n, dt);
                let g = ReduceGeometry::new(&sizes, f.axes).unwrap();
                let input = TensorDesc::new(dt, sizes.clone());
                let out = TensorDesc::new(out_dt, [n32(g.output_count)]);
                for s in g.strategies(dt) {
                    let plan = reduce_plan_with(
                        &ReduceCall {
                            cfg: &ARG_MIN,
                            ties: Ties::First,
                            input: &input,
                            input_slot: 0,
                            axes: f.axes,
                            output: &out,
                            output_slot: 0,
                            kernel: &placeholder,
                        },
                        s,
                    )
                    .unwrap_or_else(|e| panic!("{} {dt} n={n} {s:?}: {e}", f.name));
                    let pass = &plan.passes[0];
                    let Some((chunk, chunks, extent)) = chunking(pass.kernel.key, &pass.params, dt)
                    else {
                        continue;
                    };
                    split_plans += 1;
                    assert!(
                        chunk * chunks >= extent && (chunks - 1) * chunk < extent,
                        "{} {dt} n={n} {s:?}: {chunks} chunks of {chunk} for {extent} positions",
                        f.name
                    );
                }
            }
        }
    }
    assert!(split_plans > 10_000, "{split_plans} split plans checked");
    println!("{split_plans} split plans checked");
}

/// The sizes to run for one family and data type: around every change of
/// the planner's strategy shape on either class, and each stretch's first
/// size whose last chunk holds one position.
///
/// The first [`DENSE_STEPS`] steps are asked one by one, later ones about
/// every 0.4% of the extent, and a change between two samples is bisected
/// to its step (the planners' thresholds grow with the extent: a shape
/// does not come back within 0.4%).
fn boundaries(f: &Family, dt: DataType) -> BTreeSet<u64> {
    let (step, first) = (f.step)(dt);
    let count = (f.max - first) / step + 1;
    let n_of = |k: u64| first + k * step;
    let mut out = BTreeSet::new();
    for class in [DeviceClass::Software, DeviceClass::Hardware] {
        let strategy = |k: u64| {
            let g = ReduceGeometry::new(&(f.sizes)(n_of(k), dt), f.axes).unwrap();
            g.strategy_on(dt, class)
        };
        let mut samples = Vec::new();
        let mut k = 0;
        while k < count {
            samples.push(k);
            k += if k < DENSE_STEPS as u64 { 1 } else { k / 256 };
        }
        samples.push(count - 1);
        // The first step of each new shape; a change between the same two
        // shapes twice at most (chunk counts rounded to even chunks can
        // cross a combine team's threshold back and forth).
        let mut starts = vec![0];
        let mut seen: HashMap<(ReduceStrategy, ReduceStrategy), usize> = HashMap::new();
        for pair in samples.windows(2) {
            let (mut lo, mut hi) = (pair[0], pair[1]);
            if lo == hi || shape_of(strategy(lo)) == shape_of(strategy(hi)) {
                continue;
            }
            let low_shape = shape_of(strategy(lo));
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if shape_of(strategy(mid)) == low_shape {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            starts.push(hi);
            let times = seen.entry((low_shape, shape_of(strategy(hi)))).or_default();
            *times += 1;
            if *times > 2 {
                continue;
            }
            for m in [hi - 1, hi, hi + 1] {
                if m < count {
                    out.insert(n_of(m));
                }
            }
        }
        // Each stretch's first step (within DENSE_STEPS of its start) whose
        // last chunk holds one position.
        for (i, &start) in starts.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(count);
            for k in start..end.min(start + DENSE_STEPS as u64) {
                let n = n_of(k);
                let sizes = (f.sizes)(n, dt);
                let g = ReduceGeometry::new(&sizes, f.axes).unwrap();
                let input = TensorDesc::new(dt, sizes.clone());
                let out_desc = TensorDesc::new(DataType::Uint32, [n32(g.output_count)]);
                let plan = reduce_plan(
                    &ReduceCall {
                        cfg: &ARG_MIN,
                        ties: Ties::First,
                        input: &input,
                        input_slot: 0,
                        axes: f.axes,
                        output: &out_desc,
                        output_slot: 0,
                        kernel: &placeholder,
                    },
                    class,
                )
                .unwrap();
                let Some(pass) = plan.passes.first() else {
                    continue;
                };
                match chunking(pass.kernel.key, &pass.params, dt) {
                    Some((chunk, chunks, extent)) if chunks > 1 => {
                        if (chunks - 1) * chunk + 1 == extent {
                            out.insert(n);
                            break;
                        }
                    }
                    // One pass, or one chunk: no tail in this stretch.
                    _ => break,
                }
            }
        }
    }
    out
}

/// An operator under test.
struct Op {
    name: &'static str,
    cfg: ReduceConfig,
}

const OPS: [Op; 4] = [
    Op {
        name: "ArgMin",
        cfg: ARG_MIN,
    },
    Op {
        name: "ArgMax",
        cfg: ReduceConfig {
            keep: Keep::Index,
            select: Select::Max,
            zeros: Zeros::Equal,
        },
    },
    Op {
        name: "ReduceMin",
        cfg: ReduceConfig {
            keep: Keep::Value,
            select: Select::Min,
            zeros: Zeros::NegativeFirst,
        },
    },
    Op {
        name: "ReduceMax",
        cfg: ReduceConfig {
            keep: Keep::Value,
            select: Select::Max,
            zeros: Zeros::NegativeFirst,
        },
    },
];

/// The data of a run.
#[derive(Clone, Copy, Debug)]
enum Data {
    /// Every element the same: ties everywhere.
    AllEqual,
    /// NaNs and signed zeros (integers: their extremes and zero).
    NanAndZeros,
    /// Random bits.
    Random,
}

fn words(dt: DataType, data: Data, count: u64, rng: &mut Rng) -> Vec<u64> {
    let mask = if dt.size_bits() == 64 {
        u64::MAX
    } else {
        (1u64 << dt.size_bits()) - 1
    };
    let specials: Vec<u64> = match dt {
        DataType::Float16 => vec![0x7e00, 0xfe01, 0x0000, 0x8000],
        DataType::Float32 => vec![0x7fc0_0000, 0xff80_0001, 0, 0x8000_0000],
        DataType::Float64 => vec![0x7ff8_0000_0000_0000, 0, 0x8000_0000_0000_0000],
        _ => vec![0, mask, mask >> 1, (mask >> 1) + 1],
    };
    match data {
        Data::AllEqual => {
            let v = rng.next_u64() & mask;
            vec![v; count as usize]
        }
        Data::NanAndZeros => (0..count)
            .map(|_| specials[rng.below(specials.len() as u64) as usize])
            .collect(),
        Data::Random => (0..count).map(|_| rng.next_u64() & mask).collect(),
    }
}

fn tensor(dt: DataType, sizes: &[u32], words: &[u64]) -> HostTensor {
    let w = dt.size_bytes();
    let bytes = words
        .iter()
        .flat_map(|v| v.to_le_bytes().into_iter().take(w))
        .collect();
    HostTensor::from_bytes(TensorDesc::new(dt, sizes.to_vec()), bytes).unwrap()
}

/// The generated kernels of every variant for one configuration and pair
/// of data types, compiled once per test process.
fn kernel(op: &Op, v: ReduceVariant, input: DataType, output: DataType) -> &'static Kernel {
    type Key = (&'static str, ReduceVariant, DataType, DataType);
    static CACHE: std::sync::Mutex<Option<HashMap<Key, &'static Kernel>>> =
        std::sync::Mutex::new(None);
    let mut cache = CACHE.lock().unwrap();
    cache
        .get_or_insert_with(HashMap::new)
        .entry((op.name, v, input, output))
        .or_insert_with(|| {
            // Keys of their own: the catalog's kernels share the context's cache.
            let key = reduce_kernel_key(&format!("boundaries/{}", op.name), v, input, output);
            let wgsl = reduce_kernel(&op.cfg, v, input, output, &key, ORIGIN);
            ops_spec::wgsl::segments::leak_kernel(
                &key,
                &wgsl,
                REDUCE_ENTRY,
                REDUCE_BINDINGS,
                WORKGROUP_SIZE,
            )
        })
}

/// Runs every strategy of one size through every data kind, each with an
/// operator and tie rule in turn, against the CPU reference.
fn run_size(f: &Family, dt: DataType, n: u64, turn: &mut usize, rng: &mut Rng) -> usize {
    let ctx = gpu();
    let sizes = (f.sizes)(n, dt);
    let g = ReduceGeometry::new(&sizes, f.axes).unwrap();
    let mut runs = 0;
    let all_data = g.input_count <= ALL_DATA_ELEMENTS;
    let picked = [DeviceClass::Software, DeviceClass::Hardware].map(|c| g.strategy_on(dt, c));
    for (d, data) in [Data::AllEqual, Data::NanAndZeros, Data::Random]
        .into_iter()
        .enumerate()
    {
        let input = tensor(dt, &sizes, &words(dt, data, g.input_count, rng));
        for (i, s) in g.strategies(dt).into_iter().enumerate() {
            if !all_data && (i + n as usize) % 3 != d {
                continue;
            }
            *turn += 1;
            let op = &OPS[*turn % OPS.len()];
            let ties = if (*turn / OPS.len()).is_multiple_of(2) {
                Ties::Last
            } else {
                Ties::First
            };
            let out_dt = match op.cfg.keep {
                Keep::Value => dt,
                Keep::Index => [DataType::Uint32, DataType::Int64, DataType::Int32][*turn % 3],
            };
            let out = TensorDesc::new(out_dt, [n32(g.output_count)]);
            let what = format!(
                "{} {} {dt} n={n} {sizes:?} {data:?} {ties:?} {s:?}",
                f.name, op.name
            );
            let want = reduce_cpu(&op.cfg, ties, &input, f.axes, &out)
                .unwrap_or_else(|e| panic!("{what}: cpu: {e}"));
            let plan = reduce_plan_with(
                &ReduceCall {
                    cfg: &op.cfg,
                    ties,
                    input: input.desc(),
                    input_slot: 0,
                    axes: f.axes,
                    output: &out,
                    output_slot: 0,
                    kernel: &|v| Some(kernel(op, v, dt, out_dt)),
                },
                s,
            )
            .unwrap_or_else(|e| panic!("{what}: plan: {e}"));
            let got = ctx
                .execute(&plan, &[&input], std::slice::from_ref(&out))
                .unwrap_or_else(|e| panic!("{what}: gpu: {e:?}"));
            assert_bitwise_eq(&got[0], &want, &what);
            runs += 1;
            // The planner's picks also through their segmented kernels, the
            // largest buffer bound in 2 to 4 segments (one kind of data each).
            let bytes = plan
                .scratch_bytes
                .iter()
                .fold(g.input_count * dt.size_bytes() as u64, |a, &b| a.max(b));
            if picked.contains(&s) && d == n as usize % 3 {
                if let Some(seg) = segmented_context_for(bytes) {
                    let got = seg
                        .execute(&plan, &[&input], std::slice::from_ref(&out))
                        .unwrap_or_else(|e| panic!("{what}: segmented: {e:?}"));
                    assert_bitwise_eq(&got[0], &want, &format!("{what}, segmented"));
                    runs += 1;
                }
            }
        }
    }
    runs
}

/// The boundary suite: every family, data type, boundary size and
/// strategy on the GPU.
#[test]
fn every_variant_at_its_boundaries() {
    let mut rng = Rng::new(0x0b0d_a7e5);
    let (mut sizes_run, mut runs, mut skipped) = (0usize, 0usize, Vec::new());
    let mut turn = 0usize;
    let mut ran: BTreeSet<&'static str> = BTreeSet::new();
    let start = std::time::Instant::now();
    for f in families() {
        for dt in DTYPES {
            let list = boundaries(&f, dt);
            let elements: u64 = list
                .iter()
                .map(|&n| {
                    ReduceGeometry::new(&(f.sizes)(n, dt), f.axes)
                        .unwrap()
                        .input_count
                })
                .sum();
            eprintln!(
                "{:>7.1}s {} {dt}: {} sizes, {elements} elements",
                start.elapsed().as_secs_f64(),
                f.name,
                list.len()
            );
            for n in list {
                let sizes = (f.sizes)(n, dt);
                let g = ReduceGeometry::new(&sizes, f.axes).unwrap();
                if g.input_count > MAX_ELEMENTS {
                    skipped.push(format!("{} {dt} {sizes:?}", f.name));
                    continue;
                }
                for s in g.strategies(dt) {
                    ran.extend(s.variants().iter().map(|v| v.name()));
                }
                runs += run_size(&f, dt, n, &mut turn, &mut rng);
                sizes_run += 1;
            }
        }
    }
    println!(
        "{sizes_run} sizes, {runs} GPU runs; {} sizes above {MAX_ELEMENTS} elements not run: {skipped:?}",
        skipped.len()
    );
    // Every variant of the planner ran somewhere.
    for v in ReduceVariant::ALL {
        assert!(ran.contains(v.name()), "{} never ran", v.name());
    }
}

/// The shapes that once gave wrong answers (a split column reduction whose
/// last chunks were empty), through the catalog's operators, every plan
/// variant of each (both device classes' plans among them), against the
/// CPU reference and the value known to be right.
#[test]
fn long_column_reductions_regressions() {
    use ops::{argmax, argmin, ArgMaxDesc, ArgMinDesc, ReduceMinDesc};
    use ops_core::Operator;
    let ctx = gpu();
    let check = |op: &dyn Operator, inputs: &[&HostTensor], want: &dyn Fn(&HostTensor)| {
        let cpu = op.run_cpu(inputs).unwrap();
        want(&cpu[0]);
        let variants = op.gpu_plan_variants().unwrap();
        assert!(variants.len() >= 2, "{op:?}: {} plans", variants.len());
        for (name, plan) in &variants {
            let got = ctx
                .run_plan(op, inputs, plan)
                .unwrap_or_else(|e| panic!("{op:?} {name}: {e}"));
            assert_bitwise_eq(&got[0], &cpu[0], &format!("{op:?} {name}"));
        }
        for class in [DeviceClass::Software, DeviceClass::Hardware] {
            let plan = op.gpu_plan_for(class).unwrap();
            assert!(
                variants.iter().any(|(_, p)| *p == plan),
                "{class:?} plan listed"
            );
        }
    };
    let zeros = |dt: DataType, sizes: &[u32]| {
        HostTensor::zeros(TensorDesc::new(dt, sizes.to_vec())).unwrap()
    };
    // ReduceMin of FLOAT32 zeros over the rows of [5000, 2] and [20000, 2]:
    // zeros, not NaN.
    for rows in [1600u32, 1601, 5000, 20000] {
        for cols in [2u32, 4] {
            let x = zeros(DataType::Float32, &[rows, cols]);
            let axes = HostTensor::from_slice([1], &[0i64]).unwrap();
            let op = ReduceMinDesc::builder()
                .data(x.desc().clone())
                .axes(axes.clone())
                .build()
                .unwrap();
            check(&op, &[&x, &axes], &|out| {
                assert!(
                    out.bytes().iter().all(|&b| b == 0),
                    "ReduceMin [{rows}, {cols}]: {out:?}"
                )
            });
        }
    }
    // ArgMax DECREASING of FLOAT32 zeros [1601, 4] over axis 0: the last
    // row, 1600; ArgMin DECREASING of UINT8 [5000, 8]: 4999.
    for (dt, rows, cols) in [
        (DataType::Float32, 1601u32, 4u32),
        (DataType::Float32, 1600, 4),
        (DataType::Uint8, 5000, 8),
    ] {
        let x = zeros(dt, &[rows, cols]);
        let last = |out: &HostTensor| {
            for i in 0..out.len() {
                assert_eq!(
                    out.get_int(i),
                    Some(i128::from(rows - 1)),
                    "{dt} [{rows}, {cols}]"
                );
            }
        };
        let op = ArgMaxDesc::builder()
            .input(x.desc().clone())
            .output_dtype(DataType::Uint32)
            .axes([0])
            .axis_direction(argmax::AxisDirection::Decreasing)
            .build()
            .unwrap();
        check(&op, &[&x], &last);
        let op = ArgMinDesc::builder()
            .input(x.desc().clone())
            .output_dtype(DataType::Int64)
            .axes([0])
            .axis_direction(argmin::AxisDirection::Decreasing)
            .build()
            .unwrap();
        check(&op, &[&x], &last);
    }
    // ArgMax of [2, 1601, 4] over axis 1, the second slab larger: every
    // position within the first slab's rows.
    let mut values = vec![0f32; 2 * 1601 * 4];
    for v in &mut values[1601 * 4..] {
        *v = 5.0;
    }
    let x = HostTensor::from_slice([2, 1601, 4], &values).unwrap();
    let op = ArgMaxDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Uint32)
        .axes([1])
        .build()
        .unwrap();
    check(&op, &[&x], &|out| {
        for i in 0..out.len() {
            assert_eq!(out.get_int(i), Some(0), "ArgMax [2, 1601, 4] element {i}");
        }
    });
}
