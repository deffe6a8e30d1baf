//! `ops bench`: effective bandwidth of the generated kernels beside a plain
//! copy kernel on the same device, the per-call overhead of
//! [`ops_gpu::Context::run`], and the CPU reference's throughput.
//!
//! Every case runs on the current adapter through an [`ops_gpu::Profiler`]:
//! its inputs are uploaded once, then each run does on the device what one
//! [`Context::execute`](ops_gpu::Context::execute) does there (outputs,
//! scratch and status initialised as the plan says, every pass), timed by
//! GPU timestamps when the adapter has them and by submission-to-completion
//! wall time otherwise ([`ops_gpu::TimeSource`]). A case reports the median
//! of [`BenchOptions::runs`] runs after [`BenchOptions::warmup`] runs and
//! at least [`BenchOptions::warmup_ms`] of them (a hardware GPU left idle
//! while the CPU prepares a case's inputs drops its clocks and raises them
//! only under sustained work: an NVIDIA H100 ran the cases at a 345 MHz
//! shader clock instead of 1980 MHz without this),
//! its effective bandwidth (the bytes the operator must read and write,
//! divided by that time) and the ratio to the copy kernel's bandwidth for
//! the same byte count. The outputs of the last run are compared with the
//! CPU reference within the operator's accuracy contract (bit for bit for
//! exact operators), and its time is reported too.
//!
//! The cases, in FLOAT32, FLOAT16 (packed two to a word) and a 64-bit type:
//!
//! - ArgMin and ReduceMin over all axes, the innermost axis, the outermost
//!   axis (strided) and a middle axis of a 3-D tensor; ReduceMin over its
//!   first and last axes; ArgMin over the innermost and the middle axis of
//!   rows one element short of whole 16-byte vectors;
//! - ReduceSum (DirectML REDUCE SUM) in FLOAT32, FLOAT16 and INT32 over all
//!   axes, the inner, the outer and a middle axis;
//! - GatherND1 gathering whole rows, and gathering single elements (at
//!   random, and for the record in row-major order);
//! - Scatter along the outer axis with unique indices (update row `k` lands
//!   in row `perm(k)`), with heavy collisions (every update aimed at one
//!   of 16 rows), and with random indices (each update element aimed at a
//!   row of its own, at random), on a square tensor (few columns: the
//!   two-pass algorithm on a GPU; a CPU adapter walks the columns in one
//!   pass) and on a wide one of 64 rows (many columns: one pass);
//! - ONNX Add of two tensors of the same shape and of a tensor and one of
//!   its rows (`[rows, cols] + [cols]`), and ONNX LeakyRelu, an
//!   element-wise operator with an attribute, ONNX Clip with both bounds
//!   given, and DirectML ELEMENT_WISE_CLIP with a scale and a bias
//!   (`clip(x * scale + bias, min, max)`, three operations in one kernel);
//!   ONNX Concat of four equal parts along the last axis and along axis 0
//!   (FLOAT32 and FLOAT16 only; `streaming_case` makes another
//!   element-wise case one line);
//! - ONNX Gather of the rows of a `[vocab, hidden]` embedding table by
//!   random token ids, ONNX GatherElements along axis 0 of that table at
//!   random, ONNX ScatterND of whole rows with unique indices and with
//!   heavy collisions added up (`reduction` ADD), and ONNX Transpose of the
//!   last two axes of a 3-D tensor.
//!
//! GatherND1's, Gather's and GatherElements' tables hold no 64-bit data
//! type, so their 64-bit cases gather FLOAT32 data with INT64 indices.

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ops_core::fuzz::Rng;
use ops_core::{DataType, DeviceClass, HostTensor, OpError, Operator, TensorDesc};
use ops_gpu::{CacheStats, Context, MinimalDispatch, Profiler};
use serde_json::{json, Value};

use crate::term::Bar;

use ops::onnx::{self, scatternd::ScatterNDReduction};
use ops::reduce::{ReduceDesc, ReduceFunction};
use ops::{ArgMinDesc, GatherND1Desc, ReduceMinDesc, ScatterDesc};

pub mod chain;

/// The default byte size of each case's main tensor: 64 MiB.
pub const DEFAULT_SIZE: u64 = 64 << 20;

/// The byte size of the small-call ArgMin input: 1 KiB.
pub const SMALL_CALL_BYTES: u64 = 1024;

/// What `ops bench` runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchOptions {
    /// Byte size of each case's main tensor (rounded down to a power-of-two
    /// element count).
    pub size: u64,
    /// Timed runs per case; the median is reported.
    pub runs: usize,
    /// Untimed runs before them.
    pub warmup: usize,
    /// Keep up the untimed runs (of the case and of the copy beside it)
    /// for at least this many milliseconds, so that a hardware GPU's clocks
    /// are up when the timed runs start.
    pub warmup_ms: u64,
    /// Calls of the small-call comparison on each side.
    pub small_calls: usize,
    /// Run the CPU reference (once per case) for its throughput and to check
    /// the GPU's outputs.
    pub cpu_reference: bool,
    /// Only the cases whose name contains this text (the copy kernel and the
    /// small-call comparison always run).
    pub filter: Option<String>,
    /// Show progress on stderr: a bar on a terminal, else a line per case
    /// as it completes.
    pub progress: bool,
    /// The class of plans to time (`None`: the context's
    /// [`Context::device_class`], which follows its adapter).
    pub plans: Option<DeviceClass>,
}

impl Default for BenchOptions {
    fn default() -> BenchOptions {
        BenchOptions {
            size: DEFAULT_SIZE,
            runs: 7,
            warmup: 2,
            warmup_ms: 500,
            small_calls: 500,
            cpu_reference: true,
            filter: None,
            progress: false,
            plans: None,
        }
    }
}

impl BenchOptions {
    /// The smoke mode CI runs so that the benchmark cannot rot: tiny tensors
    /// (64 KiB), one run, no warm-up, a few small calls. Its figures mean
    /// nothing.
    pub fn smoke() -> BenchOptions {
        BenchOptions {
            size: 64 << 10,
            runs: 1,
            warmup: 0,
            warmup_ms: 0,
            small_calls: 3,
            cpu_reference: true,
            filter: None,
            progress: false,
            plans: None,
        }
    }
}

/// The arguments of `ops bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Byte size of each case's main tensor: a count of bytes with an
    /// optional K, M or G suffix (KiB, MiB, GiB), at most the device's
    /// storage binding limit (128 MiB on lavapipe).
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    pub size: u64,
    /// Timed runs per case; the median is reported.
    #[arg(long, default_value_t = 7)]
    pub runs: usize,
    /// Untimed runs before them.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Keep up the untimed runs for at least this many milliseconds per case
    /// (a hardware GPU raises its clocks only under sustained work).
    #[arg(long, default_value_t = 500)]
    pub warmup_ms: u64,
    /// Calls on each side of the small-call comparison.
    #[arg(long, default_value_t = 500)]
    pub calls: usize,
    /// Skip the CPU reference (its throughput and the GPU == CPU check).
    #[arg(long)]
    pub no_cpu: bool,
    /// Only the cases whose name or data type contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// CI's smoke mode: 64 KiB tensors, one run, no warm-up, three small
    /// calls (replaces --size, --runs, --warmup, --warmup-ms and --calls). Its figures
    /// mean nothing; it checks that every case still runs and matches the
    /// CPU reference.
    #[arg(long)]
    pub smoke: bool,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Time the plans shaped for this class of adapter, `software` or
    /// `hardware`, instead of the adapter's own (both compute the same
    /// results: the other class's figures, for comparison).
    #[arg(long, value_parser = parse_class)]
    pub plans: Option<DeviceClass>,
}

fn parse_class(s: &str) -> Result<DeviceClass, String> {
    DeviceClass::ALL
        .into_iter()
        .find(|c| c.name() == s)
        .ok_or_else(|| format!("`{s}`: expected `software` or `hardware`"))
}

