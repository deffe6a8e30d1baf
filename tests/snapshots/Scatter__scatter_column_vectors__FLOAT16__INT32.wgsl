// @generated from specs/scatter.op
// kernel: Scatter/scatter_column_vectors/FLOAT16/INT32
// scatter_elements (scatter_column_vectors): data FLOAT16, index INT32
// The last update in row-major order wins each output element.

const WORKGROUP_SIZE: u32 = 256u;
const P_UPDATE_COUNT: u32 = 0u;
const P_INNER: u32 = 1u;
const P_INDEX_AXIS_LEN: u32 = 2u;
const P_AXIS_LEN: u32 = 3u;
const P_COLUMNS: u32 = 5u;
// No element: a bad index's target; status word 0 while no index is bad.
const NONE: u32 = 0xffffffffu;
// Elements (columns) per vec4<u32>.
const PER_VECTOR: u32 = 8u;
// Rows a thread walks between two workgroup barriers.
const LOCKSTEP_ROWS: u32 = 64u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> indices: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> updates: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> output: array<vec4<u32>>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Vector i of `indices`.
fn indices_vector(i: u32) -> vec4<u32> {
    return indices[i];
}

fn indices_word(i: u32) -> u32 {
    return indices[i >> 2u][i & 3u];
}

// Vector i of `updates`.
fn updates_vector(i: u32) -> vec4<u32> {
    return updates[i];
}

fn updates_word(i: u32) -> u32 {
    return updates[i >> 2u][i & 3u];
}

// Word i of `status`.
fn status_word(i: u32) -> u32 {
    return atomicLoad(&status[i]);
}

fn status_atomic_and(i: u32, v: u32) {
    atomicAnd(&status[i], v);
}

fn status_atomic_or(i: u32, v: u32) {
    atomicOr(&status[i], v);
}

fn status_atomic_min(i: u32, v: u32) {
    atomicMin(&status[i], v);
}

fn status_atomic_max(i: u32, v: u32) {
    atomicMax(&status[i], v);
}

// Vector i of `output`.
fn output_vector(i: u32) -> vec4<u32> {
    return output[i];
}

fn output_word(i: u32) -> u32 {
    return output[i >> 2u][i & 3u];
}

fn output_store(i: u32, v: vec4<u32>) {
    output[i] = v;
}

// Word `lane` of vector i: a store of that word alone.
fn output_set_lane(i: u32, lane: u32, v: u32) {
    output[i][lane] = v;
}

fn output_set(i: u32, v: u32) {
    output_set_lane(i >> 2u, i & 3u, v);
}

fn load_index(i: u32) -> u32 {
    return indices_word(i);
}

// The position INT32 index value v selects in a dimension of size n, or NONE.
fn axis_coordinate(v: u32, n: u32) -> u32 {
    let s = bitcast<i32>(v);
    if (s >= 0) {
        if (u32(s) < n) {
            return u32(s);
        }
        return NONE;
    }
    // -s as u32, exact even for the most negative value.
    let magnitude = 0u - bitcast<u32>(s);
    if (magnitude <= n) {
        return n - magnitude;
    }
    return NONE;
}

// The geometry's parameter words, read once at the kernel's top.
struct Axis {
    inner: u32,
    index_len: u32,
    len: u32,
}

