//! Input data for fuzzing: edge values of every data type, ties, and index
//! data that is mostly in range, collides often and sometimes is not.

use proptest::prelude::{Rng as _, RngExt};
use proptest::test_runner::{RngAlgorithm, TestRng};

use crate::{DataType, HostTensor, IndexBounds, TensorDesc};

/// The workspace's one seeded generator of fuzzing and test data:
/// proptest's ChaCha [`TestRng`], so that the strategies, `ops fuzz`,
/// `ops bench` and the tests draw from the same well-kept source. The same
/// seed gives the same numbers on every platform and run.
#[derive(Clone, Debug)]
pub struct Rng(TestRng);

impl Rng {
    /// A generator from a seed (ChaCha's key: the seed's little-endian
    /// bytes, zero padded).
    pub fn new(seed: u64) -> Rng {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        Rng(TestRng::from_seed(RngAlgorithm::ChaCha, &key))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A value below `n` (`0` when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.0.random_range(0..n)
        }
    }

    /// A position in a slice of `len` elements (`0` when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// A value in `[low, high]` (`low` when `high < low`).
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        if high <= low {
            low
        } else {
            self.0.random_range(low..=high)
        }
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// Shuffles `v` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i as u64 + 1) as usize);
        }
    }

    /// The generator as proptest's [`TestRng`], for a [`TestRunner`]
    /// (`ops fuzz` seeds one per operator this way).
    ///
    /// [`TestRunner`]: proptest::test_runner::TestRunner
    pub fn into_test_rng(self) -> TestRng {
        self.0
    }
}

