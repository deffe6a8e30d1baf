//! The element-wise family's run-time half: the CPU reference and the
//! GPU planner ([`super`] describes both).

use crate::accuracy::Tolerance;
use crate::scalar::{Precision, Scalar, Ty, TypeEnv, Value, Var};
use crate::{
    Access, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, TensorDesc,
};

use crate::scalar::{value_of, write_value};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// Most output dimensions the kernels walk.
pub const MAX_DIMS: usize = 8;

/// Most inputs an element-wise expression reads: with the output, core
/// WebGPU's 8 storage buffers per stage (the parameters are a uniform).
pub const MAX_INPUTS: usize = Var::INPUTS.len();

/// Most attributes an expression reads (two parameter words each).
pub const MAX_ATTRS: usize = 8;

/// Items in a row from which [`Schedule::Rows`] is chosen: one workgroup's
/// items (`ELEMENTS_PER_THREAD * WORKGROUP_SIZE`), so that a row's blocks
/// are at least half full.
pub const ROWS_MIN_ITEMS: u64 = ELEMENTS_PER_THREAD * WORKGROUP_SIZE as u64;

/// How the work items of an element-wise pass find their elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Each item walks its merged coordinates (any shape).
    Walk,
    /// A workgroup takes a block of one row of a two-dimensional merged
    /// shape (the row and column of an item need no division).
    Rows,
    /// A work item is an output `vec4<u32>` of rows of whole vectors taken
    /// as [`Schedule::Rows`] takes them.
    Vectors,
    /// A work item is an output `vec4<u32>` of one merged dimension, a
    /// thread one item, every input read at the item's own index (laid out
    /// as the output) or once (a scalar).
    Flat,
}

impl Schedule {
    /// Every schedule: each is a kernel of its own.
    pub const ALL: [Schedule; 4] = [
        Schedule::Walk,
        Schedule::Rows,
        Schedule::Vectors,
        Schedule::Flat,
    ];

    /// The schedule's name among a call's plan variants.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Walk => "elementwise",
            Schedule::Rows => "elementwise-rows",
            Schedule::Vectors => "elementwise-vectors",
            Schedule::Flat => "elementwise-flat",
        }
    }

    /// Whether a work item is a whole output vector (the kernel exists
    /// only where the expression [`vectorizes`]).
    pub fn is_vector(self) -> bool {
        matches!(self, Schedule::Vectors | Schedule::Flat)
    }
}

crate::family::param_words! {
    /// The parameter words of the kernel (the uniform `params` block):
    ///
    /// | words | meaning |
    /// | --- | --- |
    /// | 0 | output element count |
    /// | 1 | work items |
    /// | 2 | merged dimensions (at least 1) |
    /// | 3 | [`Schedule::Rows`](super::Schedule::Rows) and [`Schedule::Vectors`](super::Schedule::Vectors): blocks per row |
    /// | 4 | the same: rows (1 for one merged dimension) |
    /// | 5 | the same: work items per row (vectors, for `Vectors`) |
    /// | 6 | [`Schedule::Vectors`](super::Schedule::Vectors), [`Schedule::Flat`](super::Schedule::Flat): whole output vectors |
    /// | 7 | [`Schedule::Walk`](super::Schedule::Walk): the pass's first work item (a vector pass's tail) |
    /// | 8..16 | merged output sizes (unused slots 1) |
    /// | 16 + 8i..24 + 8i | input `i`'s strides per merged dimension, in elements (0 where it broadcasts) |
    /// | 72..88 | attribute words ([`crate::scalar::attr_words`]) |
    pub mod params [ATTRS + 2 * super::MAX_ATTRS] {
        /// Output element count.
        OUTPUT_COUNT = 0,
        /// Work items.
        WORK_COUNT = 1,
        /// Merged dimensions.
        RANK = 2,
        /// Blocks per row ([`super::Schedule::Rows`], [`super::Schedule::Vectors`]).
        ROW_BLOCKS = 3,
        /// Rows (the same).
        ROWS = 4,
        /// Work items per row (the same).
        ROW_ITEMS = 5,
        /// Whole output vectors ([`super::Schedule::Vectors`],
        /// [`super::Schedule::Flat`]).
        VECTORS = 6,
        /// The first work item of a [`super::Schedule::Walk`] pass (after a
        /// [`super::Schedule::Vectors`] pass's whole vectors; 0 otherwise).
        FIRST = 7,
        /// First output size.
        SIZES = 8,
        /// Input 0's first stride; input `i`'s are `8 * i` words further.
        STRIDES = 16,
        /// First attribute word: after the strides of
        /// [`MAX_INPUTS`](super::MAX_INPUTS) inputs.
        ATTRS = STRIDES + 8 * super::MAX_INPUTS,
    }
}

