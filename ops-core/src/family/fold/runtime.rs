//! The fold's CPU reference and GPU planner.

use crate::accuracy::Tolerance;
use crate::scalar::{value_of, wrap, write_value, Precision, Scalar, TypeEnv, Value, Var};
use crate::{
    BufferRef, DataType, DeviceClass, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass,
    TensorDesc, MAX_THREAD_STEPS,
};

use crate::family::reduce::{balanced_chunks, chunk_len, ReduceGeometry};

/// A fold as its spec declares it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fold {
    /// The starting accumulator.
    pub identity: &'static Scalar,
    /// Each element, `x`, mapped before it is combined.
    pub map: &'static Scalar,
    /// Combines the accumulator `a` with a mapped element or another
    /// accumulator `b`.
    pub combine: &'static Scalar,
    /// The output from the accumulator `acc` and the count `n`.
    pub finish: &'static Scalar,
    /// The accuracy contract: `None` for exact, else the ULP bound as an
    /// integer expression of `n` (evaluated as INT64).
    pub accuracy: Option<&'static Scalar>,
    /// The float inputs `[lo, hi)` for which the ULP bound is stated and
    /// fuzzed (`None`: magnitudes in `[0.5, 2)` of one sign; see
    /// [`crate::Operator::accuracy_domain`]).
    pub domain: Option<(f64, f64)>,
    /// The shift `map` and `finish` read as `m`, or `None` (see the
    /// [family docs](super)).
    pub shift: Option<Shift>,
}

/// What a shifted fold's `m` is, per output ([`Fold::shift`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shift {
    /// The maximum of the sub-tensor ([`SHIFT_MAX`]), 0 where it is not
    /// finite.
    Max,
}

impl Shift {
    /// The name a spec writes (`shift: max`).
    pub const fn name(self) -> &'static str {
        match self {
            Shift::Max => "max",
        }
    }

    /// The fold that computes the shift: its result is `m`.
    pub const fn fold(self) -> &'static Fold {
        match self {
            Shift::Max => &SHIFT_MAX,
        }
    }
}

/// The fold of [`Shift::Max`]: the maximum, NaN propagating, with
/// `finish: if abs(acc) < highest { acc } else { 0 }`. Float types only.
pub static SHIFT_MAX: Fold = {
    use crate::scalar::{Binary, Ty, Unary};
    const ACC: Scalar = Scalar::Var(Var::Acc);
    Fold {
        identity: &Scalar::Lowest(Ty::T),
        map: &Scalar::Var(Var::X),
        combine: &Scalar::Binary(Binary::Max, &Scalar::Var(Var::A), &Scalar::Var(Var::B)),
        finish: &Scalar::Select(
            &Scalar::Binary(
                Binary::Lt,
                &Scalar::Unary(Unary::Abs, &ACC),
                &Scalar::Highest(Ty::T),
            ),
            &ACC,
            &Scalar::Int(0, Ty::T),
        ),
        accuracy: None,
        domain: None,
        shift: None,
    }
};

/// Threads per workgroup of the fold kernels.
pub const WORKGROUP_SIZE: u32 = 64;

/// The fold kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FoldVariant {
    /// Folds chunks of the input: map, combine, and finish or store partials.
    Input,
    /// Folds chunks of partial results: combine, and finish or store partials.
    Partials,
    /// A shifted fold's first stage: [`FoldVariant::Input`] of the shift's
    /// fold ([`Shift::fold`]), whose final pass stores each output's `m` as
    /// a partial.
    ShiftInput,
    /// [`FoldVariant::Partials`] of the shift's fold.
    ShiftPartials,
}

impl FoldVariant {
    /// Every variant.
    pub const ALL: [FoldVariant; 4] = [
        FoldVariant::Input,
        FoldVariant::Partials,
        FoldVariant::ShiftInput,
        FoldVariant::ShiftPartials,
    ];

    /// The variants `fold` runs: the shift's too when it has one.
    pub fn of(fold: &Fold) -> &'static [FoldVariant] {
        if fold.shift.is_some() {
            &FoldVariant::ALL
        } else {
            &FoldVariant::ALL[..2]
        }
    }

    /// The name in kernel keys.
    pub const fn name(self) -> &'static str {
        match self {
            FoldVariant::Input => "fold_input",
            FoldVariant::Partials => "fold_partials",
            FoldVariant::ShiftInput => "shift_input",
            FoldVariant::ShiftPartials => "shift_partials",
        }
    }

    /// Whether the variant folds the shift rather than the spec's fold.
    pub const fn is_shift(self) -> bool {
        matches!(self, FoldVariant::ShiftInput | FoldVariant::ShiftPartials)
    }

    /// Whether the variant reads the input (else partial results).
    pub const fn reads_input(self) -> bool {
        matches!(self, FoldVariant::Input | FoldVariant::ShiftInput)
    }

    /// The bindings of the variant's kernel for `fold`: [`BINDINGS`],
    /// [`SHIFTED_BINDINGS`] for the main kernels of a shifted fold, or
    /// [`SHIFT_BINDINGS`].
    pub fn bindings(self, fold: &Fold) -> &'static [crate::Access] {
        match (self.is_shift(), fold.shift.is_some()) {
            (true, _) => SHIFT_BINDINGS,
            (false, true) => SHIFTED_BINDINGS,
            (false, false) => BINDINGS,
        }
    }
}

