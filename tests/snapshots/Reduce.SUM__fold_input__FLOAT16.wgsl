// @generated from specs/reduce.op
// kernel: Reduce.SUM/fold_input/FLOAT16
// fold (fold_input) of FLOAT16 in f32: identity 0; map x; combine a + b; finish acc

const WORKGROUP_SIZE: u32 = 64u;
const P_OUTPUTS: u32 = 0u;
const P_LEN: u32 = 1u;
const P_CHUNK: u32 = 2u;
const P_CHUNKS: u32 = 3u;
const P_FINAL: u32 = 4u;
const P_N_LO: u32 = 5u;
const P_N_HI: u32 = 6u;
const P_KEPT_DIMS: u32 = 7u;
const P_REDUCED_DIMS: u32 = 8u;
const P_KEPT_SIZES: u32 = 16u;
const P_KEPT_STRIDES: u32 = 24u;
const P_REDUCED_SIZES: u32 = 32u;
const P_REDUCED_STRIDES: u32 = 40u;
const P_ATTRS: u32 = 48u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> partials: array<u32>;
@group(0) @binding(3) var<storage, read_write> output: array<atomic<u32>>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Word i of `src`.
fn src_word(i: u32) -> u32 {
    return src[i];
}

// Word i of `partials`.
fn partials_word(i: u32) -> u32 {
    return partials[i];
}

fn partials_set(i: u32, v: u32) {
    partials[i] = v;
}

// Word i of `output`.
fn output_word(i: u32) -> u32 {
    return atomicLoad(&output[i]);
}

fn output_atomic_and(i: u32, v: u32) {
    atomicAnd(&output[i], v);
}

fn output_atomic_or(i: u32, v: u32) {
    atomicOr(&output[i], v);
}

fn output_atomic_min(i: u32, v: u32) {
    atomicMin(&output[i], v);
}

fn output_atomic_max(i: u32, v: u32) {
    atomicMax(&output[i], v);
}

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
fn acc_words(v: f32) -> u32 {
    return bitcast<u32>(v);
}

fn acc_value(w: u32) -> f32 {
    return bitcast<f32>(w);
}
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

fn load_input(i: u32) -> u32 {
    return (src_word(i >> 1u) >> ((i & 1u) * 16u)) & 0xffffu;
}

fn store_partial(i: u32, v: f32) {
    let words = acc_words(v);
    partials_set(i, words);
}

fn store_output(i: u32, v: u32) {
    let word = i >> 1u;
    let shift = (i & 1u) * 16u;
    output_atomic_and(word, ~(0xffffu << shift));
    output_atomic_or(word, (v & 0xffffu) << shift);
}

fn identity() -> f32 {
    return bitcast<f32>(0x00000000u);
}

fn map(x: f32) -> f32 {
    return x;
}

fn combine(a: f32, b: f32) -> f32 {
    return (a + b);
}

fn finish(acc: f32, n: f32) -> f32 {
    return acc;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WORKGROUP_SIZE;
    let chunks = param(P_CHUNKS);
    if (t >= param(P_OUTPUTS) * chunks) {
        return;
    }
    let o = t / chunks;
    let c = t - o * chunks;
    let len = param(P_LEN);
    let begin = min(c * param(P_CHUNK), len);
    let end = min(begin + param(P_CHUNK), len);
    var acc = identity();
    // The first element of output o's sub-tensor.
    var rest = o;
    var base = 0u;
    for (var d = param(P_KEPT_DIMS); d > 0u; d = d - 1u) {
        let size = param(P_KEPT_SIZES + d - 1u);
        base = base + (rest % size) * param(P_KEPT_STRIDES + d - 1u);
        rest = rest / size;
    }
    if (param(P_REDUCED_DIMS) <= 1u) {
        let stride = param(P_REDUCED_STRIDES);
        for (var r = begin; r < end; r = r + 1u) {
            acc = combine(acc, map(decode(load_input(base + r * stride))));
        }
    }
    else {
        for (var r = begin; r < end; r = r + 1u) {
            var q = r;
            var offset = base;
            for (var d = param(P_REDUCED_DIMS); d > 0u; d = d - 1u) {
                let size = param(P_REDUCED_SIZES + d - 1u);
                offset = offset + (q % size) * param(P_REDUCED_STRIDES + d - 1u);
                q = q / size;
            }
            acc = combine(acc, map(decode(load_input(offset))));
        }
    }
    if (param(P_FINAL) == 1u) {
        store_output(o, encode(finish(acc, bitcast<f32>(param(P_N_LO)))));
    }
    else {
        store_partial(t, acc);
    }
}

