//! FLOAT64 `exp`, `log`, `tanh` and `pow` in WGSL, on the word pairs of
//! [`super::float64`] and built from its correctly rounded `d_add` and
//! `d_mul` only (no `f64` in core WebGPU).
//!
//! Where one rounding per operation is not enough the helpers carry
//! double-double pairs (`hi + lo`: Dekker's fast two-sum, which holds for
//! correctly rounded operations, and an exact product whose low part is
//! what the rounding of the 106-bit product of the significands cut off):
//!
//! - `exp(x)`: `x = k ln 2 + r` (Cody and Waite: `ln 2` split so that
//!   `k * LN2_HI` and `x - k * LN2_HI` are exact; `k` from an `f32`
//!   estimate, so `|r|` is about `ln 2 / 2` at most), `exp(r) - 1` by its
//!   Taylor polynomial of degree 14 plus the rounding error of `r`, then
//!   `2^k (1 + p)` rounded once more by `d_round_pack` (overflow to
//!   infinity, subnormal results, underflow to 0).
//! - `log(x)`: `x = 2^e m`, `m` in `[sqrt(1/2), sqrt(2))`; `log(m) =
//!   2 atanh(s)`, `s = (m - 1) / (m + 1)`, as a pair to about `2^-80`
//!   (the quotient by a Newton reciprocal and one exact remainder step);
//!   `e ln 2 + log(m)` as a pair, good to about `2^-64` relative: `pow`
//!   takes the pair, `log` its rounded sum.
//! - `pow(a, b)`: the special cases of C's `pow` (Rust's `powf`; a
//!   signaling NaN is NaN even where a quiet one gives 1, as glibc's), then
//!   `exp(b log|a|)` with `b log|a|` an exact pair product, so that large
//!   results keep their precision; the sign of an odd integer exponent.
//! - `tanh(x)`: `x` below `2^-28`, `±1` from 22 on, else `-t / (2 + t)`
//!   with `t = expm1(-2|x|)` from the parts of `exp`, the quotient as a
//!   pair.
//!
//! The quotient helper `dx_quot` is private to these functions rather than
//! FLOAT64 `/` (`d_div`): it divides by a pair and gives the quotient as a
//! pair (to about `2^-80`), which `log` needs, where `d_div` rounds once.
//!
//! Every step is a correctly rounded FLOAT64 operation, an integer
//! operation or a correctly rounded `f32` product (no `f32` division,
//! which WGSL lets a device round to 2.5 ulp), so every device computes
//! the same bits, and [`cpu`] computes them too, step for step in `f64`.

pub mod cpu;

/// The WGSL of a unary operation that this module computes on a FLOAT64
/// value.
pub fn unary_wgsl(op: crate::scalar::Unary, a: &str) -> Option<String> {
    use crate::scalar::Unary;
    match op {
        Unary::Exp => Some(format!("dx_exp({a})")),
        Unary::Log => Some(format!("dx_log({a})")),
        Unary::Tanh => Some(format!("dx_tanh({a})")),
        _ => None,
    }
}

/// The WGSL of a binary operation that this module computes on FLOAT64
/// values.
pub fn binary_wgsl(op: crate::scalar::Binary, a: &str, b: &str) -> Option<String> {
    match op {
        crate::scalar::Binary::Pow => Some(format!("dx_pow({a}, {b})")),
        _ => None,
    }
}

/// Whether `e` takes one of this module's operations (then a FLOAT64
/// kernel needs [`helpers`]).
pub fn uses(e: &crate::scalar::Scalar) -> bool {
    use crate::scalar::{Binary, Scalar, Unary};
    let mut found = false;
    e.visit(&mut |n| {
        if matches!(
            *n,
            Scalar::Unary(Unary::Exp | Unary::Log | Unary::Tanh, _)
                | Scalar::Binary(Binary::Pow, _, _)
        ) {
            found = true;
        }
    });
    found
}

/// A FLOAT64 constant as its WGSL word pair.
fn words(x: f64) -> String {
    let b = x.to_bits();
    format!("vec2<u32>({:#x}u, {:#x}u)", b as u32, (b >> 32) as u32)
}

/// An array constant of FLOAT64 values.
fn array(name: &str, values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|&v| words(v)).collect();
    format!(
        "const {name} = array<vec2<u32>, {}>({});\n",
        values.len(),
        items.join(", ")
    )
}

