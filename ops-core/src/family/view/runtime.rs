//! The run-time half of the `view` family: data movement whose source is an affine function of
//! the output coordinates (ONNX Transpose, Expand, Tile, Reshape, Squeeze,
//! Unsqueeze, Flatten, Identity).
//!
//! ```text
//! output[c_0, ..., c_(R-1)] = input.flat[offset + sum_d (c_d mod wrap_d) * stride_d]
//! ```
//!
//! The spec states `offset`, one `stride` per output dimension (0 repeats
//! the input, as Expand does; negative walks backwards) and, optionally, a
//! `wrap` per output dimension (0: none; Tile wraps each output coordinate
//! at the input's size). A transpose permutes the input's row-major
//! strides; a reshape is the output's own row-major strides. Elements move
//! as raw bits.
//!
//! The CPU reference and the plan both check that every source offset the
//! output reaches lies within the input (the spec's rules should make it
//! so; the check keeps a wrong rule from reading out of bounds), with
//! [`OpError::InvalidArgument`] otherwise.
//!
//! # GPU algorithm
//!
//! One pass, in one of two [`Schedule`]s, each its own kernel (the walk's
//! having no workgroup memory or barrier, which cost even unused on some
//! adapters):
//!
//! - [`Schedule::Walk`] (any view): a work item per output element (32-
//!   and 64-bit data) or per output `u32` word (8- and 16-bit data,
//!   assembled in a register), [`ELEMENTS_PER_THREAD`] items a thread;
//!   each walks its coordinates in the merged dimensions
//!   ([`View::merged`]) from the last, dividing by the sizes and wraps
//!   with the plan's [`Divisor`]s (no division instruction), and adds
//!   their terms with wrapping `u32` arithmetic (exact, the sum being
//!   checked to fit).
//! - [`Schedule::Tiled`] (a batched transpose, [`TiledShape`]): the
//!   merged output is `[B, R, C]` (or `[R, C]`) whose rows step through
//!   the input by 1 and whose columns by a row length `L`, so reading it
//!   in output order strides through memory. A workgroup takes one
//!   [`TILE`] x [`TILE`] tile of one matrix (batch and tile from its
//!   workgroup id: two divisions a workgroup, none an element): its
//!   threads read the tile along the input's contiguous rows into
//!   workgroup memory (a `u32` or `vec2<u32>` per element, rows padded
//!   by one element so that a column spreads over the banks), wait at a
//!   barrier, and write it along the output's contiguous rows. Elements
//!   outside `R` or `C` (ragged edge tiles) are neither read nor
//!   written. 8- and 16-bit data move whole words: a reading thread
//!   unpacks one input word into 4 or 2 tile elements, a writing thread
//!   packs one output word from 4 or 2; this needs `C`, `L`, the batch
//!   stride and the offset to be whole words (else the walk runs).
//!   The planner picks the tiled schedule where both `R` and `C` are at
//!   least [`TILED_MIN_EXTENT`].
//! - [`Schedule::Blocks`] (a batched transpose whose rows, columns, steps
//!   and offset are whole `vec4<u32>`s, [`TiledShape::blocks`]): a thread
//!   moves one block of `S` x `S` elements (`S` = [`block_side`], the
//!   elements a `vec4<u32>` holds): `S` vector loads along the input's
//!   rows, a transpose in registers, `S` vector stores along the output's
//!   rows; no workgroup memory, no barrier. A workgroup takes
//!   [`BLOCK_GRID`] x [`BLOCK_GRID`] blocks of one matrix, its matrix and
//!   tile from the workgroup id. A CPU adapter, whose caches do what a
//!   tile in workgroup memory does on a GPU, gets this schedule wherever
//!   it applies ([`schedule_for`]).

use crate::family::divisor::Divisor;
use crate::{
    BufferRef, DeviceClass, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, TensorDesc,
};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// Most output dimensions the kernels walk.
pub const MAX_DIMS: usize = 8;

/// The side of the square tile of [`Schedule::Tiled`], in elements: a
/// tile is `TILE * TILE / WORKGROUP_SIZE` elements a thread (4), and its
/// workgroup memory `TILE * (TILE + 1)` elements (8448 bytes for 64-bit
/// data, 4224 for the rest, stored one element a word).
pub const TILE: u32 = 32;

/// The least output rows and columns for which the planner picks
/// [`Schedule::Tiled`]: half a tile, so that at least a quarter of a
/// tile's threads move data. Below it the walk's strided reads touch few
/// input rows at a time.
pub const TILED_MIN_EXTENT: u32 = TILE / 2;

