//! The `gather_elements` pattern: each output element reads the input
//! element at its own coordinates, with the coordinate on the axis replaced
//! by the index value at the same position (DirectML GATHER_ELEMENTS, ONNX
//! GatherElements, `torch.gather`).
//!
//! ```text
//! output[i, j, k] = input[indices[i, j, k], j, k]   // axis 0
//! output[i, j, k] = input[i, indices[i, j, k], k]   // axis 1
//! ```
//!
//! The indices and the output share one shape, of the input's rank; off the
//! axis each indices size is at most the input's (DirectML asks for equal
//! sizes, ONNX only for sizes that address the input). Index values of
//! signed types may be negative, counting from the end of the axis: an axis
//! of size `n` admits `[-n, n - 1]`, and `[0, n - 1]` for unsigned types.
//! Any other value is an [`OpError::IndexOutOfRange`] for the lowest
//! offending element, from [`gather_elements_cpu`] or from the GPU plan's
//! index check phrased by [`gather_elements_index_error`]; nothing is read
//! out of bounds. Elements move as raw bits.
//!
//! # GPU algorithm
//!
//! One pass of the kernel of `ops_core::wgsl::gather_elements`: one work
//! item per output element (32- and 64-bit data) or per output `u32` word
//! of 4 or 2 elements (8- and 16-bit data: the thread assembles the word,
//! so no store needs atomics), [`ELEMENTS_PER_THREAD`] items a thread. A
//! work item walks the output position's coordinates from the last
//! dimension to the first, adding each times the input's stride and, on the
//! axis, the resolved index value instead. [`GatherElementsGeometry`]
//! merges neighbouring dimensions off the axis whose indices and input
//! sizes agree, so the usual call (equal sizes, DirectML's rule) walks at
//! most three: before the axis, the axis, after it.

use super::coordinates;
use crate::{
    element_count, row_major_strides, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError,
    OutputInit, Pass, TensorDesc,
};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// Most dimensions the kernels walk (after merging).
pub const MAX_DIMS: usize = 8;

/// The parameter words of the kernel (the uniform `params` block):
///
/// | words | meaning |
/// | --- | --- |
/// | 0 | output element count |
/// | 1 | work items (output elements, or output words of 8- and 16-bit data) |
/// | 2 | dimensions walked, `D` (at most [`MAX_DIMS`]) |
/// | 3 | the axis among them |
/// | 4 | the input's size on the axis |
/// | 8..16 | the indices' (and output's) size of each walked dimension, unused slots 1 |
/// | 16..24 | the input's stride of each walked dimension, in elements |
pub mod params {
    /// Output element count.
    pub const OUTPUT_COUNT: usize = 0;
    /// Work items.
    pub const WORK_COUNT: usize = 1;
    /// Dimensions walked.
    pub const DIMS: usize = 2;
    /// The axis among the walked dimensions.
    pub const AXIS: usize = 3;
    /// The input's size on the axis.
    pub const AXIS_LEN: usize = 4;
    /// First walked size.
    pub const SIZES: usize = 8;
    /// First walked input stride.
    pub const STRIDES: usize = 16;
    /// First walked size's [`Divisor`](crate::patterns::divisor::Divisor)
    /// multiplier.
    pub const SIZE_MAGIC: usize = 24;
    /// First walked size's divisor shifts.
    pub const SIZE_SHIFTS: usize = 32;
    /// Total word count.
    pub const LEN: usize = 40;
}

/// How a gather of elements walks its tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatherElementsGeometry {
    /// The walked dimensions' sizes (the indices' and output's, merged).
    pub sizes: Vec<u32>,
    /// The input's stride of each walked dimension, in elements.
    pub strides: Vec<u64>,
    /// The axis among the walked dimensions.
    pub axis: usize,
    /// The input's size on the axis.
    pub axis_len: u32,
    /// Input element count.
    pub input_count: u64,
    /// Output (and index) element count.
    pub output_count: u64,
}

fn too_large(what: &str, limit: &str) -> OpError {
    OpError::TooLarge {
        what: what.into(),
        limit: limit.into(),
    }
}