/// Raw little-endian bit patterns at the edges of a data type: NaNs with
/// payloads, both infinities, both zeros, subnormals, extremes, values above
/// 2^32 and 2^53, and the edges of casts between types: halfway cases
/// (2.5, -0.5, 2^24 + 1, a FLOAT16 tie with and without a sticky bit,
/// 2^60 + 2^36 (+ 1), where rounding a 64-bit integer through `f64` goes
/// wrong), the limits of every narrower integer type and just beyond them
/// (127.5, -128.5, 255, 256, 2^31, 2^63, 2^64), and FLOAT16's overflow at
/// 65520.
pub fn edge_bits(dtype: DataType) -> Vec<u64> {
    match dtype {
        DataType::Float64 => vec![
            0x7FF8_0000_0000_0000,
            0xFFF8_0000_0000_0001,
            0x7FF0_0000_0000_0001,
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0,
            0x8000_0000_0000_0000,
            1,
            0x8000_0000_0000_0001,
            0x000F_FFFF_FFFF_FFFF,
            0x7FEF_FFFF_FFFF_FFFF,
            0xFFEF_FFFF_FFFF_FFFF,
            1f64.to_bits(),
            (-1f64).to_bits(),
            9_007_199_254_740_993f64.to_bits(),
            2.5f64.to_bits(),
            (-128.5f64).to_bits(),
            65520f64.to_bits(),
            2147483648f64.to_bits(),
            (-9223372036854775808f64).to_bits(),
            18446744073709551616f64.to_bits(),
        ],
        DataType::Float32 => [
            0x7FC0_0000u32,
            0xFFC0_0001,
            0x7F80_0001,
            0x7F80_0000,
            0xFF80_0000,
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007F_FFFF,
            0x7F7F_FFFF,
            0xFF7F_FFFF,
            1f32.to_bits(),
            (-1f32).to_bits(),
            2.5f32.to_bits(),
            (-0.5f32).to_bits(),
            127.5f32.to_bits(),
            (-128.5f32).to_bits(),
            255.5f32.to_bits(),
            (-32768.9f32).to_bits(),
            65504f32.to_bits(),
            65520f32.to_bits(),
            // 1 + 2^-11: a FLOAT16 tie; + 2^-23: just above it.
            0x3F80_1000,
            0x3F80_1001,
            2147483648f32.to_bits(),
            (-2147483648f32).to_bits(),
            4294967296f32.to_bits(),
            9223372036854775808f32.to_bits(),
            (-9223372036854775808f32).to_bits(),
            18446744073709551616f32.to_bits(),
        ]
        .map(u64::from)
        .to_vec(),
        DataType::Float16 => [
            0x7E00u16, 0xFE01, 0x7C01, 0x7C00, 0xFC00, 0, 0x8000, 1, 0x8001, 0x03FF, 0x7BFF,
            0xFBFF, 0x3C00, 0xBC00,
            // 2.5, -0.5, 127.5, -128.5, 255.5, 32768, -32768, 2049 (not a
            // FLOAT16: 2048 + 2), 0.1's FLOAT16.
            0x4100, 0xB800, 0x57F8, 0xD804, 0x5BFC, 0x7800, 0xF800, 0x6801, 0x2E66,
        ]
        .map(u64::from)
        .to_vec(),
        DataType::Int64 => [
            i64::MIN,
            i64::MAX,
            0,
            -1,
            1,
            1 << 32,
            -(1 << 32) - 1,
            (1 << 53) + 1,
            -(1 << 53) - 1,
            (1 << 60) + (1 << 36) + 1,
            -(1 << 60) - (1 << 36),
            (1 << 31) + 3,
            -129,
            65520,
        ]
        .map(|v| v as u64)
        .to_vec(),
        DataType::Uint64 => vec![
            u64::MAX,
            0,
            1,
            1 << 32,
            (1 << 32) - 1,
            (1 << 53) + 1,
            1 << 63,
            (1 << 63) - 1,
            (1 << 60) + (1 << 36) + 1,
            (1 << 60) + (1 << 36),
            256,
        ],
        DataType::Int32 => [
            i32::MIN,
            i32::MAX,
            0,
            -1,
            1,
            (1 << 24) + 1,
            -(1 << 24) - 3,
            65520,
            2049,
            -129,
            32768,
        ]
        .map(|v| v as u32 as u64)
        .to_vec(),
        DataType::Uint32 => vec![
            u64::from(u32::MAX),
            0,
            1,
            1 << 31,
            (1 << 24) + 1,
            65535,
            256,
        ],
        DataType::Int16 => [i16::MIN, i16::MAX, 0, -1, 1, 2049, -129, 255]
            .map(|v| v as u16 as u64)
            .to_vec(),
        DataType::Uint16 => vec![0xFFFF, 0, 1, 0x8000, 2049, 256],
        DataType::Int8 => [i8::MIN, i8::MAX, 0, -1, 1]
            .map(|v| v as u8 as u64)
            .to_vec(),
        DataType::Uint8 => vec![0xFF, 0, 1, 0x80],
        DataType::Bool => vec![0, 1],
    }
}