const _: () = assert!(params::LEN <= crate::PARAM_WORDS);

/// The kernel bindings of an expression of `inputs` inputs: params
/// (uniform), each input (read), the output (read-write).
pub const fn bindings(inputs: usize) -> &'static [Access] {
    const U: Access = Access::Uniform;
    const R: Access = Access::Read;
    const W: Access = Access::ReadWrite;
    match inputs {
        0 => &[U, W],
        1 => &[U, R, W],
        2 => &[U, R, R, W],
        3 => &[U, R, R, R, W],
        4 => &[U, R, R, R, R, W],
        5 => &[U, R, R, R, R, R, W],
        6 => &[U, R, R, R, R, R, R, W],
        _ => &[U, R, R, R, R, R, R, R, W],
    }
}

/// An element-wise computation as a spec declares it.
#[derive(Clone, Copy, Debug)]
pub struct Elementwise {
    /// The output element, an expression of [`Var::INPUTS`] (one per
    /// input, in order) and the attributes.
    pub value: &'static Scalar,
    /// Each tensor's type: the inputs in order, then the output; a
    /// [`Ty::Param`] or a [`Ty::Data`] ([`Ty::AtLeast`] is a cast's).
    pub types: &'static [Ty],
    /// The accuracy contract: `None` exact, else within this many FLOAT32
    /// ULP ([`Elementwise::tolerance`]; integers and BOOL are always
    /// exact).
    pub accuracy: Option<u64>,
}

impl Elementwise {
    /// The number of inputs.
    pub fn inputs(&self) -> usize {
        self.types.len() - 1
    }

    /// The type environment of a kernel binding the type parameters to
    /// `params`.
    pub fn env<'a>(&self, params: &'a [DataType]) -> TypeEnv<'a> {
        TypeEnv::of_inputs(self.types, params)
    }

    /// The data type of each type parameter, from the tensors of a call
    /// (inputs then output, as [`Elementwise::types`]): an error when two
    /// tensors of one parameter differ, or a tensor of a fixed type has
    /// another.
    pub fn bind(&self, dtypes: &[DataType]) -> Result<Vec<DataType>, OpError> {
        if dtypes.len() != self.types.len() {
            return Err(OpError::InvalidArgument(format!(
                "an element-wise call of {} tensors needs {}",
                dtypes.len(),
                self.types.len()
            )));
        }
        let count = self
            .types
            .iter()
            .filter_map(|t| t.param().map(|p| usize::from(p) + 1))
            .max()
            .unwrap_or(0);
        let mut params: Vec<Option<DataType>> = vec![None; count];
        for (k, (&t, &dt)) in self.types.iter().zip(dtypes).enumerate() {
            let want = match t {
                Ty::Data(d) => d,
                Ty::Param(p) => *params[usize::from(p)].get_or_insert(dt),
                // A cast's type, never a tensor's (the spec compiler
                // gives each tensor a parameter or a data type).
                Ty::AtLeast(..) => {
                    return Err(OpError::InvalidArgument(format!(
                        "tensor {k} of the element-wise call has the type {t:?}, which is a cast's"
                    )))
                }
            };
            if want != dt {
                return Err(OpError::InvalidArgument(format!(
                    "tensor {k} of the element-wise call is {dt}, but the spec's types make it {want}"
                )));
            }
        }
        // A parameter no tensor has (a spec never declares one) is INT64.
        Ok(params
            .into_iter()
            .map(|p| p.unwrap_or(DataType::Int64))
            .collect())
    }

    /// The accuracy contract for an output of `dtype`. The spec's bound is
    /// in ULPs of FLOAT32, the precision the GPU computes in; a FLOAT16
    /// output is within `ceil(n / 2^13)` of its own ULPs (one of its ULPs
    /// is 2^13 of FLOAT32's, so an `f32` value within `n` ULP of the exact
    /// one rounds to within that many of the correctly rounded FLOAT16).
    pub fn tolerance(&self, dtype: DataType) -> Tolerance {
        match self.accuracy {
            Some(n) if dtype == DataType::Float16 => Tolerance::Ulp(n.div_ceil(1 << 13)),
            Some(n) if dtype.is_float() => Tolerance::Ulp(n),
            _ => Tolerance::Exact,
        }
    }
}

