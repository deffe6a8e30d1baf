//! FLOAT64 arithmetic in WGSL without `f64`: a value is the word pair
//! `vec2<u32>` of its IEEE 754 bits (low word first, as tensors store it),
//! and every operation works on the bits with integer arithmetic, exactly
//! as the CPU reference's `f64` computes (correctly rounded, to nearest
//! even, subnormals kept).
//!
//! The operations ([`FLOAT64_HELPERS`]): comparisons, `min`/`max`
//! (NaN-propagating, -0.0 below +0.0, as FLOAT32's), `abs`, `neg`, `+`,
//! `-`, `*`, and the casts to and from every other type ([`cast_wgsl`]);
//! and ([`FLOAT64_DIV_HELPERS`]) `/`, `%` (C's `fmod`, as Rust's `f64`
//! `%`: exact, the sign of the dividend), `sqrt`, `floor`, `ceil` and
//! `round` (half to even). `exp`, `log`, `tanh` and `pow`, which round
//! more than once, are [`super::float64_fn`]'s.
//! Everything rounds through one routine, `d_round_pack`: the nearest
//! FLOAT64 to an integer times a power of two; `+`, `*`, `/` and `sqrt`
//! hand it their exact result shortened to 64 bits with a sticky bit below
//! the rounding position (`/` and `sqrt` by long division and the
//! digit-by-digit root, one bit a step, the remainder's being non-zero the
//! sticky bit). `%` is exact: the dividend's significand reduced modulo
//! the divisor's one bit a step down to the divisor's exponent. `floor`,
//! `ceil` and `round` clear or carry into the fraction bits. NaN results
//! are quiet NaNs (payloads, as on the CPU, are not part of the contract).

use crate::DataType;

/// The WGSL of the cast of `s`, a value of `from`, to `to`, where one of
/// them is FLOAT64 and the other is not. `cv_int` names the helper that
/// truncates a FLOAT64 to the integer type `to` (see
/// [`super::scalar`]'s `float_to_int_helper`). Needs [`FLOAT64_HELPERS`]
/// and the cast helpers.
pub fn cast_wgsl(s: &str, from: DataType, to: DataType, cv_int: &str) -> String {
    if to == DataType::Float64 {
        return match from {
            DataType::Float32 | DataType::Float16 => format!("d_from_f32({s})"),
            DataType::Bool => format!("select(vec2<u32>(0u, 0u), vec2<u32>(0u, 0x3ff00000u), {s})"),
            DataType::Int64 => format!("d_from_i64({s})"),
            DataType::Uint64 => format!("d_from_u64({s})"),
            _ if from.is_signed_int() => format!("d_from_i64(cv_i32_w({s}))"),
            _ => format!("d_from_u64(vec2<u32>({s}, 0u))"),
        };
    }
    match to {
        DataType::Float32 => format!("bitcast<f32>(d_narrow({s}, 23u, 127u, 31u))"),
        // A FLOAT16 value is its `f32`: rounded once from the 64 bits.
        DataType::Float16 => format!("h_decode(d_narrow({s}, 10u, 15u, 15u))"),
        // NaN is true, both zeros false.
        DataType::Bool => format!("(({s}.y & 0x7fffffffu) != 0u || {s}.x != 0u)"),
        _ => format!("{cv_int}({s})"),
    }
}

/// The WGSL of a unary operation on a FLOAT64 value; `None` for the
/// operations FLOAT64 does not have on the GPU.
pub fn unary_wgsl(op: crate::scalar::Unary, a: &str) -> Option<String> {
    use crate::scalar::Unary;
    match op {
        Unary::Neg => Some(format!("vec2<u32>({a}.x, {a}.y ^ 0x80000000u)")),
        Unary::Abs => Some(format!("vec2<u32>({a}.x, {a}.y & 0x7fffffffu)")),
        Unary::Sqrt => Some(format!("d_sqrt({a})")),
        Unary::Floor => Some(format!("d_to_int({a}, 0u)")),
        Unary::Ceil => Some(format!("d_to_int({a}, 1u)")),
        Unary::Round => Some(format!("d_to_int({a}, 2u)")),
        // exp, log, tanh: `super::float64_fn`.
        _ => super::float64_fn::unary_wgsl(op, a),
    }
}

