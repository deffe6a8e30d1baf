//! WGSL of a spec's scalar expressions ([`crate::scalar`]) for one data
//! type.
//!
//! Every value has the *compute type* of the tensor's data type:
//!
//! | data type | compute type | raw element → value |
//! |---|---|---|
//! | FLOAT32, FLOAT16 | `f32` | bits, or an exact FLOAT16 decode |
//! | INT32, INT16, INT8 | `i32` | sign-extended |
//! | UINT32, UINT16, UINT8, BOOL | `u32` | zero-extended (BOOL wraps to 1 bit) |
//! | INT64, UINT64 | `vec2<u32>` (lo, hi) | both words |
//!
//! Narrow integers wrap to their width after every operation that can leave
//! it, and 64-bit ones carry between their words, so that every value equals
//! the CPU reference's wrapped one. FLOAT16 values are computed in `f32` and
//! rounded to nearest even once, by [`gen_helpers`]'s `encode`, with integer
//! operations only: no `shader-f16`, no reliance on `pack2x16float`'s
//! rounding. `min`/`max` find NaN from the bits (a compiler may assume
//! `x != x` is false) and order -0.0 below +0.0; `exp` and `log` are
//! computed here to within a few ULP, on every adapter, rather than with
//! WGSL's built-ins, whose error bounds are loose (absolute near `log 1`,
//! growing with `|x|` for `exp`).

use crate::scalar::{Binary, Scalar, Unary, Var};
use crate::DataType;

use super::writer::Writer;

/// The WGSL type values of `dt` are computed in.
pub fn compute_type(dt: DataType) -> &'static str {
    match dt {
        DataType::Float32 | DataType::Float16 | DataType::Float64 => "f32",
        _ if dt.size_bits() == 64 => "vec2<u32>",
        _ if dt.is_signed_int() => "i32",
        _ => "u32",
    }
}

fn wide(dt: DataType) -> bool {
    dt.is_int() && dt.size_bits() == 64
}

fn narrow(dt: DataType) -> bool {
    !dt.is_float() && dt.size_bits() < 32
}

/// Writes the helpers every expression of `dt` may call:
///
/// - `decode(raw) -> T` and `encode(v: T) -> raw` between a raw element
///   ([`super::dtype`]) and the compute type `T`;
/// - `acc_words(v: T) -> R` and `acc_value(w: R) -> T` between `T` and the
///   partial-result words (`u32`, `vec2<u32>` for 64-bit types);
/// - `wrap(v: T) -> T` for narrow integers; `f_min`, `f_max`, `f_pow` for
///   floats; `w_*` word-pair arithmetic for 64-bit integers.
pub fn gen_helpers(w: &mut Writer, dt: DataType) {
    let bits = dt.size_bits();
    match compute_type(dt) {
        "f32" => {
            if dt == DataType::Float16 {
                w.lines(F16_HELPERS);
            } else {
                w.lines("fn decode(raw: u32) -> f32 {\n    return bitcast<f32>(raw);\n}\n\nfn encode(v: f32) -> u32 {\n    return bitcast<u32>(v);\n}\n");
            }
            w.lines("fn acc_words(v: f32) -> u32 {\n    return bitcast<u32>(v);\n}\n\nfn acc_value(w: u32) -> f32 {\n    return bitcast<f32>(w);\n}\n");
            w.lines(FLOAT_HELPERS);
        }
        "i32" => {
            let shift = 32 - bits;
            w.lines(&format!(
                "fn wrap(v: i32) -> i32 {{\n    return (v << {shift}u) >> {shift}u;\n}}\n\n\
                 fn decode(raw: u32) -> i32 {{\n    return wrap(bitcast<i32>(raw));\n}}\n\n\
                 fn encode(v: i32) -> u32 {{\n    return bitcast<u32>(v) & {mask};\n}}\n\n\
                 fn acc_words(v: i32) -> u32 {{\n    return bitcast<u32>(v);\n}}\n\n\
                 fn acc_value(w: u32) -> i32 {{\n    return bitcast<i32>(w);\n}}\n",
                mask = mask(bits)
            ));
        }
        "u32" => {
            let bool_mask = if dt == DataType::Bool {
                "1u"
            } else {
                mask(bits)
            };
            w.lines(&format!(
                "fn wrap(v: u32) -> u32 {{\n    return v & {mask};\n}}\n\n\
                 fn decode(raw: u32) -> u32 {{\n    return raw;\n}}\n\n\
                 fn encode(v: u32) -> u32 {{\n    return v & {mask};\n}}\n\n\
                 fn acc_words(v: u32) -> u32 {{\n    return v;\n}}\n\n\
                 fn acc_value(w: u32) -> u32 {{\n    return w;\n}}\n",
                mask = bool_mask
            ));
        }
        _ => {
            w.lines("fn decode(raw: vec2<u32>) -> vec2<u32> {\n    return raw;\n}\n\nfn encode(v: vec2<u32>) -> vec2<u32> {\n    return v;\n}\n\nfn acc_words(v: vec2<u32>) -> vec2<u32> {\n    return v;\n}\n\nfn acc_value(w: vec2<u32>) -> vec2<u32> {\n    return w;\n}\n");
            w.lines(WIDE_HELPERS);
            let signed = dt.is_signed_int();
            w.lines(&format!(
                "fn w_lt(a: vec2<u32>, b: vec2<u32>) -> bool {{\n    \
                 let ah = {ah};\n    let bh = {bh};\n    \
                 return ah < bh || (ah == bh && a.x < b.x);\n}}\n",
                ah = if signed { "bitcast<i32>(a.y)" } else { "a.y" },
                bh = if signed { "bitcast<i32>(b.y)" } else { "b.y" },
            ));
            w.lines(&format!(
                "fn w_abs(a: vec2<u32>) -> vec2<u32> {{\n    return {};\n}}\n",
                if signed {
                    "select(a, w_sub(vec2<u32>(0u, 0u), a), bitcast<i32>(a.y) < 0i)"
                } else {
                    "a"
                }
            ));
        }
    }
}