/// The bindings of an unshifted fold's kernels: params, source (input or
/// partials), partials written, output.
pub const BINDINGS: &[crate::Access] = &[
    crate::Access::Uniform,
    crate::Access::Read,
    crate::Access::ReadWrite,
    crate::Access::ReadWrite,
];

/// The bindings of a shifted fold's main kernels: [`BINDINGS`], then the
/// shifts (one partial per output, read).
pub const SHIFTED_BINDINGS: &[crate::Access] = &[
    crate::Access::Uniform,
    crate::Access::Read,
    crate::Access::ReadWrite,
    crate::Access::ReadWrite,
    crate::Access::Read,
];

/// The bindings of the shift's kernels: params, source (input or
/// partials), partials written (the shifts, one per output, in a final
/// pass).
pub const SHIFT_BINDINGS: &[crate::Access] = &[
    crate::Access::Uniform,
    crate::Access::Read,
    crate::Access::ReadWrite,
];

/// Parameter word layout of the fold kernels.
pub mod params {
    /// Output elements.
    pub const OUTPUTS: usize = 0;
    /// Values folded per output by this pass (the reduce length for
    /// `fold_input`, the partials per output for `fold_partials`).
    pub const LEN: usize = 1;
    /// Values per chunk.
    pub const CHUNK: usize = 2;
    /// Chunks per output: the partials this pass writes per output.
    pub const CHUNKS: usize = 3;
    /// 1 when the pass finishes into the output (then `CHUNKS` is 1).
    pub const FINAL: usize = 4;
    /// `n` for `finish`: low word (for floats, the `f32` bits of `n`).
    pub const N_LO: usize = 5;
    /// `n`: high word (64-bit integers).
    pub const N_HI: usize = 6;
    /// Merged kept dimensions.
    pub const KEPT_DIMS: usize = 7;
    /// Merged reduced dimensions.
    pub const REDUCED_DIMS: usize = 8;
    /// Kept sizes, outermost first.
    pub const KEPT_SIZES: usize = 16;
    /// Kept input strides (elements).
    pub const KEPT_STRIDES: usize = 24;
    /// Reduced sizes, outermost first.
    pub const REDUCED_SIZES: usize = 32;
    /// Reduced input strides (elements).
    pub const REDUCED_STRIDES: usize = 40;
    /// Most merged dimensions of each kind.
    pub const MAX_DIMS: usize = 8;
    /// Attribute values, two words each, in spec order
    /// ([`crate::scalar::attr_words`]).
    pub const ATTRS: usize = 48;
    /// Most attributes.
    pub const MAX_ATTRS: usize = 8;
    /// Total words.
    pub const LEN_WORDS: usize = 64;
}

/// Tuning of the fold planner for one device class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FoldTuning {
    /// Threads the first pass aims to run.
    pub target_threads: u64,
    /// Fewest input elements a chunk of a split sub-tensor holds.
    pub min_chunk: u64,
}

impl FoldTuning {
    /// The tuning of `class`: a software adapter has a few cores and long
    /// loops are cheap; a hardware GPU needs tens of thousands of threads.
    pub const fn of(class: DeviceClass) -> FoldTuning {
        match class {
            DeviceClass::Software => FoldTuning {
                target_threads: 256,
                min_chunk: 1024,
            },
            DeviceClass::Hardware => FoldTuning {
                target_threads: 65_536,
                min_chunk: 64,
            },
        }
    }
}

/// How a fold is split between threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FoldStrategy {
    /// Chunks of each sub-tensor in the first pass (1: one pass).
    pub chunks: u64,
    /// Most values one thread folds (at most [`MAX_THREAD_STEPS`]); each
    /// combine pass reduces the partials per output by this factor.
    pub cap: u64,
}

/// The planner's strategy for a fold of `len` elements into `outputs`
/// outputs on `class`, a thread folding at most `steps` values
/// ([`fold_thread_steps`]).
pub fn fold_strategy(outputs: u64, len: u64, class: DeviceClass, steps: u64) -> FoldStrategy {
    let t = FoldTuning::of(class);
    let cap = steps.clamp(2, MAX_THREAD_STEPS);
    let needed = len.div_ceil(cap).max(1);
    let wanted = t.target_threads.div_ceil(outputs.max(1));
    let by_size = (len / t.min_chunk).max(1);
    let chunks = needed.max(wanted.min(by_size)).min(len.max(1));
    FoldStrategy {
        chunks: balanced_chunks(len.max(1), chunks),
        cap,
    }
}

/// Every strategy tests and `ops fuzz --variants all` run for a fold of
/// `len` elements into `outputs` outputs: both classes' picks, one pass
/// (when a thread may fold the whole sub-tensor), two chunks, and chunks of
/// three values combined three at a time (a deep tree of combine passes).
pub fn fold_strategies(outputs: u64, len: u64, steps: u64) -> Vec<FoldStrategy> {
    let steps = steps.clamp(2, MAX_THREAD_STEPS);
    let mut out: Vec<FoldStrategy> = Vec::new();
    let mut push = |s: FoldStrategy| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for class in DeviceClass::ALL {
        push(fold_strategy(outputs, len, class, steps));
    }
    if len <= steps {
        push(FoldStrategy {
            chunks: 1,
            cap: steps,
        });
    }
    if len >= 2 && len.div_ceil(2) <= steps {
        push(FoldStrategy {
            chunks: 2,
            cap: steps,
        });
    }
    if len >= 4 {
        push(FoldStrategy {
            chunks: balanced_chunks(len, len.div_ceil(3)),
            cap: 3,
        });
    }
    out
}

