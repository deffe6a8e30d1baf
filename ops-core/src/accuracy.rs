//! Accuracy contracts: how closely a backend's output must match the
//! reference.
//!
//! Selections, data movement and integer arithmetic are [`Tolerance::Exact`].
//! Floating-point arithmetic whose order differs between backends (a GPU sums
//! in chunks, the CPU reference in row-major order in `f64`) declares a bound
//! in ULPs ([`Tolerance::Ulp`]): the distance between the two results' bit
//! patterns, counted as the number of representable values of the output
//! type between them. Case files may override either with
//! [`Tolerance::Close`] (`rtol`/`atol`, as numpy's `isclose`).
//!
//! In every mode two NaNs match (whatever their payloads), and an infinity
//! matches only the same infinity.
//!
//! One backend against another ([`first_disagreement`]: the GPU against the
//! CPU reference, in the fuzzer and `ops run`), a zero also matches only a
//! zero of the same sign, whatever the contract: the sign of a zero is the
//! arithmetic's, not a rounding error. Against reference data from
//! elsewhere ([`first_mismatch`]: a case file's expected values), -0.0 and
//! +0.0 match under a ULP bound, as numbers.

use std::fmt;

use crate::{DataType, Element, HostTensor};

/// How closely an output must match its reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Bit for bit, except that any two NaNs match.
    Exact,
    /// Floats within this many ULPs of the output type (integers exact).
    Ulp(u64),
    /// `|got - want| <= atol + rtol * |want|` for floats (integers exact).
    Close {
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
    },
    /// Floats within `ulp` ULPs, or else within `rtol`/`atol` as
    /// [`Tolerance::Close`] (integers exact): an approximate contract
    /// checked against reference data that carries errors of its own (an
    /// external suite's, computed in the output type).
    UlpOrClose {
        /// The ULP bound.
        ulp: u64,
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
    },
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerance::Exact => f.write_str("exact"),
            Tolerance::Ulp(n) => write!(f, "within {n} ULP"),
            Tolerance::Close { rtol, atol } => write!(f, "rtol {rtol}, atol {atol}"),
            Tolerance::UlpOrClose { ulp, rtol, atol } => {
                write!(f, "within {ulp} ULP, or rtol {rtol}, atol {atol}")
            }
        }
    }
}

/// The element's position on the line of representable values of its float
/// type: consecutive values differ by 1, and -0.0 and +0.0 are both 0.
fn ordinal(bits: u64, width: u32) -> i128 {
    let sign = 1u64 << (width - 1);
    let magnitude = bits & (sign - 1);
    if bits & sign != 0 {
        -i128::from(magnitude)
    } else {
        i128::from(magnitude)
    }
}

/// The bits of element `i` of `t`, zero-extended.
fn bits_of(t: &HostTensor, i: usize) -> u64 {
    let w = t.dtype().size_bytes();
    let mut b = [0u8; 8];
    b[..w].copy_from_slice(&t.bytes()[i * w..(i + 1) * w]);
    u64::from_le_bytes(b)
}

/// The distance in ULPs between two floats of `dtype` given by their bits
/// (`None` when either is NaN or infinite and they do not match as
/// [`Tolerance`] says: then no bound holds). Integer types give 0 when equal
/// and `None` otherwise.
pub fn ulp_distance(dtype: DataType, want: u64, got: u64) -> Option<u64> {
    if !dtype.is_float() {
        return (want == got).then_some(0);
    }
    match (is_nan(dtype, want), is_nan(dtype, got)) {
        (true, true) => return Some(0),
        (false, false) => {}
        _ => return None,
    }
    if is_inf(dtype, want) || is_inf(dtype, got) {
        return (want == got).then_some(0);
    }
    let width = dtype.size_bits();
    Some(ordinal(want, width).abs_diff(ordinal(got, width)) as u64)
}