/// Blocks across (and down) the tile a workgroup of [`Schedule::Blocks`]
/// moves: `BLOCK_GRID * BLOCK_GRID` = [`WORKGROUP_SIZE`] blocks, one a
/// thread.
pub const BLOCK_GRID: u32 = 16;

/// The side of a block of [`Schedule::Blocks`] in elements of `data`: the
/// elements a `vec4<u32>` holds (2, 4, 8 or 16).
pub fn block_side(data: crate::DataType) -> u32 {
    16 / data.size_bytes() as u32
}

/// How the threads of a view pass find their elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Each work item walks its merged coordinates (any view).
    Walk,
    /// A workgroup transposes a tile through workgroup memory (a batched
    /// transpose, [`TiledShape`]).
    Tiled,
    /// A thread transposes a block of vectors in registers (a batched
    /// transpose of whole vectors, [`TiledShape::blocks`]).
    Blocks,
}

impl Schedule {
    /// Every schedule, the walk (which runs any view) last.
    pub const ALL: [Schedule; 3] = [Schedule::Blocks, Schedule::Tiled, Schedule::Walk];

    /// The schedule's name among a call's plan variants.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Walk => "view",
            Schedule::Tiled => "view-tiled",
            Schedule::Blocks => "view-blocks",
        }
    }
}

/// A merged view that is a batched transpose: output `[matrices, rows,
/// columns]` where output element `(b, r, c)` is input element `offset +
/// b * matrix_stride + r + c * row_length`, no wraps. For 8- and 16-bit
/// data, `columns`, `row_length`, `matrix_stride` and the offset are whole
/// words, so that the tiles read and write whole words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledShape {
    /// Matrices (1 for a two-dimensional view).
    pub matrices: u32,
    /// Output rows of a matrix (the input's contiguous dimension).
    pub rows: u32,
    /// Output columns of a matrix.
    pub columns: u32,
    /// The input step between matrices (0 for one matrix).
    pub matrix_stride: i64,
    /// The input step between output columns.
    pub row_length: i64,
}

impl TiledShape {
    /// The batched transpose that `merged` ([`View::merged`]) of `data`
    /// is, if it is one the tiled kernel can move.
    pub fn of(merged: &View, data: crate::DataType) -> Option<TiledShape> {
        if merged.wraps.iter().any(|&w| w != 0) {
            return None;
        }
        let (matrices, matrix_stride, r, c) = match merged.sizes.len() {
            2 => (1, 0, 0, 1),
            3 => (merged.sizes[0], merged.strides[0], 1, 2),
            _ => return None,
        };
        let shape = TiledShape {
            matrices,
            rows: merged.sizes[r],
            columns: merged.sizes[c],
            matrix_stride,
            row_length: merged.strides[c],
        };
        if merged.strides[r] != 1 {
            return None;
        }
        let lanes = i64::from(lanes(data));
        let whole = |x: i64| x.rem_euclid(lanes) == 0;
        let words = whole(i64::from(shape.columns))
            && whole(shape.row_length)
            && whole(shape.matrix_stride)
            && whole(merged.offset);
        words.then_some(shape)
    }

    /// Tiles of `side` across a matrix's columns.
    pub fn column_tiles(&self, side: u32) -> u32 {
        self.columns.div_ceil(side)
    }

    /// Tiles of `side` of one matrix.
    pub fn matrix_tiles(&self, side: u32) -> u64 {
        u64::from(self.rows.div_ceil(side)) * u64::from(self.column_tiles(side))
    }

    /// This transpose, at `offset`, for [`Schedule::Blocks`]: where its
    /// rows, columns, steps and offset are whole blocks of `data`
    /// ([`block_side`]), so that every block is `S` whole vectors of the
    /// input and of the output.
    pub fn blocks(self, offset: i64, data: crate::DataType) -> Option<TiledShape> {
        let side = i64::from(block_side(data));
        let whole = |x: i64| x.rem_euclid(side) == 0;
        let fits = whole(i64::from(self.rows))
            && whole(i64::from(self.columns))
            && whole(self.row_length)
            && whole(self.matrix_stride)
            && whole(offset);
        fits.then_some(self)
    }
}

/// Elements of `data` in a `u32` word (1 for 32- and 64-bit data).
fn lanes(data: crate::DataType) -> u32 {
    4 / data.size_bytes().min(4) as u32
}