/// Each input's strides per output dimension under multidirectional
/// broadcasting, in elements: its row-major strides right-aligned with the
/// output's dimensions, 0 where it has size 1 or no dimension.
pub fn broadcast_strides(input: &[u32], output: &[u32]) -> Result<Vec<u64>, OpError> {
    input_strides(&TensorDesc::new(DataType::Uint8, input), output)
}

/// Each input's strides per output dimension, in elements: its own
/// ([`TensorDesc::element_strides`]: declared, with DirectML's stride-0
/// broadcasting, or packed) right-aligned with the output's dimensions, 0
/// where it has size 1 or no dimension (ONNX's multidirectional
/// broadcasting).
pub fn input_strides(desc: &TensorDesc, output: &[u32]) -> Result<Vec<u64>, OpError> {
    desc.check_strides().map_err(OpError::InvalidArgument)?;
    let input = &desc.sizes[..];
    let r = output.len();
    let bad = || {
        OpError::InvalidArgument(format!(
            "an input of shape {input:?} does not broadcast to the output's {output:?}"
        ))
    };
    if input.len() > r {
        return Err(bad());
    }
    let lead = r - input.len();
    let own = desc.element_strides();
    let mut strides = vec![0u64; r];
    for (d, stride) in strides.iter_mut().enumerate().skip(lead) {
        let s = input[d - lead];
        if s == output[d] && s != 1 {
            *stride = own[d - lead];
        } else if s != 1 {
            return Err(bad());
        }
    }
    Ok(strides)
}

/// Checks a call: data types against the spec's types, shapes against
/// broadcasting, sizes against the GPU's `u32` addressing. Returns the
/// type parameters and each input's strides.
fn check_call(
    e: &Elementwise,
    inputs: &[&TensorDesc],
    output: &TensorDesc,
) -> Result<(Vec<DataType>, Vec<Vec<u64>>), OpError> {
    let mut dtypes: Vec<DataType> = inputs.iter().map(|t| t.dtype).collect();
    dtypes.push(output.dtype);
    let params = e.bind(&dtypes)?;
    let strides = inputs
        .iter()
        .map(|t| input_strides(t, &output.sizes))
        .collect::<Result<Vec<_>, _>>()?;
    for t in inputs {
        let span = t.buffer_elements().unwrap_or(u64::MAX);
        if span > u64::from(u32::MAX) {
            return Err(OpError::TooLarge {
                what: format!("an element-wise input spanning {span} elements"),
                limit: "u32 element addressing (as on the GPU)".into(),
            });
        }
    }
    let count = output.element_count().unwrap_or(u64::MAX);
    if count > u64::from(u32::MAX) {
        return Err(OpError::TooLarge {
            what: format!("an element-wise output of {count} elements"),
            limit: "u32 element addressing (as on the GPU)".into(),
        });
    }
    Ok((params, strides))
}

