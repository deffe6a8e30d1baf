//! The scatter engine: its checks, CPU reference and GPU planners, shared
//! by `scatter_elements` and `scatter_nd`, which differ only in their
//! [`IndexMap`].
//!
//! ```text
//! output = input
//! output[target(u)] = combine(output[target(u)], updates[u])   // u in row-major order
//! ```
//!
//! The output starts as a copy of the input; every update is then combined
//! into the output element its index names, in row-major order of the
//! updates. Signed index values may be negative, counting from the end of
//! their dimension: a dimension of size `n` admits `[-n, n - 1]`, `[0, n -
//! 1]` for unsigned index types. Anything else is an
//! [`OpError::IndexOutOfRange`] for the lowest offending index element, on
//! both backends ([`IndexMap::index_error`] phrases the GPU's check as the
//! CPU reference's error), and nothing is written out of bounds. A
//! replacement (`combine` is `b`, and `collisions: last_write_wins`)
//! moves raw bits: NaN payloads, -0.0 and subnormals survive, FLOAT64
//! included.
//!
//! # Determinism
//!
//! Updates that meet at one output element are applied in row-major order,
//! each combine rounded to the element type, so every GPU run gives the CPU
//! reference's bits, for any `combine` (a float sum included). Every kernel
//! but the last-write-wins passes gets there the same way: a thread owns
//! some output elements and walks the updates aimed at them in order (no
//! atomics but the lane stores of 8- and 16-bit data).
//!
//! # GPU algorithms
//!
//! With a `combine` ([`combine_plan`]), one kernel per map
//! ([`CombineWalk`]), walking [`CombineWalk::steps`] updates a pass (the
//! passes run in order; the walk's body branches, which lavapipe's loop
//! guard counts against fewer iterations than [`crate::MAX_THREAD_STEPS`]):
//!
//! - [`CombineWalk::Columns`] (`scatter_elements`): one thread per *column*
//!   (the update positions sharing their coordinates off the axis) walks
//!   its updates along the axis. A scatter of few columns with long walks
//!   runs on few threads.
//! - [`CombineWalk::Slices`] (`scatter_nd`): one thread per slice position
//!   walks every tuple, so row scatters (an embedding update) run wide and
//!   element scatters (slices of one element) on one thread.
//!
//! `collisions: last_write_wins` (DirectML Scatter) picks one of four
//! algorithms ([`ScatterGeometry::strategy_on`], for the device class and
//! the data type, with the thresholds of the class's [`ScatterTuning`]; the
//! measurements behind them are in `BENCHMARKS.md`, Tuning decisions), the
//! output again starting as a copy of the input
//! ([`OutputInit::CopyOfInput`]). Two updates can only hit the same output
//! element when they share their column (`outer`, `inner` below):
//!
//! - [`ScatterStrategy::Columns`], when there are at least
//!   [`ScatterTuning::columns_min`] columns or at most
//!   [`ScatterTuning::columns_max_walk`] updates per column: one pass, one
//!   thread per column (consecutive threads on
//!   consecutive inner coordinates) walking its updates along the axis in
//!   order and storing each, so the last one in row-major order is stored
//!   last. No atomics but the lane stores of 8- and 16-bit data, no scratch.
//!   A bad index `atomicMin`s its position into status word 0 and ends the
//!   column's walk (the outputs of a failed call are not returned).
//! - [`ScatterStrategy::ColumnWords`], in software plans, for 8- and 16-bit
//!   data whose `inner` is a whole number of `u32` words: `Columns` with one
//!   thread per word of 4 or 2 neighbouring columns. No other thread writes
//!   the output words of those columns, so each update replaces its lane of
//!   its word with a plain load and store, no atomics. A bad index reports
//!   the lowest bad position of its row of the word and ends the walk.
//!   A CPU adapter runs it faster than `Columns`, whose 8- and 16-bit lane
//!   stores are atomics. Hardware plans keep `Columns` (not measured on a
//!   GPU).
//! - [`ScatterStrategy::ColumnVectors`], in software plans, for any data
//!   type whose `inner` is a whole number of 16-byte vectors (the
//!   preferred walk there): one thread per `vec4<u32>` of 16 (8-bit) to 2
//!   (64-bit) neighbouring columns. Each row of the walk reads the
//!   columns' updates as one vector, their indices as whole vectors when
//!   they fill some (else a word at a time), and stores each column's
//!   element in its own output word(s), owned by the thread as in
//!   `ColumnWords`; when every column of the vector aims at one output
//!   row, the vector is stored whole (one store instead of 2 to 16, and no
//!   read-modify-write of 8- and 16-bit lanes). Otherwise 8- and 16-bit
//!   columns load all their output words first (with random indices each
//!   goes to a row of its own, and the loads overlap), then store each
//!   word with the lanes of the columns aimed at it. The threads of a
//!   workgroup walk the rows in lock step: a `workgroupBarrier` every
//!   [`LOCKSTEP_ROWS`] rows keeps them within that many rows of one
//!   another. A CPU adapter otherwise runs a
//!   workgroup's SIMD batches one after another, each walking the whole
//!   axis: 32 bytes of each row, a new page per row for each of three
//!   tensors. In lock step a workgroup reads and writes 4 KiB of each row
//!   together. A bad index reports the lowest bad position of its row of
//!   the vector and ends the thread's stores (it keeps meeting the
//!   barriers). On a CPU adapter the vector walk in lock step beats both
//!   `Columns` and `ColumnWords`, and the whole-vector store and the
//!   indices read as vectors each add to it.
//! - [`ScatterStrategy::TwoPass`] otherwise: scratch buffer 0 holds one
//!   zero-filled `u32` *winner* word per output element, and both passes run
//!   one thread per update element `u` (row-major), which computes its target
//!   output element `t`:
//!
//!   1. `winner` pass: a bad index `atomicMin`s `u` into status word 0 and
//!      writes nothing; otherwise `atomicMax(&winner[t], u + 1)` (skipped
//!      when `winner[t]` already holds a later update), so that `winner[t]`
//!      ends as one more than the last update aimed at `t`.
//!   2. `write` pass: does nothing at all when status word 0 shows an index
//!      error; otherwise the update whose `u + 1 == winner[t]` copies its
//!      bits to `output[t]`. Exactly one thread writes each hit element: 8-
//!      and 16-bit outputs clear and set their lane of a shared word with
//!      `atomicAnd` / `atomicOr`, so neighbours never race; 64-bit elements
//!      are two plain word stores.
//!
//! The last-write-wins walks ask DirectML's shapes of the indices (the
//! input's sizes off the axis, [`ScatterGeometry`]); the combining walks
//! take ONNX's (at most the input's, [`GatherElementsGeometry`]).

use crate::family::coordinates;
use crate::family::gather_elements::{self, GatherElementsGeometry};
use crate::family::gather_nd::{self, GatherNdGeometry, GatherShape};
use crate::family::{accesses, Binding, Call, Role};
use crate::scalar::{Scalar, TypeEnv, Value, Var};
use crate::wgsl::segments::Buffer;
use crate::{
    Access, BufferRef, DataType, DeviceClass, GpuPlan, HostTensor, IndexBounds, Kernel, OpError,
    OutOfRange, OutputInit, Pass, TensorDesc,
};

/// Threads per workgroup of every kernel.
pub const WORKGROUP_SIZE: u32 = 256;

/// The data tensor's parameter (both families).
pub(crate) const INPUT: usize = 0;
/// The index tensor's parameter.
pub(crate) const INDICES: usize = 1;
/// The update tensor's parameter.
pub(crate) const UPDATES: usize = 2;
/// The output tensor's parameter.
pub(crate) const OUTPUT: usize = 3;

/// How an update's index maps to an output element: the one thing the two
/// families differ in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexMap {
    /// `scatter_elements` (ONNX ScatterElements, DirectML Scatter): the
    /// indices have the updates' shape, of the input's rank; update `u`'s
    /// target is its own coordinates with the one on this axis replaced by
    /// the index value at `u`.
    Axis(usize),
    /// `scatter_nd` (ONNX ScatterND, DirectML SCATTER_ND): the indices'
    /// last meaningful dimension holds tuples of `q` index values, each
    /// naming a slice of the input (its first `q` meaningful dimensions);
    /// the updates hold each tuple's slice. The shapes are
    /// [`GatherNdGeometry`]'s, without batch dimensions (a gather's output
    /// is a scatter's updates).
    Tuples {
        /// Meaningful trailing dimensions of the input.
        input_rank: usize,
        /// Meaningful trailing dimensions of the indices.
        indices_rank: usize,
    },
}

/// The kernel that walks a scatter with a `combine`, by its [`IndexMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CombineWalk {
    /// [`IndexMap::Axis`]: a thread per column walks its updates along the
    /// axis.
    Columns,
    /// [`IndexMap::Tuples`]: a thread per slice position walks the tuples.
    Slices,
}

impl CombineWalk {
    /// The kernels' variant (the middle of their keys): `scatter_combine`,
    /// `scatter_nd`.
    pub const fn name(self) -> &'static str {
        match self {
            CombineWalk::Columns => "scatter_combine",
            CombineWalk::Slices => "scatter_nd",
        }
    }

    /// Most updates of a column (tuples) one pass applies: half of
    /// [`crate::MAX_THREAD_STEPS`] for a column's walk, whose body branches
    /// on a bad index and per lane for 8- and 16-bit data; a quarter for
    /// the tuples, each step resolving up to [`MAX_TUPLE`] index values
    /// unrolled with branches.
    pub const fn steps(self) -> u64 {
        match self {
            CombineWalk::Columns => COMBINE_WALK_STEPS,
            CombineWalk::Slices => ND_WALK_STEPS,
        }
    }
}

/// [`CombineWalk::steps`] of [`CombineWalk::Columns`].
pub const COMBINE_WALK_STEPS: u64 = crate::MAX_THREAD_STEPS / 2;

/// [`CombineWalk::steps`] of [`CombineWalk::Slices`].
pub const ND_WALK_STEPS: u64 = crate::MAX_THREAD_STEPS / 4;

/// Most dimensions the [`CombineWalk::Columns`] kernels walk (after
/// merging).
pub const MAX_DIMS: usize = gather_elements::MAX_DIMS;

/// Largest tuple the [`CombineWalk::Slices`] kernels resolve.
pub const MAX_TUPLE: usize = 8;

/// Most attributes the combining kernels' parameter words hold.
pub const MAX_ATTRS: usize = 8;

crate::family::param_words! {
    /// The parameter words of the [`CombineWalk::Columns`] kernel (the
    /// uniform `params` block).
    pub mod combine_params [64] {
        /// Columns: update positions off the axis.
        COLUMNS = 0,
        /// The walk: the updates' size on the axis.
        WALK = 1,
        /// Update elements after the axis (the updates' sizes after it,
        /// multiplied).
        INNER = 2,
        /// Dimensions walked, `D`.
        DIMS = 3,
        /// The axis among them.
        AXIS = 4,
        /// The input's size on the axis.
        AXIS_LEN = 5,
        /// The first update of each column this pass applies.
        WALK_START = 6,
        /// The update of each column this pass stops before.
        WALK_END = 7,
        /// First walked size (the updates' size of each walked dimension).
        SIZES = 8,
        /// First walked input stride, in elements.
        STRIDES = 16,
        /// First attribute word ([`crate::scalar::attr_words`]).
        ATTRS = 48,
    }
}

