//! The `scatter_elements` pattern with a declared `combine`: each update is
//! combined into a copy of the input at the position its index gives along
//! the axis, in row-major order of the updates (ONNX ScatterElements with
//! `reduction` none, add, mul, min or max; the deprecated ONNX Scatter).
//!
//! ```text
//! output = input
//! output[..., indices[i, j, k] (on the axis), ...] = combine(output[...], updates[i, j, k])
//! ```
//!
//! `combine` is the spec's expression of `a` (the output element so far) and
//! `b` (the update): `b` replaces, `a + b` adds. The indices and the updates
//! share one shape, of the input's rank; off the axis each of their sizes is
//! at most the input's (ONNX's rule; DirectML asks for equal sizes, which
//! its spec states). Index values are checked as
//! [`super::scatter_elements`] checks them; an out-of-range one is an
//! [`OpError::IndexOutOfRange`] for the lowest offending element.
//!
//! # Determinism
//!
//! Updates that meet at one output element share their *column*, their
//! coordinates off the axis, and a column's updates are applied in the
//! order of their axis coordinate: row-major order. The GPU plan runs one
//! thread per column walking its updates in that order (no atomics but the
//! lane stores of 8- and 16-bit data, whose neighbouring lanes other
//! columns own), so every run gives the CPU reference's bits: the same
//! combines in the same order, each rounded to the element type, for any
//! `combine` (a float sum included).
//!
//! The cost: the walk along the axis is sequential, so a scatter whose
//! updates are few columns of long walks runs on few threads; a walk longer
//! than [`WALK_STEPS`] is split over passes, each applying the
//! next stretch of every column's updates (the passes run in order). Without a
//! `combine`, the pattern's other strategies ([`super::scatter_elements`])
//! apply.

use super::coordinates;
use crate::family::gather_elements::GatherElementsGeometry;
use crate::scalar::{Scalar, TypeEnv, Value, Var};
use crate::{
    BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, TensorDesc,
};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Most updates of a column one pass applies: half of
/// [`crate::MAX_THREAD_STEPS`], the walk's body branching (on a bad index,
/// and per lane for 8- and 16-bit data), which lavapipe's loop guard
/// allows fewer iterations of.
pub const WALK_STEPS: u64 = crate::MAX_THREAD_STEPS / 2;

/// Most dimensions the kernels walk (after merging).
pub const MAX_DIMS: usize = crate::family::gather_elements::MAX_DIMS;