fn mask(bits: u32) -> &'static str {
    match bits {
        8 => "0xffu",
        16 => "0xffffu",
        _ => "0xffffffffu",
    }
}

/// FLOAT16 from and to `f32`, exactly and rounding to nearest even.
const F16_HELPERS: &str = "\
fn decode(h: u32) -> f32 {
    let s = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0x1fu) {
        return bitcast<f32>(s | 0x7f800000u | (m << 13u));
    }
    if (e == 0u) {
        // Zero or subnormal: m * 2^-24, exact in f32.
        let v = f32(m) * 5.9604644775390625e-8;
        return select(v, -v, s != 0u);
    }
    return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}

fn encode(f: f32) -> u32 {
    let x = bitcast<u32>(f);
    let s = (x >> 16u) & 0x8000u;
    let a = x & 0x7fffffffu;
    if (a > 0x7f800000u) {
        return s | 0x7e00u | ((a >> 13u) & 0x3ffu);
    }
    if (a >= 0x477ff000u) {
        // 65520 and above round to infinity.
        return s | 0x7c00u;
    }
    if (a >= 0x38800000u) {
        // Normal: rebias the exponent, round the 13 dropped bits to even.
        let r = a - 0x38000000u;
        return s | ((r + 0xfffu + ((r >> 13u) & 1u)) >> 13u);
    }
    let e = a >> 23u;
    if (e < 102u) {
        return s;
    }
    // Subnormal: round(value * 2^24) to even.
    let m = (a & 0x7fffffu) | 0x800000u;
    let shift = 126u - e;
    let q = m >> shift;
    let rest = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    let up = rest > half || (rest == half && (q & 1u) == 1u);
    return s | (q + select(0u, 1u, up));
}
";

/// NaN-propagating `min`/`max` with -0.0 below +0.0, and `pow` defined for
/// negative bases with integral exponents.
const FLOAT_HELPERS: &str = "\
fn f_is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn f_min(a: f32, b: f32) -> f32 {
    if (f_is_nan(a)) {
        return a;
    }
    if (f_is_nan(b)) {
        return b;
    }
    if (a == b) {
        return bitcast<f32>(bitcast<u32>(a) | bitcast<u32>(b));
    }
    return select(b, a, a < b);
}

fn f_max(a: f32, b: f32) -> f32 {
    if (f_is_nan(a)) {
        return a;
    }
    if (f_is_nan(b)) {
        return b;
    }
    if (a == b) {
        return bitcast<f32>(bitcast<u32>(a) & bitcast<u32>(b));
    }
    return select(b, a, a > b);
}

// ln 2 as hi + lo: hi has 16 significant bits, so k * hi is exact for the
// exponents of f32.
const LN2_HI: f32 = 0.693145751953125;
const LN2_LO: f32 = 1.428606765330187e-6;