/// The schedule the planner picks for a merged view on a device of
/// `class`: on a CPU adapter ([`DeviceClass::Software`]),
/// [`Schedule::Blocks`] for a batched transpose of whole blocks
/// ([`TiledShape::blocks`]); else [`Schedule::Tiled`] for a batched
/// transpose ([`TiledShape::of`]) of at least [`TILED_MIN_EXTENT`] rows
/// and columns; else [`Schedule::Walk`].
pub fn schedule_for(merged: &View, data: crate::DataType, class: DeviceClass) -> Schedule {
    let tiled = TiledShape::of(merged, data);
    match tiled {
        Some(t) if class == DeviceClass::Software && t.blocks(merged.offset, data).is_some() => {
            Schedule::Blocks
        }
        Some(t) if t.rows.min(t.columns) >= TILED_MIN_EXTENT => Schedule::Tiled,
        _ => Schedule::Walk,
    }
}

super::super::param_words! {
    /// The parameter words of both kernels (the uniform `params` block):
    ///
    /// | words | meaning |
    /// | --- | --- |
    /// | 0 | output element count |
    /// | 1 | work items |
    /// | 2 | the offset (two's complement) |
    /// | 3 | merged dimensions (at least 1, [`View::merged`]) |
    /// | 8..16 | merged output sizes (unused slots 1) |
    /// | 16..24 | strides in input elements (two's complement; unused slots 0) |
    /// | 24..32 | wraps (0: none) |
    /// | 32..40, 40..48 | each merged size's [`Divisor`] (multiplier, shifts) |
    /// | 48..56, 56..64 | each wrap's [`Divisor`] (multiplier, shifts) |
    /// | 64 | [`Schedule::Tiled`], [`Schedule::Blocks`]: tiles across a matrix's columns |
    /// | 65 | tiles of a matrix |
    /// | 66 | matrices |
    /// | 67 | rows of a matrix |
    /// | 68 | columns of a matrix |
    /// | 69 | the input step between matrices (two's complement) |
    /// | 70 | the input step between columns (two's complement) |
    pub mod params [72] {
        /// Output element count.
        OUTPUT_COUNT = 0,
        /// Work items.
        WORK_COUNT = 1,
        /// The offset.
        OFFSET = 2,
        /// Merged dimensions.
        RANK = 3,
        /// First output size.
        SIZES = 8,
        /// First stride.
        STRIDES = 16,
        /// First wrap.
        WRAPS = 24,
        /// First size divisor's multiplier.
        SIZE_MAGIC = 32,
        /// First size divisor's shifts.
        SIZE_SHIFTS = 40,
        /// First wrap divisor's multiplier.
        WRAP_MAGIC = 48,
        /// First wrap divisor's shifts.
        WRAP_SHIFTS = 56,
        /// Tiles across a matrix's columns ([`super::super::Schedule::Tiled`]).
        COLUMN_TILES = 64,
        /// Tiles of a matrix.
        MATRIX_TILES = 65,
        /// Matrices.
        MATRICES = 66,
        /// Rows of a matrix.
        ROWS = 67,
        /// Columns of a matrix.
        COLUMNS = 68,
        /// The input step between matrices.
        MATRIX_STRIDE = 69,
        /// The input step between columns.
        ROW_LENGTH = 70,
    }
}

/// The kernel bindings: params (uniform), input, output.
pub const BINDINGS: &[crate::Access] = &[
    crate::Access::Uniform,
    crate::Access::Read,
    crate::Access::ReadWrite,
];

/// An affine view of the input: where each output element comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The output's sizes.
    pub sizes: Vec<u32>,
    /// The source offset of the output's first element.
    pub offset: i64,
    /// The source step of each output dimension.
    pub strides: Vec<i64>,
    /// The period of each output coordinate (0: none).
    pub wraps: Vec<u64>,
}

fn invalid(m: String) -> OpError {
    OpError::InvalidArgument(m)
}

