//! The run-time half of the `pad` family: each output element is the input element at its
//! coordinates shifted back by the padding before each dimension, or, where
//! that falls outside the input, what the mode says (ONNX Pad, DirectML
//! PADDING1).
//!
//! ```text
//! i_d = c_d - begin_d
//! constant: input[i] when every i_d is inside, else the constant value
//! edge:     input[clamp(i_d, 0, dim_d - 1)]
//! reflect:  input[i_d mirrored at the edges, the edge element once]   (… 2 1 | 0 1 2 | 1 0 …)
//! symmetric: input[i_d mirrored at the edges, the edge element twice] (… 1 0 | 0 1 2 | 2 1 …)
//! wrap:     input[i_d mod dim_d]
//! ```
//!
//! Negative paddings crop first: the modes fill from the cropped input (its
//! [`Window`] in each dimension), as ONNX's reference slices before numpy's
//! `pad`. The output's sizes are the spec's (the input's plus both
//! paddings). Elements move as raw bits. The constant
//! ([`PadConstant`]) is a raw element of the data type from a host tensor
//! (ONNX Pad's `constant_value`), or a scalar attribute (DirectML PADDING1's
//! `PaddingValue`) converted to the data type as `cast<T>` converts it
//! ([`crate::scalar::cast_value`]). An input with a dimension of size 0 has no
//! element to repeat: only the constant mode pads it (the other modes are
//! an [`OpError::InvalidArgument`] unless the output is empty too).

use crate::scalar::{cast_value, Value};
use crate::{
    BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, TensorDesc,
};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// Most dimensions the kernels walk.
pub const MAX_DIMS: usize = 8;

/// How coordinates outside the input are filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// With a constant value.
    Constant,
    /// With the nearest edge element.
    Edge,
    /// Mirrored, the edge element once.
    Reflect,
    /// Mirrored, the edge element twice.
    Symmetric,
    /// Wrapped around.
    Wrap,
}

impl PadMode {
    /// Every mode.
    pub const ALL: [PadMode; 5] = [
        PadMode::Constant,
        PadMode::Edge,
        PadMode::Reflect,
        PadMode::Symmetric,
        PadMode::Wrap,
    ];

    /// The mode's name in specs and kernel keys.
    pub const fn name(self) -> &'static str {
        match self {
            PadMode::Constant => "constant",
            PadMode::Edge => "edge",
            PadMode::Reflect => "reflect",
            PadMode::Symmetric => "symmetric",
            PadMode::Wrap => "wrap",
        }
    }
}

/// Where the constant of [`PadMode::Constant`] comes from (the other modes
/// ignore it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadConstant<'a> {
    /// Element 0 of a host tensor of the data type, as raw bits; zeros
    /// when the tensor is absent or empty (ONNX Pad's `constant_value`).
    Element(Option<&'a HostTensor>),
    /// A scalar (an attribute's value: [`Value::F`] for a float attribute,
    /// [`Value::I`] for an integer one, [`Value::B`] for a boolean),
    /// converted to the data type as `cast<T>(value)` converts it
    /// ([`cast_value`]): rounded once to nearest even to a float type (a
    /// FLOAT16 overflows to infinity from 65520; NaN stays NaN); truncated
    /// toward zero to an integer type, saturating at its `MIN`/`MAX`, NaN
    /// giving 0; an integer wraps to an integer type; to BOOL, `value != 0`.
    Value(Value),
}

