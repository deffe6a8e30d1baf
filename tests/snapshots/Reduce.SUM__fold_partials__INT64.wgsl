// @generated from specs/reduce.op
// kernel: Reduce.SUM/fold_partials/INT64
// fold (fold_partials) of INT64 in vec2<u32>: identity 0; map x; combine a + b; finish acc

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
@group(0) @binding(3) var<storage, read_write> output: array<u32>;

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
    return output[i];
}

fn output_set(i: u32, v: u32) {
    output[i] = v;
}

fn decode(raw: vec2<u32>) -> vec2<u32> {
    return raw;
}

fn encode(v: vec2<u32>) -> vec2<u32> {
    return v;
}

fn acc_words(v: vec2<u32>) -> vec2<u32> {
    return v;
}

fn acc_value(w: vec2<u32>) -> vec2<u32> {
    return w;
}
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

fn w_lt_int64(a: vec2<u32>, b: vec2<u32>) -> bool {
    let ah = bitcast<i32>(a.y);
    let bh = bitcast<i32>(b.y);
    return ah < bh || (ah == bh && a.x < b.x);
}

fn w_abs_int64(a: vec2<u32>) -> vec2<u32> {
    return select(a, w_sub(vec2<u32>(0u, 0u), a), bitcast<i32>(a.y) < 0i);
}

fn load_partial(i: u32) -> vec2<u32> {
    return acc_value(vec2<u32>(src_word(2u * i), src_word(2u * i + 1u)));
}

fn store_partial(i: u32, v: vec2<u32>) {
    let words = acc_words(v);
    partials_set(2u * i, words.x);
    partials_set(2u * i + 1u, words.y);
}

fn store_output(i: u32, v: vec2<u32>) {
    output_set(2u * i, v.x);
    output_set(2u * i + 1u, v.y);
}

fn identity() -> vec2<u32> {
    return vec2<u32>(0u, 0u);
}

fn map(x: vec2<u32>) -> vec2<u32> {
    return x;
}

fn combine(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return w_add(a, b);
}

fn finish(acc: vec2<u32>, n: vec2<u32>) -> vec2<u32> {
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
    for (var j = begin; j < end; j = j + 1u) {
        acc = combine(acc, load_partial(o * len + j));
    }
    if (param(P_FINAL) == 1u) {
        store_output(o, encode(finish(acc, vec2<u32>(param(P_N_LO), param(P_N_HI)))));
    }
    else {
        store_partial(t, acc);
    }
}

// ---- segmented variant, segments per binding [1, 4, 4, 4] ----

// @generated from specs/reduce.op
// kernel: Reduce.SUM/fold_partials/INT64
// fold (fold_partials) of INT64 in vec2<u32>: identity 0; map x; combine a + b; finish acc

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
@group(0) @binding(9) var<storage, read_write> output_s0: array<u32>;
@group(0) @binding(10) var<storage, read_write> output_s1: array<u32>;
@group(0) @binding(11) var<storage, read_write> output_s2: array<u32>;
@group(0) @binding(12) var<storage, read_write> output_s3: array<u32>;

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
        return output_s0[i];
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        return output_s1[r];
    }
    if (s == 2u) {
        return output_s2[r];
    }
    return output_s3[r];
}

fn output_set(i: u32, v: u32) {
    let n = arrayLength(&output_s0);
    if (i < n) {
        output_s0[i] = v;
        return;
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        output_s1[r] = v;
        return;
    }
    if (s == 2u) {
        output_s2[r] = v;
        return;
    }
    output_s3[r] = v;
}

fn decode(raw: vec2<u32>) -> vec2<u32> {
    return raw;
}

fn encode(v: vec2<u32>) -> vec2<u32> {
    return v;
}

fn acc_words(v: vec2<u32>) -> vec2<u32> {
    return v;
}

fn acc_value(w: vec2<u32>) -> vec2<u32> {
    return w;
}
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

fn w_lt_int64(a: vec2<u32>, b: vec2<u32>) -> bool {
    let ah = bitcast<i32>(a.y);
    let bh = bitcast<i32>(b.y);
    return ah < bh || (ah == bh && a.x < b.x);
}

fn w_abs_int64(a: vec2<u32>) -> vec2<u32> {
    return select(a, w_sub(vec2<u32>(0u, 0u), a), bitcast<i32>(a.y) < 0i);
}

fn load_partial(i: u32) -> vec2<u32> {
    return acc_value(vec2<u32>(src_word(2u * i), src_word(2u * i + 1u)));
}

fn store_partial(i: u32, v: vec2<u32>) {
    let words = acc_words(v);
    partials_set(2u * i, words.x);
    partials_set(2u * i + 1u, words.y);
}

fn store_output(i: u32, v: vec2<u32>) {
    output_set(2u * i, v.x);
    output_set(2u * i + 1u, v.y);
}

fn identity() -> vec2<u32> {
    return vec2<u32>(0u, 0u);
}

fn map(x: vec2<u32>) -> vec2<u32> {
    return x;
}

fn combine(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return w_add(a, b);
}

fn finish(acc: vec2<u32>, n: vec2<u32>) -> vec2<u32> {
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
    for (var j = begin; j < end; j = j + 1u) {
        acc = combine(acc, load_partial(o * len + j));
    }
    if (param(P_FINAL) == 1u) {
        store_output(o, encode(finish(acc, vec2<u32>(param(P_N_LO), param(P_N_HI)))));
    }
    else {
        store_partial(t, acc);
    }
}