impl BenchArgs {
    /// The options these arguments ask for.
    pub fn options(&self) -> BenchOptions {
        let base = if self.smoke {
            BenchOptions::smoke()
        } else {
            BenchOptions {
                size: self.size,
                runs: self.runs,
                warmup: self.warmup,
                warmup_ms: self.warmup_ms,
                small_calls: self.calls,
                ..BenchOptions::default()
            }
        };
        BenchOptions {
            cpu_reference: !self.no_cpu,
            filter: self.filter.clone(),
            progress: !self.smoke,
            plans: self.plans,
            ..base
        }
    }
}

/// `ops bench`: runs [`bench()`] on the shared context and prints the report
/// (progress on stderr). Returns the exit code: 0 when every case's GPU
/// output matched the CPU reference, 1 when one did not, 2 without a GPU
/// adapter or when a case could not run.
pub fn main(args: &BenchArgs) -> io::Result<u8> {
    let ctx = match ops_gpu::shared() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("ops bench: {e}");
            if !e.to_string().contains(ops_gpu::NO_ADAPTER_HELP) {
                eprintln!("ops bench: {}", ops_gpu::NO_ADAPTER_HELP);
            }
            return Ok(2);
        }
    };
    let report = match bench(ctx, &args.options()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ops bench: {e}");
            return Ok(2);
        }
    };
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{:#}", report.to_json())?;
    } else {
        write!(out, "{}", report.to_text())?;
    }
    if report.all_match() {
        Ok(0)
    } else {
        eprintln!("ops bench: some GPU outputs differ from the CPU reference (DIFF above)");
        Ok(1)
    }
}

/// The measured figures of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// The case (`ArgMin inner axis`).
    pub name: String,
    /// Its data type, with the index type for gathers and scatters
    /// (`FLOAT16`, `FLOAT32/INT64 idx`).
    pub dtype: String,
    /// The main tensor's sizes and what else the case binds.
    pub shape: String,
    /// The kernel keys of the plan's passes, in order.
    pub kernels: Vec<&'static str>,
    /// Bytes the operator must read and write.
    pub bytes: u64,
    /// Median time of the timed runs.
    pub median: Duration,
    /// Fastest timed run.
    pub min: Duration,
    /// `bytes / median`, in GB/s (10^9 bytes a second).
    pub gbps: f64,
    /// `gbps` over the copy kernel's, timed alongside: each timed run of
    /// the case follows a run of the copy kernel, and the ratio is taken to
    /// the median of those copy runs ([`copy_gbps`](Self::copy_gbps)), so
    /// that a slow spell of a shared machine moves both alike.
    pub ratio: f64,
    /// The copy kernel's bandwidth in GB/s over this case's timed runs.
    pub copy_gbps: f64,
    /// The ratio the issue asks for on a hardware GPU.
    pub target: f64,
    /// The CPU reference's time for the same call, when it ran.
    pub cpu: Option<Duration>,
    /// Whether the GPU's outputs equal the CPU reference's bit for bit, when
    /// it ran.
    pub matches_cpu: Option<bool>,
}

impl CaseResult {
    /// The CPU reference's effective bandwidth in GB/s, when it ran.
    pub fn cpu_gbps(&self) -> Option<f64> {
        self.cpu.map(|t| gbps(self.bytes, t))
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "dtype": self.dtype,
            "shape": self.shape,
            "kernels": self.kernels,
            "bytes": self.bytes,
            "median_s": self.median.as_secs_f64(),
            "min_s": self.min.as_secs_f64(),
            "gbps": self.gbps,
            "ratio_to_copy": self.ratio,
            "copy_gbps_alongside": self.copy_gbps,
            "target_ratio": self.target,
            "cpu_s": self.cpu.map(|t| t.as_secs_f64()),
            "cpu_gbps": self.cpu_gbps(),
            "matches_cpu": self.matches_cpu,
        })
    }
}

/// The small-call comparison: a 1 KiB ArgMin through [`Context::run`]
/// against [`MinimalDispatch`] of the same kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct SmallCall {
    /// What was called.
    pub what: String,
    /// Calls on each side.
    pub calls: usize,
    /// Calls a second through `Context::run`.
    pub api_per_s: f64,
    /// Calls a second through the minimal dispatch.
    pub minimal_per_s: f64,
    /// The context's pipeline cache before the API calls.
    pub cache_before: CacheStats,
    /// And after them.
    pub cache_after: CacheStats,
}

impl SmallCall {
    /// How many times longer a call through the API takes than the minimal
    /// dispatch (the issue's target: at most 1.5).
    pub fn overhead(&self) -> f64 {
        self.minimal_per_s / self.api_per_s
    }
}

/// Everything `ops bench` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    /// The adapter (`llvmpipe (LLVM 15.0.7, 256 bits) [vulkan, software]`, [`crate::term::adapter_text`]).
    pub adapter: String,
    /// True for a software adapter.
    pub software: bool,
    /// The class of plans the cases ran ([`Context::device_class`]).
    pub class: DeviceClass,
    /// Where the GPU times come from ([`ops_gpu::TimeSource::label`]).
    pub time_source: &'static str,
    /// The options it ran with.
    pub options: BenchOptions,
    /// The copy kernel, copying [`BenchOptions::size`] bytes, 16 bytes a
    /// thread: the device's bandwidth figure every ratio is taken to.
    pub copy: CaseResult,
    /// The same copy one `u32` word a thread, the granularity the generated
    /// kernels load and store at (for the record: on a software adapter it
    /// is much slower than the 16-byte copy).
    pub copy_words: CaseResult,
    /// Every case.
    pub cases: Vec<CaseResult>,
    /// The small-call comparison.
    pub small_call: SmallCall,
    /// Operators recorded in one submission against the same called one by
    /// one ([`chain`]).
    pub chain: chain::ChainReport,
}

/// Runs the benchmark on `ctx`'s adapter.
pub fn bench(ctx: &Context, options: &BenchOptions) -> Result<BenchReport, OpError> {
    let profiler = Profiler::new(ctx)?;
    let class = options.plans.unwrap_or_else(|| ctx.device_class());
    let runs = options.runs.max(1);
    let wanted = |c: &CaseSpec| {
        options
            .filter
            .as_ref()
            .is_none_or(|f| c.name.contains(f.as_str()) || c.dtype.contains(f.as_str()))
    };

    // The device's bandwidth figure: a copy of the main tensors' byte count.
    let copy_bytes = (options.size.max(16) / 16) * 16;
    // The copy kernel stays prepared: it runs again alongside every case.
    let (copy, alongside) = copy_case(&profiler, copy_bytes, options, runs, false)?;
    let (copy_words, _) = copy_case(&profiler, copy_bytes, options, runs, true)?;
    let mut results = Vec::new();
    // Progress: a bar on a terminal, a line per case elsewhere. The bar's
    // length comes from the case list at the smoke size (the same cases,
    // built in an instant), corrected as each group's real cases are built.
    let mut bar = if options.progress {
        let mut rng = Rng::new(CASE_SEED);
        let mut count = 0;
        for types in TYPE_GROUPS {
            let small = cases_of(BenchOptions::smoke().size, types, &mut rng);
            count += small.map_or(0, |c| c.iter().filter(|c| wanted(c)).count());
        }
        Bar::new(count as u64, "cases", Duration::ZERO)
    } else {
        Bar::hidden()
    };
    let lines = options.progress && !bar.drawn();
    let mut done = 0u64;
    // One data-type group at a time, so that only its inputs are in memory.
    let mut rng = Rng::new(CASE_SEED);
    for types in TYPE_GROUPS {
        let specs = cases_of(options.size, types, &mut rng)?;
        let specs: Vec<&CaseSpec> = specs.iter().filter(|c| wanted(c)).collect();
        let left = bar.bar().length().unwrap_or(0).saturating_sub(done);
        if specs.len() as u64 > left {
            bar.bar().inc_length(specs.len() as u64 - left);
        }
        for spec in specs {
            bar.update(done, format!("{} {}", spec.name, spec.dtype));
            let r = run_case(&profiler, class, spec, options, runs, &alongside)?;
            done += 1;
            if lines {
                eprintln!(
                    "{} {}: {:.3} ms, {:.2} GB/s, {:.2}x copy, cpu {}",
                    r.name,
                    r.dtype,
                    ms(r.median),
                    r.gbps,
                    r.ratio,
                    r.cpu.map_or("-".into(), |t| format!("{:.1} ms", ms(t)))
                );
            }
            results.push(r);
        }
    }
    bar.update(done, "small calls");
    let small_call = small_call(ctx, options.small_calls.max(1))?;
    bar.update(done, "chains");
    let chain = chain::chains(ctx, options.small_calls.max(1), runs, options.size)?;
    bar.finish();
    let a = ctx.adapter();
    Ok(BenchReport {
        adapter: crate::term::adapter_text(a),
        software: a.software,
        class,
        time_source: profiler.time_source().label(),
        options: options.clone(),
        copy,
        copy_words,
        cases: results,
        small_call,
        chain,
    })
}

