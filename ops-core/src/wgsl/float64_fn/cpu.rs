//! The word-pair `pow` of [`super`] on the CPU: the same steps in `f64`,
//! so that it gives the GPU's bits.
//!
//! FLOAT64 `+`, `-` and `*` on the word pairs are correctly rounded, as
//! `f64`'s are; the exact low part of a product is `f64::mul_add`'s
//! correctly rounded `a b - p`; the `f32` estimate of `exp`'s reduction is
//! `f32` here too (a correctly rounded product, rounded half to even as
//! WGSL's `round`); a scaling by `2^n` rounds once, as `d_round_pack`.
//! Each function below is the WGSL function of the same name without its
//! `dx_` prefix; the comments there say why each step is what it is.
//!
//! The CPU reference takes it where the two backends must agree bit for
//! bit and a `pow` that is only within an ulp of the real power would not
//! do: the power of an integer base by a float exponent, truncated to an
//! integer ([`crate::scalar::Binary::Pow`]), whose results beyond 2^53 are
//! the last bits of the `pow`.

use super::CONSTANTS;

/// A double-double: the value `hi + lo`.
#[derive(Clone, Copy, Debug)]
struct Pair {
    hi: f64,
    lo: f64,
}

/// The biased exponent field.
fn exponent_bits(x: f64) -> u64 {
    (x.to_bits() >> 52) & 0x7ff
}

/// The significand of a finite value, with its implicit bit.
fn significand(x: f64) -> u64 {
    let m = x.to_bits() & 0x000f_ffff_ffff_ffff;
    if exponent_bits(x) == 0 {
        m
    } else {
        m | 1 << 52
    }
}

/// `m >> s`, rounded to nearest even.
fn shr_rne(m: u64, s: u32) -> u64 {
    if s == 0 {
        return m;
    }
    if s > 64 {
        return 0;
    }
    let v = u128::from(m);
    let q = v >> s;
    let rem = v & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    (q + u128::from(rem > half || (rem == half && q & 1 == 1))) as u64
}

/// `(-1)^neg m 2^(k - 1074)` rounded once to nearest even: to infinity
/// beyond the range, to subnormals and 0 below it (`d_round_pack`). `m` is
/// not 0.
fn round_pack(neg: bool, m: u64, k: i32) -> f64 {
    let sign = u64::from(neg) << 63;
    let p = 63 - m.leading_zeros() as i32;
    let shift = (p - 52).max(-k);
    // The biased exponent less one: the significand's 2^52 bit adds one.
    let e = shift + k;
    if e >= 2046 {
        return f64::from_bits(sign | 0x7ff0_0000_0000_0000);
    }
    let sig = if shift > 0 {
        shr_rne(m, shift as u32)
    } else {
        m << -shift
    };
    f64::from_bits(sign | (sig + ((e as u64) << 52)))
}

/// `a 2^n` rounded once; `a` finite.
fn scale(a: f64, n: i32) -> f64 {
    if a == 0.0 {
        return a;
    }
    round_pack(
        a.is_sign_negative(),
        significand(a),
        exponent_bits(a).max(1) as i32 - 1 + n,
    )
}

fn fast_two_sum(a: f64, b: f64) -> Pair {
    let s = a + b;
    Pair {
        hi: s,
        lo: b - (s - a),
    }
}

fn two_prod(a: f64, b: f64) -> Pair {
    let p = a * b;
    let special = |e: u64| e == 0 || e == 0x7ff;
    if special(exponent_bits(a)) || special(exponent_bits(b)) || special(exponent_bits(p)) {
        return Pair { hi: p, lo: 0.0 };
    }
    Pair {
        hi: p,
        lo: a.mul_add(b, -p),
    }
}

fn pair_add(a: Pair, b: Pair) -> Pair {
    let s = fast_two_sum(a.hi, b.hi);
    fast_two_sum(s.hi, s.lo + (a.lo + b.lo))
}

fn pair_mul(a: Pair, b: Pair) -> Pair {
    let p = two_prod(a.hi, b.hi);
    fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi))
}

