// @generated from specs/argmin.op
// kernel: ArgMin/reduce_rows/FLOAT16/UINT64
// reduce (reduce_rows): keep Index, select Min, zeros Equal; input FLOAT16, output UINT64

const WORKGROUP_SIZE: u32 = 256u;
const P_OUTPUT_COUNT: u32 = 0u;
const P_REDUCE_LEN: u32 = 1u;
const P_KEPT_RANK: u32 = 2u;
const P_REDUCED_RANK: u32 = 3u;
const P_TIES: u32 = 4u;
const P_TEAM: u32 = 6u;
const P_CHUNK_LEN: u32 = 7u;
const P_KEPT_SIZES: u32 = 8u;
const P_KEPT_STRIDES: u32 = 16u;
const P_REDUCED_SIZES: u32 = 24u;
const P_REDUCED_STRIDES: u32 = 32u;
const P_CHUNK_COUNT: u32 = 40u;
const P_VECTORS: u32 = 41u;
const P_PHASES: u32 = 42u;
const P_SEGMENTS: u32 = 43u;
const TIES_LAST: u32 = 1u;
// The position of no element: an empty candidate.
const NO_POSITION: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> input: array<u32>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Word i of `input`.
fn input_word(i: u32) -> u32 {
    return input[i];
}

// Word i of `output`.
fn output_word(i: u32) -> u32 {
    return output[i];
}

fn output_set(i: u32, v: u32) {
    output[i] = v;
}

fn load_input(i: u32) -> u32 {
    return (input_word(i >> 1u) >> ((i & 1u) * 16u)) & 0xffffu;
}

fn store_output(i: u32, v: vec2<u32>) {
    output_set(2u * i, v.x);
    output_set(2u * i + 1u, v.y);
}

fn order_key(v: u32) -> u32 {
    let b = select(v, 0u, v == 0x8000u);
    let k = b ^ (((b >> 15u) * 0x7fffu) | 0x8000u);
    return select(k, 0u, (b & 0x7fffu) > 0x7c00u);
}

fn key_less(a: u32, b: u32) -> bool {
    return a < b;
}

// The selection's rank of a raw element: the smallest rank wins.
fn rank(v: u32) -> u32 {
    return order_key(v);
}

// Whether a candidate at a later position than the best so far beats it.
fn later_wins(candidate: u32, best: u32, last: bool) -> bool {
    return key_less(candidate, best) | (last & !key_less(best, candidate));
}

fn kept_offset(o: u32) -> u32 {
    let dims = param(P_KEPT_RANK);
    // One dimension (the common case) or none: no division.
    if (dims <= 1u) {
        return o * param(P_KEPT_STRIDES);
    }
    var rest = o;
    var offset = 0u;
    for (var d = dims; d > 0u; d = d - 1u) {
        let size = param(P_KEPT_SIZES + d - 1u);
        offset = offset + (rest % size) * param(P_KEPT_STRIDES + d - 1u);
        rest = rest / size;
    }
    return offset;
}

fn reduced_offset(r: u32) -> u32 {
    let dims = param(P_REDUCED_RANK);
    // One dimension (the common case) or none: no division.
    if (dims <= 1u) {
        return r * param(P_REDUCED_STRIDES);
    }
    var rest = r;
    var offset = 0u;
    for (var d = dims; d > 0u; d = d - 1u) {
        let size = param(P_REDUCED_SIZES + d - 1u);
        offset = offset + (rest % size) * param(P_REDUCED_STRIDES + d - 1u);
        rest = rest / size;
    }
    return offset;
}

// A candidate: its rank and position (NO_POSITION when empty).
struct Best {
    rank: u32,
    position: u32,
}

// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: u32 = 0xffffffffu;

// The reduced dimensions' rank and innermost stride, read once at the top.
struct Reduced {
    dims: u32,
    stride: u32,
}