/// The report's description of a plan class.
fn class_text(class: DeviceClass) -> String {
    let shape = match class {
        DeviceClass::Software => "shaped for a CPU adapter",
        DeviceClass::Hardware => "shaped for a GPU",
    };
    format!("{} ({shape})", class.name())
}

fn gbps(bytes: u64, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64().max(1e-12) / 1e9
}

fn median(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    let mid = times.len() / 2;
    let m = if times.len() % 2 == 1 {
        times[mid]
    } else {
        (times[mid - 1] + times[mid]) / 2
    };
    (m, times[0])
}

/// The copy kernel, prepared once and run alongside every case.
struct Alongside<'p> {
    prepared: ops_gpu::Prepared<'p>,
    /// Bytes one copy moves (read and written).
    bytes: u64,
}

/// Warm-up and timed runs of a prepared plan, each timed run after a run of
/// the copy kernel when `copy` is given: (median, fastest, the copy runs'
/// median).
fn time_runs(
    prepared: &ops_gpu::Prepared<'_>,
    copy: Option<&Alongside<'_>>,
    options: &BenchOptions,
    runs: usize,
) -> Result<(Duration, Duration, Option<Duration>), OpError> {
    let start = Instant::now();
    let mut warm = 0;
    while warm < options.warmup || start.elapsed().as_millis() < u128::from(options.warmup_ms) {
        if let Some(c) = copy {
            c.prepared.run()?;
        }
        prepared.run()?;
        warm += 1;
    }
    let mut times = Vec::with_capacity(runs);
    let mut copies = Vec::with_capacity(runs);
    for _ in 0..runs {
        if let Some(c) = copy {
            copies.push(c.prepared.run()?.best());
        }
        times.push(prepared.run()?.best());
    }
    let (med, min) = median(times);
    Ok((med, min, copy.map(|_| median(copies).0)))
}

/// The copy kernel (`words`: one `u32` a thread) over `bytes`, timed, and
/// kept prepared for running alongside the cases.
fn copy_case<'p>(
    profiler: &'p Profiler,
    bytes: u64,
    options: &BenchOptions,
    runs: usize,
    words: bool,
) -> Result<(CaseResult, Alongside<'p>), OpError> {
    let (plan, desc) = if words {
        ops_gpu::copy_words_plan(bytes)?
    } else {
        ops_gpu::copy_plan(bytes)?
    };
    let mut rng = Rng::new(0x0c0f_fee0_dead_beef);
    let input = random_tensor(&desc, &mut rng)?;
    let prepared = profiler.prepare(&plan, &[&input], std::slice::from_ref(&desc))?;
    let (med, min, _) = time_runs(&prepared, None, options, runs)?;
    let out = prepared.read_outputs()?;
    let moved = 2 * bytes;
    let result = CaseResult {
        name: "copy".into(),
        dtype: if words { "u32" } else { "vec4<u32>" }.into(),
        shape: format!("{} bytes", bytes),
        kernels: plan.passes.iter().map(|p| p.kernel.key).collect(),
        bytes: moved,
        median: med,
        min,
        gbps: gbps(moved, med),
        ratio: 1.0,
        copy_gbps: gbps(moved, med),
        target: 1.0,
        cpu: None,
        matches_cpu: Some(out.first() == Some(&input)),
    };
    Ok((
        result,
        Alongside {
            prepared,
            bytes: moved,
        },
    ))
}

fn run_case(
    profiler: &Profiler,
    class: DeviceClass,
    spec: &CaseSpec,
    options: &BenchOptions,
    runs: usize,
    copy: &Alongside<'_>,
) -> Result<CaseResult, OpError> {
    let op = spec.op.as_ref();
    let inputs: Vec<&HostTensor> = spec.inputs.iter().map(|t| t.as_ref()).collect();
    let plan = op.gpu_plan_for(class)?;
    let prepared = profiler.prepare(&plan, &inputs, &op.output_descs())?;
    let (med, min, copy_med) = time_runs(&prepared, Some(copy), options, runs)?;
    let copy_gbps = gbps(copy.bytes, copy_med.unwrap_or_default());
    let gpu_out = prepared.read_outputs()?;
    drop(prepared);
    let (cpu, matches_cpu) = if options.cpu_reference {
        let start = Instant::now();
        let want = op.run_cpu(&inputs)?;
        (
            Some(start.elapsed()),
            Some(ops_core::fuzz::compare_within(&gpu_out, &want, op.tolerance()).is_ok()),
        )
    } else {
        (None, None)
    };
    Ok(CaseResult {
        name: spec.name.clone(),
        dtype: spec.dtype.clone(),
        shape: spec.shape.clone(),
        kernels: plan.passes.iter().map(|p| p.kernel.key).collect(),
        bytes: spec.bytes,
        median: med,
        min,
        gbps: gbps(spec.bytes, med),
        ratio: gbps(spec.bytes, med) / copy_gbps,
        copy_gbps,
        target: spec.target,
        cpu,
        matches_cpu,
    })
}

/// The small-call comparison.
/// Rounds the small calls are split into, alternating the two sides.
const SMALL_CALL_ROUNDS: usize = 10;

fn small_call(ctx: &Context, calls: usize) -> Result<SmallCall, OpError> {
    let elements = (SMALL_CALL_BYTES / 4) as u32;
    let sizes = [16u32, elements / 16];
    let mut rng = Rng::new(0x5ca1_ab1e);
    let input = random_tensor(&TensorDesc::new(DataType::Float32, sizes), &mut rng)?;
    let op = ArgMinDesc::builder()
        .input(input.desc().clone())
        .output_dtype(DataType::Int64)
        .axes([1u32])
        .build()
        .map_err(|e| OpError::InvalidArgument(e.to_string()))?;
    let plan = op.gpu_plan_for(ctx.device_class())?;
    let out_desc = op.output_descs().remove(0);
    let minimal = MinimalDispatch::new(ctx, &plan, SMALL_CALL_BYTES, &out_desc)?;

    // One untimed call each (compiles the pipeline through the API), and
    // the same answer from both.
    let first = ctx.run(&op, &[&input])?.remove(0);
    let bytes = minimal.call(input.bytes())?;
    if bytes != first.bytes() {
        return Err(OpError::Device(
            "the minimal dispatch and Context::run disagree".into(),
        ));
    }
    let cache_before = ctx.cache_stats();
    // Alternating rounds of each, so that a slow spell of a shared machine
    // falls on both alike.
    let (mut api, mut min) = (Duration::ZERO, Duration::ZERO);
    let rounds = SMALL_CALL_ROUNDS.min(calls);
    for round in 0..rounds {
        let n = calls / rounds + usize::from(round < calls % rounds);
        let start = Instant::now();
        for _ in 0..n {
            ctx.run(&op, &[&input])?;
        }
        api += start.elapsed();
        let start = Instant::now();
        for _ in 0..n {
            minimal.call(input.bytes())?;
        }
        min += start.elapsed();
    }
    let cache_after = ctx.cache_stats();
    Ok(SmallCall {
        what: format!(
            "ArgMin FLOAT32 {:?} over axis 1 -> INT64 ({} bytes in, kernel {})",
            sizes,
            SMALL_CALL_BYTES,
            plan.passes.first().map_or("-", |p| p.kernel.key)
        ),
        calls,
        api_per_s: calls as f64 / api.as_secs_f64().max(1e-12),
        minimal_per_s: calls as f64 / min.as_secs_f64().max(1e-12),
        cache_before,
        cache_after,
    })
}