super::super::param_words! {
    /// The parameter words of the kernel (the uniform `params` block):
    ///
    /// | words | meaning |
    /// | --- | --- |
    /// | 0 | output element count |
    /// | 1 | work items |
    /// | 2, 3 | the constant, as raw words (low first) |
    /// | 4 | the offset of the cropped input's first element |
    /// | 8..16 | output sizes (unused slots 1) |
    /// | 16..24 | cropped input sizes (unused slots 1) |
    /// | 24..32 | paddings before each dimension, not below 0 |
    /// | 32..40 | input strides in elements (unused slots 0) |
    pub mod params [40] {
        /// Output element count.
        OUTPUT_COUNT = 0,
        /// Work items.
        WORK_COUNT = 1,
        /// The constant's first word.
        CONSTANT = 2,
        /// The offset of the cropped input's first element.
        CROP_OFFSET = 4,
        /// First output size.
        OUT_SIZES = 8,
        /// First input size.
        IN_SIZES = 16,
        /// First padding before a dimension.
        BEGINS = 24,
        /// First input stride.
        STRIDES = 32,
    }
}

/// The kernel bindings: params (uniform), input, output.
pub const BINDINGS: &[crate::Access] = &[
    crate::Access::Uniform,
    crate::Access::Read,
    crate::Access::ReadWrite,
];

fn invalid(m: String) -> OpError {
    OpError::InvalidArgument(m)
}

/// The input coordinate output coordinate `c` reads along a dimension of
/// `dim` input elements padded by `begin` before it, `None` for the
/// constant.
pub fn source_coordinate(mode: PadMode, c: u64, begin: i64, dim: u64) -> Option<u64> {
    let i = i128::from(c) - i128::from(begin);
    let n = i128::from(dim);
    if (0..n).contains(&i) {
        return Some(i as u64);
    }
    if n == 0 {
        return None;
    }
    let j = match mode {
        PadMode::Constant => return None,
        PadMode::Edge => i.clamp(0, n - 1),
        PadMode::Wrap => i.rem_euclid(n),
        PadMode::Reflect => {
            if n == 1 {
                0
            } else {
                let period = 2 * (n - 1);
                let k = i.rem_euclid(period);
                if k < n {
                    k
                } else {
                    period - k
                }
            }
        }
        PadMode::Symmetric => {
            let period = 2 * n;
            let k = i.rem_euclid(period);
            if k < n {
                k
            } else {
                period - 1 - k
            }
        }
    };
    Some(j as u64)
}

/// The part of one input dimension that the modes fill from: negative
/// paddings crop first, the rest pads the cropped extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The first input coordinate kept (0 when nothing is kept).
    pub start: u64,
    /// How many input coordinates are kept (0 when the crops meet).
    pub size: u64,
    /// The padding before the kept coordinates, not below 0.
    pub begin: i64,
}

impl Window {
    /// The window of a dimension of `dim` input elements padded by `begin`
    /// before it into `out` output elements (the padding after is
    /// `out - dim - begin`).
    pub fn new(dim: u64, begin: i64, out: u64) -> Window {
        let (dim_i, begin_i) = (i128::from(dim), i128::from(begin));
        let end = i128::from(out) - dim_i - begin_i;
        let start = (-begin_i).max(0);
        let size = (dim_i - (-end).max(0) - start).max(0);
        Window {
            start: if size == 0 { 0 } else { start as u64 },
            size: size as u64,
            begin: begin.max(0),
        }
    }

    /// The input coordinate output coordinate `c` reads in `mode`, `None`
    /// for the constant.
    pub fn source(&self, mode: PadMode, c: u64) -> Option<u64> {
        source_coordinate(mode, c, self.begin, self.size).map(|i| self.start + i)
    }
}

/// The [`Window`] of each dimension.
fn windows(input: &TensorDesc, output: &TensorDesc, begins: &[i64]) -> Vec<Window> {
    (0..input.rank())
        .map(|d| {
            Window::new(
                u64::from(input.sizes[d]),
                begins[d],
                u64::from(output.sizes[d]),
            )
        })
        .collect()
}