// ---- segmented variant, segments per binding [1, 4, 4, 4] ----

// @generated from specs/reduce.op
// kernel: Reduce.SUM/fold_input/FLOAT16
// fold (fold_input) of FLOAT16 in f32: identity 0; map x; combine a + b; finish acc

const WORKGROUP_SIZE: u32 = 64u;
const P_OUTPUTS: u32 = 0u;
const P_LEN: u32 = 1u;
const P_CHUNK: u32 = 2u;
const P_CHUNKS: u32 = 3u;
const P_FINAL: u32 = 4u;
const P_N_LO: u32 = 5u;
const P_N_HI: u32 = 6u;
const P_KEPT_DIMS: u32 = 7u;
const P_REDUCED_DIMS: u32 = 8u;
const P_KEPT_SIZES: u32 = 16u;
const P_KEPT_STRIDES: u32 = 24u;
const P_REDUCED_SIZES: u32 = 32u;
const P_REDUCED_STRIDES: u32 = 40u;
const P_ATTRS: u32 = 48u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> src_s0: array<u32>;
@group(0) @binding(2) var<storage, read> src_s1: array<u32>;
@group(0) @binding(3) var<storage, read> src_s2: array<u32>;
@group(0) @binding(4) var<storage, read> src_s3: array<u32>;
@group(0) @binding(5) var<storage, read_write> partials_s0: array<u32>;
@group(0) @binding(6) var<storage, read_write> partials_s1: array<u32>;
@group(0) @binding(7) var<storage, read_write> partials_s2: array<u32>;
@group(0) @binding(8) var<storage, read_write> partials_s3: array<u32>;
@group(0) @binding(9) var<storage, read_write> output_s0: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> output_s1: array<atomic<u32>>;
@group(0) @binding(11) var<storage, read_write> output_s2: array<atomic<u32>>;
@group(0) @binding(12) var<storage, read_write> output_s3: array<atomic<u32>>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Word i of `src`, bound in 4 segments of arrayLength(&src_s0) words.
fn src_word(i: u32) -> u32 {
    let n = arrayLength(&src_s0);
    if (i < n) {
        return src_s0[i];
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        return src_s1[r];
    }
    if (s == 2u) {
        return src_s2[r];
    }
    return src_s3[r];
}

// Word i of `partials`, bound in 4 segments of arrayLength(&partials_s0) words.
fn partials_word(i: u32) -> u32 {
    let n = arrayLength(&partials_s0);
    if (i < n) {
        return partials_s0[i];
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        return partials_s1[r];
    }
    if (s == 2u) {
        return partials_s2[r];
    }
    return partials_s3[r];
}

fn partials_set(i: u32, v: u32) {
    let n = arrayLength(&partials_s0);
    if (i < n) {
        partials_s0[i] = v;
        return;
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        partials_s1[r] = v;
        return;
    }
    if (s == 2u) {
        partials_s2[r] = v;
        return;
    }
    partials_s3[r] = v;
}

// Word i of `output`, bound in 4 segments of arrayLength(&output_s0) words.
fn output_word(i: u32) -> u32 {
    let n = arrayLength(&output_s0);
    if (i < n) {
        return atomicLoad(&output_s0[i]);
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        return atomicLoad(&output_s1[r]);
    }
    if (s == 2u) {
        return atomicLoad(&output_s2[r]);
    }
    return atomicLoad(&output_s3[r]);
}