fn from_words(dtype: DataType, sizes: &[u32], words: impl Iterator<Item = u64>) -> HostTensor {
    let desc = TensorDesc::new(dtype, sizes.to_vec());
    let width = dtype.size_bytes();
    let mut bytes = Vec::new();
    for v in words {
        // BOOL holds 0 or 1 only: keep the low bit of whatever was drawn.
        let v = if dtype == DataType::Bool { v & 1 } else { v };
        bytes.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    HostTensor::from_bytes(desc, bytes).expect("one word per element")
}

fn element_count(sizes: &[u32]) -> usize {
    sizes.iter().map(|&s| s as usize).product()
}

/// A tensor of `dtype` and `sizes` whose elements mix edge values, a small
/// pool of repeated values (ties) and random bits.
pub fn tensor_with_edges(dtype: DataType, sizes: &[u32], rng: &mut Rng) -> HostTensor {
    let n = element_count(sizes);
    let edges = edge_bits(dtype);
    let pool: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
    let words: Vec<u64> = (0..n)
        .map(|_| match rng.below(4) {
            0 => edges[rng.below(edges.len() as u64) as usize],
            1 => pool[rng.below(pool.len() as u64) as usize],
            2 => rng.below(4),
            _ => rng.next_u64(),
        })
        .collect();
    from_words(dtype, sizes, words.into_iter())
}

/// A random layout of a tensor of `sizes` (DirectML strides, in
/// elements): `None` (packed) a quarter of the time, otherwise strides with
/// some dimensions repeated (stride 0: DirectML's broadcasting), one
/// dimension padded by 1 to 3 elements, or the dimensions' order permuted
/// (NHWC data under NCHW sizes). The buffer spans at most 4 times the
/// packed element count.
pub fn random_layout(sizes: &[u32], rng: &mut Rng) -> Option<Vec<u64>> {
    let rank = sizes.len();
    let kind = rng.below(4);
    if kind == 0 || rank == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..rank).collect();
    if kind == 3 {
        for i in (1..rank).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    let padded = (kind == 2).then(|| order[rng.below(rank as u64) as usize]);
    let mut strides = vec![0u64; rank];
    let mut span = 1u64;
    for &d in order.iter().rev() {
        if kind == 1 && rng.below(2) == 0 {
            continue;
        }
        strides[d] = span;
        let n = u64::from(sizes[d]);
        span = span.saturating_mul(if padded == Some(d) {
            n + 1 + rng.below(3)
        } else {
            n
        });
    }
    Some(strides)
}

/// Fuzzing data for a data tensor: usually [`tensor_with_edges`], sometimes
/// only two distinct values (many ties: arg-reductions must break them by
/// their rule), sometimes one value everywhere, sometimes only edge values.
pub fn data_tensor(dtype: DataType, sizes: &[u32], rng: &mut Rng) -> HostTensor {
    let n = element_count(sizes);
    let edges = edge_bits(dtype);
    match rng.below(8) {
        0 | 1 => {
            // Two values drawn from the edges and small numbers: ties everywhere.
            let mut pick = || {
                if rng.chance(1, 2) {
                    edges[rng.below(edges.len() as u64) as usize]
                } else {
                    rng.below(3)
                }
            };
            let pool = [pick(), pick()];
            let words: Vec<u64> = (0..n).map(|_| pool[rng.below(2) as usize]).collect();
            from_words(dtype, sizes, words.into_iter())
        }
        2 => {
            let v = edges[rng.below(edges.len() as u64) as usize];
            from_words(dtype, sizes, std::iter::repeat_n(v, n))
        }
        3 => {
            let words: Vec<u64> = (0..n)
                .map(|_| edges[rng.below(edges.len() as u64) as usize])
                .collect();
            from_words(dtype, sizes, words.into_iter())
        }
        _ => tensor_with_edges(dtype, sizes, rng),
    }
}

/// Fuzzing data for a float tensor of an operator with a ULP accuracy
/// contract ([`crate::Tolerance::Ulp`]): magnitudes uniform in `[0.5, 2)`,
/// all of one sign (drawn per tensor). ULP bounds of sums hold for inputs
/// without cancellation and without overflow, which is what this draws;
/// edge values (NaN, infinities, the extremes) would measure the input,
/// not the kernel.
///
/// With `domain` `Some((lo, hi))`, values are uniform in `[lo, hi)` instead.
pub fn same_sign_tensor(
    dtype: DataType,
    sizes: &[u32],
    domain: Option<(f64, f64)>,
    rng: &mut Rng,
) -> HostTensor {
    let n = element_count(sizes);
    let sign = if rng.chance(1, 2) { -1.0 } else { 1.0 };
    let (lo, hi, sign) = match domain {
        Some((lo, hi)) => (lo, hi, 1.0),
        None => (0.5, 2.0, sign),
    };
    let words: Vec<u64> = (0..n)
        .map(|_| {
            let v = sign * (lo + (hi - lo) * (rng.below(1 << 24) as f64 / (1u64 << 24) as f64));
            match dtype {
                DataType::Float64 => v.to_bits(),
                DataType::Float32 => u64::from((v as f32).to_bits()),
                DataType::Float16 => u64::from(half::f16::from_f64(v).to_bits()),
                _ => rng.next_u64(),
            }
        })
        .collect();
    from_words(dtype, sizes, words.into_iter())
}

/// One valid case in this many draws hostile input data in `ops fuzz`
/// ([`ValidCases::hostile`](super::ValidCases::hostile), [`hostile_tensor`]),
/// whatever the operator's accuracy contract.
pub const HOSTILE_ONE_IN: u32 = 4;

/// Hostile data for a data tensor: for a float type, NaNs (with payloads,
/// both signs), both infinities, both zeros, subnormals, values near
/// overflow (the largest finite value and within a factor of 4 of it), large
/// magnitudes of both signs (the upper quarter of the exponent range) and
/// ordinary values (`±[0.5, 2)`), mixed; for an integer type, its edge
/// values ([`edge_bits`]: extremes, 0, -1) among random ones. Each tensor
/// draws how hostile it is: one element in sixteen, one in two or every
/// element (the others ordinary).
pub fn hostile_tensor(dtype: DataType, sizes: &[u32], rng: &mut Rng) -> HostTensor {
    let n = element_count(sizes);
    let density = [1u64, 8, 16][rng.index(3)];
    let edges = edge_bits(dtype);
    let words: Vec<u64> = (0..n)
        .map(|_| {
            let hostile = rng.below(16) < density;
            match dtype {
                DataType::Float64 | DataType::Float32 | DataType::Float16 => {
                    hostile_float(dtype, hostile, rng)
                }
                _ if hostile => edges[rng.index(edges.len())],
                _ => rng.next_u64(),
            }
        })
        .collect();
    from_words(dtype, sizes, words.into_iter())
}

/// One float of `dtype` as bits: a hostile value, or an ordinary one in
/// `±[0.5, 2)`.
fn hostile_float(dtype: DataType, hostile: bool, rng: &mut Rng) -> u64 {
    // (sign bit, exponent bits, mantissa bits) of the type.
    let (width, exp_bits, man_bits) = match dtype {
        DataType::Float64 => (64u32, 11u32, 52u32),
        DataType::Float32 => (32, 8, 23),
        _ => (16, 5, 10),
    };
    let sign = u64::from(rng.chance(1, 2)) << (width - 1);
    let exp_max = (1u64 << exp_bits) - 1;
    let bias = exp_max >> 1;
    let man_mask = (1u64 << man_bits) - 1;
    let with = |e: u64, m: u64| sign | (e << man_bits) | (m & man_mask);
    let kind = if hostile { rng.below(7) } else { 7 };
    match kind {
        // NaN: quiet or signalling, with a payload.
        0 => with(exp_max, 1 + rng.below(man_mask)),
        1 => with(exp_max, 0),
        2 => with(0, 0),
        // A subnormal.
        3 => with(0, 1 + rng.below(man_mask)),
        // The largest finite value, or within a factor of 4 below it.
        4 => {
            if rng.chance(1, 2) {
                with(exp_max - 1, man_mask)
            } else {
                with(exp_max - 1 - rng.below(2), rng.next_u64())
            }
        }
        // A large magnitude: the upper quarter of the exponents.
        5 | 6 => {
            let low = bias + (exp_max - bias) / 2;
            with(low + rng.below(exp_max - 1 - low), rng.next_u64())
        }
        // Ordinary: `[0.5, 2)`.
        _ => with(bias - 1 + rng.below(2), rng.next_u64()),
    }
}

/// How [`index_tensor`] fills an index tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexMode {
    /// Every value in range, uniformly (negative ones too for signed types).
    InRange,
    /// Every value in range, from a pool of one or two values per
    /// addressed dimension: Scatter's updates collide.
    Colliding,
    /// In range except one or two values outside it (`n`, `-n - 1`, the
    /// type's extremes, values above 2^32 and 2^53 that alias an in-range
    /// value when truncated to 32 bits): both backends must report the same
    /// [`crate::OpError::IndexOutOfRange`].
    OutOfRange,
}

