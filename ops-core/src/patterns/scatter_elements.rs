//! The `scatter_elements` pattern: DirectML Scatter (= ScatterElements).
//!
//! ```text
//! output = input
//! output[..., indices[i, j, k, ...] (on Axis), ...] = updates[i, j, k, ...]
//! ```
//!
//! All four tensors have the same dimension count; the indices' sizes equal
//! the input's except on the axis (where they are free), the updates' sizes
//! equal the indices', and input, updates and output share a data type and
//! sizes. Signed index values may be negative, counting from the end of the
//! axis (`-1` is the last element): valid values lie in `[-dim, dim - 1]`
//! for signed index types and `[0, dim - 1]` for unsigned ones; anything
//! else is an [`OpError::IndexOutOfRange`] for the lowest offending element,
//! on both backends, and nothing is written out of bounds.
//!
//! When several updates hit one output element, the **last one in row-major
//! order of the updates wins**, deterministically, on the GPU exactly as in
//! the CPU reference. Elements move as raw bits (NaN payloads, -0.0 and
//! subnormals survive, FLOAT64 included).
//!
//! - [`scatter_elements_cpu`] is the CPU reference.
//! - [`scatter_elements_plan`] builds the GPU plan from the kernels of
//!   [`crate::wgsl::scatter_elements`] ([`ScatterKernels`]), with the
//!   parameter words of [`scatter_params`] laid out as [`params`] documents.
//! - [`scatter_elements_index_error`] phrases a failed GPU index check as the
//!   CPU reference's error.
//!
//! # GPU algorithms
//!
//! The output starts as a copy of the input ([`OutputInit::CopyOfInput`]).
//! Two updates can only hit the same output element when they share their
//! *column*: the coordinates off the axis (`outer`, `inner` below). The plan
//! picks one of four algorithms ([`ScatterGeometry::strategy_on`], for the
//! device class and the data type, with the thresholds of the class's
//! [`ScatterTuning`]; the measurements behind them are in `BENCHMARKS.md`,
//! Tuning decisions):
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

use super::coordinates;
use crate::{
    BufferRef, DataType, DeviceClass, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass,
    TensorDesc,
};

/// Threads per workgroup of both kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// A kernel of the pattern: [`ScatterStrategy::TwoPass`] runs
/// [`ScatterStage::Winner`] then [`ScatterStage::Write`],
/// [`ScatterStrategy::Columns`] runs [`ScatterStage::Columns`].
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
    /// `scatter_column_vectors`).
    pub const fn name(self) -> &'static str {
        match self {
            ScatterStage::Winner => "scatter_winner",
            ScatterStage::Write => "scatter_write",
            ScatterStage::Columns => "scatter_columns",
            ScatterStage::ColumnWords => "scatter_column_words",
            ScatterStage::ColumnVectors => "scatter_column_vectors",
        }
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