crate::family::param_words! {
    /// The parameter words of the [`CombineWalk::Slices`] kernel (the
    /// uniform `params` block).
    pub mod nd_params [64] {
        /// Slice length `S`.
        SLICE_LEN = 0,
        /// Tuple size `q`.
        TUPLE_SIZE = 1,
        /// First tuple of the pass.
        START = 2,
        /// The tuple the pass stops before.
        END = 3,
        /// First indexed dimension size (the `q` indexed input dimensions;
        /// unused slots 1).
        DIM_SIZES = 8,
        /// First indexed dimension stride, in elements (unused slots 0).
        DIM_STRIDES = 16,
        /// First attribute word ([`crate::scalar::attr_words`]).
        ATTRS = 48,
    }
}

/// The bindings of the walks (every kernel but [`ScatterStage::Winner`]
/// and [`ScatterStage::Write`]): the parameter words, the indices, the
/// updates, the status words (word 0 receives, by `atomicMin`, the lowest
/// out-of-range index position) and the output, which starts as a copy of
/// the input (`array<atomic<u32>>` for 8- and 16-bit data where a kernel
/// stores lanes, see [`stage_buffers`]).
pub const WALK_BINDINGS: [Binding; 5] = [
    Binding {
        buffer: Buffer::params(),
        role: Role::Params,
    },
    Binding {
        buffer: Buffer::read("indices", true),
        role: Role::Input(INDICES),
    },
    Binding {
        buffer: Buffer::read("updates", true),
        role: Role::Input(UPDATES),
    },
    Binding {
        buffer: Buffer::read_write("status", true, false),
        role: Role::Status,
    },
    Binding {
        buffer: Buffer::read_write("output", false, true),
        role: Role::Output(OUTPUT),
    },
];

/// The bindings of [`ScatterStage::Winner`]: the parameter words, the
/// indices, the winner words (scratch buffer 0, atomic) and the status
/// words.
pub const WINNER_BINDINGS: [Binding; 4] = [
    WALK_BINDINGS[0],
    WALK_BINDINGS[1],
    Binding {
        buffer: Buffer::read_write("winner", true, true),
        role: Role::Scratch(0),
    },
    WALK_BINDINGS[3],
];

/// The bindings of [`ScatterStage::Write`]: the parameter words, the
/// indices, the updates, the winner words and the status words (both read
/// only) and the output.
pub const WRITE_BINDINGS: [Binding; 6] = [
    WALK_BINDINGS[0],
    WALK_BINDINGS[1],
    WALK_BINDINGS[2],
    Binding {
        buffer: Buffer::read("winner", true),
        role: Role::Scratch(0),
    },
    Binding {
        buffer: Buffer::read("status", false),
        role: Role::Status,
    },
    WALK_BINDINGS[4],
];

/// The bindings' [`Access`]es of [`WALK_BINDINGS`].
pub const WALK_ACCESS: [Access; 5] = accesses(&WALK_BINDINGS);
/// The bindings' [`Access`]es of [`WINNER_BINDINGS`].
pub const WINNER_ACCESS: [Access; 4] = accesses(&WINNER_BINDINGS);
/// The bindings' [`Access`]es of [`WRITE_BINDINGS`].
pub const WRITE_ACCESS: [Access; 6] = accesses(&WRITE_BINDINGS);

/// The bindings of a kernel, by stage (`None`: a combining walk).
pub fn stage_bindings(stage: Option<ScatterStage>) -> &'static [Binding] {
    match stage {
        Some(ScatterStage::Winner) => &WINNER_BINDINGS,
        Some(ScatterStage::Write) => &WRITE_BINDINGS,
        _ => &WALK_BINDINGS,
    }
}

/// The WGSL buffers of a kernel (by stage, `None`: a combining walk) for
/// `data` elements and `index` values: its [`stage_bindings`], the output
/// `array<atomic<u32>>` for 8- and 16-bit data where its lanes are stored
/// with atomics, and [`ScatterStage::ColumnVectors`]' updates, output and
/// (when an index is at least as wide as an element) indices bound as
/// `array<vec4<u32>>`.
pub fn stage_buffers(
    stage: Option<ScatterStage>,
    data: DataType,
    index: DataType,
) -> Vec<Buffer<'static>> {
    let mut buffers: Vec<Buffer<'static>> =
        stage_bindings(stage).iter().map(|b| b.buffer).collect();
    let output = buffers.len() - 1;
    match stage {
        // Each thread owns its output words: plain loads and stores.
        Some(ScatterStage::Winner | ScatterStage::ColumnWords) => {}
        // The same, reading updates (and, when they fill some, indices) a
        // vector at a time.
        Some(ScatterStage::ColumnVectors) => {
            buffers[1].vec4 = index_vectors(data, index);
            buffers[2].vec4 = true;
            buffers[output].vec4 = true;
        }
        _ => buffers[output].atomic = crate::wgsl::dtype::is_packed(data),
    }
    buffers
}

/// Whether a [`ScatterStage::ColumnVectors`] thread reads its columns'
/// indices as whole vectors: they fill `index bytes / data bytes` of them
/// when an index is at least as wide as an element (else words).
pub(crate) fn index_vectors(data: DataType, index: DataType) -> bool {
    index.size_bytes() >= data.size_bytes()
}

/// The tensors of one scatter call: each one's description and slot (its
/// position among the inputs, or the output's among the outputs), in the
/// families' parameter order (input, indices, updates, output).
#[derive(Clone, Copy, Debug)]
pub struct Tensors<'a> {
    descs: [&'a TensorDesc; 4],
    slots: [usize; 4],
}

