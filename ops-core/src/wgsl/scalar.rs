//! WGSL of a spec's scalar expressions ([`crate::scalar`]).
//!
//! Every node of an expression has a data type in its [`TypeEnv`]
//! ([`Scalar::type_of`]), and its WGSL value a representation of that type:
//!
//! | data type | representation | raw element → value |
//! |---|---|---|
//! | FLOAT32, FLOAT16 | `f32` | bits, or an exact FLOAT16 decode |
//! | INT32, INT16, INT8 | `i32` | sign-extended |
//! | UINT32, UINT16, UINT8 | `u32` | zero-extended |
//! | BOOL | `bool` (`u32` 0 or 1 in a kernel's variables and results) | nonzero |
//! | INT64, UINT64 | `vec2<u32>` (lo, hi) | both words |
//! | FLOAT64 | `vec2<u32>` (lo, hi) of its bits ([`super::float64`]) | both words |
//!
//! A kernel's variables and results have the *compute type*
//! ([`compute_type`]: the representation, but `u32` for BOOL).
//! Narrow integers wrap to their width after every operation that can leave
//! it, and 64-bit ones carry between their words, so that every value equals
//! the CPU reference's wrapped one. FLOAT16 values are computed in `f32` and
//! rounded to nearest even once, by [`gen_helpers`]'s `encode`, with integer
//! operations only: no `shader-f16`, no reliance on `pack2x16float`'s
//! rounding. `min`/`max` and the comparisons find NaN from the bits (a
//! compiler may assume `x != x` is false; lavapipe's `NaN != 0.0` is
//! false) and `min`/`max` order -0.0 below +0.0; `exp` and `log` are
//! computed here to within a few ULP, on every adapter, rather than with
//! WGSL's built-ins, whose error bounds are loose (absolute near `log 1`,
//! growing with `|x|` for `exp`).
//!
//! Casts ([`Scalar::Cast`]) are exact, with integer operations on the bits
//! wherever WGSL's own conversions are loose: WGSL leaves an integer to
//! float conversion free to round either way and a float to integer
//! conversion of NaN indeterminate, so integers above 2^24 are rounded to
//! `f32` by hand (64-bit ones from both words at once, no double
//! rounding), floats are truncated to integers from their bits (NaN to 0,
//! saturating), and FLOAT16 rounding reuses the store's `encode`.

use std::collections::BTreeSet;

use crate::scalar::{Binary, Scalar, TypeEnv, Unary, Value, Var};
use crate::DataType;

use super::float64;
use super::writer::Writer;

/// The WGSL type a kernel's variables and results of `dt` have.
pub fn compute_type(dt: DataType) -> &'static str {
    match dt {
        DataType::Float32 | DataType::Float16 => "f32",
        // 64-bit integers and FLOAT64: their words (see [`float64`]).
        _ if dt.size_bits() == 64 => "vec2<u32>",
        _ if dt.is_signed_int() => "i32",
        _ => "u32",
    }
}

/// The WGSL type a value of `dt` has inside an expression.
fn repr(dt: DataType) -> &'static str {
    if dt.is_bool() {
        "bool"
    } else {
        compute_type(dt)
    }
}

fn wide(dt: DataType) -> bool {
    dt.is_int() && dt.size_bits() == 64
}

fn narrow(dt: DataType) -> bool {
    dt.is_int() && dt.size_bits() < 32
}

/// The name of a per-type helper (`wrap_int8`, `cv_f_uint64`).
fn named(prefix: &str, dt: DataType) -> String {
    format!("{prefix}_{}", dt.case_name())
}

/// Writes the helpers of a kernel over tensors of `dt`:
///
/// - `decode(raw) -> T` and `encode(v: T) -> raw` between a raw element
///   ([`super::dtype`]) and the compute type `T`;
/// - `acc_words(v: T) -> R` and `acc_value(w: R) -> T` between `T` and the
///   partial-result words (`u32`, `vec2<u32>` for 64-bit types);
/// - `wrap(v: T) -> T` for narrow integers and BOOL.
///
/// The helpers its expressions call come from [`gen_expr_helpers`].
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
        }
    }
}

/// [`gen_helpers`] for one of several data types of a kernel: its
/// functions named with `prefix` (`in0_decode`, `in0_encode`, `in0_wrap`,
/// ...), so that a kernel over tensors of different types has one set per
/// tensor.
pub fn gen_codec(w: &mut Writer, dt: DataType, prefix: &str) {
    let mut own = Writer::new();
    gen_helpers(&mut own, dt);
    let mut text = own.finish();
    for name in ["decode(", "encode(", "wrap(", "acc_words(", "acc_value("] {
        text = text.replace(name, &format!("{prefix}{name}"));
    }
    w.lines(&text);
}