/// Checks the call's tensors: output type = input type, output elements =
/// kept elements.
fn check_call(
    input: &TensorDesc,
    geometry: &ReduceGeometry,
    output: &TensorDesc,
) -> Result<(), OpError> {
    if output.dtype != input.dtype {
        return Err(OpError::InvalidArgument(format!(
            "a fold's output has its input's type {}, not {}",
            input.dtype, output.dtype
        )));
    }
    let want = output.element_count().ok_or_else(|| OpError::TooLarge {
        what: "output".into(),
        limit: "element count overflows u64".into(),
    })?;
    if want != geometry.output_count {
        return Err(OpError::InvalidArgument(format!(
            "the output has {want} elements, the reduction gives {}",
            geometry.output_count
        )));
    }
    Ok(())
}

/// `n` as a value of `dtype`'s compute type.
fn count_value(n: u64, dtype: DataType) -> Value {
    if dtype.is_float() {
        Value::F(n as f64)
    } else {
        Value::I(wrap(i128::from(n), dtype))
    }
}

/// The CPU backend: folds `input` over `axes` (any order, each at most
/// once) into a tensor described by `output` (the input's type; its element
/// count the kept elements'), in row-major order, computing floats at
/// `precision` ([`Precision::Compute`]: the answer, accumulated in `f32`
/// for FLOAT16 and FLOAT32; [`Precision::Yardstick`]: in `f64`) and
/// integers exactly (wrapping), and rounding once to the output type;
/// `attrs` are the descriptor's attribute values in spec order
/// ([`Scalar::eval_at`]). A shifted fold makes two passes over the input,
/// the shift's fold first, at the same precision.
pub fn fold_cpu(
    fold: &Fold,
    input: &HostTensor,
    axes: &[u32],
    output: &TensorDesc,
    attrs: &[Value],
    precision: Precision,
) -> Result<HostTensor, OpError> {
    let geometry = ReduceGeometry::new(input.sizes(), axes)?;
    check_call(input.desc(), &geometry, output)?;
    let dtype = input.dtype();
    let outputs = usize::try_from(geometry.output_count).map_err(|_| OpError::TooLarge {
        what: "output".into(),
        limit: "host address space".into(),
    })?;
    let working =
        (1 + usize::from(fold.shift.is_some())) * std::mem::size_of::<Value>() + dtype.size_bytes();
    crate::check_host_bytes(
        || "a fold's accumulators and output".into(),
        (outputs as u64).checked_mul(working as u64),
    )?;
    let cx = CpuFold {
        input,
        axes,
        outputs,
        attrs,
        precision,
        env: TypeEnv::uniform(std::slice::from_ref(&dtype)),
        // The GPU reads `n` as an `f32` for FLOAT16 and FLOAT32.
        n: precision.settle(count_value(geometry.reduce_len, dtype), dtype),
    };
    let shifts = fold.shift.map(|s| {
        let shift = s.fold();
        let acc = cx.accumulate(shift, None);
        acc.into_iter()
            .map(|a| cx.finish(shift, a, Value::I(0)))
            .collect::<Vec<_>>()
    });
    let acc = cx.accumulate(fold, shifts.as_deref());
    let mut bytes = Vec::with_capacity(outputs * dtype.size_bytes());
    for (o, a) in acc.into_iter().enumerate() {
        let m = shifts.as_ref().map_or(Value::I(0), |s| s[o]);
        write_value(cx.finish(fold, a, m), dtype, &mut bytes);
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// A call of [`fold_cpu`]: what every fold over its input shares.
struct CpuFold<'a> {
    input: &'a HostTensor,
    axes: &'a [u32],
    outputs: usize,
    attrs: &'a [Value],
    precision: Precision,
    env: TypeEnv<'a>,
    /// `n` as `finish` reads it.
    n: Value,
}

impl CpuFold<'_> {
    /// `e` evaluated with the variables `pairs` (the others 0).
    fn eval(&self, e: &Scalar, pairs: &[(Var, Value)]) -> Value {
        let mut vars = [Value::I(0); Var::COUNT];
        for &(var, x) in pairs {
            vars[var as usize] = x;
        }
        e.eval_at(self.precision, &self.env, &vars, self.attrs)
    }

    /// Each output's accumulator: `fold`'s identity combined with the
    /// mapped values of its sub-tensor in row-major order, `map` reading
    /// the output's shift from `shifts`.
    fn accumulate(&self, fold: &Fold, shifts: Option<&[Value]>) -> Vec<Value> {
        let mut acc = vec![self.eval(fold.identity, &[]); self.outputs];
        let sizes = self.input.sizes();
        let mut mask = vec![false; sizes.len()];
        for &a in self.axes {
            mask[a as usize] = true;
        }
        let mut coords = vec![0u32; sizes.len()];
        for offset in 0..self.input.len() {
            if offset > 0 {
                for d in (0..sizes.len()).rev() {
                    coords[d] += 1;
                    if coords[d] < sizes[d] {
                        break;
                    }
                    coords[d] = 0;
                }
            }
            let mut out = 0usize;
            for d in 0..sizes.len() {
                if !mask[d] {
                    out = out * sizes[d] as usize + coords[d] as usize;
                }
            }
            let x = value_of(self.input, offset);
            let m = shifts.map_or(Value::I(0), |s| s[out]);
            let mapped = self.eval(fold.map, &[(Var::X, x), (Var::M, m)]);
            acc[out] = self.eval(fold.combine, &[(Var::A, acc[out]), (Var::B, mapped)]);
        }
        acc
    }

    /// `fold`'s finish of accumulator `acc` with shift `m`.
    fn finish(&self, fold: &Fold, acc: Value, m: Value) -> Value {
        self.eval(
            fold.finish,
            &[(Var::Acc, acc), (Var::N, self.n), (Var::M, m)],
        )
    }
}

