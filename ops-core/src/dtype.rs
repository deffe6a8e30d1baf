//! The tensor data types (the eleven of the seed tables and ONNX's `BOOL`)
//! and the host element trait.

use std::fmt;

use half::f16;

/// A tensor element data type, named as in the DirectML tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    /// IEEE 754 binary64.
    Float64,
    /// IEEE 754 binary32.
    Float32,
    /// IEEE 754 binary16.
    Float16,
    /// Two's complement 64-bit integer.
    Int64,
    /// Two's complement 32-bit integer.
    Int32,
    /// Two's complement 16-bit integer.
    Int16,
    /// Two's complement 8-bit integer.
    Int8,
    /// Unsigned 64-bit integer.
    Uint64,
    /// Unsigned 32-bit integer.
    Uint32,
    /// Unsigned 16-bit integer.
    Uint16,
    /// Unsigned 8-bit integer.
    Uint8,
    /// A boolean, one byte holding 0 (false) or 1 (true) (ONNX `bool`).
    /// Packed and compared like `UINT8`: false orders below true.
    Bool,
}

impl DataType {
    /// Every data type, in the order the seed tables list them, then `BOOL`.
    pub const ALL: [DataType; 12] = [
        DataType::Float64,
        DataType::Float32,
        DataType::Float16,
        DataType::Int64,
        DataType::Int32,
        DataType::Int16,
        DataType::Int8,
        DataType::Uint64,
        DataType::Uint32,
        DataType::Uint16,
        DataType::Uint8,
        DataType::Bool,
    ];

    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> usize {
        match self {
            DataType::Float64 | DataType::Int64 | DataType::Uint64 => 8,
            DataType::Float32 | DataType::Int32 | DataType::Uint32 => 4,
            DataType::Float16 | DataType::Int16 | DataType::Uint16 => 2,
            DataType::Int8 | DataType::Uint8 | DataType::Bool => 1,
        }
    }

    /// Size of one element in bits.
    pub const fn size_bits(self) -> u32 {
        self.size_bytes() as u32 * 8
    }

    /// The name used by the DirectML documents and spec files (`FLOAT16`).
    pub const fn spec_name(self) -> &'static str {
        match self {
            DataType::Float64 => "FLOAT64",
            DataType::Float32 => "FLOAT32",
            DataType::Float16 => "FLOAT16",
            DataType::Int64 => "INT64",
            DataType::Int32 => "INT32",
            DataType::Int16 => "INT16",
            DataType::Int8 => "INT8",
            DataType::Uint64 => "UINT64",
            DataType::Uint32 => "UINT32",
            DataType::Uint16 => "UINT16",
            DataType::Uint8 => "UINT8",
            DataType::Bool => "BOOL",
        }
    }

    /// The lower-case name used by case files (`float16`).
    pub const fn case_name(self) -> &'static str {
        match self {
            DataType::Float64 => "float64",
            DataType::Float32 => "float32",
            DataType::Float16 => "float16",
            DataType::Int64 => "int64",
            DataType::Int32 => "int32",
            DataType::Int16 => "int16",
            DataType::Int8 => "int8",
            DataType::Uint64 => "uint64",
            DataType::Uint32 => "uint32",
            DataType::Uint16 => "uint16",
            DataType::Uint8 => "uint8",
            DataType::Bool => "bool",
        }
    }

    /// Parses either spelling, ignoring case.
    pub fn parse(name: &str) -> Option<DataType> {
        DataType::ALL
            .into_iter()
            .find(|t| t.spec_name().eq_ignore_ascii_case(name))
    }

    /// True for the three floating-point types.
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            DataType::Float64 | DataType::Float32 | DataType::Float16
        )
    }

    /// True for the signed integer types.
    pub const fn is_signed_int(self) -> bool {
        matches!(
            self,
            DataType::Int64 | DataType::Int32 | DataType::Int16 | DataType::Int8
        )
    }

    /// True for every integer type, signed or not (not `BOOL`).
    pub const fn is_int(self) -> bool {
        !self.is_float() && !self.is_bool()
    }

    /// True for `BOOL`.
    pub const fn is_bool(self) -> bool {
        matches!(self, DataType::Bool)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec_name())
    }
}