/// The CPU backend: every output element of `output` evaluated at
/// `precision` by [`Scalar::eval_at`] from the inputs' broadcast elements
/// and `attrs` (the descriptor's attribute values in spec order), and
/// rounded once to the output type. [`Precision::Compute`] gives the
/// backend's answer (FLOAT16 and FLOAT32 in `f32`, as the GPU computes
/// them), [`Precision::Yardstick`] the `f64` yardstick of the accuracy
/// contract.
pub fn elementwise_cpu(
    e: &Elementwise,
    inputs: &[&HostTensor],
    output: &TensorDesc,
    attrs: &[Value],
    precision: Precision,
) -> Result<HostTensor, OpError> {
    let descs: Vec<&TensorDesc> = inputs.iter().map(|t| t.desc()).collect();
    let (params, strides) = check_call(e, &descs, output)?;
    let env = e.env(&params);
    let sizes = &output.sizes;
    let count = output.element_count().unwrap_or(0) as usize;
    let mut bytes = Vec::with_capacity(count * output.dtype.size_bytes());
    let mut coords = vec![0u32; sizes.len()];
    let mut vars = [Value::I(0); Var::COUNT];
    for o in 0..count {
        if o > 0 {
            for d in (0..sizes.len()).rev() {
                coords[d] += 1;
                if coords[d] < sizes[d] {
                    break;
                }
                coords[d] = 0;
            }
        }
        for (i, input) in inputs.iter().enumerate() {
            let at: u64 = coords
                .iter()
                .zip(&strides[i])
                .map(|(&c, &s)| u64::from(c) * s)
                .sum();
            vars[Var::INPUTS[i] as usize] = value_of(input, at as usize);
        }
        write_value(
            e.value.eval_at(precision, &env, &vars, attrs),
            output.dtype,
            &mut bytes,
        );
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// One element-wise call: each input's description and slot, the output's
/// and its slot, and the attribute values.
#[derive(Clone, Copy, Debug)]
pub struct ElementwiseCall<'a> {
    /// The inputs' descriptions, in the expression's order.
    pub inputs: &'a [&'a TensorDesc],
    /// Each input's slot among the operator's inputs.
    pub input_slots: &'a [usize],
    /// The output's description.
    pub output: &'a TensorDesc,
    /// The output's slot among the operator's outputs.
    pub output_slot: usize,
    /// The attribute values, in spec order.
    pub attrs: &'a [Value],
}

/// The output's dimensions merged for the kernels: `sizes` (the output's)
/// and `strides` (each input's per output dimension) without the size-1
/// dimensions, and with each dimension joined to the next where every
/// input walks the two as one (its stride is the next one's times the next
/// size: contiguous, or 0 in both). At least one dimension (`[1]` for a
/// scalar output); each input's strides keep their order.
pub fn merge_dims(sizes: &[u32], strides: &[Vec<u64>]) -> (Vec<u64>, Vec<Vec<u64>>) {
    let mut merged: Vec<u64> = Vec::with_capacity(sizes.len());
    let mut out: Vec<Vec<u64>> = vec![Vec::with_capacity(sizes.len()); strides.len()];
    for (d, &size) in sizes.iter().enumerate() {
        if size == 1 {
            continue;
        }
        let size = u64::from(size);
        let joins = merged.last().is_some()
            && strides
                .iter()
                .zip(&out)
                .all(|(s, o)| o.last() == Some(&(s[d] * size)));
        if joins {
            *merged.last_mut().expect("joins needs a dimension") *= size;
            for (s, o) in strides.iter().zip(out.iter_mut()) {
                *o.last_mut().expect("one stride per dimension") = s[d];
            }
        } else {
            merged.push(size);
            for (s, o) in strides.iter().zip(out.iter_mut()) {
                o.push(s[d]);
            }
        }
    }
    if merged.is_empty() {
        merged.push(1);
        for o in &mut out {
            o.push(0);
        }
    }
    (merged, out)
}

/// Output elements of one vector work item ([`Schedule::is_vector`]): a `vec4<u32>`
/// of 8-, 16- and 32-bit outputs (16, 8 and 4 elements), two of 64-bit
/// ones (4 elements). Each input's elements of an item are a whole number
/// of its words, 4 words or more a whole number of its vectors.
pub const fn vector_elements(dtype: DataType) -> u64 {
    let bytes = dtype.size_bytes() as u64;
    16 / if bytes < 4 { bytes } else { 4 }
}

/// Whether the kernel of `e` with type parameters `params` has the
/// vector schedules' code ([`Schedule::is_vector`]): when its expression runs no loop
/// ([`Scalar::gpu_loop_steps`]). A vector thread takes
/// [`ELEMENTS_PER_THREAD`] times [`vector_elements`] elements, which would
/// take a looping expression (FLOAT64 `%`: 2,098 iterations an element)
/// past llvmpipe's [`crate::LOOP_BUDGET`]; such an expression is bound by
/// its arithmetic, not by memory, anyway.
pub fn vectorizes(e: &Elementwise, params: &[DataType]) -> bool {
    e.value.gpu_loop_steps(&e.env(params)) == 0
}

