//! WGSL kernels of the `gather_nd` and `gather` families.
//!
//! One kernel per variant
//! ([`super::GatherVariant`]: element, row, vector,
//! single-element and single-vector mode), data type and index type, each
//! holding only its own mode's code;
//! the plan builder `super::gather_nd_plan` picks the
//! variant and fills the parameter words
//! ([`super::params`]). Every variant has the same
//! bindings of group 0, in order ([`GATHER_ND_BINDINGS`]):
//!
//! 0. `params` (uniform, [`crate::Access::Uniform`]): the parameter words,
//!    read with `param(i)`;
//! 1. `input: array<u32>` (read): the input tensor's packed words;
//! 2. `indices: array<u32>` (read): the index tensor's packed words
//!    (`array<vec4<u32>>` in single-vector mode, read 16 bytes a load);
//! 3. `output: array<u32>` (read_write): the output tensor's packed words;
//! 4. `status: array<atomic<u32>>` (read_write): word 0 receives, by
//!    `atomicMin`, the position of the lowest out-of-range index element a
//!    thread met (it stays `0xffffffff` when every index is in range; the
//!    atomic is outside the tuple loop, which on lavapipe costs less);
//! 5. `input_v: array<vec4<u32>>` (read): the input again, 16 bytes a load
//!    (vector mode; other modes bind the parameters here);
//! 6. `output_v: array<vec4<u32>>` (read_write): the output, 16 bytes a
//!    store (vector and single-vector mode, which bind a 16-byte scratch
//!    buffer as `output`; other modes bind the scratch buffer here).
//!
//! Each thread owns whole output words, so no output store needs atomics: a
//! 32-bit or 64-bit element per thread, or for 8- and 16-bit data the 4 or 2
//! elements of one `u32` word, assembled in a register and stored once.
//! Neighbouring threads take neighbouring output elements, so a tuple whose
//! slice holds many elements reads the input and writes the output
//! contiguously across a workgroup; they all read the same tuple's index
//! values, which the caches broadcast.
//!
//! Vector mode (slices of at least `GatherTuning::VECTOR_MIN` whole 16-byte vectors): each
//! slice is copied in blocks by teams of threads (`P_VECTOR_TEAM`, a power
//! of two up to a workgroup), `VECTORS_PER_THREAD` vectors a thread with the
//! team's threads on consecutive vectors, and no barrier. A thread resolves
//! its tuple's index values once and then copies in a plain loop. On
//! lavapipe, whose cost is per invocation more than per byte, a layout whose
//! threads changed tuple inside their loop ran at 0.6x the copy kernel.
//!
//! Single-vector mode (software plans; slices of one element selected by
//! tuples of one or two index values, one batch): a vector of consecutive
//! output elements a thread (16 of 8-bit data down to 4 of 32- and 64-bit
//! data), their tuples read as vectors and resolved unrolled, their
//! elements stored as one vector (two of 64-bit data).
//!
//! Row mode (slices of at least `GatherTuning::ROW_MIN_WORDS` whole words): each workgroup
//! copies a block of words of one tuple's slice, so the tuple's index values
//! are resolved from workgroup-uniform addresses and every word is a plain
//! coalesced copy, with no division per element.
//!
//! A thread resolves each index value of its tuple against the size of its
//! dimension with integer arithmetic only: signed values in `[-n, n)` count
//! from the end when negative; 64-bit values are `(lo, hi)` word pairs
//! compared exactly (no `i64` in core WGSL). A thread that meets an
//! out-of-range value reports its position and stores nothing. When the
//! slices are empty, each work item checks one tuple and stores nothing, so
//! that every index value is checked as on the CPU.

use super::{
    params, single_vector_items, GatherVariant, ELEMENTS_PER_THREAD, ROW_BLOCK_WORDS,
    VECTORS_PER_THREAD, WORKGROUP_SIZE,
};
use crate::{Access, DataType};

use crate::wgsl::segments::{self, Buffer};
use crate::wgsl::writer::Writer;
use crate::wgsl::{dtype, each_item};

/// The bindings of every gather_nd kernel: params, input, indices, output,
/// status, input as vectors, output as vectors.
pub const GATHER_ND_BINDINGS: &[Access] = &[
    Access::Uniform,
    Access::Read,
    Access::Read,
    Access::ReadWrite,
    Access::ReadWrite,
    Access::Read,
    Access::ReadWrite,
];