/// A Rust type that stores one tensor element of a [`DataType`].
///
/// Implemented for `f64`, `f32`, [`half::f16`], the eight integer types and
/// `bool`.
pub trait Element: Copy + Send + Sync + fmt::Debug + PartialEq + 'static {
    /// The data type this Rust type stores.
    const DTYPE: DataType;
    /// Reads one element from little-endian bytes (`bytes.len() == size_bytes`).
    fn read_le(bytes: &[u8]) -> Self;
    /// Appends the element's little-endian bytes.
    fn write_le(self, out: &mut Vec<u8>);
    /// The value as an `i128`, for integer types and `bool` (0 or 1); `None`
    /// for floats.
    fn to_i128(self) -> Option<i128>;
    /// Converts an integer back, `None` when it does not fit (or for floats).
    fn from_i128(v: i128) -> Option<Self>;
    /// The value as `f64` (exact for every type but the 64-bit integers).
    fn to_f64(self) -> f64;
    /// True for a floating-point NaN.
    fn is_nan(self) -> bool;
    /// True for a negative floating-point zero.
    fn is_negative_zero(self) -> bool;
    /// Numeric comparison; `None` when either side is NaN.
    fn partial_cmp_value(self, other: Self) -> Option<std::cmp::Ordering>;
}

macro_rules! impl_int_element {
    ($($t:ty => $dt:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DataType = DataType::$dt;
            fn read_le(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                <$t>::from_le_bytes(a)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn to_i128(self) -> Option<i128> {
                Some(self as i128)
            }
            fn from_i128(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn is_nan(self) -> bool {
                false
            }
            fn is_negative_zero(self) -> bool {
                false
            }
            fn partial_cmp_value(self, other: Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(&other))
            }
        }
    )*};
}

impl_int_element!(
    i64 => Int64, i32 => Int32, i16 => Int16, i8 => Int8,
    u64 => Uint64, u32 => Uint32, u16 => Uint16, u8 => Uint8,
);

macro_rules! impl_float_element {
    ($($t:ty => $dt:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DataType = DataType::$dt;
            fn read_le(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                <$t>::from_le_bytes(a)
            }
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn to_i128(self) -> Option<i128> {
                None
            }
            fn from_i128(_: i128) -> Option<Self> {
                None
            }
            fn to_f64(self) -> f64 {
                self.into()
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_negative_zero(self) -> bool {
                self == <$t>::from(0u8) && self.is_sign_negative()
            }
            fn partial_cmp_value(self, other: Self) -> Option<std::cmp::Ordering> {
                self.partial_cmp(&other)
            }
        }
    )*};
}

impl_float_element!(f64 => Float64, f32 => Float32, f16 => Float16);

/// `BOOL`: one byte, 0 or 1. A byte other than 0 reads as true (tensors
/// holding one are refused by [`crate::HostTensor::from_bytes`]).
impl Element for bool {
    const DTYPE: DataType = DataType::Bool;
    fn read_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn to_i128(self) -> Option<i128> {
        Some(i128::from(self))
    }
    fn from_i128(v: i128) -> Option<Self> {
        match v {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
    fn is_nan(self) -> bool {
        false
    }
    fn is_negative_zero(self) -> bool {
        false
    }
    fn partial_cmp_value(self, other: Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(&other))
    }
}

/// Calls `$body` with the type alias `$T` bound to the Rust element type of `$dtype`.
///
/// Generated code and the pattern library use it to turn a run-time
/// [`DataType`] into a monomorphic call.
#[macro_export]
macro_rules! with_element_type {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DataType::Float64 => {
                type $T = f64;
                $body
            }
            $crate::DataType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DataType::Float16 => {
                type $T = $crate::f16;
                $body
            }
            $crate::DataType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::DataType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DataType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::DataType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DataType::Uint64 => {
                type $T = u64;
                $body
            }
            $crate::DataType::Uint32 => {
                type $T = u32;
                $body
            }
            $crate::DataType::Uint16 => {
                type $T = u16;
                $body
            }
            $crate::DataType::Uint8 => {
                type $T = u8;
                $body
            }
            $crate::DataType::Bool => {
                type $T = bool;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in DataType::ALL {
            assert_eq!(DataType::parse(t.spec_name()), Some(t));
            assert_eq!(DataType::parse(t.case_name()), Some(t));
        }
        assert_eq!(DataType::parse("FLOAT61"), None);
    }

    #[test]
    fn element_bytes_round_trip() {
        let mut v = Vec::new();
        (-2i64.pow(40)).write_le(&mut v);
        assert_eq!(i64::read_le(&v), -2i64.pow(40));
        assert!(f16::from_bits(0x8000).is_negative_zero());
        assert!(!f32::NAN.is_negative_zero());
        assert_eq!(u8::from_i128(256), None);
        assert_eq!(bool::from_i128(1), Some(true));
        assert_eq!(bool::from_i128(2), None);
        assert_eq!(DataType::parse("bool"), Some(DataType::Bool));
        assert!(!DataType::Bool.is_int() && !DataType::Bool.is_float());
    }
}
