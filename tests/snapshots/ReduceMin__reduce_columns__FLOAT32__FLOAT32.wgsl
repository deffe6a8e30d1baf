// @generated from specs/reducemin.op
// kernel: ReduceMin/reduce_columns/FLOAT32/FLOAT32
// reduce (reduce_columns): keep Value, select Min, zeros NegativeFirst; input FLOAT32, output FLOAT32

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
@group(0) @binding(1) var<storage, read> input: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> output: array<u32>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Vector i of `input`.
fn input_vector(i: u32) -> vec4<u32> {
    return input[i];
}

fn input_word(i: u32) -> u32 {
    return input[i >> 2u][i & 3u];
}

// Word i of `output`.
fn output_word(i: u32) -> u32 {
    return output[i];
}

fn output_set(i: u32, v: u32) {
    output[i] = v;
}

fn load_input(i: u32) -> u32 {
    return input_word(i);
}

fn store_output(i: u32, v: u32) {
    output_set(i, v);
}

fn order_key(v: u32) -> u32 {
    let b = v;
    let k = b ^ (u32(i32(b) >> 31u) | 0x80000000u);
    return select(k, 0u, (b & 0x7fffffffu) > 0x7f800000u);
}

fn key_less(a: u32, b: u32) -> bool {
    return a < b;
}

// The selection's rank of a raw element: the smallest rank wins.
fn rank(v: u32) -> u32 {
    return order_key(v);
}

fn unkey(k: u32) -> u32 {
    // A set sign bit in the key: a positive value (sign set); else every bit flipped.
    return select(~k, k ^ 0x80000000u, (k & 0x80000000u) != 0u);
}

// The raw bits of a rank (not a NaN's: rank 0).
fn unrank(rank: u32) -> u32 {
    return unkey(rank);
}

// Whether a candidate at a later position than the best so far beats it.
fn later_wins(candidate: u32, best: u32, last: bool) -> bool {
    return key_less(candidate, best) | (last & !key_less(best, candidate));
}

