//! The `reduce` pattern's WGSL kernels against its CPU reference.
//!
//! For the four operators' configurations (ArgMin, ArgMax, ReduceMin,
//! ReduceMax), every input data type, every output data type and every
//! kernel variant, the kernels are generated here with
//! `ops_core::family::reduce::wgsl`, run through `ops_gpu` on random and edge-value
//! inputs (NaN payloads, infinities, signed zeros, subnormals, integer
//! extremes, 64-bit values past 2^32 and 2^53, many ties) of ranks 1 to 4
//! over several axis sets, and compared bit for bit with `reduce_cpu`. The
//! shapes force the strategy (one pass of `Rows` or `Tree`, or a split pass
//! then `Combine`): each case asserts the one `reduce_plan` picked.
//!
//! Runs on whatever adapter `ops_gpu` finds (Mesa's lavapipe on machines
//! without a GPU); finding none is a failure, not a skip.

use std::collections::HashMap;

use ops_core::family::reduce::{
    phases, reduce_cpu, reduce_plan, Keep, ReduceCall, ReduceConfig, ReduceGeometry,
    ReduceStrategy, ReduceVariant, Select, Ties, Zeros, WORKGROUP_SIZE,
};
use ops_core::family::reduce::{reduce_kernel, reduce_kernel_key, REDUCE_BINDINGS, REDUCE_ENTRY};
use ops_core::fuzz::Rng;
use ops_core::{DataType, DeviceClass, HostTensor, Kernel, OpError, TensorDesc};
use ops_gpu::Context;

const ORIGIN: &str = "tests/tests/reduce_pattern_gpu.rs";

fn ctx() -> &'static Context {
    ops_gpu::shared().unwrap_or_else(|e| {
        panic!("the reduce kernels need a GPU adapter: {e} (install Mesa's lavapipe, `mesa-vulkan-drivers`)")
    })
}

/// An operator under test: its name, configuration and output types.
struct Op {
    name: &'static str,
    cfg: ReduceConfig,
    keep_index: bool,
}

const OPS: [Op; 4] = [
    Op {
        name: "ArgMin",
        cfg: ReduceConfig {
            keep: Keep::Index,
            select: Select::Min,
            zeros: Zeros::Equal,
        },
        keep_index: true,
    },
    Op {
        name: "ArgMax",
        cfg: ReduceConfig {
            keep: Keep::Index,
            select: Select::Max,
            zeros: Zeros::Equal,
        },
        keep_index: true,
    },
    Op {
        name: "ReduceMin",
        cfg: ReduceConfig {
            keep: Keep::Value,
            select: Select::Min,
            zeros: Zeros::NegativeFirst,
        },
        keep_index: false,
    },
    Op {
        name: "ReduceMax",
        cfg: ReduceConfig {
            keep: Keep::Value,
            select: Select::Max,
            zeros: Zeros::NegativeFirst,
        },
        keep_index: false,
    },
];

impl Op {
    fn outputs(&self, input: DataType) -> Vec<DataType> {
        if self.keep_index {
            vec![
                DataType::Int64,
                DataType::Int32,
                DataType::Uint64,
                DataType::Uint32,
            ]
        } else {
            vec![input]
        }
    }
}

/// Generates and leaks one kernel, as generated code holds them in statics.
fn kernel(op: &Op, variant: ReduceVariant, input: DataType, output: DataType) -> &'static Kernel {
    let key = reduce_kernel_key(op.name, variant, input, output);
    let wgsl = reduce_kernel(&op.cfg, variant, input, output, &key, ORIGIN);
    ops_spec::wgsl::segments::leak_kernel(
        &key,
        &wgsl,
        REDUCE_ENTRY,
        REDUCE_BINDINGS,
        WORKGROUP_SIZE,
    )
}

/// Every variant's kernel of one data-type pair.
fn kernels(op: &Op, input: DataType, output: DataType) -> HashMap<ReduceVariant, &'static Kernel> {
    ReduceVariant::ALL
        .into_iter()
        .map(|v| (v, kernel(op, v, input, output)))
        .collect()
}