/// The accuracy contract of a fold of `input` over `axes`: its ULP bound at
/// this reduced count, or exact. Integer types are always exact.
pub fn fold_tolerance(fold: &Fold, input: &TensorDesc, axes: &[u32]) -> Tolerance {
    let Some(bound) = fold.accuracy else {
        return Tolerance::Exact;
    };
    if !input.dtype.is_float() {
        return Tolerance::Exact;
    }
    // The reduced count as the geometry works it out; axes the call would
    // reject (a tolerance is asked for before the call is checked) fold
    // nothing.
    let n = ReduceGeometry::new(&input.sizes, axes).map_or(0, |g| g.reduce_len);
    let mut vars = [Value::I(0); Var::COUNT];
    vars[Var::N as usize] = Value::I(i128::from(n));
    let env = TypeEnv::uniform(&[DataType::Int64]);
    match bound.eval(&env, &vars, &[]) {
        Value::I(u) => Tolerance::Ulp(u64::try_from(u).unwrap_or(0)),
        _ => Tolerance::Exact,
    }
}

/// One call of a fold operator: its input and output descriptions, their
/// slots among the operator's tensors, the axes, and the attribute values
/// its arithmetic reads (spec order).
#[derive(Clone, Copy, Debug)]
pub struct FoldCall<'a> {
    /// The reduced tensor.
    pub input: &'a TensorDesc,
    /// Its input slot.
    pub input_slot: usize,
    /// The axes (any order, each at most once).
    pub axes: &'a [u32],
    /// The output.
    pub output: &'a TensorDesc,
    /// Its output slot.
    pub output_slot: usize,
    /// Attribute values ([`Scalar::eval`]).
    pub attrs: &'a [Value],
    /// The loops of the fold's arithmetic on the input's type.
    pub loops: FoldLoops,
    /// The fold's shift ([`Fold::shift`]): its passes run first.
    pub shift: Option<Shift>,
}

impl FoldCall<'_> {
    fn geometry(&self) -> Result<ReduceGeometry, OpError> {
        let geometry = ReduceGeometry::new(&self.input.sizes, self.axes)?;
        check_call(self.input, &geometry, self.output)?;
        Ok(geometry)
    }
}

/// Loop iterations a fold's arithmetic runs in the GPU helpers
/// ([`Scalar::gpu_loop_steps`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FoldLoops {
    /// Per value folded: `map` and `combine`.
    pub per_value: u64,
    /// Once per thread: `finish`.
    pub once: u64,
}

impl FoldLoops {
    /// The loops of `fold` on `dtype`: the most of its own and its
    /// shift's, whose passes share the plan's strategy.
    pub fn of(fold: &Fold, dtype: DataType) -> FoldLoops {
        let env = TypeEnv::uniform(std::slice::from_ref(&dtype));
        let own = FoldLoops {
            per_value: fold.map.gpu_loop_steps(&env) + fold.combine.gpu_loop_steps(&env),
            once: fold.finish.gpu_loop_steps(&env),
        };
        match fold.shift {
            Some(s) => {
                let shift = FoldLoops::of(s.fold(), dtype);
                FoldLoops {
                    per_value: own.per_value.max(shift.per_value),
                    once: own.once.max(shift.once),
                }
            }
            None => own,
        }
    }
}

/// Most values one thread of a fold over `geometry` folds: at most
/// [`MAX_THREAD_STEPS`], and few enough that its loop iterations stay
/// within [`crate::LOOP_BUDGET`]. Counted per value: the value loop, the
/// offset loop's iteration per reduced dimension and one more for its
/// exit, and the arithmetic's; once: the kept dimensions' loop, `finish`'s
/// and a margin of 64. (Three reduced dimensions at 16,383 values a thread,
/// 65,534 iterations by the tighter count, still lost values on llvmpipe;
/// `tests/tests/fold_boundaries.rs` runs the limits.)
pub fn fold_thread_steps(geometry: &ReduceGeometry, loops: FoldLoops) -> u64 {
    let per_value = 2 + geometry.reduced.len() as u64 + loops.per_value;
    let once = 64 + geometry.kept.len() as u64 + loops.once;
    (crate::LOOP_BUDGET.saturating_sub(once) / per_value).clamp(2, MAX_THREAD_STEPS)
}