impl<'a> Tensors<'a> {
    /// The tensors of a call: each description with its slot.
    pub fn new(
        input: (&'a TensorDesc, usize),
        indices: (&'a TensorDesc, usize),
        updates: (&'a TensorDesc, usize),
        output: (&'a TensorDesc, usize),
    ) -> Self {
        Tensors {
            descs: [input.0, indices.0, updates.0, output.0],
            slots: [input.1, indices.1, updates.1, output.1],
        }
    }

    /// The tensors of a family's call.
    pub(crate) fn of(call: &Call<'a>) -> Self {
        let at = |p: usize| (call.desc(p), call.input(p));
        Tensors::new(
            at(INPUT),
            at(INDICES),
            at(UPDATES),
            (call.desc(OUTPUT), call.output(OUTPUT)),
        )
    }

    fn input(&self) -> &'a TensorDesc {
        self.descs[INPUT]
    }

    fn indices(&self) -> &'a TensorDesc {
        self.descs[INDICES]
    }

    /// What a pass binds for `bindings`, in their order.
    fn buffers(&self, bindings: &[Binding]) -> Vec<BufferRef> {
        let slot = |p: usize| self.slots[p];
        bindings.iter().map(|b| b.role.buffer(slot, slot)).collect()
    }

    /// The plan every scatter starts from: the output a copy of the input
    /// ([`OutputInit::CopyOfInput`]; any outputs before it zero), one index
    /// check on the indices (status word 0: the lowest bad element
    /// position, linear, row-major), no pass.
    fn plan(&self) -> GpuPlan {
        let mut outputs = vec![OutputInit::Zero; self.slots[OUTPUT] + 1];
        outputs[self.slots[OUTPUT]] = OutputInit::CopyOfInput(self.slots[INPUT]);
        GpuPlan {
            outputs,
            scratch_bytes: Vec::new(),
            passes: Vec::new(),
            index_checks: vec![self.slots[INDICES]],
        }
    }
}

fn too_large(what: &str, limit: &str) -> OpError {
    OpError::TooLarge {
        what: what.into(),
        limit: limit.into(),
    }
}

/// Fails with [`OpError::TooLarge`] unless every `(data type, element
/// count)` of `tensors` is addressable by the `kernels` kernels: `u32` word
/// indices, and no element position reaching `u32::MAX` (the kernels' "no
/// element" marker and the status words' "no error").
fn addressable(tensors: &[(DataType, u64)], kernels: &str) -> Result<(), OpError> {
    for &(dtype, count) in tensors {
        let words = count
            .checked_mul(dtype.size_bytes() as u64)
            .map(|b| b.div_ceil(4));
        if words.is_none_or(|w| w > u64::from(u32::MAX)) || count >= u64::from(u32::MAX) {
            return Err(too_large(
                &format!("a {dtype} tensor of {count} elements"),
                &format!("u32 word addressing of the {kernels} kernels"),
            ));
        }
    }
    Ok(())
}

/// An [`IndexMap`] resolved against a call's sizes.
enum Targets {
    /// [`IndexMap::Axis`].
    Axis(GatherElementsGeometry),
    /// [`IndexMap::Tuples`].
    Tuples(GatherNdGeometry),
}

impl IndexMap {
    /// The shape of a scatter of index tuples: no batches.
    fn shape(input_rank: usize, indices_rank: usize) -> GatherShape {
        GatherShape::Nd {
            input_rank,
            indices_rank,
            batch_dims: 0,
        }
    }

    /// The kernel walking this map with a `combine`.
    pub const fn walk(self) -> CombineWalk {
        match self {
            IndexMap::Axis(_) => CombineWalk::Columns,
            IndexMap::Tuples { .. } => CombineWalk::Slices,
        }
    }

    /// Checks a call's descriptions: the map's shapes (the updates those
    /// of the indices, or of the slices the tuples select), one data type
    /// for input, updates and output, the output the input's sizes,
    /// integer indices, and element counts the GPU addresses with `u32`.
    fn check(self, t: &Tensors<'_>) -> Result<Targets, OpError> {
        let [input, indices, updates, output] = t.descs;
        let targets = match self {
            IndexMap::Axis(axis) => {
                let g = GatherElementsGeometry::new(&input.sizes, &indices.sizes, axis)?;
                if updates.sizes != indices.sizes {
                    return Err(OpError::InvalidArgument(format!(
                        "the updates' sizes {:?} must be the indices' {:?}",
                        updates.sizes, indices.sizes
                    )));
                }
                Targets::Axis(g)
            }
            IndexMap::Tuples {
                input_rank,
                indices_rank,
            } => {
                let shape = IndexMap::shape(input_rank, indices_rank);
                let g = GatherNdGeometry::of(&input.sizes, &indices.sizes, shape)?;
                let update_count = crate::element_count(&updates.sizes)
                    .ok_or_else(|| too_large("updates", "element count overflows u64"))?;
                if update_count != g.output_count {
                    return Err(OpError::InvalidArgument(format!(
                        "the updates hold {update_count} elements (sizes {:?}) but the tuples select {} (sizes {:?})",
                        updates.sizes, g.output_count, g.output_sizes
                    )));
                }
                Targets::Tuples(g)
            }
        };
        if updates.dtype != input.dtype || output.dtype != input.dtype {
            return Err(OpError::InvalidArgument(format!(
                "the input, updates and output must share a data type, got {}, {} and {}",
                input.dtype, updates.dtype, output.dtype
            )));
        }
        if output.sizes != input.sizes {
            return Err(OpError::InvalidArgument(format!(
                "the output sizes {:?} must be the input's {:?}",
                output.sizes, input.sizes
            )));
        }
        if !indices.dtype.is_int() {
            return Err(OpError::InvalidArgument(format!(
                "the indices data type {} must be an integer type",
                indices.dtype
            )));
        }
        let (inputs, _, updates) = targets.counts();
        if inputs > u64::from(u32::MAX) || updates > u64::from(u32::MAX) {
            return Err(too_large(
                &format!("a scatter of {updates} updates into {inputs} elements"),
                "u32 element addressing (as on the GPU)",
            ));
        }
        Ok(targets)
    }

    /// The CPU reference: `input`, then each element of `updates`, in
    /// row-major order, combined into the output element its index names
    /// with `combine` (`a` the element so far, `b` the update; `attrs` the
    /// descriptor's attribute values in spec order), computed as
    /// [`Scalar::eval`] does and rounded to the element type after each
    /// update; a replacement (`b`) moves raw bits. `output` describes the
    /// result (the input's data type and sizes).
    ///
    /// Every index value is checked first, in row-major order: the first
    /// out of range gives [`OpError::IndexOutOfRange`] naming
    /// `indices_name`, the element's coordinates, its value and the bounds.
    /// Tensors that break the map's shape and data type rules give
    /// [`OpError::InvalidArgument`].
    #[allow(clippy::too_many_arguments)]
    pub fn cpu(
        self,
        combine: &Scalar,
        input: &HostTensor,
        indices: &HostTensor,
        updates: &HostTensor,
        output: &TensorDesc,
        indices_name: &str,
        attrs: &[Value],
    ) -> Result<HostTensor, OpError> {
        let t = Tensors::new(
            (input.desc(), 0),
            (indices.desc(), 1),
            (updates.desc(), 2),
            (output, 0),
        );
        let targets = self.check(&t)?.targets(indices, indices_name)?;
        let mut out = input.bytes().to_vec();
        for (u, &target) in targets.iter().enumerate() {
            combine_into(combine, &mut out, target as usize, updates, u, attrs)?;
        }
        HostTensor::from_bytes(output.clone(), out)
    }

    /// The error the CPU reference gives for element `position` (linear,
    /// row-major) of `indices`, for phrasing a failed GPU index check: an
    /// [`OpError::IndexOutOfRange`] with the element's coordinates, value
    /// and bounds; an [`OpError::Device`] when that value is in range (the
    /// GPU reported a valid index), an [`OpError::InvalidArgument`] when
    /// there is no such element or the shapes do not fit the map.
    pub fn index_error(
        self,
        input: &TensorDesc,
        indices: &HostTensor,
        indices_name: &str,
        position: u64,
    ) -> OpError {
        match self {
            IndexMap::Axis(axis) => gather_elements::gather_elements_index_error(
                input,
                indices,
                axis,
                indices_name,
                position,
            ),
            IndexMap::Tuples {
                input_rank,
                indices_rank,
            } => gather_nd::gather_nd_index_error(
                input,
                indices,
                IndexMap::shape(input_rank, indices_rank),
                indices_name,
                position,
            ),
        }
    }

    /// The index tensor's bounds, for fuzzers: the input's size on the
    /// axis, or the sizes of the dimensions the tuples index; none when the
    /// shapes do not fit the map.
    pub fn index_bounds(self, t: &Tensors<'_>) -> Vec<IndexBounds> {
        let (input, indices) = (t.input(), t.indices());
        let sizes = match self {
            IndexMap::Axis(axis) => match input.sizes.get(axis) {
                Some(&size) => vec![size],
                None => return Vec::new(),
            },
            IndexMap::Tuples {
                input_rank,
                indices_rank,
            } => {
                let shape = IndexMap::shape(input_rank, indices_rank);
                match GatherNdGeometry::of(&input.sizes, &indices.sizes, shape) {
                    Ok(g) => g.dims.iter().map(|d| d.0 as u32).collect(),
                    Err(_) => return Vec::new(),
                }
            }
        };
        vec![IndexBounds {
            tensor: t.slots[INDICES],
            addresses: t.slots[INPUT],
            sizes,
            out_of_range: OutOfRange::Error,
        }]
    }
}

/// Element `t` of `out` (raw bytes of `updates`' data type) combined with
/// element `u` of `updates` as `combine` says (`a` the element, `b` the
/// update), computed as [`Scalar::eval`] does and rounded to the data type;
/// a replacement (`combine` is `b`) moves raw bits, NaN payloads included.
fn combine_into(
    combine: &Scalar,
    out: &mut [u8],
    t: usize,
    updates: &HostTensor,
    u: usize,
    attrs: &[Value],
) -> Result<(), OpError> {
    use crate::scalar::{value_of, write_value};
    let dtype = updates.dtype();
    let width = dtype.size_bytes();
    let update = &updates.bytes()[u * width..(u + 1) * width];
    if matches!(combine, Scalar::Var(Var::B)) {
        out[t * width..(t + 1) * width].copy_from_slice(update);
        return Ok(());
    }
    let value_at = |bytes: &[u8]| -> Result<Value, OpError> {
        let one = HostTensor::from_bytes(TensorDesc::new(dtype, [1]), bytes.to_vec())?;
        Ok(value_of(&one, 0))
    };
    let mut vars = [Value::I(0); Var::COUNT];
    vars[Var::A as usize] = value_at(&out[t * width..(t + 1) * width])?;
    vars[Var::B as usize] = value_at(update)?;
    let env = TypeEnv::uniform(std::slice::from_ref(&dtype));
    let mut element = Vec::with_capacity(width);
    write_value(combine.eval(&env, &vars, attrs), dtype, &mut element);
    out[t * width..(t + 1) * width].copy_from_slice(&element);
    Ok(())
}

/// Why tables may not list `dtype` for a scatter combining with `combine`
/// (see [`Scalar::unsupported_for`]): 8-bit to 64-bit integer and
/// FLOAT16/FLOAT32 data otherwise all work. Raw copies (`b`) move any type,
/// FLOAT64 included.
pub fn combine_unsupported(combine: &Scalar, dtype: DataType) -> Option<String> {
    if matches!(combine, Scalar::Var(Var::B)) {
        return None;
    }
    combine.unsupported_for(&TypeEnv::uniform(std::slice::from_ref(&dtype)))
}

impl Targets {
    /// Elements of the input, of the indices and of the updates.
    fn counts(&self) -> (u64, u64, u64) {
        match self {
            Targets::Axis(g) => (g.input_count, g.output_count, g.output_count),
            Targets::Tuples(g) => (g.input_count, g.index_count, g.output_count),
        }
    }

    /// The output element of every update, in row-major order of the
    /// updates, every index value checked in row-major order (the first
    /// out of range an [`OpError::IndexOutOfRange`] naming `name`).
    fn targets(&self, indices: &HostTensor, name: &str) -> Result<Vec<u64>, OpError> {
        let value = |p: u64, (low, high): (i128, i128), size: u64| {
            let v = indices.get_int(p as usize).ok_or_else(|| {
                OpError::InvalidArgument(format!("`{name}` has no index element {p}"))
            })?;
            if v < low || v > high {
                return Err(OpError::IndexOutOfRange {
                    tensor: name.to_string(),
                    position: coordinates(indices.sizes(), p),
                    value: v,
                    low,
                    high,
                });
            }
            Ok(if v < 0 { v + i128::from(size) } else { v } as u64)
        };
        let index = indices.dtype();
        match self {
            Targets::Axis(g) => {
                let size = u64::from(g.axis_len);
                let range = index_bounds(index, size);
                (0..g.output_count)
                    .map(|u| Ok(g.source(u, value(u, range, size)?)))
                    .collect()
            }
            Targets::Tuples(g) => {
                let mut out = Vec::with_capacity(g.output_count as usize);
                for t in 0..g.tuple_count {
                    let mut base = 0u64;
                    for (j, &(size, stride)) in g.dims.iter().enumerate() {
                        let p = t * g.tuple_size as u64 + j as u64;
                        base += value(p, g.index_range(index, j), size)? * stride;
                    }
                    out.extend((0..g.slice_len).map(|s| base + s));
                }
                Ok(out)
            }
        }
    }

    /// The walk of the map's [`CombineWalk`] kernel with `attrs`' words;
    /// `None` when there is nothing to walk. Fails with
    /// [`OpError::TooLarge`] past the kernels' dimensions, tuple size,
    /// attributes or `u32` words.
    fn walk(&self, attrs: &[Value]) -> Result<Option<Walk>, OpError> {
        let word = |v: u64, what: &str| {
            u32::try_from(v).map_err(|_| too_large(what, "u32 addressing of the scatter kernels"))
        };
        let attr_words = || {
            if attrs.len() > MAX_ATTRS {
                return Err(too_large(
                    &format!("a scatter with {} attributes", attrs.len()),
                    &format!("{MAX_ATTRS} attributes"),
                ));
            }
            Ok(crate::scalar::attr_words(attrs))
        };
        match self {
            Targets::Axis(g) => {
                let walk = u64::from(g.sizes[g.axis]);
                let columns = g.output_count.checked_div(walk).unwrap_or(0);
                if columns == 0 {
                    return Ok(None);
                }
                // Some updates: no size is zero, and their product fits.
                let inner: u64 = g.sizes[g.axis + 1..]
                    .iter()
                    .map(|&s| u64::from(s))
                    .product();
                if g.sizes.len() > MAX_DIMS {
                    return Err(too_large(
                        &format!("a scatter walking {} dimensions", g.sizes.len()),
                        &format!("{MAX_DIMS} dimensions"),
                    ));
                }
                let attr_words = attr_words()?;
                use combine_params as p;
                let mut params = vec![0u32; p::LEN];
                params[p::COLUMNS] = word(columns, "column count")?;
                params[p::WALK] = word(walk, "walk")?;
                params[p::INNER] = word(inner, "inner size")?;
                params[p::DIMS] = g.sizes.len() as u32;
                params[p::AXIS] = g.axis as u32;
                params[p::AXIS_LEN] = g.axis_len;
                for d in 0..MAX_DIMS {
                    params[p::SIZES + d] = g.sizes.get(d).copied().unwrap_or(1);
                    let stride = g.strides.get(d).copied().unwrap_or(0);
                    params[p::STRIDES + d] = word(stride, "input stride")?;
                }
                params[p::ATTRS..p::ATTRS + attr_words.len()].copy_from_slice(&attr_words);
                Ok(Some(Walk {
                    kind: CombineWalk::Columns,
                    threads: columns,
                    length: walk,
                    params,
                    range: (p::WALK_START, p::WALK_END),
                }))
            }
            Targets::Tuples(g) => {
                if g.tuple_size > MAX_TUPLE {
                    return Err(too_large(
                        &format!("tuples of {} index values", g.tuple_size),
                        &format!("{MAX_TUPLE} values"),
                    ));
                }
                let attr_words = attr_words()?;
                if g.tuple_count == 0 || g.index_count == 0 {
                    return Ok(None);
                }
                use nd_params as p;
                let mut params = vec![0u32; p::LEN];
                params[p::SLICE_LEN] = word(g.slice_len, "slice length")?;
                params[p::TUPLE_SIZE] = g.tuple_size as u32;
                for j in 0..MAX_TUPLE {
                    let (size, stride) = g.dims.get(j).copied().unwrap_or((1, 0));
                    params[p::DIM_SIZES + j] = word(size, "dimension size")?;
                    params[p::DIM_STRIDES + j] = word(stride, "dimension stride")?;
                }
                params[p::ATTRS..p::ATTRS + attr_words.len()].copy_from_slice(&attr_words);
                Ok(Some(Walk {
                    kind: CombineWalk::Slices,
                    // One thread checks the indices of empty slices.
                    threads: g.slice_len.max(1),
                    length: g.tuple_count,
                    params,
                    range: (p::START, p::END),
                }))
            }
        }
    }
}

/// What a combining kernel walks: `threads` threads, each applying
/// `length` updates (tuples) in order, [`CombineWalk::steps`] a pass.
struct Walk {
    kind: CombineWalk,
    threads: u64,
    length: u64,
    /// The parameter words, but the pass's stretch of the walk.
    params: Vec<u32>,
    /// The words of the pass's stretch `[start, end)`.
    range: (usize, usize),
}

impl Walk {
    /// The passes of `kernel` binding `buffers`, each applying the next
    /// stretch of the walk, in order.
    fn passes(&self, kernel: &'static Kernel, buffers: Vec<BufferRef>) -> Vec<Pass> {
        let mut passes = Vec::new();
        let mut start = 0;
        while start < self.length {
            let end = self.length.min(start + self.kind.steps());
            let mut params = self.params.clone();
            params[self.range.0] = start as u32;
            params[self.range.1] = end as u32;
            passes.push(Pass {
                kernel,
                buffers: buffers.clone(),
                params,
                workgroups: self.threads.div_ceil(u64::from(WORKGROUP_SIZE)),
            });
            start = end;
        }
        passes
    }
}

/// The GPU plan of a scatter with a `combine`: the output starts as a copy
/// of the input (the plan of [`Tensors`]), then passes of `kernel` (the
/// map's [`CombineWalk`] for the call's data and index types, workgroup
/// size [`WORKGROUP_SIZE`]; `None` fails with [`OpError::Unsupported`])
/// binding [`WALK_BINDINGS`], each applying the next
/// [`CombineWalk::steps`] updates of every thread's walk, in order
/// (`attrs`, the descriptor's attribute values in spec order, in the
/// parameter words); one index check on the indices. Nothing to walk: no
/// pass.
///
/// Fails like [`IndexMap::cpu`] on the descriptions, and with
/// [`OpError::TooLarge`] past the kernels' `u32` addressing, dimensions,
/// tuple size or [`MAX_ATTRS`].
pub fn combine_plan(
    map: IndexMap,
    t: &Tensors<'_>,
    attrs: &[Value],
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let targets = map.check(t)?;
    let (input, indices) = (t.input(), t.indices());
    let kernel = kernel.ok_or_else(|| {
        OpError::Unsupported(match map.walk() {
            CombineWalk::Columns => format!(
                "no scatter kernel combining {} data with {} indices",
                input.dtype, indices.dtype
            ),
            CombineWalk::Slices => format!(
                "no scatter_nd kernel for {} data with {} indices",
                input.dtype, indices.dtype
            ),
        })
    })?;
    if kernel.workgroup_size != WORKGROUP_SIZE {
        return Err(OpError::InvalidArgument(format!(
            "kernel `{}` has workgroup size {}, the {} plan dispatches {WORKGROUP_SIZE}",
            kernel.key,
            kernel.workgroup_size,
            map.walk().name()
        )));
    }
    let (inputs, index_count, updates) = targets.counts();
    addressable(
        &[
            (input.dtype, inputs),
            (indices.dtype, index_count),
            (input.dtype, updates),
        ],
        map.walk().name(),
    )?;
    let mut plan = t.plan();
    if let Some(walk) = targets.walk(attrs)? {
        plan.passes = walk.passes(kernel, t.buffers(&WALK_BINDINGS));
    }
    Ok(plan)
}

// ---------------------------------------------------------------------
// `collisions: last_write_wins`
// ---------------------------------------------------------------------

/// A kernel of `collisions: last_write_wins`: [`ScatterStrategy::TwoPass`]
/// runs [`ScatterStage::Winner`] then [`ScatterStage::Write`], the walks
/// one of the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterStage {
    /// Pass 1 of two: checks every index and elects, per output element, the
    /// last update aimed at it.
    Winner,
    /// Pass 2 of two: each elected update writes its bits.
    Write,
    /// The one pass of [`ScatterStrategy::Columns`]: a thread per column
    /// stores its updates in order.
    Columns,
    /// The one pass of [`ScatterStrategy::ColumnWords`]: a thread per `u32`
    /// word of neighbouring columns of 8- or 16-bit data stores its updates
    /// in order with plain word stores (no atomics).
    ColumnWords,
    /// The one pass of [`ScatterStrategy::ColumnVectors`]: a thread per
    /// `vec4<u32>` of neighbouring columns stores its updates in order,
    /// the workgroup's threads a row at a time in lock step.
    ColumnVectors,
}

impl ScatterStage {
    /// Every stage.
    pub const ALL: [ScatterStage; 5] = [
        ScatterStage::Winner,
        ScatterStage::Write,
        ScatterStage::Columns,
        ScatterStage::ColumnWords,
        ScatterStage::ColumnVectors,
    ];

