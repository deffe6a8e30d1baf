//! WGSL kernels of the `reduce` pattern (ArgMin, ArgMax, ReduceMin, ReduceMax).
//!
//! One kernel per [`ReduceVariant`], input data type and output data type;
//! the plan builder `super::runtime::reduce_plan` fills the
//! parameter words ([`super::runtime::params`]), picks the
//! variants and sizes the teams. Every kernel has three bindings of group 0
//! ([`REDUCE_BINDINGS`]):
//!
//! 0. `params` (uniform, [`crate::Access::Uniform`]): the parameter words,
//!    read with `param(i)`;
//! 1. (read) `input: array<u32>`, the input tensor's packed words, or for
//!    [`ReduceVariant::Combine`] `partials: array<u32>`, the partial results
//!    of the split pass;
//! 2. (read_write) `output`, the output tensor's packed words
//!    (`array<atomic<u32>>` when the output type is narrower than 32 bits,
//!    the output starting zeroed; `array<u32>` otherwise), or for the split
//!    passes `partials: array<u32>`.
//!
//! Each kernel carries its segmented variant ([`crate::wgsl::segments`]): the
//! input, output and partial-result buffers are segmented.
//!
//! Every element is compared by an integer key ([`crate::wgsl::dtype::gen_key`])
//! turned into a *rank* (the key for `Min`, its complement for `Max`) so that
//! the smallest rank always wins; equal ranks are broken by position (lower
//! for [`Ties::First`](super::runtime::Ties::First), higher for
//! `Last`), which makes any combine order agree with the CPU reference: the
//! order of threads in a team, of teams in a tree, and of chunks in a split
//! reduction. A partial result keeps the selected element's raw bits, not
//! its rank, so that `Combine` can emit a value (NaN payloads included).
//!
//! Memory access: [`ReduceVariant::Rows`] and `SplitRows` give consecutive
//! threads consecutive outputs (coalesced when the innermost input dimension
//! is kept); `Tree` and `SplitTree` give a team's consecutive threads
//! consecutive positions of one output (coalesced when it is reduced). Both
//! step their input offsets by addition along the innermost reduced
//! dimension instead of dividing for every element.
//!
//! With one reduced dimension they loop over a plain stride, selecting
//! without branches; several take the general loop.
//!
//! The vector variants ([`ReduceVariant::is_vector`]: `SplitLanes`,
//! `Columns`, `SplitColumns`, `SplitLanesTree`, `SplitLanesRagged`) bind
//! the input as `array<vec4<u32>>` and read
//! 16 bytes a load, two loads in flight a step; they run when rows (or
//! inner blocks) are whole vectors, or, `SplitLanesRagged`, over rows that
//! are not: each row's window of vectors, an element counting only inside
//! its row. Each thread selects over the 2 to 16
//! elements of every vector it reads without branches (`select` on integer
//! keys, one loop per tie rule) and without barriers: `SplitLanes` threads
//! write their own partial results for `Combine`, `Columns` threads own
//! the outputs of one vector of columns. `SplitLanesTree` (the hardware
//! plans' long rows) scans as `SplitLanes` does, then combines each team in
//! shared memory and writes one partial result per team. `CombineEach` is
//! `Combine` for teams of one thread, with no shared memory or barrier.
//! The column variants of a selection of values whose keys invert
//! (ReduceMin below 64 bits) keep the best rank alone, with no position
//! and no tie rule, and walk again with positions only after a NaN
//! (`ranks_only`). The lanes variants over whole vectors of types below 64
//! bits select a vector at a time: a vector's smallest rank
//! (`vector_rank`, floats settling NaN and signed zeros once a vector)
//! against the best so far, then the selected element within the selected
//! vector (`pick_element`).
//!
//! Every kernel reads its parameter words (`param(i)`, a uniform block)
//! before its first branch or loop where it can, and passes them down: a
//! CPU adapter (lavapipe) reads a buffer word inside a branch, a loop, or
//! after an early return lane by lane.

use super::runtime::{
    params, partial_words, per_vector, Keep, ReduceConfig, ReduceVariant, Select, Zeros,
    WORKGROUP_SIZE,
};
use crate::{Access, DataType};

use crate::wgsl::dtype::{self, NanKey};
use crate::wgsl::segments::{self, Buffer};
use crate::wgsl::writer::Writer;

/// The bindings of every reduce kernel: params, input, output.
pub const REDUCE_BINDINGS: &[Access] = &[Access::Uniform, Access::Read, Access::ReadWrite];

/// The bindings of every reduce kernel (see [`REDUCE_BINDINGS`]).
pub fn reduce_bindings() -> &'static [Access] {
    REDUCE_BINDINGS
}

/// The entry point's name.
pub const REDUCE_ENTRY: &str = "main";

/// The kernel key by the framework's convention,
/// `{operator}/{variant name}/{INPUT}/{OUTPUT}` (`ArgMin/reduce_rows/FLOAT16/UINT64`).
pub fn reduce_kernel_key(
    operator: &str,
    variant: ReduceVariant,
    input: DataType,
    output: DataType,
) -> String {
    format!(
        "{operator}/{}/{}/{}",
        variant.name(),
        input.spec_name(),
        output.spec_name()
    )
}

/// True when a kernel can be generated for this data-type pair: `Keep::Index`
/// needs an integer output, `Keep::Value` the input's type.
pub fn reduce_supported(cfg: &ReduceConfig, input: DataType, output: DataType) -> bool {
    match cfg.keep {
        Keep::Index => output.is_int(),
        Keep::Value => output == input,
    }
}

/// The complete WGSL of one reduce kernel: the module and its segmented
/// variant ([`crate::wgsl::segments`]; the input, output and partial results are
/// segmented).
///
/// `key` is the kernel key (written into the header) and `origin` the spec
/// path (`// @generated from {origin}`). The pair must be
/// [`reduce_supported`]; otherwise the module still generates, but stores
/// meaningless bits.
pub fn reduce_kernel(
    cfg: &ReduceConfig,
    variant: ReduceVariant,
    input: DataType,
    output: DataType,
    key: &str,
    origin: &str,
) -> String {
    segments::combined(reduce_kernel_text(cfg, variant, input, output, key, origin))
}

/// The parts of [`reduce_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
///
/// The complete WGSL of one reduce kernel: the module and its segmented
/// variant ([`crate::wgsl::segments`]; the input, output and partial results are
/// segmented).
///
/// `key` is the kernel key (written into the header) and `origin` the spec
/// path (`// @generated from {origin}`). The pair must be
/// [`reduce_supported`]; otherwise the module still generates, but stores
/// meaningless bits.
pub fn reduce_kernel_text(
    cfg: &ReduceConfig,
    variant: ReduceVariant,
    input: DataType,
    output: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    debug_assert!(reduce_supported(cfg, input, output), "{key}");
    reduce_module(cfg, variant, input, output, key, origin)
}

/// The buffers of a reduce kernel, in binding order: params, then input
/// and output, the split passes writing partial results instead of the
/// output and `Combine` reading them instead of the input.
fn reduce_buffers(variant: ReduceVariant, output: DataType) -> [Buffer<'static>; 3] {
    let params = Buffer::params();
    let output = Buffer::read_write("output", dtype::is_packed(output), true);
    let input = if variant.is_vector() {
        Buffer::read_vec4("input")
    } else {
        Buffer::read("input", true)
    };
    match variant {
        ReduceVariant::SplitRows
        | ReduceVariant::SplitTree
        | ReduceVariant::SplitLanes
        | ReduceVariant::SplitColumns
        | ReduceVariant::SplitLanesTree
        | ReduceVariant::SplitLanesRagged => {
            [params, input, Buffer::read_write("partials", false, true)]
        }
        ReduceVariant::Combine | ReduceVariant::CombineEach => {
            [params, Buffer::read("partials", true), output]
        }
        ReduceVariant::Rows | ReduceVariant::Tree | ReduceVariant::Columns => {
            [params, input, output]
        }
    }
}