/// The entry point's name.
pub const GATHER_ND_ENTRY: &str = "main";

/// The kernel key by the framework's convention,
/// `{operator}/{variant}/{DATA}/{INDEX}`
/// (`GatherND1/gather_nd_elements/FLOAT16/INT64`).
pub fn gather_nd_kernel_key(
    operator: &str,
    variant: GatherVariant,
    data: DataType,
    index: DataType,
) -> String {
    format!(
        "{operator}/{}/{}/{}",
        variant.name(),
        data.spec_name(),
        index.spec_name()
    )
}

/// True when a kernel can be generated for this pair: any data type, and any
/// integer index type (the tables list INT64, INT32, UINT64 and UINT32; the
/// narrower ones work alike).
pub fn gather_nd_supported(data: DataType, index: DataType) -> bool {
    let _ = data;
    index.is_int()
}

/// The complete WGSL of one gather_nd kernel: the module and its segmented
/// variant ([`crate::wgsl::segments`]; the input, indices and output, in both
/// flavours, are segmented).
///
/// `key` is the kernel key (written into the header) and `origin` the spec
/// path (`// @generated from {origin}`). The pair must be
/// [`gather_nd_supported`]; a floating-point index type still generates a
/// module, which reads the index bits as an unsigned integer.
pub fn gather_nd_kernel(
    variant: GatherVariant,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> String {
    segments::combined(gather_nd_kernel_text(variant, data, index, key, origin))
}

/// The parts of [`gather_nd_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
///
/// The complete WGSL of one gather_nd kernel: the module and its segmented
/// variant ([`crate::wgsl::segments`]; the input, indices and output, in both
/// flavours, are segmented).
///
/// `key` is the kernel key (written into the header) and `origin` the spec
/// path (`// @generated from {origin}`). The pair must be
/// [`gather_nd_supported`]; a floating-point index type still generates a
/// module, which reads the index bits as an unsigned integer.
pub fn gather_nd_kernel_text(
    variant: GatherVariant,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    debug_assert!(gather_nd_supported(data, index), "{key}");
    gather_nd_module(variant, data, index, key, origin)
}

/// The buffers of a variant's kernel: [`BUFFERS`], the indices bound as
/// vectors for the single-vector variants.
fn buffers(variant: GatherVariant) -> [Buffer<'static>; 7] {
    let mut buffers = BUFFERS;
    if variant.single_vectors_tuple().is_some() {
        buffers[2] = Buffer::read_vec4("indices");
    }
    buffers
}

/// The buffers of every gather_nd kernel, in binding order.
const BUFFERS: [Buffer<'static>; 7] = [
    Buffer::params(),
    Buffer::read("input", true),
    Buffer::read("indices", true),
    Buffer::read_write("output", false, true),
    Buffer::read_write("status", true, false),
    Buffer::read_vec4("input_v"),
    Buffer::read_write_vec4("output_v"),
];

/// The module of a gather_nd kernel, with its segmented variant.
fn gather_nd_module(
    variant: GatherVariant,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!(
        "gather_nd ({}): data {data}, indices {index}",
        variant.name()
    ));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    w.line(format!(
        "const VECTORS_PER_THREAD: u32 = {VECTORS_PER_THREAD}u;"
    ));
    w.line(format!(
        "const ELEMENTS_PER_THREAD: u32 = {ELEMENTS_PER_THREAD}u;"
    ));

    for (name, word) in [
        ("P_OUTPUT_COUNT", params::OUTPUT_COUNT),
        ("P_WORK_COUNT", params::WORK_COUNT),
        ("P_SLICE_LEN", params::SLICE_LEN),
        ("P_TUPLES_PER_BATCH", params::TUPLES_PER_BATCH),
        ("P_BATCH_STRIDE", params::BATCH_STRIDE),
        ("P_TUPLE_SIZE", params::TUPLE_SIZE),
        ("P_DIM_SIZES", params::DIM_SIZES),
        ("P_DIM_STRIDES", params::DIM_STRIDES),
        ("P_TUPLE_COUNT", params::TUPLE_COUNT),
        ("P_ROW_BLOCKS", params::ROW_BLOCKS),
        ("P_SLICE_WORDS", params::SLICE_WORDS),
        ("P_SLICE_VECTORS", params::SLICE_VECTORS),
        ("P_VECTOR_BLOCKS", params::VECTOR_BLOCKS),
        ("P_VECTOR_TEAM", params::VECTOR_TEAM),
        ("P_INDEX_BATCH_STRIDE", params::INDEX_BATCH_STRIDE),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.comment("Not an index, not an offset: an out-of-range index value.");
    w.line("const BAD: u32 = 0xffffffffu;");
    w.blank();
    let buffers = buffers(variant);
    segments::write_bindings(&mut w, &buffers);
    dtype::gen_load_from(&mut w, "load_input", &buffers[1], data);
    w.blank();
    dtype::gen_load_from(&mut w, "load_index", &buffers[2], index);
    w.blank();
    let elements = matches!(variant, GatherVariant::Elements | GatherVariant::Singles);
    if elements && !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &buffers[3], data);
        w.blank();
    }
    dtype::gen_resolve_index(&mut w, "resolve", index, "BAD");
    w.blank();
    gen_tuple_base(&mut w);
    w.blank();
    if variant == GatherVariant::Vectors {
        gen_slice_vector(&mut w, data);
        w.blank();
    }
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {GATHER_ND_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line(TUPLES);
    match variant {
        GatherVariant::Vectors => gen_vector_body(&mut w),
        GatherVariant::Rows => gen_row_body(&mut w, data),
        GatherVariant::Elements => gen_elements_body(&mut w, data),
        // 8- and 16-bit data never plan it; its kernel is the element one.
        GatherVariant::Singles if dtype::is_packed(data) => gen_elements_body(&mut w, data),
        GatherVariant::Singles => gen_singles_body(&mut w),
        GatherVariant::SingleVectors1 => gen_single_vectors_body(&mut w, data, index, 1, &buffers),
        GatherVariant::SingleVectors2 => gen_single_vectors_body(&mut w, data, index, 2, &buffers),
    }
    w.close();
    w.finish_kernel()
}

