// @generated from specs/argmin.op
// kernel: ArgMin/reduce_tree/INT64/UINT32
// reduce (reduce_tree): keep Index, select Min, zeros Equal; input INT64, output UINT32

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

var<workgroup> wg_rank: array<vec2<u32>, WORKGROUP_SIZE>;
var<workgroup> wg_position: array<u32, WORKGROUP_SIZE>;

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

fn load_input(i: u32) -> vec2<u32> {
    return vec2<u32>(input_word(2u * i), input_word(2u * i + 1u));
}

fn store_output(i: u32, v: u32) {
    output_set(i, v);
}

fn order_key(v: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(v.x, v.y ^ 0x80000000u);
}

fn key_less(a: vec2<u32>, b: vec2<u32>) -> bool {
    return (a.y < b.y) | ((a.y == b.y) & (a.x < b.x));
}

// The selection's rank of a raw element: the smallest rank wins.
fn rank(v: vec2<u32>) -> vec2<u32> {
    return order_key(v);
}

// Whether candidate a (rank, position) beats candidate b; either may be empty.
fn better(rank_a: vec2<u32>, position_a: u32, rank_b: vec2<u32>, position_b: u32, last: bool) -> bool {
    let tie_wins = select((position_a < position_b), (position_a > position_b), last);
    let wins = key_less(rank_a, rank_b) | (!key_less(rank_b, rank_a) & tie_wins);
    return (position_a != NO_POSITION) & ((position_b == NO_POSITION) | wins);
}

// Whether a candidate at a later position than the best so far beats it.
fn later_wins(candidate: vec2<u32>, best: vec2<u32>, last: bool) -> bool {
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
    rank: vec2<u32>,
    position: u32,
}

// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: vec2<u32> = vec2<u32>(0xffffffffu, 0xffffffffu);

// The reduced dimensions' rank and innermost stride, read once at the top.
struct Reduced {
    dims: u32,
    stride: u32,
}

// The best of positions begin + lane, begin + lane + team, ... below end: the team's
// threads read consecutive elements when the innermost dimension is reduced.
fn scan_strided(base: u32, begin: u32, end: u32, lane: u32, team: u32, last: bool, g: Reduced) -> Best {
    if (begin >= end || end - begin <= lane) {
        return Best(vec2<u32>(0u, 0u), NO_POSITION);
    }
    // One reduced dimension (the common case): a plain stride.
    if (g.dims <= 1u) {
        let first = begin + lane;
        let count = (end - first - 1u) / team + 1u;
        var best_rank = NO_RANK;
        var best_position = first;
        var offset = base + first * g.stride;
        let offset_step = g.stride * team;
        if (last) {
            for (var i = 0u; i < count; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = !key_less(best_rank, candidate);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, first + i * team, wins);
                offset = offset + offset_step;
            }
        } else {
            for (var i = 0u; i < count; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = key_less(candidate, best_rank);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, first + i * team, wins);
                offset = offset + offset_step;
            }
        }
        return Best(best_rank, best_position);
    }
    // Several reduced dimensions: the offset recomputed at every position.
    var r = begin + lane;
    var offset = base + reduced_offset(r);
    var best = Best(rank(load_input(offset)), r);
    loop {
        // Stop before r + team could wrap around.
        if (end - r <= team) {
            break;
        }
        r = r + team;
        offset = base + reduced_offset(r);
        let candidate = rank(load_input(offset));
        if (later_wins(candidate, best.rank, last)) {
            best = Best(candidate, r);
        }
    }
    return best;
}

// Writes output element o: the selected element's position or bits.
fn emit(o: u32, position: u32, base: u32) {
    store_output(o, position);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // A team per output element.
    let team = param(P_TEAM);
    // Teams are powers of two: shifts, not divisions.
    let team_shift = countTrailingZeros(team);
    let lane = lid & (team - 1u);
    let item = group * (WORKGROUP_SIZE >> team_shift) + (lid >> team_shift);
    // Parameter words first, before any branch: lavapipe pays for every read after one.
    let len = param(P_REDUCE_LEN);
    let chunk = param(P_CHUNK_LEN);
    let reduced = Reduced(param(P_REDUCED_RANK), param(P_REDUCED_STRIDES));
    let in_range = item < param(P_OUTPUT_COUNT);
    var base = 0u;
    var first = 0u;
    var stop = 0u;
    if (in_range) {
        base = kept_offset(item);
        stop = len;
    }
    let best = scan_strided(base, first, stop, lane, team, last, reduced);
    wg_rank[lid] = best.rank;
    wg_position[lid] = best.position;
    // Combine the team's candidates; barriers stay in uniform control flow
    // (the team size is a parameter word, the same for every thread).
    for (var stride = team / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (lane < stride) {
            let other_rank = wg_rank[lid + stride];
            let other_position = wg_position[lid + stride];
            if (better(other_rank, other_position, wg_rank[lid], wg_position[lid], last)) {
                wg_rank[lid] = other_rank;
                wg_position[lid] = other_position;
            }
        }
    }
    if (lane == 0u && in_range) {
        emit(item, wg_position[lid], base);
    }
}

// ---- segmented variant, segments per binding [1, 4, 4] ----

// @generated from specs/argmin.op
// kernel: ArgMin/reduce_tree/INT64/UINT32
// reduce (reduce_tree): keep Index, select Min, zeros Equal; input INT64, output UINT32

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