/// The GPU plan of a fold call on an adapter of `class`.
///
/// `kernel` returns the generated kernel of a variant for the call's data
/// type (`None`: an [`OpError::Unsupported`]).
pub fn fold_plan(
    call: &FoldCall<'_>,
    class: DeviceClass,
    kernel: &dyn Fn(FoldVariant) -> Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let geometry = call.geometry()?;
    let steps = fold_thread_steps(&geometry, call.loops);
    let s = fold_strategy(geometry.output_count, geometry.reduce_len, class, steps);
    plan(call, &geometry, s, kernel)
}

/// Every plan of [`fold_strategies`] for the call, each named by its
/// strategy.
pub fn fold_plans(
    call: &FoldCall<'_>,
    kernel: &dyn Fn(FoldVariant) -> Option<&'static Kernel>,
) -> Result<Vec<(String, GpuPlan)>, OpError> {
    let geometry = call.geometry()?;
    let steps = fold_thread_steps(&geometry, call.loops);
    fold_strategies(geometry.output_count, geometry.reduce_len, steps)
        .into_iter()
        .map(|s| Ok((format!("{s:?}"), plan(call, &geometry, s, kernel)?)))
        .collect()
}

/// [`fold_plan`] run as `strategy` says: `chunks` between 1 and the reduced
/// count, `cap` between 2 and [`fold_thread_steps`], and chunks of at most
/// `cap` values ([`OpError::InvalidArgument`] otherwise).
pub fn fold_plan_with(
    call: &FoldCall<'_>,
    strategy: FoldStrategy,
    kernel: &dyn Fn(FoldVariant) -> Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let geometry = call.geometry()?;
    let len = geometry.reduce_len.max(1);
    let FoldStrategy { chunks, cap } = strategy;
    if chunks == 0
        || chunks > len
        || !(2..=fold_thread_steps(&geometry, call.loops)).contains(&cap)
        || chunk_len(len, chunks) > cap
    {
        return Err(OpError::InvalidArgument(format!(
            "{strategy:?} cannot fold {} elements",
            geometry.reduce_len
        )));
    }
    plan(call, &geometry, strategy, kernel)
}

fn too_large(what: String) -> OpError {
    OpError::TooLarge {
        what,
        limit: "u32 addressing of the fold kernels".into(),
    }
}