/// One benchmark case, built.
struct CaseSpec {
    name: String,
    dtype: String,
    shape: String,
    op: Box<dyn Operator>,
    /// Shared between the cases of a data-type group.
    inputs: Vec<Arc<HostTensor>>,
    bytes: u64,
    target: f64,
}

/// Random elements: floats uniform in [-1000, 1000) (no NaN), integers
/// uniformly random bits.
fn random_tensor(desc: &TensorDesc, rng: &mut Rng) -> Result<HostTensor, OpError> {
    let n = desc.element_count().unwrap_or(0) as usize;
    let width = desc.dtype.size_bytes();
    let mut bytes = Vec::with_capacity(n * width);
    for _ in 0..n {
        let r = rng.next_u64();
        let unit = (r >> 40) as f64 / (1u64 << 24) as f64;
        let value = unit * 2000.0 - 1000.0;
        match desc.dtype {
            DataType::Float32 => bytes.extend_from_slice(&(value as f32).to_le_bytes()),
            DataType::Float64 => bytes.extend_from_slice(&value.to_le_bytes()),
            DataType::Float16 => bytes.extend_from_slice(&half::f16::from_f64(value).to_le_bytes()),
            _ => bytes.extend_from_slice(&r.to_le_bytes()[..width]),
        }
    }
    HostTensor::from_bytes(desc.clone(), bytes)
}

/// An index tensor of `sizes` whose element `i` is `value(i)`, called in
/// element order.
fn index_tensor(
    dtype: DataType,
    sizes: &[u32],
    mut value: impl FnMut(u64) -> u64,
) -> Result<HostTensor, OpError> {
    let desc = TensorDesc::new(dtype, sizes.to_vec());
    let n = desc.element_count().unwrap_or(0);
    let width = dtype.size_bytes();
    let mut bytes = Vec::with_capacity(n as usize * width);
    for i in 0..n {
        bytes.extend_from_slice(&value(i).to_le_bytes()[..width]);
    }
    HostTensor::from_bytes(desc, bytes)
}

fn build_error(e: impl std::fmt::Display) -> OpError {
    OpError::InvalidArgument(format!("a benchmark descriptor failed to build: {e}"))
}

/// `2^k` elements of `width` bytes fitting `size`, at least 2^6.
fn log2_elements(size: u64, width: usize) -> u32 {
    let n = (size / width as u64).max(64);
    63 - n.leading_zeros()
}

/// Which axes a reduction case reduces.
#[derive(Clone, Copy)]
enum Placement {
    All,
    Inner,
    Outer,
    Middle,
}

impl Placement {
    const ALL: [Placement; 4] = [
        Placement::All,
        Placement::Inner,
        Placement::Outer,
        Placement::Middle,
    ];

    fn axes(self) -> &'static [u32] {
        match self {
            Placement::All => &[0, 1, 2],
            Placement::Inner => &[2],
            Placement::Outer => &[0],
            Placement::Middle => &[1],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Placement::All => "all axes",
            Placement::Inner => "inner axis",
            Placement::Outer => "outer axis",
            Placement::Middle => "middle axis",
        }
    }
}

/// The seed of the cases' inputs: the same inputs on every run.
const CASE_SEED: u64 = 0x0b5e_55ed_2024_0606;

/// The data-type groups: (data type of the reductions and scatters, gather
/// data type, index type of the gathers and scatters).
const TYPE_GROUPS: [(DataType, DataType, DataType); 3] = [
    (DataType::Float32, DataType::Float32, DataType::Int32),
    (DataType::Float16, DataType::Float16, DataType::Int32),
    (DataType::Int64, DataType::Float32, DataType::Int64),
];

/// Every case for main tensors of `size` bytes.
#[cfg(test)]
fn cases(size: u64) -> Result<Vec<CaseSpec>, OpError> {
    let mut rng = Rng::new(CASE_SEED);
    let mut out = Vec::new();
    for types in TYPE_GROUPS {
        out.extend(cases_of(size, types, &mut rng)?);
    }
    Ok(out)
}

/// Elements of `input` kept by a reduction over `axes`: its output's.
fn kept_elements(input: &HostTensor, axes: &[u32]) -> u64 {
    (0u32..)
        .zip(input.sizes())
        .filter(|(d, _)| !axes.contains(d))
        .map(|(_, &s)| u64::from(s))
        .product()
}

/// ArgMin (INT64 indices) over `axes` of `input`.
fn argmin_case(name: String, input: &Arc<HostTensor>, axes: &[u32]) -> Result<CaseSpec, OpError> {
    let argmin = ArgMinDesc::builder()
        .input(input.desc().clone())
        .output_dtype(DataType::Int64)
        .axes(axes.to_vec())
        .build()
        .map_err(build_error)?;
    Ok(CaseSpec {
        name,
        dtype: input.dtype().spec_name().to_string(),
        shape: format!("{:?} -> INT64", input.sizes()),
        op: Box::new(argmin),
        bytes: input.bytes().len() as u64 + kept_elements(input, axes) * 8,
        inputs: vec![Arc::clone(input)],
        target: 0.8,
    })
}

/// ReduceMin over `axes` of `input`.
fn reduce_min_case(
    name: String,
    input: &Arc<HostTensor>,
    axes: &[u32],
) -> Result<CaseSpec, OpError> {
    let axes_t = HostTensor::from_slice(
        [axes.len() as u32],
        &axes.iter().map(|&a| i64::from(a)).collect::<Vec<_>>(),
    )?;
    let reduce_min = ReduceMinDesc::builder()
        .data(input.desc().clone())
        .axes(axes_t.clone())
        .build()
        .map_err(build_error)?;
    let width = input.dtype().size_bytes() as u64;
    Ok(CaseSpec {
        name,
        dtype: input.dtype().spec_name().to_string(),
        shape: format!("{:?}", input.sizes()),
        op: Box::new(reduce_min),
        bytes: input.bytes().len() as u64 + kept_elements(input, axes) * width,
        inputs: vec![Arc::clone(input), Arc::new(axes_t)],
        target: 0.8,
    })
}

/// ReduceSum (DirectML REDUCE with SUM) over `axes` of `input`.
fn reduce_sum_case(
    name: String,
    input: &Arc<HostTensor>,
    axes: &[u32],
) -> Result<CaseSpec, OpError> {
    let op = ReduceDesc::builder()
        .input(input.desc().clone())
        .output_dtype(input.dtype())
        .function(ReduceFunction::Sum)
        .axes(axes.to_vec())
        .build()
        .map_err(build_error)?;
    let width = input.dtype().size_bytes() as u64;
    Ok(CaseSpec {
        name,
        dtype: input.dtype().spec_name().to_string(),
        shape: format!("{:?}", input.sizes()),
        op: Box::new(op),
        bytes: input.bytes().len() as u64 + kept_elements(input, axes) * width,
        inputs: vec![Arc::clone(input)],
        target: 0.8,
    })
}