impl GatherElementsGeometry {
    /// The geometry of gathering from an input of `input` sizes along `axis`
    /// with indices of `indices` sizes.
    ///
    /// Fails with [`OpError::InvalidArgument`] when the ranks differ, the
    /// axis is not a dimension, or an indices size off the axis exceeds the
    /// input's; with [`OpError::TooLarge`] when a count overflows `u64`.
    pub fn new(
        input: &[u32],
        indices: &[u32],
        axis: usize,
    ) -> Result<GatherElementsGeometry, OpError> {
        if input.len() != indices.len() {
            return Err(OpError::InvalidArgument(format!(
                "the indices (sizes {indices:?}) must have the input's rank (sizes {input:?})"
            )));
        }
        if axis >= input.len() {
            return Err(OpError::InvalidArgument(format!(
                "the axis {axis} must be a dimension of the input (sizes {input:?})"
            )));
        }
        if let Some(d) = (0..input.len()).find(|&d| d != axis && indices[d] > input[d]) {
            return Err(OpError::InvalidArgument(format!(
                "off the axis, the indices' sizes {indices:?} must not exceed the input's {input:?} (dimension {d})"
            )));
        }
        let input_count = element_count(input)
            .ok_or_else(|| too_large("input", "element count overflows u64"))?;
        let output_count = element_count(indices)
            .ok_or_else(|| too_large("indices", "element count overflows u64"))?;
        let input_strides = row_major_strides(input);
        // Merge a dimension into the one before it when both are off the
        // axis and the indices cover the input in the later one.
        let mut sizes: Vec<u32> = Vec::new();
        let mut strides: Vec<u64> = Vec::new();
        let mut walked_axis = 0;
        let mut mergeable = false;
        for d in 0..input.len() {
            let off_axis = d != axis;
            let covers = indices[d] == input[d];
            let last = sizes.len().wrapping_sub(1);
            if off_axis && covers && mergeable {
                sizes[last] *= indices[d];
                strides[last] = input_strides[d];
            } else {
                if !off_axis {
                    walked_axis = sizes.len();
                }
                sizes.push(indices[d]);
                strides.push(input_strides[d]);
            }
            // The next dimension, when covered, may merge into this one
            // when this one is off the axis: position `c * size + c'` then
            // has the input offset `c * stride + c' * stride'`, as
            // `stride = size * stride'`.
            mergeable = off_axis;
        }
        Ok(GatherElementsGeometry {
            sizes,
            strides,
            axis: walked_axis,
            axis_len: input[axis],
            input_count,
            output_count,
        })
    }

    /// The work items of the kernel for data type `data`: output elements,
    /// or output words for 8- and 16-bit data.
    pub fn work_items(&self, data: DataType) -> u64 {
        super::word_items(self.output_count, data)
    }

    /// The range `[low, high]` index values of type `index` may take.
    pub fn index_range(&self, index: DataType) -> (i128, i128) {
        let n = i128::from(self.axis_len);
        (if index.is_signed_int() { -n } else { 0 }, n - 1)
    }

    /// The input offset of output position `o` whose index value, already
    /// normalised to `[0, axis_len)`, is `i`.
    pub fn source(&self, o: u64, i: u64) -> u64 {
        let mut rest = o;
        let mut offset = 0;
        for d in (0..self.sizes.len()).rev() {
            let size = u64::from(self.sizes[d]).max(1);
            let c = if d == self.axis { i } else { rest % size };
            rest /= size;
            offset += c * self.strides[d];
        }
        offset
    }
}

/// Checks the data types and the output description.
fn check_call(
    g: &GatherElementsGeometry,
    data: DataType,
    index: DataType,
    indices: &[u32],
    output: &TensorDesc,
) -> Result<(), OpError> {
    if output.dtype != data {
        return Err(OpError::InvalidArgument(format!(
            "the output data type {} must be the input data type {data}",
            output.dtype
        )));
    }
    if !index.is_int() {
        return Err(OpError::InvalidArgument(format!(
            "the indices data type {index} must be an integer type"
        )));
    }
    if output.sizes != indices {
        return Err(OpError::InvalidArgument(format!(
            "the output sizes {:?} must be the indices' {indices:?}",
            output.sizes
        )));
    }
    if g.output_count > u64::from(u32::MAX) || g.input_count > u64::from(u32::MAX) {
        return Err(too_large(
            &format!(
                "a gather of {} elements from {}",
                g.output_count, g.input_count
            ),
            "u32 element addressing (as on the GPU)",
        ));
    }
    Ok(())
}