/// The WGSL of a binary operation on FLOAT64 values; `None` for the
/// operations FLOAT64 does not have on the GPU.
pub fn binary_wgsl(op: crate::scalar::Binary, a: &str, b: &str) -> Option<String> {
    use crate::scalar::Binary;
    Some(match op {
        Binary::Add => format!("d_add({a}, {b})"),
        Binary::Sub => format!("d_add({a}, vec2<u32>({b}.x, {b}.y ^ 0x80000000u))"),
        Binary::Mul => format!("d_mul({a}, {b})"),
        Binary::Div => format!("d_div({a}, {b})"),
        Binary::Rem => format!("d_rem({a}, {b})"),
        Binary::Min => format!("d_min({a}, {b})"),
        Binary::Max => format!("d_max({a}, {b})"),
        Binary::Eq => format!("d_eq({a}, {b})"),
        Binary::Ne => format!("!d_eq({a}, {b})"),
        Binary::Lt => format!("d_lt({a}, {b})"),
        Binary::Gt => format!("d_lt({b}, {a})"),
        Binary::Le => format!("d_le({a}, {b})"),
        Binary::Ge => format!("d_le({b}, {a})"),
        // pow: `super::float64_fn`.
        _ => return super::float64_fn::binary_wgsl(op, a, b),
    })
}

/// Whether an expression with `op` on FLOAT64 needs
/// [`FLOAT64_DIV_HELPERS`].
pub fn unary_needs_div_helpers(op: crate::scalar::Unary) -> bool {
    use crate::scalar::Unary;
    matches!(op, Unary::Sqrt | Unary::Floor | Unary::Ceil | Unary::Round)
}

/// See [`unary_needs_div_helpers`].
pub fn binary_needs_div_helpers(op: crate::scalar::Binary) -> bool {
    use crate::scalar::Binary;
    matches!(op, Binary::Div | Binary::Rem)
}

/// Loop iterations of one FLOAT64 `/` (`d_div`: the quotient's bits).
pub const DIV_STEPS: u64 = 58;
/// At most, of one FLOAT64 `%` (`d_rem`: 53 plus the exponents' gap).
pub const REM_STEPS: u64 = 53 + 2045;
/// Of one FLOAT64 `sqrt` (`d_sqrt`: the root's bits).
pub const SQRT_STEPS: u64 = 57;
/// Of one FLOAT64 `exp` or `tanh` (`dx_exp_parts`' polynomial).
pub const EXP_STEPS: u64 = 12;
/// Of one FLOAT64 `log` (`dx_log_pair`: its polynomial and pair loops);
/// `pow` runs a `log` and an `exp`.
pub const LOG_STEPS: u64 = 11 + 3 + 2;

/// Whether FLOAT64 has `op` on the GPU ([`unary_wgsl`], [`binary_wgsl`]).
pub fn has_unary(op: crate::scalar::Unary) -> bool {
    unary_wgsl(op, "x").is_some()
}

/// See [`has_unary`].
pub fn has_binary(op: crate::scalar::Binary) -> bool {
    binary_wgsl(op, "x", "y").is_some()
}

/// The FLOAT64 helpers. They call `w_add`, `w_sub` and `w_mul_wide`
/// (64-bit integer arithmetic) and, for casts, `cv_i32_w`.
pub const FLOAT64_HELPERS: &str = "\
fn d_is_nan(a: vec2<u32>) -> bool {
    let h = a.y & 0x7fffffffu;
    return h > 0x7ff00000u || (h == 0x7ff00000u && a.x != 0u);
}

fn d_is_zero(a: vec2<u32>) -> bool {
    return (a.y & 0x7fffffffu) == 0u && a.x == 0u;
}