impl View {
    /// The view of an output of `sizes`, checked against an input of
    /// `input_count` elements: one stride (and wrap, when given) per output
    /// dimension, every reachable source offset in `[0, input_count)`.
    pub fn new(
        sizes: &[u32],
        offset: i64,
        strides: &[i64],
        wraps: Option<&[i64]>,
        input_count: u64,
    ) -> Result<View, OpError> {
        if strides.len() != sizes.len() {
            return Err(invalid(format!(
                "a view of {} output dimensions needs as many strides, got {strides:?}",
                sizes.len()
            )));
        }
        let wraps: Vec<u64> = match wraps {
            None => vec![0; sizes.len()],
            Some(w) if w.len() == sizes.len() && w.iter().all(|&x| x >= 0) => {
                w.iter().map(|&x| x as u64).collect()
            }
            Some(w) => {
                return Err(invalid(format!(
                    "a view of {} output dimensions needs as many non-negative wraps, got {w:?}",
                    sizes.len()
                )))
            }
        };
        let view = View {
            sizes: sizes.to_vec(),
            offset,
            strides: strides.to_vec(),
            wraps,
        };
        if crate::element_count(sizes) != Some(0) {
            // The least and greatest offset the output reaches.
            let (mut lo, mut hi) = (i128::from(offset), i128::from(offset));
            for d in 0..sizes.len() {
                let mut reach = u64::from(sizes[d]) - 1;
                if view.wraps[d] > 0 {
                    reach = reach.min(view.wraps[d] - 1);
                }
                let span = i128::from(reach) * i128::from(strides[d]);
                if span < 0 {
                    lo += span;
                } else {
                    hi += span;
                }
            }
            if lo < 0 || hi >= i128::from(input_count) {
                return Err(invalid(format!(
                    "the view reads input elements {lo} to {hi}, outside the input's {input_count}"
                )));
            }
        }
        Ok(view)
    }

    /// The same view over the fewest dimensions: dimensions of size 1 are
    /// dropped, a wrap at or past its dimension's size is none, and a
    /// dimension joins the one before it where neither wraps and the
    /// outer stride is the inner's times the inner size (a contiguous
    /// run of the source). A view of one element or none keeps one
    /// dimension. The GPU walks these, so that a reshape or a copy is one
    /// dimension with no division per element.
    pub fn merged(&self) -> View {
        let mut out = View {
            sizes: Vec::with_capacity(self.sizes.len()),
            offset: self.offset,
            strides: Vec::with_capacity(self.sizes.len()),
            wraps: Vec::with_capacity(self.sizes.len()),
        };
        for d in 0..self.sizes.len() {
            let size = self.sizes[d];
            if size == 1 {
                continue;
            }
            let wrap = if self.wraps[d] >= u64::from(size) {
                0
            } else {
                self.wraps[d]
            };
            let stride = self.strides[d];
            let joins = wrap == 0
                && out.wraps.last() == Some(&0)
                && out.strides.last().copied() == i64::from(size).checked_mul(stride);
            if joins {
                let last = out.sizes.len() - 1;
                // The product is an output extent: it fits u32 (checked
                // against the element count by the plan).
                out.sizes[last] = out.sizes[last].saturating_mul(size);
                out.strides[last] = stride;
            } else {
                out.sizes.push(size);
                out.strides.push(stride);
                out.wraps.push(wrap);
            }
        }
        if out.sizes.is_empty() {
            out.sizes.push(1);
            out.strides.push(0);
            out.wraps.push(0);
        }
        out
    }

    /// The source offset of output element `o`.
    pub fn source(&self, o: u64) -> u64 {
        let mut rest = o;
        let mut offset = i128::from(self.offset);
        for d in (0..self.sizes.len()).rev() {
            let size = u64::from(self.sizes[d]).max(1);
            let mut c = rest % size;
            rest /= size;
            if self.wraps[d] > 0 {
                c %= self.wraps[d];
            }
            offset += i128::from(c) * i128::from(self.strides[d]);
        }
        offset as u64
    }
}

fn check_call(
    input: &TensorDesc,
    output: &TensorDesc,
    offset: i64,
    strides: &[i64],
    wraps: Option<&[i64]>,
) -> Result<View, OpError> {
    if output.dtype != input.dtype {
        return Err(invalid(format!(
            "the output data type {} must be the input's {}",
            output.dtype, input.dtype
        )));
    }
    let input_count = input.element_count().unwrap_or(u64::MAX);
    let view = View::new(&output.sizes, offset, strides, wraps, input_count)?;
    let output_count = output.element_count().unwrap_or(u64::MAX);
    if output_count > u64::from(u32::MAX) || input_count > u64::from(u32::MAX) {
        return Err(OpError::TooLarge {
            what: format!("a view of {output_count} elements from {input_count}"),
            limit: "u32 element addressing (as on the GPU)".into(),
        });
    }
    Ok(view)
}

