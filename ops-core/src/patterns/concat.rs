//! The `concat` pattern: the inputs laid end to end along one axis (ONNX
//! Concat, DirectML JOIN).
//!
//! ```text
//! output[.., c, ..] = input_k[.., c - start_k, ..]   where start_k <= c < start_k + extent_k
//! ```
//!
//! Every input has the output's sizes except along the axis, where input
//! `k` has `extent_k` elements starting at `start_k`, the sum of the
//! extents before it (the spec's rules make it so; the pattern checks it
//! again). An output element's flat index `o` splits into `outer`, the
//! axis coordinate `c` and `inner` (`o = (outer * A + c) * I + inner`, `A`
//! the output's extent along the axis, `I` the product of the sizes after
//! it); the input element is `(outer * extent_k + c - start_k) * I + inner`
//! of input `k`. Elements move as raw bits.
//!
//! # GPU algorithm
//!
//! One pass: a work item per output element (32- and 64-bit data) or per
//! output `u32` word (8- and 16-bit data, assembled in a register),
//! [`ELEMENTS_PER_THREAD`] items a thread; each finds its input by
//! comparing `c` with the starts (at most [`MAX_INPUTS`]), one binding per
//! input.

use crate::{BufferRef, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, TensorDesc};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// The most inputs a kernel binds (with the output and the parameters,
/// within core WebGPU's 8 storage buffers per stage).
pub const MAX_INPUTS: usize = 7;

/// The parameter words of the kernel (the uniform `params` block):
///
/// | words | meaning |
/// | --- | --- |
/// | 0 | output element count |
/// | 1 | work items |
/// | 2 | `I`, the product of the sizes after the axis |
/// | 3 | `A`, the output's extent along the axis |
/// | 4..11 | `start_k` of each input |
/// | 11..18 | `extent_k` of each input |
pub mod params {
    /// Output element count.
    pub const OUTPUT_COUNT: usize = 0;
    /// Work items.
    pub const WORK_COUNT: usize = 1;
    /// The product of the sizes after the axis.
    pub const INNER: usize = 2;
    /// The output's extent along the axis.
    pub const EXTENT: usize = 3;
    /// First input's start along the axis.
    pub const STARTS: usize = 4;
    /// First input's extent along the axis.
    pub const EXTENTS: usize = 4 + super::MAX_INPUTS;
    /// [`INNER`]'s [`Divisor`](crate::patterns::divisor::Divisor):
    /// multiplier, then shifts.
    pub const INNER_DIVISOR: usize = 48;
    /// [`EXTENT`]'s divisor: multiplier, then shifts.
    pub const EXTENT_DIVISOR: usize = 50;
    /// Total word count.
    pub const LEN: usize = 52;
    const _: () = assert!(EXTENTS + super::MAX_INPUTS <= INNER_DIVISOR);
}

/// The kernel bindings of a kernel of `inputs` inputs: params (uniform),
/// each input (read), the output (read-write).
pub fn bindings(inputs: usize) -> &'static [crate::Access] {
    use crate::Access::{Read as R, ReadWrite as W, Uniform as U};
    const ALL: [&[crate::Access]; MAX_INPUTS + 1] = [
        &[U, W],
        &[U, R, W],
        &[U, R, R, W],
        &[U, R, R, R, W],
        &[U, R, R, R, R, W],
        &[U, R, R, R, R, R, W],
        &[U, R, R, R, R, R, R, W],
        &[U, R, R, R, R, R, R, R, W],
    ];
    ALL[inputs.min(MAX_INPUTS)]
}

/// A checked concatenation: the output's split around the axis and each
/// input's extent along it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Layout {
    inner: u64,
    extent: u64,
    extents: Vec<u64>,
}

fn invalid(m: String) -> OpError {
    OpError::InvalidArgument(m)
}

fn check_call(inputs: &[&TensorDesc], output: &TensorDesc, axis: usize) -> Result<Layout, OpError> {
    let r = output.sizes.len();
    if axis >= r {
        return Err(invalid(format!(
            "axis {axis} is outside the output's {r} dimensions"
        )));
    }
    let mut extents = Vec::with_capacity(inputs.len());
    for (k, t) in inputs.iter().enumerate() {
        let same_elsewhere =
            t.sizes.len() == r && (0..r).all(|d| d == axis || t.sizes[d] == output.sizes[d]);
        if t.dtype != output.dtype || !same_elsewhere {
            return Err(invalid(format!(
                "input {k} ({} {:?}) does not concatenate into the output ({} {:?}) along axis {axis}",
                t.dtype, t.sizes, output.dtype, output.sizes
            )));
        }
        extents.push(u64::from(t.sizes[axis]));
    }
    let extent = u64::from(output.sizes[axis]);
    if extents.iter().sum::<u64>() != extent {
        return Err(invalid(format!(
            "the inputs' extents {extents:?} along axis {axis} do not add up to the output's {extent}"
        )));
    }
    let count = output.element_count().unwrap_or(u64::MAX);
    if count > u64::from(u32::MAX) {
        return Err(OpError::TooLarge {
            what: format!("a concatenation of {count} elements"),
            limit: "u32 element addressing (as on the GPU)".into(),
        });
    }
    let inner = output.sizes[axis + 1..]
        .iter()
        .map(|&s| u64::from(s))
        .product();
    Ok(Layout {
        inner,
        extent,
        extents,
    })
}