fn quot(n: f64, d: Pair) -> Pair {
    let m = ((((d.hi.to_bits() >> 32) as u32) & 0xfffff) | 0x10_0000) >> 5;
    let unit = if d.hi >= 2.0 {
        2f64.powi(-17)
    } else {
        2f64.powi(-16)
    };
    let r0 = f64::from(0x8000_0000u32 / m) * unit;
    let r1 = r0 + r0 * (1.0 - d.hi * r0);
    let r = r1 + r1 * (1.0 - d.hi * r1);
    let q0 = n * r;
    let t = two_prod(q0, d.hi);
    let rem = ((n - t.hi) - t.lo) - q0 * d.lo;
    fast_two_sum(q0, rem * r)
}

/// `exp(hi + lo) = 2^k (1 + p)`, as `(k, p)`.
fn exp_parts(hi: f64, lo: f64) -> (i32, f64) {
    let c = &*CONSTANTS;
    let k = ((hi as f32) * std::f32::consts::LOG2_E).round_ties_even() as i32;
    let kd = f64::from(k);
    let rhi = hi - kd * c.ln2_hi;
    let rlo = lo - kd * c.ln2_lo;
    let r = rhi + rlo;
    let err = (rhi - r) + rlo;
    let mut q = c.exp_c[0];
    for &coef in &c.exp_c[1..] {
        q = q * r + coef;
    }
    (k, r + ((r * r) * q + err))
}

/// `log(a)` as a pair, for `a` finite and above 0.
fn log_pair(a: f64) -> Pair {
    let c = &*CONSTANTS;
    let mut sig = significand(a);
    let lz = sig.leading_zeros() - 11;
    sig <<= lz;
    let mut e = exponent_bits(a).max(1) as i32 - 1023 - lz as i32;
    let mut top = 0x3ff;
    if sig > 0x0016_a09e_667f_3bcd {
        top = 0x3fe;
        e += 1;
    }
    let m = f64::from_bits((sig & 0x000f_ffff_ffff_ffff) | (top << 52));
    let f = m - 1.0;
    let s = quot(f, fast_two_sum(2.0, f));
    let z = s.hi * s.hi;
    let mut r = c.log_c[0];
    for &coef in &c.log_c[1..] {
        r = r * z + coef;
    }
    let q = fast_two_sum(c.third_hi, c.third_lo + z * r);
    let u = Pair {
        hi: scale(s.hi, 1),
        lo: scale(s.lo, 1),
    };
    let prod = pair_mul(pair_mul(pair_mul(s, s), q), u);
    let ed = f64::from(e);
    let sum = fast_two_sum(ed * c.ln2_hi, ed * c.ln2_lo);
    pair_add(pair_add(sum, u), prod)
}

/// 0 for a finite `b` that is not an integer, 1 for an even integer, 2
/// for an odd one.
fn int_kind(b: f64) -> u32 {
    let e = exponent_bits(b) as u32;
    if e < 1023 {
        return u32::from(b == 0.0);
    }
    if e > 1075 {
        return 1;
    }
    let n = 1075 - e;
    let sig = significand(b);
    if n > 0 && sig << (64 - n) != 0 {
        return 0;
    }
    if (sig >> n) & 1 == 1 {
        2
    } else {
        1
    }
}

/// `a` with its quiet bit set.
fn quiet(a: f64) -> f64 {
    f64::from_bits(a.to_bits() | 0x0008_0000_0000_0000)
}

