// @generated from specs/argmin.op
// kernel: ArgMin/reduce_split_lanes/FLOAT16/INT64
// reduce (reduce_split_lanes): keep Index, select Min, zeros Equal; input FLOAT16, output INT64

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
// Words of a partial result: the selected element's raw bits, then its position.
const PARTIAL_WORDS: u32 = 2u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> input: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> partials: array<u32>;

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

// Word i of `partials`.
fn partials_word(i: u32) -> u32 {
    return partials[i];
}

fn partials_set(i: u32, v: u32) {
    partials[i] = v;
}

fn load_input(i: u32) -> u32 {
    return (input_word(i >> 1u) >> ((i & 1u) * 16u)) & 0xffffu;
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

// Elements of FLOAT16 in one vec4<u32> (16 bytes), in memory order.
const PER_VECTOR: u32 = 8u;
// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: u32 = 0xffffffffu;

// Both lanes' ranks of a word of FLOAT16, a NaN's and -0.0's unsettled (see vector_rank).
fn word_ranks(w: u32) -> u32 {
    return w ^ ((((w >> 15u) & 0x00010001u) * 0x7fffu) | 0x80008000u);
}

// Bit 15 of a lane (bit 31 of a FLOAT32) set where it is NaN.
fn nan_bits(w: u32) -> u32 {
    return (w & 0x7fff7fffu) + 0x03ff03ffu;
}

// The smallest rank of the vector's elements: a NaN's (0) if it holds one.
fn vector_rank(q: vec4<u32>) -> u32 {
    let rx = word_ranks(q.x);
    let ry = word_ranks(q.y);
    let rz = word_ranks(q.z);
    let rw = word_ranks(q.w);
    var best = min(min(min(rx & 0xffffu, rx >> 16u), min(ry & 0xffffu, ry >> 16u)), min(min(rz & 0xffffu, rz >> 16u), min(rw & 0xffffu, rw >> 16u)));
    // Zeros tie: -0.0's rank is +0.0's.
    best = select(best, 0x8000u, best == 0x7fffu);
    return select(best, 0u, ((nan_bits(q.x) | nan_bits(q.y) | nan_bits(q.z) | nan_bits(q.w)) & 0x80008000u) != 0u);
}

// The index in q of its first (last) element of rank best.
fn pick_element(q: vec4<u32>, best: u32, last: bool) -> u32 {
    let hit0 = rank(((q.x >> 0u) & 0xffffu)) == best;
    let hit1 = rank(((q.x >> 16u) & 0xffffu)) == best;
    let hit2 = rank(((q.y >> 0u) & 0xffffu)) == best;
    let hit3 = rank(((q.y >> 16u) & 0xffffu)) == best;
    let hit4 = rank(((q.z >> 0u) & 0xffffu)) == best;
    let hit5 = rank(((q.z >> 16u) & 0xffffu)) == best;
    let hit6 = rank(((q.w >> 0u) & 0xffffu)) == best;
    let hit7 = rank(((q.w >> 16u) & 0xffffu)) == best;
    var first = NO_POSITION;
    var latest = NO_POSITION;
    first = select(first, 7u, hit7);
    first = select(first, 6u, hit6);
    first = select(first, 5u, hit5);
    first = select(first, 4u, hit4);
    first = select(first, 3u, hit3);
    first = select(first, 2u, hit2);
    first = select(first, 1u, hit1);
    first = select(first, 0u, hit0);
    latest = select(latest, 0u, hit0);
    latest = select(latest, 1u, hit1);
    latest = select(latest, 2u, hit2);
    latest = select(latest, 3u, hit3);
    latest = select(latest, 4u, hit4);
    latest = select(latest, 5u, hit5);
    latest = select(latest, 6u, hit6);
    latest = select(latest, 7u, hit7);
    return select(first, latest, last);
}

// Writes partial result p: the selected element's raw bits and its position.
fn store_partial(p: u32, position: u32, base: u32, stride: u32) {
    var raw = 0u;
    if (position != NO_POSITION) {
        raw = load_input(base + position * stride);
    }
    let at = p * PARTIAL_WORDS;
    partials_set(at, raw);
    partials_set(at + PARTIAL_WORDS - 1u, position);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // A team per (output, chunk) of a [outputs, len] input: the team's threads read
    // consecutive vectors; thread t writes partial result t.
    // Every parameter word first, before any branch (see `selected_element`).
    let t = group * WORKGROUP_SIZE + lid;
    let team = param(P_TEAM);
    let chunks = param(P_CHUNK_COUNT);
    let outputs = param(P_OUTPUT_COUNT);
    let vectors = param(P_VECTORS);
    let chunk = param(P_CHUNK_LEN) / PER_VECTOR;
    let lane = t & (team - 1u);
    let rest = t >> countTrailingZeros(team);
    let c = rest % chunks;
    let o = rest / chunks;
    // Row o of segment n = o / outputs belongs to output o % outputs (one segment
    // unless an [segments, outputs, len] input is reduced over its first and last axes).
    let segments = param(P_SEGMENTS);
    let rows = outputs * segments;
    let row = o * vectors;
    if (o >= rows) {
        return;
    }
    let begin = min(c * chunk, vectors);
    let end = begin + min(chunk, vectors - begin);
    var best_rank = NO_RANK;
    var best_position = NO_POSITION;
    // The selected vector: the thread's first, if any, until one beats it.
    var best_vector = select(NO_POSITION, begin + lane, begin + lane < end);
    var v = begin + lane;
    // The tie rule is uniform: one loop for each, no per-element test of it.
    let first_v = v;
    if (last) {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input_vector(row + v + 0u * team);
            let q1 = input_vector(row + v + 1u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = !key_less(best_rank, rank_0);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
            let rank_1 = vector_rank(q1);
            let wins_1 = !key_less(best_rank, rank_1);
            best_rank = select(best_rank, rank_1, wins_1);
            best_vector = select(best_vector, v + 1u * team, wins_1);
        }
        for (; v < end; v = v + team) {
            let q0 = input_vector(row + v + 0u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = !key_less(best_rank, rank_0);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
        }
    } else {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input_vector(row + v + 0u * team);
            let q1 = input_vector(row + v + 1u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = key_less(rank_0, best_rank);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
            let rank_1 = vector_rank(q1);
            let wins_1 = key_less(rank_1, best_rank);
            best_rank = select(best_rank, rank_1, wins_1);
            best_vector = select(best_vector, v + 1u * team, wins_1);
        }
        for (; v < end; v = v + team) {
            let q0 = input_vector(row + v + 0u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = key_less(rank_0, best_rank);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
        }
    }
    // The selected element: the first (last) of the best rank in its vector.
    if (best_vector != NO_POSITION) {
        best_position = best_vector * PER_VECTOR + pick_element(input_vector(row + best_vector), best_rank, last);
    }
    let n = o / outputs;
    let first = n * vectors * PER_VECTOR;
    let p = ((o - n * outputs) * segments + n) * chunks * team + c * team + lane;
    let at = select(NO_POSITION, best_position + first, best_position != NO_POSITION);
    store_partial(p, at, row * PER_VECTOR - first, 1u);
}

// ---- segmented variant, segments per binding [1, 4, 4] ----

// @generated from specs/argmin.op
// kernel: ArgMin/reduce_split_lanes/FLOAT16/INT64
// reduce (reduce_split_lanes): keep Index, select Min, zeros Equal; input FLOAT16, output INT64

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
// Words of a partial result: the selected element's raw bits, then its position.
const PARTIAL_WORDS: u32 = 2u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> input_s0: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> input_s1: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> input_s2: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> input_s3: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> partials_s0: array<u32>;
@group(0) @binding(6) var<storage, read_write> partials_s1: array<u32>;
@group(0) @binding(7) var<storage, read_write> partials_s2: array<u32>;
@group(0) @binding(8) var<storage, read_write> partials_s3: array<u32>;

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

fn load_input(i: u32) -> u32 {
    return (input_word(i >> 1u) >> ((i & 1u) * 16u)) & 0xffffu;
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

// Elements of FLOAT16 in one vec4<u32> (16 bytes), in memory order.
const PER_VECTOR: u32 = 8u;
// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: u32 = 0xffffffffu;

// Both lanes' ranks of a word of FLOAT16, a NaN's and -0.0's unsettled (see vector_rank).
fn word_ranks(w: u32) -> u32 {
    return w ^ ((((w >> 15u) & 0x00010001u) * 0x7fffu) | 0x80008000u);
}

// Bit 15 of a lane (bit 31 of a FLOAT32) set where it is NaN.
fn nan_bits(w: u32) -> u32 {
    return (w & 0x7fff7fffu) + 0x03ff03ffu;
}

// The smallest rank of the vector's elements: a NaN's (0) if it holds one.
fn vector_rank(q: vec4<u32>) -> u32 {
    let rx = word_ranks(q.x);
    let ry = word_ranks(q.y);
    let rz = word_ranks(q.z);
    let rw = word_ranks(q.w);
    var best = min(min(min(rx & 0xffffu, rx >> 16u), min(ry & 0xffffu, ry >> 16u)), min(min(rz & 0xffffu, rz >> 16u), min(rw & 0xffffu, rw >> 16u)));
    // Zeros tie: -0.0's rank is +0.0's.
    best = select(best, 0x8000u, best == 0x7fffu);
    return select(best, 0u, ((nan_bits(q.x) | nan_bits(q.y) | nan_bits(q.z) | nan_bits(q.w)) & 0x80008000u) != 0u);
}

// The index in q of its first (last) element of rank best.
fn pick_element(q: vec4<u32>, best: u32, last: bool) -> u32 {
    let hit0 = rank(((q.x >> 0u) & 0xffffu)) == best;
    let hit1 = rank(((q.x >> 16u) & 0xffffu)) == best;
    let hit2 = rank(((q.y >> 0u) & 0xffffu)) == best;
    let hit3 = rank(((q.y >> 16u) & 0xffffu)) == best;
    let hit4 = rank(((q.z >> 0u) & 0xffffu)) == best;
    let hit5 = rank(((q.z >> 16u) & 0xffffu)) == best;
    let hit6 = rank(((q.w >> 0u) & 0xffffu)) == best;
    let hit7 = rank(((q.w >> 16u) & 0xffffu)) == best;
    var first = NO_POSITION;
    var latest = NO_POSITION;
    first = select(first, 7u, hit7);
    first = select(first, 6u, hit6);
    first = select(first, 5u, hit5);
    first = select(first, 4u, hit4);
    first = select(first, 3u, hit3);
    first = select(first, 2u, hit2);
    first = select(first, 1u, hit1);
    first = select(first, 0u, hit0);
    latest = select(latest, 0u, hit0);
    latest = select(latest, 1u, hit1);
    latest = select(latest, 2u, hit2);
    latest = select(latest, 3u, hit3);
    latest = select(latest, 4u, hit4);
    latest = select(latest, 5u, hit5);
    latest = select(latest, 6u, hit6);
    latest = select(latest, 7u, hit7);
    return select(first, latest, last);
}

// Writes partial result p: the selected element's raw bits and its position.
fn store_partial(p: u32, position: u32, base: u32, stride: u32) {
    var raw = 0u;
    if (position != NO_POSITION) {
        raw = load_input(base + position * stride);
    }
    let at = p * PARTIAL_WORDS;
    partials_set(at, raw);
    partials_set(at + PARTIAL_WORDS - 1u, position);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // A team per (output, chunk) of a [outputs, len] input: the team's threads read
    // consecutive vectors; thread t writes partial result t.
    // Every parameter word first, before any branch (see `selected_element`).
    let t = group * WORKGROUP_SIZE + lid;
    let team = param(P_TEAM);
    let chunks = param(P_CHUNK_COUNT);
    let outputs = param(P_OUTPUT_COUNT);
    let vectors = param(P_VECTORS);
    let chunk = param(P_CHUNK_LEN) / PER_VECTOR;
    let lane = t & (team - 1u);
    let rest = t >> countTrailingZeros(team);
    let c = rest % chunks;
    let o = rest / chunks;
    // Row o of segment n = o / outputs belongs to output o % outputs (one segment
    // unless an [segments, outputs, len] input is reduced over its first and last axes).
    let segments = param(P_SEGMENTS);
    let rows = outputs * segments;
    let row = o * vectors;
    if (o >= rows) {
        return;
    }
    let begin = min(c * chunk, vectors);
    let end = begin + min(chunk, vectors - begin);
    var best_rank = NO_RANK;
    var best_position = NO_POSITION;
    // The selected vector: the thread's first, if any, until one beats it.
    var best_vector = select(NO_POSITION, begin + lane, begin + lane < end);
    var v = begin + lane;
    // The tie rule is uniform: one loop for each, no per-element test of it.
    let first_v = v;
    if (last) {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input_vector(row + v + 0u * team);
            let q1 = input_vector(row + v + 1u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = !key_less(best_rank, rank_0);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
            let rank_1 = vector_rank(q1);
            let wins_1 = !key_less(best_rank, rank_1);
            best_rank = select(best_rank, rank_1, wins_1);
            best_vector = select(best_vector, v + 1u * team, wins_1);
        }
        for (; v < end; v = v + team) {
            let q0 = input_vector(row + v + 0u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = !key_less(best_rank, rank_0);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
        }
    } else {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input_vector(row + v + 0u * team);
            let q1 = input_vector(row + v + 1u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = key_less(rank_0, best_rank);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
            let rank_1 = vector_rank(q1);
            let wins_1 = key_less(rank_1, best_rank);
            best_rank = select(best_rank, rank_1, wins_1);
            best_vector = select(best_vector, v + 1u * team, wins_1);
        }
        for (; v < end; v = v + team) {
            let q0 = input_vector(row + v + 0u * team);
            let rank_0 = vector_rank(q0);
            let wins_0 = key_less(rank_0, best_rank);
            best_rank = select(best_rank, rank_0, wins_0);
            best_vector = select(best_vector, v + 0u * team, wins_0);
        }
    }
    // The selected element: the first (last) of the best rank in its vector.
    if (best_vector != NO_POSITION) {
        best_position = best_vector * PER_VECTOR + pick_element(input_vector(row + best_vector), best_rank, last);
    }
    let n = o / outputs;
    let first = n * vectors * PER_VECTOR;
    let p = ((o - n * outputs) * segments + n) * chunks * team + c * team + lane;
    let at = select(NO_POSITION, best_position + first, best_position != NO_POSITION);
    store_partial(p, at, row * PER_VECTOR - first, 1u);
}