// a < b as unsigned 64-bit integers.
fn d_ult(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

// The bits of a non-NaN value as an unsigned key in the order of the
// values (-0.0 just below +0.0).
fn d_key(a: vec2<u32>) -> vec2<u32> {
    return select(vec2<u32>(a.x, a.y | 0x80000000u), ~a, (a.y >> 31u) == 1u);
}

fn d_eq(a: vec2<u32>, b: vec2<u32>) -> bool {
    if (d_is_nan(a) || d_is_nan(b)) {
        return false;
    }
    return all(a == b) || (d_is_zero(a) && d_is_zero(b));
}

fn d_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    if (d_is_nan(a) || d_is_nan(b) || (d_is_zero(a) && d_is_zero(b))) {
        return false;
    }
    return d_ult(d_key(a), d_key(b));
}

fn d_le(a: vec2<u32>, b: vec2<u32>) -> bool {
    return d_lt(a, b) || d_eq(a, b);
}

fn d_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a)) {
        return a;
    }
    if (d_is_nan(b)) {
        return b;
    }
    if (d_eq(a, b)) {
        return a | b;
    }
    return select(b, a, d_lt(a, b));
}

fn d_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a)) {
        return a;
    }
    if (d_is_nan(b)) {
        return b;
    }
    if (d_eq(a, b)) {
        return a & b;
    }
    return select(b, a, d_lt(b, a));
}

// Logical shifts of a 64-bit integer; a count of 64 or more gives 0.
fn d_shr(v: vec2<u32>, n: u32) -> vec2<u32> {
    if (n == 0u) {
        return v;
    }
    if (n >= 64u) {
        return vec2<u32>(0u, 0u);
    }
    if (n >= 32u) {
        return vec2<u32>(v.y >> (n - 32u), 0u);
    }
    return vec2<u32>((v.x >> n) | (v.y << (32u - n)), v.y >> n);
}

fn d_shl(v: vec2<u32>, n: u32) -> vec2<u32> {
    if (n == 0u) {
        return v;
    }
    if (n >= 64u) {
        return vec2<u32>(0u, 0u);
    }
    if (n >= 32u) {
        return vec2<u32>(0u, v.x << (n - 32u));
    }
    return vec2<u32>(v.x << n, (v.y << n) | (v.x >> (32u - n)));
}

fn d_clz(v: vec2<u32>) -> u32 {
    return select(countLeadingZeros(v.y), 32u + countLeadingZeros(v.x), v.y == 0u);
}

// v / 2^n rounded to nearest even.
fn d_shr_rne(v: vec2<u32>, n: u32) -> vec2<u32> {
    if (n == 0u) {
        return v;
    }
    if (n > 64u) {
        return vec2<u32>(0u, 0u);
    }
    let q = d_shr(v, n);
    let rest = w_sub(v, d_shl(q, n));
    let half = d_shl(vec2<u32>(1u, 0u), n - 1u);
    let up = d_ult(half, rest) || (all(rest == half) && (q.x & 1u) == 1u);
    return w_add(q, vec2<u32>(select(0u, 1u, up), 0u));
}

// The FLOAT64 nearest to m * 2^(k - 1074) (ties to even, to infinity
// beyond the range), with the sign bit `sign`; m is not 0.
fn d_round_pack(sign: u32, m: vec2<u32>, k: i32) -> vec2<u32> {
    let p = 63i - i32(d_clz(m));
    // The significand's unit: 2^-52 of the leading bit, or 2^-1074 for
    // subnormal results.
    let shift = max(p - 52i, -k);
    // The biased exponent less one (0 for subnormals): the significand's
    // 2^52 bit, and a carry out of it, add to it.
    let e = shift + k;
    if (e >= 2046i) {
        return vec2<u32>(0u, sign | 0x7ff00000u);
    }
    var sig: vec2<u32>;
    if (shift > 0i) {
        sig = d_shr_rne(m, u32(shift));
    } else {
        sig = d_shl(m, u32(-shift));
    }
    return vec2<u32>(sig.x, sign | (sig.y + (u32(e) << 20u)));
}

// The significand of a finite value, with its implicit bit.
fn d_sig(a: vec2<u32>) -> vec2<u32> {
    let e = (a.y >> 20u) & 0x7ffu;
    return vec2<u32>(a.x, (a.y & 0xfffffu) | select(0x100000u, 0u, e == 0u));
}