/// The random seed: `OPS_REDUCE_SEED` (decimal or `0x` hex) or a fixed default.
fn seed() -> u64 {
    let parsed = std::env::var("OPS_REDUCE_SEED")
        .ok()
        .and_then(|s| match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        });
    parsed.filter(|&s| s != 0).unwrap_or(0x5eed_2024_0bad_cafe)
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
            0xffef_ffff_ffff_ffff, // -MAX
            0x3ff0_0000_0000_0000, // 1.0
            0x3ff0_0000_0000_0001, // 1.0 + ulp: differs in the low word only
            0xbff0_0000_0000_0001,
            (2f64.powi(53) + 2.0).to_bits(),
        ],
        DataType::Float32 => vec![
            0x7fc0_0000,
            0xff80_0001,
            0x7f80_0000,
            0xff80_0000,
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x3f80_0000,
            0xbf80_0000,
        ],
        DataType::Float16 => vec![
            0x7e00, 0xfc01, 0x7c00, 0xfc00, 0, 0x8000, 1, 0x8001, 0x03ff, 0x7bff, 0xfbff, 0x3c00,
            0xbc00,
        ],
        DataType::Int64 => vec![
            i64::MIN as u64,
            i64::MAX as u64,
            0,
            u64::MAX, // -1
            1,
            1 << 32,
            (1 << 32) + 1,
            (1 << 53) + 1,
            (1 << 53) + 2,
            (-(1i64 << 53) - 1) as u64,
            (-(1i64 << 32)) as u64,
            0xffff_ffff,
        ],
        DataType::Uint64 => vec![
            0,
            u64::MAX,
            1,
            0xffff_ffff,
            1 << 32,
            (1 << 32) + 1,
            (1 << 53) + 1,
            (1 << 53) + 2,
            1 << 63,
            (1 << 63) - 1,
        ],
        DataType::Int32 => vec![0x8000_0000, 0x7fff_ffff, 0, 0xffff_ffff, 1, 0x8000_0001],
        DataType::Uint32 => vec![0, 0xffff_ffff, 1, 0x8000_0000, 0x7fff_ffff],
        DataType::Int16 => vec![0x8000, 0x7fff, 0, 0xffff, 1],
        DataType::Uint16 => vec![0, 0xffff, 1, 0x8000, 0x7fff],
        DataType::Int8 => vec![0x80, 0x7f, 0, 0xff, 1],
        DataType::Uint8 => vec![0, 0xff, 1, 0x80, 0x7f],
        DataType::Bool => vec![0, 1],
    }
}

/// How a case's input is filled.
#[derive(Clone, Copy, Debug)]
enum Fill {
    /// Uniformly random bits (floats get NaNs, subnormals and zeros by chance).
    Random,
    /// Drawn from the edge values and a few random ones: many ties.
    Pool,
    /// All one value: everything ties.
    Constant,
    /// Zeros of both signs and one nonzero value, all of one sign (per
    /// tensor): the zeros are the minimum (or the maximum), so the
    /// selection's signed-zero rule decides.
    Zeros,
}

/// The bits of +0, -0, 1 and -1 in `dt` (integers: 0, 0, 1, -1).
fn zeros_and_ones(dt: DataType) -> [u64; 4] {
    match dt {
        DataType::Float16 => [0, 0x8000, 0x3c00, 0xbc00],
        DataType::Float32 => [0, 0x8000_0000, 0x3f80_0000, 0xbf80_0000],
        DataType::Float64 => [
            0,
            0x8000_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
        ],
        _ => [0, 0, 1, u64::MAX],
    }
}