/// Index data of `dtype` and `sizes` for [`IndexBounds`] `bounds`: value `k`
/// addresses a dimension of size `bounds.sizes[k % len]`.
///
/// Returns the tensor and whether some value is out of range (always for
/// [`IndexMode::OutOfRange`] when the tensor has elements; also when an
/// addressed dimension is empty).
pub fn index_tensor(
    dtype: DataType,
    sizes: &[u32],
    bounds: &IndexBounds,
    mode: IndexMode,
    rng: &mut Rng,
) -> (HostTensor, bool) {
    let n = element_count(sizes);
    // Float indices (OneHot) are signed too.
    let signed = dtype.is_signed_int() || dtype.is_float();
    let dims: Vec<i128> = if bounds.sizes.is_empty() {
        vec![0]
    } else {
        bounds.sizes.iter().map(|&s| i128::from(s)).collect()
    };
    let in_range = |rng: &mut Rng, len: i128| -> Option<i128> {
        if len == 0 {
            return None;
        }
        let v = rng.below(len as u64) as i128;
        // Negative values count from the end, for signed types only.
        Some(if signed && rng.chance(1, 3) {
            v - len
        } else {
            v
        })
    };
    let pools: Vec<Vec<i128>> = dims
        .iter()
        .map(|&len| {
            let k = 1 + rng.below(2);
            (0..k).filter_map(|_| in_range(rng, len)).collect()
        })
        .collect();
    let mut bad = false;
    let mut values: Vec<i128> = (0..n)
        .map(|k| {
            let j = k % dims.len();
            let v = match mode {
                IndexMode::Colliding if !pools[j].is_empty() => {
                    Some(pools[j][rng.below(pools[j].len() as u64) as usize])
                }
                _ => in_range(rng, dims[j]),
            };
            v.unwrap_or_else(|| {
                bad = true;
                0
            })
        })
        .collect();
    if mode == IndexMode::OutOfRange && n > 0 {
        for _ in 0..1 + rng.below(2) {
            let k = rng.below(n as u64) as usize;
            let len = dims[k % dims.len()];
            values[k] = out_of_range(dtype, len, rng);
        }
        bad = true;
    }
    let width = dtype.size_bytes();
    let mut bytes = Vec::with_capacity(n * width);
    for v in values {
        if dtype.is_float() {
            // Float indices (OneHot) truncate toward zero: a fraction of
            // the value's sign, now and then, selects the same position.
            let fraction = match rng.below(4) {
                0 => 0.75,
                1 => 0.25,
                _ => 0.0,
            };
            let x = v as f64 + if v < 0 { -fraction } else { fraction };
            match dtype {
                DataType::Float64 => bytes.extend_from_slice(&x.to_le_bytes()),
                DataType::Float32 => bytes.extend_from_slice(&(x as f32).to_le_bytes()),
                _ => bytes.extend_from_slice(&crate::f16::from_f64(x).to_le_bytes()),
            }
            continue;
        }
        // BOOL index tensors are in no table (invalid cases): 0 or 1 will do.
        let v = if dtype == DataType::Bool { v & 1 } else { v };
        bytes.extend_from_slice(&(v as u128).to_le_bytes()[..width]);
    }
    let t = HostTensor::from_bytes(TensorDesc::new(dtype, sizes.to_vec()), bytes)
        .expect("one value per element");
    (t, bad)
}