// Natural logarithm within a few ULP everywhere (WGSL's `log` is only
// bounded in absolute error near 1, where the result is near 0):
// x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s),
// s = (m - 1) / (m + 1), by its series in s^2 (|s| <= 0.172).
fn f_log(x: f32) -> f32 {
    if (f_is_nan(x)) {
        return x;
    }
    if (x < 0.0) {
        return bitcast<f32>(0x7fc00000u);
    }
    if (x == 0.0) {
        return bitcast<f32>(0xff800000u);
    }
    if (bitcast<u32>(x) == 0x7f800000u) {
        return x;
    }
    var bits = bitcast<u32>(x);
    var e = 0i;
    if (bits < 0x00800000u) {
        bits = bitcast<u32>(x * 16777216.0);
        e = -24i;
    }
    e = e + i32(bits >> 23u) - 127i;
    var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
    if (m > 1.4142135) {
        m = m * 0.5;
        e = e + 1i;
    }
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    let p = 1.0 + z * (0.33333334 + z * (0.2 + z * (0.14285715 + z * (0.11111111 + z * 0.09090909))));
    let fe = f32(e);
    return fe * LN2_HI + (fe * LN2_LO + 2.0 * s * p);
}

// e^x within a few ULP (WGSL's `exp` may err by 3 + 2|x| ULP): x = k ln 2 + r
// with |r| <= ln 2 / 2, e^r by its Taylor polynomial, times 2^k.
fn f_exp(x: f32) -> f32 {
    if (f_is_nan(x)) {
        return x;
    }
    if (x > 88.72284) {
        return bitcast<f32>(0x7f800000u);
    }
    if (x < -103.97208) {
        return 0.0;
    }
    let k = round(x * 1.442695);
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (0.16666667 + r * (0.041666668 + r * (0.008333334 + r * (0.0013888889 + r * 0.0001984127))))));
    let ki = i32(k);
    let half = ki / 2i;
    return ldexp(ldexp(p, half), ki - half);
}

fn f_pow(a: f32, b: f32) -> f32 {
    if (b == 0.0) {
        return 1.0;
    }
    let m = pow(abs(a), b);
    if (a < 0.0) {
        if (floor(b) != b) {
            return bitcast<f32>(0x7fc00000u);
        }
        let odd = abs(b) < 16777216.0 && (i32(abs(b)) & 1i) == 1i;
        return select(m, -m, odd);
    }
    return m;
}
";

/// Word-pair arithmetic for 64-bit integers, wrapping modulo 2^64.
const WIDE_HELPERS: &str = "\
fn w_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn w_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

fn w_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let lo = (p00 & 0xffffu) | (mid << 16u);
    let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(lo, hi);
}

fn w_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let p = w_mul_wide(a.x, b.x);
    return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}

fn w_eq(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x == b.x && a.y == b.y;
}
";

/// The WGSL literal of `v` in the compute type of `dt`.
fn int_literal(v: i128, dt: DataType) -> String {
    match compute_type(dt) {
        "f32" => float_literal(v as f64),
        "i32" => {
            let v = crate::scalar::wrap(v, dt) as i32;
            if v == i32::MIN {
                "i32(-2147483647 - 1)".into()
            } else {
                format!("{v}i")
            }
        }
        "u32" => format!("{}u", crate::scalar::wrap(v, dt) as u32),
        _ => {
            let bits = v as u64;
            format!("vec2<u32>({}u, {}u)", bits as u32, (bits >> 32) as u32)
        }
    }
}

/// An `f32` value exactly, by its bits (infinities and NaN included).
fn float_literal(v: f64) -> String {
    format!("bitcast<f32>({:#010x}u)", (v as f32).to_bits())
}