/// Writes the helpers that the WGSL of `exprs` in `env` ([`scalar_wgsl`])
/// calls: float `min`/`max`/`exp`/`log`/`pow` when a float is computed,
/// word-pair arithmetic when a 64-bit integer is, a wrap per narrow integer
/// type, and the conversions of the casts. Each once, whatever the number
/// of expressions.
pub fn gen_expr_helpers(w: &mut Writer, exprs: &[&Scalar], env: &TypeEnv<'_>) {
    let mut types = BTreeSet::new();
    let mut casts = false;
    let mut float_to_int = BTreeSet::new();
    for e in exprs {
        collect(e, env, &mut types, &mut casts, &mut float_to_int);
    }
    if types.iter().any(|t| t.is_float()) {
        w.lines(FLOAT_HELPERS);
        // The long helpers only where an expression calls them.
        let (mut tanh, mut fmod) = (false, false);
        for e in exprs {
            e.visit(&mut |n| match *n {
                Scalar::Unary(Unary::Tanh, _) => tanh = true,
                Scalar::Binary(Binary::Rem, _, _) => fmod = true,
                _ => {}
            });
        }
        if tanh {
            w.lines(TANH_HELPER);
        }
        if fmod {
            w.lines(FMOD_HELPER);
        }
    }
    let (mut shifts, mut pow, mut divs) = (false, false, false);
    for e in exprs {
        e.visit(&mut |n| match *n {
            Scalar::Binary(Binary::Shl | Binary::Shr, _, _) => shifts = true,
            Scalar::Binary(Binary::Pow, _, _) => pow = true,
            Scalar::Binary(Binary::Div | Binary::Rem, _, _) => divs = true,
            _ => {}
        });
    }
    if pow && types.iter().any(|&t| t.is_int() && !wide(t)) {
        w.lines(INT_POW_HELPERS);
    }
    let f64s = types.contains(&DataType::Float64);
    if casts || f64s || types.iter().any(|&t| wide(t)) {
        w.lines(WIDE_HELPERS);
    }
    if f64s {
        w.lines(float64::FLOAT64_HELPERS);
        let mut div = false;
        for e in exprs {
            e.visit(&mut |n| match *n {
                Scalar::Unary(op, _) if float64::unary_needs_div_helpers(op) => div = true,
                Scalar::Binary(op, _, _) if float64::binary_needs_div_helpers(op) => div = true,
                _ => {}
            });
        }
        let fns = exprs.iter().any(|e| super::float64_fn::uses(e));
        // `dx_pow_int` rounds with `d_to_int`.
        if div || fns {
            w.lines(float64::FLOAT64_DIV_HELPERS);
        }
        if fns {
            w.lines(&super::float64_fn::helpers());
        }
    }
    if shifts && types.iter().any(|&t| wide(t)) {
        w.lines(WIDE_SHIFT_HELPERS);
    }
    if pow && types.iter().any(|&t| wide(t)) {
        w.lines(WIDE_POW_HELPERS);
    }
    if divs && types.iter().any(|&t| wide(t)) {
        w.lines(WIDE_DIV_HELPERS);
    }
    for &t in &types {
        if narrow(t) {
            let (ty, body) = if t.is_signed_int() {
                let shift = 32 - t.size_bits();
                ("i32", format!("(v << {shift}u) >> {shift}u"))
            } else {
                ("u32", format!("v & {}", mask(t.size_bits())))
            };
            w.lines(&format!(
                "fn {}(v: {ty}) -> {ty} {{\n    return {body};\n}}\n",
                named("wrap", t)
            ));
        }
    }
    if types.contains(&DataType::Int64) {
        w.lines(&wide_signed_helpers("int64", true));
    }
    if types.contains(&DataType::Uint64) {
        w.lines(&wide_signed_helpers("uint64", false));
    }
    if casts {
        w.lines(
            &F16_HELPERS
                .replace("fn decode(", "fn h_decode(")
                .replace("fn encode(", "fn h_encode("),
        );
        w.lines(CAST_HELPERS);
    }
    for &(t, from64) in &float_to_int {
        w.lines(&float_to_int_helper(t, from64));
    }
}

/// Records the types of `e`'s nodes, whether it converts between types
/// (casts, integer attributes), and the integer targets of float casts.
fn collect(
    e: &Scalar,
    env: &TypeEnv<'_>,
    types: &mut BTreeSet<DataType>,
    casts: &mut bool,
    float_to_int: &mut BTreeSet<(DataType, bool)>,
) -> DataType {
    let mut children = Vec::new();
    match *e {
        Scalar::Unary(_, a) | Scalar::Cast(_, a) => children.push(a),
        Scalar::Binary(_, a, b) => children.extend([a, b]),
        Scalar::Select(c, t, f) => children.extend([c, t, f]),
        _ => {}
    }
    let child_types: Vec<DataType> = children
        .into_iter()
        .map(|c| collect(c, env, types, casts, float_to_int))
        .collect();
    let ty = match *e {
        Scalar::Cast(t, _) => {
            *casts = true;
            let to = env.resolve(t);
            if child_types[0].is_float() && to.is_int() {
                float_to_int.insert((to, child_types[0] == DataType::Float64));
            }
            to
        }
        Scalar::Attr(_, crate::scalar::AttrScalar::Int, t) => {
            *casts = true;
            types.insert(DataType::Int64);
            env.resolve(t)
        }
        Scalar::Attr(_, crate::scalar::AttrScalar::Number, t) if env.resolve(t).is_int() => {
            *casts = true;
            types.insert(DataType::Int64);
            env.resolve(t)
        }
        // An exponent of another type converts; a float one of an integer
        // base is a FLOAT64 power truncated.
        Scalar::Binary(Binary::Pow, _, _) if child_types[0] != child_types[1] => {
            *casts = true;
            let (base, exponent) = (child_types[0], child_types[1]);
            if base.is_int() && exponent.is_float() {
                types.insert(DataType::Float64);
                float_to_int.insert((base, true));
            }
            base
        }
        Scalar::Unary(op, _) if op != Unary::Not => child_types[0],
        Scalar::Binary(op, _, _) if !op.is_comparison() && !op.is_logical() => child_types[0],
        Scalar::Select(..) => child_types[1],
        _ => e.type_of(env),
    };
    types.insert(ty);
    ty
}

fn mask(bits: u32) -> &'static str {
    match bits {
        8 => "0xffu",
        16 => "0xffffu",
        _ => "0xffffffffu",
    }
}

/// `w_lt_int64`/`w_lt_uint64` and `w_abs_int64`.
fn wide_signed_helpers(name: &str, signed: bool) -> String {
    let mut out = format!(
        "\nfn w_lt_{name}(a: vec2<u32>, b: vec2<u32>) -> bool {{\n    \
         let ah = {ah};\n    let bh = {bh};\n    \
         return ah < bh || (ah == bh && a.x < b.x);\n}}\n",
        ah = if signed { "bitcast<i32>(a.y)" } else { "a.y" },
        bh = if signed { "bitcast<i32>(b.y)" } else { "b.y" },
    );
    if signed {
        out.push_str(&format!(
            "\nfn w_abs_{name}(a: vec2<u32>) -> vec2<u32> {{\n    \
             return select(a, w_sub(vec2<u32>(0u, 0u), a), bitcast<i32>(a.y) < 0i);\n}}\n"
        ));
    }
    out
}