/// The constants of the helpers, computed once, shared with their CPU twin
/// ([`cpu`]).
pub(crate) struct Constants {
    /// ln 2 = `ln2_hi + ln2_lo`; `ln2_hi` has 32 significant bits, so that
    /// its product by any |k| < 2^21 is exact.
    pub ln2_hi: f64,
    pub ln2_lo: f64,
    /// 1/3 = `third_hi + third_lo`.
    pub third_hi: f64,
    pub third_lo: f64,
    /// 1/n! for n from 14 down to 2 (Horner's order).
    pub exp_c: [f64; 13],
    /// 1 / (2j + 5) for j from 11 down to 0: log(m) = 2s (1 + s^2/3 +
    /// s^4/5 + ...).
    pub log_c: [f64; 12],
}

pub(crate) static CONSTANTS: std::sync::LazyLock<Constants> = std::sync::LazyLock::new(|| {
    let mut fact = [1.0f64; 15];
    for n in 1..15 {
        fact[n] = fact[n - 1] * n as f64;
    }
    let third_hi = 1.0f64 / 3.0;
    Constants {
        ln2_hi: f64::from_bits(0x3fe6_2e42_fee0_0000),
        ln2_lo: f64::from_bits(0x3dea_39ef_3579_3c76),
        third_hi,
        third_lo: (-3.0f64).mul_add(third_hi, 1.0) / 3.0,
        exp_c: std::array::from_fn(|i| 1.0 / fact[14 - i]),
        log_c: std::array::from_fn(|i| 1.0 / f64::from(2 * (11 - i as u32) + 5)),
    }
});

/// The WGSL of the helpers (after [`super::float64::FLOAT64_HELPERS`]).
pub fn helpers() -> String {
    let c = &*CONSTANTS;
    let mut s = String::new();
    s += &format!("const DX_LN2_HI = {};\n", words(c.ln2_hi));
    s += &format!("const DX_LN2_LO = {};\n", words(c.ln2_lo));
    s += &format!("const DX_THIRD_HI = {};\n", words(c.third_hi));
    s += &format!("const DX_THIRD_LO = {};\n", words(c.third_lo));
    s += &array("DX_EXP_C", &c.exp_c);
    s += &array("DX_LOG_C", &c.log_c);
    s += HELPERS;
    s
}

const HELPERS: &str = "\
const DX_ZERO = vec2<u32>(0u, 0u);
const DX_ONE = vec2<u32>(0u, 0x3ff00000u);
const DX_TWO = vec2<u32>(0u, 0x40000000u);
const DX_NAN = vec2<u32>(0u, 0x7ff80000u);

// A double-double: the value hi + lo, |lo| at most half an ulp of hi.
struct DxPair {
    hi: vec2<u32>,
    lo: vec2<u32>,
}

fn dx_neg(a: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x, a.y ^ 0x80000000u);
}

fn dx_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return d_add(a, dx_neg(b));
}

// a + b exactly where |a| >= |b| or a is 0 (Dekker's fast two-sum).
fn dx_fast_two_sum(a: vec2<u32>, b: vec2<u32>) -> DxPair {
    let s = d_add(a, b);
    return DxPair(s, dx_sub(b, dx_sub(s, a)));
}

// a * b exactly as p + e, p = d_mul(a, b): e is what rounding the exact
// 106-bit product of the significands cut off (exact unless p is not a
// normal number: then e is 0).
fn dx_two_prod(a: vec2<u32>, b: vec2<u32>) -> DxPair {
    let p = d_mul(a, b);
    let ea = (a.y >> 20u) & 0x7ffu;
    let eb = (b.y >> 20u) & 0x7ffu;
    let ep = (p.y >> 20u) & 0x7ffu;
    if (ea == 0u || eb == 0u || ea == 0x7ffu || eb == 0x7ffu || ep == 0u || ep == 0x7ffu) {
        return DxPair(p, DX_ZERO);
    }
    let w = d_mul_wide(d_sig(a), d_sig(b));
    // 2^104 <= w < 2^106: p keeps its top 53 bits, n bits are cut.
    let n = select(52u, 53u, (w.w >> 9u) != 0u);
    let cut = w.xy & d_shr(vec2<u32>(0xffffffffu, 0xffffffffu), 64u - n);
    // Cut toward 0 when p's significand is the product's top bits.
    let kept = d_shr(w.xy, n) | d_shl(w.zw, 64u - n);
    let down = all(kept == d_sig(p));
    var m = cut;
    var s = (a.y ^ b.y) & 0x80000000u;
    if (!down) {
        m = w_sub(d_shl(vec2<u32>(1u, 0u), n), cut);
        s = s ^ 0x80000000u;
    }
    if (all(m == DX_ZERO)) {
        return DxPair(p, DX_ZERO);
    }
    return DxPair(p, d_round_pack(s, m, i32(ea) + i32(eb) - 1076i));
}