/// The schedule the plan picks for merged `sizes` (each input's merged
/// `strides`) and an output of `dtype`, `vectorizes` where the kernel has
/// the vector schedules ([`vectorizes`]):
///
/// - [`Schedule::Flat`] for one merged dimension of at least
///   [`vector_elements`] elements that every input walks contiguously or
///   repeats (stride 1 or 0);
/// - [`Schedule::Vectors`] for two merged dimensions as
///   [`Schedule::Rows`] takes them whose rows are whole vectors that every
///   input walks contiguously (its rows starting on a whole vector) or
///   repeats;
/// - [`Schedule::Rows`] for two merged dimensions whose rows hold at least
///   [`ROWS_MIN_ITEMS`] work items, a whole number of them (8- and 16-bit
///   outputs: rows of whole words);
/// - else [`Schedule::Walk`].
pub fn schedule_for(
    sizes: &[u64],
    strides: &[Vec<u64>],
    dtype: DataType,
    vectorizes: bool,
) -> Schedule {
    let lanes = 4 / dtype.size_bytes().min(4) as u64;
    let g = vector_elements(dtype);
    match sizes {
        [n] if vectorizes && *n >= g && strides.iter().all(|s| s[0] <= 1) => Schedule::Flat,
        [_, n] if n % lanes == 0 && n / lanes >= ROWS_MIN_ITEMS => {
            let along = |s: &Vec<u64>| s[1] == 0 || (s[1] == 1 && s[0].is_multiple_of(g));
            if vectorizes && n % g == 0 && strides.iter().all(along) {
                Schedule::Vectors
            } else {
                Schedule::Rows
            }
        }
        _ => Schedule::Walk,
    }
}

/// The kernel of a schedule for a call's type parameters (each schedule
/// is a kernel of its own; `None`: the tables admit no such kernel).
pub type Kernels<'a> = &'a dyn Fn(Schedule, &[DataType]) -> Option<&'static Kernel>;

/// The GPU plan: one pass of the kernel of the schedule [`schedule_for`]
/// picks (from `kernels`, the generated kernels of the call's type
/// parameters, workgroup size [`WORKGROUP_SIZE`]; none fails with
/// [`OpError::Unsupported`]) binding `[Params, Input(slot) per input,
/// Output(output_slot)]`; the output is stored whole. An empty output has
/// no pass.
pub fn elementwise_plan(
    e: &Elementwise,
    call: &ElementwiseCall<'_>,
    kernels: Kernels<'_>,
) -> Result<GpuPlan, OpError> {
    elementwise_plan_with(e, call, kernels, None)
}

/// Every schedule the call can run in, by name ([`Schedule::name`]): the
/// planner's first, then [`Schedule::Walk`] where the planner picked
/// another (it runs any shape).
pub fn elementwise_plans(
    e: &Elementwise,
    call: &ElementwiseCall<'_>,
    kernels: Kernels<'_>,
) -> Result<Vec<(String, GpuPlan)>, OpError> {
    let (chosen, schedule) = plan_and_schedule(e, call, kernels, None)?;
    let name = |s: Schedule| s.name().to_string();
    if schedule == Schedule::Walk {
        return Ok(vec![(name(Schedule::Walk), chosen)]);
    }
    let walk = elementwise_plan_with(e, call, kernels, Some(Schedule::Walk))?;
    Ok(vec![(name(schedule), chosen), (name(Schedule::Walk), walk)])
}

/// [`elementwise_plan`] in `schedule` (`None`: the planner's choice;
/// [`Schedule::Rows`] where the shape does not allow it is the planner's
/// choice too).
pub fn elementwise_plan_with(
    e: &Elementwise,
    call: &ElementwiseCall<'_>,
    kernels: Kernels<'_>,
    schedule: Option<Schedule>,
) -> Result<GpuPlan, OpError> {
    plan_and_schedule(e, call, kernels, schedule).map(|(plan, _)| plan)
}