/// The parameter words of both kernels, shared by [`scatter_params`] and the
/// WGSL generator ([`crate::wgsl::scatter_elements`]).
///
/// Every constant is a word index into the pass's parameter words (the
/// kernels' uniform `params` block, [`crate::Access::Uniform`]):
///
/// | word | meaning |
/// | --- | --- |
/// | 0 | update count `N` (elements of the indices and of the updates) |
/// | 1 | inner length: the product of the sizes after the axis |
/// | 2 | the indices' (and updates') size on the axis |
/// | 3 | the input's (and output's) size on the axis |
/// | 4 | output element count |
/// | 5 | column count: `outer * inner` |
/// | 6, 7 | reserved, zero |
///
/// Update `u` splits row-major as `(outer, k, i)` over
/// `(N / (index axis size * inner), index axis size, inner)`; with the axis
/// coordinate `c` its index value names, its target output element is
/// `(outer * input axis size + c) * inner + i`.
pub mod params {
    /// Update count.
    pub const UPDATE_COUNT: usize = 0;
    /// Product of the sizes after the axis.
    pub const INNER: usize = 1;
    /// The indices' size on the axis.
    pub const INDEX_AXIS_LEN: usize = 2;
    /// The input's size on the axis.
    pub const AXIS_LEN: usize = 3;
    /// Output element count.
    pub const OUTPUT_COUNT: usize = 4;
    /// Column count (`outer * inner`).
    pub const COLUMNS: usize = 5;
    /// Total word count.
    pub const LEN: usize = 8;
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
            crate::element_count(s).ok_or_else(|| OpError::TooLarge {
                what: "tensor".into(),
                limit: "element count overflows u64".into(),
            })
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

/// The axis coordinate an index value names, `None` when out of range.
fn resolve(value: i128, low: i128, high: i128, axis_len: u64) -> Option<u64> {
    if value < low || value > high {
        return None;
    }
    let c = if value < 0 {
        value + i128::from(axis_len)
    } else {
        value
    };
    u64::try_from(c).ok()
}

/// Checks the call's descriptions; shared by the CPU reference and the plan
/// builder.
fn check_call(
    input: &TensorDesc,
    indices: &TensorDesc,
    updates: &TensorDesc,
    output: &TensorDesc,
    axis: usize,
) -> Result<ScatterGeometry, OpError> {
    let geometry = ScatterGeometry::new(&input.sizes, &indices.sizes, axis)?;
    if !indices.dtype.is_int() {
        return Err(OpError::InvalidArgument(format!(
            "the indices' data type {} must be an integer type",
            indices.dtype
        )));
    }
    if updates.sizes != indices.sizes {
        return Err(OpError::InvalidArgument(format!(
            "the updates' sizes {:?} must equal the indices' sizes {:?}",
            updates.sizes, indices.sizes
        )));
    }
    if updates.dtype != input.dtype || output.dtype != input.dtype {
        return Err(OpError::InvalidArgument(format!(
            "input ({}), updates ({}) and output ({}) must share a data type",
            input.dtype, updates.dtype, output.dtype
        )));
    }
    if output.sizes != input.sizes {
        return Err(OpError::InvalidArgument(format!(
            "the output's sizes {:?} must equal the input's sizes {:?}",
            output.sizes, input.sizes
        )));
    }
    Ok(geometry)
}

/// The error for the bad index at `position` of `indices`.
fn index_error(
    indices: &HostTensor,
    indices_name: &str,
    position: u64,
    value: i128,
    (low, high): (i128, i128),
) -> OpError {
    OpError::IndexOutOfRange {
        tensor: indices_name.to_string(),
        position: coordinates(indices.sizes(), position),
        value,
        low,
        high,
    }
}

/// The CPU reference of the pattern.
///
/// Copies `input` into a tensor described by `output` (which must have the
/// input's data type and sizes), then writes each element of `updates`, in
/// row-major order, to the output element its index names along `axis`:
/// later updates overwrite earlier ones. Bits are copied verbatim.
///
/// Fails with [`OpError::IndexOutOfRange`] for the lowest-positioned index
/// outside [`index_bounds`] (`tensor` is `indices_name`, `position` the
/// element's coordinates in the indices), and with
/// [`OpError::InvalidArgument`] when the tensors break the shape and data
/// type rules of the module documentation.
pub fn scatter_elements_cpu(
    input: &HostTensor,
    indices: &HostTensor,
    updates: &HostTensor,
    output: &TensorDesc,
    axis: usize,
    indices_name: &str,
) -> Result<HostTensor, OpError> {
    let g = check_call(input.desc(), indices.desc(), updates.desc(), output, axis)?;
    let bounds = index_bounds(indices.dtype(), g.axis_len);
    let width = input.dtype().size_bytes();
    let mut bytes = input.bytes().to_vec();
    let src = updates.bytes();
    for u in 0..g.update_count {
        let at = u as usize;
        let value = indices.get_int(at).ok_or_else(|| {
            OpError::InvalidArgument(format!(
                "element {u} of the indices cannot be read as an integer"
            ))
        })?;
        let Some(c) = resolve(value, bounds.0, bounds.1, g.axis_len) else {
            return Err(index_error(indices, indices_name, u, value, bounds));
        };
        let t = g.target(u, c) as usize;
        bytes[t * width..(t + 1) * width].copy_from_slice(&src[at * width..(at + 1) * width]);
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// The error [`scatter_elements_cpu`] gives for element `position` (linear,
/// row-major) of `indices`, for phrasing a failed GPU index check
/// (`ExecError::Index`).
///
/// The result is an [`OpError::IndexOutOfRange`] with the element's
/// coordinates, its value and the bounds of [`index_bounds`] for the
/// input's size on `axis`, whatever the value (this function does not
/// re-check it). An `axis` or `position` out of range, or a float indices
/// tensor, gives an [`OpError::InvalidArgument`] instead.
pub fn scatter_elements_index_error(
    input: &TensorDesc,
    indices: &HostTensor,
    axis: usize,
    indices_name: &str,
    position: u64,
) -> OpError {
    let Some(&axis_len) = input.sizes.get(axis) else {
        return OpError::InvalidArgument(format!(
            "scatter axis {axis} is out of range for a tensor of {} dimensions",
            input.rank()
        ));
    };
    let value = usize::try_from(position)
        .ok()
        .and_then(|p| indices.get_int(p));
    match value {
        Some(value) => index_error(
            indices,
            indices_name,
            position,
            value,
            index_bounds(indices.dtype(), u64::from(axis_len)),
        ),
        None => OpError::InvalidArgument(format!(
            "an index check reported element {position} of `{indices_name}`, a {} tensor of {} elements",
            indices.dtype(),
            indices.len()
        )),
    }
}

/// The parameter words of a scatter (layout in [`params`]).
///
/// Fails with [`OpError::TooLarge`] when a count or size exceeds `u32`.
pub fn scatter_params(geometry: &ScatterGeometry) -> Result<Vec<u32>, OpError> {
    let word = |v: u64, what: &str| {
        u32::try_from(v).map_err(|_| OpError::TooLarge {
            what: format!("{what} {v}"),
            limit: "u32 addressing of the scatter kernels".into(),
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

/// The GPU plan of a scatter, with the algorithm
/// [`ScatterGeometry::strategy`] picks (see the module documentation).
///
/// - `outputs` has `output_slot + 1` entries: output `output_slot` starts as
///   [`OutputInit::CopyOfInput`]`(input_slot)`, any others as
///   [`OutputInit::Zero`].
/// - `index_checks` is `[indices_slot]`: status word 0 reports the lowest
///   bad element position (linear, row-major) of the indices.
/// - [`ScatterStrategy::Columns`]: one pass of `kernels.columns` binding
///   `[Params, Input(indices_slot), Input(updates_slot), Status,
///   Output(output_slot)]`, one thread per column.
/// - [`ScatterStrategy::TwoPass`]: scratch buffer 0 holds one winner word
///   per output element; pass 0 runs `kernels.winner` binding `[Params,
///   Input(indices_slot), Scratch(0), Status]`, pass 1 runs `kernels.write`
///   binding `[Params, Input(indices_slot), Input(updates_slot), Scratch(0),
///   Status, Output(output_slot)]`, both one thread per update element.
///
/// Every pass has the [`scatter_params`] words. With no update elements
/// there is no pass (the output is the input).
///
/// Fails like [`scatter_elements_cpu`] on the descriptions, and with
/// [`OpError::TooLarge`] when the update count, an output offset or the
/// `u32` word index of any element exceeds `u32`.
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

/// Every plan of the four [`ScatterStrategy`]s for this call (those that
/// fall back to the same kernel as another once; the walks only up to
/// [`MAX_THREAD_STEPS`](crate::MAX_THREAD_STEPS) updates), each with its strategy's
/// name: what tests and `ops fuzz --variants all` run beside the planner's
/// choice.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements_plans(
    input: &TensorDesc,
    input_slot: usize,
    indices: &TensorDesc,
    indices_slot: usize,
    updates: &TensorDesc,
    updates_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    axis: usize,
    kernels: &ScatterKernels,
) -> Result<Vec<(String, GpuPlan)>, OpError> {
    let mut out: Vec<(String, GpuPlan)> = Vec::new();
    let g = check_call(input, indices, updates, output, axis)?;
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
        let plan = scatter_elements_plan_with(
            Some(strategy),
            input,
            input_slot,
            indices,
            indices_slot,
            updates,
            updates_slot,
            output,
            output_slot,
            axis,
            DeviceClass::Software,
            kernels,
        )?;
        if !out.iter().any(|(_, p)| *p == plan) {
            out.push((format!("{strategy:?}"), plan));
        }
    }
    Ok(out)
}

/// [`scatter_elements_plan`] with the algorithm `strategy` forces (`None`:
/// [`ScatterGeometry::strategy_on`]'s for `class`), so that tests can run
/// both on any call.
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
    let g = check_call(input, indices, updates, output, axis)?;
    let mut outputs = vec![OutputInit::Zero; output_slot + 1];
    outputs[output_slot] = OutputInit::CopyOfInput(input_slot);
    let mut plan = GpuPlan {
        outputs,
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: vec![indices_slot],
    };
    if g.update_count == 0 {
        return Ok(plan);
    }
    // Every word index the kernels compute must fit u32, and no element
    // position may reach u32::MAX (the kernels' "no element" marker and the
    // status words' "no error").
    let words = |desc: &TensorDesc, count: u64| {
        count
            .checked_mul(desc.dtype.size_bytes() as u64)
            .map(|b| b.div_ceil(4))
            .filter(|&w| w <= u64::from(u32::MAX) && count < u64::from(u32::MAX))
            .ok_or_else(|| OpError::TooLarge {
                what: format!("a {} tensor of {count} elements", desc.dtype),
                limit: "u32 word addressing of the scatter kernels".into(),
            })
    };
    words(indices, g.update_count)?;
    words(updates, g.update_count)?;
    words(output, g.output_count)?;
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
            buffers: vec![
                BufferRef::Params,
                BufferRef::Input(indices_slot),
                BufferRef::Input(updates_slot),
                BufferRef::Status,
                BufferRef::Output(output_slot),
            ],
            params,
            workgroups: (g.columns() / columns_per_thread).div_ceil(u64::from(WORKGROUP_SIZE)),
        });
        return Ok(plan);
    }
    plan.scratch_bytes.push(g.output_count * 4);
    let workgroups = g.update_count.div_ceil(u64::from(WORKGROUP_SIZE));
    plan.passes.push(Pass {
        kernel: kernels.winner,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(indices_slot),
            BufferRef::Scratch(0),
            BufferRef::Status,
        ],
        params: params.clone(),
        workgroups,
    });
    plan.passes.push(Pass {
        kernel: kernels.write,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(indices_slot),
            BufferRef::Input(updates_slot),
            BufferRef::Scratch(0),
            BufferRef::Status,
            BufferRef::Output(output_slot),
        ],
        params,
        workgroups,
    });
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Element;

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
            check_call(i, x, u, o, axis).is_ok()
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
}
