//! Tensor descriptions and host tensors.

use crate::{DataType, Element, OpError};

/// A tensor's data type, sizes and optional strides, as a DirectML
/// `DML_BUFFER_TENSOR_DESC`.
///
/// Without strides the tensor is packed, row-major. With strides (in
/// elements, one per dimension, outermost first) element `c` of the
/// logical tensor lies at `sum(c[d] * strides[d])` of its buffer: a stride
/// of 0 repeats the lower dimensions (DirectML's broadcasting), a stride
/// larger than the packed one leaves padding, and a permutation of the
/// packed strides is another layout (NHWC data under NCHW sizes). Only
/// operators whose [`crate::OperatorInfo::strided_inputs`] is set accept
/// strided inputs; every output is packed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorDesc {
    /// Element data type.
    pub dtype: DataType,
    /// Sizes, outermost first. The dimension count is `sizes.len()`.
    pub sizes: Vec<u32>,
    /// Strides in elements, one per dimension (`DML_BUFFER_TENSOR_DESC.Strides`);
    /// `None` for a packed tensor.
    pub strides: Option<Vec<u64>>,
}

impl TensorDesc {
    /// A packed description from a data type and sizes.
    pub fn new(dtype: DataType, sizes: impl Into<Vec<u32>>) -> TensorDesc {
        TensorDesc {
            dtype,
            sizes: sizes.into(),
            strides: None,
        }
    }

    /// The same description laid out with `strides` (in elements, one per
    /// dimension).
    pub fn with_strides(mut self, strides: impl Into<Vec<u64>>) -> TensorDesc {
        self.strides = Some(strides.into());
        self
    }

    /// True without strides, and with the packed strides themselves.
    pub fn is_packed(&self) -> bool {
        match &self.strides {
            None => true,
            Some(s) => *s == self.packed_strides(),
        }
    }

    /// Each dimension's stride in elements: the declared strides, or the
    /// packed ones.
    pub fn element_strides(&self) -> Vec<u64> {
        self.strides
            .clone()
            .unwrap_or_else(|| self.packed_strides())
    }

    /// The elements the buffer holds: the element count when packed, one
    /// past the furthest element's offset with strides (DirectML's
    /// `DMLCalcBufferTensorSize` in elements); `None` on overflow.
    pub fn buffer_elements(&self) -> Option<u64> {
        let Some(strides) = &self.strides else {
            return self.element_count();
        };
        if self.element_count()? == 0 {
            return Some(0);
        }
        self.sizes
            .iter()
            .zip(strides)
            .try_fold(1u64, |acc, (&n, &s)| {
                acc.checked_add(u64::from(n - 1).checked_mul(s)?)
            })
    }

    /// Checks the strides against the sizes: one per dimension. The
    /// message is in `DML_BUFFER_TENSOR_DESC`'s words.
    pub fn check_strides(&self) -> Result<(), String> {
        match &self.strides {
            Some(s) if s.len() != self.sizes.len() => Err(format!(
                "Strides must have DimensionCount ({}) elements; it has {}",
                self.sizes.len(),
                s.len()
            )),
            _ => Ok(()),
        }
    }

    /// The dimension count.
    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    /// The element count ([`element_count`] of the sizes): 0 when a
    /// dimension is 0, `None` on overflow of `u64`.
    pub fn element_count(&self) -> Option<u64> {
        element_count(&self.sizes)
    }

    /// The byte size of the buffer ([`TensorDesc::buffer_elements`] of
    /// them), `None` on overflow.
    pub fn byte_size(&self) -> Option<u64> {
        self.buffer_elements()?
            .checked_mul(self.dtype.size_bytes() as u64)
    }

    /// Packed row-major strides in elements.
    pub fn packed_strides(&self) -> Vec<u64> {
        row_major_strides(&self.sizes)
    }
}

/// The element count of a tensor of `sizes`: the product of the sizes, 0
/// when any of them is 0 (whatever the others, in any order), `None` when
/// the product of non-zero sizes overflows `u64`. Every element count of the
/// framework is this one.
pub fn element_count(sizes: &[u32]) -> Option<u64> {
    if sizes.contains(&0) {
        return Some(0);
    }
    sizes
        .iter()
        .try_fold(1u64, |acc, &s| acc.checked_mul(u64::from(s)))
}

/// Row-major strides, in elements, for `sizes`.
pub fn row_major_strides(sizes: &[u32]) -> Vec<u64> {
    let mut strides = vec![1u64; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].saturating_mul(u64::from(sizes[d + 1]));
    }
    strides
}

/// A tensor in host memory: a description plus its elements as little-endian bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostTensor {
    desc: TensorDesc,
    bytes: Vec<u8>,
}

impl HostTensor {
    /// A tensor from a description and raw little-endian bytes.
    ///
    /// Fails when the byte count does not match the description, and for a
    /// `BOOL` tensor holding a byte other than 0 or 1.
    pub fn from_bytes(desc: TensorDesc, bytes: Vec<u8>) -> Result<HostTensor, OpError> {
        desc.check_strides().map_err(OpError::InvalidArgument)?;
        let want = desc.byte_size().ok_or_else(|| OpError::TooLarge {
            what: "tensor".into(),
            limit: "element count overflows u64".into(),
        })?;
        if want != bytes.len() as u64 {
            return Err(OpError::InvalidArgument(format!(
                "a {} tensor of sizes {:?} holds {} bytes, got {}",
                desc.dtype,
                desc.sizes,
                want,
                bytes.len()
            )));
        }
        if desc.dtype == DataType::Bool {
            if let Some(i) = bytes.iter().position(|&b| b > 1) {
                return Err(OpError::InvalidArgument(format!(
                    "a BOOL tensor holds 0 or 1 in each byte, element {i} is {}",
                    bytes[i]
                )));
            }
        }
        Ok(HostTensor { desc, bytes })
    }