/// The cases of one data-type group for main tensors of `size` bytes.
fn cases_of(
    size: u64,
    (dt, gather_dt, index_dt): (DataType, DataType, DataType),
    rng: &mut Rng,
) -> Result<Vec<CaseSpec>, OpError> {
    let mut out = Vec::new();
    // Reductions: a 3-D tensor, sides powers of two.
    let k = log2_elements(size, dt.size_bytes());
    let side = k / 3;
    let sizes = [1u32 << (k - 2 * side), 1 << side, 1 << side];
    let input = Arc::new(random_tensor(&TensorDesc::new(dt, sizes), rng)?);
    for placement in Placement::ALL {
        let axes = placement.axes();
        out.push(argmin_case(
            format!("ArgMin {}", placement.name()),
            &input,
            axes,
        )?);
        out.push(reduce_min_case(
            format!("ReduceMin {}", placement.name()),
            &input,
            axes,
        )?);
    }
    // ReduceSum (DirectML REDUCE SUM, a fold): FLOAT32, FLOAT16 and, in
    // the 64-bit group, INT32. Floats of one sign in [0.5, 2): the sum's
    // ULP contract holds without cancellation.
    let sum_dt = if dt == DataType::Int64 {
        DataType::Int32
    } else {
        dt
    };
    let mut fuzz_rng = Rng::new(rng.next_u64());
    let sum_input = Arc::new(if sum_dt.is_float() {
        ops_core::fuzz::same_sign_tensor(sum_dt, &sizes, Some((0.5, 2.0)), &mut fuzz_rng)
    } else {
        random_tensor(&TensorDesc::new(sum_dt, sizes), rng)?
    });
    for placement in Placement::ALL {
        out.push(reduce_sum_case(
            format!("ReduceSum {}", placement.name()),
            &sum_input,
            placement.axes(),
        )?);
    }
    // The first and last axes: each output's rows lie a kept dimension
    // apart (a per-channel reduction; `reduce_split_lanes` over segments in
    // software plans, the word variants in hardware plans).
    out.push(reduce_min_case(
        "ReduceMin first and last axes".into(),
        &input,
        &[0, 2],
    )?);
    // Ragged rows, one element short of whole 16-byte vectors: their inner
    // axis (`reduce_split_lanes_ragged` in software plans) and their middle
    // axis, inner blocks that are not whole vectors (`reduce_split_columns`
    // in phases in software plans); hardware plans run the word variants.
    let ragged_sizes = [sizes[0], sizes[1], sizes[2].max(2) - 1];
    let ragged = Arc::new(random_tensor(&TensorDesc::new(dt, ragged_sizes), rng)?);
    for (axis, placement) in [(2u32, "inner"), (1, "middle")] {
        out.push(argmin_case(
            format!("ArgMin {placement} axis, ragged rows"),
            &ragged,
            &[axis],
        )?);
    }

    // Gathers: rows of a 2-D tensor, and single elements of it.
    let gw = gather_dt.size_bytes();
    let iw = index_dt.size_bytes() as u64;
    let k = log2_elements(size, gw);
    let (rows, cols) = (1u32 << (k - k / 2), 1u32 << (k / 2));
    let table = Arc::new(random_tensor(
        &TensorDesc::new(gather_dt, [rows, cols]),
        rng,
    )?);
    let table_bytes = table.bytes().len() as u64;
    let gtype = format!("{}/{} idx", gather_dt.spec_name(), index_dt.spec_name());
    let row_ix = index_tensor(index_dt, &[rows, 1], |_| rng.below(u64::from(rows)))?;
    let gather_rows = GatherND1Desc::builder()
        .input(table.desc().clone())
        .indices(row_ix.desc().clone())
        .input_dimension_count(2)
        .indices_dimension_count(2)
        .build()
        .map_err(build_error)?;
    out.push(CaseSpec {
        name: "GatherND1 rows".into(),
        dtype: gtype.clone(),
        shape: format!("[{rows}, {cols}] by [{rows}, 1]"),
        op: Box::new(gather_rows),
        inputs: vec![Arc::clone(&table), Arc::new(row_ix)],
        bytes: 2 * table_bytes + u64::from(rows) * iw,
        target: 0.7,
    });
    // As many elements as the table holds, within an index tensor of
    // at most `size` bytes.
    let count = (u64::from(rows * cols)).min((size / (2 * iw)).max(1)) as u32;
    let elem_ix = index_tensor(index_dt, &[count, 2], |i| {
        if i % 2 == 0 {
            rng.below(u64::from(rows))
        } else {
            rng.below(u64::from(cols))
        }
    })?;
    // The same count of elements in row-major order: what random access
    // costs, for the record.
    let ordered_ix = index_tensor(index_dt, &[count, 2], |i| {
        if i % 2 == 0 {
            (i / 2) / u64::from(cols)
        } else {
            (i / 2) % u64::from(cols)
        }
    })?;
    for (name, indices) in [
        ("GatherND1 elements", elem_ix),
        ("GatherND1 elems in order", ordered_ix),
    ] {
        let gather_elems = GatherND1Desc::builder()
            .input(table.desc().clone())
            .indices(indices.desc().clone())
            .input_dimension_count(2)
            .indices_dimension_count(2)
            .build()
            .map_err(build_error)?;
        out.push(CaseSpec {
            name: name.into(),
            dtype: gtype.clone(),
            shape: format!("[{rows}, {cols}] by [{count}, 2]"),
            op: Box::new(gather_elems),
            inputs: vec![Arc::clone(&table), Arc::new(indices)],
            bytes: u64::from(count) * (2 * gw as u64 + 2 * iw),
            target: 0.4,
        });
    }

    // Scatters along axis 0 of a 2-D tensor, updates as large as it: a
    // square one (few columns: two passes on a GPU) and a wide one of 64
    // rows (many columns: one pass walking each column).
    let k = log2_elements(size, dt.size_bytes());
    for (shape, rows) in [("", 1u32 << (k - k / 2)), (" wide", 64.min(1 << k))] {
        let cols = (1u32 << k) / rows;
        let data = Arc::new(random_tensor(&TensorDesc::new(dt, [rows, cols]), rng)?);
        let updates = Arc::new(random_tensor(data.desc(), rng)?);
        let data_bytes = data.bytes().len() as u64;
        let stype = format!("{}/{} idx", dt.spec_name(), index_dt.spec_name());
        let (r, c) = (u64::from(rows), u64::from(cols));
        // Unique: update row k lands in row perm(k), a permutation.
        let unique = index_tensor(index_dt, &[rows, cols], |i| ((i / c) * 0x9e37_79b1) % r)?;
        // Collisions: every update aims at one of 16 rows.
        let colliding = index_tensor(index_dt, &[rows, cols], |i| (i / c) % 16.min(r))?;
        // Random: each update element aims at a row of its own choosing, so
        // neighbouring columns go to different rows.
        let random = index_tensor(index_dt, &[rows, cols], |_| rng.below(r))?;
        for (name, indices) in [
            ("unique", unique),
            ("collisions", colliding),
            ("random", random),
        ] {
            let scatter = ScatterDesc::builder()
                .input(data.desc().clone())
                .indices(indices.desc().clone())
                .updates(updates.desc().clone())
                .axis(0)
                .build()
                .map_err(build_error)?;
            out.push(CaseSpec {
                name: format!("Scatter {name}{shape}"),
                dtype: stype.clone(),
                shape: format!("[{rows}, {cols}] axis 0"),
                op: Box::new(scatter),
                inputs: vec![Arc::clone(&data), Arc::new(indices), Arc::clone(&updates)],
                bytes: 3 * data_bytes + r * c * iw,
                target: 0.4,
            });
        }
    }
    // The ONNX cases draw from a generator of their own, so that the cases
    // above keep their inputs.
    let mut onnx_rng = Rng::new(CASE_SEED ^ dt.size_bytes() as u64);
    out.extend(onnx_cases(size, (dt, gather_dt, index_dt), &mut onnx_rng)?);
    Ok(out)
}

/// The ratio the issue asks of an element-wise operator on a hardware GPU.
const ELEMENTWISE_TARGET: f64 = 0.85;
/// The ratio it asks of a row gather or a transpose.
const ROWS_TARGET: f64 = 0.7;
/// The ratio it asks of an element gather or a scatter.
const ELEMENTS_TARGET: f64 = 0.4;