    /// The stage's name in kernel keys (`scatter_winner`, `scatter_write`,
    /// `scatter_columns`, `scatter_column_words`,
    /// `scatter_column_vectors`): its kernels' variant.
    pub const fn name(self) -> &'static str {
        match self {
            ScatterStage::Winner => "scatter_winner",
            ScatterStage::Write => "scatter_write",
            ScatterStage::Columns => "scatter_columns",
            ScatterStage::ColumnWords => "scatter_column_words",
            ScatterStage::ColumnVectors => "scatter_column_vectors",
        }
    }

    /// The stage named `name` ([`ScatterStage::name`]).
    pub fn named(name: &str) -> Option<ScatterStage> {
        ScatterStage::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether a data type has this stage's kernel: every type but
    /// [`ScatterStage::ColumnWords`], which serves 8- and 16-bit data only.
    pub const fn serves(self, data: DataType) -> bool {
        match self {
            ScatterStage::ColumnWords => data.size_bits() < 32,
            _ => true,
        }
    }
}

/// The generated kernels of one (data type, index type) pair.
#[derive(Clone, Copy, Debug)]
pub struct ScatterKernels {
    /// The [`ScatterStage::Winner`] kernel.
    pub winner: &'static Kernel,
    /// The [`ScatterStage::Write`] kernel.
    pub write: &'static Kernel,
    /// The [`ScatterStage::Columns`] kernel.
    pub columns: &'static Kernel,
    /// The [`ScatterStage::ColumnWords`] kernel, for 8- and 16-bit data.
    pub column_words: Option<&'static Kernel>,
    /// The [`ScatterStage::ColumnVectors`] kernel.
    pub column_vectors: &'static Kernel,
}

impl ScatterKernels {
    /// The kernels `kernel(stage)` gives, `None` when one the data type
    /// needs is missing.
    pub fn of(
        data: DataType,
        kernel: impl Fn(ScatterStage) -> Option<&'static Kernel>,
    ) -> Option<ScatterKernels> {
        let words = ScatterStage::ColumnWords;
        Some(ScatterKernels {
            winner: kernel(ScatterStage::Winner)?,
            write: kernel(ScatterStage::Write)?,
            columns: kernel(ScatterStage::Columns)?,
            column_words: match words.serves(data) {
                true => Some(kernel(words)?),
                false => None,
            },
            column_vectors: kernel(ScatterStage::ColumnVectors)?,
        })
    }
}

/// How [`scatter_elements_plan`] runs a scatter (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterStrategy {
    /// [`ScatterStage::Winner`] then [`ScatterStage::Write`], a thread per
    /// update.
    TwoPass,
    /// [`ScatterStage::Columns`], a thread per column.
    Columns,
    /// [`ScatterStage::ColumnWords`], a thread per word of 2 (16-bit) or 4
    /// (8-bit) neighbouring columns, which owns their output words: on
    /// [`DeviceClass::Software`] instead of `Columns` when the data is 8- or
    /// 16-bit and `inner` a whole number of words (else `Columns`).
    ColumnWords,
    /// [`ScatterStage::ColumnVectors`], a thread per `vec4<u32>` of
    /// neighbouring columns (16 / element bytes of them), the workgroup in
    /// lock step: on [`DeviceClass::Software`] instead of `Columns` or
    /// `ColumnWords` when `inner` is a whole number of vectors (else
    /// `ColumnWords` where it fits, then `Columns`).
    ColumnVectors,
}

/// The rows a [`ScatterStage::ColumnVectors`] thread walks between two
/// workgroup barriers (see the module documentation).
#[doc(hidden)]
pub const LOCKSTEP_ROWS: u32 = 64;

/// Tuning of the scatter planner for one device class: every number and
/// choice [`ScatterGeometry::strategy_on`] decides with. See
/// `BENCHMARKS.md`, Tuning decisions, for the measurements behind the
/// values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct ScatterTuning {
    /// The walks of a column (or a word of columns) a thread are chosen
    /// over two passes from this many columns: enough threads to keep the
    /// adapter busy.
    pub columns_min: u64,
    /// The walks are also chosen when each column holds at most this many
    /// updates, whatever the column count.
    pub columns_max_walk: u64,
    /// [`ScatterStrategy::ColumnVectors`] is chosen, where `inner` is whole
    /// vectors, from this many threads (vectors of columns); `None`: never.
    pub vector_threads_min: Option<u64>,
    /// Whether 8- and 16-bit data whose `inner` is whole words walk a word
    /// of columns a thread ([`ScatterStrategy::ColumnWords`]) rather than a
    /// column.
    pub column_words: bool,
}

impl ScatterTuning {
    /// The tuning of `class`. A hardware GPU walks columns only when there
    /// are enough of them to fill it (or the walks are short), one column a
    /// thread, and keeps `Columns` where the word and vector walks were not
    /// measured on one. A software adapter runs a few threads at a time, so
    /// 16 workgroups of column threads keep up to 16 cores busy, and the
    /// two passes' per-update atomics cost it more than a long walk; a
    /// vector of columns a thread walks from fewer threads still.
    pub const fn of(class: DeviceClass) -> ScatterTuning {
        match class {
            DeviceClass::Software => ScatterTuning {
                columns_min: 1 << 12,
                columns_max_walk: 8,
                vector_threads_min: Some(16),
                column_words: true,
            },
            DeviceClass::Hardware => ScatterTuning {
                columns_min: 1 << 16,
                columns_max_walk: 8,
                vector_threads_min: None,
                column_words: false,
            },
        }
    }
}