/// [`elementwise_plan_with`] and the schedule its pass runs in
/// ([`Schedule::Walk`] when it has none).
fn plan_and_schedule(
    e: &Elementwise,
    call: &ElementwiseCall<'_>,
    kernels: Kernels<'_>,
    schedule: Option<Schedule>,
) -> Result<(GpuPlan, Schedule), OpError> {
    let (params, strides) = check_call(e, call.inputs, call.output)?;
    let kernel = |schedule: Schedule| {
        kernels(schedule, &params).ok_or_else(|| {
            let names: Vec<String> = params.iter().map(DataType::to_string).collect();
            OpError::Unsupported(format!(
                "no element-wise kernel for types ({})",
                names.join(", ")
            ))
        })
    };
    // Every binding has a walk.
    kernel(Schedule::Walk)?;
    let sizes = &call.output.sizes;
    if sizes.len() > MAX_DIMS {
        return Err(OpError::TooLarge {
            what: format!("an element-wise output of {} dimensions", sizes.len()),
            limit: format!("{MAX_DIMS} dimensions"),
        });
    }
    let attr_words = crate::scalar::attr_words(call.attrs);
    if call.inputs.len() > MAX_INPUTS || attr_words.len() > params::LEN - params::ATTRS {
        return Err(OpError::Unsupported(format!(
            "an element-wise kernel reads at most {MAX_INPUTS} inputs and {MAX_ATTRS} attributes"
        )));
    }
    let count = call.output.element_count().unwrap_or(0);
    let work = crate::family::word_items(count, call.output.dtype);
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; call.output_slot + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    if work == 0 {
        return Ok((plan, Schedule::Walk));
    }
    let (merged, merged_strides) = merge_dims(sizes, &strides);
    let chosen = schedule_for(
        &merged,
        &merged_strides,
        call.output.dtype,
        vectorizes(e, &params),
    );
    let schedule = match schedule {
        Some(Schedule::Walk) => Schedule::Walk,
        _ => chosen,
    };
    // Every merged size and stride is at most the output's count or an
    // input's span, which the check bounded by u32::MAX.
    let mut p = vec![0u32; params::LEN];
    p[params::OUTPUT_COUNT] = count as u32;
    p[params::WORK_COUNT] = work as u32;
    p[params::RANK] = merged.len() as u32;
    for d in 0..MAX_DIMS {
        p[params::SIZES + d] = merged.get(d).map_or(1, |&s| s as u32);
    }
    for (i, s) in merged_strides.iter().enumerate() {
        for (d, &stride) in s.iter().enumerate() {
            p[params::STRIDES + 8 * i + d] = stride as u32;
        }
    }
    for (k, w) in attr_words.into_iter().enumerate() {
        p[params::ATTRS + k] = w;
    }
    let per_group = ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE);
    let walk = p.clone();
    let workgroups = match schedule {
        Schedule::Walk => work.div_ceil(per_group),
        Schedule::Rows => {
            let rows = merged[0];
            let row_items = work / rows;
            let blocks = row_items.div_ceil(per_group);
            p[params::ROW_BLOCKS] = blocks as u32;
            p[params::ROWS] = rows as u32;
            p[params::ROW_ITEMS] = row_items as u32;
            rows * blocks
        }
        Schedule::Flat => {
            // One merged dimension, each input's stride along it 1 or 0
            // (its first stride word). After the last whole vector, the
            // rest (4 work items a vector) is a walk pass of its own, so
            // that the vector kernel has no other path.
            let vectors = merged[0] / vector_elements(call.output.dtype);
            p[params::VECTORS] = vectors as u32;
            p[params::WORK_COUNT] = vectors as u32;
            vectors.div_ceil(u64::from(WORKGROUP_SIZE))
        }
        Schedule::Vectors => {
            // Rows of whole vectors as `Rows` takes them, each input's
            // stride along them 1 or 0 (its row and column strides in the
            // first two words).
            let g = vector_elements(call.output.dtype);
            let (rows, cols) = match merged[..] {
                [rows, cols] => (rows, cols),
                // `schedule_for` picks `Flat` for one dimension.
                _ => (1, merged[0]),
            };
            let row_vectors = cols / g;
            // A vector a thread.
            let blocks = row_vectors.div_ceil(u64::from(WORKGROUP_SIZE));
            p[params::ROW_BLOCKS] = blocks as u32;
            p[params::ROWS] = rows as u32;
            p[params::ROW_ITEMS] = row_vectors as u32;
            p[params::VECTORS] = (rows * row_vectors) as u32;
            p[params::WORK_COUNT] = (rows * row_vectors) as u32;
            rows * blocks
        }
    };
    let mut buffers = vec![BufferRef::Params];
    buffers.extend(call.input_slots.iter().map(|&s| BufferRef::Input(s)));
    buffers.push(BufferRef::Output(call.output_slot));
    let tail = match schedule {
        Schedule::Vectors | Schedule::Flat if 4 * u64::from(p[params::VECTORS]) < work => {
            let mut t = walk;
            let first = 4 * u64::from(p[params::VECTORS]);
            t[params::FIRST] = first as u32;
            Some(Pass {
                kernel: kernel(Schedule::Walk)?,
                buffers: buffers.clone(),
                params: t,
                workgroups: (work - first).div_ceil(per_group),
            })
        }
        _ => None,
    };
    plan.passes.push(Pass {
        kernel: kernel(schedule)?,
        buffers,
        params: p,
        workgroups,
    });
    plan.passes.extend(tail);
    Ok((plan, schedule))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Binary;

    static SUM: Scalar =
        Scalar::Binary(Binary::Add, &Scalar::Var(Var::In0), &Scalar::Var(Var::In1));
    static ADD: Elementwise = Elementwise {
        value: &SUM,
        types: &[Ty::T, Ty::T, Ty::T],
        accuracy: Some(1),
    };

    #[test]
    fn broadcasts_both_ways() {
        let a = HostTensor::from_slice([2, 1], &[10i32, 20]).unwrap();
        let b = HostTensor::from_slice([3], &[1i32, 2, 3]).unwrap();
        let out = elementwise_cpu(
            &ADD,
            &[&a, &b],
            &TensorDesc::new(DataType::Int32, [2, 3]),
            &[],
            Precision::Compute,
        )
        .unwrap();
        assert_eq!(out.to_vec::<i32>().unwrap(), [11, 12, 13, 21, 22, 23]);
        assert_eq!(broadcast_strides(&[2, 1], &[2, 3]).unwrap(), [1, 0]);
        assert_eq!(broadcast_strides(&[3], &[4, 2, 3]).unwrap(), [0, 0, 1]);
        assert!(broadcast_strides(&[2], &[2, 3]).is_err());
        assert!(broadcast_strides(&[1, 2, 3], &[2, 3]).is_err());
    }

    #[test]
    fn merges_dimensions_every_input_walks_as_one() {
        let s = |v: &[u64]| v.to_vec();
        // A row broadcast: the leading dimensions join, the last stays.
        assert_eq!(
            merge_dims(&[2, 3, 4], &[s(&[12, 4, 1]), s(&[0, 0, 1])]),
            (vec![6, 4], vec![s(&[4, 1]), s(&[0, 1])])
        );
        // Same shapes and a scalar: one dimension.
        assert_eq!(
            merge_dims(&[2, 1, 3, 4], &[s(&[12, 0, 4, 1]), s(&[0, 0, 0, 0])]),
            (vec![24], vec![s(&[1]), s(&[0])])
        );
        // A column broadcast and a transposed input stay two-dimensional.
        assert_eq!(
            merge_dims(&[5, 7], &[s(&[1, 0]), s(&[1, 5])]),
            (vec![5, 7], vec![s(&[1, 0]), s(&[1, 5])])
        );
        // A scalar output, and no inputs.
        assert_eq!(merge_dims(&[], &[s(&[])]), (vec![1], vec![s(&[0])]));
        assert_eq!(merge_dims(&[1, 1], &[]), (vec![1], vec![]));
        assert_eq!(merge_dims(&[3, 1, 2], &[]), (vec![6], vec![]));
    }

    #[test]
    fn rows_from_one_workgroup_of_whole_words() {
        let n = ROWS_MIN_ITEMS;
        // Every input contiguous, or (for rows) one column repeated.
        let schedule_for = |sizes: &[u64], dtype: DataType, vectors: bool| {
            let strides = match sizes {
                [_, c] => vec![vec![*c, 1], vec![1, 0]],
                _ => vec![vec![1; sizes.len()]],
            };
            super::schedule_for(sizes, &strides, dtype, vectors)
        };
        assert_eq!(
            schedule_for(&[3, n], DataType::Float32, true),
            Schedule::Vectors
        );
        assert_eq!(
            schedule_for(&[3, n], DataType::Float32, false),
            Schedule::Rows
        );
        // Rows of a partial vector, or an input whose rows do not start on a
        // vector: scalar rows.
        assert_eq!(
            schedule_for(&[3, n + 1], DataType::Float32, true),
            Schedule::Rows
        );
        assert_eq!(
            super::schedule_for(&[3, n], &[vec![n + 1, 1]], DataType::Float32, true),
            Schedule::Rows
        );
        assert_eq!(
            super::schedule_for(&[3, n], &[vec![n, 2]], DataType::Float32, true),
            Schedule::Rows
        );
        assert_eq!(
            schedule_for(&[3, n - 1], DataType::Float32, true),
            Schedule::Walk
        );
        assert_eq!(
            schedule_for(&[3 * n], DataType::Float32, true),
            Schedule::Flat
        );
        assert_eq!(
            schedule_for(&[2, 3, n], DataType::Float32, true),
            Schedule::Walk
        );
        assert_eq!(
            schedule_for(&[3, 2 * n], DataType::Float16, true),
            Schedule::Vectors
        );
        assert_eq!(
            schedule_for(&[3, 2 * n + 2], DataType::Float16, true),
            Schedule::Rows
        );
        assert_eq!(
            schedule_for(&[3, 2 * n - 2], DataType::Float16, true),
            Schedule::Walk
        );
        assert_eq!(
            schedule_for(&[3, 2 * n + 1], DataType::Float16, true),
            Schedule::Walk
        );
        assert_eq!(
            schedule_for(&[3, 4 * n + 4], DataType::Int8, true),
            Schedule::Rows
        );
        assert_eq!(
            schedule_for(&[3, 4 * n + 2], DataType::Int8, true),
            Schedule::Walk
        );
        assert_eq!(
            schedule_for(&[3, n], DataType::Int64, true),
            Schedule::Vectors
        );
        assert_eq!(
            schedule_for(&[3, n], DataType::Int64, false),
            Schedule::Rows
        );
    }

    #[test]
    fn flat_from_one_whole_vector_of_one_dimension() {
        for (dtype, g) in [
            (DataType::Uint8, 16),
            (DataType::Float16, 8),
            (DataType::Float32, 4),
            (DataType::Float64, 4),
        ] {
            assert_eq!(vector_elements(dtype), g);
            // A contiguous input and a scalar one; a strided one walks.
            let strides = [vec![1], vec![0]];
            let schedule_for = |n: &[u64], dtype, v| schedule_for(n, &strides, dtype, v);
            assert_eq!(
                super::schedule_for(&[g], &[vec![2]], dtype, true),
                Schedule::Walk
            );
            assert_eq!(schedule_for(&[g], dtype, true), Schedule::Flat);
            assert_eq!(schedule_for(&[g + 1], dtype, true), Schedule::Flat);
            assert_eq!(schedule_for(&[g - 1], dtype, true), Schedule::Walk);
            assert_eq!(schedule_for(&[1], dtype, true), Schedule::Walk);
            assert_eq!(schedule_for(&[g], dtype, false), Schedule::Walk);
        }
    }

    #[test]
    fn tensors_of_one_parameter_must_agree() {
        assert_eq!(
            ADD.bind(&[DataType::Int8, DataType::Int8, DataType::Int8])
                .unwrap(),
            [DataType::Int8]
        );
        assert!(ADD
            .bind(&[DataType::Int8, DataType::Int16, DataType::Int8])
            .is_err());
        let a = HostTensor::from_slice([1], &[1i8]).unwrap();
        let b = HostTensor::from_slice([1], &[1i16]).unwrap();
        assert!(elementwise_cpu(&ADD, &[&a, &b], a.desc(), &[], Precision::Compute).is_err());
    }

    #[test]
    fn wraps_in_the_output_type() {
        let a = HostTensor::from_slice([2], &[127i8, -128]).unwrap();
        let out = elementwise_cpu(&ADD, &[&a, &a], a.desc(), &[], Precision::Compute).unwrap();
        assert_eq!(out.to_vec::<i8>().unwrap(), [-2, 0]);
    }
}