/// The CPU reference: the output described by `output` (the input's data
/// type), each element the input element [`View::source`] names, as raw
/// bytes.
pub fn view_cpu(
    input: &HostTensor,
    output: &TensorDesc,
    offset: i64,
    strides: &[i64],
    wraps: Option<&[i64]>,
) -> Result<HostTensor, OpError> {
    let view = check_call(input.desc(), output, offset, strides, wraps)?;
    let width = input.dtype().size_bytes();
    let count = output.element_count().unwrap_or(0);
    let mut bytes = Vec::with_capacity(count as usize * width);
    for o in 0..count {
        let s = view.source(o) as usize * width;
        bytes.extend_from_slice(&input.bytes()[s..s + width]);
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// The kernels of each schedule, for one data type: the generated kernels
/// (workgroup size [`WORKGROUP_SIZE`]), `None` where there is none.
pub type KernelFor<'a> = &'a dyn Fn(Schedule) -> Option<&'static Kernel>;

/// One view to plan: what [`view_plan`] and [`view_plans`] take.
pub struct ViewCall<'a> {
    /// The input tensor.
    pub input: &'a TensorDesc,
    /// The plan's input slot of `input`.
    pub input_slot: usize,
    /// The output tensor (the input's data type).
    pub output: &'a TensorDesc,
    /// The plan's output slot of `output`.
    pub output_slot: usize,
    /// The source offset of the first output element.
    pub offset: i64,
    /// The source step of each output dimension.
    pub strides: &'a [i64],
    /// The optional wrap of each output dimension.
    pub wraps: Option<&'a [i64]>,
}

/// The GPU plan on a device of `class`: one pass, in the schedule
/// [`schedule_for`] picks (the walk where `kernels` has not that
/// schedule's kernel), of that schedule's kernel
/// (no walk kernel fails with [`OpError::Unsupported`]) binding `[Params,
/// Input(input_slot), Output(output_slot)]`; the output (`output_slot +
/// 1` outputs, [`OutputInit::Overwritten`]) is stored whole. An empty
/// output has no pass.
pub fn view_plan(
    call: &ViewCall<'_>,
    class: DeviceClass,
    kernels: KernelFor<'_>,
) -> Result<GpuPlan, OpError> {
    view_plan_with(call, kernels, Err(class)).map(|(plan, _)| plan)
}

/// Every schedule the call can run in, by name ([`Schedule::name`]): the
/// planner's first (for the default device class), then each other of
/// [`Schedule::ALL`] the view admits, the walk (it runs any view) last.
/// Arguments as [`view_plan`].
pub fn view_plans(
    call: &ViewCall<'_>,
    kernels: KernelFor<'_>,
) -> Result<Vec<(String, GpuPlan)>, OpError> {
    let (chosen, picked) = view_plan_with(call, kernels, Err(DeviceClass::default()))?;
    let mut out = vec![(picked.name().to_string(), chosen)];
    for schedule in Schedule::ALL {
        if schedule == picked {
            continue;
        }
        let (plan, ran) = view_plan_with(call, kernels, Ok(schedule))?;
        if ran == schedule {
            out.push((schedule.name().to_string(), plan));
        }
    }
    Ok(out)
}

/// [`view_plan`] in `schedule` (`Err(class)`: the planner's choice for
/// `class`; a schedule the view does not admit, or without its kernel, is
/// the walk), with the schedule it runs in (the walk for an empty
/// output).
fn view_plan_with(
    call: &ViewCall<'_>,
    kernels: KernelFor<'_>,
    schedule: Result<Schedule, DeviceClass>,
) -> Result<(GpuPlan, Schedule), OpError> {
    let (input, output) = (call.input, call.output);
    let view = check_call(input, output, call.offset, call.strides, call.wraps)?;
    let walk = kernels(Schedule::Walk)
        .ok_or_else(|| OpError::Unsupported(format!("no view kernel for {} data", input.dtype)))?;
    let view = view.merged();
    if view.sizes.len() > MAX_DIMS {
        return Err(OpError::TooLarge {
            what: format!("a view of {} dimensions", view.sizes.len()),
            limit: format!("{MAX_DIMS} dimensions"),
        });
    }
    let count = output.element_count().unwrap_or(0);
    let work = crate::family::word_items(count, input.dtype);
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; call.output_slot + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    if work == 0 {
        return Ok((plan, Schedule::Walk));
    }
    let mut p = vec![0u32; params::LEN];
    p[params::OUTPUT_COUNT] = count as u32;
    p[params::WORK_COUNT] = work as u32;
    p[params::OFFSET] = view.offset as u32;
    p[params::RANK] = view.sizes.len() as u32;
    for d in 0..MAX_DIMS {
        p[params::SIZES + d] = view.sizes.get(d).copied().unwrap_or(1);
        // Two's complement: the kernel's wrapping sum is exact, the total
        // having been checked to lie within the input.
        p[params::STRIDES + d] = view.strides.get(d).copied().unwrap_or(0) as u32;
        p[params::WRAPS + d] = view
            .wraps
            .get(d)
            .copied()
            .unwrap_or(0)
            .min(u64::from(u32::MAX)) as u32;
        let size = Divisor::new(p[params::SIZES + d]);
        let wrap = Divisor::new(p[params::WRAPS + d]);
        p[params::SIZE_MAGIC + d] = size.magic;
        p[params::SIZE_SHIFTS + d] = size.shifts;
        p[params::WRAP_MAGIC + d] = wrap.magic;
        p[params::WRAP_SHIFTS + d] = wrap.shifts;
    }
    let chosen = schedule.unwrap_or_else(|class| schedule_for(&view, input.dtype, class));
    let shape = TiledShape::of(&view, input.dtype);
    // The schedule's tile side (elements) and kernel, where the view
    // admits it.
    let tiled = match chosen {
        Schedule::Walk => None,
        Schedule::Tiled => shape.map(|t| (t, TILE)),
        Schedule::Blocks => shape
            .and_then(|t| t.blocks(view.offset, input.dtype))
            .map(|t| (t, BLOCK_GRID * block_side(input.dtype))),
    }
    .zip(kernels(chosen));
    let (kernel, workgroups) = match tiled {
        None => (
            walk,
            work.div_ceil(ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE)),
        ),
        Some(((t, side), kernel)) => {
            // Each count is at most the output's elements (a tile holds
            // at least one), which the check bounded by u32::MAX; the
            // steps are two's complement, as the walk's.
            p[params::COLUMN_TILES] = t.column_tiles(side);
            p[params::MATRIX_TILES] = t.matrix_tiles(side) as u32;
            p[params::MATRICES] = t.matrices;
            p[params::ROWS] = t.rows;
            p[params::COLUMNS] = t.columns;
            p[params::MATRIX_STRIDE] = t.matrix_stride as u32;
            p[params::ROW_LENGTH] = t.row_length as u32;
            (kernel, u64::from(t.matrices) * t.matrix_tiles(side))
        }
    };
    plan.passes.push(Pass {
        kernel,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(call.input_slot),
            BufferRef::Output(call.output_slot),
        ],
        params: p,
        workgroups,
    });
    let ran = match tiled {
        Some(_) => chosen,
        None => Schedule::Walk,
    };
    Ok((plan, ran))
}