/// The CPU reference of the pattern.
///
/// Gathers from `input` along `axis` at the values of `indices` into a
/// tensor described by `output` (the input's data type, the indices'
/// sizes). Elements move as raw bytes. Every index value is checked in
/// row-major order; the first out of range gives
/// [`OpError::IndexOutOfRange`] naming `indices_name`, the value's
/// coordinates and the allowed range.
pub fn gather_elements_cpu(
    input: &HostTensor,
    indices: &HostTensor,
    output: &TensorDesc,
    axis: usize,
    indices_name: &str,
) -> Result<HostTensor, OpError> {
    let g = GatherElementsGeometry::new(input.sizes(), indices.sizes(), axis)?;
    check_call(&g, input.dtype(), indices.dtype(), indices.sizes(), output)?;
    let (low, high) = g.index_range(indices.dtype());
    let width = input.dtype().size_bytes();
    let mut bytes = Vec::with_capacity(g.output_count as usize * width);
    for o in 0..g.output_count {
        let v = indices.get_int(o as usize).ok_or_else(|| {
            OpError::InvalidArgument(format!("`{indices_name}` has no index element {o}"))
        })?;
        if v < low || v > high {
            return Err(OpError::IndexOutOfRange {
                tensor: indices_name.to_string(),
                position: coordinates(indices.sizes(), o),
                value: v,
                low,
                high,
            });
        }
        let i = if v < 0 { v + i128::from(g.axis_len) } else { v } as u64;
        let start = g.source(o, i) as usize * width;
        let element = input.bytes().get(start..start + width).ok_or_else(|| {
            OpError::InvalidArgument(format!(
                "element {o} of `{indices_name}` reads byte {start} of an input of {} bytes",
                input.bytes().len()
            ))
        })?;
        bytes.extend_from_slice(element);
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// Phrases the GPU's index check failure at element `position` of
/// `indices` as the [`OpError::IndexOutOfRange`] [`gather_elements_cpu`]
/// gives for the same tensors; an [`OpError::Device`] when the value there
/// is in range (the GPU reported a valid index).
pub fn gather_elements_index_error(
    input: &TensorDesc,
    indices: &HostTensor,
    axis: usize,
    indices_name: &str,
    position: u64,
) -> OpError {
    let g = match GatherElementsGeometry::new(&input.sizes, indices.sizes(), axis) {
        Ok(g) => g,
        Err(e) => return e,
    };
    let Some(v) = usize::try_from(position)
        .ok()
        .and_then(|p| indices.get_int(p))
    else {
        return OpError::InvalidArgument(format!(
            "the GPU reported index element {position} of `{indices_name}` ({} {:?}), which has no such integer element",
            indices.dtype(),
            indices.sizes()
        ));
    };
    let (low, high) = g.index_range(indices.dtype());
    let coords = coordinates(indices.sizes(), position);
    if v < low || v > high {
        OpError::IndexOutOfRange {
            tensor: indices_name.to_string(),
            position: coords,
            value: v,
            low,
            high,
        }
    } else {
        OpError::Device(format!(
            "the GPU reported index {v} of `{indices_name}` at element {coords:?} as out of range, but it lies in [{low}, {high}]"
        ))
    }
}

/// The parameter words of a gather of `data` elements (layout in
/// [`params`]); [`OpError::TooLarge`] when a size or stride exceeds `u32`.
pub fn gather_elements_params(
    g: &GatherElementsGeometry,
    data: DataType,
) -> Result<Vec<u32>, OpError> {
    let word = |v: u64, what: &str| {
        u32::try_from(v)
            .map_err(|_| too_large(what, "u32 addressing of the gather_elements kernels"))
    };
    if g.sizes.len() > MAX_DIMS {
        return Err(too_large(
            &format!("{} dimensions", g.sizes.len()),
            &format!("{MAX_DIMS} dimensions"),
        ));
    }
    let mut p = vec![0u32; params::LEN];
    p[params::OUTPUT_COUNT] = word(g.output_count, "output element count")?;
    p[params::WORK_COUNT] = word(g.work_items(data), "work item count")?;
    p[params::DIMS] = g.sizes.len() as u32;
    p[params::AXIS] = g.axis as u32;
    p[params::AXIS_LEN] = g.axis_len;
    for d in 0..MAX_DIMS {
        p[params::SIZES + d] = g.sizes.get(d).copied().unwrap_or(1);
        p[params::STRIDES + d] = word(g.strides.get(d).copied().unwrap_or(0), "input stride")?;
        let size = super::divisor::Divisor::new(p[params::SIZES + d]);
        p[params::SIZE_MAGIC + d] = size.magic;
        p[params::SIZE_SHIFTS + d] = size.shifts;
    }
    Ok(p)
}

/// The GPU plan: one pass of `kernel` (the generated kernel of this call's
/// data and index types, workgroup size [`WORKGROUP_SIZE`]; `None` fails
/// with [`OpError::Unsupported`]) binding `[Params, Input(input_slot),
/// Input(indices_slot), Output(output_slot), Status]`, and one index check
/// on `indices_slot`. The output (`output_slot + 1` outputs,
/// [`OutputInit::Overwritten`]) is stored whole; an empty one has no pass.
#[allow(clippy::too_many_arguments)]
pub fn gather_elements_plan(
    input: &TensorDesc,
    input_slot: usize,
    indices: &TensorDesc,
    indices_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    axis: usize,
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let g = GatherElementsGeometry::new(&input.sizes, &indices.sizes, axis)?;
    check_call(&g, input.dtype, indices.dtype, &indices.sizes, output)?;
    let kernel = kernel.ok_or_else(|| {
        OpError::Unsupported(format!(
            "no gather_elements kernel for {} data with {} indices",
            input.dtype, indices.dtype
        ))
    })?;
    if kernel.workgroup_size != WORKGROUP_SIZE {
        return Err(OpError::InvalidArgument(format!(
            "kernel `{}` has workgroup size {}, the gather_elements plan dispatches {WORKGROUP_SIZE}",
            kernel.key, kernel.workgroup_size
        )));
    }
    for (desc, count) in [(input, g.input_count), (output, g.output_count)] {
        let words = count
            .saturating_mul(desc.dtype.size_bytes() as u64)
            .div_ceil(4);
        if words > u64::from(u32::MAX) {
            return Err(too_large(
                &format!("a {} tensor of {count} elements", desc.dtype),
                "u32 addressing of the gather_elements kernels",
            ));
        }
    }
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; output_slot + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: vec![indices_slot],
    };
    let work = g.work_items(input.dtype);
    if work == 0 {
        return Ok(plan);
    }
    plan.passes.push(Pass {
        kernel,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(input_slot),
            BufferRef::Input(indices_slot),
            BufferRef::Output(output_slot),
            BufferRef::Status,
        ],
        params: gather_elements_params(&g, input.dtype)?,
        workgroups: work.div_ceil(ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE)),
    });
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "indices";

    #[test]
    fn equal_sizes_walk_three_dimensions_at_most() {
        let g = GatherElementsGeometry::new(&[2, 3, 4, 5], &[2, 3, 7, 5], 2).unwrap();
        assert_eq!(g.sizes, [6, 7, 5]);
        assert_eq!(g.strides, [20, 5, 1]);
        assert_eq!((g.axis, g.axis_len), (1, 4));
        // ONNX's smaller indices off the axis keep their dimensions apart.
        let g = GatherElementsGeometry::new(&[2, 3, 4], &[2, 2, 4], 0).unwrap();
        assert_eq!(g.sizes, [2, 8]);
        assert_eq!(g.strides, [12, 1]);
        assert!(GatherElementsGeometry::new(&[2, 3], &[2, 4], 0).is_err());
        assert!(GatherElementsGeometry::new(&[2, 3], &[2], 0).is_err());
        assert!(GatherElementsGeometry::new(&[2, 3], &[2, 3], 2).is_err());
    }

    #[test]
    fn gathers_along_the_axis() {
        // DirectML's example: axis 0 of [[1,2,3],[4,5,6],[7,8,9]].
        let input =
            HostTensor::from_slice([3, 3], &[1f32, 2., 3., 4., 5., 6., 7., 8., 9.]).unwrap();
        let indices = HostTensor::from_slice([2, 3], &[1u32, 2, 0, 2, 0, 0]).unwrap();
        let out = gather_elements_cpu(
            &input,
            &indices,
            &TensorDesc::new(DataType::Float32, [2, 3]),
            0,
            NAME,
        )
        .unwrap();
        assert_eq!(out.to_vec::<f32>().unwrap(), [4., 8., 3., 7., 2., 3.]);
        // Axis 1, negative indices, smaller indices off the axis.
        let input = HostTensor::from_slice([3, 2], &[1i8, 2, 3, 4, 5, 6]).unwrap();
        let indices = HostTensor::from_slice([2, 2], &[-1i64, 0, 1, -2]).unwrap();
        let out = gather_elements_cpu(
            &input,
            &indices,
            &TensorDesc::new(DataType::Int8, [2, 2]),
            1,
            NAME,
        )
        .unwrap();
        assert_eq!(out.to_vec::<i8>().unwrap(), [2, 1, 4, 3]);
        // Out of range: the lowest bad element, with its coordinates.
        let bad = HostTensor::from_slice([2, 2], &[0i64, 2, -3, 5]).unwrap();
        let e = gather_elements_cpu(
            &input,
            &bad,
            &TensorDesc::new(DataType::Int8, [2, 2]),
            1,
            NAME,
        )
        .unwrap_err();
        assert_eq!(
            e,
            OpError::IndexOutOfRange {
                tensor: NAME.into(),
                position: vec![0, 1],
                value: 2,
                low: -2,
                high: 1,
            }
        );
        assert_eq!(
            gather_elements_index_error(input.desc(), &bad, 1, NAME, 1),
            e
        );
        assert!(matches!(
            gather_elements_index_error(input.desc(), &bad, 1, NAME, 0),
            OpError::Device(_)
        ));
    }
}
