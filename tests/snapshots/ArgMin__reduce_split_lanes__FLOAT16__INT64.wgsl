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

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 16>;
@group(0) @binding(1) var<storage, read> input: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> partials: array<u32>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

fn load_input(i: u32) -> u32 {
    return (input[(i >> 1u) >> 2u][(i >> 1u) & 3u] >> ((i & 1u) * 16u)) & 0xffffu;
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

// Writes partial result p: the selected element's raw bits and its position.
fn store_partial(p: u32, position: u32, base: u32, stride: u32) {
    var raw = 0u;
    if (position != NO_POSITION) {
        raw = load_input(base + position * stride);
    }
    let at = p * PARTIAL_WORDS;
    partials[at] = raw;
    partials[at + PARTIAL_WORDS - 1u] = position;
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
    if (begin + lane < end) {
        best_position = (begin + lane) * PER_VECTOR;
    }
    var v = begin + lane;
    // The tie rule is uniform: one loop for each, no per-element test of it.
    let first_v = v;
    if (last) {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input[row + v + 0u * team];
            let q1 = input[row + v + 1u * team];
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = !key_less(best_rank, rank_0_0);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = !key_less(best_rank, rank_0_1);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = !key_less(best_rank, rank_0_2);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = !key_less(best_rank, rank_0_3);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = !key_less(best_rank, rank_0_4);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = !key_less(best_rank, rank_0_5);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = !key_less(best_rank, rank_0_6);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = !key_less(best_rank, rank_0_7);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
            let rank_1_0 = rank(((q1.x >> 0u) & 0xffffu));
            let wins_1_0 = !key_less(best_rank, rank_1_0);
            best_rank = select(best_rank, rank_1_0, wins_1_0);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 0u, wins_1_0);
            let rank_1_1 = rank(((q1.x >> 16u) & 0xffffu));
            let wins_1_1 = !key_less(best_rank, rank_1_1);
            best_rank = select(best_rank, rank_1_1, wins_1_1);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 1u, wins_1_1);
            let rank_1_2 = rank(((q1.y >> 0u) & 0xffffu));
            let wins_1_2 = !key_less(best_rank, rank_1_2);
            best_rank = select(best_rank, rank_1_2, wins_1_2);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 2u, wins_1_2);
            let rank_1_3 = rank(((q1.y >> 16u) & 0xffffu));
            let wins_1_3 = !key_less(best_rank, rank_1_3);
            best_rank = select(best_rank, rank_1_3, wins_1_3);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 3u, wins_1_3);
            let rank_1_4 = rank(((q1.z >> 0u) & 0xffffu));
            let wins_1_4 = !key_less(best_rank, rank_1_4);
            best_rank = select(best_rank, rank_1_4, wins_1_4);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 4u, wins_1_4);
            let rank_1_5 = rank(((q1.z >> 16u) & 0xffffu));
            let wins_1_5 = !key_less(best_rank, rank_1_5);
            best_rank = select(best_rank, rank_1_5, wins_1_5);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 5u, wins_1_5);
            let rank_1_6 = rank(((q1.w >> 0u) & 0xffffu));
            let wins_1_6 = !key_less(best_rank, rank_1_6);
            best_rank = select(best_rank, rank_1_6, wins_1_6);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 6u, wins_1_6);
            let rank_1_7 = rank(((q1.w >> 16u) & 0xffffu));
            let wins_1_7 = !key_less(best_rank, rank_1_7);
            best_rank = select(best_rank, rank_1_7, wins_1_7);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 7u, wins_1_7);
        }
        for (; v < end; v = v + team) {
            let q0 = input[row + v + 0u * team];
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = !key_less(best_rank, rank_0_0);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = !key_less(best_rank, rank_0_1);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = !key_less(best_rank, rank_0_2);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = !key_less(best_rank, rank_0_3);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = !key_less(best_rank, rank_0_4);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = !key_less(best_rank, rank_0_5);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = !key_less(best_rank, rank_0_6);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = !key_less(best_rank, rank_0_7);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
        }
    } else {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input[row + v + 0u * team];
            let q1 = input[row + v + 1u * team];
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = key_less(rank_0_0, best_rank);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = key_less(rank_0_1, best_rank);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = key_less(rank_0_2, best_rank);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = key_less(rank_0_3, best_rank);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = key_less(rank_0_4, best_rank);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = key_less(rank_0_5, best_rank);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = key_less(rank_0_6, best_rank);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = key_less(rank_0_7, best_rank);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
            let rank_1_0 = rank(((q1.x >> 0u) & 0xffffu));
            let wins_1_0 = key_less(rank_1_0, best_rank);
            best_rank = select(best_rank, rank_1_0, wins_1_0);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 0u, wins_1_0);
            let rank_1_1 = rank(((q1.x >> 16u) & 0xffffu));
            let wins_1_1 = key_less(rank_1_1, best_rank);
            best_rank = select(best_rank, rank_1_1, wins_1_1);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 1u, wins_1_1);
            let rank_1_2 = rank(((q1.y >> 0u) & 0xffffu));
            let wins_1_2 = key_less(rank_1_2, best_rank);
            best_rank = select(best_rank, rank_1_2, wins_1_2);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 2u, wins_1_2);
            let rank_1_3 = rank(((q1.y >> 16u) & 0xffffu));
            let wins_1_3 = key_less(rank_1_3, best_rank);
            best_rank = select(best_rank, rank_1_3, wins_1_3);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 3u, wins_1_3);
            let rank_1_4 = rank(((q1.z >> 0u) & 0xffffu));
            let wins_1_4 = key_less(rank_1_4, best_rank);
            best_rank = select(best_rank, rank_1_4, wins_1_4);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 4u, wins_1_4);
            let rank_1_5 = rank(((q1.z >> 16u) & 0xffffu));
            let wins_1_5 = key_less(rank_1_5, best_rank);
            best_rank = select(best_rank, rank_1_5, wins_1_5);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 5u, wins_1_5);
            let rank_1_6 = rank(((q1.w >> 0u) & 0xffffu));
            let wins_1_6 = key_less(rank_1_6, best_rank);
            best_rank = select(best_rank, rank_1_6, wins_1_6);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 6u, wins_1_6);
            let rank_1_7 = rank(((q1.w >> 16u) & 0xffffu));
            let wins_1_7 = key_less(rank_1_7, best_rank);
            best_rank = select(best_rank, rank_1_7, wins_1_7);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 7u, wins_1_7);
        }
        for (; v < end; v = v + team) {
            let q0 = input[row + v + 0u * team];
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = key_less(rank_0_0, best_rank);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = key_less(rank_0_1, best_rank);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = key_less(rank_0_2, best_rank);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = key_less(rank_0_3, best_rank);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = key_less(rank_0_4, best_rank);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = key_less(rank_0_5, best_rank);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = key_less(rank_0_6, best_rank);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = key_less(rank_0_7, best_rank);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
        }
    }
    let n = o / outputs;
    let first = n * vectors * PER_VECTOR;
    let p = ((o - n * outputs) * segments + n) * chunks * team + c * team + lane;
    let at = select(NO_POSITION, best_position + first, best_position != NO_POSITION);
    store_partial(p, at, row * PER_VECTOR - first, 1u);
}
/* @segmented 1 4 4
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

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 16>;
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
    if (begin + lane < end) {
        best_position = (begin + lane) * PER_VECTOR;
    }
    var v = begin + lane;
    // The tie rule is uniform: one loop for each, no per-element test of it.
    let first_v = v;
    if (last) {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input_vector(row + v + 0u * team);
            let q1 = input_vector(row + v + 1u * team);
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = !key_less(best_rank, rank_0_0);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = !key_less(best_rank, rank_0_1);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = !key_less(best_rank, rank_0_2);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = !key_less(best_rank, rank_0_3);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = !key_less(best_rank, rank_0_4);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = !key_less(best_rank, rank_0_5);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = !key_less(best_rank, rank_0_6);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = !key_less(best_rank, rank_0_7);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
            let rank_1_0 = rank(((q1.x >> 0u) & 0xffffu));
            let wins_1_0 = !key_less(best_rank, rank_1_0);
            best_rank = select(best_rank, rank_1_0, wins_1_0);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 0u, wins_1_0);
            let rank_1_1 = rank(((q1.x >> 16u) & 0xffffu));
            let wins_1_1 = !key_less(best_rank, rank_1_1);
            best_rank = select(best_rank, rank_1_1, wins_1_1);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 1u, wins_1_1);
            let rank_1_2 = rank(((q1.y >> 0u) & 0xffffu));
            let wins_1_2 = !key_less(best_rank, rank_1_2);
            best_rank = select(best_rank, rank_1_2, wins_1_2);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 2u, wins_1_2);
            let rank_1_3 = rank(((q1.y >> 16u) & 0xffffu));
            let wins_1_3 = !key_less(best_rank, rank_1_3);
            best_rank = select(best_rank, rank_1_3, wins_1_3);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 3u, wins_1_3);
            let rank_1_4 = rank(((q1.z >> 0u) & 0xffffu));
            let wins_1_4 = !key_less(best_rank, rank_1_4);
            best_rank = select(best_rank, rank_1_4, wins_1_4);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 4u, wins_1_4);
            let rank_1_5 = rank(((q1.z >> 16u) & 0xffffu));
            let wins_1_5 = !key_less(best_rank, rank_1_5);
            best_rank = select(best_rank, rank_1_5, wins_1_5);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 5u, wins_1_5);
            let rank_1_6 = rank(((q1.w >> 0u) & 0xffffu));
            let wins_1_6 = !key_less(best_rank, rank_1_6);
            best_rank = select(best_rank, rank_1_6, wins_1_6);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 6u, wins_1_6);
            let rank_1_7 = rank(((q1.w >> 16u) & 0xffffu));
            let wins_1_7 = !key_less(best_rank, rank_1_7);
            best_rank = select(best_rank, rank_1_7, wins_1_7);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 7u, wins_1_7);
        }
        for (; v < end; v = v + team) {
            let q0 = input_vector(row + v + 0u * team);
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = !key_less(best_rank, rank_0_0);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = !key_less(best_rank, rank_0_1);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = !key_less(best_rank, rank_0_2);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = !key_less(best_rank, rank_0_3);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = !key_less(best_rank, rank_0_4);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = !key_less(best_rank, rank_0_5);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = !key_less(best_rank, rank_0_6);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = !key_less(best_rank, rank_0_7);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
        }
    } else {
        v = first_v;
        for (; v + 1u * team < end; v = v + 2u * team) {
            let q0 = input_vector(row + v + 0u * team);
            let q1 = input_vector(row + v + 1u * team);
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = key_less(rank_0_0, best_rank);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = key_less(rank_0_1, best_rank);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = key_less(rank_0_2, best_rank);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = key_less(rank_0_3, best_rank);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = key_less(rank_0_4, best_rank);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = key_less(rank_0_5, best_rank);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = key_less(rank_0_6, best_rank);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = key_less(rank_0_7, best_rank);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
            let rank_1_0 = rank(((q1.x >> 0u) & 0xffffu));
            let wins_1_0 = key_less(rank_1_0, best_rank);
            best_rank = select(best_rank, rank_1_0, wins_1_0);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 0u, wins_1_0);
            let rank_1_1 = rank(((q1.x >> 16u) & 0xffffu));
            let wins_1_1 = key_less(rank_1_1, best_rank);
            best_rank = select(best_rank, rank_1_1, wins_1_1);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 1u, wins_1_1);
            let rank_1_2 = rank(((q1.y >> 0u) & 0xffffu));
            let wins_1_2 = key_less(rank_1_2, best_rank);
            best_rank = select(best_rank, rank_1_2, wins_1_2);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 2u, wins_1_2);
            let rank_1_3 = rank(((q1.y >> 16u) & 0xffffu));
            let wins_1_3 = key_less(rank_1_3, best_rank);
            best_rank = select(best_rank, rank_1_3, wins_1_3);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 3u, wins_1_3);
            let rank_1_4 = rank(((q1.z >> 0u) & 0xffffu));
            let wins_1_4 = key_less(rank_1_4, best_rank);
            best_rank = select(best_rank, rank_1_4, wins_1_4);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 4u, wins_1_4);
            let rank_1_5 = rank(((q1.z >> 16u) & 0xffffu));
            let wins_1_5 = key_less(rank_1_5, best_rank);
            best_rank = select(best_rank, rank_1_5, wins_1_5);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 5u, wins_1_5);
            let rank_1_6 = rank(((q1.w >> 0u) & 0xffffu));
            let wins_1_6 = key_less(rank_1_6, best_rank);
            best_rank = select(best_rank, rank_1_6, wins_1_6);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 6u, wins_1_6);
            let rank_1_7 = rank(((q1.w >> 16u) & 0xffffu));
            let wins_1_7 = key_less(rank_1_7, best_rank);
            best_rank = select(best_rank, rank_1_7, wins_1_7);
            best_position = select(best_position, (v + 1u * team) * PER_VECTOR + 7u, wins_1_7);
        }
        for (; v < end; v = v + team) {
            let q0 = input_vector(row + v + 0u * team);
            let rank_0_0 = rank(((q0.x >> 0u) & 0xffffu));
            let wins_0_0 = key_less(rank_0_0, best_rank);
            best_rank = select(best_rank, rank_0_0, wins_0_0);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 0u, wins_0_0);
            let rank_0_1 = rank(((q0.x >> 16u) & 0xffffu));
            let wins_0_1 = key_less(rank_0_1, best_rank);
            best_rank = select(best_rank, rank_0_1, wins_0_1);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 1u, wins_0_1);
            let rank_0_2 = rank(((q0.y >> 0u) & 0xffffu));
            let wins_0_2 = key_less(rank_0_2, best_rank);
            best_rank = select(best_rank, rank_0_2, wins_0_2);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 2u, wins_0_2);
            let rank_0_3 = rank(((q0.y >> 16u) & 0xffffu));
            let wins_0_3 = key_less(rank_0_3, best_rank);
            best_rank = select(best_rank, rank_0_3, wins_0_3);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 3u, wins_0_3);
            let rank_0_4 = rank(((q0.z >> 0u) & 0xffffu));
            let wins_0_4 = key_less(rank_0_4, best_rank);
            best_rank = select(best_rank, rank_0_4, wins_0_4);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 4u, wins_0_4);
            let rank_0_5 = rank(((q0.z >> 16u) & 0xffffu));
            let wins_0_5 = key_less(rank_0_5, best_rank);
            best_rank = select(best_rank, rank_0_5, wins_0_5);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 5u, wins_0_5);
            let rank_0_6 = rank(((q0.w >> 0u) & 0xffffu));
            let wins_0_6 = key_less(rank_0_6, best_rank);
            best_rank = select(best_rank, rank_0_6, wins_0_6);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 6u, wins_0_6);
            let rank_0_7 = rank(((q0.w >> 16u) & 0xffffu));
            let wins_0_7 = key_less(rank_0_7, best_rank);
            best_rank = select(best_rank, rank_0_7, wins_0_7);
            best_position = select(best_position, (v + 0u * team) * PER_VECTOR + 7u, wins_0_7);
        }
    }
    let n = o / outputs;
    let first = n * vectors * PER_VECTOR;
    let p = ((o - n * outputs) * segments + n) * chunks * team + c * team + lane;
    let at = select(NO_POSITION, best_position + first, best_position != NO_POSITION);
    store_partial(p, at, row * PER_VECTOR - first, 1u);
}
*/