// The exponent of the significand's unit, biased (1 for subnormals).
fn d_exp(a: vec2<u32>) -> u32 {
    return max((a.y >> 20u) & 0x7ffu, 1u);
}

fn d_quiet(a: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x, a.y | 0x00080000u);
}

fn d_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a)) {
        return d_quiet(a);
    }
    if (d_is_nan(b)) {
        return d_quiet(b);
    }
    let ia = (a.y & 0x7ff00000u) == 0x7ff00000u;
    let ib = (b.y & 0x7ff00000u) == 0x7ff00000u;
    if (ia) {
        if (ib && ((a.y ^ b.y) >> 31u) == 1u) {
            return vec2<u32>(0u, 0xfff80000u);
        }
        return a;
    }
    if (ib) {
        return b;
    }
    // x the larger magnitude.
    var x = a;
    var y = b;
    if (d_ult(vec2<u32>(a.x, a.y & 0x7fffffffu), vec2<u32>(b.x, b.y & 0x7fffffffu))) {
        x = b;
        y = a;
    }
    let sx = x.y & 0x80000000u;
    if (d_is_zero(y)) {
        if (d_is_zero(x)) {
            // -0 + -0 is -0; every other sum of zeros +0.
            return vec2<u32>(0u, sx & y.y);
        }
        return x;
    }
    // Nine guard bits; y's bits shifted out of them leave a sticky bit.
    let ex = d_exp(x);
    let mx = d_shl(d_sig(x), 9u);
    let my = d_shl(d_sig(y), 9u);
    let d = ex - d_exp(y);
    var ty = d_shr(my, d);
    if (any(d_shl(ty, d) != my)) {
        ty.x = ty.x | 1u;
    }
    var m: vec2<u32>;
    if (sx == (y.y & 0x80000000u)) {
        m = w_add(mx, ty);
    } else {
        m = w_sub(mx, ty);
    }
    if (all(m == vec2<u32>(0u, 0u))) {
        return vec2<u32>(0u, 0u);
    }
    return d_round_pack(sx, m, i32(ex) - 10i);
}

// The 128-bit product of two 64-bit integers below 2^53, low word first.
fn d_mul_wide(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    let p00 = w_mul_wide(a.x, b.x);
    let p01 = w_mul_wide(a.x, b.y);
    let p10 = w_mul_wide(a.y, b.x);
    let p11 = w_mul_wide(a.y, b.y);
    let c1a = p00.y + p01.x;
    let c1 = c1a + p10.x;
    let k1 = select(0u, 1u, c1a < p01.x) + select(0u, 1u, c1 < p10.x);
    let c2a = p01.y + p10.y;
    let c2b = c2a + p11.x;
    let c2 = c2b + k1;
    let k2 = select(0u, 1u, c2a < p10.y) + select(0u, 1u, c2b < p11.x) + select(0u, 1u, c2 < k1);
    return vec4<u32>(p00.x, c1, c2, p11.y + k2);
}

fn d_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a)) {
        return d_quiet(a);
    }
    if (d_is_nan(b)) {
        return d_quiet(b);
    }
    let s = (a.y ^ b.y) & 0x80000000u;
    let za = d_is_zero(a);
    let zb = d_is_zero(b);
    if ((a.y & 0x7ff00000u) == 0x7ff00000u || (b.y & 0x7ff00000u) == 0x7ff00000u) {
        if (za || zb) {
            return vec2<u32>(0u, 0xfff80000u);
        }
        return vec2<u32>(0u, s | 0x7ff00000u);
    }
    if (za || zb) {
        return vec2<u32>(0u, s);
    }
    let p = d_mul_wide(d_sig(a), d_sig(b));
    let lo = p.xy;
    let hi = p.zw;
    var m = lo;
    var k = i32(d_exp(a)) + i32(d_exp(b)) - 1076i;
    var lead = 63u - d_clz(lo);
    if (any(hi != vec2<u32>(0u, 0u))) {
        lead = 127u - d_clz(hi);
    }
    if (lead > 62u) {
        // Down to 63 bits, the bits shifted out as a sticky bit.
        let n = lead - 62u;
        let t = d_shr(lo, n);
        m = t | d_shl(hi, 64u - n);
        if (any(d_shl(t, n) != lo)) {
            m.x = m.x | 1u;
        }
        k = k + i32(n);
    }
    return d_round_pack(s, m, k);
}