// Elements of FLOAT32 in one vec4<u32> (16 bytes), in memory order.
const PER_VECTOR: u32 = 4u;
// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: u32 = 0xffffffffu;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // A thread per vector of inner (and chunk) of a [outer, len, inner] input:
    // consecutive threads read consecutive vectors of each row.
    // Every parameter word first, before any branch (see `selected_element`).
    let t = group * WORKGROUP_SIZE + lid;
    let vectors = param(P_VECTORS);
    let chunks = param(P_CHUNK_COUNT);
    let outputs = param(P_OUTPUT_COUNT);
    let len = param(P_REDUCE_LEN);
    let chunk = param(P_CHUNK_LEN);
    let column = t % vectors;
    let rest = t / vectors;
    let c = rest % chunks;
    let o = rest / chunks;
    let inner = vectors * PER_VECTOR;
    if (o >= outputs / inner) {
        return;
    }
    let begin = min(c * chunk, len);
    let end = begin + min(chunk, len - begin);
    let start = (o * len + begin) * vectors + column;
    var at = start;
    var best_rank0 = NO_RANK;
    var best_position0 = begin;
    var best_rank1 = NO_RANK;
    var best_position1 = begin;
    var best_rank2 = NO_RANK;
    var best_position2 = begin;
    var best_rank3 = NO_RANK;
    var best_position3 = begin;
    var r = begin;
    // Equal ranks are equal bits: the smallest rank alone, no position, no tie rule.
    for (; r + 1u * 1u < end; r = r + 2u * 1u) {
        let q0 = input_vector(at + 0u * vectors);
        let q1 = input_vector(at + 1u * vectors);
        best_rank0 = min(best_rank0, rank(q0.x));
        best_rank1 = min(best_rank1, rank(q0.y));
        best_rank2 = min(best_rank2, rank(q0.z));
        best_rank3 = min(best_rank3, rank(q0.w));
        best_rank0 = min(best_rank0, rank(q1.x));
        best_rank1 = min(best_rank1, rank(q1.y));
        best_rank2 = min(best_rank2, rank(q1.z));
        best_rank3 = min(best_rank3, rank(q1.w));
        at = at + 2u * vectors;
    }
    for (; r < end; r = r + 1u) {
        let q0 = input_vector(at + 0u * vectors);
        best_rank0 = min(best_rank0, rank(q0.x));
        best_rank1 = min(best_rank1, rank(q0.y));
        best_rank2 = min(best_rank2, rank(q0.z));
        best_rank3 = min(best_rank3, rank(q0.w));
        at = at + 1u * vectors;
    }
    // The best bits from the best ranks (a split pass's partial results carry
    // the chunk's first row as their position: equal ranks, equal bits).
    var raw0 = unrank(best_rank0);
    var raw1 = unrank(best_rank1);
    var raw2 = unrank(best_rank2);
    var raw3 = unrank(best_rank3);
    if ((best_rank0 == 0u) | (best_rank1 == 0u) | (best_rank2 == 0u) | (best_rank3 == 0u)) {
        // A NaN: again with positions, for the first (last) NaN's bits.
        best_rank0 = NO_RANK;
        best_rank1 = NO_RANK;
        best_rank2 = NO_RANK;
        best_rank3 = NO_RANK;
        r = begin;
        at = start;
        // The tie rule is uniform: one loop for each, no per-element test of it.
        let first_r = r;
        if (last) {
            r = first_r;
            for (; r + 1u * 1u < end; r = r + 2u * 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let q1 = input_vector(at + 1u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = !key_less(best_rank0, rank_0_0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = !key_less(best_rank1, rank_0_1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = !key_less(best_rank2, rank_0_2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = !key_less(best_rank3, rank_0_3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                let rank_1_0 = rank(q1.x);
                let wins_1_0 = !key_less(best_rank0, rank_1_0);
                best_rank0 = select(best_rank0, rank_1_0, wins_1_0);
                best_position0 = select(best_position0, r + 1u, wins_1_0);
                let rank_1_1 = rank(q1.y);
                let wins_1_1 = !key_less(best_rank1, rank_1_1);
                best_rank1 = select(best_rank1, rank_1_1, wins_1_1);
                best_position1 = select(best_position1, r + 1u, wins_1_1);
                let rank_1_2 = rank(q1.z);
                let wins_1_2 = !key_less(best_rank2, rank_1_2);
                best_rank2 = select(best_rank2, rank_1_2, wins_1_2);
                best_position2 = select(best_position2, r + 1u, wins_1_2);
                let rank_1_3 = rank(q1.w);
                let wins_1_3 = !key_less(best_rank3, rank_1_3);
                best_rank3 = select(best_rank3, rank_1_3, wins_1_3);
                best_position3 = select(best_position3, r + 1u, wins_1_3);
                at = at + 2u * vectors;
            }
            for (; r < end; r = r + 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = !key_less(best_rank0, rank_0_0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = !key_less(best_rank1, rank_0_1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = !key_less(best_rank2, rank_0_2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = !key_less(best_rank3, rank_0_3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                at = at + 1u * vectors;
            }
        } else {
            r = first_r;
            for (; r + 1u * 1u < end; r = r + 2u * 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let q1 = input_vector(at + 1u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = key_less(rank_0_0, best_rank0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = key_less(rank_0_1, best_rank1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = key_less(rank_0_2, best_rank2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = key_less(rank_0_3, best_rank3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                let rank_1_0 = rank(q1.x);
                let wins_1_0 = key_less(rank_1_0, best_rank0);
                best_rank0 = select(best_rank0, rank_1_0, wins_1_0);
                best_position0 = select(best_position0, r + 1u, wins_1_0);
                let rank_1_1 = rank(q1.y);
                let wins_1_1 = key_less(rank_1_1, best_rank1);
                best_rank1 = select(best_rank1, rank_1_1, wins_1_1);
                best_position1 = select(best_position1, r + 1u, wins_1_1);
                let rank_1_2 = rank(q1.z);
                let wins_1_2 = key_less(rank_1_2, best_rank2);
                best_rank2 = select(best_rank2, rank_1_2, wins_1_2);
                best_position2 = select(best_position2, r + 1u, wins_1_2);
                let rank_1_3 = rank(q1.w);
                let wins_1_3 = key_less(rank_1_3, best_rank3);
                best_rank3 = select(best_rank3, rank_1_3, wins_1_3);
                best_position3 = select(best_position3, r + 1u, wins_1_3);
                at = at + 2u * vectors;
            }
            for (; r < end; r = r + 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = key_less(rank_0_0, best_rank0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = key_less(rank_0_1, best_rank1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = key_less(rank_0_2, best_rank2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = key_less(rank_0_3, best_rank3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                at = at + 1u * vectors;
            }
        }
        // Element j of row r: (o * len + r) * inner + column * PER_VECTOR + j.
        let element = o * len * inner + column * PER_VECTOR;
        raw0 = load_input(element + 0u + best_position0 * inner);
        raw1 = load_input(element + 1u + best_position1 * inner);
        raw2 = load_input(element + 2u + best_position2 * inner);
        raw3 = load_input(element + 3u + best_position3 * inner);
    }
    let first = o * inner + column * PER_VECTOR;
    store_output(first + 0u, raw0);
    store_output(first + 1u, raw1);
    store_output(first + 2u, raw2);
    store_output(first + 3u, raw3);
}

// ---- segmented variant, segments per binding [1, 4, 4] ----

// @generated from specs/reducemin.op
// kernel: ReduceMin/reduce_columns/FLOAT32/FLOAT32
// reduce (reduce_columns): keep Value, select Min, zeros NegativeFirst; input FLOAT32, output FLOAT32

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
@group(0) @binding(1) var<storage, read> input_s0: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> input_s1: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> input_s2: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> input_s3: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> output_s0: array<u32>;
@group(0) @binding(6) var<storage, read_write> output_s1: array<u32>;
@group(0) @binding(7) var<storage, read_write> output_s2: array<u32>;
@group(0) @binding(8) var<storage, read_write> output_s3: array<u32>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Vector i of `input`, bound in 4 segments of arrayLength(&input_s0) vectors.
fn input_vector(i: u32) -> vec4<u32> {
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

fn input_word(i: u32) -> u32 {
    return input_vector(i >> 2u)[i & 3u];
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
    return input_word(i);
}

fn store_output(i: u32, v: u32) {
    output_set(i, v);
}

fn order_key(v: u32) -> u32 {
    let b = v;
    let k = b ^ (u32(i32(b) >> 31u) | 0x80000000u);
    return select(k, 0u, (b & 0x7fffffffu) > 0x7f800000u);
}

fn key_less(a: u32, b: u32) -> bool {
    return a < b;
}

// The selection's rank of a raw element: the smallest rank wins.
fn rank(v: u32) -> u32 {
    return order_key(v);
}

fn unkey(k: u32) -> u32 {
    // A set sign bit in the key: a positive value (sign set); else every bit flipped.
    return select(~k, k ^ 0x80000000u, (k & 0x80000000u) != 0u);
}

// The raw bits of a rank (not a NaN's: rank 0).
fn unrank(rank: u32) -> u32 {
    return unkey(rank);
}

// Whether a candidate at a later position than the best so far beats it.
fn later_wins(candidate: u32, best: u32, last: bool) -> bool {
    return key_less(candidate, best) | (last & !key_less(best, candidate));
}

// Elements of FLOAT32 in one vec4<u32> (16 bytes), in memory order.
const PER_VECTOR: u32 = 4u;
// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: u32 = 0xffffffffu;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // A thread per vector of inner (and chunk) of a [outer, len, inner] input:
    // consecutive threads read consecutive vectors of each row.
    // Every parameter word first, before any branch (see `selected_element`).
    let t = group * WORKGROUP_SIZE + lid;
    let vectors = param(P_VECTORS);
    let chunks = param(P_CHUNK_COUNT);
    let outputs = param(P_OUTPUT_COUNT);
    let len = param(P_REDUCE_LEN);
    let chunk = param(P_CHUNK_LEN);
    let column = t % vectors;
    let rest = t / vectors;
    let c = rest % chunks;
    let o = rest / chunks;
    let inner = vectors * PER_VECTOR;
    if (o >= outputs / inner) {
        return;
    }
    let begin = min(c * chunk, len);
    let end = begin + min(chunk, len - begin);
    let start = (o * len + begin) * vectors + column;
    var at = start;
    var best_rank0 = NO_RANK;
    var best_position0 = begin;
    var best_rank1 = NO_RANK;
    var best_position1 = begin;
    var best_rank2 = NO_RANK;
    var best_position2 = begin;
    var best_rank3 = NO_RANK;
    var best_position3 = begin;
    var r = begin;
    // Equal ranks are equal bits: the smallest rank alone, no position, no tie rule.
    for (; r + 1u * 1u < end; r = r + 2u * 1u) {
        let q0 = input_vector(at + 0u * vectors);
        let q1 = input_vector(at + 1u * vectors);
        best_rank0 = min(best_rank0, rank(q0.x));
        best_rank1 = min(best_rank1, rank(q0.y));
        best_rank2 = min(best_rank2, rank(q0.z));
        best_rank3 = min(best_rank3, rank(q0.w));
        best_rank0 = min(best_rank0, rank(q1.x));
        best_rank1 = min(best_rank1, rank(q1.y));
        best_rank2 = min(best_rank2, rank(q1.z));
        best_rank3 = min(best_rank3, rank(q1.w));
        at = at + 2u * vectors;
    }
    for (; r < end; r = r + 1u) {
        let q0 = input_vector(at + 0u * vectors);
        best_rank0 = min(best_rank0, rank(q0.x));
        best_rank1 = min(best_rank1, rank(q0.y));
        best_rank2 = min(best_rank2, rank(q0.z));
        best_rank3 = min(best_rank3, rank(q0.w));
        at = at + 1u * vectors;
    }
    // The best bits from the best ranks (a split pass's partial results carry
    // the chunk's first row as their position: equal ranks, equal bits).
    var raw0 = unrank(best_rank0);
    var raw1 = unrank(best_rank1);
    var raw2 = unrank(best_rank2);
    var raw3 = unrank(best_rank3);
    if ((best_rank0 == 0u) | (best_rank1 == 0u) | (best_rank2 == 0u) | (best_rank3 == 0u)) {
        // A NaN: again with positions, for the first (last) NaN's bits.
        best_rank0 = NO_RANK;
        best_rank1 = NO_RANK;
        best_rank2 = NO_RANK;
        best_rank3 = NO_RANK;
        r = begin;
        at = start;
        // The tie rule is uniform: one loop for each, no per-element test of it.
        let first_r = r;
        if (last) {
            r = first_r;
            for (; r + 1u * 1u < end; r = r + 2u * 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let q1 = input_vector(at + 1u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = !key_less(best_rank0, rank_0_0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = !key_less(best_rank1, rank_0_1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = !key_less(best_rank2, rank_0_2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = !key_less(best_rank3, rank_0_3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                let rank_1_0 = rank(q1.x);
                let wins_1_0 = !key_less(best_rank0, rank_1_0);
                best_rank0 = select(best_rank0, rank_1_0, wins_1_0);
                best_position0 = select(best_position0, r + 1u, wins_1_0);
                let rank_1_1 = rank(q1.y);
                let wins_1_1 = !key_less(best_rank1, rank_1_1);
                best_rank1 = select(best_rank1, rank_1_1, wins_1_1);
                best_position1 = select(best_position1, r + 1u, wins_1_1);
                let rank_1_2 = rank(q1.z);
                let wins_1_2 = !key_less(best_rank2, rank_1_2);
                best_rank2 = select(best_rank2, rank_1_2, wins_1_2);
                best_position2 = select(best_position2, r + 1u, wins_1_2);
                let rank_1_3 = rank(q1.w);
                let wins_1_3 = !key_less(best_rank3, rank_1_3);
                best_rank3 = select(best_rank3, rank_1_3, wins_1_3);
                best_position3 = select(best_position3, r + 1u, wins_1_3);
                at = at + 2u * vectors;
            }
            for (; r < end; r = r + 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = !key_less(best_rank0, rank_0_0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = !key_less(best_rank1, rank_0_1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = !key_less(best_rank2, rank_0_2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = !key_less(best_rank3, rank_0_3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                at = at + 1u * vectors;
            }
        } else {
            r = first_r;
            for (; r + 1u * 1u < end; r = r + 2u * 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let q1 = input_vector(at + 1u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = key_less(rank_0_0, best_rank0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = key_less(rank_0_1, best_rank1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = key_less(rank_0_2, best_rank2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = key_less(rank_0_3, best_rank3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                let rank_1_0 = rank(q1.x);
                let wins_1_0 = key_less(rank_1_0, best_rank0);
                best_rank0 = select(best_rank0, rank_1_0, wins_1_0);
                best_position0 = select(best_position0, r + 1u, wins_1_0);
                let rank_1_1 = rank(q1.y);
                let wins_1_1 = key_less(rank_1_1, best_rank1);
                best_rank1 = select(best_rank1, rank_1_1, wins_1_1);
                best_position1 = select(best_position1, r + 1u, wins_1_1);
                let rank_1_2 = rank(q1.z);
                let wins_1_2 = key_less(rank_1_2, best_rank2);
                best_rank2 = select(best_rank2, rank_1_2, wins_1_2);
                best_position2 = select(best_position2, r + 1u, wins_1_2);
                let rank_1_3 = rank(q1.w);
                let wins_1_3 = key_less(rank_1_3, best_rank3);
                best_rank3 = select(best_rank3, rank_1_3, wins_1_3);
                best_position3 = select(best_position3, r + 1u, wins_1_3);
                at = at + 2u * vectors;
            }
            for (; r < end; r = r + 1u) {
                let q0 = input_vector(at + 0u * vectors);
                let rank_0_0 = rank(q0.x);
                let wins_0_0 = key_less(rank_0_0, best_rank0);
                best_rank0 = select(best_rank0, rank_0_0, wins_0_0);
                best_position0 = select(best_position0, r + 0u, wins_0_0);
                let rank_0_1 = rank(q0.y);
                let wins_0_1 = key_less(rank_0_1, best_rank1);
                best_rank1 = select(best_rank1, rank_0_1, wins_0_1);
                best_position1 = select(best_position1, r + 0u, wins_0_1);
                let rank_0_2 = rank(q0.z);
                let wins_0_2 = key_less(rank_0_2, best_rank2);
                best_rank2 = select(best_rank2, rank_0_2, wins_0_2);
                best_position2 = select(best_position2, r + 0u, wins_0_2);
                let rank_0_3 = rank(q0.w);
                let wins_0_3 = key_less(rank_0_3, best_rank3);
                best_rank3 = select(best_rank3, rank_0_3, wins_0_3);
                best_position3 = select(best_position3, r + 0u, wins_0_3);
                at = at + 1u * vectors;
            }
        }
        // Element j of row r: (o * len + r) * inner + column * PER_VECTOR + j.
        let element = o * len * inner + column * PER_VECTOR;
        raw0 = load_input(element + 0u + best_position0 * inner);
        raw1 = load_input(element + 1u + best_position1 * inner);
        raw2 = load_input(element + 2u + best_position2 * inner);
        raw3 = load_input(element + 3u + best_position3 * inner);
    }
    let first = o * inner + column * PER_VECTOR;
    store_output(first + 0u, raw0);
    store_output(first + 1u, raw1);
    store_output(first + 2u, raw2);
    store_output(first + 3u, raw3);
}