/// A case whose operator reads each of its inputs once and writes each of
/// its outputs once (element-wise operators, their broadcasts, transposes):
/// its bytes are its tensors' bytes, its data type its first input's. A new
/// case of that kind is one line:
///
/// ```text
/// out.push(streaming_case("Neg", onnx::NegDesc::builder().x(a.desc().clone()).build(), &[&a], ELEMENTWISE_TARGET)?);
/// ```
fn streaming_case<O, E>(
    name: impl Into<String>,
    op: Result<O, E>,
    inputs: &[&Arc<HostTensor>],
    target: f64,
) -> Result<CaseSpec, OpError>
where
    O: Operator + 'static,
    E: std::fmt::Display,
{
    let op = op.map_err(build_error)?;
    let read: u64 = inputs.iter().map(|t| t.bytes().len() as u64).sum();
    let written: u64 = op
        .output_descs()
        .iter()
        .filter_map(TensorDesc::byte_size)
        .sum();
    let shape = inputs
        .iter()
        .map(|t| format!("{:?}", t.sizes()))
        .collect::<Vec<_>>()
        .join(" + ");
    Ok(CaseSpec {
        name: name.into(),
        dtype: inputs
            .first()
            .map_or("-", |t| t.dtype().spec_name())
            .to_string(),
        shape,
        op: Box::new(op),
        inputs: inputs.iter().map(|&t| Arc::clone(t)).collect(),
        bytes: read + written,
        target,
    })
}

/// The ONNX cases of one data-type group: element-wise operators, clips
/// and concatenations (in the float groups), the embedding lookup of a
/// language model, element gathers, ScatterND and the transpose of the
/// last two axes.
fn onnx_cases(
    size: u64,
    (dt, gather_dt, index_dt): (DataType, DataType, DataType),
    rng: &mut Rng,
) -> Result<Vec<CaseSpec>, OpError> {
    let mut out = Vec::new();
    let iw = index_dt.size_bytes() as u64;
    let itype = |data: DataType| format!("{}/{} idx", data.spec_name(), index_dt.spec_name());

    // Element-wise, FLOAT32 and FLOAT16: a 2-D tensor of `size` bytes with
    // another as large, and with one of its rows (broadcast over the rows).
    if dt.is_float() {
        let k = log2_elements(size, dt.size_bytes());
        let (rows, cols) = (1u32 << (k - k / 2), 1u32 << (k / 2));
        let a = Arc::new(random_tensor(&TensorDesc::new(dt, [rows, cols]), rng)?);
        let b = Arc::new(random_tensor(a.desc(), rng)?);
        let row = Arc::new(random_tensor(&TensorDesc::new(dt, [cols]), rng)?);
        let add = |b: &HostTensor| {
            onnx::AddDesc::builder()
                .a(a.desc().clone())
                .b(b.desc().clone())
                .build()
        };
        out.push(streaming_case(
            "Add",
            add(&b),
            &[&a, &b],
            ELEMENTWISE_TARGET,
        )?);
        out.push(streaming_case(
            "Add row broadcast",
            add(&row),
            &[&a, &row],
            ELEMENTWISE_TARGET,
        )?);
        // An element-wise operator with an attribute (a select of `x` and
        // `alpha * x`), standing in for a fused expression of several
        // operations until the catalog has one.
        let leaky = onnx::LeakyReluDesc::builder()
            .x(a.desc().clone())
            .alpha(0.01)
            .build();
        out.push(streaming_case(
            "LeakyRelu",
            leaky,
            &[&a],
            ELEMENTWISE_TARGET,
        )?);
        out.extend(clip_and_concat_cases(&a)?);
    }

    // The embedding lookup of a language model: rows of a [vocab, hidden]
    // table (hidden at most 4,096) gathered along axis 0 by random token
    // ids, as many as the table has rows, in a batch of 4 sequences.
    let gw = gather_dt.size_bytes() as u64;
    let k = log2_elements(size, gather_dt.size_bytes());
    let hidden = 1u32 << (k / 2).min(12);
    let vocab = (1u32 << k) / hidden;
    let table = Arc::new(random_tensor(
        &TensorDesc::new(gather_dt, [vocab, hidden]),
        rng,
    )?);
    let batch = 4.min(vocab);
    let ids = index_tensor(index_dt, &[batch, vocab / batch], |_| {
        rng.below(u64::from(vocab))
    })?;
    let tokens = u64::from(batch * (vocab / batch));
    let embed = onnx::GatherDesc::builder()
        .data(table.desc().clone())
        .indices(ids.desc().clone())
        .axis(0)
        .build()
        .map_err(build_error)?;
    out.push(CaseSpec {
        name: "Gather embedding rows".into(),
        dtype: itype(gather_dt),
        shape: format!("[{vocab}, {hidden}] by [{batch}, {}]", vocab / batch),
        op: Box::new(embed),
        inputs: vec![Arc::clone(&table), Arc::new(ids)],
        // The selected rows and the ids read, the output written.
        bytes: tokens * (2 * u64::from(hidden) * gw + iw),
        target: ROWS_TARGET,
    });
    // GatherElements along axis 0 of the same table, each element from a
    // random row, by indices of at most `size` bytes.
    let n = (size / (u64::from(hidden) * iw)).clamp(1, u64::from(vocab)) as u32;
    let elem_ix = index_tensor(index_dt, &[n, hidden], |_| rng.below(u64::from(vocab)))?;
    let gather_elems = onnx::GatherElementsDesc::builder()
        .data(table.desc().clone())
        .indices(elem_ix.desc().clone())
        .axis(0)
        .build()
        .map_err(build_error)?;
    out.push(CaseSpec {
        name: "GatherElements axis 0".into(),
        dtype: itype(gather_dt),
        shape: format!("[{vocab}, {hidden}] by [{n}, {hidden}]"),
        op: Box::new(gather_elems),
        inputs: vec![table, Arc::new(elem_ix)],
        // An element and an index read, an element written, per output.
        bytes: u64::from(n) * u64::from(hidden) * (2 * gw + iw),
        target: ELEMENTS_TARGET,
    });

    // ScatterND of whole rows (index tuples of one value) into a 2-D
    // tensor, updates as large as it: unique rows (update row `k` replaces
    // row `perm(k)`), and heavy collisions added up (every update row aimed
    // at one of 16 rows, `reduction` ADD).
    let k = log2_elements(size, dt.size_bytes());
    let (rows, cols) = (1u32 << (k - k / 2), 1u32 << (k / 2));
    let data = Arc::new(random_tensor(&TensorDesc::new(dt, [rows, cols]), rng)?);
    let updates = Arc::new(random_tensor(data.desc(), rng)?);
    let r = u64::from(rows);
    let unique = index_tensor(index_dt, &[rows, 1], |i| (i * 0x9e37_79b1) % r)?;
    let colliding = index_tensor(index_dt, &[rows, 1], |i| i % 16.min(r))?;
    for (name, indices, reduction) in [
        ("ScatterND unique", unique, ScatterNDReduction::None),
        (
            "ScatterND collisions add",
            colliding,
            ScatterNDReduction::Add,
        ),
    ] {
        let scatter = onnx::ScatterNDDesc::builder()
            .data(data.desc().clone())
            .indices(indices.desc().clone())
            .updates(updates.desc().clone())
            .reduction(reduction)
            .build()
            .map_err(build_error)?;
        out.push(CaseSpec {
            name: name.into(),
            dtype: itype(dt),
            shape: format!("[{rows}, {cols}] by [{rows}, 1]"),
            op: Box::new(scatter),
            inputs: vec![Arc::clone(&data), Arc::new(indices), Arc::clone(&updates)],
            // The data read and the output written (it starts as a copy),
            // the updates and indices read.
            bytes: 3 * data.bytes().len() as u64 + r * iw,
            target: ELEMENTS_TARGET,
        });
    }

    // The transpose of the last two axes of a 3-D tensor (the reductions'
    // shape: [256, 256, 256] for 64 MiB of FLOAT32).
    let side = k / 3;
    let sizes = [1u32 << (k - 2 * side), 1 << side, 1 << side];
    let x = Arc::new(random_tensor(&TensorDesc::new(dt, sizes), rng)?);
    let transpose = onnx::TransposeDesc::builder()
        .data(x.desc().clone())
        .perm([0i64, 2, 1])
        .build();
    out.push(CaseSpec {
        shape: format!("{sizes:?} perm [0, 2, 1]"),
        ..streaming_case("Transpose last two axes", transpose, &[&x], ROWS_TARGET)?
    });
    Ok(out)
}