var<workgroup> wg_rank: array<vec2<u32>, WORKGROUP_SIZE>;
var<workgroup> wg_position: array<u32, WORKGROUP_SIZE>;

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

fn load_input(i: u32) -> vec2<u32> {
    return vec2<u32>(input_word(2u * i), input_word(2u * i + 1u));
}

fn store_output(i: u32, v: u32) {
    output_set(i, v);
}

fn order_key(v: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(v.x, v.y ^ 0x80000000u);
}

fn key_less(a: vec2<u32>, b: vec2<u32>) -> bool {
    return (a.y < b.y) | ((a.y == b.y) & (a.x < b.x));
}

// The selection's rank of a raw element: the smallest rank wins.
fn rank(v: vec2<u32>) -> vec2<u32> {
    return order_key(v);
}

// Whether candidate a (rank, position) beats candidate b; either may be empty.
fn better(rank_a: vec2<u32>, position_a: u32, rank_b: vec2<u32>, position_b: u32, last: bool) -> bool {
    let tie_wins = select((position_a < position_b), (position_a > position_b), last);
    let wins = key_less(rank_a, rank_b) | (!key_less(rank_b, rank_a) & tie_wins);
    return (position_a != NO_POSITION) & ((position_b == NO_POSITION) | wins);
}

// Whether a candidate at a later position than the best so far beats it.
fn later_wins(candidate: vec2<u32>, best: vec2<u32>, last: bool) -> bool {
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
    rank: vec2<u32>,
    position: u32,
}

// The selection's best so far: all-ones ranks lose to (or tie with) every element.
const NO_RANK: vec2<u32> = vec2<u32>(0xffffffffu, 0xffffffffu);

// The reduced dimensions' rank and innermost stride, read once at the top.
struct Reduced {
    dims: u32,
    stride: u32,
}

// The best of positions begin + lane, begin + lane + team, ... below end: the team's
// threads read consecutive elements when the innermost dimension is reduced.
fn scan_strided(base: u32, begin: u32, end: u32, lane: u32, team: u32, last: bool, g: Reduced) -> Best {
    if (begin >= end || end - begin <= lane) {
        return Best(vec2<u32>(0u, 0u), NO_POSITION);
    }
    // One reduced dimension (the common case): a plain stride.
    if (g.dims <= 1u) {
        let first = begin + lane;
        let count = (end - first - 1u) / team + 1u;
        var best_rank = NO_RANK;
        var best_position = first;
        var offset = base + first * g.stride;
        let offset_step = g.stride * team;
        if (last) {
            for (var i = 0u; i < count; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = !key_less(best_rank, candidate);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, first + i * team, wins);
                offset = offset + offset_step;
            }
        } else {
            for (var i = 0u; i < count; i = i + 1u) {
                let candidate = rank(load_input(offset));
                let wins = key_less(candidate, best_rank);
                best_rank = select(best_rank, candidate, wins);
                best_position = select(best_position, first + i * team, wins);
                offset = offset + offset_step;
            }
        }
        return Best(best_rank, best_position);
    }
    // Several reduced dimensions: the offset recomputed at every position.
    var r = begin + lane;
    var offset = base + reduced_offset(r);
    var best = Best(rank(load_input(offset)), r);
    loop {
        // Stop before r + team could wrap around.
        if (end - r <= team) {
            break;
        }
        r = r + team;
        offset = base + reduced_offset(r);
        let candidate = rank(load_input(offset));
        if (later_wins(candidate, best.rank, last)) {
            best = Best(candidate, r);
        }
    }
    return best;
}

// Writes output element o: the selected element's position or bits.
fn emit(o: u32, position: u32, base: u32) {
    store_output(o, position);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let last = param(P_TIES) == TIES_LAST;
    // A team per output element.
    let team = param(P_TEAM);
    // Teams are powers of two: shifts, not divisions.
    let team_shift = countTrailingZeros(team);
    let lane = lid & (team - 1u);
    let item = group * (WORKGROUP_SIZE >> team_shift) + (lid >> team_shift);
    // Parameter words first, before any branch: lavapipe pays for every read after one.
    let len = param(P_REDUCE_LEN);
    let chunk = param(P_CHUNK_LEN);
    let reduced = Reduced(param(P_REDUCED_RANK), param(P_REDUCED_STRIDES));
    let in_range = item < param(P_OUTPUT_COUNT);
    var base = 0u;
    var first = 0u;
    var stop = 0u;
    if (in_range) {
        base = kept_offset(item);
        stop = len;
    }
    let best = scan_strided(base, first, stop, lane, team, last, reduced);
    wg_rank[lid] = best.rank;
    wg_position[lid] = best.position;
    // Combine the team's candidates; barriers stay in uniform control flow
    // (the team size is a parameter word, the same for every thread).
    for (var stride = team / 2u; stride > 0u; stride = stride / 2u) {
        workgroupBarrier();
        if (lane < stride) {
            let other_rank = wg_rank[lid + stride];
            let other_position = wg_position[lid + stride];
            if (better(other_rank, other_position, wg_rank[lid], wg_position[lid], last)) {
                wg_rank[lid] = other_rank;
                wg_position[lid] = other_position;
            }
        }
    }
    if (lane == 0u && in_range) {
        emit(item, wg_position[lid], base);
    }
}
