//! The `scatter_nd` pattern: slices of updates combined into a copy of the
//! input at positions index tuples give (ONNX ScatterND with `reduction`
//! none, add, mul, min or max; DirectML SCATTER_ND).
//!
//! ```text
//! output = input
//! output[indices[t], ...] = combine(output[indices[t], ...], updates[t, ...])   // t in row-major order
//! ```
//!
//! The indices' last meaningful dimension holds tuples of `q` index values,
//! each addressing the first `q` meaningful input dimensions; the updates
//! hold, per tuple, the slice of the input dimensions after those. The
//! shapes are [`GatherNdGeometry`]'s (a gather's output is a scatter's
//! updates), without batch dimensions. `combine` is the spec's expression
//! of `a` (the element so far) and `b` (the update). Index values of signed
//! types may be negative, counting from the end of their dimension; any
//! other value outside the dimension is an [`OpError::IndexOutOfRange`]
//! for the lowest offending element (phrased by
//! [`crate::family::gather_nd::gather_nd_index_error`]), and nothing is written out
//! of bounds.
//!
//! # Determinism
//!
//! Tuples may name one slice several times. The CPU reference applies the
//! tuples in row-major order, each combine rounded to the element type; the
//! GPU plan does the same, so that every run gives the reference's bits:
//! one thread per slice position walks every tuple in order
//! ([`WALK_STEPS`] of them a pass, the passes in order). Nothing but the
//! lane stores of 8- and 16-bit data is atomic. The walk's parallelism is
//! the slice length: row scatters (an embedding update) run wide, element
//! scatters (slices of one element) on one thread.

use super::coordinates;
use crate::family::gather_nd::{GatherNdGeometry, GatherShape};
use crate::scalar::{Scalar, Value};
use crate::{BufferRef, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, TensorDesc};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Most tuples one pass walks: a step resolves up to [`MAX_TUPLE`] index
/// values, unrolled with branches, which lavapipe's loop guard counts
/// against fewer iterations than a plain loop's (see
/// [`crate::MAX_THREAD_STEPS`]).
pub const WALK_STEPS: u64 = crate::MAX_THREAD_STEPS / 4;

/// Largest tuple the kernels resolve.
pub const MAX_TUPLE: usize = 8;

/// The parameter words of the kernel (the uniform `params` block):
///
/// | words | meaning |
/// | --- | --- |
/// | 0 | slice length `S` |
/// | 1 | tuple size `q` |
/// | 2, 3 | the pass's tuples `[start, end)` |
/// | 8..16 | the sizes of the `q` indexed input dimensions (unused slots 1) |
/// | 16..24 | their input strides in elements (unused slots 0) |
/// | 48..64 | attribute words ([`crate::scalar::attr_words`]) |
pub mod params {
    /// Slice length.
    pub const SLICE_LEN: usize = 0;
    /// Tuple size.
    pub const TUPLE_SIZE: usize = 1;
    /// First tuple of the pass.
    pub const START: usize = 2;
    /// The tuple the pass stops before.
    pub const END: usize = 3;
    /// First indexed dimension size.
    pub const DIM_SIZES: usize = 8;
    /// First indexed dimension stride.
    pub const DIM_STRIDES: usize = 16;
    /// First attribute word.
    pub const ATTRS: usize = 48;
    /// Most attributes the words hold.
    pub const MAX_ATTRS: usize = 8;
    /// Total word count.
    pub const LEN: usize = 64;
}

/// The kernel bindings: params (uniform), indices, updates, status, output.
pub const BINDINGS: &[crate::Access] = &[
    crate::Access::Uniform,
    crate::Access::Read,
    crate::Access::Read,
    crate::Access::ReadWrite,
    crate::Access::ReadWrite,
];

fn too_large(what: &str, limit: &str) -> OpError {
    OpError::TooLarge {
        what: what.into(),
        limit: limit.into(),
    }
}

/// The shape of a scatter of index tuples: `input_rank` and `indices_rank`
/// meaningful trailing dimensions, no batches.
fn shape(input_rank: usize, indices_rank: usize) -> GatherShape {
    GatherShape::Nd {
        input_rank,
        indices_rank,
        batch_dims: 0,
    }
}

/// Checks the call and works out its geometry.
fn check_call(
    input: &TensorDesc,
    indices: &TensorDesc,
    updates: &TensorDesc,
    output: &TensorDesc,
    input_rank: usize,
    indices_rank: usize,
) -> Result<GatherNdGeometry, OpError> {
    let g = GatherNdGeometry::of(
        &input.sizes,
        &indices.sizes,
        shape(input_rank, indices_rank),
    )?;
    let update_count = crate::element_count(&updates.sizes)
        .ok_or_else(|| too_large("updates", "element count overflows u64"))?;
    if update_count != g.output_count {
        return Err(OpError::InvalidArgument(format!(
            "the updates hold {update_count} elements (sizes {:?}) but the tuples select {} (sizes {:?})",
            updates.sizes, g.output_count, g.output_sizes
        )));
    }
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
    if g.input_count > u64::from(u32::MAX) || g.output_count > u64::from(u32::MAX) {
        return Err(too_large(
            &format!(
                "a scatter of {} updates into {} elements",
                g.output_count, g.input_count
            ),
            "u32 element addressing (as on the GPU)",
        ));
    }
    Ok(g)
}