crate::family::param_words! {
    /// The parameter words of the last-write-wins kernels (the uniform
    /// `params` block), filled by [`scatter_params`].
    ///
    /// Update `u` splits row-major as `(outer, k, i)` over
    /// `(N / (index axis size * inner), index axis size, inner)`; with the
    /// axis coordinate `c` its index value names, its target output
    /// element is `(outer * input axis size + c) * inner + i`. Words 6 and
    /// 7 are reserved, zero.
    pub mod params [8] {
        /// Update count `N` (elements of the indices and of the updates).
        UPDATE_COUNT = 0,
        /// Inner length: the product of the sizes after the axis.
        INNER = 1,
        /// The indices' (and updates') size on the axis.
        INDEX_AXIS_LEN = 2,
        /// The input's (and output's) size on the axis.
        AXIS_LEN = 3,
        /// Output element count.
        OUTPUT_COUNT = 4,
        /// Column count: `outer * inner`.
        COLUMNS = 5,
    }
}

/// How the update elements map onto the output.
///
/// Every dimension before the axis merges into `outer`, every one after it
/// into `inner`: `indices` and `updates` are `outer x index_axis_len x
/// inner`, `input` and `output` are `outer x axis_len x inner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScatterGeometry {
    /// Product of the sizes before the axis.
    pub outer: u64,
    /// The indices' size on the axis.
    pub index_axis_len: u64,
    /// The input's size on the axis.
    pub axis_len: u64,
    /// Product of the sizes after the axis.
    pub inner: u64,
    /// Elements of the indices (and of the updates).
    pub update_count: u64,
    /// Elements of the input (and of the output).
    pub output_count: u64,
}

impl ScatterGeometry {
    /// The geometry of scattering along `axis` into a tensor of
    /// `input_sizes` with indices of `indices_sizes`.
    ///
    /// Fails with [`OpError::InvalidArgument`] for an axis out of range, a
    /// dimension count mismatch or an indices size differing from the
    /// input's off the axis, and with [`OpError::TooLarge`] when an element
    /// count overflows `u64`.
    pub fn new(
        input_sizes: &[u32],
        indices_sizes: &[u32],
        axis: usize,
    ) -> Result<ScatterGeometry, OpError> {
        let rank = input_sizes.len();
        if axis >= rank {
            return Err(OpError::InvalidArgument(format!(
                "scatter axis {axis} is out of range for a tensor of {rank} dimensions"
            )));
        }
        if indices_sizes.len() != rank {
            return Err(OpError::InvalidArgument(format!(
                "the indices have {} dimensions (sizes {indices_sizes:?}) but the input has {rank} (sizes {input_sizes:?})",
                indices_sizes.len()
            )));
        }
        for d in (0..rank).filter(|&d| d != axis) {
            if indices_sizes[d] != input_sizes[d] {
                return Err(OpError::InvalidArgument(format!(
                    "the indices' size {} on dimension {d} differs from the input's {} (only axis {axis} may differ): indices {indices_sizes:?}, input {input_sizes:?}",
                    indices_sizes[d], input_sizes[d]
                )));
            }
        }
        let product = |s: &[u32]| {
            crate::element_count(s)
                .ok_or_else(|| too_large("tensor", "element count overflows u64"))
        };
        let update_count = product(indices_sizes)?;
        let output_count = product(input_sizes)?;
        // With nothing to scatter into or from, the sizes beside a zero may
        // multiply past u64: the columns are then none.
        let part = |s: &[u32]| match product(s) {
            Err(_) if update_count == 0 && output_count == 0 => Ok(0),
            other => other,
        };
        Ok(ScatterGeometry {
            outer: part(&input_sizes[..axis])?,
            index_axis_len: u64::from(indices_sizes[axis]),
            axis_len: u64::from(input_sizes[axis]),
            inner: part(&input_sizes[axis + 1..])?,
            update_count,
            output_count,
        })
    }

    /// Columns: updates that may collide share one (`outer * inner` of them).
    pub fn columns(&self) -> u64 {
        self.outer * self.inner
    }

    /// The algorithm [`scatter_elements_plan`] runs on a GPU
    /// ([`DeviceClass::Hardware`]), whatever the data type: `strategy_on`
    /// with that class's [`ScatterTuning`], which has no data-dependent
    /// walks.
    pub fn strategy(&self) -> ScatterStrategy {
        self.strategy_on(DeviceClass::Hardware, DataType::Uint32)
    }

    /// The algorithm for `data` on an adapter of `class`, with
    /// `t = ScatterTuning::of(class)`:
    ///
    /// - [`ScatterStrategy::TwoPass`] for walks of more than
    ///   [`MAX_THREAD_STEPS`](crate::MAX_THREAD_STEPS) updates (a walk's
    ///   thread loops over them);
    /// - [`ScatterStrategy::ColumnVectors`] when `t.vector_threads_min` is
    ///   set, `inner` is a whole number of 16-byte vectors and the walk has
    ///   at least that many threads (or at most `t.columns_max_walk`
    ///   updates per column);
    /// - else, from `t.columns_min` columns (or with at most
    ///   `t.columns_max_walk` updates per column),
    ///   [`ScatterStrategy::ColumnWords`] for 8- and 16-bit data whose
    ///   `inner` is a whole number of words where `t.column_words`,
    ///   [`ScatterStrategy::Columns`] otherwise;
    /// - else [`ScatterStrategy::TwoPass`].
    pub fn strategy_on(&self, class: DeviceClass, data: DataType) -> ScatterStrategy {
        let t = ScatterTuning::of(class);
        if self.index_axis_len > crate::MAX_THREAD_STEPS {
            return ScatterStrategy::TwoPass;
        }
        let short = self.index_axis_len <= t.columns_max_walk;
        let vector_threads = self.vector_walk(data).map(|per| self.columns() / per);
        if let (Some(threads), Some(min)) = (vector_threads, t.vector_threads_min) {
            if short || threads >= min {
                return ScatterStrategy::ColumnVectors;
            }
        }
        if !short && self.columns() < t.columns_min {
            ScatterStrategy::TwoPass
        } else if t.column_words && self.word_walk(data).is_some() {
            ScatterStrategy::ColumnWords
        } else {
            ScatterStrategy::Columns
        }
    }

    /// The columns a [`ScatterStage::ColumnVectors`] thread walks for
    /// `data` (a `vec4<u32>` of them: 16 / element bytes), when `inner` is
    /// a whole number of such vectors.
    pub fn vector_walk(&self, data: DataType) -> Option<u64> {
        let per = 128 / u64::from(data.size_bits());
        self.inner.is_multiple_of(per).then_some(per)
    }

    /// The columns a [`ScatterStage::ColumnWords`] thread walks for 8- or
    /// 16-bit `data` (a `u32` word of them), when `inner` is a whole number
    /// of such words; `None` for wider data.
    pub fn word_walk(&self, data: DataType) -> Option<u64> {
        let per = 32 / u64::from(data.size_bits());
        (per > 1 && self.inner.is_multiple_of(per)).then_some(per)
    }

    /// The target output element of update `u` whose axis coordinate is `c`
    /// (`u < update_count`, `c < axis_len`).
    pub fn target(&self, u: u64, c: u64) -> u64 {
        let i = u % self.inner;
        let outer = u / self.inner / self.index_axis_len;
        (outer * self.axis_len + c) * self.inner + i
    }
}

/// The allowed index values `[low, high]` along an axis of `axis_len`
/// elements: `[-axis_len, axis_len - 1]` for signed index types,
/// `[0, axis_len - 1]` for unsigned ones (empty when `axis_len` is 0).
pub fn index_bounds(index: DataType, axis_len: u64) -> (i128, i128) {
    let len = i128::from(axis_len);
    let low = if index.is_signed_int() { -len } else { 0 };
    (low, len - 1)
}

/// The CPU reference of `collisions: last_write_wins`:
/// [`IndexMap::cpu`] along `axis` with the replacement `b`, so that the
/// last update of an element in row-major order stays. Bits are copied
/// verbatim.
pub fn scatter_elements_cpu(
    input: &HostTensor,
    indices: &HostTensor,
    updates: &HostTensor,
    output: &TensorDesc,
    axis: usize,
    indices_name: &str,
) -> Result<HostTensor, OpError> {
    static REPLACE: Scalar = Scalar::Var(Var::B);
    IndexMap::Axis(axis).cpu(&REPLACE, input, indices, updates, output, indices_name, &[])
}

/// The error [`scatter_elements_cpu`] gives for element `position`
/// (linear, row-major) of `indices`, for phrasing a failed GPU index check
/// (`ExecError::Index`): [`IndexMap::index_error`] along `axis`.
pub fn scatter_elements_index_error(
    input: &TensorDesc,
    indices: &HostTensor,
    axis: usize,
    indices_name: &str,
    position: u64,
) -> OpError {
    IndexMap::Axis(axis).index_error(input, indices, indices_name, position)
}

/// The parameter words of a scatter (layout in [`params`]).
///
/// Fails with [`OpError::TooLarge`] when a count or size exceeds `u32`.
pub fn scatter_params(geometry: &ScatterGeometry) -> Result<Vec<u32>, OpError> {
    let word = |v: u64, what: &str| {
        u32::try_from(v).map_err(|_| {
            too_large(
                &format!("{what} {v}"),
                "u32 addressing of the scatter kernels",
            )
        })
    };
    let mut p = vec![0u32; params::LEN];
    p[params::UPDATE_COUNT] = word(geometry.update_count, "update count")?;
    p[params::INNER] = word(geometry.inner, "inner length")?;
    p[params::INDEX_AXIS_LEN] = word(geometry.index_axis_len, "indices axis size")?;
    p[params::AXIS_LEN] = word(geometry.axis_len, "input axis size")?;
    p[params::OUTPUT_COUNT] = word(geometry.output_count, "output element count")?;
    p[params::COLUMNS] = word(geometry.columns(), "column count")?;
    Ok(p)
}

/// Checks a last-write-wins call: DirectML's shapes ([`ScatterGeometry`]:
/// the indices the input's sizes off the axis), then [`IndexMap::Axis`]'s.
fn check_columns(t: &Tensors<'_>, axis: usize) -> Result<ScatterGeometry, OpError> {
    let g = ScatterGeometry::new(&t.input().sizes, &t.indices().sizes, axis)?;
    IndexMap::Axis(axis).check(t)?;
    Ok(g)
}

/// The GPU plan of `collisions: last_write_wins`, with the algorithm
/// [`ScatterGeometry::strategy_on`] picks for `class` (see the module
/// documentation).
///
/// - `outputs` has `output_slot + 1` entries: output `output_slot` starts as
///   [`OutputInit::CopyOfInput`]`(input_slot)`, any others as
///   [`OutputInit::Zero`].
/// - `index_checks` is `[indices_slot]`: status word 0 reports the lowest
///   bad element position (linear, row-major) of the indices.
/// - The walks ([`ScatterStrategy::Columns`], `ColumnWords`,
///   `ColumnVectors`): one pass of the walk's kernel binding
///   [`WALK_BINDINGS`] (`[Params, Input(indices_slot),
///   Input(updates_slot), Status, Output(output_slot)]`), one thread per
///   column (word, vector of columns).
/// - [`ScatterStrategy::TwoPass`]: scratch buffer 0 holds one winner word
///   per output element; pass 0 runs `kernels.winner` binding
///   [`WINNER_BINDINGS`] (`[Params, Input(indices_slot), Scratch(0),
///   Status]`), pass 1 runs `kernels.write` binding [`WRITE_BINDINGS`]
///   (`[Params, Input(indices_slot), Input(updates_slot), Scratch(0),
///   Status, Output(output_slot)]`), both one thread per update element.
///
/// Every pass has the [`scatter_params`] words. With no update elements
/// there is no pass (the output is the input).
///
/// Fails like [`scatter_elements_cpu`] on the descriptions, with indices
/// of the input's sizes off the axis, and with [`OpError::TooLarge`] when
/// the update count, an output offset or the `u32` word index of any
/// element exceeds `u32`.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements_plan(
    input: &TensorDesc,
    input_slot: usize,
    indices: &TensorDesc,
    indices_slot: usize,
    updates: &TensorDesc,
    updates_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    axis: usize,
    class: DeviceClass,
    kernels: &ScatterKernels,
) -> Result<GpuPlan, OpError> {
    scatter_elements_plan_with(
        None,
        input,
        input_slot,
        indices,
        indices_slot,
        updates,
        updates_slot,
        output,
        output_slot,
        axis,
        class,
        kernels,
    )
}