fn output_atomic_and(i: u32, v: u32) {
    let n = arrayLength(&output_s0);
    if (i < n) {
        atomicAnd(&output_s0[i], v);
        return;
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        atomicAnd(&output_s1[r], v);
        return;
    }
    if (s == 2u) {
        atomicAnd(&output_s2[r], v);
        return;
    }
    atomicAnd(&output_s3[r], v);
}

fn output_atomic_or(i: u32, v: u32) {
    let n = arrayLength(&output_s0);
    if (i < n) {
        atomicOr(&output_s0[i], v);
        return;
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        atomicOr(&output_s1[r], v);
        return;
    }
    if (s == 2u) {
        atomicOr(&output_s2[r], v);
        return;
    }
    atomicOr(&output_s3[r], v);
}

fn output_atomic_min(i: u32, v: u32) {
    let n = arrayLength(&output_s0);
    if (i < n) {
        atomicMin(&output_s0[i], v);
        return;
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        atomicMin(&output_s1[r], v);
        return;
    }
    if (s == 2u) {
        atomicMin(&output_s2[r], v);
        return;
    }
    atomicMin(&output_s3[r], v);
}

fn output_atomic_max(i: u32, v: u32) {
    let n = arrayLength(&output_s0);
    if (i < n) {
        atomicMax(&output_s0[i], v);
        return;
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        atomicMax(&output_s1[r], v);
        return;
    }
    if (s == 2u) {
        atomicMax(&output_s2[r], v);
        return;
    }
    atomicMax(&output_s3[r], v);
}

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
fn acc_words(v: f32) -> u32 {
    return bitcast<u32>(v);
}

fn acc_value(w: u32) -> f32 {
    return bitcast<f32>(w);
}
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

fn load_input(i: u32) -> u32 {
    return (src_word(i >> 1u) >> ((i & 1u) * 16u)) & 0xffffu;
}

fn store_partial(i: u32, v: f32) {
    let words = acc_words(v);
    partials_set(i, words);
}

fn store_output(i: u32, v: u32) {
    let word = i >> 1u;
    let shift = (i & 1u) * 16u;
    output_atomic_and(word, ~(0xffffu << shift));
    output_atomic_or(word, (v & 0xffffu) << shift);
}

fn identity() -> f32 {
    return bitcast<f32>(0x00000000u);
}

fn map(x: f32) -> f32 {
    return x;
}

fn combine(a: f32, b: f32) -> f32 {
    return (a + b);
}

fn finish(acc: f32, n: f32) -> f32 {
    return acc;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WORKGROUP_SIZE;
    let chunks = param(P_CHUNKS);
    if (t >= param(P_OUTPUTS) * chunks) {
        return;
    }
    let o = t / chunks;
    let c = t - o * chunks;
    let len = param(P_LEN);
    let begin = min(c * param(P_CHUNK), len);
    let end = min(begin + param(P_CHUNK), len);
    var acc = identity();
    // The first element of output o's sub-tensor.
    var rest = o;
    var base = 0u;
    for (var d = param(P_KEPT_DIMS); d > 0u; d = d - 1u) {
        let size = param(P_KEPT_SIZES + d - 1u);
        base = base + (rest % size) * param(P_KEPT_STRIDES + d - 1u);
        rest = rest / size;
    }
    if (param(P_REDUCED_DIMS) <= 1u) {
        let stride = param(P_REDUCED_STRIDES);
        for (var r = begin; r < end; r = r + 1u) {
            acc = combine(acc, map(decode(load_input(base + r * stride))));
        }
    }
    else {
        for (var r = begin; r < end; r = r + 1u) {
            var q = r;
            var offset = base;
            for (var d = param(P_REDUCED_DIMS); d > 0u; d = d - 1u) {
                let size = param(P_REDUCED_SIZES + d - 1u);
                offset = offset + (q % size) * param(P_REDUCED_STRIDES + d - 1u);
                q = q / size;
            }
            acc = combine(acc, map(decode(load_input(offset))));
        }
    }
    if (param(P_FINAL) == 1u) {
        store_output(o, encode(finish(acc, bitcast<f32>(param(P_N_LO)))));
    }
    else {
        store_partial(t, acc);
    }
}