// Update u's target output element, or NONE when its index is out of range.
// u = (outer * index_axis_len + k) * inner + i -> (outer * axis_len + c) * inner + i.
fn target_of(u: u32, g: Axis) -> u32 {
    let c = axis_coordinate(load_index(u), g.len);
    if (c == NONE) {
        return NONE;
    }
    let outer = u / g.inner / g.index_len;
    return (outer * g.len + c) * g.inner + u % g.inner;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let axis = Axis(param(P_INNER), param(P_INDEX_AXIS_LEN), param(P_AXIS_LEN));
    // One thread per vector of PER_VECTOR columns (outer, i..); inner holds whole
    // vectors. No early return: every thread meets every barrier.
    let count = param(P_COLUMNS) / PER_VECTOR;
    let walk = axis.index_len;
    let inner = axis.inner;
    // Threads past the last vector (and the grid's tail, where group * WORKGROUP_SIZE
    // could wrap around) walk without loading or storing.
    let groups = count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u);
    let u = group * WORKGROUP_SIZE + lid;
    var live = group < groups && u < count;
    let first = u * PER_VECTOR;
    let i = first % inner;
    let outer = first / inner;
    var update = outer * walk * inner + i;
    let base = outer * axis.len * inner + i;
    // Updates of these columns, in row-major order: the vector at update / PER_VECTOR,
    // then inner further on; each column's element goes to its own output word(s).
    for (var k = 0u; k < walk; k = k + 1u) {
        if (live) {
            let iv0 = indices_vector(update / PER_VECTOR * 2u + 0u);
            let iv1 = indices_vector(update / PER_VECTOR * 2u + 1u);
            let c0 = axis_coordinate(iv0[0], axis.len);
            let c1 = axis_coordinate(iv0[1], axis.len);
            let c2 = axis_coordinate(iv0[2], axis.len);
            let c3 = axis_coordinate(iv0[3], axis.len);
            let c4 = axis_coordinate(iv1[0], axis.len);
            let c5 = axis_coordinate(iv1[1], axis.len);
            let c6 = axis_coordinate(iv1[2], axis.len);
            let c7 = axis_coordinate(iv1[3], axis.len);
            if ((c0 == NONE) | (c1 == NONE) | (c2 == NONE) | (c3 == NONE) | (c4 == NONE) | (c5 == NONE) | (c6 == NONE) | (c7 == NONE)) {
                // The lowest bad position of the row; the call fails, its outputs are
                // not returned, and nothing is written out of bounds.
                atomicMin(&status[0], select(select(select(select(select(select(select(update + 7u, update + 6u, c6 == NONE), update + 5u, c5 == NONE), update + 4u, c4 == NONE), update + 3u, c3 == NONE), update + 2u, c2 == NONE), update + 1u, c1 == NONE), update + 0u, c0 == NONE));
                live = false;
            }
            if (live) {
                let v = updates_vector(update / PER_VECTOR);
                // Every column into one output row: the vector goes whole.
                let same = (c1 == c0) & (c2 == c0) & (c3 == c0) & (c4 == c0) & (c5 == c0) & (c6 == c0) & (c7 == c0);
                if (same) {
                    output_store((base + c0 * inner) / PER_VECTOR, v);
                } else {
                    let w0 = (base + 0u + c0 * inner) / 2u;
                    let o0 = output_word(w0);
                    let w1 = (base + 1u + c1 * inner) / 2u;
                    let o1 = output_word(w1);
                    let w2 = (base + 2u + c2 * inner) / 2u;
                    let o2 = output_word(w2);
                    let w3 = (base + 3u + c3 * inner) / 2u;
                    let o3 = output_word(w3);
                    let w4 = (base + 4u + c4 * inner) / 2u;
                    let o4 = output_word(w4);
                    let w5 = (base + 5u + c5 * inner) / 2u;
                    let o5 = output_word(w5);
                    let w6 = (base + 6u + c6 * inner) / 2u;
                    let o6 = output_word(w6);
                    let w7 = (base + 7u + c7 * inner) / 2u;
                    let o7 = output_word(w7);
                    let n0 = select(((o0) & ~0xffffu) | (v[0] & 0xffffu), ((((o0) & ~0xffffu) | (v[0] & 0xffffu)) & ~0xffff0000u) | (v[0] & 0xffff0000u), w1 == w0);
                    output_set(w0, n0);
                    let n1 = select(((o1) & ~0xffff0000u) | (v[0] & 0xffff0000u), ((((o1) & ~0xffff0000u) | (v[0] & 0xffff0000u)) & ~0xffffu) | (v[0] & 0xffffu), w0 == w1);
                    output_set(w1, n1);
                    let n2 = select(((o2) & ~0xffffu) | (v[1] & 0xffffu), ((((o2) & ~0xffffu) | (v[1] & 0xffffu)) & ~0xffff0000u) | (v[1] & 0xffff0000u), w3 == w2);
                    output_set(w2, n2);
                    let n3 = select(((o3) & ~0xffff0000u) | (v[1] & 0xffff0000u), ((((o3) & ~0xffff0000u) | (v[1] & 0xffff0000u)) & ~0xffffu) | (v[1] & 0xffffu), w2 == w3);
                    output_set(w3, n3);
                    let n4 = select(((o4) & ~0xffffu) | (v[2] & 0xffffu), ((((o4) & ~0xffffu) | (v[2] & 0xffffu)) & ~0xffff0000u) | (v[2] & 0xffff0000u), w5 == w4);
                    output_set(w4, n4);
                    let n5 = select(((o5) & ~0xffff0000u) | (v[2] & 0xffff0000u), ((((o5) & ~0xffff0000u) | (v[2] & 0xffff0000u)) & ~0xffffu) | (v[2] & 0xffffu), w4 == w5);
                    output_set(w5, n5);
                    let n6 = select(((o6) & ~0xffffu) | (v[3] & 0xffffu), ((((o6) & ~0xffffu) | (v[3] & 0xffffu)) & ~0xffff0000u) | (v[3] & 0xffff0000u), w7 == w6);
                    output_set(w6, n6);
                    let n7 = select(((o7) & ~0xffff0000u) | (v[3] & 0xffff0000u), ((((o7) & ~0xffff0000u) | (v[3] & 0xffff0000u)) & ~0xffffu) | (v[3] & 0xffffu), w6 == w7);
                    output_set(w7, n7);
                }
            }
            update = update + inner;
        }
        // Lock step: the workgroup's threads stay within LOCKSTEP_ROWS rows.
        if (k % LOCKSTEP_ROWS == LOCKSTEP_ROWS - 1u) {
            workgroupBarrier();
        }
    }
}