/// A value of `dtype` outside `[-len, len - 1]` (signed) or `[0, len - 1]`.
fn out_of_range(dtype: DataType, len: i128, rng: &mut Rng) -> i128 {
    let (min, max): (i128, i128) = match dtype {
        DataType::Int64 => (i64::MIN.into(), i64::MAX.into()),
        DataType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DataType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DataType::Uint64 => (0, u64::MAX.into()),
        DataType::Uint32 => (0, u32::MAX.into()),
        DataType::Uint16 => (0, u16::MAX.into()),
        DataType::Uint8 => (0, u8::MAX.into()),
        // Float indices (OneHot): integers a float holds exactly.
        DataType::Float64 | DataType::Float32 => (-(1 << 53), 1 << 53),
        DataType::Float16 => (-65504, 65504),
        _ => (0, 0),
    };
    let low = if dtype.is_signed_int() || dtype.is_float() {
        -len
    } else {
        0
    };
    let candidates = [
        len,
        low - 1,
        max,
        min,
        // Above 2^32 and 2^53: alias an in-range value if only the low word is read.
        (1i128 << 32) + rng.below(len.max(1) as u64) as i128,
        (1i128 << 53) + 1,
        -(1i128 << 32),
    ];
    let fits: Vec<i128> = candidates
        .into_iter()
        .filter(|&v| v >= min && v <= max && (v < low || v >= len))
        .collect();
    if fits.is_empty() {
        max
    } else {
        fits[rng.below(fits.len() as u64) as usize]
    }
}