fn input_tensor(dt: DataType, sizes: &[u32], fill: Fill, rng: &mut Rng) -> HostTensor {
    let n: usize = sizes.iter().map(|&s| s as usize).product();
    let width = dt.size_bytes();
    let mut pool = edges(dt);
    pool.extend((0..4).map(|_| rng.next_u64()));
    let constant = pool[rng.index(pool.len())];
    let [zero, negative_zero, one, minus_one] = zeros_and_ones(dt);
    let zeros = [
        zero,
        negative_zero,
        zero,
        negative_zero,
        [one, minus_one][rng.index(2)],
    ];
    let mut bytes = Vec::with_capacity(n * width);
    for _ in 0..n {
        let v = match fill {
            Fill::Random => rng.next_u64(),
            Fill::Pool => pool[rng.index(pool.len())],
            Fill::Constant => constant,
            Fill::Zeros => zeros[rng.index(zeros.len())],
        };
        // BOOL holds 0 or 1.
        let v = if dt == DataType::Bool { v & 1 } else { v };
        bytes.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    HostTensor::from_bytes(TensorDesc::new(dt, sizes.to_vec()), bytes).unwrap()
}

/// A shape, its reduced axes (in the order given) and the variant of the
/// first pass it forces.
struct Case {
    sizes: &'static [u32],
    axes: &'static [u32],
    variant: ReduceVariant,
}

const CASES: &[Case] = &[
    // Rows: strided reductions, and short contiguous ones.
    Case {
        sizes: &[5, 7],
        axes: &[1],
        variant: ReduceVariant::Rows,
    },
    Case {
        sizes: &[2, 301],
        axes: &[0],
        variant: ReduceVariant::Rows,
    },
    // Two reduced dimensions: the scan's offset wraps.
    Case {
        sizes: &[20, 3, 5, 2],
        axes: &[3, 1],
        variant: ReduceVariant::Rows,
    },
    Case {
        sizes: &[4, 1, 3],
        axes: &[1],
        variant: ReduceVariant::Rows,
    },
    Case {
        sizes: &[3],
        axes: &[0],
        variant: ReduceVariant::Rows,
    },
    Case {
        sizes: &[37],
        axes: &[0],
        variant: ReduceVariant::Rows,
    },
    Case {
        sizes: &[3, 4, 5],
        axes: &[2, 0],
        variant: ReduceVariant::Rows,
    },
    Case {
        sizes: &[2, 3, 4, 5],
        axes: &[3, 1],
        variant: ReduceVariant::Rows,
    },
    // Tree: teams over contiguous reductions.
    Case {
        sizes: &[601],
        axes: &[0],
        variant: ReduceVariant::Tree,
    },
    Case {
        sizes: &[3, 3, 3, 3],
        axes: &[0, 1, 2, 3],
        variant: ReduceVariant::Tree,
    },
    // Two reduced dimensions: offsets recomputed for every position.
    Case {
        sizes: &[8, 5, 16],
        axes: &[0, 2],
        variant: ReduceVariant::Tree,
    },
    // SplitRows then Combine: strided, few outputs.
    Case {
        sizes: &[70, 3, 3],
        axes: &[0],
        variant: ReduceVariant::SplitRows,
    },
    Case {
        sizes: &[4096, 3],
        axes: &[0],
        variant: ReduceVariant::SplitRows,
    },
    // Chunks that start inside the innermost reduced dimension.
    Case {
        sizes: &[40, 3, 50, 2],
        axes: &[0, 2],
        variant: ReduceVariant::SplitRows,
    },
    // SplitTree then Combine: contiguous, few outputs, uneven chunks.
    Case {
        sizes: &[2, 20001],
        axes: &[1],
        variant: ReduceVariant::SplitTree,
    },
    Case {
        sizes: &[3, 2, 4000],
        axes: &[0, 2],
        variant: ReduceVariant::SplitTree,
    },
    // The vector variants, for every data type: rows and inner blocks of
    // whole 16-byte vectors (the word cases above have odd sizes).
    // SplitLanes: one chunk per row (teams of 8 to 64).
    Case {
        sizes: &[3, 4096],
        axes: &[1],
        variant: ReduceVariant::SplitLanes,
    },
    // SplitLanes over uneven chunks (2 for INT8 to 9 for 64-bit types).
    Case {
        sizes: &[16, 17000],
        axes: &[0, 1],
        variant: ReduceVariant::SplitLanes,
    },
    // Columns: short reduced dimension, several outer blocks.
    Case {
        sizes: &[4, 16, 48],
        axes: &[1],
        variant: ReduceVariant::Columns,
    },
    // SplitColumns: uneven chunks of rows (34, 34, 32), with and without
    // an outer dimension.
    Case {
        sizes: &[2, 100, 16],
        axes: &[1],
        variant: ReduceVariant::SplitColumns,
    },
    Case {
        sizes: &[70, 32],
        axes: &[0],
        variant: ReduceVariant::SplitColumns,
    },
    // SplitLanes over segments: each output's rows of 256 elements, 5
    // (or 3 * 2) of them, lie a kept dimension apart.
    Case {
        sizes: &[5, 3, 256],
        axes: &[0, 2],
        variant: ReduceVariant::SplitLanes,
    },
    Case {
        sizes: &[3, 4, 2, 16, 16],
        axes: &[0, 2, 3, 4],
        variant: ReduceVariant::SplitLanes,
    },
    // SplitColumns in phases: inner blocks of 3 and 5 elements, read as
    // rows of 2 (64-bit types) to 16 (8-bit) of them.
    Case {
        sizes: &[2, 512, 3],
        axes: &[1],
        variant: ReduceVariant::SplitColumns,
    },
    Case {
        sizes: &[1024, 5],
        axes: &[0],
        variant: ReduceVariant::SplitColumns,
    },
];

/// The output sizes: reduced axes kept as 1s, or dropped when `drop`.
fn output_sizes(sizes: &[u32], axes: &[u32], drop: bool) -> Vec<u32> {
    sizes
        .iter()
        .enumerate()
        .filter_map(|(d, &s)| match (axes.contains(&(d as u32)), drop) {
            (false, _) => Some(s),
            (true, false) => Some(1),
            (true, true) => None,
        })
        .collect()
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

/// One reduction planned and run through `reduce_plan` with test kernels.
struct Run<'a> {
    op: &'a Op,
    ties: Ties,
    class: DeviceClass,
    axes: &'a [u32],
    out_desc: &'a TensorDesc,
    kernels: &'a HashMap<ReduceVariant, &'static Kernel>,
    what: &'a str,
}

impl Run<'_> {
    /// Plans the reduction of `input`, checks that the plan's passes run
    /// `strategy`'s variants, runs it on the GPU and checks the output
    /// against the CPU reference (`reduce_cpu`) bit for bit.
    fn matches(&self, ctx: &Context, input: &HostTensor, strategy: ReduceStrategy) {
        let what = self.what;
        let want = reduce_cpu(&self.op.cfg, self.ties, input, self.axes, self.out_desc)
            .unwrap_or_else(|e| panic!("{what}: cpu: {e}"));
        let plan = reduce_plan(
            &ReduceCall {
                cfg: &self.op.cfg,
                ties: self.ties,
                input: input.desc(),
                input_slot: 0,
                axes: self.axes,
                output: self.out_desc,
                output_slot: 0,
                kernel: &|v| self.kernels.get(&v).copied(),
            },
            self.class,
        )
        .unwrap_or_else(|e| panic!("{what}: plan: {e}"));
        let variants = strategy.variants();
        assert_eq!(plan.passes.len(), variants.len(), "{what}");
        for (pass, v) in plan.passes.iter().zip(&variants) {
            assert_eq!(pass.kernel.key, self.kernels[v].key, "{what}");
        }
        let mut got = ctx
            .execute(&plan, &[input], std::slice::from_ref(self.out_desc))
            .unwrap_or_else(|e| panic!("{what}: gpu: {e}"));
        assert_eq!(got.len(), 1, "{what}");
        let got = got.remove(0);
        assert_eq!(got.desc(), self.out_desc, "{what}");
        assert!(
            got.bytes() == want.bytes(),
            "{what}: {}",
            first_difference(self.out_desc.dtype, got.bytes(), want.bytes())
        );
    }
}