/// The views of a split: output `k` is the input's slab along `axis` that
/// starts where output `k - 1`'s ends, each an affine view with the
/// input's row-major strides (ONNX Split, DirectML SPLIT).
fn split_views(
    input: &TensorDesc,
    outputs: &[&TensorDesc],
    axis: usize,
) -> Result<Vec<(i64, Vec<i64>)>, OpError> {
    let strides: Vec<i64> = input
        .packed_strides()
        .into_iter()
        .map(|s| s as i64)
        .collect();
    let Some(&step) = strides.get(axis) else {
        return Err(invalid(format!(
            "axis {axis} is outside the input's {} dimensions",
            input.sizes.len()
        )));
    };
    let mut start = 0i64;
    let mut views = Vec::with_capacity(outputs.len());
    for o in outputs {
        let extent = o.sizes.get(axis).copied().unwrap_or(0);
        views.push((start * step, strides.clone()));
        start += i64::from(extent);
    }
    Ok(views)
}

/// The CPU reference of a split: each of `outputs` the input's slab along
/// `axis` after the previous output's ([`view_cpu`] of each).
pub fn split_cpu(
    input: &HostTensor,
    outputs: &[&TensorDesc],
    axis: usize,
) -> Result<Vec<HostTensor>, OpError> {
    split_views(input.desc(), outputs, axis)?
        .into_iter()
        .zip(outputs)
        .map(|((offset, strides), o)| view_cpu(input, o, offset, &strides, None))
        .collect()
}