/// `cv_f_<type>(f: f32)` (`cv_d_<type>(v: vec2<u32>)` for a FLOAT64,
/// `from64`): a float truncated toward zero to the integer type `to`, NaN
/// to 0, saturating to `MIN`/`MAX` beyond the range, from the bits (no
/// reliance on WGSL's conversion of NaN or of large values).
fn float_to_int_helper(to: DataType, from64: bool) -> String {
    let name = named(if from64 { "cv_d" } else { "cv_f" }, to);
    // The parameter; the bits `a` of |f|, `neg` and `nan`; `big(2^n)`:
    // whether |f| >= 2^n (32, 63 or 64); the truncated magnitude.
    let (param, head, trunc) = if from64 {
        (
            "v: vec2<u32>",
            "let a = vec2<u32>(v.x, v.y & 0x7fffffffu);\n    \
             let neg = (v.y >> 31u) == 1u;\n    let nan = d_is_nan(v);",
            "d_trunc(a)",
        )
    } else {
        (
            "f: f32",
            "let x = bitcast<u32>(f);\n    let a = x & 0x7fffffffu;\n    \
             let neg = (x >> 31u) == 1u;\n    let nan = a > 0x7f800000u;",
            "cv_trunc(a)",
        )
    };
    let big = |n: u32| {
        if from64 {
            format!("a.y >= {:#010x}u", (1023 + n) << 20)
        } else {
            format!("a >= {:#010x}u", (127 + n) << 23)
        }
    };
    let (lo, hi) = crate::scalar::int_range(to);
    let signed = to.is_signed_int();
    if wide(to) {
        let (min, max) = if signed {
            (
                "vec2<u32>(0u, 0x80000000u)",
                "vec2<u32>(0xffffffffu, 0x7fffffffu)",
            )
        } else {
            ("vec2<u32>(0u, 0u)", "vec2<u32>(0xffffffffu, 0xffffffffu)")
        };
        // |f| >= 2^63 (signed) or 2^64 (unsigned) saturates.
        let limit = big(if signed { 63 } else { 64 });
        let neg = if signed {
            "return select(m, cv_w_neg(m), neg);"
        } else {
            "return select(m, vec2<u32>(0u, 0u), neg);"
        };
        return format!(
            "fn {name}({param}) -> vec2<u32> {{
    {head}
    if (nan) {{
        return vec2<u32>(0u, 0u);
    }}
    if ({limit}) {{
        return select({max}, {min}, neg);
    }}
    let m = {trunc};
    {neg}
}}
"
        );
    }
    let ty = repr(to);
    let lit = |v: i128| {
        if signed {
            if v == i128::from(i32::MIN) {
                "i32(-2147483647 - 1)".to_string()
            } else {
                format!("{v}i")
            }
        } else {
            format!("{v}u")
        }
    };
    let (min, max) = (lit(lo), lit(hi));
    // The magnitudes that fit: up to MAX, and up to |MIN| when negative.
    let pos_cap = format!("{}u", hi);
    let body = if signed {
        format!(
            "if (neg) {{
        return select(bitcast<i32>(0u - m), {min}, m > {neg_cap}u);
    }}
    return select(bitcast<i32>(m), {max}, m > {pos_cap});",
            neg_cap = -lo
        )
    } else {
        format!(
            "if (neg) {{
        return 0u;
    }}
    return select(m, {max}, m > {pos_cap});"
        )
    };
    format!(
        "fn {name}({param}) -> {ty} {{
    {head}
    if (nan) {{
        return {zero};
    }}
    if ({limit}) {{
        // |f| >= 2^32.
        return select({max}, {min}, neg);
    }}
    let m = {trunc}.x;
    {body}
}}
",
        zero = if signed { "0i" } else { "0u" },
        limit = big(32),
    )
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

// Comparisons from the bits, as IEEE 754 defines them (every comparison
// with NaN is false but `!=`, -0.0 == +0.0, subnormals are not zero): a
// compiler may assume floats are never NaN, and lavapipe's `x != 0.0`
// is false for NaN.
fn f_key(v: f32) -> u32 {
    let x = bitcast<u32>(v);
    return select(x | 0x80000000u, ~x, (x >> 31u) == 1u);
}

fn f_both_zero(a: f32, b: f32) -> bool {
    return ((bitcast<u32>(a) | bitcast<u32>(b)) & 0x7fffffffu) == 0u;
}

// Branch-free (`&`, `|` and `select` evaluate both sides): threads that
// disagree on a branch run both sides under a mask on many adapters.
fn f_eq(a: f32, b: f32) -> bool {
    let nan = f_is_nan(a) | f_is_nan(b);
    return !nan & ((bitcast<u32>(a) == bitcast<u32>(b)) | f_both_zero(a, b));
}

fn f_lt(a: f32, b: f32) -> bool {
    let unordered = f_is_nan(a) | f_is_nan(b) | f_both_zero(a, b);
    return !unordered & (f_key(a) < f_key(b));
}

fn f_le(a: f32, b: f32) -> bool {
    return f_lt(a, b) | f_eq(a, b);
}

// A NaN operand (a's first), else equal operands (zeros of both signs
// give -0.0), else the lesser; each found whatever the others are, and
// the first that applies selected.
fn f_min(a: f32, b: f32) -> f32 {
    let equal = bitcast<f32>(bitcast<u32>(a) | bitcast<u32>(b));
    let ordered = select(select(b, a, a < b), equal, a == b);
    return select(select(ordered, b, f_is_nan(b)), a, f_is_nan(a));
}

fn f_max(a: f32, b: f32) -> f32 {
    let equal = bitcast<f32>(bitcast<u32>(a) & bitcast<u32>(b));
    let ordered = select(select(b, a, a > b), equal, a == b);
    return select(select(ordered, b, f_is_nan(b)), a, f_is_nan(a));
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
    // IEEE 754 `pow`'s special cases first, then `exp(b * log(|a|))`.
    if (b == 0.0 || a == 1.0) {
        return 1.0;
    }
    if (b == 1.0) {
        return a;
    }
    if (f_is_nan(a) || f_is_nan(b)) {
        return bitcast<f32>(0x7fc00000u);
    }
    let inf = bitcast<f32>(0x7f800000u);
    let ab = abs(b);
    let integral = floor(b) == b;
    let odd = integral && ab < 16777216.0 && (i32(ab) & 1i) == 1i;
    let neg = (bitcast<u32>(a) >> 31u) == 1u;
    let x = abs(a);
    if (ab == inf) {
        if (x == 1.0) {
            return 1.0;
        }
        return select(0.0, inf, (x > 1.0) == (b > 0.0));
    }
    var m: f32;
    if (x == 0.0) {
        m = select(0.0, inf, b < 0.0);
    } else if (x == inf) {
        m = select(inf, 0.0, b < 0.0);
    } else {
        if (neg && !integral) {
            return bitcast<f32>(0x7fc00000u);
        }
        // This module's `exp` and `log`, not WGSL's `pow`: adapters flush
        // its subnormal results to zero and its error is unspecified.
        m = f_exp(b * f_log(x));
    }
    return select(m, -m, neg && odd);
}
";