#[test]
fn gpu_matches_cpu_reference_bitwise() {
    let ctx = ctx();
    let seed = seed();
    let mut rng = Rng::new(seed);
    let mut runs = 0usize;
    let mut variants_seen: HashMap<ReduceVariant, usize> = HashMap::new();
    for op in &OPS {
        for input_dt in DataType::ALL {
            for output_dt in op.outputs(input_dt) {
                let kernels = kernels(op, input_dt, output_dt);
                for (c, case) in CASES.iter().enumerate() {
                    let geometry = ReduceGeometry::new(case.sizes, case.axes).unwrap();
                    // The word variants through hardware plans: software plans
                    // read ragged rows as vectors (`SplitLanesRagged`).
                    let class = if case.variant.is_vector() {
                        DeviceClass::Software
                    } else {
                        DeviceClass::Hardware
                    };
                    let strategy = geometry.strategy_on(input_dt, class);
                    assert_eq!(
                        strategy.variant(),
                        case.variant,
                        "case {c} {:?} {input_dt}",
                        case.sizes
                    );
                    // Each combination sees every fill and both tie rules over the cases.
                    let fill =
                        [Fill::Pool, Fill::Random, Fill::Pool, Fill::Constant][(c + runs) % 4];
                    let ties = if (c + runs / 7).is_multiple_of(2) {
                        Ties::First
                    } else {
                        Ties::Last
                    };
                    let input = input_tensor(input_dt, case.sizes, fill, &mut rng);
                    let out_desc =
                        TensorDesc::new(output_dt, output_sizes(case.sizes, case.axes, c % 2 == 1));
                    let what = format!(
                        "seed {seed:#x}: {} {input_dt}->{output_dt} sizes {:?} axes {:?} {fill:?} {ties:?}",
                        op.name, case.sizes, case.axes
                    );
                    let run = Run {
                        op,
                        ties,
                        class,
                        axes: case.axes,
                        out_desc: &out_desc,
                        kernels: &kernels,
                        what: &what,
                    };
                    run.matches(ctx, &input, strategy);
                    *variants_seen.entry(case.variant).or_default() += 1;
                    runs += 1;
                }
            }
        }
    }
    let types = DataType::ALL.len();
    assert_eq!(runs, (types * 4 * 2 + types * 2) * CASES.len());
    assert!(
        variants_seen.values().all(|&n| n > 100),
        "{variants_seen:?}"
    );
}