/// The plan of a checked call run as a valid `strategy`.
fn plan(
    call: &FoldCall<'_>,
    geometry: &ReduceGeometry,
    strategy: FoldStrategy,
    kernel: &dyn Fn(FoldVariant) -> Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let FoldCall {
        input,
        input_slot,
        output_slot,
        attrs,
        ..
    } = *call;
    let dtype = input.dtype;
    if attrs.len() > params::MAX_ATTRS {
        return Err(OpError::Unsupported(format!(
            "more than {} attributes in a fold's arithmetic",
            params::MAX_ATTRS
        )));
    }
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Zero; output_slot + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    let outputs = geometry.output_count;
    if outputs == 0 {
        return Ok(plan);
    }
    let words_of = |count: u64, bytes: u64| count.checked_mul(bytes).map(|b| b.div_ceil(4));
    if words_of(geometry.input_count, dtype.size_bytes() as u64)
        .is_none_or(|w| w > u64::from(u32::MAX))
    {
        return Err(too_large(format!(
            "a {dtype} tensor of {} elements",
            geometry.input_count
        )));
    }
    if geometry.kept.len() > params::MAX_DIMS || geometry.reduced.len() > params::MAX_DIMS {
        return Err(OpError::Unsupported(format!(
            "more than {} merged dimensions of a kind",
            params::MAX_DIMS
        )));
    }
    let kernel = |v: FoldVariant| {
        kernel(v).ok_or_else(|| OpError::Unsupported(format!("no {} kernel for {dtype}", v.name())))
    };
    // Partial results: one word, two for 64-bit types.
    let acc_bytes: u64 = if dtype.size_bits() == 64 { 8 } else { 4 };
    let mut base = vec![0u32; params::LEN_WORDS];
    base[params::OUTPUTS] = u32::try_from(outputs).map_err(|_| too_large("the output".into()))?;
    match count_value(geometry.reduce_len, dtype) {
        // A FLOAT64 kernel's `n` is the word pair of its bits.
        Value::F(n) if dtype == DataType::Float64 => {
            let bits = n.to_bits();
            base[params::N_LO] = bits as u32;
            base[params::N_HI] = (bits >> 32) as u32;
        }
        Value::F(n) => base[params::N_LO] = (n as f32).to_bits(),
        Value::I(n) => {
            let bits = n as u64;
            base[params::N_LO] = bits as u32;
            base[params::N_HI] = (bits >> 32) as u32;
        }
        Value::B(_) => {}
    }
    for (k, w) in crate::scalar::attr_words(attrs).into_iter().enumerate() {
        base[params::ATTRS + k] = w;
    }
    let to_u32 = |v: u64| u32::try_from(v).map_err(|_| too_large(format!("a dimension of {v}")));
    base[params::KEPT_DIMS] = geometry.kept.len() as u32;
    base[params::REDUCED_DIMS] = geometry.reduced.len() as u32;
    for (d, &(size, stride)) in geometry.kept.iter().enumerate() {
        base[params::KEPT_SIZES + d] = to_u32(size)?;
        base[params::KEPT_STRIDES + d] = to_u32(stride)?;
    }
    for (d, &(size, stride)) in geometry.reduced.iter().enumerate() {
        base[params::REDUCED_SIZES + d] = to_u32(size)?;
        base[params::REDUCED_STRIDES + d] = to_u32(stride)?;
    }
    // A final pass binds a small placeholder as its partials.
    let placeholder = |plan: &mut GpuPlan| {
        plan.scratch_bytes.push(16);
        BufferRef::Scratch(plan.scratch_bytes.len() - 1)
    };
    // A shifted fold's shifts: one partial per output, which the shift's
    // final pass stores and the main passes read.
    let shifts = call.shift.map(|_| {
        plan.scratch_bytes.push(outputs * acc_bytes);
        BufferRef::Scratch(plan.scratch_bytes.len() - 1)
    });
    let pass = |plan: &mut GpuPlan,
                variant: FoldVariant,
                source: BufferRef,
                len: u64,
                chunks: u64|
     -> Result<Option<BufferRef>, OpError> {
        let threads = outputs
            .checked_mul(chunks)
            .filter(|&t| t <= u64::from(u32::MAX))
            .ok_or_else(|| too_large(format!("{outputs} outputs of {chunks} chunks")))?;
        let final_pass = chunks == 1;
        let target = match shifts {
            Some(s) if final_pass && variant.is_shift() => s,
            _ if final_pass => placeholder(plan),
            _ => {
                plan.scratch_bytes.push(threads * acc_bytes);
                BufferRef::Scratch(plan.scratch_bytes.len() - 1)
            }
        };
        let mut p = base.clone();
        p[params::LEN] = to_u32(len)?;
        p[params::CHUNK] = to_u32(chunk_len(len.max(1), chunks))?;
        p[params::CHUNKS] = to_u32(chunks)?;
        p[params::FINAL] = u32::from(final_pass);
        let mut buffers = vec![BufferRef::Params, source, target];
        if !variant.is_shift() {
            buffers.push(BufferRef::Output(output_slot));
            buffers.extend(shifts);
        }
        plan.passes.push(Pass {
            kernel: kernel(variant)?,
            buffers,
            params: p,
            workgroups: threads.div_ceil(u64::from(WORKGROUP_SIZE)),
        });
        Ok((!final_pass).then_some(target))
    };
    // The shift's fold, then the spec's, each a first pass over the input
    // and combine passes down to one partial per output.
    let stages: &[(FoldVariant, FoldVariant)] = if shifts.is_some() {
        &[
            (FoldVariant::ShiftInput, FoldVariant::ShiftPartials),
            (FoldVariant::Input, FoldVariant::Partials),
        ]
    } else {
        &[(FoldVariant::Input, FoldVariant::Partials)]
    };
    for &(first, combine) in stages {
        let mut partials = pass(
            &mut plan,
            first,
            BufferRef::Input(input_slot),
            geometry.reduce_len,
            strategy.chunks,
        )?;
        let mut count = strategy.chunks;
        while let Some(source) = partials {
            let next = if count <= strategy.cap {
                1
            } else {
                balanced_chunks(count, count.div_ceil(strategy.cap))
            };
            partials = pass(&mut plan, combine, source, count, next)?;
            count = next;
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::{Binary, Ty, Unary, Var};
    use crate::Element;

    const X: Scalar = Scalar::Var(Var::X);
    const A: Scalar = Scalar::Var(Var::A);
    const B: Scalar = Scalar::Var(Var::B);
    const ACC: Scalar = Scalar::Var(Var::Acc);
    const N: Scalar = Scalar::Var(Var::N);

    static SUM: Fold = Fold {
        identity: &Scalar::Int(0, Ty::T),
        map: &X,
        combine: &Scalar::Binary(Binary::Add, &A, &B),
        finish: &ACC,
        accuracy: Some(&N),
        domain: None,
        shift: None,
    };
    static L2: Fold = Fold {
        identity: &Scalar::Int(0, Ty::T),
        map: &Scalar::Binary(Binary::Mul, &X, &X),
        combine: &Scalar::Binary(Binary::Add, &A, &B),
        finish: &Scalar::Unary(Unary::Sqrt, &ACC),
        accuracy: None,
        domain: None,
        shift: None,
    };
    static MEAN: Fold = Fold {
        identity: &Scalar::Int(0, Ty::T),
        map: &X,
        combine: &Scalar::Binary(Binary::Add, &A, &B),
        finish: &Scalar::Binary(Binary::Div, &ACC, &N),
        accuracy: None,
        domain: None,
        shift: None,
    };

    const M: Scalar = Scalar::Var(Var::M);
    /// Log-sum-exp as the specs declare it: shifted by the maximum.
    static LSE: Fold = Fold {
        identity: &Scalar::Int(0, Ty::T),
        map: &Scalar::Unary(Unary::Exp, &Scalar::Binary(Binary::Sub, &X, &M)),
        combine: &Scalar::Binary(Binary::Add, &A, &B),
        finish: &Scalar::Binary(Binary::Add, &Scalar::Unary(Unary::Log, &ACC), &M),
        accuracy: None,
        domain: None,
        shift: Some(Shift::Max),
    };

    fn t<T: Element>(sizes: &[u32], v: &[T]) -> HostTensor {
        HostTensor::from_slice(sizes, v).unwrap()
    }

    #[test]
    fn directml_sum_examples() {
        let x = t(&[3, 3], &[1f32, 2., 3., 3., 0., 4., 2., 4., 2.]);
        let run = |axes: &[u32], sizes: &[u32]| {
            fold_cpu(
                &SUM,
                &x,
                axes,
                &TensorDesc::new(DataType::Float32, sizes),
                &[],
                Precision::Compute,
            )
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
        };
        assert_eq!(run(&[0], &[1, 3]), [6., 6., 9.]);
        assert_eq!(run(&[1], &[3, 1]), [6., 7., 8.]);
        assert_eq!(run(&[0, 1], &[1, 1]), [21.]);
    }

    #[test]
    fn finish_sees_the_count_and_rounds_once() {
        let x = t(&[2, 2], &[3f32, 4., 1., 2.]);
        let l2 = fold_cpu(
            &L2,
            &x,
            &[1],
            &TensorDesc::new(DataType::Float32, [2]),
            &[],
            Precision::Compute,
        )
        .unwrap();
        assert_eq!(l2.to_vec::<f32>().unwrap(), [5.0, 5f32.sqrt()]);
        let mean = fold_cpu(
            &MEAN,
            &x,
            &[0, 1],
            &TensorDesc::new(DataType::Float32, []),
            &[],
            Precision::Compute,
        )
        .unwrap();
        assert_eq!(mean.to_vec::<f32>().unwrap(), [2.5]);
        // An empty sub-tensor: finish(identity) with n = 0.
        let empty = t::<f32>(&[2, 0], &[]);
        let m = fold_cpu(
            &MEAN,
            &empty,
            &[1],
            &TensorDesc::new(DataType::Float32, [2]),
            &[],
            Precision::Compute,
        )
        .unwrap();
        assert!(m.to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
        let s = fold_cpu(
            &SUM,
            &empty,
            &[1],
            &TensorDesc::new(DataType::Float32, [2]),
            &[],
            Precision::Compute,
        )
        .unwrap();
        assert_eq!(s.to_vec::<f32>().unwrap(), [0.0, 0.0]);
    }

    #[test]
    fn the_answer_accumulates_in_f32_the_yardstick_in_f64() {
        let scalar = TensorDesc::new(DataType::Float32, []);
        let at = |fold: &Fold, x: &[f32], p: Precision| {
            let x = t(&[x.len() as u32], x);
            fold_cpu(fold, &x, &[0], &scalar, &[], p)
                .unwrap()
                .to_vec::<f32>()
                .unwrap()[0]
        };
        // `3e38 + 3e38` overflows `f32`, not `f64`.
        let big = [3e38f32, 3e38, -3e38];
        assert_eq!(at(&SUM, &big, Precision::Compute), f32::INFINITY);
        assert_eq!(at(&SUM, &big, Precision::Yardstick), 3e38);
        assert_eq!(at(&MEAN, &big[..2], Precision::Compute), f32::INFINITY);
        assert_eq!(at(&MEAN, &big[..2], Precision::Yardstick), 3e38);
        // `1e8 + 1` is `1e8` in `f32`.
        let cancel = [1e8f32, 1., -1e8];
        assert_eq!(at(&SUM, &cancel, Precision::Compute), (1e8f32 + 1.) - 1e8);
        assert_eq!(at(&SUM, &cancel, Precision::Yardstick), 1.0);
        // FLOAT16 accumulates in `f32` too and rounds once on the way out.
        let h = t(&[3], &[half::f16::MAX, half::f16::MAX, -half::f16::MAX]);
        let out = TensorDesc::new(DataType::Float16, []);
        let s = fold_cpu(&SUM, &h, &[0], &out, &[], Precision::Compute).unwrap();
        assert_eq!(s.to_vec::<half::f16>().unwrap(), [half::f16::MAX]);
    }

    /// Log-sum-exp of each row of `x` (rows of 2) at `p`.
    fn lse_rows(x: &HostTensor, p: Precision) -> HostTensor {
        let rows = x.sizes()[0];
        let out = TensorDesc::new(x.dtype(), [rows]);
        fold_cpu(&LSE, x, &[1], &out, &[], p).unwrap()
    }

    #[test]
    fn shifted_log_sum_exp_stays_finite_and_keeps_the_special_values() {
        let inf = f32::INFINITY;
        let x = t(
            &[6, 2],
            &[
                100f32,
                100.,
                -inf,
                -inf,
                inf,
                1.,
                f32::NAN,
                1.,
                -inf,
                2.,
                1e30,
                -1e30,
            ],
        );
        for p in [Precision::Compute, Precision::Yardstick] {
            let got = lse_rows(&x, p).to_vec::<f32>().unwrap();
            assert_eq!(got[0], 100.0 + std::f32::consts::LN_2, "{p:?}");
            assert_eq!(got[1], -inf, "{p:?}");
            assert_eq!(got[2], inf, "{p:?}");
            assert!(got[3].is_nan(), "{p:?}");
            assert_eq!(got[4], 2.0, "{p:?}");
            assert_eq!(got[5], 1e30, "{p:?}");
        }
        // Unshifted, `exp(100)` overflows `f32`.
        let plain = Fold {
            map: &Scalar::Unary(Unary::Exp, &X),
            finish: &Scalar::Unary(Unary::Log, &ACC),
            shift: None,
            ..LSE
        };
        let out = TensorDesc::new(DataType::Float32, [6]);
        let unshifted = fold_cpu(&plain, &x, &[1], &out, &[], Precision::Compute).unwrap();
        assert_eq!(unshifted.to_vec::<f32>().unwrap()[0], inf);
        // FLOAT16 computes in `f32`: 1000 + ln 2 rounds to 1000.5.
        let h = t(&[1, 2], &[half::f16::from_f32(1000.0); 2]);
        let got = lse_rows(&h, Precision::Compute);
        assert_eq!(got.to_vec::<half::f16>().unwrap()[0].to_f32(), 1000.5);
        // FLOAT64 shifts in `f64`: `exp(800)` overflows it.
        let d = t(&[1, 2], &[800f64, 800.]);
        let got = lse_rows(&d, Precision::Compute).to_vec::<f64>().unwrap();
        assert_eq!(got[0], 800.0 + std::f64::consts::LN_2);
        // No elements: the log of 0, shifted by 0.
        let empty = t::<f32>(&[2, 0], &[]);
        assert_eq!(
            lse_rows(&empty, Precision::Compute)
                .to_vec::<f32>()
                .unwrap(),
            [-inf, -inf]
        );
    }

    #[test]
    fn integer_sums_wrap() {
        let x = t(&[3], &[100i8, 100, 100]);
        let s = fold_cpu(
            &SUM,
            &x,
            &[0],
            &TensorDesc::new(DataType::Int8, []),
            &[],
            Precision::Compute,
        )
        .unwrap();
        assert_eq!(s.to_vec::<i8>().unwrap(), [44]);
        let m = fold_cpu(
            &MEAN,
            &t(&[2], &[7i32, 8]),
            &[0],
            &TensorDesc::new(DataType::Int32, []),
            &[],
            Precision::Compute,
        );
        assert_eq!(m.unwrap().to_vec::<i32>().unwrap(), [7]);
    }

    #[test]
    fn tolerance_grows_with_the_count() {
        let d = TensorDesc::new(DataType::Float32, [4, 5, 6]);
        assert_eq!(fold_tolerance(&SUM, &d, &[0, 2]), Tolerance::Ulp(24));
        let i = TensorDesc::new(DataType::Int32, [4]);
        assert_eq!(fold_tolerance(&SUM, &i, &[0]), Tolerance::Exact);
        assert_eq!(fold_tolerance(&L2, &d, &[0]), Tolerance::Exact);
    }

    #[test]
    fn strategies_keep_threads_within_the_cap() {
        for len in [
            0u64,
            1,
            2,
            3,
            4,
            5,
            100,
            16_384,
            16_385,
            1 << 20,
            300_000_000,
        ] {
            for outputs in [1u64, 7, 1 << 16] {
                for s in fold_strategies(outputs, len, MAX_THREAD_STEPS) {
                    assert!(
                        chunk_len(len.max(1), s.chunks) <= s.cap,
                        "{len} {outputs} {s:?}"
                    );
                    assert!(s.cap <= MAX_THREAD_STEPS);
                }
            }
        }
    }

    #[test]
    fn plans_combine_down_to_one_partial() {
        let input = TensorDesc::new(DataType::Float32, [1000]);
        let output = TensorDesc::new(DataType::Float32, []);
        static K: Kernel = Kernel::new("k", "", "main", BINDINGS, WORKGROUP_SIZE);
        let s = FoldStrategy {
            chunks: 334,
            cap: 3,
        };
        let call = FoldCall {
            input: &input,
            input_slot: 0,
            axes: &[0],
            output: &output,
            output_slot: 0,
            attrs: &[],
            loops: FoldLoops::default(),
            shift: None,
        };
        let p = fold_plan_with(&call, s, &|_| Some(&K)).unwrap();
        // 334 -> 112 -> 38 -> 13 -> 5 -> 2 -> 1.
        let chunks: Vec<u32> = p.passes.iter().map(|p| p.params[params::CHUNKS]).collect();
        assert_eq!(chunks, [334, 112, 38, 13, 5, 2, 1]);
        assert_eq!(p.passes.last().unwrap().params[params::FINAL], 1);
        let bad = FoldStrategy { chunks: 2, cap: 3 };
        assert!(fold_plan_with(&call, bad, &|_| Some(&K)).is_err());
        // Shifted: the shift's passes first, their last writing the shifts
        // that every main pass binds.
        let shifted = FoldCall {
            shift: Some(Shift::Max),
            ..call
        };
        static SHIFT: Kernel = Kernel::new("shift", "", "main", SHIFT_BINDINGS, WORKGROUP_SIZE);
        static MAIN: Kernel = Kernel::new("main", "", "main", SHIFTED_BINDINGS, WORKGROUP_SIZE);
        let kernel = |v: FoldVariant| Some(if v.is_shift() { &SHIFT } else { &MAIN });
        let p = fold_plan_with(&shifted, s, &kernel).unwrap();
        let keys: Vec<&str> = p.passes.iter().map(|p| p.kernel.key).collect();
        assert_eq!(keys, [["shift"; 7], ["main"; 7]].concat());
        for first in [&p.passes[0], &p.passes[7]] {
            assert_eq!(first.buffers[1], BufferRef::Input(0));
        }
        let shifts = BufferRef::Scratch(0);
        assert_eq!(p.scratch_bytes[0], 4);
        assert_eq!(p.passes[6].buffers[2], shifts);
        for pass in &p.passes[7..] {
            assert_eq!(pass.buffers.len(), 5);
            assert_eq!(pass.buffers[4], shifts);
        }
    }
}