/// A tensor of empty shape holding `value` (FLOAT32 or FLOAT16).
fn scalar_tensor(dt: DataType, value: f32) -> Result<HostTensor, OpError> {
    let bytes = match dt {
        DataType::Float16 => half::f16::from_f32(value).to_le_bytes().to_vec(),
        _ => value.to_le_bytes().to_vec(),
    };
    HostTensor::from_bytes(TensorDesc::new(dt, Vec::<u32>::new()), bytes)
}

/// The parts ONNX Concat joins in its cases: four equal ones.
const CONCAT_PARTS: u32 = 4;

/// The clips and concatenations of a float group, on `a` (a 2-D tensor of
/// the group's main size, `[rows, cols]`):
///
/// - ONNX Clip with both bounds given (rank-0 tensors: the instance
///   `ClipDesc`, beside `ClipNoMinDesc` and the others), half of `a`'s
///   elements clipped;
/// - DirectML ELEMENT_WISE_CLIP with a `ScaleBias` other than (1, 0),
///   `clip(x * scale + bias, min, max)`: three operations in one kernel,
///   the fused expression the element-wise target is about;
/// - ONNX Concat of [`CONCAT_PARTS`] equal parts (the instance
///   `Concat4Desc`) along the last axis and along axis 0 into a tensor of
///   `a`'s shape: data movement, the rows target.
///
/// The concatenations' parts come from a generator of their own, so that
/// the other cases keep their inputs.
fn clip_and_concat_cases(a: &Arc<HostTensor>) -> Result<Vec<CaseSpec>, OpError> {
    let dt = a.dtype();
    let (rows, cols) = (a.sizes()[0], a.sizes()[1]);
    let mut out = Vec::new();
    let min = Arc::new(scalar_tensor(dt, -500.0)?);
    let max = Arc::new(scalar_tensor(dt, 500.0)?);
    let clip = onnx::ClipDesc::builder()
        .input(a.desc().clone())
        .min(min.desc().clone())
        .max(max.desc().clone())
        .build();
    out.push(streaming_case(
        "Clip",
        clip,
        &[a, &min, &max],
        ELEMENTWISE_TARGET,
    )?);
    let fused = ops::ElementWiseClipDesc::builder()
        .input(a.desc().clone())
        .min(-300.0)
        .max(300.0)
        .scale(0.5)
        .bias(25.0)
        .build();
    out.push(CaseSpec {
        shape: format!("{:?} scale 0.5 bias 25 to [-300, 300]", a.sizes()),
        ..streaming_case("Fused scale-bias clip", fused, &[a], ELEMENTWISE_TARGET)?
    });

    let mut rng = Rng::new(CASE_SEED ^ 0x00c0_c0a7 ^ dt.size_bytes() as u64);
    // At least 8 rows and 8 columns (64 elements): four parts either way.
    let n = CONCAT_PARTS;
    for (name, part_sizes, axis) in [
        ("Concat last axis", [rows, cols / n], 1i64),
        ("Concat axis 0", [rows / n, cols], 0),
    ] {
        let parts = (0..n)
            .map(|_| random_tensor(&TensorDesc::new(dt, part_sizes), &mut rng).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        let concat = onnx::Concat4Desc::builder()
            .inputs_0(parts[0].desc().clone())
            .inputs_1(parts[1].desc().clone())
            .inputs_2(parts[2].desc().clone())
            .inputs_3(parts[3].desc().clone())
            .axis(axis)
            .build();
        let refs: Vec<&Arc<HostTensor>> = parts.iter().collect();
        out.push(CaseSpec {
            shape: format!("{n} x {part_sizes:?} axis {axis}"),
            ..streaming_case(name, concat, &refs, ROWS_TARGET)?
        });
    }
    Ok(out)
}

impl BenchReport {
    /// False when the GPU's outputs of some case differ from the CPU
    /// reference's (or a copy lost its bytes).
    pub fn all_match(&self) -> bool {
        self.chain.matches_cpu
            && std::iter::once(&self.copy)
                .chain([&self.copy_words])
                .chain(&self.cases)
                .all(|c| c.matches_cpu != Some(false))
    }

    /// The report as a text table.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let o = &self.options;
        let _ = writeln!(
            s,
            "adapter: {}{}",
            self.adapter,
            if self.software {
                " (software: a CPU, not a GPU)"
            } else {
                ""
            }
        );
        let _ = writeln!(s, "plans: {}", class_text(self.class));
        let _ = writeln!(
            s,
            "timing: {}; median of {} runs after {} warm-up runs and at least {} ms of them; main tensors {} bytes",
            self.time_source, o.runs, o.warmup, o.warmup_ms, o.size
        );
        let _ = writeln!(
            s,
            "copy kernel: {:.2} GB/s ({} bytes moved in {:.3} ms)",
            self.copy.gbps,
            self.copy.bytes,
            ms(self.copy.median)
        );
        let _ = writeln!(
            s,
            "copy one u32 word a thread: {:.2} GB/s ({:.2}x the copy kernel)",
            self.copy_words.gbps,
            self.copy_words.gbps / self.copy.gbps
        );
        let alongside = self.cases.iter().map(|c| c.copy_gbps);
        let (low, high) = alongside.fold((f64::INFINITY, 0f64), |(l, h), g| (l.min(g), h.max(g)));
        if high > 0.0 {
            let _ = writeln!(
                s,
                "copy kernel alongside the cases (the `x copy` yardstick): {low:.2} to {high:.2} GB/s"
            );
        }
        let _ = writeln!(s);
        let mut table = crate::term::table(
            &[
                "case",
                "type",
                "MB moved",
                "median ms",
                "GB/s",
                "x copy",
                "target",
                "cpu GB/s",
                "check",
                "kernels",
            ],
            &[2, 3, 4, 5, 6, 7],
        );
        for c in &self.cases {
            table.add_row([
                c.name.clone(),
                c.dtype.clone(),
                format!("{:.1}", c.bytes as f64 / 1e6),
                format!("{:.3}", ms(c.median)),
                format!("{:.2}", c.gbps),
                format!("{:.2}", c.ratio),
                format!("{:.2}", c.target),
                c.cpu_gbps().map_or("-".into(), |g| format!("{g:.2}")),
                match c.matches_cpu {
                    Some(true) => "ok",
                    Some(false) => "DIFF",
                    None => "-",
                }
                .to_owned(),
                short_keys(&c.kernels),
            ]);
        }
        s.push_str(&crate::term::table_text(&table, ""));
        let sc = &self.small_call;
        let _ = writeln!(s);
        let _ = writeln!(s, "small calls: {}", sc.what);
        let _ = writeln!(
            s,
            "  Context::run {:.0} calls/s, minimal dispatch {:.0} calls/s: overhead {:.2}x (target <= 1.5x), {} calls each",
            sc.api_per_s,
            sc.minimal_per_s,
            sc.overhead(),
            sc.calls
        );
        let _ = writeln!(
            s,
            "  pipeline cache: {} compiled, {} hits before; {} compiled, {} hits after the {} calls",
            sc.cache_before.compiled,
            sc.cache_before.hits,
            sc.cache_after.compiled,
            sc.cache_after.hits,
            sc.calls
        );
        let _ = writeln!(s);
        s.push_str(&self.chain.to_text());
        s
    }

    /// The report as JSON, for machines.
    pub fn to_json(&self) -> Value {
        let o = &self.options;
        let sc = &self.small_call;
        json!({
            "adapter": self.adapter,
            "software": self.software,
            "plans": self.class.name(),
            "time_source": self.time_source,
            "size": o.size,
            "runs": o.runs,
            "warmup": o.warmup,
            "warmup_ms": o.warmup_ms,
            "copy": self.copy.to_json(),
            "copy_words": self.copy_words.to_json(),
            "cases": self.cases.iter().map(CaseResult::to_json).collect::<Vec<_>>(),
            "small_call": {
                "what": sc.what,
                "calls": sc.calls,
                "api_calls_per_s": sc.api_per_s,
                "minimal_calls_per_s": sc.minimal_per_s,
                "overhead": sc.overhead(),
                "target_overhead": 1.5,
                "cache_before": {"compiled": sc.cache_before.compiled, "hits": sc.cache_before.hits},
                "cache_after": {"compiled": sc.cache_after.compiled, "hits": sc.cache_after.hits},
            },
            "chain": self.chain.to_json(),
        })
    }
}