/// [`scatter_elements_plan`] with the algorithm `strategy` forces (`None`:
/// [`ScatterGeometry::strategy_on`]'s for `class`), so that tests can run
/// each on any call.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements_plan_with(
    strategy: Option<ScatterStrategy>,
    input: &TensorDesc,
    input_slot: usize,
    indices: &TensorDesc,
    indices_slot: usize,
    updates: &TensorDesc,
    updates_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    axis: usize,
    class: DeviceClass,
    kernels: &ScatterKernels,
) -> Result<GpuPlan, OpError> {
    let t = Tensors::new(
        (input, input_slot),
        (indices, indices_slot),
        (updates, updates_slot),
        (output, output_slot),
    );
    stages_plan(strategy, &t, axis, class, kernels)
}

/// [`scatter_elements_plan_with`] of the call's [`Tensors`].
pub(crate) fn stages_plan(
    strategy: Option<ScatterStrategy>,
    t: &Tensors<'_>,
    axis: usize,
    class: DeviceClass,
    kernels: &ScatterKernels,
) -> Result<GpuPlan, OpError> {
    let g = check_columns(t, axis)?;
    let mut plan = t.plan();
    if g.update_count == 0 {
        return Ok(plan);
    }
    let [_, indices, updates, output] = t.descs;
    addressable(
        &[
            (indices.dtype, g.update_count),
            (updates.dtype, g.update_count),
            (output.dtype, g.output_count),
        ],
        "scatter",
    )?;
    let params = scatter_params(&g)?;
    let strategy = strategy.unwrap_or_else(|| g.strategy_on(class, output.dtype));
    // Columns a vector, or (packed data) a word, at a time: software plans
    // choose them, tests may force them; each needs whole vectors (words)
    // of columns in `inner`, else the plan falls back to the next narrower.
    let vectors = g
        .vector_walk(output.dtype)
        .map(|per| (kernels.column_vectors, per));
    let words = kernels.column_words.zip(g.word_walk(output.dtype));
    let columns = (kernels.columns, 1);
    // The one-pass kernel and the columns each of its threads walks.
    let walk = match strategy {
        ScatterStrategy::TwoPass => None,
        ScatterStrategy::Columns => Some(columns),
        ScatterStrategy::ColumnWords => Some(words.unwrap_or(columns)),
        ScatterStrategy::ColumnVectors => Some(vectors.or(words).unwrap_or(columns)),
    };
    if let Some((kernel, columns_per_thread)) = walk {
        plan.passes.push(Pass {
            kernel,
            buffers: t.buffers(&WALK_BINDINGS),
            params,
            workgroups: (g.columns() / columns_per_thread).div_ceil(u64::from(WORKGROUP_SIZE)),
        });
        return Ok(plan);
    }
    plan.scratch_bytes.push(g.output_count * 4);
    let workgroups = g.update_count.div_ceil(u64::from(WORKGROUP_SIZE));
    for (kernel, bindings) in [
        (kernels.winner, &WINNER_BINDINGS[..]),
        (kernels.write, &WRITE_BINDINGS[..]),
    ] {
        plan.passes.push(Pass {
            kernel,
            buffers: t.buffers(bindings),
            params: params.clone(),
            workgroups,
        });
    }
    Ok(plan)
}