/// The parameter words of the kernel (the uniform `params` block):
///
/// | words | meaning |
/// | --- | --- |
/// | 0 | columns: update positions off the axis |
/// | 1 | the walk: the updates' size on the axis |
/// | 2 | inner: update elements after the axis (the updates' sizes after it, multiplied) |
/// | 3 | dimensions walked, `D` |
/// | 4 | the axis among them |
/// | 5 | the input's size on the axis |
/// | 6, 7 | the pass's part of the walk: updates `[start, end)` of each column |
/// | 8..16 | the updates' size of each walked dimension |
/// | 16..24 | the input's stride of each walked dimension, in elements |
/// | 48..64 | attribute words ([`crate::scalar::attr_words`]) |
pub mod params {
    /// Columns.
    pub const COLUMNS: usize = 0;
    /// The walk along the axis.
    pub const WALK: usize = 1;
    /// Update elements after the axis.
    pub const INNER: usize = 2;
    /// Dimensions walked.
    pub const DIMS: usize = 3;
    /// The axis among the walked dimensions.
    pub const AXIS: usize = 4;
    /// The input's size on the axis.
    pub const AXIS_LEN: usize = 5;
    /// The first update of each column this pass applies.
    pub const WALK_START: usize = 6;
    /// The update of each column this pass stops before.
    pub const WALK_END: usize = 7;
    /// First walked size.
    pub const SIZES: usize = 8;
    /// First walked input stride.
    pub const STRIDES: usize = 16;
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

/// How the walk covers the updates.
struct Walk {
    /// Where update `u` lands, from its index value.
    geometry: GatherElementsGeometry,
    /// Update positions off the axis.
    columns: u64,
    /// The updates' size on the axis.
    walk: u64,
    /// Update elements after the axis.
    inner: u64,
}

/// Checks the call and works out its walk.
fn check_call(
    input: &TensorDesc,
    indices: &TensorDesc,
    updates: &TensorDesc,
    output: &TensorDesc,
    axis: usize,
) -> Result<Walk, OpError> {
    let geometry = GatherElementsGeometry::new(&input.sizes, &indices.sizes, axis)?;
    if updates.sizes != indices.sizes {
        return Err(OpError::InvalidArgument(format!(
            "the updates' sizes {:?} must be the indices' {:?}",
            updates.sizes, indices.sizes
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
    if geometry.input_count > u64::from(u32::MAX) || geometry.output_count > u64::from(u32::MAX) {
        return Err(too_large(
            &format!(
                "a scatter of {} updates into {} elements",
                geometry.output_count, geometry.input_count
            ),
            "u32 element addressing (as on the GPU)",
        ));
    }
    let walk = u64::from(indices.sizes[axis]);
    let inner: u64 = indices.sizes[axis + 1..]
        .iter()
        .map(|&s| u64::from(s))
        .product();
    let columns = geometry.output_count.checked_div(walk).unwrap_or(0);
    Ok(Walk {
        geometry,
        columns,
        walk,
        inner,
    })
}

/// The CPU reference: `input`, then each update of `updates` combined into
/// it in row-major order at the position `indices` gives along `axis`, with
/// `combine` (variables `a`, the element so far, and `b`, the update;
/// `attrs` the descriptor's attribute values in spec order), computed as
/// [`Scalar::eval`] does and rounded to the element type after each update.
/// The first out-of-range index value in row-major order gives
/// [`OpError::IndexOutOfRange`] naming `indices_name`.
#[allow(clippy::too_many_arguments)]
pub fn scatter_combine_cpu(
    combine: &Scalar,
    input: &HostTensor,
    indices: &HostTensor,
    updates: &HostTensor,
    output: &TensorDesc,
    axis: usize,
    indices_name: &str,
    attrs: &[Value],
) -> Result<HostTensor, OpError> {
    let w = check_call(input.desc(), indices.desc(), updates.desc(), output, axis)?;
    let g = &w.geometry;
    let (low, high) = g.index_range(indices.dtype());
    let mut out = input.bytes().to_vec();
    for u in 0..g.output_count {
        let v = indices.get_int(u as usize).ok_or_else(|| {
            OpError::InvalidArgument(format!("`{indices_name}` has no index element {u}"))
        })?;
        if v < low || v > high {
            return Err(OpError::IndexOutOfRange {
                tensor: indices_name.to_string(),
                position: coordinates(indices.sizes(), u),
                value: v,
                low,
                high,
            });
        }
        let i = if v < 0 { v + i128::from(g.axis_len) } else { v } as u64;
        let (t, u) = (g.source(u, i) as usize, u as usize);
        combine_into(combine, &mut out, t, updates, u, attrs)?;
    }
    HostTensor::from_bytes(output.clone(), out)
}

/// Element `t` of `out` (raw bytes of `updates`' data type) combined with
/// element `u` of `updates` as `combine` says (`a` the element, `b` the
/// update), computed as [`Scalar::eval`] does and rounded to the data type;
/// a replacement (`combine` is `b`) moves raw bits, NaN payloads included.
/// The CPU references of both scatters apply each update with it.
pub(crate) fn combine_into(
    combine: &Scalar,
    out: &mut [u8],
    t: usize,
    updates: &HostTensor,
    u: usize,
    attrs: &[Value],
) -> Result<(), OpError> {
    let dtype = updates.dtype();
    let width = dtype.size_bytes();
    let update = &updates.bytes()[u * width..(u + 1) * width];
    if matches!(combine, Scalar::Var(Var::B)) {
        out[t * width..(t + 1) * width].copy_from_slice(update);
        return Ok(());
    }
    let value_at = |bytes: &[u8]| -> Result<Value, OpError> {
        let one = HostTensor::from_bytes(TensorDesc::new(dtype, [1]), bytes.to_vec())?;
        Ok(crate::scalar::value_of(&one, 0))
    };
    let mut vars = [Value::I(0); Var::COUNT];
    vars[Var::A as usize] = value_at(&out[t * width..(t + 1) * width])?;
    vars[Var::B as usize] = value_at(update)?;
    let env = TypeEnv::uniform(std::slice::from_ref(&dtype));
    let mut element = Vec::with_capacity(width);
    crate::scalar::write_value(combine.eval(&env, &vars, attrs), dtype, &mut element);
    out[t * width..(t + 1) * width].copy_from_slice(&element);
    Ok(())
}

/// The GPU plan: the output starts as a copy of the input
/// ([`OutputInit::CopyOfInput`]; `output_slot + 1` outputs), then passes
/// of `kernel` (workgroup size [`WORKGROUP_SIZE`]; `None` fails with
/// [`OpError::Unsupported`]) with a thread per column, binding `[Params,
/// Input(indices_slot), Input(updates_slot), Status, Output(output_slot)]`,
/// each applying at most [`WALK_STEPS`] updates of every
/// column, in order; and one index check on `indices_slot`. No updates: no
/// pass.
#[allow(clippy::too_many_arguments)]
pub fn scatter_combine_plan(
    input: &TensorDesc,
    input_slot: usize,
    indices: &TensorDesc,
    indices_slot: usize,
    updates: &TensorDesc,
    updates_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    axis: usize,
    attrs: &[Value],
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let w = check_call(input, indices, updates, output, axis)?;
    let kernel = kernel.ok_or_else(|| {
        OpError::Unsupported(format!(
            "no scatter kernel combining {} data with {} indices",
            input.dtype, indices.dtype
        ))
    })?;
    if kernel.workgroup_size != WORKGROUP_SIZE {
        return Err(OpError::InvalidArgument(format!(
            "kernel `{}` has workgroup size {}, the scatter plan dispatches {WORKGROUP_SIZE}",
            kernel.key, kernel.workgroup_size
        )));
    }
    let words = w
        .geometry
        .input_count
        .saturating_mul(input.dtype.size_bytes() as u64)
        .div_ceil(4);
    if words > u64::from(u32::MAX) {
        return Err(too_large(
            &format!(
                "a {} tensor of {} elements",
                input.dtype, w.geometry.input_count
            ),
            "u32 addressing of the scatter kernels",
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
    if w.columns == 0 {
        return Ok(plan);
    }
    let g = &w.geometry;
    if g.sizes.len() > MAX_DIMS || attrs.len() > params::MAX_ATTRS {
        return Err(too_large(
            &format!(
                "a scatter walking {} dimensions with {} attributes",
                g.sizes.len(),
                attrs.len()
            ),
            &format!("{MAX_DIMS} dimensions and {} attributes", params::MAX_ATTRS),
        ));
    }
    let word = |v: u64, what: &str| {
        u32::try_from(v).map_err(|_| too_large(what, "u32 addressing of the scatter kernels"))
    };
    let mut p = vec![0u32; params::LEN];
    p[params::COLUMNS] = word(w.columns, "column count")?;
    p[params::WALK] = word(w.walk, "walk")?;
    p[params::INNER] = word(w.inner, "inner size")?;
    p[params::DIMS] = g.sizes.len() as u32;
    p[params::AXIS] = g.axis as u32;
    p[params::AXIS_LEN] = g.axis_len;
    for d in 0..MAX_DIMS {
        p[params::SIZES + d] = g.sizes.get(d).copied().unwrap_or(1);
        p[params::STRIDES + d] = word(g.strides.get(d).copied().unwrap_or(0), "input stride")?;
    }
    for (k, a) in crate::scalar::attr_words(attrs).into_iter().enumerate() {
        p[params::ATTRS + k] = a;
    }
    let mut start = 0;
    while start < w.walk {
        let end = w.walk.min(start + WALK_STEPS);
        let mut words = p.clone();
        words[params::WALK_START] = start as u32;
        words[params::WALK_END] = end as u32;
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
            workgroups: w.columns.div_ceil(u64::from(WORKGROUP_SIZE)),
        });
        start = end;
    }
    Ok(plan)
}

/// The data types a kernel combining with `combine` cannot be generated
/// for, with why (see [`Scalar::unsupported_for`]); 8-bit to 64-bit integer
/// and FLOAT16/FLOAT32 data otherwise all work. Raw copies (`b`) move any
/// type, FLOAT64 included.
pub fn combine_unsupported(combine: &Scalar, dtype: DataType) -> Option<String> {
    if matches!(combine, Scalar::Var(Var::B)) {
        return None;
    }
    combine.unsupported_for(&TypeEnv::uniform(std::slice::from_ref(&dtype)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Binary;

    static A: Scalar = Scalar::Var(Var::A);
    static B: Scalar = Scalar::Var(Var::B);
    static ADD: Scalar = Scalar::Binary(Binary::Add, &A, &B);

    #[test]
    fn updates_combine_in_row_major_order() {
        // ONNX's example with duplicate indices, reduction add.
        let data = HostTensor::from_slice([1, 5], &[1f32, 2., 3., 4., 5.]).unwrap();
        let indices = HostTensor::from_slice([1, 2], &[1i64, 1]).unwrap();
        let updates = HostTensor::from_slice([1, 2], &[1.1f32, 2.1]).unwrap();
        let out = scatter_combine_cpu(
            &ADD,
            &data,
            &indices,
            &updates,
            data.desc(),
            1,
            "indices",
            &[],
        )
        .unwrap();
        let want = ((2f32 as f64 + 1.1f32 as f64) as f32 as f64 + 2.1f32 as f64) as f32;
        assert_eq!(out.to_vec::<f32>().unwrap(), [1., want, 3., 4., 5.]);
        // Replace: the last update of a column wins; smaller indices off
        // the axis.
        let data = HostTensor::from_slice([3, 3], &[0u8; 9]).unwrap();
        let indices = HostTensor::from_slice([2, 2], &[-1i32, 0, 2, 1]).unwrap();
        let updates = HostTensor::from_slice([2, 2], &[7u8, 8, 9, 10]).unwrap();
        let out = scatter_combine_cpu(
            &B,
            &data,
            &indices,
            &updates,
            data.desc(),
            0,
            "indices",
            &[],
        )
        .unwrap();
        assert_eq!(out.to_vec::<u8>().unwrap(), [0, 8, 0, 0, 10, 0, 9, 0, 0]);
        let bad = HostTensor::from_slice([2, 2], &[0i32, 3, -4, 0]).unwrap();
        let e = scatter_combine_cpu(&B, &data, &bad, &updates, data.desc(), 0, "indices", &[])
            .unwrap_err();
        assert!(
            matches!(&e, OpError::IndexOutOfRange { position, value: 3, .. } if position == &[0, 1]),
            "{e}"
        );
    }
}