/// The CPU reference: `input`, then the slice of `updates` of each tuple of
/// `indices` combined into the slice the tuple names, tuples in row-major
/// order, with `combine` (`a` the element so far, `b` the update; `attrs`
/// the descriptor's attribute values in spec order), rounded to the element
/// type after each combine. A replacement (`combine` is `b`) moves raw
/// bits. Every index value is checked first, in row-major order: the first
/// out of range gives [`OpError::IndexOutOfRange`] naming `indices_name`.
#[allow(clippy::too_many_arguments)]
pub fn scatter_nd_cpu(
    combine: &Scalar,
    input: &HostTensor,
    indices: &HostTensor,
    updates: &HostTensor,
    output: &TensorDesc,
    input_rank: usize,
    indices_rank: usize,
    indices_name: &str,
    attrs: &[Value],
) -> Result<HostTensor, OpError> {
    let g = check_call(
        input.desc(),
        indices.desc(),
        updates.desc(),
        output,
        input_rank,
        indices_rank,
    )?;
    let index = indices.dtype();
    let q = g.tuple_size as u64;
    let value = |p: u64| -> Result<i128, OpError> {
        indices.get_int(p as usize).ok_or_else(|| {
            OpError::InvalidArgument(format!("`{indices_name}` has no index element {p}"))
        })
    };
    // Every index value first, so that an error names the lowest.
    let mut bases = Vec::with_capacity(g.tuple_count as usize);
    for t in 0..g.tuple_count {
        let mut base = 0u64;
        for j in 0..g.tuple_size {
            let p = t * q + j as u64;
            let v = value(p)?;
            let (low, high) = g.index_range(index, j);
            if v < low || v > high {
                return Err(OpError::IndexOutOfRange {
                    tensor: indices_name.to_string(),
                    position: coordinates(indices.sizes(), p),
                    value: v,
                    low,
                    high,
                });
            }
            let (size, stride) = g.dims[j];
            let i = if v < 0 { v + i128::from(size) } else { v } as u64;
            base += i * stride;
        }
        bases.push(base);
    }
    let mut out = input.bytes().to_vec();
    for (t, &base) in bases.iter().enumerate() {
        for s in 0..g.slice_len {
            let (o, u) = ((base + s) as usize, (t as u64 * g.slice_len + s) as usize);
            super::scatter_combine::combine_into(combine, &mut out, o, updates, u, attrs)?;
        }
    }
    HostTensor::from_bytes(output.clone(), out)
}