/// FLOAT64 `pow(a, b)` as the GPU's `dx_pow` computes it, bit for bit:
/// C's special cases (a signaling NaN gives NaN even where a quiet one
/// gives 1, as glibc's), else `exp(b log|a|)` with the logarithm and the
/// product in double-double, within a few ulp of the real power.
pub fn pow(a: f64, b: f64) -> f64 {
    let signaling = |x: f64| x.is_nan() && x.to_bits() & 0x0008_0000_0000_0000 == 0;
    if signaling(a) {
        return quiet(a);
    }
    if signaling(b) {
        return quiet(b);
    }
    if b == 0.0 || a.to_bits() == 1f64.to_bits() {
        return 1.0;
    }
    if a.is_nan() {
        return quiet(a);
    }
    if b.is_nan() {
        return quiet(b);
    }
    let absa = a.abs();
    let bneg = b.is_sign_negative();
    if b.is_infinite() {
        if absa == 1.0 {
            return 1.0;
        }
        return if (1.0 < absa) != bneg {
            f64::INFINITY
        } else {
            0.0
        };
    }
    let kind = int_kind(b);
    let sign = if a.is_sign_negative() && kind == 2 {
        1u64 << 63
    } else {
        0
    };
    let with_sign = |z: f64| f64::from_bits(z.to_bits() | sign);
    if a == 0.0 || a.is_infinite() {
        return with_sign(if a.is_infinite() != bneg {
            f64::INFINITY
        } else {
            0.0
        });
    }
    if a.is_sign_negative() && kind == 0 {
        return f64::NAN;
    }
    let l = log_pair(absa);
    let y0 = l.hi * b;
    if y0.abs() >= 1000.0 {
        return with_sign(if y0 < 0.0 { 0.0 } else { f64::INFINITY });
    }
    let p = two_prod(l.hi, b);
    let y = fast_two_sum(p.hi, p.lo + l.lo * b);
    let (k, e) = exp_parts(y.hi, y.lo);
    with_sign(scale(1.0 + e, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Within 2 ulp of the platform's `powf` (glibc's, within about
        /// half an ulp of the real power) wherever the result is a normal
        /// number: any positive base, an exponent aiming `b log a` at any
        /// point of the range; negative bases with integer exponents.
        #[test]
        fn within_two_ulp_of_powf(
            a in (1u64..0x7ff0_0000_0000_0000).prop_map(f64::from_bits),
            target in -708.0f64..709.0,
            n in -60i32..60,
            small in 0.25f64..4.0,
            negative in any::<bool>(),
        ) {
            let (a, b) = if negative { (-small, f64::from(n)) } else { (a, target / a.ln()) };
            let want = a.powf(b);
            prop_assume!(want.is_normal() && b.is_finite());
            let got = pow(a, b);
            let d = (got.to_bits() as i64 - want.to_bits() as i64).unsigned_abs();
            prop_assert!(d <= 2, "pow({a:e}, {b:e}) = {got:e}, powf {want:e}: {d} ulp");
        }
    }

    #[test]
    fn the_wgsl_reduction_constant_is_log2_e() {
        let text = super::super::helpers();
        let literal = text
            .split("xf * ")
            .nth(1)
            .unwrap()
            .split('f')
            .next()
            .unwrap();
        assert_eq!(literal.parse::<f32>(), Ok(std::f32::consts::LOG2_E));
    }

    #[test]
    fn scaling_rounds_once_into_the_subnormals() {
        assert_eq!(scale(1.5, 3), 12.0);
        assert_eq!(scale(1.0, 1024), f64::INFINITY);
        assert_eq!(scale(-1.0, -1074), -f64::from_bits(1));
        // 1.5 2^-1074 is a tie between 1 and 2 units: to even.
        assert_eq!(scale(1.5, -1074), f64::from_bits(2));
        assert_eq!(scale(1.25, -1074), f64::from_bits(1));
        assert_eq!(scale(1.0, -1076), 0.0);
        assert_eq!(scale(f64::MAX, -1), f64::MAX / 2.0);
    }

    #[test]
    fn powers_within_an_ulp_of_the_real_power() {
        let ulps = |a: f64, b: f64| {
            let (got, want) = (pow(a, b), a.powf(b));
            assert_eq!(got.is_nan(), want.is_nan(), "pow({a}, {b})");
            (got.to_bits() as i64 - want.to_bits() as i64).unsigned_abs()
        };
        for &(a, b) in &[
            (2.0, 10.0),
            (3.0, 0.5),
            (10.0, -3.0),
            (-2.0, 3.0),
            (1000.0, 5.46),
            (1.0 + 1e-12, 1e12),
            (7.0, 1.0 / 3.0),
            (0.5, 1074.0),
            (1e300, 1.02),
        ] {
            assert!(ulps(a, b) <= 1, "pow({a}, {b}): {} ulp", ulps(a, b));
        }
        assert_eq!(pow(-8.0, 1.0 / 3.0).to_bits(), f64::NAN.to_bits());
        assert_eq!(pow(0.0, -1.0), f64::INFINITY);
        assert_eq!(pow(-0.0, -3.0), f64::NEG_INFINITY);
        assert_eq!(pow(-2.0, f64::INFINITY), f64::INFINITY);
        assert_eq!(pow(1.0, f64::NAN), 1.0);
    }
}