/// `f_tanh`, written where an expression takes a float `tanh` (it calls
/// [`FLOAT_HELPERS`]' `f_exp`).
const TANH_HELPER: &str = "\
// tanh within a few ULP: its odd Taylor polynomial through x^15 where
// |x| < 0.55 (the first term left out is below 2^-23 of the result),
// `1 - 2 / (e^(2|x|) + 1)` with the sign of x beyond. The sign is x's
// own bit (so tanh(-0) is -0, which `x + x * ...` would make +0).
fn f_tanh(x: f32) -> f32 {
    if (f_is_nan(x)) {
        return x;
    }
    let a = abs(x);
    if (a < 0.55) {
        let z = a * a;
        let m = a + a * z * (-0.33333334 + z * (0.13333334 + z * (-0.053968254 + z * (0.021869488 + z * (-0.008863236 + z * (0.0035921280 + z * -0.0014558344))))));
        return bitcast<f32>(bitcast<u32>(m) | (bitcast<u32>(x) & 0x80000000u));
    }
    let t = 1.0 - 2.0 / (f_exp(2.0 * a) + 1.0);
    return select(t, -t, x < 0.0);
}
";

/// Most loop iterations of one `f_fmod` (the float `%` helper): the two
/// subnormal normalisations (23 each), the long division over the
/// exponent difference (at most 253 + 23), the final normalisation (23).
pub const FMOD_STEPS: u64 = 23 + 23 + 276 + 23;

/// `f_fmod`, written where an expression takes a float `%`.
const FMOD_HELPER: &str = "\
// C's `fmod`, exact: the remainder of the mantissas by long division on
// the bits (WGSL's `%` is `a - b * trunc(a / b)`, which loses everything
// once `a / b` overflows or rounds).
fn f_fmod(a: f32, b: f32) -> f32 {
    let ua = bitcast<u32>(a);
    let sign = ua & 0x80000000u;
    let xa = ua & 0x7fffffffu;
    let xb = bitcast<u32>(b) & 0x7fffffffu;
    if (xb == 0u || xa >= 0x7f800000u || xb > 0x7f800000u) {
        return bitcast<f32>(0x7fc00000u);
    }
    if (xa < xb) {
        return a;
    }
    if (xa == xb) {
        return bitcast<f32>(sign);
    }
    var ea = i32(xa >> 23u);
    var ma = (xa & 0x7fffffu) | 0x800000u;
    if (ea == 0) {
        ea = 1;
        ma = xa;
        while ((ma & 0x800000u) == 0u) {
            ma = ma << 1u;
            ea = ea - 1;
        }
    }
    var eb = i32(xb >> 23u);
    var mb = (xb & 0x7fffffu) | 0x800000u;
    if (eb == 0) {
        eb = 1;
        mb = xb;
        while ((mb & 0x800000u) == 0u) {
            mb = mb << 1u;
            eb = eb - 1;
        }
    }
    for (; ea > eb; ea = ea - 1) {
        if (ma >= mb) {
            ma = ma - mb;
        }
        ma = ma << 1u;
    }
    if (ma >= mb) {
        ma = ma - mb;
    }
    if (ma == 0u) {
        return bitcast<f32>(sign);
    }
    while ((ma & 0x800000u) == 0u) {
        ma = ma << 1u;
        ea = ea - 1;
    }
    if (ea > 0) {
        return bitcast<f32>(sign | (u32(ea) << 23u) | (ma & 0x7fffffu));
    }
    return bitcast<f32>(sign | (ma >> u32(1 - ea)));
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

/// Integer powers of 32-bit (and narrower, wrapped after) integers:
/// square and multiply over the exponent's bits, wrapping as repeated
/// multiplication wraps; a negative exponent gives 1 for a base of 1, ±1
/// for -1, 0 otherwise (`ops_core::scalar`'s `int_pow`).
const INT_POW_HELPERS: &str = "\
fn i_pow(b: i32, e: i32) -> i32 {
    if (e < 0) {
        if (b == 1) {
            return 1;
        }
        if (b == -1) {
            return select(1, -1, (e & 1) != 0);
        }
        return 0;
    }
    var r = 1;
    var x = b;
    var n = u32(e);
    while (n != 0u) {
        if ((n & 1u) != 0u) {
            r = r * x;
        }
        x = x * x;
        n = n >> 1u;
    }
    return r;
}

fn u_pow(b: u32, e: u32) -> u32 {
    var r = 1u;
    var x = b;
    var n = e;
    while (n != 0u) {
        if ((n & 1u) != 0u) {
            r = r * x;
        }
        x = x * x;
        n = n >> 1u;
    }
    return r;
}
";

/// Integer powers of 64-bit integers (word pairs), as [`INT_POW_HELPERS`];
/// `signed` reads a set top bit of the exponent as negative.
const WIDE_POW_HELPERS: &str = "\
fn w_pow(b: vec2<u32>, e: vec2<u32>, signed: bool) -> vec2<u32> {
    if (signed && (e.y >> 31u) != 0u) {
        if (b.x == 1u && b.y == 0u) {
            return b;
        }
        if (b.x == 0xffffffffu && b.y == 0xffffffffu) {
            return select(vec2<u32>(1u, 0u), b, (e.x & 1u) != 0u);
        }
        return vec2<u32>(0u, 0u);
    }
    var r = vec2<u32>(1u, 0u);
    var x = b;
    var n = e;
    while (n.x != 0u || n.y != 0u) {
        if ((n.x & 1u) != 0u) {
            r = w_mul(r, x);
        }
        x = w_mul(x, x);
        n = vec2<u32>((n.x >> 1u) | (n.y << 31u), n.y >> 1u);
    }
    return r;
}
";

/// Division and remainder of 64-bit integers: unsigned long division by
/// shift and subtract, one quotient bit per step (the quotient in `.xy`,
/// the remainder in `.zw`); the signed ones divide the magnitudes and set
/// the signs (the quotient's by the operands', the remainder's by the
/// dividend's). As for 32-bit integers: `x / 0` is `x`, `x % 0` is 0,
/// `MIN / -1` is `MIN` (its magnitude 2^63 negates to itself).
const WIDE_DIV_HELPERS: &str = "\
fn w_divrem_u(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    if (b.x == 0u && b.y == 0u) {
        return vec4<u32>(a, 0u, 0u);
    }
    var q = vec2<u32>(0u, 0u);
    var r = vec2<u32>(0u, 0u);
    for (var i = 63u; i < 64u; i = i - 1u) {
        let word = select(a.x, a.y, i >= 32u);
        let bit = (word >> (i & 31u)) & 1u;
        // r < b, so 2r + bit < 2b: a carry out of 64 bits means r >= b.
        let carry = (r.y >> 31u) != 0u;
        r = vec2<u32>((r.x << 1u) | bit, (r.y << 1u) | (r.x >> 31u));
        if (carry || r.y > b.y || (r.y == b.y && r.x >= b.x)) {
            r = w_sub(r, b);
            if (i >= 32u) {
                q.y = q.y | (1u << (i & 31u));
            } else {
                q.x = q.x | (1u << i);
            }
        }
    }
    return vec4<u32>(q, r);
}

