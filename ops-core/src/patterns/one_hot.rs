//! The `one_hot` pattern: each output element is the on value where the
//! index value of its sequence selects its coordinate on the one-hot axis,
//! and the off value everywhere else (ONNX OneHot, DirectML ONE_HOT).
//!
//! ```text
//! o = (outer, a, inner)    // the output position: before the axis, on it, after it
//! i = indices[outer, inner]                      // the sequence's index value
//! output[o] = resolve(i, depth) == a ? values[1] : values[0]
//! ```
//!
//! The indices hold one value per sequence along the output's axis: their
//! element count is the output's divided by its size on the axis (ONNX's
//! indices lack the axis, DirectML's have it of size 1; in row-major order
//! both number the sequences alike). `resolve` turns a value into a
//! position in `[0, depth)`: signed values in `[-depth, -1]` count from the
//! end; a floating-point value is first truncated toward zero as
//! `cast<INT64>` does (NaN is 0, the infinities fall outside); any value
//! outside `[-depth, depth - 1]` selects nothing, and its sequence is all
//! off values. That is never an error.
//!
//! The off value is element 0 of the values tensor and the on value
//! element 1 (DirectML: the 1st element along the fastest-changing
//! dimension of size > 1, which in a packed tensor is element 1 too); the
//! kernels read both from the device, and every element moves as raw bits.
//!
//! # GPU algorithm
//!
//! One pass of the kernel of `ops_core::wgsl::one_hot`: one work item per
//! output element (32- and 64-bit data) or per output `u32` word of 4 or 2
//! elements (8- and 16-bit data: the thread assembles the word, so no store
//! needs atomics), [`ELEMENTS_PER_THREAD`] items a thread, WORKGROUP_SIZE
//! apart. A work item splits its position into `(outer, a, inner)` with two
//! divisions and compares the resolved index value with `a`.

use super::coordinates;
use crate::{
    element_count, f16, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError, OutputInit,
    Pass, TensorDesc,
};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// The parameter words of the kernel (the uniform `params` block):
///
/// | words | meaning |
/// | --- | --- |
/// | 0 | output element count |
/// | 1 | work items (output elements, or output words of 8- and 16-bit data) |
/// | 2 | depth: the output's size on the one-hot axis |
/// | 3 | inner: the output's element count after the axis |
pub mod params {
    /// Output element count.
    pub const OUTPUT_COUNT: usize = 0;
    /// Work items.
    pub const WORK_COUNT: usize = 1;
    /// The output's size on the axis.
    pub const DEPTH: usize = 2;
    /// The output's element count after the axis.
    pub const INNER: usize = 3;
    /// Total word count.
    pub const LEN: usize = 4;
}

/// The kernel bindings: params (uniform), indices, values, output.
pub const BINDINGS: &[crate::Access] = &[
    crate::Access::Uniform,
    crate::Access::Read,
    crate::Access::Read,
    crate::Access::ReadWrite,
];

/// How a one-hot encoding walks its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneHotGeometry {
    /// The output's size on the axis.
    pub depth: u64,
    /// The output's element count after the axis.
    pub inner: u64,
    /// The output's element count.
    pub output_count: u64,
    /// The sequences: the output's element count without the axis.
    pub sequences: u64,
}

fn invalid(m: String) -> OpError {
    OpError::InvalidArgument(m)
}

impl OneHotGeometry {
    /// The geometry of an output of `sizes` one-hot along `axis`.
    pub fn new(sizes: &[u32], axis: usize) -> Result<OneHotGeometry, OpError> {
        if axis >= sizes.len() {
            return Err(invalid(format!(
                "the one-hot axis {axis} must be a dimension of the output (sizes {sizes:?})"
            )));
        }
        let count = |s: &[u32]| {
            element_count(s).ok_or_else(|| OpError::TooLarge {
                what: format!("a one-hot output of sizes {sizes:?}"),
                limit: "element count overflows u64".into(),
            })
        };
        let sequences = count(&[&sizes[..axis], &sizes[axis + 1..]].concat())?;
        Ok(OneHotGeometry {
            depth: u64::from(sizes[axis]),
            inner: count(&sizes[axis + 1..])?,
            output_count: count(sizes)?,
            sequences,
        })
    }

    /// The work items of the kernel for data type `data`.
    pub fn work_items(&self, data: DataType) -> u64 {
        super::word_items(self.output_count, data)
    }