/// The vector variants on random shapes whose rows (or inner blocks) are
/// whole 16-byte vectors, and on ragged rows (`SplitLanesRagged`, software
/// plans): random row and chunk lengths exercise the
/// unrolled loops' odd tails, uneven chunks and partial workgroups, with
/// every fill and both tie rules, against the CPU reference bit for bit.
/// Runs alternate between the plans of both device classes, so the
/// hardware plans (`SplitLanesTree`, wider column splits) run here too.
#[test]
fn vector_variants_on_random_aligned_shapes() {
    let ctx = ctx();
    let seed = seed() ^ 0x7ec7_0a11;
    let mut rng = Rng::new(seed);
    let mut seen: HashMap<ReduceVariant, usize> = HashMap::new();
    let mut combines: HashMap<ReduceVariant, usize> = HashMap::new();
    let mut phased = 0;
    let mut segmented = 0;
    for run in 0..140 {
        let op = &OPS[rng.index(OPS.len())];
        let input_dt = DataType::ALL[rng.index(DataType::ALL.len())];
        let outputs = op.outputs(input_dt);
        let output_dt = outputs[rng.index(outputs.len())];
        let per = (16 / input_dt.size_bytes()) as u32;
        // [outer, len, inner] over axis 1, or a contiguous [outer, len] or
        // all-axes reduction; sizes kept to about 2^18 elements.
        let (sizes, axes): (Vec<u32>, Vec<u32>) = match run % 7 {
            0 => {
                let len = per * (16 + rng.index(300) as u32);
                (vec![1 + rng.index(40) as u32, len], vec![1])
            }
            1 => {
                let len = per * (16 + rng.index(24000) as u32);
                (vec![1 + rng.index(3) as u32, len], vec![0, 1])
            }
            2 => {
                let inner = per * (1 + rng.index(6) as u32);
                let len = 2 + rng.index(300) as u32;
                (vec![1 + rng.index(5) as u32, len, inner], vec![1])
            }
            3 => {
                let inner = per * (1 + rng.index(40) as u32);
                (vec![2 + rng.index(120) as u32, inner], vec![0])
            }
            // Rows of whole vectors a kept dimension apart, reduced over
            // the first and last axes (SplitLanes over segments, software
            // plans), now and then long rows.
            5 => {
                let len = if rng.index(4) == 0 {
                    per * (16 + rng.index(12000) as u32)
                } else {
                    per * (16 + rng.index(300) as u32)
                };
                let (n, c) = (2 + rng.index(5) as u32, 1 + rng.index(6) as u32);
                (vec![n, c, len], vec![0, 2])
            }
            // Inner blocks that are not whole vectors (SplitColumns in
            // phases): len a multiple of the phases, at least 32 rows of them.
            4 => {
                let inner = loop {
                    let inner = 2 + rng.index(60) as u32;
                    if !inner.is_multiple_of(per) {
                        break inner;
                    }
                };
                let phases = phases(u64::from(inner), input_dt) as u32;
                let len = phases * (32 + rng.index(100) as u32);
                (vec![1 + rng.index(4) as u32, len, inner], vec![1])
            }
            // Ragged rows (SplitLanesRagged): not whole vectors, each row
            // starting anywhere in a vector; or all axes of a ragged tensor.
            _ => {
                let len = per * (16 + rng.index(400) as u32) + 1 + rng.index(per as usize) as u32;
                let len = if len.is_multiple_of(per) {
                    len + 1
                } else {
                    len
                };
                if rng.index(4) == 0 {
                    (vec![1 + rng.index(3) as u32, len], vec![0, 1])
                } else {
                    (vec![1 + rng.index(40) as u32, len], vec![1])
                }
            }
        };
        // Ragged rows, phased columns and segmented rows run vector
        // kernels in software plans only.
        let class = if run % 7 >= 4 || (run / 7) % 2 == 0 {
            DeviceClass::Software
        } else {
            DeviceClass::Hardware
        };
        let geometry = ReduceGeometry::new(&sizes, &axes).unwrap();
        let strategy = geometry.strategy_on(input_dt, class);
        let fill = [Fill::Pool, Fill::Random, Fill::Constant, Fill::Zeros][rng.index(4)];
        let ties = if rng.index(2) == 0 {
            Ties::First
        } else {
            Ties::Last
        };
        let what = format!(
            "seed {seed:#x} run {run}: {} {input_dt}->{output_dt} sizes {sizes:?} axes {axes:?} {fill:?} {ties:?} {class:?} {strategy:?}",
            op.name
        );
        assert!(strategy.variant().is_vector(), "{what}");
        let input = input_tensor(input_dt, &sizes, fill, &mut rng);
        let out_desc = TensorDesc::new(output_dt, output_sizes(&sizes, &axes, true));
        let kernels = kernels(op, input_dt, output_dt);
        let run = Run {
            op,
            ties,
            class,
            axes: &axes,
            out_desc: &out_desc,
            kernels: &kernels,
            what: &what,
        };
        run.matches(ctx, &input, strategy);
        *seen.entry(strategy.variant()).or_default() += 1;
        if matches!(strategy, ReduceStrategy::SplitColumns { phases, .. } if phases > 1) {
            phased += 1;
        }
        if matches!(strategy, ReduceStrategy::SplitLanes { segments, .. } if segments > 1) {
            segmented += 1;
        }
        if let Some(&combine) = strategy.variants().get(1) {
            *combines.entry(combine).or_default() += 1;
        }
    }
    // Both combine passes: teams, and one thread an output (no barrier).
    for v in [ReduceVariant::Combine, ReduceVariant::CombineEach] {
        assert!(combines.get(&v).is_some_and(|&n| n >= 3), "{combines:?}");
    }
    assert!(phased >= 8, "{phased} phased SplitColumns runs");
    assert!(segmented >= 8, "{segmented} segmented lanes runs");
    for v in [
        ReduceVariant::SplitLanes,
        ReduceVariant::Columns,
        ReduceVariant::SplitColumns,
        ReduceVariant::SplitLanesRagged,
    ] {
        assert!(seen.get(&v).is_some_and(|&n| n >= 8), "{seen:?}");
    }
    assert!(
        seen.get(&ReduceVariant::SplitLanesTree)
            .is_some_and(|&n| n >= 3),
        "{seen:?}"
    );
}