fn w_neg_if(a: vec2<u32>, neg: bool) -> vec2<u32> {
    return select(a, w_sub(vec2<u32>(0u, 0u), a), neg);
}

fn w_div_i(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let na = (a.y >> 31u) != 0u;
    let nb = (b.y >> 31u) != 0u;
    let d = w_divrem_u(w_neg_if(a, na), w_neg_if(b, nb));
    return w_neg_if(d.xy, na != nb);
}

fn w_rem_i(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let na = (a.y >> 31u) != 0u;
    let nb = (b.y >> 31u) != 0u;
    let d = w_divrem_u(w_neg_if(a, na), w_neg_if(b, nb));
    return w_neg_if(d.zw, na);
}
";

/// Shifts of 64-bit integers by a 64-bit count: a count of 64 or more
/// shifts every bit out (0, or the sign for `w_shr_i`).
const WIDE_SHIFT_HELPERS: &str = "\
fn w_shl(a: vec2<u32>, c: vec2<u32>) -> vec2<u32> {
    if (c.y != 0u || c.x >= 64u) {
        return vec2<u32>(0u, 0u);
    }
    let n = c.x;
    if (n == 0u) {
        return a;
    }
    if (n >= 32u) {
        return vec2<u32>(0u, a.x << (n - 32u));
    }
    return vec2<u32>(a.x << n, (a.y << n) | (a.x >> (32u - n)));
}

fn w_shr_bits(a: vec2<u32>, c: vec2<u32>, fill: u32) -> vec2<u32> {
    if (c.y != 0u || c.x >= 64u) {
        return vec2<u32>(fill, fill);
    }
    let n = c.x;
    if (n == 0u) {
        return a;
    }
    if (n >= 32u) {
        let m = n - 32u;
        let lo = select((a.y >> m) | (fill << (31u - m) << 1u), a.y, m == 0u);
        return vec2<u32>(lo, fill);
    }
    return vec2<u32>((a.x >> n) | (a.y << (32u - n)), (a.y >> n) | (fill << (31u - n) << 1u));
}

fn w_shr_u(a: vec2<u32>, c: vec2<u32>) -> vec2<u32> {
    return w_shr_bits(a, c, 0u);
}

fn w_shr_i(a: vec2<u32>, c: vec2<u32>) -> vec2<u32> {
    return w_shr_bits(a, c, select(0u, 0xffffffffu, (a.y >> 31u) != 0u));
}
";

/// The conversions of casts ([`cast_wgsl`]); FLOAT16 rounding calls
/// `h_encode`/`h_decode`, [`F16_HELPERS`] renamed.
const CAST_HELPERS: &str = "\
// A float's value rounded to FLOAT16 (to nearest even), in f32.
fn cv_f16(f: f32) -> f32 {
    return h_decode(h_encode(f));
}

// -v modulo 2^64.
fn cv_w_neg(v: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(0u - v.x, ~v.y + select(0u, 1u, v.x == 0u));
}

// An i32 sign-extended to a word pair.
fn cv_i32_w(v: i32) -> vec2<u32> {
    return vec2<u32>(bitcast<u32>(v), select(0u, 0xffffffffu, v < 0i));
}

// trunc(|f|) as a word pair, from the bits `a` of |f| < 2^64.
fn cv_trunc(a: u32) -> vec2<u32> {
    let e = a >> 23u;
    if (e < 127u) {
        return vec2<u32>(0u, 0u);
    }
    let m = (a & 0x7fffffu) | 0x800000u;
    if (e <= 150u) {
        return vec2<u32>(m >> (150u - e), 0u);
    }
    let s = e - 150u;
    if (s < 32u) {
        return vec2<u32>(m << s, m >> (32u - s));
    }
    return vec2<u32>(0u, m << (s - 32u));
}

// m * 2^shift as an f32, for 2^23 <= m <= 2^24 (m = 2^24 carries into
// the exponent).
fn cv_scale(m: u32, shift: u32) -> f32 {
    return bitcast<f32>(((shift + 150u) << 23u) + (m - 0x800000u));
}

// A u32 rounded to nearest even f32 (WGSL's f32(u) may round either way
// above 2^24).
fn cv_u32_f32(u: u32) -> f32 {
    if (u < 0x1000000u) {
        return f32(u);
    }
    let shift = 8u - countLeadingZeros(u);
    let m = u >> shift;
    let rest = u & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    let up = rest > half || (rest == half && (m & 1u) == 1u);
    return cv_scale(m + select(0u, 1u, up), shift);
}

fn cv_i32_f32(v: i32) -> f32 {
    let neg = v < 0i;
    let m = cv_u32_f32(select(bitcast<u32>(v), 0u - bitcast<u32>(v), neg));
    return select(m, -m, neg);
}

// A u64 rounded to nearest even f32 from all 64 bits at once: the 24 top
// bits, the next bit (round) and whether any bit below it is set (sticky).
fn cv_u64_f32(v: vec2<u32>) -> f32 {
    if (v.y == 0u) {
        return cv_u32_f32(v.x);
    }
    let shift = 40u - countLeadingZeros(v.y);
    var m = 0u;
    var round = false;
    var sticky = false;
    if (shift < 32u) {
        m = (v.y << (32u - shift)) | (v.x >> shift);
        round = ((v.x >> (shift - 1u)) & 1u) == 1u;
        sticky = (v.x & ((1u << (shift - 1u)) - 1u)) != 0u;
    } else if (shift == 32u) {
        m = v.y;
        round = (v.x >> 31u) == 1u;
        sticky = (v.x & 0x7fffffffu) != 0u;
    } else {
        let s = shift - 32u;
        m = v.y >> s;
        round = ((v.y >> (s - 1u)) & 1u) == 1u;
        sticky = (v.y & ((1u << (s - 1u)) - 1u)) != 0u || v.x != 0u;
    }
    let up = round && (sticky || (m & 1u) == 1u);
    return cv_scale(m + select(0u, 1u, up), shift);
}