// An f32 (or a FLOAT16 value held in one) exactly.
fn d_from_f32(f: f32) -> vec2<u32> {
    let x = bitcast<u32>(f);
    let s = x & 0x80000000u;
    let a = x & 0x7fffffffu;
    if (a == 0x7f800000u) {
        return vec2<u32>(0u, s | 0x7ff00000u);
    }
    if (a > 0x7f800000u) {
        // NaN with the top of its payload, quiet, as the CPU widens it.
        return d_quiet(vec2<u32>(a << 29u, s | 0x7ff00000u | ((a & 0x7fffffu) >> 3u)));
    }
    if (a == 0u) {
        return vec2<u32>(0u, s);
    }
    let e = a >> 23u;
    let m = (a & 0x7fffffu) | select(0x800000u, 0u, e == 0u);
    return d_round_pack(s, vec2<u32>(m, 0u), i32(max(e, 1u)) + 924i);
}

// A 64-bit integer rounded to nearest even.
fn d_from_u64(v: vec2<u32>) -> vec2<u32> {
    if (all(v == vec2<u32>(0u, 0u))) {
        return v;
    }
    return d_round_pack(0u, v, 1074i);
}

fn d_from_i64(v: vec2<u32>) -> vec2<u32> {
    if ((v.y >> 31u) == 0u) {
        return d_from_u64(v);
    }
    return d_round_pack(0x80000000u, w_sub(vec2<u32>(0u, 0u), v), 1074i);
}

// A FLOAT64 rounded to nearest even to the float format with `mbits`
// fraction bits, exponent bias `bias` and sign bit `top`, as its bits
// (FLOAT32: 23, 127, 31; FLOAT16: 10, 15, 15); infinity beyond the range;
// a NaN stays NaN, quiet, with the top of its payload.
fn d_narrow(v: vec2<u32>, mbits: u32, bias: u32, top: u32) -> u32 {
    let s = (v.y >> 31u) << top;
    let h = v.y & 0x7fffffffu;
    let inf = (2u * bias + 1u) << mbits;
    if (d_is_nan(v)) {
        let payload = d_shr(vec2<u32>(v.x, h & 0xfffffu), 52u - mbits).x;
        return s | inf | (1u << (mbits - 1u)) | payload;
    }
    if (h >= 0x7ff00000u) {
        return s | inf;
    }
    let e = i32(h >> 20u);
    if (e == 0i) {
        // Below 2^-1022: far below half the smallest subnormal.
        return s;
    }
    // The biased exponent in the narrow format (below 1: subnormal).
    let te = e - 1023i + i32(bias);
    if (te >= 2i * i32(bias) + 1i) {
        return s | inf;
    }
    let shift = 52i - i32(mbits) + max(1i - te, 0i);
    let q = d_shr_rne(vec2<u32>(v.x, (h & 0xfffffu) | 0x100000u), u32(shift));
    return s | ((u32(max(te - 1i, 0i)) << mbits) + q.x);
}

// trunc(|v|) for |v| < 2^64, from the bits `a` of |v|.
fn d_trunc(a: vec2<u32>) -> vec2<u32> {
    let e = a.y >> 20u;
    if (e < 1023u) {
        return vec2<u32>(0u, 0u);
    }
    let m = d_sig(a);
    if (e <= 1075u) {
        return d_shr(m, 1075u - e);
    }
    return d_shl(m, e - 1075u);
}
";