/// The lanes variants select a vector at a time (`vector_rank`, then the
/// element in the selected vector, `pick_element`): every FLOAT16 value in
/// each lane of a word, FLOAT32 edge values, and vectors of signed zeros beside 1 or -1 (the
/// zero rule decides), each vector placed twice in rows of filler (+inf
/// for the minimum, -inf for the maximum) so that vectors compete in one
/// thread and across threads; then long rows of signed zeros through the
/// hardware plans' SplitLanesTree. All four operators, both tie rules, bit
/// for bit against the CPU reference.
#[test]
fn lanes_select_a_vector_at_a_time() {
    let ctx = ctx();
    let mut rng = Rng::new(seed() ^ 0x5e1e_c7ed);
    const ROW_VECTORS: usize = 32;
    for dt in [DataType::Float16, DataType::Float32] {
        let per = 16 / dt.size_bytes();
        let [zero, negative_zero, one, minus_one] = zeros_and_ones(dt);
        let mut vectors: Vec<Vec<u64>> = if dt == DataType::Float16 {
            // Every value twice, scattered, once in each lane of a word:
            // element i is value j * 40503 + 7, j = i for the first 65,536,
            // then i with its lowest bit flipped.
            (0..0x2_0000u64)
                .map(|i| (((i ^ (i >> 16)) & 0xffff) * 40503 + 7) & 0xffff)
                .collect::<Vec<_>>()
                .chunks(per)
                .map(<[u64]>::to_vec)
                .collect()
        } else {
            let pool = edges(dt);
            (0..4096)
                .map(|_| (0..per).map(|_| pool[rng.index(pool.len())]).collect())
                .collect()
        };
        vectors.extend((0..1024).map(|_| {
            let other = [one, minus_one][rng.index(2)];
            (0..per)
                .map(|_| [zero, negative_zero, zero, negative_zero, other][rng.index(5)])
                .collect()
        }));
        let rows = vectors.len();
        let sizes = [rows as u32, (ROW_VECTORS * per) as u32];
        for op in &OPS {
            let filler: u64 = match (dt, op.cfg.select) {
                (DataType::Float16, Select::Min) => 0x7c00,
                (DataType::Float16, Select::Max) => 0xfc00,
                (_, Select::Min) => 0x7f80_0000,
                (_, Select::Max) => 0xff80_0000,
            };
            // Row r: vector r at slot r % 32, vector r + 1 at another slot.
            let fill = vec![filler; per];
            let mut bytes = Vec::with_capacity(rows * ROW_VECTORS * per * dt.size_bytes());
            for r in 0..rows {
                let a = r % ROW_VECTORS;
                let b = (a + 1 + r / ROW_VECTORS % (ROW_VECTORS - 1)) % ROW_VECTORS;
                for slot in 0..ROW_VECTORS {
                    let vector = if slot == a {
                        &vectors[r]
                    } else if slot == b {
                        &vectors[(r + 1) % rows]
                    } else {
                        &fill
                    };
                    for v in vector {
                        bytes.extend_from_slice(&v.to_le_bytes()[..dt.size_bytes()]);
                    }
                }
            }
            let input = HostTensor::from_bytes(TensorDesc::new(dt, sizes), bytes).unwrap();
            let output_dt = op.outputs(dt)[0];
            let kernels = kernels(op, dt, output_dt);
            // Plans a [rows, len] input's reduction over axis 1 on `class`,
            // checks it runs `variant`, and runs it with both tie rules.
            let check = |input: &HostTensor, class: DeviceClass, variant: ReduceVariant| {
                let sizes = input.desc().sizes.as_slice();
                let strategy = ReduceGeometry::new(sizes, &[1])
                    .unwrap()
                    .strategy_on(dt, class);
                assert_eq!(strategy.variant(), variant, "{dt} {class:?}: {strategy:?}");
                let out_desc = TensorDesc::new(output_dt, output_sizes(sizes, &[1], true));
                for ties in [Ties::First, Ties::Last] {
                    let what = format!("{} {dt} {sizes:?} {ties:?} {class:?}", op.name);
                    let run = Run {
                        op,
                        ties,
                        class,
                        axes: &[1],
                        out_desc: &out_desc,
                        kernels: &kernels,
                        what: &what,
                    };
                    run.matches(ctx, input, strategy);
                }
            };
            for class in [DeviceClass::Software, DeviceClass::Hardware] {
                check(&input, class, ReduceVariant::SplitLanes);
            }
            // Long rows of signed zeros beside 1 (-1 for the maximum): the
            // hardware plans' SplitLanesTree, whose team combine compares
            // the threads' vector ranks, so a -0.0 left unsettled in one
            // thread would beat an earlier +0.0 in another.
            let other = match op.cfg.select {
                Select::Min => one,
                Select::Max => minus_one,
            };
            let long = [8u32, (8192 * per) as u32];
            let bytes = (0..long[0] as usize * long[1] as usize)
                .flat_map(|_| {
                    let v = [zero, negative_zero, zero, negative_zero, other][rng.index(5)];
                    v.to_le_bytes()[..dt.size_bytes()].to_vec()
                })
                .collect();
            let input = HostTensor::from_bytes(TensorDesc::new(dt, long), bytes).unwrap();
            check(&input, DeviceClass::Hardware, ReduceVariant::SplitLanesTree);
        }
    }
}