/// The module of a reduce kernel, with its segmented variant.
fn reduce_module(
    cfg: &ReduceConfig,
    variant: ReduceVariant,
    input: DataType,
    output: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    let buffers = reduce_buffers(variant, output);
    let key_ty = dtype::raw_type(input);
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!(
        "reduce ({}): keep {:?}, select {:?}, zeros {:?}; input {input}, output {output}",
        variant.name(),
        cfg.keep,
        cfg.select,
        cfg.zeros
    ));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    for (name, word) in [
        ("P_OUTPUT_COUNT", params::OUTPUT_COUNT),
        ("P_REDUCE_LEN", params::REDUCE_LEN),
        ("P_KEPT_RANK", params::KEPT_RANK),
        ("P_REDUCED_RANK", params::REDUCED_RANK),
        ("P_TIES", params::TIES),
        ("P_TEAM", params::TEAM),
        ("P_CHUNK_LEN", params::CHUNK_LEN),
        ("P_KEPT_SIZES", params::KEPT_SIZES),
        ("P_KEPT_STRIDES", params::KEPT_STRIDES),
        ("P_REDUCED_SIZES", params::REDUCED_SIZES),
        ("P_REDUCED_STRIDES", params::REDUCED_STRIDES),
        ("P_CHUNK_COUNT", params::CHUNK_COUNT),
        ("P_VECTORS", params::VECTORS),
        ("P_PHASES", params::PHASES),
        ("P_SEGMENTS", params::SEGMENTS),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.line(format!("const TIES_LAST: u32 = {}u;", params::TIES_LAST));
    w.comment("The position of no element: an empty candidate.");
    w.line("const NO_POSITION: u32 = 0xffffffffu;");
    let combine = matches!(variant, ReduceVariant::Combine | ReduceVariant::CombineEach);
    let partials = variant.is_split() || combine;
    if partials {
        w.comment("Words of a partial result: the selected element's raw bits, then its position.");
        w.line(format!(
            "const PARTIAL_WORDS: u32 = {}u;",
            partial_words(input)
        ));
    }
    if variant.is_tree() {
        w.blank();
        w.line(format!(
            "var<workgroup> wg_rank: array<{key_ty}, WORKGROUP_SIZE>;"
        ));
        w.line("var<workgroup> wg_position: array<u32, WORKGROUP_SIZE>;");
        if variant == ReduceVariant::Combine && cfg.keep == Keep::Value {
            w.line(format!(
                "var<workgroup> wg_raw: array<{key_ty}, WORKGROUP_SIZE>;"
            ));
        }
    }
    w.blank();
    segments::write_bindings(&mut w, &buffers);
    if !combine {
        dtype::gen_load_from(&mut w, "load_input", &buffers[1], input);
        w.blank();
    }
    if !variant.is_split() {
        dtype::gen_store_to(&mut w, "store_output", &buffers[2], output);
        w.blank();
    }
    let nan = match cfg.select {
        Select::Min => NanKey::Lowest,
        Select::Max => NanKey::Highest,
    };
    dtype::gen_key(&mut w, "order_key", input, cfg.zeros, nan);
    w.blank();
    dtype::gen_key_less(&mut w, "key_less", input);
    w.blank();
    gen_rank(&mut w, cfg.select, key_ty);
    w.blank();
    let ranks_only = ranks_only(cfg, variant, input);
    if ranks_only {
        dtype::gen_unkey(&mut w, "unkey", input);
        w.blank();
        w.comment("The raw bits of a rank (not a NaN's: rank 0).");
        w.open("fn unrank(rank: u32) -> u32");
        match cfg.select {
            Select::Min => w.line("return unkey(rank);"),
            Select::Max => w.line("return unkey(~rank);"),
        };
        w.close();
        w.blank();
    }
    if variant.is_tree() || combine {
        gen_better(&mut w, key_ty);
        w.blank();
    }
    if !combine {
        gen_later_wins(&mut w, key_ty);
        w.blank();
    }
    if !combine && !variant.is_vector() {
        gen_offset(
            &mut w,
            "kept_offset",
            "o",
            "P_KEPT_RANK",
            "P_KEPT_SIZES",
            "P_KEPT_STRIDES",
        );
        w.blank();
        gen_offset(
            &mut w,
            "reduced_offset",
            "r",
            "P_REDUCED_RANK",
            "P_REDUCED_SIZES",
            "P_REDUCED_STRIDES",
        );
        w.blank();
        w.comment("A candidate: its rank and position (NO_POSITION when empty).");
        w.block("struct Best", |w| {
            w.line(format!("rank: {key_ty},"));
            w.line("position: u32,");
        });
        w.blank();
        gen_no_rank(&mut w, key_ty);
        w.comment("The reduced dimensions' rank and innermost stride, read once at the top.");
        w.block("struct Reduced", |w| {
            w.line("dims: u32,");
            w.line("stride: u32,");
        });
        w.blank();
        if variant.is_tree() && !variant.is_vector() {
            gen_scan_strided(&mut w, key_ty);
            w.blank();
        } else if !variant.is_vector() {
            gen_scan(&mut w, key_ty);
            w.blank();
        }
    }
    if variant.is_vector() {
        w.comment(format!(
            "Elements of {input} in one vec4<u32> (16 bytes), in memory order."
        ));
        w.line(format!("const PER_VECTOR: u32 = {}u;", per_vector(input)));
        gen_no_rank(&mut w, key_ty);
    }
    let vector_ranks = vector_ranks(variant, input);
    if vector_ranks {
        gen_vector_rank(&mut w, cfg, input);
        w.blank();
        gen_pick_element(&mut w, input);
        w.blank();
    }
    let strided = variant.is_vector();
    match variant {
        ReduceVariant::Columns if ranks_only => {}
        ReduceVariant::Rows | ReduceVariant::Tree | ReduceVariant::Columns => {
            gen_emit(&mut w, cfg.keep, output, strided);
            w.blank();
        }
        ReduceVariant::SplitRows
        | ReduceVariant::SplitTree
        | ReduceVariant::SplitLanes
        | ReduceVariant::SplitColumns
        | ReduceVariant::SplitLanesTree
        | ReduceVariant::SplitLanesRagged => {
            if ranks_only {
                gen_store_partial_raw(&mut w, &buffers[2]);
            } else {
                gen_store_partial(&mut w, &buffers[2], input, strided);
            }
            w.blank();
        }
        ReduceVariant::Combine | ReduceVariant::CombineEach => {
            gen_load_partial(&mut w, &buffers[1], input);
            w.blank();
        }
    }
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {REDUCE_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let last = param(P_TIES) == TIES_LAST;");
    match variant {
        ReduceVariant::Rows => gen_rows_body(&mut w, false),
        ReduceVariant::SplitRows => gen_rows_body(&mut w, true),
        ReduceVariant::Tree => gen_tree_body(&mut w, false),
        ReduceVariant::SplitTree => gen_tree_body(&mut w, true),
        ReduceVariant::Combine => gen_combine_body(&mut w, cfg.keep, output, key_ty),
        ReduceVariant::CombineEach => gen_combine_each_body(&mut w, cfg.keep, output, key_ty),
        ReduceVariant::SplitLanes | ReduceVariant::SplitLanesTree => gen_lanes_body(
            &mut w,
            &buffers[1],
            input,
            LanesRead {
                tree: variant.is_tree(),
                ragged: false,
                vector_ranks,
            },
        ),
        ReduceVariant::SplitLanesRagged => gen_lanes_body(
            &mut w,
            &buffers[1],
            input,
            LanesRead {
                tree: false,
                ragged: true,
                vector_ranks,
            },
        ),
        ReduceVariant::Columns => gen_columns_body(&mut w, &buffers[1], input, false, ranks_only),
        ReduceVariant::SplitColumns => {
            gen_columns_body(&mut w, &buffers[1], input, true, ranks_only)
        }
    }
    w.close();
    w.finish_kernel()
}

/// The names of a `vec4<u32>`'s words, in memory order.
const COMPONENTS: [&str; 4] = ["x", "y", "z", "w"];

/// A WGSL expression: raw element `j` (a constant) of the vector `q`.
/// Components are named (`q.x`), never indexed (`q[0]`): an indexed
/// component may cost a CPU adapter a trip through memory.
fn vector_element(input: DataType, q: &str, j: u32) -> String {
    const C: [&str; 4] = COMPONENTS;
    let j = j as usize;
    match (input.size_bits(), dtype::lane_mask(input)) {
        (64, _) => format!("{q}.{}{}", C[2 * j], C[2 * j + 1]),
        (_, Some(mask)) => {
            let (shift, lane, width) = dtype::lane_geometry(input);
            let word = C[j >> shift];
            format!("(({q}.{word} >> {}u) & {mask})", (j as u32 & lane) * width)
        }
        _ => format!("{q}.{}", C[j]),
    }
}

/// Vectors each loop step of the vector variants loads before using any:
/// independent loads in flight (a CPU adapter gains about 20%).
const UNROLL: u32 = 2;

/// One element's step of a vector loop: element `j` of vector `q{k}` at
/// position `position` against the best `(best_rank{suffix},
/// best_position{suffix})`, through [`gen_keep_better`] (`valid`, a `bool`
/// expression, limits where it may win).
#[allow(clippy::too_many_arguments)]
fn gen_vector_step(
    w: &mut Writer,
    input: DataType,
    k: u32,
    j: u32,
    suffix: &str,
    position: &str,
    valid: Option<&str>,
    last: bool,
) {
    let rank = format!("rank_{k}_{j}");
    w.line(format!(
        "let {rank} = rank({});",
        vector_element(input, &format!("q{k}"), j)
    ));
    gen_keep_better(
        w,
        &rank,
        &format!("wins_{k}_{j}"),
        &format!("best_rank{suffix}"),
        (&format!("best_position{suffix}"), position),
        valid,
        last,
    );
}

/// The branch-free step of every vector loop: `wins` (a new `let`) holds
/// where the candidate of rank `rank` beats `best_rank`, a later candidate
/// winning on a smaller rank, or also on an equal one under the `last` tie
/// rule, and, with `valid`, only where it holds; then `best_rank` and the
/// variable `slot.0` (the best's position or vector) take the candidate's
/// rank and `slot.1` where it wins.
fn gen_keep_better(
    w: &mut Writer,
    rank: &str,
    wins: &str,
    best_rank: &str,
    slot: (&str, &str),
    valid: Option<&str>,
    last: bool,
) {
    let test = if last {
        format!("!key_less({best_rank}, {rank})")
    } else {
        format!("key_less({rank}, {best_rank})")
    };
    let test = match valid {
        Some(valid) => format!("({valid}) & {test}"),
        None => test,
    };
    w.line(format!("let {wins} = {test};"));
    w.line(format!(
        "{best_rank} = select({best_rank}, {rank}, {wins});"
    ));
    let (best, value) = slot;
    w.line(format!("{best} = select({best}, {value}, {wins});"));
}

/// The loops of a vector variant, one per tie rule (uniform: no
/// per-element test of it): `UNROLL` vectors a step while they last, then
/// one. `counter` steps by `step` (a `u32` expression) from its current
/// value while below `end`; `load(offset)` is the vector `offset` steps
/// ahead; `step_body(w, k, last)` consumes vector `q{k}`; `advance(n)` is a
/// statement run after consuming `n` vectors (or nothing).
fn gen_vector_loops(
    w: &mut Writer,
    counter: &str,
    step: &str,
    load: &dyn Fn(u32) -> String,
    step_body: &dyn Fn(&mut Writer, u32, bool),
    advance: &dyn Fn(u32) -> Option<String>,
) {
    w.comment("The tie rule is uniform: one loop for each, no per-element test of it.");
    w.line(format!("let first_{counter} = {counter};"));
    for (header, last) in [("if (last)", true), ("else", false)] {
        if last {
            w.open(header);
        } else {
            w.reopen(header);
        }
        w.line(format!("{counter} = first_{counter};"));
        gen_unrolled_loops(
            w,
            counter,
            step,
            load,
            &|w, k| step_body(w, k, last),
            advance,
        );
    }
    w.close();
}

/// The loop pair of [`gen_vector_loops`] for one tie rule, or for a
/// selection that needs none ([`gen_rank_loops`]).
fn gen_unrolled_loops(
    w: &mut Writer,
    counter: &str,
    step: &str,
    load: &dyn Fn(u32) -> String,
    step_body: &dyn Fn(&mut Writer, u32),
    advance: &dyn Fn(u32) -> Option<String>,
) {
    w.block(
        format!(
            "for (; {counter} + {}u * {step} < end; {counter} = {counter} + {UNROLL}u * {step})",
            UNROLL - 1
        ),
        |w| {
            for k in 0..UNROLL {
                w.line(format!("let q{k} = {};", load(k)));
            }
            for k in 0..UNROLL {
                step_body(w, k);
            }
            if let Some(a) = advance(UNROLL) {
                w.line(a);
            }
        },
    );
    w.block(
        format!("for (; {counter} < end; {counter} = {counter} + {step})"),
        |w| {
            w.line(format!("let q0 = {};", load(0)));
            step_body(w, 0);
            if let Some(a) = advance(1) {
                w.line(a);
            }
        },
    );
}

/// The loops of a column walk that keeps ranks alone ([`ranks_only`]):
/// `best_rank{j}` becomes the `min` of the ranks of each vector's element
/// `j`, with no position and no tie rule. Arguments as for
/// [`gen_vector_loops`].
fn gen_rank_loops(
    w: &mut Writer,
    input: DataType,
    counter: &str,
    step: &str,
    load: &dyn Fn(u32) -> String,
    advance: &dyn Fn(u32) -> Option<String>,
) {
    let per = per_vector(input) as u32;
    w.comment("Equal ranks are equal bits: the smallest rank alone, no position, no tie rule.");
    gen_unrolled_loops(
        w,
        counter,
        step,
        load,
        &|w, k| {
            for j in 0..per {
                let best = format!("best_rank{j}");
                w.line(format!(
                    "{best} = min({best}, rank({}));",
                    vector_element(input, &format!("q{k}"), j)
                ));
            }
        },
        advance,
    );
}

/// Whether a column variant (`Columns`, `SplitColumns`) of a selection of
/// values whose ranks invert ([`dtype::key_inverts`]): its loops keep the smallest
/// rank alone, a `min` an element instead of a compare and two `select`s,
/// and turn it back into bits (`unrank`) instead of reading the selected
/// element again. A float's NaNs all share rank 0 and must give the bits of
/// the first (or last) NaN: a thread with a best rank of 0 walks its
/// elements again with positions. On lavapipe this took FLOAT32 ReduceMin
/// over a middle axis from 9.3-9.6 ms to 8.0-8.6, FLOAT16 from 11.3-12.2
/// to 10.8 (same process); `SplitLanes` measured no gain (its rows are
/// short: the walk is not where its time goes), so it keeps positions.
fn ranks_only(cfg: &ReduceConfig, variant: ReduceVariant, input: DataType) -> bool {
    matches!(
        variant,
        ReduceVariant::Columns | ReduceVariant::SplitColumns
    ) && cfg.keep == Keep::Value
        && dtype::key_inverts(input, cfg.zeros)
}

/// Whether a lanes variant (`SplitLanes`, `SplitLanesTree`) selects a
/// vector at a time ([`gen_vector_rank`]): one compare and two `select`s a
/// vector instead of an element, and the selected element found in the
/// selected vector at the end ([`gen_pick_element`]). Not for 64-bit types
/// (two-word ranks, two elements a vector) nor for ragged rows (a vector
/// may hold elements of two rows). On lavapipe (old and new kernels
/// alternating in one process) ArgMin over all axes took 9.2-9.9 ms
/// against 10.1-10.3 in FLOAT16 and 8.3-8.8 against 8.6-9.6 in FLOAT32;
/// per vector with the per-element keys it gained nothing: the keys
/// settled once a vector are the gain.
fn vector_ranks(variant: ReduceVariant, input: DataType) -> bool {
    matches!(
        variant,
        ReduceVariant::SplitLanes | ReduceVariant::SplitLanesTree
    ) && !dtype::is_wide(input)
}

/// `fn vector_rank(q: vec4<u32>) -> u32`: the smallest `rank` of the
/// vector's elements, exactly. Floats take a cheaper key an element (one
/// `xor` with the sign spread, two FLOAT16 lanes a word at once) that
/// leaves NaNs unranked and -0.0 one below +0.0, and settle both once a
/// vector: any NaN makes the vector's rank 0, and with [`Zeros::Equal`]
/// a smallest rank of -0.0's becomes +0.0's. Integers take `rank`.
fn gen_vector_rank(w: &mut Writer, cfg: &ReduceConfig, input: DataType) {
    const C: [&str; 4] = COMPONENTS;
    let max = cfg.select == Select::Max;
    let min_of = |mut terms: Vec<String>| {
        while terms.len() > 1 {
            terms = terms
                .chunks(2)
                .map(|pair| format!("min({}, {})", pair[0], pair[1]))
                .collect();
        }
        terms.remove(0)
    };
    // (key of word w, NaN bits of word w, -0.0's and +0.0's ranks, the
    // ranks' constant high bits, the float's NaN test bits)
    let float = match input {
        DataType::Float16 => Some((
            if max {
                "w ^ ((((w >> 15u) & 0x00010001u) ^ 0x00010001u) * 0x7fffu)"
            } else {
                "w ^ ((((w >> 15u) & 0x00010001u) * 0x7fffu) | 0x80008000u)"
            },
            "(w & 0x7fff7fffu) + 0x03ff03ffu",
            if max {
                ("0x8000u", "0x7fffu")
            } else {
                ("0x7fffu", "0x8000u")
            },
            if max { Some("0xffff0000u") } else { None },
            "0x80008000u",
        )),
        DataType::Float32 => Some((
            if max {
                "w ^ (~u32(i32(w) >> 31u) & 0x7fffffffu)"
            } else {
                "w ^ (u32(i32(w) >> 31u) | 0x80000000u)"
            },
            "(w & 0x7fffffffu) + 0x007fffffu",
            if max {
                ("0x80000000u", "0x7fffffffu")
            } else {
                ("0x7fffffffu", "0x80000000u")
            },
            None,
            "0x80000000u",
        )),
        _ => None,
    };
    let Some((key, nan_bits, (negative_zero, zero), high, nan_test)) = float else {
        w.comment("The smallest rank of the vector's elements.");
        w.open("fn vector_rank(q: vec4<u32>) -> u32");
        let ranks = (0..per_vector(input) as u32)
            .map(|j| format!("rank({})", vector_element(input, "q", j)))
            .collect();
        w.line(format!("return {};", min_of(ranks)));
        w.close();
        return;
    };
    let packed = input == DataType::Float16;
    w.comment(if packed {
        "Both lanes' ranks of a word of FLOAT16, a NaN's and -0.0's unsettled (see vector_rank)."
    } else {
        "The rank of a FLOAT32, a NaN's and -0.0's unsettled (see vector_rank)."
    });
    w.open("fn word_ranks(w: u32) -> u32");
    w.line(format!("return {key};"));
    w.close();
    w.blank();
    w.comment("Bit 15 of a lane (bit 31 of a FLOAT32) set where it is NaN.");
    w.open("fn nan_bits(w: u32) -> u32");
    w.line(format!("return {nan_bits};"));
    w.close();
    w.blank();
    w.comment("The smallest rank of the vector's elements: a NaN's (0) if it holds one.");
    w.open("fn vector_rank(q: vec4<u32>) -> u32");
    let ranks = C
        .iter()
        .map(|c| {
            if packed {
                w.line(format!("let r{c} = word_ranks(q.{c});"));
                format!("min(r{c} & 0xffffu, r{c} >> 16u)")
            } else {
                format!("word_ranks(q.{c})")
            }
        })
        .collect();
    w.line(format!("var best = {};", min_of(ranks)));
    if cfg.zeros == Zeros::Equal {
        w.comment("Zeros tie: -0.0's rank is +0.0's.");
        w.line(format!(
            "best = select(best, {zero}, best == {negative_zero});"
        ));
    }
    if let Some(high) = high {
        w.line(format!("best = best | {high};"));
    }
    let nans = C
        .iter()
        .map(|c| format!("nan_bits(q.{c})"))
        .collect::<Vec<_>>()
        .join(" | ");
    w.line(format!(
        "return select(best, 0u, (({nans}) & {nan_test}) != 0u);"
    ));
    w.close();
}

/// `fn pick_element(q: vec4<u32>, best: u32, last: bool) -> u32`: the
/// index in `q` of its first (or, `last`, its last) element of rank `best`.
fn gen_pick_element(w: &mut Writer, input: DataType) {
    let per = per_vector(input) as u32;
    w.comment("The index in q of its first (last) element of rank best.");
    w.open("fn pick_element(q: vec4<u32>, best: u32, last: bool) -> u32");
    for j in 0..per {
        w.line(format!(
            "let hit{j} = rank({}) == best;",
            vector_element(input, "q", j)
        ));
    }
    w.line("var first = NO_POSITION;");
    w.line("var latest = NO_POSITION;");
    for j in (0..per).rev() {
        w.line(format!("first = select(first, {j}u, hit{j});"));
    }
    for j in 0..per {
        w.line(format!("latest = select(latest, {j}u, hit{j});"));
    }
    w.line("return select(first, latest, last);");
    w.close();
}

/// How a lanes body reads: `tree` (SplitLanesTree) combines each team in
/// shared memory, `ragged` (SplitLanesRagged) reads rows that are not
/// whole vectors, `vector_ranks` selects a vector at a time
/// ([`vector_ranks`]).
struct LanesRead {
    tree: bool,
    ragged: bool,
    vector_ranks: bool,
}

/// SplitLanes: a team per (output, chunk) over the row's vectors, each
/// thread writing its best as partial result number `thread`. With `tree`
/// (SplitLanesTree) the team's threads then combine in shared memory and
/// its first thread writes the team's partial result, number `output *
/// chunks + chunk`.
fn gen_lanes_body(w: &mut Writer, input_buffer: &Buffer, input: DataType, read: LanesRead) {
    let LanesRead {
        tree,
        ragged,
        vector_ranks,
    } = read;
    let per = per_vector(input) as u32;
    w.comment("A team per (output, chunk) of a [outputs, len] input: the team's threads read");
    if tree {
        w.comment(
            "consecutive vectors, then combine; the team writes partial result o * chunks + c.",
        );
    } else {
        w.comment("consecutive vectors; thread t writes partial result t.");
    }
    w.comment("Every parameter word first, before any branch (see `selected_element`).");
    w.line("let t = group * WORKGROUP_SIZE + lid;");
    w.line("let team = param(P_TEAM);");
    w.line("let chunks = param(P_CHUNK_COUNT);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    w.line("let vectors = param(P_VECTORS);");
    w.line("let chunk = param(P_CHUNK_LEN) / PER_VECTOR;");
    w.line("let lane = t & (team - 1u);");
    w.line("let rest = t >> countTrailingZeros(team);");
    w.line("let c = rest % chunks;");
    w.line("let o = rest / chunks;");
    if ragged {
        w.comment("Ragged rows: row o's elements start at o * len, inside vector `row` after");
        w.comment("`lead` elements of the row before; its window is `vectors` vectors from there.");
        w.line("let len = param(P_REDUCE_LEN);");
        w.line("let row_first = o * len;");
        w.line("let row = row_first / PER_VECTOR;");
        w.line("let lead = row_first % PER_VECTOR;");
        w.line("let rows = outputs;");
    } else {
        w.comment("Row o of segment n = o / outputs belongs to output o % outputs (one segment");
        w.comment(
            "unless an [segments, outputs, len] input is reduced over its first and last axes).",
        );
        w.line("let segments = param(P_SEGMENTS);");
        w.line("let rows = outputs * segments;");
        w.line("let row = o * vectors;");
    }
    let scan = |w: &mut Writer| {
        w.line("let begin = min(c * chunk, vectors);");
        w.line("let end = begin + min(chunk, vectors - begin);");
        if !tree {
            w.line("var best_rank = NO_RANK;");
            w.line("var best_position = NO_POSITION;");
        }
        if ragged {
            w.comment("The thread's first position in the row, if its first vector holds one.");
            w.line("let p0 = (begin + lane) * PER_VECTOR;");
            w.line("let first_at = select(p0 - lead, 0u, p0 < lead);");
            w.line("best_position = select(NO_POSITION, first_at, begin + lane < end && first_at < len);");
        } else if vector_ranks {
            w.comment("The selected vector: the thread's first, if any, until one beats it.");
            w.line("var best_vector = select(NO_POSITION, begin + lane, begin + lane < end);");
        } else {
            w.block("if (begin + lane < end)", |w| {
                w.line("best_position = (begin + lane) * PER_VECTOR;");
            });
        }
        w.line("var v = begin + lane;");
        if vector_ranks {
            gen_vector_loops(
                w,
                "v",
                "team",
                &|k| input_buffer.vector(&format!("row + v + {k}u * team")),
                &|w, k, last| {
                    let rank = format!("rank_{k}");
                    w.line(format!("let {rank} = vector_rank(q{k});"));
                    gen_keep_better(
                        w,
                        &rank,
                        &format!("wins_{k}"),
                        "best_rank",
                        ("best_vector", &format!("v + {k}u * team")),
                        None,
                        last,
                    );
                },
                &|_| None,
            );
            w.comment("The selected element: the first (last) of the best rank in its vector.");
            w.block("if (best_vector != NO_POSITION)", |w| {
                let q = input_buffer.vector("row + best_vector");
                w.line(format!(
                    "best_position = best_vector * PER_VECTOR + pick_element({q}, best_rank, last);"
                ));
            });
            return;
        }
        gen_vector_loops(
            w,
            "v",
            "team",
            &|k| input_buffer.vector(&format!("row + v + {k}u * team")),
            &|w, k, last| {
                for j in 0..per {
                    let position = format!("(v + {k}u * team) * PER_VECTOR + {j}u");
                    if ragged {
                        let at = format!("at_{k}_{j}");
                        w.line(format!("let {at} = {position} - lead;"));
                        let valid = format!("{at} < len");
                        gen_vector_step(w, input, k, j, "", &at, Some(&valid), last);
                    } else {
                        gen_vector_step(w, input, k, j, "", &position, None, last);
                    }
                }
            },
            &|_| None,
        );
    };
    if tree {
        w.comment("No early return: the team's barriers need every thread.");
        w.line("var best_rank = NO_RANK;");
        w.line("var best_position = NO_POSITION;");
        w.line("let in_range = o < rows;");
        w.block("if (in_range)", scan);
        w.line("wg_rank[lid] = best_rank;");
        w.line("wg_position[lid] = best_position;");
        gen_team_tree(w, false);
        w.block("if (lane == 0u && in_range)", |w| {
            gen_segment_partial(w, "chunks", "c", "wg_position[lid]");
        });
    } else {
        w.block("if (o >= rows)", |w| {
            w.line("return;");
        });
        scan(w);
        if ragged {
            w.line("store_partial(t, best_position, row_first, 1u);");
        } else {
            gen_segment_partial(w, "chunks * team", "c * team + lane", "best_position");
        }
    }
}

/// Stores the partial result of row `o` of a lanes pass: partial `slot`
/// of the row's `per_row`, among its output's partials after those of the
/// row's earlier segments, with positions counted from its output's first
/// row.
fn gen_segment_partial(w: &mut Writer, per_row: &str, slot: &str, position: &str) {
    w.line("let n = o / outputs;");
    w.line("let first = n * vectors * PER_VECTOR;");
    w.line(format!(
        "let p = ((o - n * outputs) * segments + n) * {per_row} + {slot};"
    ));
    w.line(format!(
        "let at = select(NO_POSITION, {position} + first, {position} != NO_POSITION);"
    ));
    w.line("store_partial(p, at, row * PER_VECTOR - first, 1u);");
}

/// Columns and SplitColumns: a thread per vector of `inner` of a `[outer,
/// len, inner]` input (and chunk), looping over the reduced rows.
/// SplitColumns with `phases` P > 1 takes an inner block that is not whole
/// vectors: P of its rows are, so it reads `[outer, len / P, P * inner]`
/// and writes, for each element, a partial result of its output's phase
/// (its position modulo P); the combine breaks ties by position.
fn gen_columns_body(
    w: &mut Writer,
    input_buffer: &Buffer,
    input: DataType,
    split: bool,
    ranks_only: bool,
) {
    let per = per_vector(input) as u32;
    w.comment("A thread per vector of inner (and chunk) of a [outer, len, inner] input:");
    w.comment("consecutive threads read consecutive vectors of each row.");
    if split {
        w.comment("With phases P > 1 the input is read as [outer, len / P, P * inner]:");
        w.comment("rows of P rows of inner, whole vectors.");
    }
    w.comment("Every parameter word first, before any branch (see `selected_element`).");
    w.line("let t = group * WORKGROUP_SIZE + lid;");
    w.line("let vectors = param(P_VECTORS);");
    w.line("let chunks = param(P_CHUNK_COUNT);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    if split {
        w.line("let phases = param(P_PHASES);");
        w.line("let len = param(P_REDUCE_LEN) / phases;");
    } else {
        w.line("let len = param(P_REDUCE_LEN);");
    }
    w.line("let chunk = param(P_CHUNK_LEN);");
    w.line("let column = t % vectors;");
    w.line("let rest = t / vectors;");
    w.line("let c = rest % chunks;");
    w.line("let o = rest / chunks;");
    w.line("let inner = vectors * PER_VECTOR;");
    // The elements of one row of the inner block (inner itself unless phased).
    let columns = if split {
        w.line("let columns = inner / phases;");
        "columns"
    } else {
        "inner"
    };
    w.block(format!("if (o >= outputs / {columns})"), |w| {
        w.line("return;");
    });
    gen_chunk_bounds(w);
    if ranks_only {
        w.line("let start = (o * len + begin) * vectors + column;");
        w.line("var at = start;");
    } else {
        w.line("var at = (o * len + begin) * vectors + column;");
    }
    for j in 0..per {
        w.line(format!("var best_rank{j} = NO_RANK;"));
        w.line(format!("var best_position{j} = begin;"));
    }
    w.line("var r = begin;");
    let load = |k: u32| input_buffer.vector(&format!("at + {k}u * vectors"));
    let advance = |n: u32| Some(format!("at = at + {n}u * vectors;"));
    let positions = |w: &mut Writer| {
        gen_vector_loops(
            w,
            "r",
            "1u",
            &load,
            &|w, k, last| {
                for j in 0..per {
                    let suffix = j.to_string();
                    gen_vector_step(w, input, k, j, &suffix, &format!("r + {k}u"), None, last);
                }
            },
            &advance,
        );
    };
    if !ranks_only {
        positions(w);
    } else {
        gen_rank_loops(w, input, "r", "1u", &load, &advance);
        w.comment("The best bits from the best ranks (a split pass's partial results carry");
        w.comment("the chunk's first row as their position: equal ranks, equal bits).");
        for j in 0..per {
            w.line(format!("var raw{j} = unrank(best_rank{j});"));
        }
        // Rank 0 is a float's NaN; integers have none.
        if input.is_float() {
            let any = (0..per)
                .map(|j| format!("(best_rank{j} == 0u)"))
                .collect::<Vec<_>>()
                .join(" | ");
            w.block(format!("if ({any})"), |w| {
                w.comment("A NaN: again with positions, for the first (last) NaN's bits.");
                for j in 0..per {
                    w.line(format!("best_rank{j} = NO_RANK;"));
                }
                w.line("r = begin;");
                w.line("at = start;");
                positions(w);
                w.comment("Element j of row r: (o * len + r) * inner + column * PER_VECTOR + j.");
                w.line("let element = o * len * inner + column * PER_VECTOR;");
                for j in 0..per {
                    w.line(format!(
                        "raw{j} = load_input(element + {j}u + best_position{j} * inner);"
                    ));
                }
            });
        }
    }
    if split {
        w.comment("An empty chunk (none when planned by reduce_plan) stores empty candidates.");
        w.comment("Element s = column * PER_VECTOR + j of a row is column col = s % columns");
        w.comment("of phase s / columns: its position r is row * phases + phase, at");
        w.comment("base + col + r * columns.");
        if !ranks_only {
            w.line("let base = o * len * inner;");
        }
        w.line("var phase = column * PER_VECTOR / columns;");
        w.line("var col = column * PER_VECTOR - phase * columns;");
        for j in 0..per {
            if j > 0 {
                w.line(format!("let wrap{j} = col + 1u == columns;"));
                w.line(format!("col = select(col + 1u, 0u, wrap{j});"));
                w.line(format!("phase = phase + select(0u, 1u, wrap{j});"));
            }
            let p = "((o * columns + col) * phases + phase) * chunks + c";
            let position =
                format!("select(best_position{j} * phases + phase, NO_POSITION, begin == end)");
            if ranks_only {
                w.line(format!("store_partial_raw({p}, raw{j}, {position});"));
            } else {
                w.line(format!(
                    "store_partial({p}, {position}, base + col, columns);"
                ));
            }
        }
    } else {
        w.line("let first = o * inner + column * PER_VECTOR;");
        if ranks_only {
            for j in 0..per {
                w.line(format!("store_output(first + {j}u, raw{j});"));
            }
        } else {
            w.comment("Output first + j's elements: base + position * inner.");
            w.line("let base = o * len * inner + column * PER_VECTOR;");
            for j in 0..per {
                w.line(format!(
                    "emit(first + {j}u, best_position{j}, base + {j}u, inner);"
                ));
            }
        }
    }
}

/// `fn rank(v: raw) -> key`: smaller ranks win the selection.
fn gen_rank(w: &mut Writer, select: Select, key_ty: &str) {
    w.comment("The selection's rank of a raw element: the smallest rank wins.");
    w.open(format!("fn rank(v: {key_ty}) -> {key_ty}"));
    match select {
        Select::Min => w.line("return order_key(v);"),
        Select::Max => w.line("return ~order_key(v);"),
    };
    w.close();
}

/// `fn better(...)`: whether candidate `a` beats candidate `b`, without
/// branches.
fn gen_better(w: &mut Writer, key_ty: &str) {
    w.comment("Whether candidate a (rank, position) beats candidate b; either may be empty.");
    w.open(format!(
        "fn better(rank_a: {key_ty}, position_a: u32, rank_b: {key_ty}, position_b: u32, last: bool) -> bool"
    ));
    w.line("let tie_wins = select((position_a < position_b), (position_a > position_b), last);");
    w.line("let wins = key_less(rank_a, rank_b) | (!key_less(rank_b, rank_a) & tie_wins);");
    w.line("return (position_a != NO_POSITION) & ((position_b == NO_POSITION) | wins);");
    w.close();
}

/// `fn later_wins(...)`: whether a candidate at a later position beats the
/// best so far (a scan visits positions in increasing order).
fn gen_later_wins(w: &mut Writer, key_ty: &str) {
    w.comment("Whether a candidate at a later position than the best so far beats it.");
    w.open(format!(
        "fn later_wins(candidate: {key_ty}, best: {key_ty}, last: bool) -> bool"
    ));
    w.line("return key_less(candidate, best) | (last & !key_less(best, candidate));");
    w.close();
}

/// `fn {name}(index: u32) -> u32`: the input offset of a row-major index
/// over the dimensions in the params words.
fn gen_offset(w: &mut Writer, name: &str, arg: &str, rank: &str, sizes: &str, strides: &str) {
    w.open(format!("fn {name}({arg}: u32) -> u32"));
    w.line(format!("let dims = param({rank});"));
    w.comment("One dimension (the common case) or none: no division.");
    w.block("if (dims <= 1u)", |w| {
        w.line(format!("return {arg} * param({strides});"));
    });
    w.line(format!("var rest = {arg};"));
    w.line("var offset = 0u;");
    w.block("for (var d = dims; d > 0u; d = d - 1u)", |w| {
        w.line(format!("let size = param({sizes} + d - 1u);"));
        w.line(format!(
            "offset = offset + (rest % size) * param({strides} + d - 1u);"
        ));
        w.line("rest = rest / size;");
    });
    w.line("return offset;");
    w.close();
}

/// `const NO_RANK`: the selection's best before any element.
fn gen_no_rank(w: &mut Writer, key_ty: &str) {
    w.comment("The selection's best so far: all-ones ranks lose to (or tie with) every element.");
    w.line(format!(
        "const NO_RANK: {key_ty} = {};",
        if key_ty == "u32" {
            "0xffffffffu"
        } else {
            "vec2<u32>(0xffffffffu, 0xffffffffu)"
        }
    ));
    w.blank();
}

/// The loops of one reduced dimension for `scan` and `scan_strided`: from
/// position `first`, `step` positions apart, below `end` (`count` of
/// them), the input offset stepping by `stride * step`; one loop per tie
/// rule, the selection without branches, as in the vector variants.
fn gen_plain_scan(w: &mut Writer, first: &str, step: &str, count: &str) {
    w.line("var best_rank = NO_RANK;");
    w.line(format!("var best_position = {first};"));
    w.line(format!("var offset = base + {first} * g.stride;"));
    w.line(format!("let offset_step = g.stride * {step};"));
    for (header, test) in [
        ("if (last)", "!key_less(best_rank, candidate)"),
        ("else", "key_less(candidate, best_rank)"),
    ] {
        if header == "else" {
            w.reopen(header);
        } else {
            w.open(header);
        }
        w.block(format!("for (var i = 0u; i < {count}; i = i + 1u)"), |w| {
            w.line("let candidate = rank(load_input(offset));");
            w.line(format!("let wins = {test};"));
            w.line("best_rank = select(best_rank, candidate, wins);");
            w.line(format!(
                "best_position = select(best_position, {first} + i * {step}, wins);"
            ));
            w.line("offset = offset + offset_step;");
        });
    }
    w.close();
    w.line("return Best(best_rank, best_position);");
}

/// `fn scan(base, begin, end, last) -> Best`: one thread over positions
/// `[begin, end)` in order, stepping along the innermost reduced dimension.
fn gen_scan(w: &mut Writer, key_ty: &str) {
    w.comment("The best of positions [begin, end) of the sub-tensor at base, visited in order;");
    w.comment("the offset steps along the innermost reduced dimension and is recomputed");
    w.comment("only where that dimension wraps.");
    w.open("fn scan(base: u32, begin: u32, end: u32, last: bool, g: Reduced) -> Best");
    w.block("if (begin >= end)", |w| {
        w.line(format!("return Best({}, NO_POSITION);", zero_of(key_ty)));
    });
    w.comment("One reduced dimension (the common case): a plain stride, no wrap; lavapipe");
    w.comment("runs the general loop below as well, but once, all lanes off.");
    w.block("if (g.dims <= 1u)", |w| {
        gen_plain_scan(w, "begin", "1u", "end - begin");
    });
    w.line("let inner = max(g.dims, 1u) - 1u;");
    w.line("let inner_size = param(P_REDUCED_SIZES + inner);");
    w.line("let inner_stride = param(P_REDUCED_STRIDES + inner);");
    w.line("var column = begin % inner_size;");
    w.line("var offset = base + reduced_offset(begin);");
    w.line("var best = Best(rank(load_input(offset)), begin);");
    w.block("for (var r = begin + 1u; r < end; r = r + 1u)", |w| {
        w.line("column = column + 1u;");
        w.open("if (column == inner_size)");
        w.line("column = 0u;");
        w.line("offset = base + reduced_offset(r);");
        w.reopen("else");
        w.line("offset = offset + inner_stride;");
        w.close();
        w.line("let candidate = rank(load_input(offset));");
        w.block("if (later_wins(candidate, best.rank, last))", |w| {
            w.line("best = Best(candidate, r);");
        });
    });
    w.line("return best;");
    w.close();
}

/// `fn scan_strided(...) -> Best`: one team member over positions
/// `begin + lane, begin + lane + team, ...` below `end`.
fn gen_scan_strided(w: &mut Writer, key_ty: &str) {
    w.comment("The best of positions begin + lane, begin + lane + team, ... below end: the team's");
    w.comment("threads read consecutive elements when the innermost dimension is reduced.");
    w.open("fn scan_strided(base: u32, begin: u32, end: u32, lane: u32, team: u32, last: bool, g: Reduced) -> Best");
    w.block("if (begin >= end || end - begin <= lane)", |w| {
        w.line(format!("return Best({}, NO_POSITION);", zero_of(key_ty)));
    });
    w.comment("One reduced dimension (the common case): a plain stride.");
    w.block("if (g.dims <= 1u)", |w| {
        w.line("let first = begin + lane;");
        w.line("let count = (end - first - 1u) / team + 1u;");
        gen_plain_scan(w, "first", "team", "count");
    });
    w.comment("Several reduced dimensions: the offset recomputed at every position.");
    w.line("var r = begin + lane;");
    w.line("var offset = base + reduced_offset(r);");
    w.line("var best = Best(rank(load_input(offset)), r);");
    w.block("loop", |w| {
        w.comment("Stop before r + team could wrap around.");
        w.block("if (end - r <= team)", |w| {
            w.line("break;");
        });
        w.line("r = r + team;");
        w.line("offset = base + reduced_offset(r);");
        w.line("let candidate = rank(load_input(offset));");
        w.block("if (later_wins(candidate, best.rank, last))", |w| {
            w.line("best = Best(candidate, r);");
        });
    });
    w.line("return best;");
    w.close();
}

/// The signature of `emit` and `store_partial` after their first argument,
/// and the input element at `position`. `strided` (the vector variants):
/// the caller passes the element offset of position 0 and the stride
/// between positions, computed from parameter words it read at the top of
/// the kernel. Otherwise the element is found through `reduced_offset`.
///
/// Why: a CPU adapter (lavapipe) reads a parameter word with one load only
/// at the top level of the kernel; inside any branch, loop or after an
/// early return it loops over the SIMD lanes for it, which for the inner
/// axis's short rows cost 6% of the reduction.
fn selected_element(strided: bool) -> (&'static str, &'static str) {
    if strided {
        (
            "position: u32, base: u32, stride: u32",
            "base + position * stride",
        )
    } else {
        (
            "position: u32, base: u32",
            "base + reduced_offset(position)",
        )
    }
}

/// `fn emit(o, position, ...)`: writes output element `o`.
fn gen_emit(w: &mut Writer, keep: Keep, output: DataType, strided: bool) {
    let (args, element) = selected_element(strided);
    w.comment("Writes output element o: the selected element's position or bits.");
    w.open(format!("fn emit(o: u32, {args})"));
    match keep {
        Keep::Index => {
            w.line(format!(
                "store_output(o, {});",
                dtype::raw_from_u32(output, "position")
            ));
        }
        Keep::Value => {
            w.line(format!("store_output(o, load_input({element}));"));
        }
    }
    w.close();
}

/// `fn store_partial(p, position, ...)`: writes partial result `p`.
fn gen_store_partial(w: &mut Writer, partials: &Buffer, input: DataType, strided: bool) {
    let (args, element) = selected_element(strided);
    let ty = dtype::raw_type(input);
    w.comment("Writes partial result p: the selected element's raw bits and its position.");
    w.open(format!("fn store_partial(p: u32, {args})"));
    w.line(format!("var raw = {};", dtype::raw_zero(input)));
    w.block("if (position != NO_POSITION)", |w| {
        w.line(format!("raw = load_input({element});"));
    });
    w.line("let at = p * PARTIAL_WORDS;");
    if ty == "u32" {
        w.line(partials.set("at", "raw"));
    } else {
        w.line(partials.set("at", "raw.x"));
        w.line(partials.set("at + 1u", "raw.y"));
    }
    w.line(partials.set("at + PARTIAL_WORDS - 1u", "position"));
    w.close();
}

/// `fn store_partial_raw(p, raw, position)`: writes partial result `p` of a
/// one-word type from bits at hand ([`ranks_only`]).
fn gen_store_partial_raw(w: &mut Writer, partials: &Buffer) {
    w.comment("Writes partial result p: raw bits at hand and a position.");
    w.open("fn store_partial_raw(p: u32, raw: u32, position: u32)");
    w.line("let at = p * PARTIAL_WORDS;");
    w.line(partials.set("at", "raw"));
    w.line(partials.set("at + PARTIAL_WORDS - 1u", "position"));
    w.close();
}

/// `fn load_partial(p) -> raw` and `fn partial_position(p) -> u32`: the raw
/// bits and the position of partial result `p`.
fn gen_load_partial(w: &mut Writer, partials: &Buffer, input: DataType) {
    let ty = dtype::raw_type(input);
    w.open(format!("fn load_partial(p: u32) -> {ty}"));
    w.line("let at = p * PARTIAL_WORDS;");
    if ty == "u32" {
        w.line(format!("return {};", partials.word("at")));
    } else {
        w.line(format!(
            "return vec2<u32>({}, {});",
            partials.word("at"),
            partials.word("at + 1u")
        ));
    }
    w.close();
    w.blank();
    w.open("fn partial_position(p: u32) -> u32");
    w.line(format!(
        "return {};",
        partials.word("p * PARTIAL_WORDS + PARTIAL_WORDS - 1u")
    ));
    w.close();
}

/// The chunk `[begin, end)` of positions chunk `c` covers (split passes;
/// `len` and `chunk` read at the top, as by [`gen_word_params`]).
fn gen_chunk_bounds(w: &mut Writer) {
    w.line("let begin = min(c * chunk, len);");
    w.line("let end = begin + min(chunk, len - begin);");
}

/// The word variants' parameter words besides their layout's, read at the
/// top of the kernel, before any branch: `len`, `chunk` and `reduced`.
fn gen_word_params(w: &mut Writer) {
    w.comment("Parameter words first, before any branch: lavapipe pays for every read after one.");
    w.line("let len = param(P_REDUCE_LEN);");
    w.line("let chunk = param(P_CHUNK_LEN);");
    w.line("let reduced = Reduced(param(P_REDUCED_RANK), param(P_REDUCED_STRIDES));");
}

/// Rows and SplitRows: one thread per output (and chunk), consecutive
/// threads on consecutive outputs.
fn gen_rows_body(w: &mut Writer, split: bool) {
    gen_word_params(w);
    if split {
        w.comment("One thread per (output, chunk); consecutive threads take consecutive outputs.");
        w.line("let outputs = param(P_OUTPUT_COUNT);");
        w.line("let chunks = param(P_CHUNK_COUNT);");
        w.line("let count = outputs * chunks;");
    } else {
        w.comment("One thread per output element; consecutive threads take consecutive outputs.");
        w.line("let count = param(P_OUTPUT_COUNT);");
    }
    w.block(
        "if (group >= count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u))",
        |w| {
            w.line("return;");
        },
    );
    w.line("let item = group * WORKGROUP_SIZE + lid;");
    w.block("if (item >= count)", |w| {
        w.line("return;");
    });
    if split {
        w.line("let o = item % outputs;");
        w.line("let c = item / outputs;");
        w.line("let base = kept_offset(o);");
        gen_chunk_bounds(w);
        w.line("let best = scan(base, begin, end, last, reduced);");
        w.line("store_partial(o * chunks + c, best.position, base);");
    } else {
        w.line("let base = kept_offset(item);");
        w.line("let best = scan(base, 0u, len, last, reduced);");
        w.line("emit(item, best.position, base);");
    }
}

/// The tree of a team in shared memory: afterwards the team's first thread
/// holds the team's best candidate (and raw bits, with `raw`).
fn gen_team_tree(w: &mut Writer, raw: bool) {
    w.comment("Combine the team's candidates; barriers stay in uniform control flow");
    w.comment("(the team size is a parameter word, the same for every thread).");
    w.block(
        "for (var stride = team / 2u; stride > 0u; stride = stride / 2u)",
        |w| {
            w.line("workgroupBarrier();");
            w.block("if (lane < stride)", |w| {
                w.line("let other_rank = wg_rank[lid + stride];");
                w.line("let other_position = wg_position[lid + stride];");
                w.block(
                    "if (better(other_rank, other_position, wg_rank[lid], wg_position[lid], last))",
                    |w| {
                        w.line("wg_rank[lid] = other_rank;");
                        w.line("wg_position[lid] = other_position;");
                        if raw {
                            w.line("wg_raw[lid] = wg_raw[lid + stride];");
                        }
                    },
                );
            });
        },
    );
}

/// The team layout: `team` threads per item, `WORKGROUP_SIZE / team` items
/// per workgroup.
fn gen_team_layout(w: &mut Writer) {
    w.line("let team = param(P_TEAM);");
    w.comment("Teams are powers of two: shifts, not divisions.");
    w.line("let team_shift = countTrailingZeros(team);");
    w.line("let lane = lid & (team - 1u);");
    w.line("let item = group * (WORKGROUP_SIZE >> team_shift) + (lid >> team_shift);");
}

/// Tree and SplitTree: a team per output (and chunk).
fn gen_tree_body(w: &mut Writer, split: bool) {
    if split {
        w.comment("A team per (output, chunk): teams of one output take consecutive chunks.");
    } else {
        w.comment("A team per output element.");
    }
    gen_team_layout(w);
    gen_word_params(w);
    if split {
        w.line("let chunks = param(P_CHUNK_COUNT);");
        w.line("let in_range = item < param(P_OUTPUT_COUNT) * chunks;");
    } else {
        w.line("let in_range = item < param(P_OUTPUT_COUNT);");
    }
    w.line("var base = 0u;");
    w.line("var first = 0u;");
    w.line("var stop = 0u;");
    w.block("if (in_range)", |w| {
        if split {
            w.line("let c = item % chunks;");
            w.line("base = kept_offset(item / chunks);");
            gen_chunk_bounds(w);
            w.line("first = begin;");
            w.line("stop = end;");
        } else {
            w.line("base = kept_offset(item);");
            w.line("stop = len;");
        }
    });
    w.line("let best = scan_strided(base, first, stop, lane, team, last, reduced);");
    w.line("wg_rank[lid] = best.rank;");
    w.line("wg_position[lid] = best.position;");
    gen_team_tree(w, false);
    w.block("if (lane == 0u && in_range)", |w| {
        if split {
            w.line("store_partial(item, wg_position[lid], base);");
        } else {
            w.line("emit(item, wg_position[lid], base);");
        }
    });
}

/// Combine: a team per output over its partial results.
fn gen_combine_body(w: &mut Writer, keep: Keep, output: DataType, key_ty: &str) {
    w.comment("A team per output element over its partial results.");
    gen_team_layout(w);
    w.line("let chunks = param(P_CHUNK_COUNT);");
    w.line("let in_range = item < param(P_OUTPUT_COUNT);");
    gen_combine_vars(w, key_ty);
    w.block("if (in_range)", |w| {
        gen_combine_loop(w, "for (var c = lane; c < chunks; c = c + team)");
    });
    w.line("wg_rank[lid] = best_rank;");
    w.line("wg_position[lid] = best_position;");
    let raw = keep == Keep::Value;
    if raw {
        w.line("wg_raw[lid] = best_raw;");
    }
    gen_team_tree(w, raw);
    w.block("if (lane == 0u && in_range)", |w| {
        gen_combine_store(w, keep, output, "wg_position[lid]", "wg_raw[lid]");
    });
}

/// A combine's best-so-far variables.
fn gen_combine_vars(w: &mut Writer, key_ty: &str) {
    let zero = zero_of(key_ty);
    w.line(format!("var best_rank = {zero};"));
    w.line("var best_position = NO_POSITION;");
    w.line(format!("var best_raw = {zero};"));
}

/// A combine's loop `header` over partial results `c` of output `item`.
fn gen_combine_loop(w: &mut Writer, header: &str) {
    w.block(header, |w| {
        w.line("let p = item * chunks + c;");
        w.line("let raw = load_partial(p);");
        w.line("let position = partial_position(p);");
        w.line("let candidate = rank(raw);");
        w.line("let wins = better(candidate, position, best_rank, best_position, last);");
        w.line("best_rank = select(best_rank, candidate, wins);");
        w.line("best_position = select(best_position, position, wins);");
        w.line("best_raw = select(best_raw, raw, wins);");
    });
}

/// A combine's output store: the selected position or the raw bits.
fn gen_combine_store(w: &mut Writer, keep: Keep, output: DataType, position: &str, raw: &str) {
    let value = match keep {
        Keep::Index => dtype::raw_from_u32(output, position),
        Keep::Value => raw.to_string(),
    };
    w.line(format!("store_output(item, {value});"));
}

/// CombineEach: a thread per output over its partial results, no shared
/// memory and no barrier (the combine teams of one thread).
fn gen_combine_each_body(w: &mut Writer, keep: Keep, output: DataType, key_ty: &str) {
    w.comment("A thread per output element over its partial results; no barrier.");
    w.line("let item = group * WORKGROUP_SIZE + lid;");
    w.line("let chunks = param(P_CHUNK_COUNT);");
    w.line("let in_range = item < param(P_OUTPUT_COUNT);");
    w.comment("Out of range: no partial results (no branch around the loop).");
    w.line("let stop = select(0u, chunks, in_range);");
    gen_combine_vars(w, key_ty);
    gen_combine_loop(w, "for (var c = 0u; c < stop; c = c + 1u)");
    w.block("if (in_range)", |w| {
        gen_combine_store(w, keep, output, "best_position", "best_raw");
    });
}

fn zero_of(key_ty: &str) -> &'static str {
    if key_ty == "u32" {
        "0u"
    } else {
        "vec2<u32>(0u, 0u)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::reduce::Zeros;

    /// Output data types of an operator for an input type.
    type Outputs = fn(DataType) -> Vec<DataType>;

    /// The four operators' configurations and their output types for an input type.
    fn configs() -> Vec<(&'static str, ReduceConfig, Outputs)> {
        let index_outputs: Outputs = |_| {
            vec![
                DataType::Int64,
                DataType::Int32,
                DataType::Uint64,
                DataType::Uint32,
            ]
        };
        let same: Outputs = |t| vec![t];
        vec![
            (
                "ArgMin",
                ReduceConfig {
                    keep: Keep::Index,
                    select: Select::Min,
                    zeros: Zeros::Equal,
                },
                index_outputs,
            ),
            (
                "ArgMax",
                ReduceConfig {
                    keep: Keep::Index,
                    select: Select::Max,
                    zeros: Zeros::Equal,
                },
                index_outputs,
            ),
            (
                "ReduceMin",
                ReduceConfig {
                    keep: Keep::Value,
                    select: Select::Min,
                    zeros: Zeros::NegativeFirst,
                },
                same,
            ),
            (
                "ReduceMax",
                ReduceConfig {
                    keep: Keep::Value,
                    select: Select::Max,
                    zeros: Zeros::NegativeFirst,
                },
                same,
            ),
        ]
    }

    fn validate(key: &str, text: &str) {
        let (counts, segmented) =
            segments::segmented_part(text).unwrap_or_else(|| panic!("{key}: no segmented variant"));
        assert_eq!(counts, [1, 4, 4], "{key}");
        let bindings = |m: naga::Module| {
            m.global_variables
                .iter()
                .filter(|(_, g)| g.binding.is_some())
                .count()
        };
        assert_eq!(bindings(validate_module(key, segmented)), 9, "{key}");
        assert_eq!(bindings(validate_module(key, text)), 3, "{key}");
    }

    fn validate_module(key: &str, wgsl: &str) -> naga::Module {
        crate::wgsl::validated_module(key, wgsl, REDUCE_ENTRY, WORKGROUP_SIZE)
    }

    #[test]
    fn column_walks_of_values_keep_ranks_alone() {
        let configs = configs();
        let (argmin, reducemin) = (&configs[0].1, &configs[2].1);
        let walk = |cfg: &ReduceConfig, variant, input: DataType, output| {
            let wgsl = reduce_kernel(cfg, variant, input, output, "k", "specs/test.op");
            (
                wgsl.contains("best_rank0 = min(best_rank0, rank("),
                wgsl.contains("if ((best_rank0 == 0u)"),
            )
        };
        for variant in [ReduceVariant::Columns, ReduceVariant::SplitColumns] {
            // Floats walk again after a NaN; integers have none.
            assert_eq!(
                walk(reducemin, variant, DataType::Float16, DataType::Float16),
                (true, true)
            );
            assert_eq!(
                walk(reducemin, variant, DataType::Int8, DataType::Int8),
                (true, false)
            );
            // Two-word keys, zeros that tie, indices: ranks and positions.
            assert_eq!(
                walk(reducemin, variant, DataType::Int64, DataType::Int64),
                (false, false)
            );
            let ties = ReduceConfig {
                zeros: Zeros::Equal,
                ..*reducemin
            };
            assert_eq!(
                walk(&ties, variant, DataType::Float32, DataType::Float32),
                (false, false)
            );
            assert_eq!(
                walk(argmin, variant, DataType::Float32, DataType::Int64),
                (false, false)
            );
        }
        assert_eq!(
            walk(
                reducemin,
                ReduceVariant::SplitLanes,
                DataType::Float32,
                DataType::Float32
            ),
            (false, false)
        );
    }

    #[test]
    fn lanes_over_whole_vectors_select_a_vector_at_a_time() {
        let configs = configs();
        let (argmin, reducemin) = (&configs[0].1, &configs[2].1);
        let lanes = |cfg: &ReduceConfig, variant, input: DataType, output| {
            let wgsl = reduce_kernel(cfg, variant, input, output, "k", "specs/test.op");
            (
                wgsl.contains("let rank_0 = vector_rank(q0);"),
                wgsl.contains("fn word_ranks("),
                wgsl.contains("-0.0's rank is +0.0's"),
            )
        };
        for variant in [ReduceVariant::SplitLanes, ReduceVariant::SplitLanesTree] {
            // Floats take word ranks; zeros settle where they tie.
            let f16 = lanes(argmin, variant, DataType::Float16, DataType::Int64);
            assert_eq!(f16, (true, true, true));
            let f32 = lanes(reducemin, variant, DataType::Float32, DataType::Float32);
            assert_eq!(f32, (true, true, false));
            let int8 = lanes(argmin, variant, DataType::Int8, DataType::Uint32);
            assert_eq!(int8, (true, false, false));
            // Two-word ranks: an element at a time.
            let int64 = lanes(argmin, variant, DataType::Int64, DataType::Int64);
            assert_eq!(int64, (false, false, false));
        }
        // Ragged rows and columns: an element at a time.
        for variant in [
            ReduceVariant::SplitLanesRagged,
            ReduceVariant::Columns,
            ReduceVariant::SplitColumns,
        ] {
            let f16 = lanes(argmin, variant, DataType::Float16, DataType::Int64);
            assert_eq!(f16, (false, false, false), "{variant:?}");
        }
    }

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        let mut count = 0;
        for (op, cfg, outputs) in configs() {
            for variant in ReduceVariant::ALL {
                for input in DataType::ALL {
                    for output in outputs(input) {
                        assert!(reduce_supported(&cfg, input, output));
                        let key = reduce_kernel_key(op, variant, input, output);
                        let wgsl =
                            reduce_kernel(&cfg, variant, input, output, &key, "specs/test.op");
                        assert!(wgsl.starts_with("// @generated from specs/test.op\n"));
                        assert!(wgsl.contains(&key));
                        validate(&key, &wgsl);
                        count += 1;
                    }
                }
            }
        }
        assert_eq!(
            count,
            ReduceVariant::ALL.len() * DataType::ALL.len() * (4 + 4 + 1 + 1)
        );
    }

    #[test]
    fn narrow_index_outputs_validate() {
        let cfg = ReduceConfig {
            keep: Keep::Index,
            select: Select::Max,
            zeros: Zeros::Equal,
        };
        for variant in ReduceVariant::ALL {
            for output in [
                DataType::Int16,
                DataType::Uint8,
                DataType::Int8,
                DataType::Uint16,
            ] {
                let key = reduce_kernel_key("ArgMax", variant, DataType::Float16, output);
                validate(
                    &key,
                    &reduce_kernel(&cfg, variant, DataType::Float16, output, &key, "x"),
                );
            }
        }
    }

    #[test]
    fn bindings_and_packing() {
        assert_eq!(
            reduce_bindings(),
            &[Access::Uniform, Access::Read, Access::ReadWrite]
        );
        let cfg = ReduceConfig {
            keep: Keep::Value,
            select: Select::Min,
            zeros: Zeros::NegativeFirst,
        };
        let packed = reduce_kernel(
            &cfg,
            ReduceVariant::Rows,
            DataType::Int8,
            DataType::Int8,
            "k",
            "o",
        );
        assert!(packed.contains("var<storage, read_write> output: array<atomic<u32>>;"));
        let plain = reduce_kernel(
            &cfg,
            ReduceVariant::Tree,
            DataType::Float64,
            DataType::Float64,
            "k",
            "o",
        );
        assert!(plain.contains("var<storage, read_write> output: array<u32>;"));
        assert!(plain.contains("const WORKGROUP_SIZE: u32 = 256u;"));
        assert_eq!(
            reduce_kernel_key(
                "ArgMin",
                ReduceVariant::Rows,
                DataType::Float16,
                DataType::Uint64
            ),
            "ArgMin/reduce_rows/FLOAT16/UINT64"
        );
    }
}