/// FLOAT64 division, remainder, square root and rounding to an integer
/// (`d_div`, `d_rem`, `d_sqrt`, `d_to_int`), exact as Rust's `f64`. They
/// call [`FLOAT64_HELPERS`].
pub const FLOAT64_DIV_HELPERS: &str = "\
// A finite non-zero value's significand shifted to put its leading bit at
// 2^52 (.xy), and the biased exponent of its unit less that shift (.z, the
// bits of an i32): the value is .xy * 2^(.z - 1075).
fn d_norm(a: vec2<u32>) -> vec3<u32> {
    let m = d_sig(a);
    let s = d_clz(m) - 11u;
    return vec3<u32>(d_shl(m, s), bitcast<u32>(i32(d_exp(a)) - i32(s)));
}

fn d_div(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a)) {
        return d_quiet(a);
    }
    if (d_is_nan(b)) {
        return d_quiet(b);
    }
    let s = (a.y ^ b.y) & 0x80000000u;
    let ia = (a.y & 0x7ff00000u) == 0x7ff00000u;
    let ib = (b.y & 0x7ff00000u) == 0x7ff00000u;
    let za = d_is_zero(a);
    let zb = d_is_zero(b);
    if ((ia && ib) || (za && zb)) {
        return vec2<u32>(0u, 0xfff80000u);
    }
    if (ia || zb) {
        return vec2<u32>(0u, s | 0x7ff00000u);
    }
    if (ib || za) {
        return vec2<u32>(0u, s);
    }
    // Both significands in [2^52, 2^53): q = floor(ma * 2^57 / mb), 57 or
    // 58 bits, one a step; the remainder (doubled, below 2^54) non-zero is
    // the sticky bit.
    let na = d_norm(a);
    let nb = d_norm(b);
    let mb = nb.xy;
    var r = na.xy;
    var q = vec2<u32>(0u, 0u);
    for (var i = 0u; i < 58u; i = i + 1u) {
        q = d_shl(q, 1u);
        if (!d_ult(r, mb)) {
            r = w_sub(r, mb);
            q.x = q.x | 1u;
        }
        r = d_shl(r, 1u);
    }
    if (any(r != vec2<u32>(0u, 0u))) {
        q.x = q.x | 1u;
    }
    return d_round_pack(s, q, bitcast<i32>(na.z) - bitcast<i32>(nb.z) + 1017i);
}

// C's fmod: a - trunc(a / b) * b, exact, with the sign of a.
fn d_rem(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a)) {
        return d_quiet(a);
    }
    if (d_is_nan(b)) {
        return d_quiet(b);
    }
    if ((a.y & 0x7ff00000u) == 0x7ff00000u || d_is_zero(b)) {
        return vec2<u32>(0u, 0xfff80000u);
    }
    if ((b.y & 0x7ff00000u) == 0x7ff00000u || d_is_zero(a)) {
        return a;
    }
    let ea = d_exp(a);
    let eb = d_exp(b);
    if (ea < eb) {
        // |a| < |b|.
        return a;
    }
    // The bits of a's significand, then ea - eb zeros, into a remainder
    // modulo b's significand: a's significand * 2^(ea - eb) mod mb, in
    // units of 2^(eb - 1075).
    let ma = d_sig(a);
    let mb = d_sig(b);
    var r = vec2<u32>(0u, 0u);
    let steps = 53u + ea - eb;
    for (var i = 0u; i < steps; i = i + 1u) {
        r = d_shl(r, 1u);
        if (i < 53u) {
            r.x = r.x | (d_shr(ma, 52u - i).x & 1u);
        }
        if (!d_ult(r, mb)) {
            r = w_sub(r, mb);
        }
    }
    let sx = a.y & 0x80000000u;
    if (all(r == vec2<u32>(0u, 0u))) {
        return vec2<u32>(0u, sx);
    }
    return d_round_pack(sx, r, i32(eb) - 1i);
}