fn cv_i64_f32(v: vec2<u32>) -> f32 {
    let neg = bitcast<i32>(v.y) < 0i;
    let m = cv_u64_f32(select(v, cv_w_neg(v), neg));
    return select(m, -m, neg);
}
";

/// The WGSL converting `s`, a value of `from`, to `to`: the meaning of
/// [`crate::scalar::cast_value`], exactly. Needs [`gen_expr_helpers`].
fn cast_wgsl(s: &str, from: DataType, to: DataType) -> String {
    if from == DataType::Float16 && to == DataType::Float16 {
        // A FLOAT16 value inside an expression is an unrounded f32 (the
        // sum of two FLOAT16 values, say): the cast is where it rounds, as
        // the CPU reference rounds it.
        return format!("cv_f16({s})");
    }
    if from == to {
        return s.to_string();
    }
    if from == DataType::Float64 || to == DataType::Float64 {
        return float64::cast_wgsl(s, from, to, &named("cv_d", to));
    }
    if to.is_bool() {
        return if from.is_float() {
            // NaN is true, both zeros false: from the bits.
            format!("((bitcast<u32>({s}) & 0x7fffffffu) != 0u)")
        } else if wide(from) {
            format!("any({s} != vec2<u32>(0u, 0u))")
        } else {
            format!(
                "({s} != {})",
                if from.is_signed_int() { "0i" } else { "0u" }
            )
        };
    }
    if from.is_bool() {
        return match repr(to) {
            "f32" => format!("select(0.0, 1.0, {s})"),
            "i32" => format!("select(0i, 1i, {s})"),
            "u32" => format!("select(0u, 1u, {s})"),
            _ => format!("vec2<u32>(select(0u, 1u, {s}), 0u)"),
        };
    }
    if from.is_float() {
        return if to.is_float() {
            // FLOAT16 values are f32 values: only narrowing rounds.
            if to == DataType::Float16 {
                format!("cv_f16({s})")
            } else {
                s.to_string()
            }
        } else {
            format!("{}({s})", named("cv_f", to))
        };
    }
    if to.is_float() {
        let f = match (wide(from), from.is_signed_int()) {
            (true, true) => format!("cv_i64_f32({s})"),
            (true, false) => format!("cv_u64_f32({s})"),
            (false, true) => format!("cv_i32_f32({s})"),
            (false, false) => format!("cv_u32_f32({s})"),
        };
        // Below 2^24 the f32 is exact; above, FLOAT16 overflows anyway:
        // one rounding either way.
        return if to == DataType::Float16 {
            format!("cv_f16({f})")
        } else {
            f
        };
    }
    // Integer to integer: the low bits.
    if wide(to) {
        return if wide(from) {
            s.to_string()
        } else if from.is_signed_int() {
            format!("cv_i32_w({s})")
        } else {
            format!("vec2<u32>({s}, 0u)")
        };
    }
    let (bits, bits_ty) = if wide(from) {
        (format!("{s}.x"), "u32")
    } else {
        (s.to_string(), repr(from))
    };
    let same = if bits_ty == repr(to) {
        bits
    } else {
        format!("bitcast<{}>({bits})", repr(to))
    };
    wrap_as(to, same)
}

/// `s` wrapped to the narrow integer type `dt` (unchanged otherwise).
fn wrap_as(dt: DataType, s: String) -> String {
    if narrow(dt) {
        format!("{}({s})", named("wrap", dt))
    } else {
        s
    }
}

/// The WGSL literal of `v`, a value of `dt`.
fn value_literal(v: Value, dt: DataType) -> String {
    match (v, repr(dt)) {
        (Value::B(b), _) => b.to_string(),
        (Value::F(x), _) if dt == DataType::Float64 => {
            let bits = x.to_bits();
            format!(
                "vec2<u32>({:#010x}u, {:#010x}u)",
                bits as u32,
                (bits >> 32) as u32
            )
        }
        (Value::F(x), _) => format!("bitcast<f32>({:#010x}u)", (x as f32).to_bits()),
        (Value::I(x), "i32") => {
            let v = x as i32;
            if v == i32::MIN {
                "i32(-2147483647 - 1)".into()
            } else {
                format!("{v}i")
            }
        }
        (Value::I(x), "u32") => format!("{}u", x as u32),
        (Value::I(x), _) => {
            let bits = x as u64;
            format!("vec2<u32>({}u, {}u)", bits as u32, (bits >> 32) as u32)
        }
    }
}

/// The WGSL expression of `e` in the type environment `env`, `var` giving
/// each variable's WGSL expression (in the compute type of its type). The
/// result has the compute type of `e`'s type ([`compute_type`]; a BOOL is
/// `u32` 1 or 0). The expression must be supported in `env`
/// ([`Scalar::unsupported_for`]). Needs [`gen_expr_helpers`] for `e` in
/// the module, and `param(i)` with a `P_ATTRS` constant when it reads
/// attributes.
pub fn scalar_wgsl(e: &Scalar, env: &TypeEnv<'_>, var: &dyn Fn(Var) -> String) -> String {
    let (s, dt) = gen(e, env, var);
    if dt.is_bool() {
        format!("select(0u, 1u, {s})")
    } else {
        s
    }
}