// ---- segmented variant, segments per binding [1, 4, 4, 1, 4] ----

// @generated from specs/scatter.op
// kernel: Scatter/scatter_column_vectors/FLOAT16/INT32
// scatter_elements (scatter_column_vectors): data FLOAT16, index INT32
// The last update in row-major order wins each output element.

const WORKGROUP_SIZE: u32 = 256u;
const P_UPDATE_COUNT: u32 = 0u;
const P_INNER: u32 = 1u;
const P_INDEX_AXIS_LEN: u32 = 2u;
const P_AXIS_LEN: u32 = 3u;
const P_COLUMNS: u32 = 5u;
// No element: a bad index's target; status word 0 while no index is bad.
const NONE: u32 = 0xffffffffu;
// Elements (columns) per vec4<u32>.
const PER_VECTOR: u32 = 8u;
// Rows a thread walks between two workgroup barriers.
const LOCKSTEP_ROWS: u32 = 64u;

@group(0) @binding(0) var<uniform> params: array<vec4<u32>, 24>;
@group(0) @binding(1) var<storage, read> indices_s0: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> indices_s1: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> indices_s2: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> indices_s3: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> updates_s0: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> updates_s1: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read> updates_s2: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read> updates_s3: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> output_s0: array<vec4<u32>>;
@group(0) @binding(11) var<storage, read_write> output_s1: array<vec4<u32>>;
@group(0) @binding(12) var<storage, read_write> output_s2: array<vec4<u32>>;
@group(0) @binding(13) var<storage, read_write> output_s3: array<vec4<u32>>;

// Parameter word i: the same in every thread, one load wherever it is read.
fn param(i: u32) -> u32 {
    return params[i >> 2u][i & 3u];
}

// Vector i of `indices`, bound in 4 segments of arrayLength(&indices_s0) vectors.
fn indices_vector(i: u32) -> vec4<u32> {
    let n = arrayLength(&indices_s0);
    if (i < n) {
        return indices_s0[i];
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        return indices_s1[r];
    }
    if (s == 2u) {
        return indices_s2[r];
    }
    return indices_s3[r];
}

fn indices_word(i: u32) -> u32 {
    return indices_vector(i >> 2u)[i & 3u];
}

// Vector i of `updates`, bound in 4 segments of arrayLength(&updates_s0) vectors.
fn updates_vector(i: u32) -> vec4<u32> {
    let n = arrayLength(&updates_s0);
    if (i < n) {
        return updates_s0[i];
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        return updates_s1[r];
    }
    if (s == 2u) {
        return updates_s2[r];
    }
    return updates_s3[r];
}

fn updates_word(i: u32) -> u32 {
    return updates_vector(i >> 2u)[i & 3u];
}

// Word i of `status`.
fn status_word(i: u32) -> u32 {
    return atomicLoad(&status[i]);
}

fn status_atomic_and(i: u32, v: u32) {
    atomicAnd(&status[i], v);
}

fn status_atomic_or(i: u32, v: u32) {
    atomicOr(&status[i], v);
}