/// Hand-checked values through the GPU: the ArgMin seed examples, ties,
/// NaN and signed zeros, 64-bit values that differ only past 2^53.
#[test]
fn gpu_seed_examples() {
    let ctx = ctx();
    let run = |op: &Op, ties: Ties, input: &HostTensor, axes: &[u32], out: TensorDesc| {
        let k = kernels(op, input.dtype(), out.dtype);
        let plan = reduce_plan(
            &ReduceCall {
                cfg: &op.cfg,
                ties,
                input: input.desc(),
                input_slot: 0,
                axes,
                output: &out,
                output_slot: 0,
                kernel: &|v| k.get(&v).copied(),
            },
            DeviceClass::Software,
        )
        .unwrap();
        let got = ctx
            .execute(&plan, &[input], std::slice::from_ref(&out))
            .unwrap();
        let want = reduce_cpu(&op.cfg, ties, input, axes, &out).unwrap();
        assert_eq!(got[0], want);
        got.into_iter().next().unwrap()
    };
    let x = HostTensor::from_slice([3, 3], &[1i32, 2, 3, 3, 0, 4, 2, 5, 2]).unwrap();
    let arg_min = &OPS[0];
    let all = run(
        arg_min,
        Ties::First,
        &x,
        &[0, 1],
        TensorDesc::new(DataType::Int64, [1, 1]),
    );
    assert_eq!(all.to_vec::<i64>().unwrap(), [4]);
    let rows = run(
        arg_min,
        Ties::First,
        &x,
        &[0],
        TensorDesc::new(DataType::Uint32, [1, 3]),
    );
    assert_eq!(rows.to_vec::<u32>().unwrap(), [0, 1, 2]);
    let cols = run(
        arg_min,
        Ties::First,
        &x,
        &[1],
        TensorDesc::new(DataType::Int32, [3, 1]),
    );
    assert_eq!(cols.to_vec::<i32>().unwrap(), [0, 1, 0]);

    let y = HostTensor::from_slice([5], &[1u8, 2, 3, 2, 1]).unwrap();
    let first = run(
        arg_min,
        Ties::First,
        &y,
        &[0],
        TensorDesc::new(DataType::Uint64, [1]),
    );
    assert_eq!(first.to_vec::<u64>().unwrap(), [0]);
    let last = run(
        arg_min,
        Ties::Last,
        &y,
        &[0],
        TensorDesc::new(DataType::Uint64, [1]),
    );
    assert_eq!(last.to_vec::<u64>().unwrap(), [4]);

    let z = HostTensor::from_slice([4], &[0.0f32, -0.0, f32::NAN, 1.0]).unwrap();
    let arg_max = &OPS[1];
    let nan = run(
        arg_max,
        Ties::First,
        &z,
        &[0],
        TensorDesc::new(DataType::Int32, [1]),
    );
    assert_eq!(nan.to_vec::<i32>().unwrap(), [2]);
    let zeros = HostTensor::from_slice([2], &[0.0f32, -0.0]).unwrap();
    let reduce_min = &OPS[2];
    let neg = run(
        reduce_min,
        Ties::First,
        &zeros,
        &[0],
        TensorDesc::new(DataType::Float32, [1]),
    );
    assert_eq!(
        neg.to_vec::<f32>().unwrap()[0].to_bits(),
        (-0.0f32).to_bits()
    );

    let big = (1u64 << 53) + 1;
    let w = HostTensor::from_slice([3], &[big + 1, big, big + 2]).unwrap();
    let min = run(
        reduce_min,
        Ties::First,
        &w,
        &[0],
        TensorDesc::new(DataType::Uint64, [1]),
    );
    assert_eq!(min.to_vec::<u64>().unwrap(), [big]);

    // FLOAT16 zeros of both signs side by side in one vector, through the
    // vector kernels (random fills rarely make zeros the extreme): ArgMin
    // and ArgMax take either zero as the other, ReduceMin takes -0 first.
    let h = |v: f32| half::f16::from_f32(v);
    let row = |fill: f32, a: f32, b: f32| {
        let mut r = vec![h(fill); 256];
        (r[33], r[34]) = (h(a), h(b));
        r
    };
    let index = |op: &Op, ties: Ties, x: &HostTensor, axis: u32, n: u32| {
        let out = TensorDesc::new(DataType::Int32, [n]);
        run(op, ties, x, &[axis], out).to_vec::<i32>().unwrap()
    };
    // [2, 256] over axis 1: SplitLanes.
    let rows = [row(1.0, 0.0, -0.0), row(1.0, -0.0, 0.0)].concat();
    let lanes = HostTensor::from_slice([2, 256], &rows).unwrap();
    assert_eq!(index(arg_min, Ties::First, &lanes, 1, 2), [33, 33]);
    assert_eq!(index(arg_min, Ties::Last, &lanes, 1, 2), [34, 34]);
    let rows = [row(-1.0, 0.0, -0.0), row(-1.0, -0.0, 0.0)].concat();
    let negative = HostTensor::from_slice([2, 256], &rows).unwrap();
    assert_eq!(index(arg_max, Ties::First, &negative, 1, 2), [33, 33]);
    let reduce_min = &OPS[2];
    let out = TensorDesc::new(DataType::Float16, [2]);
    let min = run(reduce_min, Ties::First, &lanes, &[1], out);
    let bits: Vec<u16> = min
        .to_vec::<half::f16>()
        .unwrap()
        .iter()
        .map(|z| z.to_bits())
        .collect();
    assert_eq!(bits, [0x8000, 0x8000]);
    // [64, 8] over axis 0: SplitColumns, one thread down rows 10 and 11 of
    // columns 3 (+0, -0) and 5 (-0, +0).
    let mut grid = vec![h(1.0); 64 * 8];
    (grid[10 * 8 + 3], grid[11 * 8 + 3]) = (h(0.0), h(-0.0));
    (grid[10 * 8 + 5], grid[11 * 8 + 5]) = (h(-0.0), h(0.0));
    let columns = HostTensor::from_slice([64, 8], &grid).unwrap();
    assert_eq!(
        index(arg_min, Ties::First, &columns, 0, 8),
        [0, 0, 0, 10, 0, 10, 0, 0]
    );
}