/// `(exponent mask, mantissa mask)` of a float type.
fn masks(dtype: DataType) -> (u64, u64) {
    match dtype.size_bits() {
        16 => (0x7c00, 0x03ff),
        32 => (0x7f80_0000, 0x007f_ffff),
        _ => (0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
    }
}

fn is_nan(dtype: DataType, bits: u64) -> bool {
    let (e, m) = masks(dtype);
    bits & e == e && bits & m != 0
}

fn is_inf(dtype: DataType, bits: u64) -> bool {
    let (e, m) = masks(dtype);
    bits & e == e && bits & m == 0
}

/// Whether element `i` of `got` matches element `i` of `want` under `tol`.
pub fn element_matches(want: &HostTensor, got: &HostTensor, i: usize, tol: Tolerance) -> bool {
    let dtype = want.dtype();
    let (wb, gb) = (bits_of(want, i), bits_of(got, i));
    if wb == gb {
        return true;
    }
    if !dtype.is_float() {
        return false;
    }
    match tol {
        // Different bits match exactly only as two NaNs.
        Tolerance::Exact => is_nan(dtype, wb) && is_nan(dtype, gb),
        Tolerance::Ulp(n) => ulp_distance(dtype, wb, gb).is_some_and(|d| d <= n),
        Tolerance::Close { rtol, atol } => close(want, got, i, rtol, atol),
        Tolerance::UlpOrClose { ulp, rtol, atol } => {
            ulp_distance(dtype, wb, gb).is_some_and(|d| d <= ulp) || close(want, got, i, rtol, atol)
        }
    }
}

/// Whether float element `i` of `got` is within `atol + rtol * |want|` of
/// `want`'s (or matches it as [`ulp_distance`] 0 does: NaNs, infinities).
fn close(want: &HostTensor, got: &HostTensor, i: usize, rtol: f64, atol: f64) -> bool {
    let dtype = want.dtype();
    if ulp_distance(dtype, bits_of(want, i), bits_of(got, i)) == Some(0) {
        return true;
    }
    let (w, g) = crate::with_element_type!(dtype, T => {
        let w: T = want.get(i);
        let g: T = got.get(i);
        (w.to_f64(), g.to_f64())
    });
    w.is_finite() && g.is_finite() && (g - w).abs() <= atol + rtol * w.abs()
}

/// Whether element `i` of `want` and of `got` are zeros of opposite signs.
pub fn zero_signs_differ(want: &HostTensor, got: &HostTensor, i: usize) -> bool {
    let dtype = want.dtype();
    if !dtype.is_float() {
        return false;
    }
    let sign = 1u64 << (dtype.size_bits() - 1);
    let (wb, gb) = (bits_of(want, i), bits_of(got, i));
    wb & !sign == 0 && gb & !sign == 0 && wb != gb
}

/// Whether element `i` of one backend's output `got` agrees with element
/// `i` of another's `want` under `tol`: it matches ([`element_matches`]) and
/// is not a zero of the other sign ([`zero_signs_differ`]).
pub fn element_agrees(want: &HostTensor, got: &HostTensor, i: usize, tol: Tolerance) -> bool {
    element_matches(want, got, i, tol) && !zero_signs_differ(want, got, i)
}

/// The first element of `got` that does not match `want` under `tol`, and
/// how many do not; `None` when all match. The tensors must have the same
/// description.
pub fn first_mismatch(
    want: &HostTensor,
    got: &HostTensor,
    tol: Tolerance,
) -> Option<(usize, usize)> {
    first_where(want, |i| !element_matches(want, got, i, tol))
}

/// The first element of one backend's output `got` that does not agree
/// with another's `want` under `tol` ([`element_agrees`]: the sign of a
/// zero counts), and how many do not; `None` when all agree. The tensors
/// must have the same description.
pub fn first_disagreement(
    want: &HostTensor,
    got: &HostTensor,
    tol: Tolerance,
) -> Option<(usize, usize)> {
    first_where(want, |i| !element_agrees(want, got, i, tol))
}

/// The first element index of `want` where `differs`, and how many.
fn first_where(want: &HostTensor, differs: impl Fn(usize) -> bool) -> Option<(usize, usize)> {
    let mut first = None;
    let mut count = 0;
    for i in 0..want.len() {
        if differs(i) {
            first.get_or_insert(i);
            count += 1;
        }
    }
    first.map(|f| (f, count))
}

/// The larger ULP distance of any element pair (floats; 0 for integer
/// tensors that match), `None` when some pair has no distance (a NaN or an
/// infinity against another value, or unequal integers).
pub fn max_ulp_distance(want: &HostTensor, got: &HostTensor) -> Option<u64> {
    let mut max = 0;
    for i in 0..want.len() {
        max = max.max(ulp_distance(
            want.dtype(),
            bits_of(want, i),
            bits_of(got, i),
        )?);
    }
    Some(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn f32s(v: &[f32]) -> HostTensor {
        HostTensor::from_slice([v.len() as u32], v).unwrap()
    }

    #[test]
    fn ulp_distance_counts_representable_values() {
        let d = |a: f32, b: f32| {
            ulp_distance(DataType::Float32, a.to_bits().into(), b.to_bits().into())
        };
        assert_eq!(d(1.0, 1.0), Some(0));
        assert_eq!(d(1.0, f32::from_bits(1.0f32.to_bits() + 3)), Some(3));
        assert_eq!(d(-0.0, 0.0), Some(0));
        assert_eq!(d(f32::from_bits(1), -f32::from_bits(1)), Some(2));
        assert_eq!(d(f32::NAN, -f32::NAN), Some(0));
        assert_eq!(d(f32::NAN, 1.0), None);
        assert_eq!(d(f32::INFINITY, f32::MAX), None);
        assert_eq!(d(f32::INFINITY, f32::INFINITY), Some(0));
        let h = |a: f32, b: f32| {
            ulp_distance(
                DataType::Float16,
                f16::from_f32(a).to_bits().into(),
                f16::from_f32(b).to_bits().into(),
            )
        };
        assert_eq!(h(1.0, 1.0 + 2.0 * f32::from(f16::EPSILON)), Some(2));
    }

    #[test]
    fn tolerances() {
        let want = f32s(&[1.0, 0.0, f32::NAN]);
        let near = f32s(&[f32::from_bits(1.0f32.to_bits() + 2), -0.0, f32::NAN]);
        assert_eq!(first_mismatch(&want, &near, Tolerance::Exact), Some((0, 2)));
        assert_eq!(
            first_mismatch(&want, &near, Tolerance::Ulp(1)),
            Some((0, 1))
        );
        assert_eq!(first_mismatch(&want, &near, Tolerance::Ulp(2)), None);
        // Either bound will do.
        let either = |ulp, atol| Tolerance::UlpOrClose {
            ulp,
            rtol: 0.0,
            atol,
        };
        assert_eq!(first_mismatch(&want, &near, either(2, 0.0)), None);
        assert_eq!(first_mismatch(&want, &near, either(0, 1.0)), None);
        assert!(first_mismatch(&want, &near, either(1, 0.0)).is_some());
        let close = Tolerance::Close {
            rtol: 1e-6,
            atol: 0.0,
        };
        assert_eq!(first_mismatch(&want, &near, close), None);
        // One backend against another, the sign of a zero counts.
        let tol = Tolerance::Ulp(2);
        assert_eq!(first_disagreement(&want, &near, tol), Some((1, 1)));
        assert_eq!(first_disagreement(&want, &near, close), Some((1, 1)));
        let tiny = f32s(&[1.0, -f32::from_bits(1), f32::NAN]);
        assert_eq!(first_disagreement(&want, &tiny, tol), None);
        let ints = HostTensor::from_slice([2], &[1i32, 2]).unwrap();
        let other = HostTensor::from_slice([2], &[1i32, 3]).unwrap();
        assert_eq!(
            first_mismatch(&ints, &other, Tolerance::Ulp(100)),
            Some((1, 1))
        );
    }
}