/// Element mode: a thread per output element or packed output word.
fn gen_elements_body(w: &mut Writer, data: DataType) {
    w.line("let work = param(P_WORK_COUNT);");
    w.line("let slice = param(P_SLICE_LEN);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    w.comment("ELEMENTS_PER_THREAD work items a thread, WORKGROUP_SIZE apart, so that");
    w.comment("consecutive threads still take consecutive items. The branches on the");
    w.comment("slice length stay outside the loops (inside, lavapipe ran 30% slower).");
    w.line("let first = group * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;");
    w.block("if (slice == 0u)", |w| {
        w.comment("Empty slices: each item is a tuple whose indices are only checked.");
        each_item(w, |w| {
            w.line("_ = tuple_base(item, tuples);");
        });
        w.line("return;");
    });
    if dtype::is_packed(data) {
        each_item(w, |w| gen_packed_body(w, data));
    } else {
        w.comment("One output element per work item.");
        w.block("if (slice == 1u)", |w| {
            w.comment("Single elements: no division.");
            each_item(w, gen_single_item);
            w.line("return;");
        });
        each_item(w, |w| {
            w.line("let base = tuple_base(item / slice, tuples);");
            w.block("if (base != BAD)", |w| {
                w.line("store_output(item, load_input(base + item % slice));");
            });
        });
    }
}

/// One work item of single-element slices: its tuple's element, no division.
fn gen_single_item(w: &mut Writer) {
    w.line("let base = tuple_base(item, tuples);");
    w.block("if (base != BAD)", |w| {
        w.line("store_output(item, load_input(base));");
    });
}

/// Single-element mode: the element path for slices of one element alone.
fn gen_singles_body(w: &mut Writer) {
    w.line("let work = param(P_WORK_COUNT);");
    w.comment("ELEMENTS_PER_THREAD work items a thread, WORKGROUP_SIZE apart; each tuple");
    w.comment("addresses one element (slices of one element: no division).");
    w.line("let first = group * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;");
    each_item(w, gen_single_item);
}

/// Single-vector mode: `K` consecutive output elements a thread (a vector
/// of them, [`single_vector_items`]: 16 of 8-bit data, 8 of 16-bit, 4 of
/// 32-bit, and 4 of 64-bit in two vectors), each selected by a tuple of `q`
/// index values (1 or 2), one batch (the plan takes it for gathers without
/// batches only). The thread reads its `K` tuples as whole vectors, resolves
/// the `K * q` values unrolled (no loop over the tuple, the dimension sizes
/// and strides read once), loads the elements, packs 8- and 16-bit ones
/// into words and stores the vector(s); 8- and 16-bit indices (outside the
/// tables) are read a value at a time.
///
/// No branch but the early returns: lavapipe runs both sides of a branch
/// and every loop body at least once, whichever lanes take them. The last
/// thread, when the elements are not a multiple of `K`, reads its index
/// vectors clamped to the last one and ignores the elements past the end;
/// it stores its first output vector whole (the buffer is padded to whole
/// vectors) and a second one (64-bit data) only when it holds an element.
fn gen_single_vectors_body(
    w: &mut Writer,
    data: DataType,
    index: DataType,
    q: usize,
    buffers: &[Buffer<'static>; 7],
) {
    let (indices, output_v) = (&buffers[2], &buffers[6]);
    let k = single_vector_items(data) as usize;
    let iw = index.size_bytes().div_ceil(4);
    w.line("let count = param(P_OUTPUT_COUNT);");
    for j in 0..q {
        w.line(format!("let n{j} = param(P_DIM_SIZES + {j}u);"));
        w.line(format!("let s{j} = param(P_DIM_STRIDES + {j}u);"));
    }
    w.comment(format!(
        "{k} consecutive output elements a thread; each tuple addresses one element."
    ));
    w.comment("Guard the grid's tail before group * WORKGROUP_SIZE could wrap around.");
    w.block(
        format!(
            "if (group >= count / ({k}u * WORKGROUP_SIZE) + select(0u, 1u, count % ({k}u * WORKGROUP_SIZE) != 0u))"
        ),
        |w| {
            w.line("return;");
        },
    );
    w.line("let t = group * WORKGROUP_SIZE + lid;");
    w.line(format!("let first = {k}u * t;"));
    w.block("if (first >= count)", |w| {
        w.line("return;");
    });
    w.comment("Elements past the end (the last thread's): ignored.");
    for m in 1..k {
        w.line(format!("let live{m} = first + {m}u < count;"));
    }
    // Indices narrower than a word (outside the tables) are read a value at
    // a time.
    let narrow = index.size_bits() < 32;
    let vectors = if narrow { 0 } else { k * q * iw / 4 };
    if vectors > 0 {
        w.line(format!("let last = ({}u * count - 1u) / 4u;", q * iw));
    }
    for m in 0..vectors {
        w.line(format!(
            "let iv{m} = {};",
            indices.vector(&format!("min({vectors}u * t + {m}u, last)"))
        ));
    }
    let word = |x: usize| format!("iv{}[{}]", x / 4, x % 4);
    let mut lowest = String::new();
    let mut bad = Vec::new();
    for m in (0..k).rev() {
        for j in (0..q).rev() {
            let p = format!("{q}u * first + {}u", m * q + j);
            let raw = if narrow {
                format!("load_index(min({p}, {q}u * count - 1u))")
            } else {
                dtype::raw_in_words(index, m * q + j, &word)
            };
            w.line(format!("let v{m}_{j} = resolve({raw}, n{j});"));
            w.line(match m {
                0 => format!("let bad{m}_{j} = v{m}_{j} == BAD;"),
                _ => format!("let bad{m}_{j} = (v{m}_{j} == BAD) & live{m};"),
            });
            w.line(format!(
                "let r{m}_{j} = select(v{m}_{j}, 0u, v{m}_{j} == BAD);"
            ));
            lowest = if lowest.is_empty() {
                p
            } else {
                format!("select({lowest}, {p}, bad{m}_{j})")
            };
            bad.push(format!("bad{m}_{j}"));
        }
    }
    bad.reverse();
    w.block(format!("if ({})", bad.join(" | ")), |w| {
        w.comment(format!("The lowest bad index position of the {k} tuples."));
        w.line(format!("atomicMin(&status[0], {lowest});"));
        w.line("return;");
    });
    for m in 0..k {
        let terms: Vec<String> = (0..q).map(|j| format!("r{m}_{j} * s{j}")).collect();
        w.line(format!("let e{m} = load_input({});", terms.join(" + ")));
    }
    let bits = data.size_bits() as usize;
    match bits {
        64 => {
            w.line(output_v.store_vector("2u * t", "vec4<u32>(e0, e1)"));
            w.block("if (live2)", |w| {
                w.line(output_v.store_vector("2u * t + 1u", "vec4<u32>(e2, e3)"));
            });
        }
        _ => {
            // Word c holds elements c * lanes .. in its lanes, low first.
            let lanes = 32 / bits;
            let words: Vec<String> = (0..4)
                .map(|c| {
                    (0..lanes)
                        .map(|l| match l {
                            0 => format!("e{}", c * lanes),
                            _ => format!("(e{} << {}u)", c * lanes + l, l * bits),
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                })
                .collect();
            w.line(output_v.store_vector("t", &format!("vec4<u32>({})", words.join(", "))));
        }
    }
}

/// `struct Tuples` and `fn tuple_base(t: u32, g: Tuples) -> u32`: the
/// input offset of tuple `t`'s slice, or `BAD` after reporting its first
/// out-of-range index element.
///
/// The kernel reads the tuple geometry's parameter words once, at its top
/// (`let tuples = ...`, [`TUPLES`]), and passes them in: a CPU adapter
/// (lavapipe) pays for every parameter read inside a branch or loop. The
/// loop over a tuple's index elements has no `break` either (the first bad
/// position is kept by `select`), so its trip count is the same in every
/// thread. Measured on lavapipe, 8 Mi in-order elements: 65 ms reading the
/// words inside the loops, 57 ms so.
fn gen_tuple_base(w: &mut Writer) {
    w.comment("The tuple geometry's parameter words, read once at the kernel's top.");
    w.block("struct Tuples", |w| {
        w.line("size: u32,");
        w.line("per_batch: u32,");
        w.line("count: u32,");
        w.line("batch_stride: u32,");
        w.line("index_batch_stride: u32,");
    });
    w.blank();
    w.comment("The input offset of tuple t's slice; on an out-of-range index value,");
    w.comment("reports the value's position in status[0] and returns BAD.");
    w.open("fn tuple_base(t: u32, g: Tuples) -> u32");
    w.line("let q = g.size;");
    w.line("var offset = 0u;");
    w.line("var bad = BAD;");
    w.comment("The tuple's first index element: t * q, unless every batch reads the same");
    w.comment("indices (index_batch_stride 0).");
    w.line("var first = t * q;");
    w.comment("Without batch dimensions every tuple is in batch 0: no division.");
    w.block("if (g.per_batch < g.count)", |w| {
        w.line("let batch = t / g.per_batch;");
        w.line("offset = batch * g.batch_stride;");
        w.line("first = batch * g.index_batch_stride + (t - batch * g.per_batch) * q;");
    });
    w.comment("No break: the loop runs q times in every thread; the first bad position stays.");
    w.block("for (var j = 0u; j < q; j = j + 1u)", |w| {
        w.line("let p = first + j;");
        w.line("let i = resolve(load_index(p), param(P_DIM_SIZES + j));");
        w.line("bad = select(bad, p, (i == BAD) & (bad == BAD));");
        w.line("offset = offset + select(i, 0u, i == BAD) * param(P_DIM_STRIDES + j);");
    });
    w.comment("The report is outside the loop: lavapipe runs the loop faster so.");
    w.block("if (bad != BAD)", |w| {
        w.line("atomicMin(&status[0], bad);");
        w.line("return BAD;");
    });
    w.line("return offset;");
    w.close();
}

/// The statement every gather kernel's entry point opens with: the tuple
/// geometry's parameter words ([`gen_tuple_base`]).
const TUPLES: &str = "let tuples = Tuples(param(P_TUPLE_SIZE), param(P_TUPLES_PER_BATCH), param(P_TUPLE_COUNT), param(P_BATCH_STRIDE), param(P_INDEX_BATCH_STRIDE));";

/// `fn slice_vector(t: u32) -> u32`: the input vector tuple `t`'s slice
/// starts at (slices are whole vectors in vector mode), or `BAD`.
fn gen_slice_vector(w: &mut Writer, data: DataType) {
    w.comment("The input vector tuple t's slice starts at (vector mode), or BAD.");
    w.open("fn slice_vector(t: u32, tuples: Tuples) -> u32");
    w.line("let base = tuple_base(t, tuples);");
    w.block("if (base == BAD)", |w| {
        w.line("return BAD;");
    });
    w.line(format!("return base / {}u;", 16 / data.size_bytes()));
    w.close();
}

/// `t` and `block`: work item `item` is block `item % blocks` of tuple
/// `item / blocks` (`blocks` in scope); returns past the last tuple.
fn gen_tuple_block(w: &mut Writer, item: &str) {
    w.comment("One block per tuple (the common case): no division.");
    w.line(format!("var t = {item};"));
    w.line("var block = 0u;");
    w.block("if (blocks > 1u)", |w| {
        w.line(format!("t = {item} / blocks;"));
        w.line(format!("block = {item} - t * blocks;"));
    });
    w.block("if (t >= tuples.count)", |w| {
        w.line("return;");
    });
}

/// Vector mode: a workgroup copies a block of the output's 16-byte vectors.
fn gen_vector_body(w: &mut Writer) {
    let (input_v, output_v) = (&BUFFERS[5], &BUFFERS[6]);
    w.comment("Vector mode: a team of P_VECTOR_TEAM threads per block of VECTORS_PER_THREAD");
    w.comment("vectors a thread of one tuple's slice, the team's threads on consecutive");
    w.comment("vectors; the tuple is resolved once, then the copy is a plain loop.");
    w.line("let vs = param(P_SLICE_VECTORS);");
    w.line("let team = param(P_VECTOR_TEAM);");
    w.line("let blocks = param(P_VECTOR_BLOCKS);");
    w.line("let thread = group * WORKGROUP_SIZE + lid;");
    w.line("let lane = thread & (team - 1u);");
    w.line("let item = thread >> countTrailingZeros(team);");
    gen_tuple_block(w, "item");
    w.line("let source = slice_vector(t, tuples);");
    w.block("if (source == BAD)", |w| {
        w.line("return;");
    });
    w.line("let dest = t * vs;");
    w.line("let first = block * team * VECTORS_PER_THREAD;");
    w.line("let end = min(first + team * VECTORS_PER_THREAD, vs);");
    w.block("for (var r = first + lane; r < end; r = r + team)", |w| {
        w.line(output_v.store_vector("dest + r", &input_v.vector("source + r")));
    });
}

/// Row mode: a workgroup copies a block of whole words of one tuple's slice.
fn gen_row_body(w: &mut Writer, data: DataType) {
    w.comment("Row mode: this workgroup copies block group % blocks of tuple group / blocks,");
    w.comment(format!(
        "{} words a thread, consecutive threads on consecutive words.",
        ROW_BLOCK_WORDS / u64::from(WORKGROUP_SIZE)
    ));
    w.line("let blocks = param(P_ROW_BLOCKS);");
    w.line("let words = param(P_SLICE_WORDS);");
    gen_tuple_block(w, "group");
    w.line("let base = tuple_base(t, tuples);");
    w.block("if (base == BAD)", |w| {
        w.line("return;");
    });
    let base_word = match data.size_bits() {
        8 => "base / 4u",
        16 => "base / 2u",
        32 => "base",
        _ => "base * 2u",
    };
    w.comment("Slices are whole words, so every slice starts on a word.");
    w.line(format!("let source = {base_word};"));
    w.line("let dest = t * words;");
    w.line(format!("let first = block * {ROW_BLOCK_WORDS}u + lid;"));
    w.block(
        format!(
            "for (var j = 0u; j < {}u; j = j + 1u)",
            ROW_BLOCK_WORDS / u64::from(WORKGROUP_SIZE)
        ),
        |w| {
            w.line("let i = first + j * WORKGROUP_SIZE;");
            w.block("if (i < words)", |w| {
                w.line(BUFFERS[3].set("dest + i", &BUFFERS[1].word("source + i")));
            });
        },
    );
}

/// One output word (4 or 2 elements) of 8- or 16-bit data per thread.
fn gen_packed_body(w: &mut Writer, data: DataType) {
    let (lanes, width) = match data.size_bits() {
        8 => (4, 8),
        _ => (2, 16),
    };
    w.comment(format!(
        "One output word per thread: {lanes} elements of {width} bits, stored at once."
    ));
    w.line(format!("let first = item * {lanes}u;"));
    w.line(format!("let lanes = min({lanes}u, outputs - first);"));
    w.line("var word = 0u;");
    w.line("var tuple = BAD;");
    w.line("var base = 0u;");
    w.block("for (var e = 0u; e < lanes; e = e + 1u)", |w| {
        w.line("let o = first + e;");
        w.line("let t = o / slice;");
        w.block("if (t != tuple)", |w| {
            w.line("tuple = t;");
            w.line("base = tuple_base(t, tuples);");
            w.block("if (base == BAD)", |w| {
                w.line("break;");
            });
        });
        w.line(format!(
            "word = word | (load_input(base + o % slice) << (e * {width}u));"
        ));
    });
    w.comment("After an out-of-range index value the word is not stored.");
    w.block("if (base != BAD)", |w| {
        w.line(BUFFERS[3].set("item", "word"));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX_TYPES: [DataType; 4] = [
        DataType::Int64,
        DataType::Int32,
        DataType::Uint64,
        DataType::Uint32,
    ];

    fn validate(key: &str, text: &str) {
        let (counts, segmented) =
            segments::segmented_part(text).unwrap_or_else(|| panic!("{key}: no segmented variant"));
        assert_eq!(counts.len(), GATHER_ND_BINDINGS.len(), "{key}");
        let bindings = counts.iter().sum::<u32>() as usize;
        validate_module(key, segmented, bindings);
        validate_module(key, text, GATHER_ND_BINDINGS.len());
    }

    fn validate_module(key: &str, wgsl: &str, bindings: usize) {
        let module = crate::wgsl::validated_module(key, wgsl, GATHER_ND_ENTRY, WORKGROUP_SIZE);
        assert_eq!(module.global_variables.len(), bindings, "{key}");
    }

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        let mut count = 0;
        for variant in GatherVariant::ALL {
            for data in DataType::ALL {
                for index in INDEX_TYPES {
                    assert!(gather_nd_supported(data, index));
                    let key = gather_nd_kernel_key("GatherND1", variant, data, index);
                    let wgsl = gather_nd_kernel(variant, data, index, &key, "specs/gather_nd1.op");
                    assert!(wgsl.starts_with("// @generated from specs/gather_nd1.op\n"));
                    assert!(wgsl.contains(&key));
                    assert!(wgsl.contains("const WORKGROUP_SIZE: u32 = 256u;"));
                    validate(&key, &wgsl);
                    count += 1;
                }
            }
        }
        assert_eq!(count, GatherVariant::ALL.len() * DataType::ALL.len() * 4);
    }

    #[test]
    fn narrow_index_types_validate() {
        for index in [
            DataType::Int16,
            DataType::Int8,
            DataType::Uint16,
            DataType::Uint8,
        ] {
            for data in [DataType::Float64, DataType::Int8, DataType::Uint16] {
                for variant in GatherVariant::ALL {
                    let key = gather_nd_kernel_key("Gather", variant, data, index);
                    validate(&key, &gather_nd_kernel(variant, data, index, &key, "x"));
                }
            }
        }
        assert!(!gather_nd_supported(DataType::Int32, DataType::Float32));
    }

    #[test]
    fn keys_bindings_and_packing() {
        use GatherVariant::{Elements, Rows, Singles, Vectors};
        assert_eq!(
            gather_nd_kernel_key("GatherND1", Elements, DataType::Float16, DataType::Int64),
            "GatherND1/gather_nd_elements/FLOAT16/INT64"
        );
        assert_eq!(
            gather_nd_kernel_key("GatherND1", Vectors, DataType::Int8, DataType::Uint32),
            "GatherND1/gather_nd_vectors/INT8/UINT32"
        );
        assert_eq!(GATHER_ND_BINDINGS.len(), 7);
        // Single elements: that path alone, no slice length, no division.
        let singles = gather_nd_kernel(Singles, DataType::Float32, DataType::Int32, "k", "o");
        let singles = segments::plain_part(&singles);
        assert!(singles.contains("store_output(item, load_input(base));"));
        assert!(!singles.contains("P_SLICE_LEN)") && !singles.contains("item / slice"));
        // 8- and 16-bit data keep the element kernel (all but the header).
        let body = |v| {
            let text = gather_nd_kernel(v, DataType::Int8, DataType::Int32, "k", "o");
            let plain = segments::plain_part(&text).to_string();
            plain
                .split_once("const WORKGROUP_SIZE")
                .unwrap()
                .1
                .to_string()
        };
        assert_eq!(body(Singles), body(Elements));
        let text = gather_nd_kernel(Elements, DataType::Uint8, DataType::Int32, "k", "o");
        let packed = segments::plain_part(&text);
        assert!(packed.contains("let lanes = min(4u, outputs - first);"));
        // Parameter words are read at the top, before any branch.
        let top = packed.split("fn main(").nth(1).unwrap();
        let first_branch = top.find("if (").unwrap();
        assert!(top[..first_branch].contains("let outputs = param(P_OUTPUT_COUNT);"));
        assert!(top[..first_branch].contains("let tuples = Tuples("));
        assert!(!top[first_branch..].contains("param("));
        assert_eq!(packed.matches("array<atomic<u32>>").count(), 1);
        assert!(packed.contains("var<storage, read_write> output: array<u32>;"));
        assert!(!packed.contains("fn output_atomic_or") && !packed.contains("atomicOr(&output"));
        let wide = gather_nd_kernel(Elements, DataType::Float64, DataType::Uint64, "k", "o");
        // One body in both modules, through the accessors.
        assert!(wide.contains("output_set(2u * i + 1u, v.y);"));
        assert!(wide.contains("fn output_set(i: u32, v: u32) {\n    output[i] = v;\n}"));
        let (counts, segmented) = segments::segmented_part(&wide).unwrap();
        assert_eq!(counts, [1, 4, 4, 4, 1, 4, 4]);
        assert!(segmented.contains("output_set(2u * i + 1u, v.y);"));
        assert!(segmented.contains("atomicMin(&status[0], bad);"));
        let (_, segmented) = segments::segmented_part(&text).unwrap();
        assert!(segmented.contains("output_set(item, word);"));
        assert!(wide.contains("if (v.y == 0u && v.x < n)"));
        // Each variant holds its own mode's code alone.
        let rows = gather_nd_kernel(Rows, DataType::Float32, DataType::Int32, "k", "o");
        let rows = segments::plain_part(&rows);
        assert!(rows.contains("let blocks = param(P_ROW_BLOCKS);"));
        assert!(!rows.contains("P_SLICE_VECTORS]"));
        assert!(!rows.contains("let work = param(P_WORK_COUNT);"));
        assert!(!packed.contains("P_ROW_BLOCKS]"));
        assert!(!packed.contains("P_SLICE_VECTORS]"));
    }

    #[test]
    fn vector_mode_copies_vec4() {
        for (data, divisor) in [
            (DataType::Int8, 16),
            (DataType::Float16, 8),
            (DataType::Float32, 4),
            (DataType::Float64, 2),
        ] {
            let text = gather_nd_kernel(GatherVariant::Vectors, data, DataType::Int64, "k", "o");
            let plain = segments::plain_part(&text);
            assert!(plain.contains("var<storage, read> input_v: array<vec4<u32>>;"));
            assert!(plain.contains("var<storage, read_write> output_v: array<vec4<u32>>;"));
            assert!(
                plain.contains("output_v_store(dest + r, input_v_vector(source + r));"),
                "{data}"
            );
            assert!(plain
                .contains("fn input_v_vector(i: u32) -> vec4<u32> {\n    return input_v[i];\n}"));
            assert!(
                plain.contains(&format!("return base / {divisor}u;")),
                "{data}"
            );
            assert!(plain.contains("let vs = param(P_SLICE_VECTORS);"));
            assert!(!plain.contains("P_ROW_BLOCKS]"));
            assert!(!plain.contains("let work = param(P_WORK_COUNT);"));
            let (_, segmented) = segments::segmented_part(&text).unwrap();
            assert!(segmented.contains("output_v_store(dest + r, input_v_vector(source + r));"));
            assert!(segmented.contains(
                "@group(0) @binding(21) var<storage, read_write> output_v_s3: array<vec4<u32>>;"
            ));
        }
    }
}