/// The CPU reference: the output described by `output`, the inputs laid
/// end to end along `axis`, as raw bytes.
pub fn concat_cpu(
    inputs: &[&HostTensor],
    output: &TensorDesc,
    axis: usize,
) -> Result<HostTensor, OpError> {
    let descs: Vec<&TensorDesc> = inputs.iter().map(|t| t.desc()).collect();
    let l = check_call(&descs, output, axis)?;
    let width = output.dtype.size_bytes();
    let count = output.element_count().unwrap_or(0);
    let mut bytes = Vec::with_capacity(count as usize * width);
    let outer = count.checked_div(l.extent * l.inner).unwrap_or(0);
    for o in 0..outer {
        for (t, &e) in inputs.iter().zip(&l.extents) {
            let run = (e * l.inner) as usize * width;
            let at = o as usize * run;
            bytes.extend_from_slice(&t.bytes()[at..at + run]);
        }
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// The GPU plan: one pass of `kernel` (the generated kernel of this data
/// type and input count, workgroup size [`WORKGROUP_SIZE`]; `None` fails
/// with [`OpError::Unsupported`]) binding `[Params, Input(slot) for each
/// input, Output(output_slot)]`; the output (`output_slot + 1` outputs,
/// [`OutputInit::Overwritten`]) is stored whole. An empty output has no
/// pass.
pub fn concat_plan(
    inputs: &[(&TensorDesc, usize)],
    output: &TensorDesc,
    output_slot: usize,
    axis: usize,
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    let descs: Vec<&TensorDesc> = inputs.iter().map(|(t, _)| *t).collect();
    let l = check_call(&descs, output, axis)?;
    let kernel = kernel.ok_or_else(|| {
        OpError::Unsupported(format!(
            "no concat kernel for {} inputs of {} data",
            inputs.len(),
            output.dtype
        ))
    })?;
    if inputs.len() > MAX_INPUTS {
        return Err(OpError::TooLarge {
            what: format!("a concatenation of {} inputs", inputs.len()),
            limit: format!("{MAX_INPUTS} inputs"),
        });
    }
    let count = output.element_count().unwrap_or(0);
    let work = super::word_items(count, output.dtype);
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; output_slot + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    if work == 0 {
        return Ok(plan);
    }
    let mut p = vec![0u32; params::LEN];
    p[params::OUTPUT_COUNT] = count as u32;
    p[params::WORK_COUNT] = work as u32;
    p[params::INNER] = l.inner as u32;
    p[params::EXTENT] = l.extent as u32;
    for (at, size) in [
        (params::INNER_DIVISOR, p[params::INNER]),
        (params::EXTENT_DIVISOR, p[params::EXTENT]),
    ] {
        let d = super::divisor::Divisor::new(size);
        p[at] = d.magic;
        p[at + 1] = d.shifts;
    }
    let mut start = 0u64;
    for (k, &e) in l.extents.iter().enumerate() {
        p[params::STARTS + k] = start as u32;
        p[params::EXTENTS + k] = e as u32;
        start += e;
    }
    // Slots past the inputs start beyond every coordinate.
    for k in l.extents.len()..MAX_INPUTS {
        p[params::STARTS + k] = u32::MAX;
    }
    let mut buffers = vec![BufferRef::Params];
    buffers.extend(inputs.iter().map(|(_, s)| BufferRef::Input(*s)));
    buffers.push(BufferRef::Output(output_slot));
    plan.passes.push(Pass {
        kernel,
        buffers,
        params: p,
        workgroups: work.div_ceil(ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE)),
    });
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DataType;

    #[test]
    fn lays_inputs_end_to_end() {
        let a = HostTensor::from_slice([2, 1], &[1u8, 2]).unwrap();
        let b = HostTensor::from_slice([2, 2], &[3u8, 4, 5, 6]).unwrap();
        let out = concat_cpu(&[&a, &b], &TensorDesc::new(DataType::Uint8, [2, 3]), 1).unwrap();
        assert_eq!(out.to_vec::<u8>().unwrap(), [1, 3, 4, 2, 5, 6]);
        let rows = concat_cpu(&[&b, &b], &TensorDesc::new(DataType::Uint8, [4, 2]), 0).unwrap();
        assert_eq!(rows.to_vec::<u8>().unwrap(), [3, 4, 5, 6, 3, 4, 5, 6]);
        // Sizes that do not add up are refused.
        assert!(concat_cpu(&[&a, &b], &TensorDesc::new(DataType::Uint8, [2, 4]), 1).is_err());
        assert!(concat_cpu(&[&a, &b], &TensorDesc::new(DataType::Uint8, [4, 1]), 0).is_err());
    }
}