/// The GPU plan: the output starts as a copy of the input
/// ([`OutputInit::CopyOfInput`]; `output_slot + 1` outputs), then passes of
/// `kernel` (workgroup size [`WORKGROUP_SIZE`]; `None` fails with
/// [`OpError::Unsupported`]) with a thread per slice position (one, to
/// check the indices, when the slices are empty), each walking the next
/// [`WALK_STEPS`] tuples in order, binding `[Params, Input(indices_slot),
/// Input(updates_slot), Status, Output(output_slot)]`; one index check on
/// `indices_slot`. No tuples: no pass.
#[allow(clippy::too_many_arguments)]
pub fn scatter_nd_plan(
    input: &TensorDesc,
    input_slot: usize,
    indices: &TensorDesc,
    indices_slot: usize,
    updates: &TensorDesc,
    updates_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    input_rank: usize,
    indices_rank: usize,
    attrs: &[Value],
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let g = check_call(input, indices, updates, output, input_rank, indices_rank)?;
    let kernel = kernel.ok_or_else(|| {
        OpError::Unsupported(format!(
            "no scatter_nd kernel for {} data with {} indices",
            input.dtype, indices.dtype
        ))
    })?;
    if kernel.workgroup_size != WORKGROUP_SIZE {
        return Err(OpError::InvalidArgument(format!(
            "kernel `{}` has workgroup size {}, the scatter_nd plan dispatches {WORKGROUP_SIZE}",
            kernel.key, kernel.workgroup_size
        )));
    }
    let words = g
        .input_count
        .saturating_mul(input.dtype.size_bytes() as u64)
        .div_ceil(4);
    if words > u64::from(u32::MAX) || g.index_count > u64::from(u32::MAX) {
        return Err(too_large(
            &format!("a {} tensor of {} elements", input.dtype, g.input_count),
            "u32 addressing of the scatter_nd kernels",
        ));
    }
    if g.tuple_size > MAX_TUPLE || attrs.len() > params::MAX_ATTRS {
        return Err(too_large(
            &format!(
                "tuples of {} index values with {} attributes",
                g.tuple_size,
                attrs.len()
            ),
            &format!("{MAX_TUPLE} values and {} attributes", params::MAX_ATTRS),
        ));
    }
    let mut outputs = vec![OutputInit::Overwritten; output_slot + 1];
    outputs[output_slot] = OutputInit::CopyOfInput(input_slot);
    let mut plan = GpuPlan {
        outputs,
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: vec![indices_slot],
    };
    if g.tuple_count == 0 || g.index_count == 0 {
        return Ok(plan);
    }
    let word = |v: u64, what: &str| {
        u32::try_from(v).map_err(|_| too_large(what, "u32 addressing of the scatter_nd kernels"))
    };
    let mut p = vec![0u32; params::LEN];
    p[params::SLICE_LEN] = word(g.slice_len, "slice length")?;
    p[params::TUPLE_SIZE] = g.tuple_size as u32;
    for j in 0..MAX_TUPLE {
        let (size, stride) = g.dims.get(j).copied().unwrap_or((1, 0));
        p[params::DIM_SIZES + j] = word(size, "dimension size")?;
        p[params::DIM_STRIDES + j] = word(stride, "dimension stride")?;
    }
    for (k, a) in crate::scalar::attr_words(attrs).into_iter().enumerate() {
        p[params::ATTRS + k] = a;
    }
    let threads = g.slice_len.max(1);
    let mut start = 0;
    while start < g.tuple_count {
        let end = g.tuple_count.min(start + WALK_STEPS);
        let mut words = p.clone();
        words[params::START] = start as u32;
        words[params::END] = end as u32;
        plan.passes.push(Pass {
            kernel,
            buffers: vec![
                BufferRef::Params,
                BufferRef::Input(indices_slot),
                BufferRef::Input(updates_slot),
                BufferRef::Status,
                BufferRef::Output(output_slot),
            ],
            params: words,
            workgroups: threads.div_ceil(u64::from(WORKGROUP_SIZE)),
        });
        start = end;
    }
    Ok(plan)
}

/// The index check failure at element `position` of `indices` phrased as
/// [`scatter_nd_cpu`] gives it.
pub fn scatter_nd_index_error(
    input: &TensorDesc,
    indices: &HostTensor,
    input_rank: usize,
    indices_rank: usize,
    indices_name: &str,
    position: u64,
) -> OpError {
    crate::family::gather_nd::gather_nd_index_error(
        input,
        indices,
        shape(input_rank, indices_rank),
        indices_name,
        position,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::{Binary, Var};

    static A: Scalar = Scalar::Var(Var::A);
    static B: Scalar = Scalar::Var(Var::B);
    static MUL: Scalar = Scalar::Binary(Binary::Mul, &A, &B);

    #[test]
    fn tuples_combine_in_row_major_order() {
        // Rows of a [4, 2] input; the first row twice.
        let data = HostTensor::from_slice([4, 2], &[1i32, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let indices = HostTensor::from_slice([3, 1], &[0i64, -1, 0]).unwrap();
        let updates = HostTensor::from_slice([3, 2], &[10i32, 20, 30, 40, 50, 60]).unwrap();
        let run = |combine: &Scalar| {
            scatter_nd_cpu(
                combine,
                &data,
                &indices,
                &updates,
                data.desc(),
                2,
                2,
                "i",
                &[],
            )
            .unwrap()
            .to_vec::<i32>()
            .unwrap()
        };
        assert_eq!(run(&B), [50, 60, 3, 4, 5, 6, 30, 40]);
        assert_eq!(run(&MUL), [500, 2400, 3, 4, 5, 6, 210, 320]);
        // Elements by tuples of two, one out of range.
        let bad = HostTensor::from_slice([2, 2], &[0i32, 1, 4, 0]).unwrap();
        let up = HostTensor::from_slice([2], &[1i32, 1]).unwrap();
        let e = scatter_nd_cpu(&B, &data, &bad, &up, data.desc(), 2, 2, "i", &[]).unwrap_err();
        assert!(
            matches!(&e, OpError::IndexOutOfRange { position, value: 4, low: -4, high: 3, .. } if position == &[1, 0]),
            "{e}"
        );
        assert_eq!(scatter_nd_index_error(data.desc(), &bad, 2, 2, "i", 2), e);
        // Mismatched updates are an error.
        let short = HostTensor::from_slice([3], &[1i32, 2, 3]).unwrap();
        assert!(scatter_nd_cpu(&B, &data, &indices, &short, data.desc(), 2, 2, "i", &[]).is_err());
    }
}