// a + b for |a.hi| >= |b.hi| (or a.hi 0).
fn dx_pair_add(a: DxPair, b: DxPair) -> DxPair {
    let s = dx_fast_two_sum(a.hi, b.hi);
    return dx_fast_two_sum(s.hi, d_add(s.lo, d_add(a.lo, b.lo)));
}

fn dx_pair_mul(a: DxPair, b: DxPair) -> DxPair {
    let p = dx_two_prod(a.hi, b.hi);
    return dx_fast_two_sum(p.hi, d_add(p.lo, d_add(d_mul(a.hi, b.lo), d_mul(a.lo, b.hi))));
}

// An i32 exactly.
fn dx_from_i32(k: i32) -> vec2<u32> {
    return d_from_i64(vec2<u32>(bitcast<u32>(k), select(0u, 0xffffffffu, k < 0i)));
}

// a * 2^n, rounded once (to infinity, subnormals, 0); a finite.
fn dx_scale(a: vec2<u32>, n: i32) -> vec2<u32> {
    if (d_is_zero(a)) {
        return a;
    }
    return d_round_pack(a.y & 0x80000000u, d_sig(a), i32(d_exp(a)) - 1i + n);
}

// n / d as a pair, for d = d.hi + d.lo in [1, 4) and |n| below 4. A
// private quotient for these functions: a reciprocal seed from an integer
// division by the top 16 bits of d.hi (about 2^-14; no f32 division, which
// WGSL lets a device round to 2.5 ulp, so every device gets these bits),
// two Newton steps (about 2^-52), and one step on the exact remainder.
fn dx_quot(n: vec2<u32>, d: DxPair) -> DxPair {
    let m = ((d.hi.y & 0xfffffu) | 0x100000u) >> 5u;
    // 2^31 / m, scaled by 2^-16 (d.hi below 2) or 2^-17: exact.
    let r0 = d_mul(dx_from_i32(i32(0x80000000u / m)), vec2<u32>(0u, select(0x3ef00000u, 0x3ee00000u, d.hi.y >= 0x40000000u)));
    let r1 = d_add(r0, d_mul(r0, dx_sub(DX_ONE, d_mul(d.hi, r0))));
    let r = d_add(r1, d_mul(r1, dx_sub(DX_ONE, d_mul(d.hi, r1))));
    let q0 = d_mul(n, r);
    let t = dx_two_prod(q0, d.hi);
    let rem = dx_sub(dx_sub(dx_sub(n, t.hi), t.lo), d_mul(q0, d.lo));
    return dx_fast_two_sum(q0, d_mul(rem, r));
}

// exp(hi + lo) = 2^k (1 + p), for finite hi, |hi| at most about 1100 and
// |lo| at most an ulp of hi.
struct DxExp {
    k: i32,
    p: vec2<u32>,
}

fn dx_exp_parts(hi: vec2<u32>, lo: vec2<u32>) -> DxExp {
    let xf = bitcast<f32>(d_narrow(hi, 23u, 127u, 31u));
    let k = i32(round(xf * 1.442695040888963f));
    let kd = dx_from_i32(k);
    // Exact: k LN2_HI has at most 43 bits and lies near hi.
    let rhi = dx_sub(hi, d_mul(kd, DX_LN2_HI));
    let rlo = dx_sub(lo, d_mul(kd, DX_LN2_LO));
    let r = d_add(rhi, rlo);
    // What rounding r lost: r + c = rhi + rlo to far below r's ulp.
    let c = d_add(dx_sub(rhi, r), rlo);
    var coef = DX_EXP_C;
    var q = coef[0];
    for (var i = 1u; i < 13u; i = i + 1u) {
        q = d_add(d_mul(q, r), coef[i]);
    }
    // exp(r + c) - 1 = r + r^2 q(r) + c (1 + r + ...); c is below 2^-50.
    let p = d_add(r, d_add(d_mul(d_mul(r, r), q), c));
    return DxExp(k, p);
}