// The best of positions [begin, end) of the sub-tensor at base, visited in order;
// the offset steps along the innermost reduced dimension and is recomputed
// only where that dimension wraps.
fn scan(base: u32, begin: u32, end: u32, last: bool, g: Reduced) -> Best {
    if (begin >= end) {
        return Best(0u, NO_POSITION);
    }
    // One reduced dimension (the common case): a plain stride, no wrap; lavapipe
    // runs the general loop below as well, but once, all lanes off.
    if (g.dims <= 1u) {
        var best_rank = NO_RANK;
        var best_position = begin;
        var offset = base + begin * g.stride;
        let offset_step = g.stride * 1u;
        if (last) {
            for (var i = 0u; i < end - begin; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = !key_less(best_rank, candidate);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, begin + i * 1u, wins);
                offset = offset + offset_step;
            }
        } else {
            for (var i = 0u; i < end - begin; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = key_less(candidate, best_rank);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, begin + i * 1u, wins);
                offset = offset + offset_step;
            }
        }
        return Best(best_rank, best_position);
    }
    let inner = max(g.dims, 1u) - 1u;
    let inner_size = param(P_REDUCED_SIZES + inner);
    let inner_stride = param(P_REDUCED_STRIDES + inner);
    var column = begin % inner_size;
    var offset = base + reduced_offset(begin);
    var best = Best(rank(load_input(offset)), begin);
    for (var r = begin + 1u; r < end; r = r + 1u) {
        column = column + 1u;
        if (column == inner_size) {
            column = 0u;
            offset = base + reduced_offset(r);
        } else {
            offset = offset + inner_stride;
        }
        let candidate = rank(load_input(offset));
        if (later_wins(candidate, best.rank, last)) {
            best = Best(candidate, r);
        }
    }
    return best;
}

// Writes output element o: the selected element's position or bits.
fn emit(o: u32, position: u32, base: u32) {
    store_output(o, vec2<u32>(position, 0u));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // Parameter words first, before any branch: lavapipe pays for every read after one.
    let len = param(P_REDUCE_LEN);
    let chunk = param(P_CHUNK_LEN);
    let reduced = Reduced(param(P_REDUCED_RANK), param(P_REDUCED_STRIDES));
    // One thread per output element; consecutive threads take consecutive outputs.
    let count = param(P_OUTPUT_COUNT);
    if (group >= count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u)) {
        return;
    }
    let item = group * WORKGROUP_SIZE + lid;
    if (item >= count) {
        return;
    }
    let base = kept_offset(item);
    let best = scan(base, 0u, len, last, reduced);
    emit(item, best.position, base);
}

// ---- segmented variant, segments per binding [1, 4, 4] ----

// @generated from specs/argmin.op
// kernel: ArgMin/reduce_rows/FLOAT16/UINT64
// reduce (reduce_rows): keep Index, select Min, zeros Equal; input FLOAT16, output UINT64