    /// A tensor from typed elements.
    pub fn from_slice<T: Element>(
        sizes: impl Into<Vec<u32>>,
        data: &[T],
    ) -> Result<HostTensor, OpError> {
        let desc = TensorDesc::new(T::DTYPE, sizes);
        let mut bytes = Vec::with_capacity(data.len() * T::DTYPE.size_bytes());
        for &v in data {
            v.write_le(&mut bytes);
        }
        HostTensor::from_bytes(desc, bytes)
    }

    /// A zero-filled tensor.
    ///
    /// Fails with [`OpError::TooLarge`] when the byte size does not fit the
    /// host's address space and with [`OpError::OutOfMemory`] when the host
    /// cannot allocate it (never aborting the process).
    pub fn zeros(desc: TensorDesc) -> Result<HostTensor, OpError> {
        desc.check_strides().map_err(OpError::InvalidArgument)?;
        let n = desc.byte_size().ok_or_else(|| OpError::TooLarge {
            what: "tensor".into(),
            limit: "element count overflows u64".into(),
        })?;
        let n = usize::try_from(n).map_err(|_| OpError::TooLarge {
            what: "tensor".into(),
            limit: "host address space".into(),
        })?;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(n).map_err(|e| {
            OpError::OutOfMemory(format!(
                "a host tensor of {n} bytes (sizes {:?}): {e}",
                desc.sizes
            ))
        })?;
        bytes.resize(n, 0);
        Ok(HostTensor { desc, bytes })
    }

    /// The description.
    pub fn desc(&self) -> &TensorDesc {
        &self.desc
    }

    /// The data type.
    pub fn dtype(&self) -> DataType {
        self.desc.dtype
    }

    /// The sizes.
    pub fn sizes(&self) -> &[u32] {
        &self.desc.sizes
    }

    /// The raw little-endian bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Consumes the tensor, returning its bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The element count.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.desc.dtype.size_bytes()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The elements as `T`; `None` when `T` is not the tensor's data type.
    pub fn to_vec<T: Element>(&self) -> Option<Vec<T>> {
        if T::DTYPE != self.desc.dtype {
            return None;
        }
        Some(
            self.bytes
                .chunks_exact(T::DTYPE.size_bytes())
                .map(T::read_le)
                .collect(),
        )
    }

    /// Element `i` as `T` (panics if out of range or of another type: for
    /// generated code that checked both).
    pub fn get<T: Element>(&self, i: usize) -> T {
        debug_assert_eq!(T::DTYPE, self.desc.dtype);
        let n = T::DTYPE.size_bytes();
        T::read_le(&self.bytes[i * n..(i + 1) * n])
    }

    /// Element `i` of an integer tensor as `i128`; `None` for float tensors or out of range.
    pub fn get_int(&self, i: usize) -> Option<i128> {
        if i >= self.len() {
            return None;
        }
        crate::with_element_type!(self.desc.dtype, T => self.get::<T>(i).to_i128())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    #[test]
    fn typed_round_trip() {
        let t = HostTensor::from_slice(
            [2, 2],
            &[f16::from_f32(1.5), f16::NAN, f16::NEG_ZERO, f16::MAX],
        )
        .unwrap();
        assert_eq!(t.bytes().len(), 8);
        let back = t.to_vec::<f16>().unwrap();
        assert_eq!(back[0], f16::from_f32(1.5));
        assert!(back[1].is_nan());
        assert!(t.to_vec::<f32>().is_none());
        assert!(HostTensor::from_bytes(TensorDesc::new(DataType::Int8, [3]), vec![0; 2]).is_err());
        // 2^62 bytes fit u64 and usize but no host: an error, not an abort.
        let huge = TensorDesc::new(DataType::Uint8, [1 << 31, 1 << 31]);
        assert!(matches!(
            HostTensor::zeros(huge),
            Err(OpError::OutOfMemory(_))
        ));
        let bools = TensorDesc::new(DataType::Bool, [3]);
        assert!(HostTensor::from_bytes(bools.clone(), vec![0, 1, 2]).is_err());
        let b = HostTensor::from_bytes(bools, vec![0, 1, 1]).unwrap();
        assert_eq!(b.to_vec::<bool>().unwrap(), [false, true, true]);
        assert_eq!(b.get_int(1), Some(1));
        let zeros = HostTensor::zeros(TensorDesc::new(DataType::Float16, [3, 2])).unwrap();
        assert_eq!(zeros.bytes(), &[0u8; 12]);
    }

    #[test]
    fn a_zero_dimension_makes_zero_elements_in_any_order() {
        let m = u32::MAX;
        assert_eq!(element_count(&[m, m, m, 0]), Some(0));
        assert_eq!(element_count(&[0, m, m, m]), Some(0));
        assert_eq!(element_count(&[m, m, m]), None);
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[m, m]), Some(u64::from(m) * u64::from(m)));
        let d = TensorDesc::new(DataType::Float64, [m, m, m, 0]);
        assert_eq!(d.byte_size(), Some(0));
        assert!(HostTensor::zeros(d).unwrap().is_empty());
    }

    #[test]
    fn strides() {
        assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(row_major_strides(&[]), Vec::<u64>::new());
    }
}