/// The WGSL of `e` in the representation of its type, and the type.
fn gen(e: &Scalar, env: &TypeEnv<'_>, var: &dyn Fn(Var) -> String) -> (String, DataType) {
    let go = |e: &Scalar| gen(e, env, var);
    match *e {
        Scalar::Var(v) => {
            let dt = env.var(v);
            let s = var(v);
            (
                if dt.is_bool() {
                    format!("({s} != 0u)")
                } else {
                    s
                },
                dt,
            )
        }
        // Two parameter words per attribute from `P_ATTRS`
        // (`crate::scalar::attr_words`): an integer as INT64, converted.
        Scalar::Attr(i, kind, t) => {
            let dt = env.resolve(t);
            let w = format!("param(P_ATTRS + {}u)", 2 * u32::from(i));
            let w1 = format!("param(P_ATTRS + {}u)", 2 * u32::from(i) + 1);
            let s = match kind {
                crate::scalar::AttrScalar::Bool => format!("({w} != 0u)"),
                crate::scalar::AttrScalar::Float if dt == DataType::Float64 => {
                    format!("d_from_f32(bitcast<f32>({w}))")
                }
                crate::scalar::AttrScalar::Float => format!("bitcast<f32>({w})"),
                crate::scalar::AttrScalar::Int => {
                    cast_wgsl(&format!("vec2<u32>({w}, {w1})"), DataType::Int64, dt)
                }
                // A value of `dt` already: a float's `f32` bits (FLOAT16
                // values are `f32`s in kernels), an integer's as INT64,
                // which converts to `dt` without loss.
                crate::scalar::AttrScalar::Number if dt.is_bool() => format!("({w} != 0u)"),
                crate::scalar::AttrScalar::Number if dt == DataType::Float64 => {
                    format!("d_from_f32(bitcast<f32>({w}))")
                }
                crate::scalar::AttrScalar::Number if dt.is_float() => format!("bitcast<f32>({w})"),
                crate::scalar::AttrScalar::Number => {
                    cast_wgsl(&format!("vec2<u32>({w}, {w1})"), DataType::Int64, dt)
                }
            };
            (s, dt)
        }
        Scalar::Int(..)
        | Scalar::Float(..)
        | Scalar::Bool(_)
        | Scalar::Lowest(_)
        | Scalar::Highest(_)
        | Scalar::FiniteLowest(_)
        | Scalar::FiniteHighest(_) => {
            let dt = e.type_of(env);
            let v = e.eval(env, &[Value::I(0); Var::COUNT], &[]);
            (value_literal(v, dt), dt)
        }
        Scalar::Cast(t, a) => {
            let to = env.resolve(t);
            let (s, from) = go(a);
            (cast_wgsl(&s, from, to), to)
        }
        Scalar::Unary(op, a) => {
            let (a, dt) = go(a);
            (
                unary_wgsl(op, a, dt),
                if op == Unary::Not { DataType::Bool } else { dt },
            )
        }
        Scalar::Binary(Binary::Pow, a, b) if a.type_of(env) != b.type_of(env) => {
            let ((a, dt), (b, bt)) = (go(a), go(b));
            if dt.is_int() && bt.is_float() {
                let x = cast_wgsl(&a, dt, DataType::Float64);
                let y = cast_wgsl(&b, bt, DataType::Float64);
                let r = format!("dx_pow_int({x}, {y})");
                return (cast_wgsl(&r, DataType::Float64, dt), dt);
            }
            if dt.is_float() && bt == DataType::Float64 {
                // A FLOAT64 exponent of a narrower base: the power in FLOAT64.
                let x = cast_wgsl(&a, dt, DataType::Float64);
                let r = binary_wgsl(Binary::Pow, x, b, DataType::Float64);
                return (cast_wgsl(&r, DataType::Float64, dt), dt);
            }
            if dt == DataType::Float16 && bt == DataType::Float32 {
                // FLOAT16 values are `f32`s: the power of both, rounded on store.
                return (binary_wgsl(Binary::Pow, a, b, DataType::Float32), dt);
            }
            if dt.is_float() && bt.is_int() {
                // |x|^y, negated for a negative base and an odd exponent, the
                // parity read from the integer itself.
                let odd = if wide(bt) {
                    format!("(({b}).x & 1u) == 1u")
                } else {
                    format!("(bitcast<u32>({b}) & 1u) == 1u")
                };
                let pt = if dt == DataType::Float16 {
                    DataType::Float32
                } else {
                    dt
                };
                let y = cast_wgsl(&b, bt, pt);
                let (abs, neg) = if dt == DataType::Float64 {
                    (
                        float64::unary_wgsl(Unary::Abs, &a).unwrap_or_else(|| a.clone()),
                        format!("(({a}).y >> 31u) == 1u"),
                    )
                } else {
                    (
                        format!("bitcast<f32>(bitcast<u32>({a}) & 0x7fffffffu)"),
                        format!("(bitcast<u32>({a}) >> 31u) == 1u"),
                    )
                };
                let m = binary_wgsl(Binary::Pow, abs, y, pt);
                let minus = unary_wgsl(Unary::Neg, format!("({m})"), pt);
                return (format!("select({m}, {minus}, ({neg}) && ({odd}))"), dt);
            }
            // A narrower float exponent converts exactly; an integer one of
            // an integer base converts as `cast` does.
            let b = cast_wgsl(&b, bt, dt);
            (binary_wgsl(Binary::Pow, a, b, dt), dt)
        }
        Scalar::Binary(op, a, b) => {
            let ((a, dt), (b, _)) = (go(a), go(b));
            let rt = if op.is_comparison() || op.is_logical() {
                DataType::Bool
            } else {
                dt
            };
            (binary_wgsl(op, a, b, dt), rt)
        }
        Scalar::Select(c, t, f) => {
            let ((c, _), (t, dt), (f, _)) = (go(c), go(t), go(f));
            (format!("select({f}, {t}, {c})"), dt)
        }
    }
}

fn unary_wgsl(op: Unary, a: String, dt: DataType) -> String {
    if op == Unary::Not {
        return format!("!({a})");
    }
    if dt.is_bool() {
        // An unsigned 1-bit integer: `-b`, `abs(b)`, `floor(b)` are `b`.
        return a;
    }
    if dt == DataType::Float64 {
        // The others are spec errors for FLOAT64 on the GPU.
        return float64::unary_wgsl(op, &a).unwrap_or(a);
    }
    if wide(dt) {
        return match op {
            Unary::BitNot => format!("(~{a})"),
            Unary::Neg => format!("w_sub(vec2<u32>(0u, 0u), {a})"),
            Unary::Abs if dt.is_signed_int() => format!("w_abs_int64({a})"),
            // Unsigned `abs`; floor, ceil and round of an integer; the
            // others are spec errors for integers.
            _ => a,
        };
    }
    let ty = repr(dt);
    let float = ty == "f32";
    match op {
        Unary::Neg if ty == "u32" => wrap_as(dt, format!("(0u - {a})")),
        Unary::Neg => wrap_as(dt, format!("(-{a})")),
        Unary::Abs if ty == "u32" => a,
        Unary::Abs => wrap_as(dt, format!("abs({a})")),
        Unary::Floor | Unary::Ceil | Unary::Round if !float => a,
        // The complement of a narrow value is in its type's range already
        // (an unsigned one keeps its high bits clear by the wrap).
        Unary::BitNot => wrap_as(dt, format!("(~{a})")),
        Unary::Sqrt => format!("sqrt({a})"),
        Unary::Exp => format!("f_exp({a})"),
        Unary::Log => format!("f_log({a})"),
        Unary::Tanh => format!("f_tanh({a})"),
        Unary::Floor => format!("floor({a})"),
        Unary::Ceil => format!("ceil({a})"),
        Unary::Round => format!("round({a})"),
        Unary::Not => unreachable!("handled above"),
    }
}