/// The WGSL expression of `e` for a tensor of `dt`, `var` giving each
/// variable's WGSL expression. The expression must be supported for `dt`
/// ([`Scalar::unsupported_for`]). Needs [`gen_helpers`]`(dt)` in the module,
/// and `param(i)` with a `P_ATTRS` constant when it reads attributes.
pub fn scalar_wgsl(e: &Scalar, dt: DataType, var: &dyn Fn(Var) -> String) -> String {
    let go = |e: &Scalar| scalar_wgsl(e, dt, var);
    let ty = compute_type(dt);
    let float = ty == "f32";
    let wrap = |s: String| if narrow(dt) { format!("wrap({s})") } else { s };
    match *e {
        Scalar::Var(v) => var(v),
        // Two parameter words per attribute from `P_ATTRS`
        // (`crate::scalar::attr_words`), already in the compute type.
        Scalar::Attr(i, kind) => {
            let w = format!("param(P_ATTRS + {}u)", 2 * u32::from(i));
            let w1 = format!("param(P_ATTRS + {}u)", 2 * u32::from(i) + 1);
            match (kind, ty) {
                (crate::scalar::AttrScalar::Bool, _) => format!("({w} != 0u)"),
                (_, "f32") => format!("bitcast<f32>({w})"),
                (_, "i32") => format!("bitcast<i32>({w})"),
                (_, "u32") => w,
                _ => format!("vec2<u32>({w}, {w1})"),
            }
        }
        Scalar::Int(i) => int_literal(i128::from(i), dt),
        Scalar::Float(f) => float_literal(f),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Lowest | Scalar::Highest => {
            let high = matches!(e, Scalar::Highest);
            if float {
                float_literal(if high {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                })
            } else {
                let (lo, hi) = crate::scalar::int_range(dt);
                int_literal(if high { hi } else { lo }, dt)
            }
        }
        Scalar::Unary(op, a) => {
            let a = go(a);
            if wide(dt) {
                return match op {
                    Unary::Neg => format!("w_sub(vec2<u32>(0u, 0u), {a})"),
                    Unary::Abs => format!("w_abs({a})"),
                    Unary::Not => format!("!({a})"),
                    // Floor, ceil and round of an integer; the others are
                    // spec errors for integers.
                    _ => a,
                };
            }
            match op {
                Unary::Not => format!("!({a})"),
                Unary::Neg if ty == "u32" => wrap(format!("(0u - {a})")),
                Unary::Neg => wrap(format!("(-{a})")),
                Unary::Abs if ty == "u32" => a,
                Unary::Abs => wrap(format!("abs({a})")),
                Unary::Floor | Unary::Ceil | Unary::Round if !float => a,
                Unary::Sqrt => format!("sqrt({a})"),
                Unary::Exp => format!("f_exp({a})"),
                Unary::Log => format!("f_log({a})"),
                Unary::Floor => format!("floor({a})"),
                Unary::Ceil => format!("ceil({a})"),
                Unary::Round => format!("round({a})"),
            }
        }
        Scalar::Binary(op, a, b) => {
            let (a, b) = (go(a), go(b));
            if op.is_logical() {
                let o = if op == Binary::And { "&&" } else { "||" };
                return format!("({a} {o} {b})");
            }
            if wide(dt) {
                return match op {
                    Binary::Add => format!("w_add({a}, {b})"),
                    Binary::Sub => format!("w_sub({a}, {b})"),
                    Binary::Mul => format!("w_mul({a}, {b})"),
                    Binary::Min => format!("select({b}, {a}, w_lt({a}, {b}))"),
                    Binary::Max => format!("select({b}, {a}, w_lt({b}, {a}))"),
                    Binary::Eq => format!("w_eq({a}, {b})"),
                    Binary::Ne => format!("!w_eq({a}, {b})"),
                    Binary::Lt => format!("w_lt({a}, {b})"),
                    Binary::Gt => format!("w_lt({b}, {a})"),
                    Binary::Le => format!("!w_lt({b}, {a})"),
                    Binary::Ge => format!("!w_lt({a}, {b})"),
                    // Spec errors for 64-bit integers.
                    _ => a,
                };
            }
            let infix = |o: &str| format!("({a} {o} {b})");
            match op {
                Binary::Add => wrap(infix("+")),
                Binary::Sub => wrap(infix("-")),
                Binary::Mul => wrap(infix("*")),
                Binary::Div => wrap(infix("/")),
                Binary::Rem => infix("%"),
                Binary::Min if float => format!("f_min({a}, {b})"),
                Binary::Max if float => format!("f_max({a}, {b})"),
                Binary::Min => format!("min({a}, {b})"),
                Binary::Max => format!("max({a}, {b})"),
                Binary::Pow => format!("f_pow({a}, {b})"),
                Binary::Eq => infix("=="),
                Binary::Ne => infix("!="),
                Binary::Lt => infix("<"),
                Binary::Le => infix("<="),
                Binary::Gt => infix(">"),
                Binary::Ge => infix(">="),
                Binary::And | Binary::Or => unreachable!("handled above"),
            }
        }
        Scalar::Select(c, t, f) => format!("select({}, {}, {})", go(f), go(t), go(c)),
    }
}