    /// `(sequence, a)` of output position `o`: the index element it
    /// compares with and its coordinate on the axis.
    pub fn split(&self, o: u64) -> (u64, u64) {
        let inner = self.inner.max(1);
        let q = o / inner;
        let depth = self.depth.max(1);
        ((q / depth) * inner + o % inner, q % depth)
    }
}

/// Index element `i` of `indices` as an integer: integers exactly,
/// floating-point values truncated toward zero as `cast<INT64>` does (NaN
/// is 0; values beyond `i64` saturate). `None` past the end, or for BOOL.
pub fn index_value(indices: &HostTensor, i: usize) -> Option<i128> {
    if i >= indices.len() {
        return None;
    }
    let x = match indices.dtype() {
        DataType::Float64 => indices.get::<f64>(i),
        DataType::Float32 => f64::from(indices.get::<f32>(i)),
        DataType::Float16 => f64::from(indices.get::<f16>(i)),
        DataType::Bool => return None,
        _ => return indices.get_int(i),
    };
    Some(if x.is_nan() {
        0
    } else {
        x.trunc() as i64 as i128
    })
}

/// The axis position index value `v` selects among `depth`: `[0, depth)`
/// as it is, `[-depth, -1]` counted from the end, anything else `None`.
pub fn resolve(v: i128, depth: u64) -> Option<u64> {
    let n = i128::from(depth);
    match v {
        v if (0..n).contains(&v) => Some(v as u64),
        v if v < 0 && v >= -n => Some((v + n) as u64),
        _ => None,
    }
}

fn check_call(
    g: &OneHotGeometry,
    indices: &TensorDesc,
    values: &TensorDesc,
    output: &TensorDesc,
) -> Result<(), OpError> {
    if output.dtype != values.dtype {
        return Err(invalid(format!(
            "the output data type {} must be the values' {}",
            output.dtype, values.dtype
        )));
    }
    if indices.dtype == DataType::Bool {
        return Err(invalid("the indices must be numbers, not BOOL".into()));
    }
    let index_count = indices.element_count().unwrap_or(u64::MAX);
    if index_count != g.sequences {
        return Err(invalid(format!(
            "the indices (sizes {:?}) must hold one value per sequence of the output (sizes {:?}) along the axis: {} values",
            indices.sizes, output.sizes, g.sequences
        )));
    }
    let values_count = values.element_count().unwrap_or(0);
    if values_count < 2 {
        return Err(invalid(format!(
            "the values (sizes {:?}) must hold the off and the on value",
            values.sizes
        )));
    }
    if g.output_count > u64::from(u32::MAX) || index_count > u64::from(u32::MAX) {
        return Err(OpError::TooLarge {
            what: format!("a one-hot output of {} elements", g.output_count),
            limit: "u32 element addressing (as on the GPU)".into(),
        });
    }
    Ok(())
}