fn check_call(
    mode: PadMode,
    input: &TensorDesc,
    output: &TensorDesc,
    begins: &[i64],
) -> Result<(), OpError> {
    if output.dtype != input.dtype {
        return Err(invalid(format!(
            "the output data type {} must be the input's {}",
            output.dtype, input.dtype
        )));
    }
    if begins.len() != input.rank() || output.rank() != input.rank() {
        return Err(invalid(format!(
            "a pad of {} dimensions needs the output's rank and one padding each, got {:?} and {begins:?}",
            input.rank(),
            output.sizes
        )));
    }
    let input_count = input.element_count().unwrap_or(u64::MAX);
    let output_count = output.element_count().unwrap_or(u64::MAX);
    let cropped_empty = windows(input, output, begins).iter().any(|w| w.size == 0);
    if mode != PadMode::Constant && cropped_empty && output_count > 0 {
        return Err(invalid(format!(
            "{} padding has no element to repeat in an empty input (sizes {:?}, paddings before {begins:?}, after cropping)",
            mode.name(),
            input.sizes
        )));
    }
    if output_count > u64::from(u32::MAX) || input_count > u64::from(u32::MAX) {
        return Err(OpError::TooLarge {
            what: format!("a pad of {input_count} elements into {output_count}"),
            limit: "u32 element addressing (as on the GPU)".into(),
        });
    }
    Ok(())
}

/// The raw bytes of the constant, of the input's data type `dtype` (see
/// [`PadConstant`]).
fn constant_bytes(dtype: DataType, constant: PadConstant<'_>) -> Result<Vec<u8>, OpError> {
    let width = dtype.size_bytes();
    match constant {
        PadConstant::Element(Some(c)) if !c.is_empty() => {
            if c.dtype() != dtype {
                return Err(invalid(format!(
                    "the constant value is {}, the data {dtype}",
                    c.dtype()
                )));
            }
            Ok(c.bytes()[..width].to_vec())
        }
        PadConstant::Element(_) => Ok(vec![0; width]),
        PadConstant::Value(v) => {
            let mut bytes = Vec::with_capacity(width);
            crate::scalar::write_value(cast_value(v, dtype), dtype, &mut bytes);
            Ok(bytes)
        }
    }
}