/// Parses a byte size: a number with an optional `K`, `M` or `G` suffix
/// (`KiB`, `MiB`, `GiB`; powers of 1024), as `ops bench --size` takes it.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a byte size (like 65536, 64K, 64MiB)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(format!("`{text}`: unknown unit `{unit}` (K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .filter(|&b| b >= 16)
        .ok_or_else(|| format!("`{text}` is out of range (16 bytes to 2^64)"))
}

fn ms(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}

/// Kernel keys without the operator and data types (`reduce_tree+reduce_combine`).
fn short_keys(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| k.split('/').nth(1).unwrap_or(k))
        .collect::<Vec<_>>()
        .join("+")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("16 KiB"), Ok(16 << 10));
        assert!(parse_size("8").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3T").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = Duration::from_millis;
        assert_eq!(median(vec![ms(3), ms(1), ms(2)]), (ms(2), ms(1)));
        assert_eq!(
            median(vec![ms(4), ms(1), ms(2), ms(3)]).0,
            Duration::from_micros(2500)
        );
    }

    #[test]
    fn cases_cover_the_issue() {
        let cases = cases(64 << 10).unwrap();
        let names: Vec<String> = cases
            .iter()
            .map(|c| format!("{} {}", c.name, c.dtype))
            .collect();
        for op in ["ArgMin", "ReduceMin"] {
            for axes in ["all axes", "inner axis", "outer axis", "middle axis"] {
                for dt in ["FLOAT32", "FLOAT16", "INT64"] {
                    let want = format!("{op} {axes} {dt}");
                    assert!(names.contains(&want), "{want} in {names:?}");
                }
            }
        }
        for name in [
            "ArgMin inner axis, ragged rows",
            "ArgMin middle axis, ragged rows",
            "ReduceMin first and last axes",
            "GatherND1 rows",
            "GatherND1 elements",
            "Scatter unique",
            "Scatter collisions",
            "Scatter random",
            "Scatter random wide",
        ] {
            assert_eq!(cases.iter().filter(|c| c.name == name).count(), 3, "{name}");
        }
        for name in [
            "Gather embedding rows",
            "GatherElements axis 0",
            "ScatterND unique",
            "ScatterND collisions add",
            "Transpose last two axes",
        ] {
            assert_eq!(cases.iter().filter(|c| c.name == name).count(), 3, "{name}");
        }
        for name in [
            "Add",
            "Add row broadcast",
            "LeakyRelu",
            "Clip",
            "Fused scale-bias clip",
            "Concat last axis",
            "Concat axis 0",
        ] {
            for dt in ["FLOAT32", "FLOAT16"] {
                let want = format!("{name} {dt}");
                assert!(names.contains(&want), "{want} in {names:?}");
            }
            assert_eq!(cases.iter().filter(|c| c.name == name).count(), 2, "{name}");
        }
        for c in &cases {
            assert_eq!(c.op.input_descs().len(), c.inputs.len(), "{}", c.name);
            assert!(c.bytes > 0 && c.target > 0.0, "{}", c.name);
        }
    }

    /// Every case's inputs are valid for its operator: the CPU reference
    /// runs them (an index out of range would be an error).
    #[test]
    fn cases_run_on_the_cpu() {
        for c in cases(64 << 10).unwrap() {
            let inputs: Vec<&HostTensor> = c.inputs.iter().map(|t| t.as_ref()).collect();
            let outputs = c.op.run_cpu(&inputs);
            assert!(
                outputs.is_ok(),
                "{} {}: {:?}",
                c.name,
                c.dtype,
                outputs.err()
            );
        }
    }

    /// The bytes of a case follow its tensors: a row broadcast reads the
    /// row once.
    #[test]
    fn streaming_bytes_count_each_tensor_once() {
        let cases = cases(64 << 10).unwrap();
        let find = |name: &str| {
            cases
                .iter()
                .find(|c| c.name == name && c.dtype == "FLOAT32")
                .unwrap()
        };
        let size = 64 << 10;
        assert_eq!(find("Add").bytes, 3 * size);
        assert_eq!(find("Add row broadcast").bytes, 2 * size + 128 * 4);
        assert_eq!(find("LeakyRelu").bytes, 2 * size);
        assert_eq!(find("Transpose last two axes").bytes, 2 * size);
        // The bounds are rank-0 tensors, read once.
        assert_eq!(find("Clip").bytes, 2 * size + 2 * 4);
        assert_eq!(find("Fused scale-bias clip").bytes, 2 * size);
        // Four parts of a quarter each read, the whole written.
        for name in ["Concat last axis", "Concat axis 0"] {
            let c = find(name);
            assert_eq!(c.bytes, 2 * size, "{name}");
            assert_eq!(c.inputs.len(), 4, "{name}");
            assert!(c.inputs.iter().all(|t| t.bytes().len() as u64 == size / 4));
        }
    }

    /// The clips and concatenations run the instances the brief names, on
    /// the main tensor's shape, with targets of their kind.
    #[test]
    fn clip_and_concat_cases() {
        let size = 64 << 10;
        let cases = cases(size).unwrap();
        for dt in ["FLOAT32", "FLOAT16"] {
            let find = |name: &str| {
                cases
                    .iter()
                    .find(|c| c.name == name && c.dtype == dt)
                    .unwrap_or_else(|| panic!("{name} {dt}"))
            };
            let width = if dt == "FLOAT32" { 4 } else { 2 };
            let clip = find("Clip");
            assert_eq!(clip.op.info().instance, "");
            assert_eq!(clip.inputs.len(), 3);
            assert!(clip.inputs[1].sizes().is_empty() && clip.inputs[2].sizes().is_empty());
            assert_eq!(clip.bytes, 2 * size + 2 * width);
            assert_eq!(clip.target, ELEMENTWISE_TARGET);
            let fused = find("Fused scale-bias clip");
            assert_eq!(fused.bytes, 2 * size);
            assert_eq!(fused.target, ELEMENTWISE_TARGET);
            for (name, axis) in [("Concat last axis", 1), ("Concat axis 0", 0)] {
                let c = find(name);
                assert_eq!(c.op.info().instance, "4", "{name}");
                assert_eq!(c.bytes, 2 * size, "{name} {dt}");
                assert_eq!(c.target, ROWS_TARGET);
                let out = c.op.output_descs().remove(0);
                assert_eq!(out.byte_size(), Some(size), "{name} {dt}");
                let part = c.inputs[0].sizes();
                assert_eq!(part[axis], out.sizes[axis] / 4, "{name} {dt}");
                assert_eq!(part[1 - axis], out.sizes[1 - axis], "{name} {dt}");
            }
        }
        // Element-wise operators and concatenations stay in the float groups.
        for name in ["Clip", "Fused scale-bias clip", "Concat axis 0"] {
            assert!(!cases.iter().any(|c| c.name == name && c.dtype == "INT64"));
        }
    }
}