/// `a << b` or `a >> b` on a 32-bit or narrower integer: WGSL takes the
/// count modulo 32, so a count of the type's width or more (its bits read
/// as unsigned) is handled apart: 0, or the sign for `>>` on signed types.
fn shift_wgsl(op: Binary, a: &str, b: &str, dt: DataType) -> String {
    let bits = dt.size_bits();
    let signed = dt.is_signed_int();
    let count = if signed {
        format!("bitcast<u32>({b})")
    } else {
        b.to_string()
    };
    let inside = format!("({count} < {bits}u)");
    let shifted = if op == Binary::Shl {
        wrap_as(dt, format!("({a} << ({count} & 31u))"))
    } else {
        format!("({a} >> ({count} & 31u))")
    };
    let out = match (op, signed) {
        (Binary::Shr, true) => format!("({a} >> 31u)"),
        (_, true) => "0i".to_string(),
        _ => "0u".to_string(),
    };
    format!("select({out}, {shifted}, {inside})")
}

fn binary_wgsl(op: Binary, a: String, b: String, dt: DataType) -> String {
    let infix = |o: &str| format!("({a} {o} {b})");
    if op.is_logical() {
        return infix(if op == Binary::And { "&&" } else { "||" });
    }
    if dt.is_bool() {
        // An unsigned 1-bit integer, false < true.
        return match op {
            Binary::Add | Binary::Sub | Binary::Ne => infix("!="),
            Binary::Mul | Binary::Min => infix("&&"),
            Binary::Max => infix("||"),
            // `b / 0` is `b`, `b / 1` is `b`; `b % 0` and `b % 1` are 0.
            Binary::Div => a,
            Binary::Rem => "false".into(),
            Binary::Eq => infix("=="),
            Binary::Lt => format!("(!{a} && {b})"),
            Binary::Le => format!("(!{a} || {b})"),
            Binary::Gt => format!("({a} && !{b})"),
            Binary::Ge => format!("({a} || !{b})"),
            // A spec error for BOOL.
            _ => a,
        };
    }
    if dt == DataType::Float64 {
        // The others are spec errors for FLOAT64 on the GPU.
        return float64::binary_wgsl(op, &a, &b).unwrap_or(a);
    }
    if wide(dt) {
        let lt = named("w_lt", dt);
        return match op {
            Binary::Add => format!("w_add({a}, {b})"),
            Binary::Sub => format!("w_sub({a}, {b})"),
            Binary::Mul => format!("w_mul({a}, {b})"),
            Binary::Min => format!("select({b}, {a}, {lt}({a}, {b}))"),
            Binary::Max => format!("select({b}, {a}, {lt}({b}, {a}))"),
            Binary::Eq => format!("w_eq({a}, {b})"),
            Binary::Ne => format!("!w_eq({a}, {b})"),
            Binary::Lt => format!("{lt}({a}, {b})"),
            Binary::Gt => format!("{lt}({b}, {a})"),
            Binary::Le => format!("!{lt}({b}, {a})"),
            Binary::Ge => format!("!{lt}({a}, {b})"),
            Binary::BitAnd => infix("&"),
            Binary::BitOr => infix("|"),
            Binary::BitXor => infix("^"),
            Binary::Shl => format!("w_shl({a}, {b})"),
            Binary::Shr if dt.is_signed_int() => format!("w_shr_i({a}, {b})"),
            Binary::Shr => format!("w_shr_u({a}, {b})"),
            Binary::Pow => format!("w_pow({a}, {b}, {})", dt.is_signed_int()),
            Binary::Div if dt.is_signed_int() => format!("w_div_i({a}, {b})"),
            Binary::Div => format!("w_divrem_u({a}, {b}).xy"),
            Binary::Rem if dt.is_signed_int() => format!("w_rem_i({a}, {b})"),
            Binary::Rem => format!("w_divrem_u({a}, {b}).zw"),
            // Spec errors for 64-bit integers.
            _ => a,
        };
    }
    let float = repr(dt) == "f32";
    if float && op.is_comparison() {
        return match op {
            Binary::Eq => format!("f_eq({a}, {b})"),
            Binary::Ne => format!("!f_eq({a}, {b})"),
            Binary::Lt => format!("f_lt({a}, {b})"),
            Binary::Le => format!("f_le({a}, {b})"),
            Binary::Gt => format!("f_lt({b}, {a})"),
            _ => format!("f_le({b}, {a})"),
        };
    }
    match op {
        Binary::Add => wrap_as(dt, infix("+")),
        Binary::Sub => wrap_as(dt, infix("-")),
        Binary::Mul => wrap_as(dt, infix("*")),
        Binary::Div => wrap_as(dt, infix("/")),
        Binary::Rem if float => format!("f_fmod({a}, {b})"),
        Binary::Rem => infix("%"),
        Binary::Min if float => format!("f_min({a}, {b})"),
        Binary::Max if float => format!("f_max({a}, {b})"),
        Binary::Min => format!("min({a}, {b})"),
        Binary::Max => format!("max({a}, {b})"),
        Binary::Pow if float => format!("f_pow({a}, {b})"),
        Binary::Pow if repr(dt) == "i32" => wrap_as(dt, format!("i_pow({a}, {b})")),
        Binary::Pow => wrap_as(dt, format!("u_pow({a}, {b})")),
        Binary::Eq => infix("=="),
        Binary::Ne => infix("!="),
        Binary::Lt => infix("<"),
        Binary::Le => infix("<="),
        Binary::Gt => infix(">"),
        Binary::Ge => infix(">="),
        // Narrow values are kept wrapped (sign-extended in `i32`, high bits
        // clear in `u32`), so and, or and exclusive or stay in range.
        Binary::BitAnd => infix("&"),
        Binary::BitOr => infix("|"),
        Binary::BitXor => infix("^"),
        Binary::Shl | Binary::Shr => shift_wgsl(op, &a, &b, dt),
        Binary::And | Binary::Or => unreachable!("handled above"),
    }
}