/// The CPU reference: the output described by `output`, one-hot along
/// `axis`; each element the on value (element 1 of `values`) where the
/// index value of its sequence selects its axis coordinate, else the off
/// value (element 0). Elements move as raw bytes.
pub fn one_hot_cpu(
    indices: &HostTensor,
    values: &HostTensor,
    output: &TensorDesc,
    axis: usize,
) -> Result<HostTensor, OpError> {
    let g = OneHotGeometry::new(&output.sizes, axis)?;
    check_call(&g, indices.desc(), values.desc(), output)?;
    let width = values.dtype().size_bytes();
    let (off, on) = (&values.bytes()[..width], &values.bytes()[width..2 * width]);
    let mut bytes = Vec::with_capacity(g.output_count as usize * width);
    for o in 0..g.output_count {
        let (s, a) = g.split(o);
        let v = index_value(indices, s as usize).ok_or_else(|| {
            invalid(format!(
                "the indices have no element at {:?}",
                coordinates(indices.sizes(), s)
            ))
        })?;
        let hot = resolve(v, g.depth) == Some(a);
        bytes.extend_from_slice(if hot { on } else { off });
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// The GPU plan: one pass of `kernel` (the generated kernel of these
/// values and indices types, workgroup size [`WORKGROUP_SIZE`]; `None`
/// fails with [`OpError::Unsupported`]) binding `[Params,
/// Input(indices_slot), Input(values_slot), Output(output_slot)]`. The
/// output (`output_slot + 1` outputs, [`OutputInit::Overwritten`]) is
/// stored whole; an empty one has no pass.
#[allow(clippy::too_many_arguments)]
pub fn one_hot_plan(
    indices: &TensorDesc,
    indices_slot: usize,
    values: &TensorDesc,
    values_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    axis: usize,
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let g = OneHotGeometry::new(&output.sizes, axis)?;
    check_call(&g, indices, values, output)?;
    let kernel = kernel.ok_or_else(|| {
        OpError::Unsupported(format!(
            "no one_hot kernel for {} values with {} indices",
            values.dtype, indices.dtype
        ))
    })?;
    if kernel.workgroup_size != WORKGROUP_SIZE {
        return Err(invalid(format!(
            "kernel `{}` has workgroup size {}, the one_hot plan dispatches {WORKGROUP_SIZE}",
            kernel.key, kernel.workgroup_size
        )));
    }
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; output_slot + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    let work = g.work_items(output.dtype);
    if work == 0 {
        return Ok(plan);
    }
    let mut p = vec![0u32; params::LEN];
    // Each fits: check_call bounds the output's element count by u32.
    p[params::OUTPUT_COUNT] = g.output_count as u32;
    p[params::WORK_COUNT] = work as u32;
    p[params::DEPTH] = g.depth as u32;
    p[params::INNER] = g.inner as u32;
    plan.passes.push(Pass {
        kernel,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(indices_slot),
            BufferRef::Input(values_slot),
            BufferRef::Output(output_slot),
        ],
        params: p,
        workgroups: work.div_ceil(ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE)),
    });
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_split_around_the_axis() {
        let g = OneHotGeometry::new(&[2, 3, 4], 1).unwrap();
        assert_eq!(
            (g.depth, g.inner, g.sequences, g.output_count),
            (3, 4, 8, 24)
        );
        // Position [1, 2, 3] = 1*12 + 2*4 + 3 = 23: sequence [1, 3], a = 2.
        assert_eq!(g.split(23), (7, 2));
        assert_eq!(g.split(5), (1, 1));
        assert!(OneHotGeometry::new(&[2, 3], 2).is_err());
    }

    #[test]
    fn values_resolve_like_onnx() {
        assert_eq!(resolve(0, 3), Some(0));
        assert_eq!(resolve(2, 3), Some(2));
        assert_eq!(resolve(3, 3), None);
        assert_eq!(resolve(-1, 3), Some(2));
        assert_eq!(resolve(-3, 3), Some(0));
        assert_eq!(resolve(-4, 3), None);
        let f = HostTensor::from_slice([6], &[1.9f32, -1.9, f32::NAN, -0.0, f32::INFINITY, -0.5])
            .unwrap();
        let got: Vec<_> = (0..6).map(|i| index_value(&f, i).unwrap()).collect();
        assert_eq!(got, [1, -1, 0, 0, i128::from(i64::MAX), 0]);
    }

    #[test]
    fn encodes_along_the_axis() {
        // ONNX's test_onehot_with_axis: indices [[1, 9], [2, 4]], depth 10, axis 1.
        let indices = HostTensor::from_slice([2, 2], &[1f32, 9., 2., 4.]).unwrap();
        let values = HostTensor::from_slice([2], &[1f32, 3.]).unwrap();
        let out = one_hot_cpu(
            &indices,
            &values,
            &TensorDesc::new(DataType::Float32, [2, 10, 2]),
            1,
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
        let hot: Vec<usize> = (0..40).filter(|&o| out[o] == 3.).collect();
        // [0, 1, 0], [0, 9, 1], [1, 2, 0], [1, 4, 1].
        assert_eq!(hot, [2, 19, 24, 29]);
        assert_eq!(out.iter().filter(|&&v| v == 1.).count(), 36);
        // Out of range (and -4 of 3) is an all-off row; negative counts from the end.
        let indices = HostTensor::from_slice([4], &[3i8, -4, -1, 0]).unwrap();
        let values = HostTensor::from_slice([2], &[false, true]).unwrap();
        let out = one_hot_cpu(
            &indices,
            &values,
            &TensorDesc::new(DataType::Bool, [4, 3]),
            1,
        )
        .unwrap();
        assert_eq!(out.bytes(), &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0][..]);
        // Mismatched indices are an error, not a panic.
        let short = HostTensor::from_slice([3], &[0i8, 1, 2]).unwrap();
        assert!(one_hot_cpu(&short, &values, &TensorDesc::new(DataType::Bool, [4, 3]), 1).is_err());
        let one = HostTensor::from_slice([1], &[true]).unwrap();
        assert!(one_hot_cpu(&indices, &one, &TensorDesc::new(DataType::Bool, [4, 3]), 1).is_err());
    }
}