const WORKGROUP_SIZE: u32 = 256u;
const P_OUTPUT_COUNT: u32 = 0u;
const P_REDUCE_LEN: u32 = 1u;
const P_KEPT_RANK: u32 = 2u;
const P_REDUCED_RANK: u32 = 3u;
const P_TIES: u32 = 4u;
const P_TEAM: u32 = 6u;
const P_CHUNK_LEN: u32 = 7u;
const P_KEPT_SIZES: u32 = 8u;
const P_KEPT_STRIDES: u32 = 16u;
const P_REDUCED_SIZES: u32 = 24u;
const P_REDUCED_STRIDES: u32 = 32u;
const P_CHUNK_COUNT: u32 = 40u;
const P_VECTORS: u32 = 41u;
const P_PHASES: u32 = 42u;
const P_SEGMENTS: u32 = 43u;
const TIES_LAST: u32 = 1u;
// The position of no element: an empty candidate.
const NO_POSITION: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> input_s0: array<u32>;
@group(0) @binding(2) var<storage, read> input_s1: array<u32>;
@group(0) @binding(3) var<storage, read> input_s2: array<u32>;
@group(0) @binding(4) var<storage, read> input_s3: array<u32>;
@group(0) @binding(5) var<storage, read_write> output_s0: array<u32>;
@group(0) @binding(6) var<storage, read_write> output_s1: array<u32>;
@group(0) @binding(7) var<storage, read_write> output_s2: array<u32>;
@group(0) @binding(8) var<storage, read_write> output_s3: array<u32>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Word i of `input`, bound in 4 segments of arrayLength(&input_s0) words.
fn input_word(i: u32) -> u32 {
    let n = arrayLength(&input_s0);
    if (i < n) {
        return input_s0[i];
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        return input_s1[r];
    }
    if (s == 2u) {
        return input_s2[r];
    }
    return input_s3[r];
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

fn load_input(i: u32) -> u32 {
    return (input_word(i >> 1u) >> ((i & 1u) * 16u)) & 0xffffu;
}

fn store_output(i: u32, v: vec2<u32>) {
    output_set(2u * i, v.x);
    output_set(2u * i + 1u, v.y);
}

fn order_key(v: u32) -> u32 {
    let b = select(v, 0u, v == 0x8000u);
    let k = b ^ (((b >> 15u) * 0x7fffu) | 0x8000u);
    return select(k, 0u, (b & 0x7fffu) > 0x7c00u);
}

fn key_less(a: u32, b: u32) -> bool {
    return a < b;
}

// The selection's rank of a raw element: the smallest rank wins.
fn rank(v: u32) -> u32 {
    return order_key(v);
}

// Whether a candidate at a later position than the best so far beats it.
fn later_wins(candidate: u32, best: u32, last: bool) -> bool {
    return key_less(candidate, best) | (last & !key_less(best, candidate));
}

fn kept_offset(o: u32) -> u32 {
    let dims = param(P_KEPT_RANK);
    // One dimension (the common case) or none: no division.
    if (dims <= 1u) {
        return o * param(P_KEPT_STRIDES);
    }
    var rest = o;
    var offset = 0u;
    for (var d = dims; d > 0u; d = d - 1u) {
        let size = param(P_KEPT_SIZES + d - 1u);
        offset = offset + (rest % size) * param(P_KEPT_STRIDES + d - 1u);
        rest = rest / size;
    }
    return offset;
}

fn reduced_offset(r: u32) -> u32 {
    let dims = param(P_REDUCED_RANK);
    // One dimension (the common case) or none: no division.
    if (dims <= 1u) {
        return r * param(P_REDUCED_STRIDES);
    }
    var rest = r;
    var offset = 0u;
    for (var d = dims; d > 0u; d = d - 1u) {
        let size = param(P_REDUCED_SIZES + d - 1u);
        offset = offset + (rest % size) * param(P_REDUCED_STRIDES + d - 1u);
        rest = rest / size;
    }
    return offset;
}

// A candidate: its rank and position (NO_POSITION when empty).
struct Best {
    rank: u32,
    position: u32,
}

// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: u32 = 0xffffffffu;

// The reduced dimensions' rank and innermost stride, read once at the top.
struct Reduced {
    dims: u32,
    stride: u32,
}

// The best of positions [begin, end) of the sub-tensor at base, visited in order;
// the offset steps along the innermost reduced dimension and is recomputed
// only where that dimension wraps.
fn scan(base: u32, begin: u32, end: u32, last: bool, g: Reduced) -> Best {
    if (begin >= end) {
        return Best(0u, NO_POSITION);
    }
    // One reduced dimension (the common case): a plain stride, no wrap; lavapipe
    // runs the general loop below as well, but once, all lanes off.
    if (g.dims <= 1u) {
        var best_rank = NO_RANK;
        var best_position = begin;
        var offset = base + begin * g.stride;
        let offset_step = g.stride * 1u;
        if (last) {
            for (var i = 0u; i < end - begin; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = !key_less(best_rank, candidate);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, begin + i * 1u, wins);
                offset = offset + offset_step;
            }
        } else {
            for (var i = 0u; i < end - begin; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = key_less(candidate, best_rank);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, begin + i * 1u, wins);
                offset = offset + offset_step;
            }
        }
        return Best(best_rank, best_position);
    }
    let inner = max(g.dims, 1u) - 1u;
    let inner_size = param(P_REDUCED_SIZES + inner);
    let inner_stride = param(P_REDUCED_STRIDES + inner);
    var column = begin % inner_size;
    var offset = base + reduced_offset(begin);
    var best = Best(rank(load_input(offset)), begin);
    for (var r = begin + 1u; r < end; r = r + 1u) {
        column = column + 1u;
        if (column == inner_size) {
            column = 0u;
            offset = base + reduced_offset(r);
        } else {
            offset = offset + inner_stride;
        }
        let candidate = rank(load_input(offset));
        if (later_wins(candidate, best.rank, last)) {
            best = Best(candidate, r);
        }
    }
    return best;
}

// Writes output element o: the selected element's position or bits.
fn emit(o: u32, position: u32, base: u32) {
    store_output(o, vec2<u32>(position, 0u));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // Parameter words first, before any branch: lavapipe pays for every read after one.
    let len = param(P_REDUCE_LEN);
    let chunk = param(P_CHUNK_LEN);
    let reduced = Reduced(param(P_REDUCED_RANK), param(P_REDUCED_STRIDES));
    // One thread per output element; consecutive threads take consecutive outputs.
    let count = param(P_OUTPUT_COUNT);
    if (group >= count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u)) {
        return;
    }
    let item = group * WORKGROUP_SIZE + lid;
    if (item >= count) {
        return;
    }
    let base = kept_offset(item);
    let best = scan(base, 0u, len, last, reduced);
    emit(item, best.position, base);
}