fn dx_exp(x: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(x)) {
        return d_quiet(x);
    }
    let h = x.y & 0x7fffffffu;
    // |x| >= 746 (the infinities too): infinity or 0.
    if (h >= 0x40875000u) {
        return select(vec2<u32>(0u, 0x7ff00000u), DX_ZERO, (x.y >> 31u) == 1u);
    }
    let e = dx_exp_parts(x, DX_ZERO);
    return dx_scale(d_add(DX_ONE, e.p), e.k);
}

// log(a) as a pair, for a finite and above 0 (subnormal too).
fn dx_log_pair(a: vec2<u32>) -> DxPair {
    var sig = d_sig(a);
    let lz = d_clz(sig) - 11u;
    sig = d_shl(sig, lz);
    // a = (sig / 2^52) 2^e
    var e = i32(d_exp(a)) - 1023i - i32(lz);
    var top = 0x3ff00000u;
    // Above sqrt(2): m = sig / 2^53.
    if (d_ult(vec2<u32>(0x667f3bcdu, 0x0016a09eu), sig)) {
        top = 0x3fe00000u;
        e = e + 1i;
    }
    let m = vec2<u32>(sig.x, (sig.y & 0xfffffu) | top);
    // Exact (m within a factor 2 of 1), and 2 + f exactly as a pair.
    let f = dx_sub(m, DX_ONE);
    let s = dx_quot(f, dx_fast_two_sum(DX_TWO, f));
    // log(m) = u + u z Q(z), u = 2s, z = s^2, Q = 1/3 + z/5 + z^2/7 + ...
    // (|s| < 0.172, u z Q is below u / 100): Q as a pair, its tail R in
    // one rounding per step.
    let z = d_mul(s.hi, s.hi);
    var coef = DX_LOG_C;
    var r = coef[0];
    for (var i = 1u; i < 12u; i = i + 1u) {
        r = d_add(d_mul(r, z), coef[i]);
    }
    let q = dx_fast_two_sum(DX_THIRD_HI, d_add(DX_THIRD_LO, d_mul(z, r)));
    let u = DxPair(dx_scale(s.hi, 1i), dx_scale(s.lo, 1i));
    // The product s s Q u as pairs, and then e ln 2 + u + s s Q u, in
    // loops: a trip count the compiler does not see (a.y >> 31 is 0) keeps
    // one copy of the pair code in the shader.
    let once = a.y >> 31u;
    var prod = s;
    for (var i = once; i < 3u; i = i + 1u) {
        var f = u;
        if (i == 0u) {
            f = s;
        } else if (i == 1u) {
            f = q;
        }
        prod = dx_pair_mul(prod, f);
    }
    // e ln 2: e LN2_HI exact (|e| < 1100), e LN2_LO rounded once.
    let ed = dx_from_i32(e);
    var sum = dx_fast_two_sum(d_mul(ed, DX_LN2_HI), d_mul(ed, DX_LN2_LO));
    // Largest first: |e ln 2| >= ln 2 > |u| unless e is 0, and the sum
    // of the two exceeds ln 2 / 2 > |s s Q u| unless e is 0.
    for (var i = once; i < 2u; i = i + 1u) {
        var t = prod;
        if (i == 0u) {
            t = u;
        }
        sum = dx_pair_add(sum, t);
    }
    return sum;
}

fn dx_log(x: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(x)) {
        return d_quiet(x);
    }
    if (d_is_zero(x)) {
        return vec2<u32>(0u, 0xfff00000u);
    }
    if ((x.y >> 31u) == 1u) {
        return DX_NAN;
    }
    if (x.y == 0x7ff00000u) {
        return x;
    }
    return dx_log_pair(x).hi;
}

fn dx_tanh(x: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(x)) {
        return d_quiet(x);
    }
    let h = x.y & 0x7fffffffu;
    let sign = x.y & 0x80000000u;
    // From 22 on tanh rounds to 1 (1 - tanh is 2e^-44 there).
    if (h >= 0x40360000u) {
        return vec2<u32>(0u, sign | 0x3ff00000u);
    }
    // Below 2^-28 it rounds to x (x^3 / 3 is under x 2^-56).
    if (h < 0x3e300000u) {
        return x;
    }
    // t = expm1(-2|x|) = 2^k - 1 + 2^k p, in (-1, 0).
    let e = dx_exp_parts(vec2<u32>(x.x, (h + 0x00100000u) | 0x80000000u), DX_ZERO);
    var t = e.p;
    if (e.k < -53i) {
        t = d_add(vec2<u32>(0u, 0xbff00000u), dx_scale(d_add(DX_ONE, e.p), e.k));
    } else if (e.k != 0i) {
        // 2^k - 1 and 2^k p are exact, the sum rounds once.
        t = d_add(dx_sub(dx_scale(DX_ONE, e.k), DX_ONE), dx_scale(e.p, e.k));
    }
    // tanh|x| = -t / (2 + t), 2 + t exactly as a pair in (1, 2].
    let q = dx_quot(t, dx_fast_two_sum(DX_TWO, t));
    return vec2<u32>(q.hi.x, (q.hi.y & 0x7fffffffu) | sign);
}