/// The CPU reference: the output described by `output`, each element the
/// input element [`Window::source`] names in every dimension, or the
/// constant ([`PadConstant`]).
pub fn pad_cpu(
    mode: PadMode,
    input: &HostTensor,
    output: &TensorDesc,
    begins: &[i64],
    constant: PadConstant<'_>,
) -> Result<HostTensor, OpError> {
    check_call(mode, input.desc(), output, begins)?;
    let value = constant_bytes(input.dtype(), constant)?;
    let width = input.dtype().size_bytes();
    let strides = input.desc().packed_strides();
    let windows = windows(input.desc(), output, begins);
    let count = output.element_count().unwrap_or(0);
    let mut bytes = Vec::with_capacity(count as usize * width);
    for o in 0..count {
        let mut rest = o;
        let mut offset = Some(0u64);
        for d in (0..output.rank()).rev() {
            let size = u64::from(output.sizes[d]).max(1);
            let c = rest % size;
            rest /= size;
            offset = match (offset, windows[d].source(mode, c)) {
                (Some(s), Some(i)) => Some(s + i * strides[d]),
                _ => None,
            };
        }
        match offset {
            Some(s) => {
                let s = s as usize * width;
                bytes.extend_from_slice(&input.bytes()[s..s + width]);
            }
            None => bytes.extend_from_slice(&value),
        }
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// The GPU plan: one pass of `kernel` (the generated kernel of this data
/// type and mode, workgroup size [`WORKGROUP_SIZE`]; `None` fails with
/// [`OpError::Unsupported`]) binding `[Params, Input(input_slot),
/// Output(output_slot)]`; the output (`output_slot + 1` outputs,
/// [`OutputInit::Overwritten`]) is stored whole. An empty output has no
/// pass.
#[allow(clippy::too_many_arguments)]
pub fn pad_plan(
    mode: PadMode,
    input: &TensorDesc,
    input_slot: usize,
    output: &TensorDesc,
    output_slot: usize,
    begins: &[i64],
    constant: PadConstant<'_>,
    kernel: Option<&'static Kernel>,
) -> Result<GpuPlan, OpError> {
    check_call(mode, input, output, begins)?;
    let kernel = kernel.ok_or_else(|| {
        OpError::Unsupported(format!(
            "no {} pad kernel for {} data",
            mode.name(),
            input.dtype
        ))
    })?;
    if input.rank() > MAX_DIMS {
        return Err(OpError::TooLarge {
            what: format!("a pad of {} dimensions", input.rank()),
            limit: format!("{MAX_DIMS} dimensions"),
        });
    }
    let count = output.element_count().unwrap_or(0);
    let work = crate::family::word_items(count, input.dtype);
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
    let mut value = constant_bytes(input.dtype, constant)?;
    value.resize(8, 0);
    p[params::CONSTANT] = u32::from_le_bytes([value[0], value[1], value[2], value[3]]);
    p[params::CONSTANT + 1] = u32::from_le_bytes([value[4], value[5], value[6], value[7]]);
    let strides = input.packed_strides();
    let windows = windows(input, output, begins);
    // Below the input's element count, a u32 (checked above).
    p[params::CROP_OFFSET] = windows
        .iter()
        .zip(&strides)
        .map(|(w, s)| w.start * s)
        .sum::<u64>() as u32;
    for d in 0..MAX_DIMS {
        p[params::OUT_SIZES + d] = output.sizes.get(d).copied().unwrap_or(1);
        // A kept size is at most the input's, a u32.
        p[params::IN_SIZES + d] = windows.get(d).map_or(1, |w| w.size as u32);
        let begin = windows.get(d).map_or(0, |w| w.begin);
        p[params::BEGINS + d] = i32::try_from(begin).map_err(|_| OpError::TooLarge {
            what: format!("a padding of {begin}"),
            limit: "i32 paddings of the pad kernels".into(),
        })? as u32;
        p[params::STRIDES + d] = strides.get(d).copied().unwrap_or(0) as u32;
    }
    plan.passes.push(Pass {
        kernel,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(input_slot),
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
    fn modes_mirror_clamp_and_wrap() {
        let at = |mode, c| source_coordinate(mode, c, 3, 3);
        // Output coordinates 0..9 over a dimension of 3 padded by 3 before.
        let run = |mode| (0..9).map(|c| at(mode, c)).collect::<Vec<_>>();
        let s = |v: &[u64]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        assert_eq!(run(PadMode::Edge), s(&[0, 0, 0, 0, 1, 2, 2, 2, 2]));
        assert_eq!(run(PadMode::Reflect), s(&[1, 2, 1, 0, 1, 2, 1, 0, 1]));
        assert_eq!(run(PadMode::Symmetric), s(&[2, 1, 0, 0, 1, 2, 2, 1, 0]));
        assert_eq!(run(PadMode::Wrap), s(&[0, 1, 2, 0, 1, 2, 0, 1, 2]));
        assert_eq!(run(PadMode::Constant)[..4], [None, None, None, Some(0)]);
        // A negative padding crops; a dimension of one reflects to itself.
        assert_eq!(source_coordinate(PadMode::Constant, 0, -2, 5), Some(2));
        assert_eq!(source_coordinate(PadMode::Reflect, 0, 4, 1), Some(0));
        let x = HostTensor::from_slice([2, 2], &[1i16, 2, 3, 4]).unwrap();
        let out = pad_cpu(
            PadMode::Constant,
            &x,
            &TensorDesc::new(DataType::Int16, [3, 3]),
            &[1, 0],
            PadConstant::Element(Some(&HostTensor::from_slice([1], &[-7i16]).unwrap())),
        )
        .unwrap();
        assert_eq!(
            out.to_vec::<i16>().unwrap(),
            [-7, -7, -7, 1, 2, -7, 3, 4, -7]
        );
        let empty = HostTensor::zeros(TensorDesc::new(DataType::Int16, [0, 2])).unwrap();
        assert!(pad_cpu(
            PadMode::Edge,
            &empty,
            &TensorDesc::new(DataType::Int16, [1, 2]),
            &[1, 0],
            PadConstant::Element(None)
        )
        .is_err());
    }

    #[test]
    fn negative_pads_crop_before_the_modes_fill() {
        let x = HostTensor::from_slice([3], &[1i32, 2, 3]).unwrap();
        let run = |mode, out: u32, begin| {
            pad_cpu(
                mode,
                &x,
                &TensorDesc::new(DataType::Int32, [out]),
                &[begin],
                PadConstant::Element(None),
            )
            .unwrap()
            .to_vec::<i32>()
            .unwrap()
        };
        // Pads [1, -1]: [1, 2] padded by one before (numpy's `pad` of the
        // slice, as ONNX's reference computes it).
        assert_eq!(run(PadMode::Wrap, 3, 1), [2, 1, 2]);
        assert_eq!(run(PadMode::Reflect, 3, 1), [2, 1, 2]);
        assert_eq!(run(PadMode::Edge, 3, 1), [1, 1, 2]);
        assert_eq!(run(PadMode::Constant, 3, 1), [0, 1, 2]);
        // Pads [-1, 2]: [2, 3] padded by two after.
        assert_eq!(run(PadMode::Wrap, 4, -1), [2, 3, 2, 3]);
        assert_eq!(run(PadMode::Reflect, 4, -1), [2, 3, 2, 3]);
        assert_eq!(run(PadMode::Edge, 4, -1), [2, 3, 3, 3]);
        // Pads [-4, 2]: nothing kept, only a constant fills.
        assert_eq!(run(PadMode::Constant, 1, -4), [0]);
        assert!(pad_cpu(
            PadMode::Wrap,
            &x,
            &TensorDesc::new(DataType::Int32, [2]),
            &[-3],
            PadConstant::Element(None),
        )
        .is_err());
    }

    #[test]
    fn value_constants_convert_as_casts() {
        let bytes = |dt, v| constant_bytes(dt, PadConstant::Value(v)).unwrap();
        assert_eq!(bytes(DataType::Int8, Value::F(-300.7)), [0x80]);
        assert_eq!(bytes(DataType::Uint8, Value::F(9.9)), [9]);
        assert_eq!(bytes(DataType::Uint16, Value::F(f64::NAN)), [0, 0]);
        assert_eq!(bytes(DataType::Float16, Value::F(65520.0)), [0x00, 0x7c]);
        assert_eq!(bytes(DataType::Float16, Value::F(-0.0)), [0x00, 0x80]);
        assert_eq!(
            bytes(DataType::Float32, Value::F(0.1)),
            0.1f32.to_le_bytes()
        );
        assert_eq!(
            bytes(DataType::Float64, Value::F(0.1)),
            0.1f64.to_le_bytes()
        );
        assert_eq!(
            bytes(DataType::Int64, Value::F(-2.5)),
            (-2i64).to_le_bytes()
        );
        assert_eq!(
            bytes(DataType::Uint64, Value::F(1e30)),
            u64::MAX.to_le_bytes()
        );
        assert_eq!(
            bytes(DataType::Int16, Value::I(70_000)),
            4464i16.to_le_bytes()
        );
        let x = HostTensor::from_slice([2], &[1u8, 2]).unwrap();
        let out = pad_cpu(
            PadMode::Constant,
            &x,
            &TensorDesc::new(DataType::Uint8, [5]),
            &[1],
            PadConstant::Value(Value::F(255.5)),
        )
        .unwrap();
        assert_eq!(out.to_vec::<u8>().unwrap(), [255, 1, 2, 255, 255]);
    }
}