/// Every plan of the four [`ScatterStrategy`]s for this call (those that
/// fall back to the same kernel as another once; the walks only up to
/// [`MAX_THREAD_STEPS`](crate::MAX_THREAD_STEPS) updates), each with its
/// strategy's name: what tests and `ops fuzz --variants all` run beside
/// the planner's choice.
pub(crate) fn stages_plans(
    t: &Tensors<'_>,
    axis: usize,
    kernels: &ScatterKernels,
) -> Result<Vec<(String, GpuPlan)>, OpError> {
    let mut out: Vec<(String, GpuPlan)> = Vec::new();
    let g = check_columns(t, axis)?;
    let walks = g.index_axis_len <= crate::MAX_THREAD_STEPS;
    for strategy in [
        ScatterStrategy::TwoPass,
        ScatterStrategy::Columns,
        ScatterStrategy::ColumnWords,
        ScatterStrategy::ColumnVectors,
    ] {
        if strategy != ScatterStrategy::TwoPass && !walks {
            continue;
        }
        let plan = stages_plan(Some(strategy), t, axis, DeviceClass::Software, kernels)?;
        if !out.iter().any(|(_, p)| *p == plan) {
            out.push((format!("{strategy:?}"), plan));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Binary;
    use crate::Element;

    static A: Scalar = Scalar::Var(Var::A);
    static B: Scalar = Scalar::Var(Var::B);
    static ADD: Scalar = Scalar::Binary(Binary::Add, &A, &B);
    static MUL: Scalar = Scalar::Binary(Binary::Mul, &A, &B);
    const TUPLES: IndexMap = IndexMap::Tuples {
        input_rank: 2,
        indices_rank: 2,
    };

    fn scatter<T: Element, I: Element>(
        sizes: &[u32],
        input: &[T],
        index_sizes: &[u32],
        indices: &[I],
        updates: &[T],
        axis: usize,
    ) -> Result<Vec<T>, OpError> {
        let input = HostTensor::from_slice(sizes.to_vec(), input).unwrap();
        let indices = HostTensor::from_slice(index_sizes.to_vec(), indices).unwrap();
        let updates = HostTensor::from_slice(index_sizes.to_vec(), updates).unwrap();
        let out = scatter_elements_cpu(
            &input,
            &indices,
            &updates,
            &TensorDesc::new(T::DTYPE, sizes.to_vec()),
            axis,
            "IndicesTensor",
        )?;
        Ok(out.to_vec::<T>().unwrap())
    }

    #[test]
    fn seed_examples() {
        let out = scatter::<f32, u32>(
            &[5],
            &[0.0, 1.0, 2.0, 3.0, 4.0],
            &[4],
            &[3, 1, 3, 0],
            &[5.0, 6.0, 7.0, 8.0],
            0,
        )
        .unwrap();
        assert_eq!(out, [8.0, 6.0, 2.0, 7.0, 4.0]);
        let out = scatter::<f32, i64>(
            &[3, 3],
            &[0.0; 9],
            &[2, 3],
            &[1, 0, 2, 0, 2, 1],
            &[10.0, 11.0, 12.0, 20.0, 21.0, 22.0],
            0,
        )
        .unwrap();
        assert_eq!(out, [20.0, 11.0, 0.0, 10.0, 0.0, 22.0, 0.0, 21.0, 12.0]);
    }

    #[test]
    fn negative_indices_count_from_the_end() {
        let out = scatter::<i32, i32>(&[4], &[0; 4], &[3], &[-1, -4, 1], &[7, 8, 9], 0).unwrap();
        assert_eq!(out, [8, 9, 0, 7]);
        let out = scatter::<u8, i64>(&[2, 3], &[0; 6], &[2, 1], &[-3, -1], &[1, 2], 1).unwrap();
        assert_eq!(out, [1, 0, 0, 0, 0, 2]);
        // -1 and 2 name the same element: the later update wins.
        let out = scatter::<i16, i32>(&[3], &[5; 3], &[2], &[2, -1], &[1, 2], 0).unwrap();
        assert_eq!(out, [5, 5, 2]);
    }

    #[test]
    fn collisions_last_write_wins() {
        let out = scatter::<u64, u32>(
            &[3],
            &[0; 3],
            &[6],
            &[1, 1, 0, 1, 0, 2],
            &[10, 11, 12, 13, 14, 15],
            0,
        )
        .unwrap();
        assert_eq!(out, [14, 13, 15]);
        // Along axis 1 of 2x2: row-major order of the updates decides.
        let out = scatter::<i8, u64>(
            &[2, 2],
            &[0; 4],
            &[2, 3],
            &[0, 0, 1, 1, 1, 1],
            &[1, 2, 3, 4, 5, 6],
            1,
        )
        .unwrap();
        assert_eq!(out, [2, 3, 0, 6]);
    }

    /// A naive reference over full coordinates, independent of the merged geometry.
    fn naive(
        sizes: &[u32],
        input: &[u32],
        index_sizes: &[u32],
        indices: &[i64],
        updates: &[u32],
        axis: usize,
    ) -> Vec<u32> {
        let mut out = input.to_vec();
        let strides = crate::row_major_strides(sizes);
        for (u, (&v, &x)) in indices.iter().zip(updates).enumerate() {
            let mut coords = coordinates(index_sizes, u as u64);
            let len = i64::from(sizes[axis]);
            coords[axis] = (if v < 0 { v + len } else { v }) as u32;
            let t: u64 = coords
                .iter()
                .zip(&strides)
                .map(|(&c, &s)| u64::from(c) * s)
                .sum();
            out[t as usize] = x;
        }
        out
    }

    #[test]
    fn every_axis_of_a_3d_tensor() {
        let sizes = [2u32, 3, 4];
        let input: Vec<u32> = (0..24).collect();
        for axis in 0..3 {
            for k in [1u32, 2, 5] {
                let mut index_sizes = sizes;
                index_sizes[axis] = k;
                let n: u32 = index_sizes.iter().product();
                let len = i64::from(sizes[axis]);
                let indices: Vec<i64> = (0..n)
                    .map(|u| i64::from(u * 7 % 11) % (2 * len) - len)
                    .collect();
                let updates: Vec<u32> = (0..n).map(|u| 100 + u).collect();
                let got =
                    scatter::<u32, i64>(&sizes, &input, &index_sizes, &indices, &updates, axis)
                        .unwrap();
                let want = naive(&sizes, &input, &index_sizes, &indices, &updates, axis);
                assert_eq!(got, want, "axis {axis} k {k}");
            }
        }
    }

    #[test]
    fn out_of_range_errors() {
        let err = scatter::<f32, i32>(&[2, 3], &[0.0; 6], &[2, 2], &[0, 1, -4, 3], &[1.0; 4], 1)
            .unwrap_err();
        assert_eq!(
            err,
            OpError::IndexOutOfRange {
                tensor: "IndicesTensor".into(),
                position: vec![1, 0],
                value: -4,
                low: -3,
                high: 2,
            }
        );
        let err = scatter::<f32, u32>(&[3], &[0.0; 3], &[2], &[0, 3], &[1.0; 2], 0).unwrap_err();
        assert_eq!(
            err,
            OpError::IndexOutOfRange {
                tensor: "IndicesTensor".into(),
                position: vec![1],
                value: 3,
                low: 0,
                high: 2,
            }
        );
        // 64-bit values beyond 32 bits, and u64 values beyond i64.
        let err = scatter::<u8, i64>(&[3], &[0; 3], &[2], &[1, 1 << 32], &[1; 2], 0).unwrap_err();
        assert!(matches!(err, OpError::IndexOutOfRange { value, .. } if value == 1 << 32));
        let err = scatter::<u8, u64>(&[3], &[0; 3], &[1], &[u64::MAX], &[1], 0).unwrap_err();
        assert!(
            matches!(err, OpError::IndexOutOfRange { value, low: 0, high: 2, .. } if value == i128::from(u64::MAX))
        );
        let err = scatter::<u8, i64>(&[3], &[0; 3], &[1], &[i64::MIN], &[1], 0).unwrap_err();
        assert!(matches!(err, OpError::IndexOutOfRange { low: -3, .. }));
        // The index error helper says the same as the CPU.
        let input = TensorDesc::new(DataType::Float32, [2, 3]);
        let indices = HostTensor::from_slice([2, 2], &[0i32, 1, -4, 3]).unwrap();
        let e = scatter_elements_index_error(&input, &indices, 1, "IndicesTensor", 2);
        assert!(
            matches!(e, OpError::IndexOutOfRange { ref position, value: -4, .. } if *position == [1, 0])
        );
        let e = scatter_elements_index_error(&input, &indices, 1, "IndicesTensor", 3);
        assert!(matches!(
            e,
            OpError::IndexOutOfRange {
                value: 3,
                low: -3,
                high: 2,
                ..
            }
        ));
        assert!(matches!(
            scatter_elements_index_error(&input, &indices, 1, "I", 4),
            OpError::InvalidArgument(_)
        ));
        assert!(matches!(
            scatter_elements_index_error(&input, &indices, 2, "I", 0),
            OpError::InvalidArgument(_)
        ));
    }

    #[test]
    fn float64_bits_survive() {
        let nan = f64::from_bits(0x7ff0_0000_0000_0001);
        let neg_nan = f64::from_bits(0xfff8_dead_beef_0001);
        let sub = f64::from_bits(1);
        let out = scatter::<f64, i32>(
            &[5],
            &[1.0, 2.0, 3.0, 4.0, f64::from_bits(0x7ff8_0000_0000_0002)],
            &[3],
            &[0, -2, 2],
            &[nan, -0.0, sub],
            0,
        )
        .unwrap();
        let bits: Vec<u64> = out.iter().map(|v| v.to_bits()).collect();
        assert_eq!(
            bits,
            [
                nan.to_bits(),
                2f64.to_bits(),
                1,
                0x8000_0000_0000_0000,
                0x7ff8_0000_0000_0002
            ]
        );
        let out = scatter::<f64, u64>(&[1], &[0.0], &[1], &[0], &[neg_nan], 0).unwrap();
        assert_eq!(out[0].to_bits(), neg_nan.to_bits());
        let h = [crate::f16::from_bits(0x7c01), crate::f16::from_bits(0x8000)];
        let out =
            scatter::<crate::f16, u32>(&[2], &[crate::f16::ZERO; 2], &[2], &[1, 0], &h, 0).unwrap();
        assert_eq!([out[0].to_bits(), out[1].to_bits()], [0x8000, 0x7c01]);
    }

    #[test]
    fn zero_size_tensors() {
        // No updates: the output is the input.
        let out = scatter::<f32, i32>(&[2, 3], &[1.0; 6], &[2, 0], &[], &[], 1).unwrap();
        assert_eq!(out, [1.0; 6]);
        let out = scatter::<f32, i32>(&[0, 3], &[], &[0, 3], &[], &[], 0).unwrap();
        assert!(out.is_empty());
        let out = scatter::<f32, i32>(&[0, 3], &[], &[0, 2], &[], &[], 1).unwrap();
        assert!(out.is_empty());
        // An empty axis with updates: every index is out of range.
        let err = scatter::<f32, i32>(&[2, 0], &[], &[2, 1], &[0, 0], &[1.0; 2], 1).unwrap_err();
        assert!(
            matches!(err, OpError::IndexOutOfRange { ref position, low: 0, high: -1, .. } if *position == [0, 0])
        );
        static K: Kernel = Kernel::new("test/scatter", "", "main", &[], WORKGROUP_SIZE);
        let kernels = ScatterKernels {
            winner: &K,
            write: &K,
            columns: &K,
            column_words: None,
            column_vectors: &K,
        };
        let input = TensorDesc::new(DataType::Float32, [2, 3]);
        let indices = TensorDesc::new(DataType::Int64, [2, 0]);
        let plan = scatter_elements_plan(
            &input,
            0,
            &indices,
            1,
            &indices_like(&indices, DataType::Float32),
            2,
            &input,
            0,
            1,
            DeviceClass::Software,
            &kernels,
        )
        .unwrap();
        assert!(plan.passes.is_empty());
        assert_eq!(plan.outputs, [OutputInit::CopyOfInput(0)]);
    }

    fn indices_like(indices: &TensorDesc, dtype: DataType) -> TensorDesc {
        TensorDesc::new(dtype, indices.sizes.clone())
    }

    #[test]
    fn argument_errors() {
        let input = TensorDesc::new(DataType::Float32, [2, 3]);
        let idx = TensorDesc::new(DataType::Int32, [2, 4]);
        let upd = TensorDesc::new(DataType::Float32, [2, 4]);
        let ok = |i: &TensorDesc, x: &TensorDesc, u: &TensorDesc, o: &TensorDesc, axis| {
            check_columns(&Tensors::new((i, 0), (x, 1), (u, 2), (o, 0)), axis).is_ok()
        };
        assert!(ok(&input, &idx, &upd, &input, 1));
        assert!(!ok(&input, &idx, &upd, &input, 0));
        assert!(!ok(&input, &idx, &upd, &input, 2));
        let f = TensorDesc::new(DataType::Float32, [2, 4]);
        assert!(!ok(&input, &f, &upd, &input, 1));
        let u8s = TensorDesc::new(DataType::Uint8, [2, 4]);
        assert!(!ok(&input, &idx, &u8s, &input, 1));
        let short = TensorDesc::new(DataType::Float32, [2, 3]);
        assert!(!ok(&input, &idx, &short, &input, 1));
        let out = TensorDesc::new(DataType::Float32, [3, 2]);
        assert!(!ok(&input, &idx, &upd, &out, 1));
        let rank3 = TensorDesc::new(DataType::Int32, [2, 4, 1]);
        assert!(!ok(&input, &rank3, &upd, &input, 1));
    }

    #[test]
    fn plan_shape() {
        static W: Kernel = Kernel::new("test/scatter_winner", "", "main", &[], WORKGROUP_SIZE);
        static X: Kernel = Kernel::new("test/scatter_write", "", "main", &[], WORKGROUP_SIZE);
        static C: Kernel = Kernel::new("test/scatter_columns", "", "main", &[], WORKGROUP_SIZE);
        static V: Kernel = Kernel::new(
            "test/scatter_column_vectors",
            "",
            "main",
            &[],
            WORKGROUP_SIZE,
        );
        let kernels = ScatterKernels {
            winner: &W,
            write: &X,
            columns: &C,
            column_words: None,
            column_vectors: &V,
        };
        let input = TensorDesc::new(DataType::Float16, [4, 5, 6]);
        let idx = TensorDesc::new(DataType::Uint64, [4, 300, 6]);
        let upd = TensorDesc::new(DataType::Float16, [4, 300, 6]);
        let plan = scatter_elements_plan(
            &input,
            0,
            &idx,
            1,
            &upd,
            2,
            &input,
            0,
            1,
            DeviceClass::Hardware,
            &kernels,
        )
        .unwrap();
        assert_eq!(plan.outputs, [OutputInit::CopyOfInput(0)]);
        assert_eq!(plan.scratch_bytes, [120 * 4]);
        assert_eq!(plan.index_checks, [1]);
        assert_eq!(plan.passes.len(), 2);
        let (p0, p1) = (&plan.passes[0], &plan.passes[1]);
        assert_eq!(p0.kernel.key, "test/scatter_winner");
        assert_eq!(p1.kernel.key, "test/scatter_write");
        assert_eq!(
            p0.buffers,
            [
                BufferRef::Params,
                BufferRef::Input(1),
                BufferRef::Scratch(0),
                BufferRef::Status
            ]
        );
        assert_eq!(
            p1.buffers,
            [
                BufferRef::Params,
                BufferRef::Input(1),
                BufferRef::Input(2),
                BufferRef::Scratch(0),
                BufferRef::Status,
                BufferRef::Output(0)
            ]
        );
        assert_eq!(p0.workgroups, 7200u64.div_ceil(256));
        assert_eq!(p0.params, p1.params);
        assert_eq!(p0.params.len(), params::LEN);
        assert_eq!(p0.params[params::UPDATE_COUNT], 7200);
        assert_eq!(p0.params[params::INNER], 6);
        assert_eq!(p0.params[params::INDEX_AXIS_LEN], 300);
        assert_eq!(p0.params[params::AXIS_LEN], 5);
        assert_eq!(p0.params[params::OUTPUT_COUNT], 120);
        assert_eq!(p0.params[params::COLUMNS], 24);
        // Few updates per column, or many columns: one Columns pass.
        let short = TensorDesc::new(DataType::Uint64, [4, 8, 6]);
        let short_upd = TensorDesc::new(DataType::Float16, [4, 8, 6]);
        let plan = scatter_elements_plan(
            &input,
            0,
            &short,
            1,
            &short_upd,
            2,
            &input,
            0,
            1,
            DeviceClass::Hardware,
            &kernels,
        )
        .unwrap();
        assert!(plan.scratch_bytes.is_empty());
        assert_eq!(plan.passes.len(), 1);
        let p = &plan.passes[0];
        assert_eq!(p.kernel.key, "test/scatter_columns");
        assert_eq!(
            p.buffers,
            [
                BufferRef::Params,
                BufferRef::Input(1),
                BufferRef::Input(2),
                BufferRef::Status,
                BufferRef::Output(0)
            ]
        );
        assert_eq!(p.workgroups, 1);
        let wide = TensorDesc::new(DataType::Float32, [100, 1 << 16]);
        let wide_idx = TensorDesc::new(DataType::Int32, [300, 1 << 16]);
        let g = ScatterGeometry::new(&wide.sizes, &wide_idx.sizes, 0).unwrap();
        assert_eq!(g.strategy(), ScatterStrategy::Columns);
        let g = ScatterGeometry::new(&wide.sizes, &wide_idx.sizes[..], 1);
        assert!(g.is_err());
        let g = ScatterGeometry::new(&[100, 256], &[300, 256], 0).unwrap();
        assert_eq!(g.strategy(), ScatterStrategy::TwoPass);
        // A CPU adapter walks vectors of columns from its tuning's
        // vector_threads_min threads, other walks from its columns_min
        // columns.
        let on = |sizes: [u32; 2], data: DataType| {
            let g = ScatterGeometry::new(&sizes, &[300, sizes[1]], 0).unwrap();
            assert_eq!(g.strategy_on(DeviceClass::Hardware, data), g.strategy());
            g.strategy_on(DeviceClass::Software, data)
        };
        use DataType::{Float16, Float32, Int64, Uint8};
        assert_eq!(on([100, 64], Float32), ScatterStrategy::ColumnVectors);
        assert_eq!(on([100, 60], Float32), ScatterStrategy::TwoPass);
        assert_eq!(on([100, 32], Int64), ScatterStrategy::ColumnVectors);
        assert_eq!(on([100, 30], Int64), ScatterStrategy::TwoPass);
        assert_eq!(on([100, 256], Uint8), ScatterStrategy::ColumnVectors);
        assert_eq!(on([100, 240], Uint8), ScatterStrategy::TwoPass);
        assert_eq!(on([100, 4096], Float16), ScatterStrategy::ColumnVectors);
        assert_eq!(on([100, 4098], Float16), ScatterStrategy::ColumnWords);
        assert_eq!(on([100, 4094], Float16), ScatterStrategy::TwoPass);
        assert_eq!(on([100, 4098], Float32), ScatterStrategy::Columns);
        assert_eq!(on([100, 4097], Uint8), ScatterStrategy::Columns);
        assert_eq!(on([100, 4095], Int64), ScatterStrategy::TwoPass);
        let g = ScatterGeometry::new(&[100, 4096], &[300, 4096], 0).unwrap();
        assert_eq!(g.strategy(), ScatterStrategy::TwoPass);
        // Short walks: one pass whatever the column count.
        let g = ScatterGeometry::new(&[100, 6], &[8, 6], 0).unwrap();
        assert_eq!(
            g.strategy_on(DeviceClass::Software, Float32),
            ScatterStrategy::Columns
        );
        assert_eq!(
            g.strategy_on(DeviceClass::Software, Int64),
            ScatterStrategy::ColumnVectors
        );
        assert_eq!(
            g.strategy_on(DeviceClass::Software, Float16),
            ScatterStrategy::ColumnWords
        );
        // Output slot 1 starts as a copy; slot 0 is zero.
        let plan = scatter_elements_plan(
            &input,
            2,
            &idx,
            0,
            &upd,
            1,
            &input,
            1,
            1,
            DeviceClass::Hardware,
            &kernels,
        )
        .unwrap();
        assert_eq!(plan.outputs, [OutputInit::Zero, OutputInit::CopyOfInput(2)]);
        // 2^31 64-bit updates need 2^32 words.
        let big_idx = TensorDesc::new(DataType::Int64, [1 << 16, 1 << 15]);
        let big_upd = TensorDesc::new(DataType::Uint8, [1 << 16, 1 << 15]);
        let small = TensorDesc::new(DataType::Uint8, [1, 1 << 15]);
        let r = scatter_elements_plan(
            &small,
            0,
            &big_idx,
            1,
            &big_upd,
            2,
            &small,
            0,
            0,
            DeviceClass::Hardware,
            &kernels,
        );
        assert!(matches!(r, Err(OpError::TooLarge { .. })), "{r:?}");
        let ok_idx = TensorDesc::new(DataType::Int32, [1 << 16, 1 << 15]);
        assert!(scatter_elements_plan(
            &small,
            0,
            &ok_idx,
            1,
            &big_upd,
            2,
            &small,
            0,
            0,
            DeviceClass::Hardware,
            &kernels
        )
        .is_ok());
    }

    /// Which walk a plan runs: software plans take a vector of columns a
    /// thread where `inner` holds whole vectors, else a word (8- and 16-bit
    /// data), else a column; hardware plans a column unless forced.
    #[test]
    fn column_walks() {
        fn kernel(key: &'static str) -> &'static Kernel {
            Box::leak(Box::new(Kernel::new(key, "", "main", &[], WORKGROUP_SIZE)))
        }
        let kernels = ScatterKernels {
            winner: kernel("winner"),
            write: kernel("write"),
            columns: kernel("columns"),
            column_words: Some(kernel("words")),
            column_vectors: kernel("vectors"),
        };
        let walk = |dtype: DataType, inner: u32, class, strategy| {
            let input = TensorDesc::new(dtype, [4, 8, inner]);
            let idx = TensorDesc::new(DataType::Int32, [4, 8, inner]);
            let upd = TensorDesc::new(dtype, [4, 8, inner]);
            let plan = scatter_elements_plan_with(
                strategy, &input, 0, &idx, 1, &upd, 2, &input, 0, 1, class, &kernels,
            )
            .unwrap();
            assert_eq!(plan.passes.len(), 1);
            assert!(plan.scratch_bytes.is_empty());
            let p = &plan.passes[0];
            (p.kernel.key, p.workgroups)
        };
        let software = DeviceClass::Software;
        // 4 * 1024 columns: 1,024 threads of 4 FLOAT32 columns, 2,048 of 2 INT64.
        assert_eq!(
            walk(DataType::Float32, 1024, software, None),
            ("vectors", 4)
        );
        assert_eq!(walk(DataType::Int64, 1024, software, None), ("vectors", 8));
        assert_eq!(
            walk(DataType::Float16, 1024, software, None),
            ("vectors", 2)
        );
        assert_eq!(walk(DataType::Uint8, 1024, software, None), ("vectors", 1));
        // Whole words but not whole vectors: 8- and 16-bit data take words.
        assert_eq!(walk(DataType::Float16, 1026, software, None), ("words", 9));
        assert_eq!(
            walk(DataType::Float32, 1026, software, None),
            ("columns", 17)
        );
        assert_eq!(
            walk(DataType::Float16, 1025, software, None),
            ("columns", 17)
        );
        // Hardware plans walk a column a thread unless a test forces more.
        let hardware = DeviceClass::Hardware;
        assert_eq!(
            walk(DataType::Float32, 1024, hardware, None),
            ("columns", 16)
        );
        let vectors = Some(ScatterStrategy::ColumnVectors);
        assert_eq!(
            walk(DataType::Float32, 1024, hardware, vectors),
            ("vectors", 4)
        );
        assert_eq!(
            walk(DataType::Float16, 1026, hardware, vectors),
            ("words", 9)
        );
        assert_eq!(
            walk(DataType::Float32, 1026, hardware, vectors),
            ("columns", 17)
        );
        let words = Some(ScatterStrategy::ColumnWords);
        assert_eq!(walk(DataType::Float16, 1024, software, words), ("words", 8));
        assert_eq!(
            walk(DataType::Float32, 1024, software, words),
            ("columns", 16)
        );
        // A forced strategy is the kernel it names, on either class.
        let columns = Some(ScatterStrategy::Columns);
        assert_eq!(
            walk(DataType::Float16, 1024, software, columns),
            ("columns", 16)
        );
    }

    #[test]
    fn geometry() {
        let g = ScatterGeometry::new(&[2, 3, 4, 5], &[2, 7, 4, 5], 1).unwrap();
        assert_eq!(
            (g.outer, g.index_axis_len, g.axis_len, g.inner),
            (2, 7, 3, 20)
        );
        assert_eq!((g.update_count, g.output_count), (280, 120));
        // Update (1, 6, 2, 3) with coordinate 2 -> output (1, 2, 2, 3).
        let u = ((7 + 6) * 4 + 2) * 5 + 3;
        assert_eq!(g.target(u, 2), ((3 + 2) * 4 + 2) * 5 + 3);
        assert_eq!(coordinates(&[2, 7, 4, 5], u), [1, 6, 2, 3]);
        assert_eq!(index_bounds(DataType::Int64, 3), (-3, 2));
        assert_eq!(index_bounds(DataType::Uint32, 3), (0, 2));
    }

    #[test]
    fn updates_combine_in_row_major_order() {
        // ONNX's example with duplicate indices, reduction add.
        let data = HostTensor::from_slice([1, 5], &[1f32, 2., 3., 4., 5.]).unwrap();
        let indices = HostTensor::from_slice([1, 2], &[1i64, 1]).unwrap();
        let updates = HostTensor::from_slice([1, 2], &[1.1f32, 2.1]).unwrap();
        let out = IndexMap::Axis(1)
            .cpu(&ADD, &data, &indices, &updates, data.desc(), "indices", &[])
            .unwrap();
        let want = ((2f32 as f64 + 1.1f32 as f64) as f32 as f64 + 2.1f32 as f64) as f32;
        assert_eq!(out.to_vec::<f32>().unwrap(), [1., want, 3., 4., 5.]);
        // Replace: the last update of a column wins; smaller indices off
        // the axis.
        let data = HostTensor::from_slice([3, 3], &[0u8; 9]).unwrap();
        let indices = HostTensor::from_slice([2, 2], &[-1i32, 0, 2, 1]).unwrap();
        let updates = HostTensor::from_slice([2, 2], &[7u8, 8, 9, 10]).unwrap();
        let out = IndexMap::Axis(0)
            .cpu(&B, &data, &indices, &updates, data.desc(), "indices", &[])
            .unwrap();
        assert_eq!(out.to_vec::<u8>().unwrap(), [0, 8, 0, 0, 10, 0, 9, 0, 0]);
        let bad = HostTensor::from_slice([2, 2], &[0i32, 3, -4, 0]).unwrap();
        let e = IndexMap::Axis(0)
            .cpu(&B, &data, &bad, &updates, data.desc(), "indices", &[])
            .unwrap_err();
        assert!(
            matches!(&e, OpError::IndexOutOfRange { position, value: 3, .. } if position == &[0, 1]),
            "{e}"
        );
    }

    #[test]
    fn tuples_combine_in_row_major_order() {
        // Rows of a [4, 2] input; the first row twice.
        let data = HostTensor::from_slice([4, 2], &[1i32, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let indices = HostTensor::from_slice([3, 1], &[0i64, -1, 0]).unwrap();
        let updates = HostTensor::from_slice([3, 2], &[10i32, 20, 30, 40, 50, 60]).unwrap();
        let run = |combine: &Scalar| {
            TUPLES
                .cpu(combine, &data, &indices, &updates, data.desc(), "i", &[])
                .unwrap()
                .to_vec::<i32>()
                .unwrap()
        };
        assert_eq!(run(&B), [50, 60, 3, 4, 5, 6, 30, 40]);
        assert_eq!(run(&MUL), [500, 2400, 3, 4, 5, 6, 210, 320]);
        // Elements by tuples of two, one out of range.
        let bad = HostTensor::from_slice([2, 2], &[0i32, 1, 4, 0]).unwrap();
        let up = HostTensor::from_slice([2], &[1i32, 1]).unwrap();
        let e = TUPLES
            .cpu(&B, &data, &bad, &up, data.desc(), "i", &[])
            .unwrap_err();
        assert!(
            matches!(&e, OpError::IndexOutOfRange { position, value: 4, low: -4, high: 3, .. } if position == &[1, 0]),
            "{e}"
        );
        assert_eq!(TUPLES.index_error(data.desc(), &bad, "i", 2), e);
        // Mismatched updates are an error.
        let short = HostTensor::from_slice([3], &[1i32, 2, 3]).unwrap();
        assert!(TUPLES
            .cpu(&B, &data, &indices, &short, data.desc(), "i", &[])
            .is_err());
    }
}