// 0 for a finite b that is not an integer, 1 for an even integer, 2 for
// an odd one.
fn dx_int_kind(b: vec2<u32>) -> u32 {
    let e = (b.y >> 20u) & 0x7ffu;
    if (e < 1023u) {
        return select(0u, 1u, d_is_zero(b));
    }
    if (e > 1075u) {
        return 1u;
    }
    let n = 1075u - e;
    let sig = d_sig(b);
    if (n > 0u && any(d_shl(sig, 64u - n) != DX_ZERO)) {
        return 0u;
    }
    return select(1u, 2u, (d_shr(sig, n).x & 1u) == 1u);
}

// C's pow (Rust's powf, glibc's at run time: a signaling NaN gives NaN
// even where a quiet one gives 1).
// dx_pow(a, b) for an integer result: taken to the nearest integer n when
// less than 2^(e - 50) from it (4 ULP of n, e its exponent), as the CPU's
// `snap_to_integer`; a cast truncates it then.
fn dx_pow_int(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let r = dx_pow(a, b);
    if ((r.y & 0x7ff00000u) == 0x7ff00000u) {
        return r;
    }
    let n = d_to_int(r, 2u);
    if (d_is_zero(n) || all(n == r)) {
        return r;
    }
    let d = d_add(r, vec2<u32>(n.x, n.y ^ 0x80000000u));
    let ed = (d.y >> 20u) & 0x7ffu;
    let en = (n.y >> 20u) & 0x7ffu;
    return select(r, n, ed + 50u < en);
}

fn dx_pow(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a) && (a.y & 0x00080000u) == 0u) {
        return d_quiet(a);
    }
    if (d_is_nan(b) && (b.y & 0x00080000u) == 0u) {
        return d_quiet(b);
    }
    if (d_is_zero(b) || all(a == DX_ONE)) {
        return DX_ONE;
    }
    if (d_is_nan(a)) {
        return d_quiet(a);
    }
    if (d_is_nan(b)) {
        return d_quiet(b);
    }
    let absa = vec2<u32>(a.x, a.y & 0x7fffffffu);
    let bneg = (b.y >> 31u) == 1u;
    if ((b.y & 0x7fffffffu) == 0x7ff00000u && b.x == 0u) {
        if (all(absa == DX_ONE)) {
            return DX_ONE;
        }
        return select(DX_ZERO, vec2<u32>(0u, 0x7ff00000u), d_lt(DX_ONE, absa) != bneg);
    }
    let kind = dx_int_kind(b);
    let sign = select(0u, 0x80000000u, (a.y >> 31u) == 1u && kind == 2u);
    let ainf = absa.y == 0x7ff00000u && absa.x == 0u;
    if (d_is_zero(a) || ainf) {
        return vec2<u32>(0u, sign | select(0u, 0x7ff00000u, ainf != bneg));
    }
    if ((a.y >> 31u) == 1u && kind == 0u) {
        return DX_NAN;
    }
    let l = dx_log_pair(absa);
    // |b log|a|| beyond 1000 (or infinite): infinity or 0.
    let y0 = d_mul(l.hi, b);
    if ((y0.y & 0x7fffffffu) >= 0x408f4000u) {
        return vec2<u32>(0u, sign | select(0x7ff00000u, 0u, (y0.y >> 31u) == 1u));
    }
    let p = dx_two_prod(l.hi, b);
    let y = dx_fast_two_sum(p.hi, d_add(p.lo, d_mul(l.lo, b)));
    let e = dx_exp_parts(y.hi, y.lo);
    let z = dx_scale(d_add(DX_ONE, e.p), e.k);
    return vec2<u32>(z.x, z.y | sign);
}
";