/// Values written into a host tensor of `dtype` (small integers; for a
/// floating-point type, the integers as floats).
pub fn host_tensor(dtype: DataType, sizes: &[u32], values: &[i128]) -> HostTensor {
    let desc = TensorDesc::new(dtype, sizes.to_vec());
    let mut bytes = Vec::with_capacity(values.len() * dtype.size_bytes());
    for &v in values {
        match dtype {
            DataType::Float64 => bytes.extend_from_slice(&(v as f64).to_le_bytes()),
            DataType::Float32 => bytes.extend_from_slice(&(v as f32).to_le_bytes()),
            DataType::Float16 => {
                bytes.extend_from_slice(&crate::f16::from_f64(v as f64).to_le_bytes())
            }
            DataType::Bool => bytes.push(u8::from(v != 0)),
            _ => bytes.extend_from_slice(&(v as u128).to_le_bytes()[..dtype.size_bytes()]),
        }
    }
    HostTensor::from_bytes(desc, bytes).expect("one value per element")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_data_respects_bounds_and_modes() {
        let bounds = IndexBounds {
            tensor: 1,
            addresses: 0,
            sizes: vec![3, 5],
            out_of_range: crate::OutOfRange::Error,
        };
        for seed in 0..50 {
            let mut rng = Rng::new(seed);
            let (t, bad) = index_tensor(
                DataType::Int32,
                &[4, 2],
                &bounds,
                IndexMode::InRange,
                &mut rng,
            );
            assert!(!bad);
            let v = t.to_vec::<i32>().unwrap();
            for (k, &x) in v.iter().enumerate() {
                let n = [3, 5][k % 2];
                assert!((-n..n).contains(&x), "{x} for {n}");
            }
            let (t, bad) = index_tensor(
                DataType::Uint64,
                &[4, 2],
                &bounds,
                IndexMode::OutOfRange,
                &mut rng,
            );
            assert!(bad);
            let v = t.to_vec::<u64>().unwrap();
            assert!(v
                .iter()
                .enumerate()
                .any(|(k, &x)| x >= [3, 5][k % 2] as u64));
        }
    }

    #[test]
    fn colliding_indices_repeat() {
        let bounds = IndexBounds {
            tensor: 1,
            addresses: 0,
            sizes: vec![100],
            out_of_range: crate::OutOfRange::Error,
        };
        let (t, _) = index_tensor(
            DataType::Uint32,
            &[50],
            &bounds,
            IndexMode::Colliding,
            &mut Rng::new(3),
        );
        let mut v = t.to_vec::<u32>().unwrap();
        v.sort_unstable();
        v.dedup();
        assert!(v.len() <= 2);
    }
}