fn status_atomic_min(i: u32, v: u32) {
    atomicMin(&status[i], v);
}

fn status_atomic_max(i: u32, v: u32) {
    atomicMax(&status[i], v);
}

// Vector i of `output`, bound in 4 segments of arrayLength(&output_s0) vectors.
fn output_vector(i: u32) -> vec4<u32> {
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

fn output_word(i: u32) -> u32 {
    return output_vector(i >> 2u)[i & 3u];
}

fn output_store(i: u32, v: vec4<u32>) {
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

// Word `lane` of vector i: a store of that word alone.
fn output_set_lane(i: u32, lane: u32, v: u32) {
    let n = arrayLength(&output_s0);
    if (i < n) {
        output_s0[i][lane] = v;
        return;
    }
    let s = i / n;
    let r = i - s * n;
    if (s == 1u) {
        output_s1[r][lane] = v;
        return;
    }
    if (s == 2u) {
        output_s2[r][lane] = v;
        return;
    }
    output_s3[r][lane] = v;
}

fn output_set(i: u32, v: u32) {
    output_set_lane(i >> 2u, i & 3u, v);
}

fn load_index(i: u32) -> u32 {
    return indices_word(i);
}

// The position INT32 index value v selects in a dimension of size n, or NONE.
fn axis_coordinate(v: u32, n: u32) -> u32 {
    let s = bitcast<i32>(v);
    if (s >= 0) {
        if (u32(s) < n) {
            return u32(s);
        }
        return NONE;
    }
    // -s as u32, exact even for the most negative value.
    let magnitude = 0u - bitcast<u32>(s);
    if (magnitude <= n) {
        return n - magnitude;
    }
    return NONE;
}

// The geometry's parameter words, read once at the kernel's top.
struct Axis {
    inner: u32,
    index_len: u32,
    len: u32,
}

// Update u's target output element, or NONE when its index is out of range.
// u = (outer * index_axis_len + k) * inner + i -> (outer * axis_len + c) * inner + i.
fn target_of(u: u32, g: Axis) -> u32 {
    let c = axis_coordinate(load_index(u), g.len);
    if (c == NONE) {
        return NONE;
    }
    let outer = u / g.inner / g.index_len;
    return (outer * g.len + c) * g.inner + u % g.inner;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = wg.x + wg.y * num_workgroups.x;
    let axis = Axis(param(P_INNER), param(P_INDEX_AXIS_LEN), param(P_AXIS_LEN));
    // One thread per vector of PER_VECTOR columns (outer, i..); inner holds whole
    // vectors. No early return: every thread meets every barrier.
    let count = param(P_COLUMNS) / PER_VECTOR;
    let walk = axis.index_len;
    let inner = axis.inner;
    // Threads past the last vector (and the grid's tail, where group * WORKGROUP_SIZE
    // could wrap around) walk without loading or storing.
    let groups = count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u);
    let u = group * WORKGROUP_SIZE + lid;
    var live = group < groups && u < count;
    let first = u * PER_VECTOR;
    let i = first % inner;
    let outer = first / inner;
    var update = outer * walk * inner + i;
    let base = outer * axis.len * inner + i;
    // Updates of these columns, in row-major order: the vector at update / PER_VECTOR,
    // then inner further on; each column's element goes to its own output word(s).
    for (var k = 0u; k < walk; k = k + 1u) {
        if (live) {
            let iv0 = indices_vector(update / PER_VECTOR * 2u + 0u);
            let iv1 = indices_vector(update / PER_VECTOR * 2u + 1u);
            let c0 = axis_coordinate(iv0[0], axis.len);
            let c1 = axis_coordinate(iv0[1], axis.len);
            let c2 = axis_coordinate(iv0[2], axis.len);
            let c3 = axis_coordinate(iv0[3], axis.len);
            let c4 = axis_coordinate(iv1[0], axis.len);
            let c5 = axis_coordinate(iv1[1], axis.len);
            let c6 = axis_coordinate(iv1[2], axis.len);
            let c7 = axis_coordinate(iv1[3], axis.len);
            if ((c0 == NONE) | (c1 == NONE) | (c2 == NONE) | (c3 == NONE) | (c4 == NONE) | (c5 == NONE) | (c6 == NONE) | (c7 == NONE)) {
                // The lowest bad position of the row; the call fails, its outputs are
                // not returned, and nothing is written out of bounds.
                atomicMin(&status[0], select(select(select(select(select(select(select(update + 7u, update + 6u, c6 == NONE), update + 5u, c5 == NONE), update + 4u, c4 == NONE), update + 3u, c3 == NONE), update + 2u, c2 == NONE), update + 1u, c1 == NONE), update + 0u, c0 == NONE));
                live = false;
            }
            if (live) {
                let v = updates_vector(update / PER_VECTOR);
                // Every column into one output row: the vector goes whole.
                let same = (c1 == c0) & (c2 == c0) & (c3 == c0) & (c4 == c0) & (c5 == c0) & (c6 == c0) & (c7 == c0);
                if (same) {
                    output_store((base + c0 * inner) / PER_VECTOR, v);
                } else {
                    let w0 = (base + 0u + c0 * inner) / 2u;
                    let o0 = output_word(w0);
                    let w1 = (base + 1u + c1 * inner) / 2u;
                    let o1 = output_word(w1);
                    let w2 = (base + 2u + c2 * inner) / 2u;
                    let o2 = output_word(w2);
                    let w3 = (base + 3u + c3 * inner) / 2u;
                    let o3 = output_word(w3);
                    let w4 = (base + 4u + c4 * inner) / 2u;
                    let o4 = output_word(w4);
                    let w5 = (base + 5u + c5 * inner) / 2u;
                    let o5 = output_word(w5);
                    let w6 = (base + 6u + c6 * inner) / 2u;
                    let o6 = output_word(w6);
                    let w7 = (base + 7u + c7 * inner) / 2u;
                    let o7 = output_word(w7);
                    let n0 = select(((o0) & ~0xffffu) | (v[0] & 0xffffu), ((((o0) & ~0xffffu) | (v[0] & 0xffffu)) & ~0xffff0000u) | (v[0] & 0xffff0000u), w1 == w0);
                    output_set(w0, n0);
                    let n1 = select(((o1) & ~0xffff0000u) | (v[0] & 0xffff0000u), ((((o1) & ~0xffff0000u) | (v[0] & 0xffff0000u)) & ~0xffffu) | (v[0] & 0xffffu), w0 == w1);
                    output_set(w1, n1);
                    let n2 = select(((o2) & ~0xffffu) | (v[1] & 0xffffu), ((((o2) & ~0xffffu) | (v[1] & 0xffffu)) & ~0xffff0000u) | (v[1] & 0xffff0000u), w3 == w2);
                    output_set(w2, n2);
                    let n3 = select(((o3) & ~0xffff0000u) | (v[1] & 0xffff0000u), ((((o3) & ~0xffff0000u) | (v[1] & 0xffff0000u)) & ~0xffffu) | (v[1] & 0xffffu), w2 == w3);
                    output_set(w3, n3);
                    let n4 = select(((o4) & ~0xffffu) | (v[2] & 0xffffu), ((((o4) & ~0xffffu) | (v[2] & 0xffffu)) & ~0xffff0000u) | (v[2] & 0xffff0000u), w5 == w4);
                    output_set(w4, n4);
                    let n5 = select(((o5) & ~0xffff0000u) | (v[2] & 0xffff0000u), ((((o5) & ~0xffff0000u) | (v[2] & 0xffff0000u)) & ~0xffffu) | (v[2] & 0xffffu), w4 == w5);
                    output_set(w5, n5);
                    let n6 = select(((o6) & ~0xffffu) | (v[3] & 0xffffu), ((((o6) & ~0xffffu) | (v[3] & 0xffffu)) & ~0xffff0000u) | (v[3] & 0xffff0000u), w7 == w6);
                    output_set(w6, n6);
                    let n7 = select(((o7) & ~0xffff0000u) | (v[3] & 0xffff0000u), ((((o7) & ~0xffff0000u) | (v[3] & 0xffff0000u)) & ~0xffffu) | (v[3] & 0xffffu), w6 == w7);
                    output_set(w7, n7);
                }
            }
            update = update + inner;
        }
        // Lock step: the workgroup's threads stay within LOCKSTEP_ROWS rows.
        if (k % LOCKSTEP_ROWS == LOCKSTEP_ROWS - 1u) {
            workgroupBarrier();
        }
    }
}