fn d_sqrt(a: vec2<u32>) -> vec2<u32> {
    if (d_is_nan(a)) {
        return d_quiet(a);
    }
    if (d_is_zero(a)) {
        return a;
    }
    if ((a.y >> 31u) == 1u) {
        return vec2<u32>(0u, 0xfff80000u);
    }
    if (a.y == 0x7ff00000u) {
        return a;
    }
    // a = m * 2^e with e even and m in [2^52, 2^54); the root of m * 2^60,
    // 57 bits, digit by digit (two bits of the radicand a step), the
    // remainder non-zero the sticky bit.
    let n = d_norm(a);
    var m = n.xy;
    var e = bitcast<i32>(n.z) - 1075i;
    if ((e & 1i) != 0i) {
        m = d_shl(m, 1u);
        e = e - 1i;
    }
    var root = vec2<u32>(0u, 0u);
    var r = vec2<u32>(0u, 0u);
    for (var j = 0u; j < 57u; j = j + 1u) {
        r = d_shl(r, 2u);
        if (j <= 26u) {
            r.x = r.x | (d_shr(m, 52u - 2u * j).x & 3u);
        }
        let t = d_shl(root, 2u) | vec2<u32>(1u, 0u);
        root = d_shl(root, 1u);
        if (!d_ult(r, t)) {
            r = w_sub(r, t);
            root.x = root.x | 1u;
        }
    }
    if (any(r != vec2<u32>(0u, 0u))) {
        root.x = root.x | 1u;
    }
    return d_round_pack(0u, root, e / 2i + 1044i);
}

// a rounded to an integer: `mode` 0 toward -infinity (floor), 1 toward
// +infinity (ceil), 2 to nearest, halves to even; the sign kept (-0.5
// rounds to -0.0).
fn d_to_int(a: vec2<u32>, mode: u32) -> vec2<u32> {
    if (d_is_nan(a)) {
        return d_quiet(a);
    }
    let h = a.y & 0x7fffffffu;
    let e = h >> 20u;
    if (e >= 1075u || d_is_zero(a)) {
        // Integers (2^52 and beyond), infinities, zeros.
        return a;
    }
    let neg = (a.y >> 31u) == 1u;
    let sx = a.y & 0x80000000u;
    if (e < 1023u) {
        // 0 < |a| < 1: 0 or 1 in magnitude.
        var up = (mode == 1u) != neg;
        if (mode == 2u) {
            up = e == 1022u && ((h & 0xfffffu) != 0u || a.x != 0u);
        }
        return vec2<u32>(0u, sx | select(0u, 0x3ff00000u, up));
    }
    // f fraction bits (1 to 52) at the bottom of the bits; the integer's
    // unit is bit f (the exponent's low bit for 1 <= |a| < 2, 1023 odd as 1
    // is), and a carry out of the significand steps the exponent.
    let f = 1075u - e;
    let unit = d_shl(vec2<u32>(1u, 0u), f);
    let mask = w_sub(unit, vec2<u32>(1u, 0u));
    let frac = a & mask;
    if (all(frac == vec2<u32>(0u, 0u))) {
        return a;
    }
    let t = a & ~mask;
    var up = (mode == 1u) != neg;
    if (mode == 2u) {
        let half = d_shl(vec2<u32>(1u, 0u), f - 1u);
        up = d_ult(half, frac) || (all(frac == half) && any((t & unit) != vec2<u32>(0u, 0u)));
    }
    if (up) {
        return w_add(t, unit);
    }
    return t;
}
";

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop counts planners budget for ([`crate::Scalar::gpu_loop_steps`])
    /// are the helpers' loop bounds.
    #[test]
    fn loop_steps_are_the_helpers_bounds() {
        assert!(FLOAT64_DIV_HELPERS.contains(&format!("i < {DIV_STEPS}u;")));
        assert!(FLOAT64_DIV_HELPERS.contains(&format!("j < {SQRT_STEPS}u;")));
        // d_rem: 53 steps and the exponents' gap, at most 2046 - 1.
        assert!(FLOAT64_DIV_HELPERS.contains("let steps = 53u + ea - eb;"));
        assert_eq!(REM_STEPS, 53 + 2046 - 1);
        let fns = super::super::float64_fn::helpers();
        assert!(fns.contains(&format!("for (var i = 1u; i < {}u;", EXP_STEPS + 1)));
        assert!(fns.contains("for (var i = 1u; i < 12u;"));
        assert!(fns.contains("for (var i = once; i < 3u;"));
        assert!(fns.contains("for (var i = once; i < 2u;"));
        assert_eq!(LOG_STEPS, 11 + 3 + 2);
    }
}