/// Zero outputs need no pass; an empty reduced dimension is an error.
#[test]
fn empty_tensors() {
    let ctx = ctx();
    let op = &OPS[0];
    let k = kernel(op, ReduceVariant::Rows, DataType::Float32, DataType::Int64);
    let input = HostTensor::zeros(TensorDesc::new(DataType::Float32, [0, 4])).unwrap();
    let out = TensorDesc::new(DataType::Int64, [0]);
    let plan = reduce_plan(
        &ReduceCall {
            cfg: &op.cfg,
            ties: Ties::First,
            input: input.desc(),
            input_slot: 0,
            axes: &[1],
            output: &out,
            output_slot: 0,
            kernel: &|_| Some(k),
        },
        DeviceClass::Software,
    )
    .unwrap();
    assert!(plan.passes.is_empty());
    let got = ctx
        .execute(&plan, &[&input], std::slice::from_ref(&out))
        .unwrap();
    assert!(got[0].is_empty());

    let input = HostTensor::zeros(TensorDesc::new(DataType::Float32, [3, 0])).unwrap();
    let out = TensorDesc::new(DataType::Int64, [3]);
    for result in [
        reduce_plan(
            &ReduceCall {
                cfg: &op.cfg,
                ties: Ties::First,
                input: input.desc(),
                input_slot: 0,
                axes: &[1],
                output: &out,
                output_slot: 0,
                kernel: &|_| Some(k),
            },
            DeviceClass::Software,
        )
        .err(),
        reduce_cpu(&op.cfg, Ties::First, &input, &[1], &out).err(),
    ] {
        match result {
            Some(OpError::InvalidArgument(m)) => {
                assert!(
                    m.starts_with("cannot reduce over an empty dimension"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}

/// More than 65,535 workgroups: the runtime spreads them over x and y and
/// the kernels linearise `x + y * num_workgroups.x`, guarding the tail.
#[test]
fn two_dimensional_grid() {
    let ctx = ctx();
    let mut rng = Rng::new(7);
    let op = &OPS[3];
    // 65,536 * 256 + 1 outputs of 2 elements: 65,537 Rows workgroups.
    let outputs = 65_536 * WORKGROUP_SIZE + 1;
    let sizes = [outputs, 2];
    let input = input_tensor(DataType::Uint8, &sizes, Fill::Pool, &mut rng);
    let out = TensorDesc::new(DataType::Uint8, [outputs]);
    let g = ReduceGeometry::new(&sizes, &[1]).unwrap();
    assert_eq!(g.strategy(), ReduceStrategy::Rows);
    let k = kernel(op, ReduceVariant::Rows, DataType::Uint8, DataType::Uint8);
    let plan = reduce_plan(
        &ReduceCall {
            cfg: &op.cfg,
            ties: Ties::Last,
            input: input.desc(),
            input_slot: 0,
            axes: &[1],
            output: &out,
            output_slot: 0,
            kernel: &|_| Some(k),
        },
        DeviceClass::Software,
    )
    .unwrap();
    assert_eq!(plan.passes[0].workgroups, 65_537);
    let t = std::time::Instant::now();
    let got = ctx
        .execute(&plan, &[&input], std::slice::from_ref(&out))
        .unwrap();
    eprintln!("gpu {:?}", t.elapsed());
    let want = reduce_cpu(&op.cfg, Ties::Last, &input, &[1], &out).unwrap();
    assert!(
        got[0] == want,
        "{}",
        first_difference(DataType::Uint8, got[0].bytes(), want.bytes())
    );
}