/// The GPU plan of a split: a [`view_plan`] pass per output (output slot
/// `k` for `outputs[k]`), each checked to read within the input.
pub fn split_plan(
    input: &TensorDesc,
    input_slot: usize,
    outputs: &[&TensorDesc],
    axis: usize,
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; outputs.len()],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    for (k, ((offset, strides), o)) in split_views(input, outputs, axis)?
        .into_iter()
        .zip(outputs)
        .enumerate()
    {
        let walk = |s| (s == Schedule::Walk).then_some(kernel).flatten();
        let class = DeviceClass::default();
        let call = ViewCall {
            input,
            input_slot,
            output: o,
            output_slot: k,
            offset,
            strides: &strides,
            wraps: None,
        };
        let one = view_plan(&call, class, &walk)?;
        plan.passes.extend(one.passes);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DataType;

    #[test]
    fn merged_views_read_the_same_elements() {
        // (sizes, offset, strides, wraps, merged sizes)
        type Case<'a> = (&'a [u32], i64, &'a [i64], &'a [i64], &'a [u32]);
        let cases: &[Case] = &[
            // A reshape: one dimension.
            (&[2, 3, 4], 0, &[12, 4, 1], &[0, 0, 0], &[24]),
            // A transpose of the last two axes: nothing joins.
            (&[2, 4, 3], 0, &[12, 1, 4], &[0, 0, 0], &[2, 4, 3]),
            // NCHW to NHWC: H and W join.
            (
                &[2, 3, 4, 5],
                0,
                &[60, 4, 1, 12],
                &[0, 0, 0, 0],
                &[2, 12, 5],
            ),
            // Size-1 dimensions drop; broadcast dimensions join.
            (
                &[1, 3, 1, 4, 5],
                7,
                &[99, 0, 5, 0, 1],
                &[0, 0, 0, 0, 0],
                &[12, 5],
            ),
            // A Tile: a wrapped dimension stays; a wrap at its size is none.
            (&[2, 6, 4], 0, &[12, 4, 1], &[0, 3, 4], &[2, 6, 4]),
            (&[3, 4], 0, &[4, 1], &[3, 0], &[12]),
            // Backwards.
            (&[3, 4], 11, &[-4, -1], &[0, 0], &[12]),
            // One element, and none.
            (&[1, 1], 5, &[3, 2], &[0, 0], &[1]),
            (&[3, 0, 2], 0, &[0, 2, 1], &[0, 0, 0], &[0]),
        ];
        for &(sizes, offset, strides, wraps, want) in cases {
            let view = View::new(sizes, offset, strides, Some(wraps), 1 << 20).unwrap();
            let merged = view.merged();
            assert_eq!(merged.sizes, want, "{sizes:?} {strides:?} {wraps:?}");
            let count: u64 = sizes.iter().map(|&s| u64::from(s)).product();
            for o in 0..count {
                assert_eq!(
                    merged.source(o),
                    view.source(o),
                    "{sizes:?} {strides:?} element {o}"
                );
            }
        }
    }

    #[test]
    fn tiles_batched_transposes_of_whole_words() {
        let tiled = |sizes: &[u32], offset, strides: &[i64], wraps: &[i64], data| {
            let view = View::new(sizes, offset, strides, Some(wraps), 1 << 24).unwrap();
            TiledShape::of(&view.merged(), data)
        };
        let f32 = DataType::Float32;
        // [2, 40, 48] transposed: 2 matrices of 48 x 40 (rows step 1).
        assert_eq!(
            tiled(&[2, 48, 40], 0, &[1920, 1, 48], &[0, 0, 0], f32),
            Some(TiledShape {
                matrices: 2,
                rows: 48,
                columns: 40,
                matrix_stride: 1920,
                row_length: 48,
            })
        );
        // One matrix: [R, C]; NCHW [2, 3, 4, 5] to NHWC merges to [N, HW, C].
        assert_eq!(
            tiled(&[40, 48], 0, &[1, 40], &[0, 0], f32).map(|t| t.matrices),
            Some(1)
        );
        assert_eq!(
            tiled(&[2, 4, 5, 3], 0, &[60, 5, 1, 20], &[0; 4], f32).map(|t| (
                t.matrices,
                t.rows,
                t.columns,
                t.row_length
            )),
            Some((2, 20, 3, 20))
        );
        // Not transposes: a copy, a wrap, four dimensions, a column step.
        assert_eq!(tiled(&[40, 48], 0, &[48, 1], &[0, 0], f32), None);
        assert_eq!(tiled(&[40, 48], 0, &[1, 40], &[20, 0], f32), None);
        assert_eq!(tiled(&[2, 2, 3, 4], 0, &[7, 1, 100, 3], &[0; 4], f32), None);
        assert_eq!(tiled(&[40, 48], 0, &[2, 80], &[0, 0], f32), None);
        // 8- and 16-bit data: columns, row length, batch step and offset
        // in whole words.
        let (f16, u8) = (DataType::Float16, DataType::Uint8);
        assert!(tiled(&[3, 6, 4], 0, &[24, 1, 6], &[0; 3], f16).is_some());
        assert!(tiled(&[3, 6, 5], 0, &[30, 1, 6], &[0; 3], f16).is_none());
        assert!(tiled(&[3, 5, 4], 0, &[20, 1, 5], &[0; 3], f16).is_none());
        assert!(tiled(&[6, 4], 2, &[1, 6], &[0; 2], f16).is_some());
        assert!(tiled(&[6, 4], 1, &[1, 6], &[0; 2], f16).is_none());
        assert!(tiled(&[3, 6, 4], 0, &[24, 1, 6], &[0; 3], u8).is_none());
        assert!(tiled(&[3, 8, 4], 0, &[32, 1, 8], &[0; 3], u8).is_some());
        assert!(tiled(&[3, 8, 4], 2, &[32, 1, 8], &[0; 3], u8).is_none());
        // The planner's threshold, on rows and on columns.
        let schedule = |r: u32, c: u32| {
            let view = View::new(&[r, c], 0, &[1, i64::from(r)], None, 1 << 24).unwrap();
            schedule_for(&view.merged(), f32, DeviceClass::Hardware)
        };
        let m = TILED_MIN_EXTENT;
        assert_eq!(schedule(m, m), Schedule::Tiled);
        assert_eq!(schedule(m - 1, 1000), Schedule::Walk);
        assert_eq!(schedule(1000, m - 1), Schedule::Walk);
        // A CPU adapter moves whole blocks in registers: rows, columns,
        // steps and offset whole vectors.
        let on_cpu = |sizes: &[u32], offset: i64, strides: &[i64], data: DataType| {
            let view = View::new(sizes, offset, strides, None, 1 << 24).unwrap();
            schedule_for(&view.merged(), data, DeviceClass::Software)
        };
        assert_eq!(on_cpu(&[4, 4], 0, &[1, 4], f32), Schedule::Blocks);
        assert_eq!(on_cpu(&[3, 8, 4], 0, &[32, 1, 8], f32), Schedule::Blocks);
        assert_eq!(on_cpu(&[6, 4], 0, &[1, 6], f32), Schedule::Walk);
        assert_eq!(on_cpu(&[4, 6], 0, &[1, 4], f32), Schedule::Walk);
        assert_eq!(on_cpu(&[4, 4], 2, &[1, 4], f32), Schedule::Walk);
        assert_eq!(on_cpu(&[40, 36], 0, &[1, 40], f32), Schedule::Blocks);
        assert_eq!(on_cpu(&[40, 36], 0, &[1, 40], f16), Schedule::Tiled);
        assert_eq!(on_cpu(&[16, 16], 0, &[1, 16], u8), Schedule::Blocks);
        assert_eq!(
            on_cpu(&[2, 2], 0, &[1, 2], DataType::Int64),
            Schedule::Blocks
        );
    }

    #[test]
    fn transposes_repeats_and_wraps() {
        let x = HostTensor::from_slice([2, 3], &[1u16, 2, 3, 4, 5, 6]).unwrap();
        let t = |sizes: [u32; 2], offset, strides: [i64; 2], wraps: Option<&[i64]>| {
            view_cpu(
                &x,
                &TensorDesc::new(DataType::Uint16, sizes),
                offset,
                &strides,
                wraps,
            )
            .map(|o| o.to_vec::<u16>().unwrap())
        };
        // Transpose: [3, 2] with the input's strides swapped.
        assert_eq!(t([3, 2], 0, [1, 3], None).unwrap(), [1, 4, 2, 5, 3, 6]);
        // Row 1 repeated (stride 0), columns backwards.
        assert_eq!(t([2, 3], 5, [0, -1], None).unwrap(), [6, 5, 4, 6, 5, 4]);
        // Tile twice along the columns: wrap at 3.
        assert_eq!(
            view_cpu(
                &x,
                &TensorDesc::new(DataType::Uint16, [2, 6]),
                0,
                &[3, 1],
                Some(&[0, 3])
            )
            .unwrap()
            .to_vec::<u16>()
            .unwrap(),
            [1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]
        );
        // A split into [2, 1] and [2, 2] columns.
        let parts = split_cpu(
            &x,
            &[
                &TensorDesc::new(DataType::Uint16, [2, 1]),
                &TensorDesc::new(DataType::Uint16, [2, 2]),
            ],
            1,
        )
        .unwrap();
        assert_eq!(parts[0].to_vec::<u16>().unwrap(), [1, 4]);
        assert_eq!(parts[1].to_vec::<u16>().unwrap(), [2, 3, 5, 6]);
        // A view reaching past the input is refused.
        assert!(t([3, 2], 1, [1, 3], None).is_err());
        assert!(t([2, 3], 0, [0, -1], None).is_err());
    }
}
