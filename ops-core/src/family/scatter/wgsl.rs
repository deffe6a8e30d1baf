//! WGSL kernels of the scatter engine ([`super`]): the
//! last-write-wins stages of `scatter_elements` ([`ScatterStage`]) and the
//! combining walks of both families ([`CombineWalk`]). Every kernel opens
//! the same way (the families' `Prologue`), binds its tensors as
//! [`stage_buffers`] says, and checks index values with 32-bit integer
//! arithmetic only (core WebGPU, no 64-bit integers): a 64-bit index
//! `(lo, hi)` is in range when `hi == 0` and `lo < dim`, or (signed) when
//! `hi == 0xffffffff`, `lo != 0` and `2^32 - lo <= dim`, exactly the CPU
//! reference's `[-dim, dim - 1]` (`[0, dim - 1]` unsigned) for any size up
//! to `u32::MAX`. 8- and 16-bit index types are also supported
//! (sign-extended to 32 bits). A thread that meets an out-of-range index
//! value `atomicMin`s its position into status word 0.
//!
//! # Last write wins
//!
//! One kernel per [`ScatterStage`] and (data type, index type) pair
//! (`ColumnWords` for 8- and 16-bit data only): the plan of
//! [`super::scatter_elements_plan`], which fills the parameter words
//! ([`super::params`]), runs `Winner` then `Write` (one thread per update
//! element `u`, row-major), `Columns` alone (one thread per column,
//! walking its updates along the axis in order), `ColumnWords` alone (one
//! thread per `u32` word of neighbouring columns, walking them together)
//! or `ColumnVectors` alone (one thread per `vec4<u32>` of neighbouring
//! columns, the workgroup in lock step). Each computes an update's target
//! output element from its index value; see the engine's documentation
//! for the algorithms (last write in row-major order wins).
//!
//! Bindings of group 0 ([`scatter_bindings`]):
//!
//! | stage | 0 | 1 | 2 | 3 | 4 | 5 |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | `Winner` | params (uniform) | indices (r) | winner (rw, atomic) | status (rw, atomic) | | |
//! | `Write` | params (uniform) | indices (r) | updates (r) | winner (r) | status (r) | output (rw) |
//! | `Columns` | params (uniform) | indices (r) | updates (r) | status (rw, atomic) | output (rw) | |
//! | `ColumnWords` | params (uniform) | indices (r) | updates (r) | status (rw, atomic) | output (rw) | |
//! | `ColumnVectors` | params (uniform) | indices (r) | updates (r) | status (rw, atomic) | output (rw) | |
//!
//! The output binding is `array<atomic<u32>>` for 8- and 16-bit data types
//! (lane stores through `atomicAnd`/`atomicOr`), `array<u32>` otherwise;
//! `ColumnWords` binds it as `array<u32>` and stores whole words, each
//! owned by one thread. `ColumnVectors` binds the updates and the output
//! as `array<vec4<u32>>`, and the indices too when an index is at least as
//! wide as an element.
//!
//! The `Winner` kernel does not depend on the data type (only its header
//! comment names it); it is still generated and keyed per (data, index)
//! pair, like the `Write` kernel, so that every pair has its own two
//! kernels and keys.
//!
//! # Combining walks
//!
//! One kernel per (data type, index type) pair and `combine`, binding
//! [`super::WALK_BINDINGS`] as the `Columns` stage does. A thread owns
//! some output elements and walks the updates aimed at them in order, in
//! the pass's stretch of the walk (long walks take several passes, in
//! order): a column ([`CombineWalk::Columns`], words
//! [`super::combine_params`]; each update's target is its coordinates
//! times the input's strides with the axis coordinate its resolved index
//! value) or a slice position `s` ([`CombineWalk::Slices`], words
//! [`super::nd_params`]; each tuple's index values, unrolled up to
//! [`super::MAX_TUPLE`], resolve into the slice's input offset, and update
//! `t * S + s` lands on element `offset + s`; with empty slices one thread
//! checks the indices). The target becomes `combine(target, update)`,
//! computed in the data type's compute type ([`crate::wgsl::scalar`]) and
//! stored at once; a replacement (`combine` is `b`) moves raw bits. Only
//! the walking thread writes its elements; 8- and 16-bit elements share
//! words with other threads', so they are stored through
//! `atomicAnd`/`atomicOr` of their own lane.

use super::runtime::{
    combine_params, index_vectors, nd_params, params, stage_buffers, CombineWalk, ScatterStage,
    LOCKSTEP_ROWS, MAX_DIMS, MAX_TUPLE, WALK_ACCESS, WINNER_ACCESS, WORKGROUP_SIZE, WRITE_ACCESS,
};
use crate::family::Prologue;
use crate::scalar::{Scalar, TypeEnv, Var};
use crate::wgsl::dtype;
use crate::wgsl::scalar::{compute_type, gen_expr_helpers, gen_helpers, scalar_wgsl};
use crate::wgsl::segments::{self, Buffer};
use crate::wgsl::writer::Writer;
use crate::{Access, DataType};

/// The entry point's name in every kernel.
pub const SCATTER_ENTRY: &str = "main";

/// The bindings of a stage's kernel (see the module documentation).
pub fn scatter_bindings(stage: ScatterStage) -> &'static [Access] {
    match stage {
        ScatterStage::Winner => &WINNER_ACCESS,
        ScatterStage::Write => &WRITE_ACCESS,
        ScatterStage::Columns | ScatterStage::ColumnWords | ScatterStage::ColumnVectors => {
            &WALK_ACCESS
        }
    }
}

/// The kernel key by the framework's convention,
/// `{operator}/{stage name}/{DATA}/{INDEX}`
/// (`Scatter/scatter_winner/FLOAT16/INT64`).
pub fn scatter_kernel_key(
    operator: &str,
    stage: ScatterStage,
    data: DataType,
    index: DataType,
) -> String {
    format!(
        "{operator}/{}/{}/{}",
        stage.name(),
        data.spec_name(),
        index.spec_name()
    )
}

/// True when kernels can be generated for this pair: any data type, any
/// integer index type.
pub fn scatter_supported(_data: DataType, index: DataType) -> bool {
    index.is_int()
}

/// The complete WGSL of one scatter kernel: the module and its segmented
/// variant ([`crate::wgsl::segments`]; every buffer but the parameter and status
/// words is segmented).
///
/// `key` is the kernel key (written into the header) and `origin` the spec
/// path (`// @generated from {origin}`). `index` must be an integer type
/// ([`scatter_supported`]; debug builds assert it, release builds read a
/// float index's bits as an unsigned integer).
pub fn scatter_kernel(
    stage: ScatterStage,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> String {
    segments::combined(scatter_kernel_text(stage, data, index, key, origin))
}

/// The parts of [`scatter_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn scatter_kernel_text(
    stage: ScatterStage,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    debug_assert!(scatter_supported(data, index), "{key}");
    debug_assert!(stage.serves(data), "{key}");
    scatter_module(stage, data, index, key, origin)
}

/// The module of a scatter kernel, with its segmented variant.
fn scatter_module(
    stage: ScatterStage,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    let buffers = stage_buffers(Some(stage), data, index);
    let buffer = |name: &str| {
        *buffers
            .iter()
            .find(|b| b.name == name)
            .expect("a buffer of the stage")
    };
    let mut consts = vec![(
        "No element: a bad index's target; status word 0 while no index is bad.",
        "const NONE: u32 = 0xffffffffu;".to_string(),
    )];
    if stage == ScatterStage::ColumnWords {
        consts.push((
            "Elements (columns) per u32 word.",
            format!("const PER_WORD: u32 = {}u;", 32 / data.size_bits()),
        ));
    }
    if stage == ScatterStage::ColumnVectors {
        consts.push((
            "Elements (columns) per vec4<u32>.",
            format!("const PER_VECTOR: u32 = {}u;", 128 / data.size_bits()),
        ));
        consts.push((
            "Rows a thread walks between two workgroup barriers.",
            format!("const LOCKSTEP_ROWS: u32 = {LOCKSTEP_ROWS}u;"),
        ));
    }
    // Every word but the output count, which the kernels do not read.
    let words: Vec<(&str, usize)> = params::WGSL
        .iter()
        .copied()
        .filter(|&(_, word)| word != params::OUTPUT_COUNT)
        .collect();
    let mut w = Writer::new();
    prologue(
        &mut w,
        (origin, key),
        &[
            format!(
                "scatter_elements ({}): data {data}, index {index}",
                stage.name()
            ),
            "The last update in row-major order wins each output element.".into(),
        ],
        &words,
        &consts,
        &buffers,
    );
    dtype::gen_load_from(&mut w, "load_index", &buffer("indices"), index);
    w.blank();
    dtype::gen_resolve_index(&mut w, "axis_coordinate", index, "NONE");
    w.blank();
    gen_target(&mut w);
    if matches!(stage, ScatterStage::Write | ScatterStage::Columns) {
        w.blank();
        dtype::gen_load_from(&mut w, "load_update", &buffer("updates"), data);
        w.blank();
        dtype::gen_store_to(&mut w, "store_output", &buffer("output"), data);
    }
    w.blank();
    open_entry(&mut w);
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let axis = Axis(param(P_INNER), param(P_INDEX_AXIS_LEN), param(P_AXIS_LEN));");
    if stage == ScatterStage::ColumnVectors {
        gen_column_vectors_body(&mut w, data, index, &buffer);
        w.close();
        return w.finish_kernel();
    }
    if stage == ScatterStage::Columns {
        w.comment("One thread per column (outer, i); consecutive threads take consecutive i.");
        w.line("let count = param(P_COLUMNS);");
    } else if stage == ScatterStage::ColumnWords {
        w.comment("One thread per word of PER_WORD columns (outer, i..); inner holds whole words.");
        w.line("let count = param(P_COLUMNS) / PER_WORD;");
    } else {
        w.line("let count = param(P_UPDATE_COUNT);");
    }
    w.comment("Guard the grid's tail before group * WORKGROUP_SIZE could wrap around.");
    w.block(
        "if (group >= count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u))",
        |w| {
            w.line("return;");
        },
    );
    w.line("let u = group * WORKGROUP_SIZE + lid;");
    w.block("if (u >= count)", |w| {
        w.line("return;");
    });
    match stage {
        ScatterStage::Winner => {
            w.line("let t = target_of(u, axis);");
            w.block("if (t == NONE)", |w| {
                w.comment("Report the lowest bad position; write nothing.");
                w.line("atomicMin(&status[0], u);");
                w.line("return;");
            });
            w.comment("winner[t] ends as 1 + the last update aimed at t; a plain load skips");
            w.comment("the read-modify-write when a later update already won (collisions).");
            w.block(
                format!("if ({} < u + 1u)", buffer("winner").word("t")),
                |w| {
                    w.line(buffer("winner").atomic("Max", "t", "u + 1u"));
                },
            );
        }
        ScatterStage::Write => {
            w.comment("Some index was bad: write nothing at all.");
            w.block("if (status[0] != NONE)", |w| {
                w.line("return;");
            });
            w.line("let t = target_of(u, axis);");
            w.block(
                format!("if (t == NONE || {} != u + 1u)", buffer("winner").word("t")),
                |w| {
                    w.line("return;");
                },
            );
            w.line("store_output(t, load_update(u));");
        }
        ScatterStage::Columns => {
            w.comment("Updates of this column, in row-major order: u, u + inner, ...; they are");
            w.comment("stored in that order, so the last one aimed at an element stays.");
            w.line("let inner = axis.inner;");
            w.line("let i = u % inner;");
            w.line("let outer = u / inner;");
            w.line("let walk = axis.index_len;");
            w.line("var update = outer * walk * inner + i;");
            w.line("let base = outer * axis.len * inner + i;");
            w.block("for (var k = 0u; k < walk; k = k + 1u)", |w| {
                w.line("let c = axis_coordinate(load_index(update), axis.len);");
                w.block("if (c == NONE)", |w| {
                    w.comment("The column's lowest bad position; the call fails, its outputs");
                    w.comment("are not returned, and nothing is written out of bounds.");
                    w.line("atomicMin(&status[0], update);");
                    w.line("return;");
                });
                w.line("store_output(base + c * inner, load_update(update));");
                w.line("update = update + inner;");
            });
        }
        ScatterStage::ColumnWords => gen_column_words_body(&mut w, data, &buffer),
        ScatterStage::ColumnVectors => unreachable!("generated above"),
    }
    w.close();
    w.finish_kernel()
}

/// ColumnWords: a thread per word of `PER_WORD` neighbouring columns of
/// 8- or 16-bit data. Their updates, in row-major order, share update
/// words, and their output elements share output words that no other
/// column touches (`inner` is a whole number of words), so the thread
/// replaces each element's lane of its word with a plain load and store.
fn gen_column_words_body(w: &mut Writer, data: DataType, buffer: &dyn Fn(&str) -> Buffer<'static>) {
    let per = 32 / data.size_bits();
    let width = data.size_bits();
    let (updates, output) = (buffer("updates"), buffer("output"));
    w.comment("Updates of these columns, in row-major order: the word at update / PER_WORD,");
    w.comment("then inner further on; each row's elements go to their own output words.");
    w.line("let inner = axis.inner;");
    w.line("let first = u * PER_WORD;");
    w.line("let i = first % inner;");
    w.line("let outer = first / inner;");
    w.line("let walk = axis.index_len;");
    w.line("var update = outer * walk * inner + i;");
    w.line("let base = outer * axis.len * inner + i;");
    w.block("for (var k = 0u; k < walk; k = k + 1u)", |w| {
        for j in 0..per {
            w.line(format!(
                "let c{j} = axis_coordinate(load_index(update + {j}u), axis.len);"
            ));
        }
        gen_report_bad_columns(w, per, "return;");
        w.line(format!("let bits = {};", updates.word("update / PER_WORD")));
        gen_lane_stores(w, width, 1, &|_| "bits".into(), &output);
        w.line("update = update + inner;");
    });
}

/// ColumnVectors: a thread per `vec4<u32>` of `PER_VECTOR` neighbouring
/// columns (`inner` is a whole number of vectors), the workgroup's threads
/// in lock step. Each row reads the columns' updates as one vector and
/// their indices as `index bytes / data bytes` vectors (or, narrower
/// indices, a word at a time), and stores each column's element in its own
/// output word(s), which no other thread touches: the whole vector when
/// every column aims at one row, else plain word stores, and for 8- and
/// 16-bit lanes [`gen_lane_stores`].
///
/// Every thread of the workgroup meets a barrier every `LOCKSTEP_ROWS`
/// rows, so no thread returns early: threads past the last vector and
/// threads that met a bad index keep walking without loading or storing.
fn gen_column_vectors_body(
    w: &mut Writer,
    data: DataType,
    index: DataType,
    buffer: &dyn Fn(&str) -> Buffer<'static>,
) {
    let per = 128 / data.size_bits();
    let width = data.size_bits();
    let (indices, updates, output) = (buffer("indices"), buffer("updates"), buffer("output"));
    w.comment("One thread per vector of PER_VECTOR columns (outer, i..); inner holds whole");
    w.comment("vectors. No early return: every thread meets every barrier.");
    w.line("let count = param(P_COLUMNS) / PER_VECTOR;");
    w.line("let walk = axis.index_len;");
    w.line("let inner = axis.inner;");
    w.comment("Threads past the last vector (and the grid's tail, where group * WORKGROUP_SIZE");
    w.comment("could wrap around) walk without loading or storing.");
    w.line("let groups = count / WORKGROUP_SIZE + select(0u, 1u, count % WORKGROUP_SIZE != 0u);");
    w.line("let u = group * WORKGROUP_SIZE + lid;");
    w.line("var live = group < groups && u < count;");
    w.line("let first = u * PER_VECTOR;");
    w.line("let i = first % inner;");
    w.line("let outer = first / inner;");
    w.line("var update = outer * walk * inner + i;");
    w.line("let base = outer * axis.len * inner + i;");
    w.comment("Updates of these columns, in row-major order: the vector at update / PER_VECTOR,");
    w.comment("then inner further on; each column's element goes to its own output word(s).");
    w.block("for (var k = 0u; k < walk; k = k + 1u)", |w| {
        w.block("if (live)", |w| {
            // Column j's raw index value.
            let raw: Vec<String> = if index_vectors(data, index) {
                let n = index.size_bytes() / data.size_bytes();
                for m in 0..n {
                    w.line(format!(
                        "let iv{m} = {};",
                        indices.vector(&format!("update / PER_VECTOR * {n}u + {m}u"))
                    ));
                }
                let word = |x: usize| format!("iv{}[{}]", x / 4, x % 4);
                (0..per as usize)
                    .map(|j| dtype::raw_in_words(index, j, &word))
                    .collect()
            } else {
                (0..per)
                    .map(|j| format!("load_index(update + {j}u)"))
                    .collect()
            };
            for (j, r) in raw.iter().enumerate() {
                w.line(format!("let c{j} = axis_coordinate({r}, axis.len);"));
            }
            gen_report_bad_columns(w, per, "live = false;");
            w.block("if (live)", |w| {
                w.line(format!(
                    "let v = {};",
                    updates.vector("update / PER_VECTOR")
                ));
                let same: Vec<String> = (1..per).map(|j| format!("(c{j} == c0)")).collect();
                w.comment("Every column into one output row: the vector goes whole.");
                w.line(format!("let same = {};", same.join(" & ")));
                w.open("if (same)");
                w.line(output.store_vector("(base + c0 * inner) / PER_VECTOR", "v"));
                w.reopen("else");
                if width < 32 {
                    let word = |g: u32| format!("v[{g}]");
                    gen_lane_stores(w, width, 4, &word, &output);
                } else {
                    for j in 0..per {
                        w.line(format!("let t{j} = base + {j}u + c{j} * inner;"));
                        let words = width / 32;
                        for x in 0..words {
                            let at = match words {
                                1 => format!("t{j}"),
                                _ => format!("2u * t{j} + {x}u"),
                            };
                            w.line(output.set(&at, &format!("v[{}]", words * j + x)));
                        }
                    }
                }
                w.close();
            });
            w.line("update = update + inner;");
        });
        w.comment("Lock step: the workgroup's threads stay within LOCKSTEP_ROWS rows.");
        w.block("if (k % LOCKSTEP_ROWS == LOCKSTEP_ROWS - 1u)", |w| {
            w.line("workgroupBarrier();");
        });
    });
}

/// The lane stores of a row of 8- or 16-bit columns in the vector and word
/// walks (`c0` .. their coordinates; `words` update words of them,
/// `update_word(g)` the expression of word `g`): every column's output word
/// is loaded first, so that the loads, which go to rows of their own with
/// random indices, overlap; then each word is stored with the lanes of all
/// the columns of its update word that aim at it (columns of one update
/// word share an output word when they aim at one row).
/// Measured on lavapipe with a random row per update element, alternating
/// runs in one process: FLOAT16 `[8192, 4096]` 466-528 ms loading and
/// storing column by column, 353-366 ms so; 64 rows of 2^19 columns
/// 139-144 ms either way. The word walk (two loads a row) measured the
/// same either way: 362-367 ms column by column, 370-374 ms so.
fn gen_lane_stores(
    w: &mut Writer,
    width: u32,
    words: u32,
    update_word: &dyn Fn(u32) -> String,
    output: &Buffer<'static>,
) {
    let lanes = 32 / width;
    let per = words * lanes;
    for j in 0..per {
        w.line(format!(
            "let w{j} = (base + {j}u + c{j} * inner) / {lanes}u;"
        ));
        w.line(format!("let o{j} = {};", output.word(&format!("w{j}"))));
    }
    for j in 0..per {
        let (bits, first) = (update_word(j / lanes), j / lanes * lanes);
        let lane = |k: u32| {
            let mask = format!("0x{:x}u", ((1u64 << width) - 1) << ((k % lanes) * width));
            let bits = bits.clone();
            move |word: &str| format!("(({word}) & ~{mask}) | ({bits} & {mask})")
        };
        let mut value = lane(j)(&format!("o{j}"));
        for k in (first..first + lanes).filter(|&k| k != j) {
            value = format!("select({value}, {}, w{k} == w{j})", lane(k)(&value));
        }
        w.line(format!("let n{j} = {value};"));
        w.line(output.set(&format!("w{j}"), &format!("n{j}")));
    }
}

/// The walks' check of a row of `per` columns (`c0` .. coordinates, `NONE`
/// for a bad index value): the lowest bad position of the row goes to
/// status word 0, then `then` runs (ending the thread's stores).
fn gen_report_bad_columns(w: &mut Writer, per: u32, then: &str) {
    let bad: Vec<String> = (0..per).map(|j| format!("(c{j} == NONE)")).collect();
    w.block(format!("if ({})", bad.join(" | ")), |w| {
        w.comment("The lowest bad position of the row; the call fails, its outputs are");
        w.comment("not returned, and nothing is written out of bounds.");
        let mut lowest = format!("update + {}u", per - 1);
        for j in (0..per - 1).rev() {
            lowest = format!("select({lowest}, update + {j}u, c{j} == NONE)");
        }
        w.line(format!("atomicMin(&status[0], {lowest});"));
        w.line(then);
    });
}

/// `struct Axis` and `fn target_of(u: u32, g: Axis) -> u32`: update `u`'s
/// target output element, `NONE` for a bad index.
///
/// The kernel reads the geometry's parameter words once, at its top (`let
/// axis = ...`): a CPU adapter (lavapipe) pays for every parameter read
/// after a branch or an early return.
fn gen_target(w: &mut Writer) {
    w.comment("The geometry's parameter words, read once at the kernel's top.");
    w.block("struct Axis", |w| {
        w.line("inner: u32,");
        w.line("index_len: u32,");
        w.line("len: u32,");
    });
    w.blank();
    w.comment("Update u's target output element, or NONE when its index is out of range.");
    w.comment(
        "u = (outer * index_axis_len + k) * inner + i -> (outer * axis_len + c) * inner + i.",
    );
    w.open("fn target_of(u: u32, g: Axis) -> u32");
    w.line("let c = axis_coordinate(load_index(u), g.len);");
    w.block("if (c == NONE)", |w| {
        w.line("return NONE;");
    });
    w.line("let outer = u / g.inner / g.index_len;");
    w.line("return (outer * g.len + c) * g.inner + u % g.inner;");
    w.close();
}

/// Writes a scatter kernel's opening ([`Prologue`], without
/// `ELEMENTS_PER_THREAD`: a thread takes one column, word, vector, update
/// or slice position): `what`, a comment line each, the parameter `words`,
/// the commented `consts`, then the buffers' declarations and accessors.
fn prologue(
    w: &mut Writer,
    (origin, key): (&str, &str),
    what: &[String],
    words: &[(&str, usize)],
    consts: &[(&str, String)],
    buffers: &[Buffer<'_>],
) {
    let consts: Vec<(&str, &str)> = consts.iter().map(|(c, l)| (*c, l.as_str())).collect();
    Prologue {
        origin,
        key,
        what,
        workgroup_size: WORKGROUP_SIZE,
        elements_per_thread: None,
        words,
        consts: &consts,
        buffers,
    }
    .write(w);
}

/// Opens the entry point of every scatter kernel: the workgroup id, the
/// grid's width and the thread's index in its workgroup.
fn open_entry(w: &mut Writer) {
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {SCATTER_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
}

/// Why no combining walk's kernel can be generated for `data` with
/// `index` indices and `combine`, `None` when one can: integer indices and
/// a `combine` the data type has on the GPU
/// ([`super::combine_unsupported`]).
pub fn combine_kernel_unsupported(
    combine: &Scalar,
    data: DataType,
    index: DataType,
) -> Option<String> {
    if !index.is_int() {
        return Some(format!("{index} is not an index type"));
    }
    super::combine_unsupported(combine, data)
}

/// The complete WGSL of one combining walk's kernel: the module and its
/// segmented variant.
pub fn combine_kernel(
    walk: CombineWalk,
    combine: &Scalar,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> String {
    segments::combined(combine_kernel_text(walk, combine, data, index, key, origin))
}

/// The parts of [`combine_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn combine_kernel_text(
    walk: CombineWalk,
    combine: &Scalar,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    walk_module(walk, combine, data, index, (key, origin))
}

/// Writes `fn combine(a: T, b: T) -> T` for a scatter combining `data`
/// elements with `combine` (`a` the element, `b` the update), in `data`'s
/// compute type, with the `decode`/`encode` helpers and those `combine`
/// calls.
fn gen_combine(w: &mut Writer, combine: &Scalar, data: DataType) {
    gen_helpers(w, data);
    let env = TypeEnv::uniform(std::slice::from_ref(&data));
    gen_expr_helpers(w, &[combine], &env);
    w.blank();
    let t = compute_type(data);
    w.open(format!("fn combine(a: {t}, b: {t}) -> {t}"));
    let var = |v: Var| match v {
        Var::A => "a".to_string(),
        Var::B => "b".to_string(),
        other => format!("/* {} */ a", other.name()),
    };
    w.line(format!("return {};", scalar_wgsl(combine, &env, &var)));
    w.close();
    w.blank();
}

/// The module of a combining walk's kernel, with its segmented variant: the
/// opening, the data helpers and the combine, shared; then the walk's
/// addressing and entry point.
fn walk_module(
    walk: CombineWalk,
    combine: &Scalar,
    data: DataType,
    index: DataType,
    (key, origin): (&str, &str),
) -> crate::KernelText {
    let raw = matches!(combine, Scalar::Var(Var::B));
    let buffers = stage_buffers(None, data, index);
    let (what, words, bad) = match walk {
        CombineWalk::Columns => (
            format!("scatter with a combine: data {data}, indices {index}"),
            combine_params::WGSL,
            "Not a position: an out-of-range index value.",
        ),
        CombineWalk::Slices => (
            format!("scatter_nd: data {data}, indices {index}"),
            nd_params::WGSL,
            "Not an offset: an out-of-range index value.",
        ),
    };
    let mut w = Writer::new();
    prologue(
        &mut w,
        (origin, key),
        &[what],
        words,
        &[(bad, "const BAD: u32 = 0xffffffffu;".into())],
        &buffers,
    );
    for (name, buffer, dt) in [
        ("load_index", 1, index),
        ("load_update", 2, data),
        ("load_output", 4, data),
    ] {
        dtype::gen_load_from(&mut w, name, &buffers[buffer], dt);
        w.blank();
    }
    dtype::gen_store_to(&mut w, "store_output", &buffers[4], data);
    w.blank();
    dtype::gen_resolve_index(&mut w, "resolve", index, "BAD");
    w.blank();
    if !raw {
        gen_combine(&mut w, combine, data);
    }
    // Update `u` applied to output element `o`.
    let apply = |w: &mut Writer, o: &str| {
        w.line(if raw {
            format!("store_output({o}, load_update(u));")
        } else {
            format!("store_output({o}, encode(combine(decode(load_output({o})), decode(load_update(u)))));")
        });
    };
    match walk {
        CombineWalk::Columns => gen_columns_walk(&mut w, &apply),
        CombineWalk::Slices => gen_slices_walk(&mut w, &apply),
    }
    w.close();
    w.finish_kernel()
}

/// [`CombineWalk::Columns`]: `fn target_of(u, i, axis)` and the entry
/// point, a thread per column walking its updates along the axis (`inner`
/// apart), `apply` storing each.
fn gen_columns_walk(w: &mut Writer, apply: &dyn Fn(&mut Writer, &str)) {
    w.comment("The output element update u lands on, its axis coordinate being i: its");
    w.comment("coordinates (last dimension first) times the input's strides. Unrolled");
    w.comment("over every slot (unused ones have size 1 and stride 0): no loop inside");
    w.comment("the walk, whose length lavapipe's loop guard counts.");
    w.open("fn target_of(u: u32, i: u32, axis: u32) -> u32");
    w.line("var rest = u;");
    w.line("var offset = 0u;");
    for d in (0..MAX_DIMS).rev() {
        w.line(format!("let s{d} = max(param(P_SIZES + {d}u), 1u);"));
        w.line(format!(
            "offset = offset + select(rest % s{d}, i, axis == {d}u) * param(P_STRIDES + {d}u);"
        ));
        if d > 0 {
            w.line(format!("rest = rest / s{d};"));
        }
    }
    w.line("return offset;");
    w.close();
    w.blank();
    open_entry(w);
    w.line("let column = (wg.x + wg.y * num_workgroups.x) * WORKGROUP_SIZE + lid;");
    w.block("if (column >= param(P_COLUMNS))", |w| {
        w.line("return;");
    });
    w.line("let walk = param(P_WALK);");
    w.line("let inner = param(P_INNER);");
    w.line("let axis = param(P_AXIS);");
    w.line("let len = param(P_AXIS_LEN);");
    w.comment("The column's first update; the next ones are `inner` apart.");
    w.line("let first = (column / inner) * walk * inner + column % inner;");
    w.line("let end = param(P_WALK_END);");
    w.comment("This pass's stretch of the column's walk: passes run in order.");
    w.block(
        "for (var k = param(P_WALK_START); k < end; k = k + 1u)",
        |w| {
            w.line("let u = first + k * inner;");
            w.line("let i = resolve(load_index(u), len);");
            w.block("if (i == BAD)", |w| {
                w.line("atomicMin(&status[0], u);");
                w.line("return;");
            });
            w.line("let t = target_of(u, i, axis);");
            apply(w, "t");
        },
    );
}

/// [`CombineWalk::Slices`]: `fn tuple_base(t, q)` and the entry point, a
/// thread per slice position walking the tuples, `apply` storing each
/// tuple's update at its position.
fn gen_slices_walk(w: &mut Writer, apply: &dyn Fn(&mut Writer, &str)) {
    w.comment("The input offset of tuple t's slice, or BAD after reporting its first");
    w.comment("out-of-range index value. Unrolled over every slot (a loop inside the");
    w.comment("walk would count against lavapipe's loop guard).");
    w.open("fn tuple_base(t: u32, q: u32) -> u32");
    w.line("var offset = 0u;");
    w.line("var bad = BAD;");
    for j in 0..MAX_TUPLE {
        w.block(format!("if ({j}u < q)"), |w| {
            w.line(format!("let p = t * q + {j}u;"));
            w.line(format!(
                "let i = resolve(load_index(p), param(P_DIM_SIZES + {j}u));"
            ));
            w.line("bad = select(bad, p, (i == BAD) & (bad == BAD));");
            w.line(format!(
                "offset = offset + select(i, 0u, i == BAD) * param(P_DIM_STRIDES + {j}u);"
            ));
        });
    }
    w.block("if (bad != BAD)", |w| {
        w.line("atomicMin(&status[0], bad);");
        w.line("return BAD;");
    });
    w.line("return offset;");
    w.close();
    w.blank();
    open_entry(w);
    w.line("let s = (wg.x + wg.y * num_workgroups.x) * WORKGROUP_SIZE + lid;");
    w.line("let slice = param(P_SLICE_LEN);");
    w.line("let q = param(P_TUPLE_SIZE);");
    w.line("let end = param(P_END);");
    w.comment("Empty slices: thread 0 checks the indices alone.");
    w.block("if (s >= max(slice, 1u))", |w| {
        w.line("return;");
    });
    w.comment("This pass's stretch of the tuples, in order: passes run in order.");
    w.block("for (var t = param(P_START); t < end; t = t + 1u)", |w| {
        w.line("let base = tuple_base(t, q);");
        w.block("if (base == BAD)", |w| {
            w.line("return;");
        });
        w.block("if (s < slice)", |w| {
            w.line("let o = base + s;");
            w.line("let u = t * slice + s;");
            apply(w, "o");
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index types of the Scatter tables.
    const INDEX_TYPES: [DataType; 4] = [
        DataType::Int64,
        DataType::Int32,
        DataType::Uint64,
        DataType::Uint32,
    ];

    fn validate(key: &str, text: &str, stage: ScatterStage) {
        let (counts, segmented) =
            segments::segmented_part(text).unwrap_or_else(|| panic!("{key}: no segmented variant"));
        assert_eq!(counts.len(), scatter_bindings(stage).len(), "{key}");
        validate_module(key, segmented, counts.iter().sum::<u32>());
        validate_module(key, text, scatter_bindings(stage).len() as u32);
    }

    fn validate_module(key: &str, wgsl: &str, count: u32) {
        let module = crate::wgsl::validated_module(key, wgsl, SCATTER_ENTRY, WORKGROUP_SIZE);
        // One global per binding, numbered in order.
        let mut bindings: Vec<u32> = module
            .global_variables
            .iter()
            .filter_map(|(_, g)| g.binding.as_ref().map(|b| b.binding))
            .collect();
        bindings.sort_unstable();
        let want: Vec<u32> = (0..count).collect();
        assert_eq!(bindings, want, "{key}");
    }

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        let mut count = 0;
        for stage in ScatterStage::ALL {
            for data in DataType::ALL.into_iter().filter(|&d| stage.serves(d)) {
                for index in INDEX_TYPES {
                    assert!(scatter_supported(data, index));
                    let key = scatter_kernel_key("Scatter", stage, data, index);
                    let wgsl = scatter_kernel(stage, data, index, &key, "specs/scatter.op");
                    assert!(wgsl.starts_with("// @generated from specs/scatter.op\n"));
                    assert!(wgsl.contains(&format!("// kernel: {key}\n")));
                    assert!(wgsl.contains("const WORKGROUP_SIZE: u32 = 256u;"));
                    validate(&key, &wgsl, stage);
                    count += 1;
                }
            }
        }
        // Every data type for four stages, the six 8- and 16-bit ones
        // (BOOL included) for ColumnWords; four index types.
        assert_eq!(count, (4 * DataType::ALL.len() + 6) * 4);
    }

    #[test]
    fn narrow_index_types_validate() {
        for stage in ScatterStage::ALL {
            for index in [
                DataType::Int16,
                DataType::Int8,
                DataType::Uint16,
                DataType::Uint8,
            ] {
                let key = scatter_kernel_key("Scatter", stage, DataType::Int8, index);
                let wgsl = scatter_kernel(stage, DataType::Int8, index, &key, "x");
                validate(&key, &wgsl, stage);
            }
        }
        assert!(!scatter_supported(DataType::Int8, DataType::Float32));
    }

    #[test]
    fn keys_bindings_and_packing() {
        assert_eq!(
            scatter_kernel_key(
                "Scatter",
                ScatterStage::Winner,
                DataType::Float16,
                DataType::Int64
            ),
            "Scatter/scatter_winner/FLOAT16/INT64"
        );
        assert_eq!(
            scatter_kernel_key(
                "Scatter",
                ScatterStage::Write,
                DataType::Uint8,
                DataType::Uint32
            ),
            "Scatter/scatter_write/UINT8/UINT32"
        );
        assert_eq!(scatter_bindings(ScatterStage::Winner).len(), 4);
        assert_eq!(scatter_bindings(ScatterStage::Write).len(), 6);
        let packed = scatter_kernel(
            ScatterStage::Write,
            DataType::Float16,
            DataType::Int32,
            "k",
            "o",
        );
        assert!(packed.contains("var<storage, read_write> output: array<atomic<u32>>;"));
        assert!(packed.contains("output_atomic_and(word"));
        assert!(packed.contains("atomicAnd(&output[i], v);"));
        let wide = scatter_kernel(
            ScatterStage::Write,
            DataType::Float64,
            DataType::Int64,
            "k",
            "o",
        );
        assert!(wide.contains("var<storage, read_write> output: array<u32>;"));
        assert!(wide.contains("if (v.y == 0xffffffffu && v.x != 0u)"));
        let winner = scatter_kernel(
            ScatterStage::Winner,
            DataType::Float64,
            DataType::Uint32,
            "k",
            "o",
        );
        assert!(winner.contains("winner_atomic_max(t, u + 1u);"));
        assert!(winner.contains("atomicMax(&winner[i], v);"));
        let (counts, segmented) = segments::segmented_part(&winner).unwrap();
        assert_eq!(counts, [1, 4, 4, 1]);
        assert!(segmented.contains("winner_atomic_max(t, u + 1u);"));
        assert!(segmented.contains("atomicMax(&winner_s3[r], v);"));
        let (counts, segmented) = segments::segmented_part(&packed).unwrap();
        assert_eq!(counts, [1, 4, 4, 4, 1, 4]);
        assert!(segmented.contains("if (t == NONE || winner_word(t) != u + 1u)"));
        assert!(segmented.contains("output_atomic_and(word, ~(0xffffu << shift));"));
        assert!(winner.contains("atomicMin(&status[0], u);"));
        assert!(!winner.contains("store_output"));
        assert_eq!(scatter_bindings(ScatterStage::Columns).len(), 5);
        let columns = scatter_kernel(
            ScatterStage::Columns,
            DataType::Uint8,
            DataType::Int64,
            "k",
            "o",
        );
        assert!(columns.contains("store_output(base + c * inner, load_update(update));"));
        assert!(columns.contains("atomicMin(&status[0], update);"));
        let (counts, _) = segments::segmented_part(&columns).unwrap();
        assert_eq!(counts, [1, 4, 4, 1, 4]);
    }

    static A: Scalar = Scalar::Var(Var::A);
    static B: Scalar = Scalar::Var(Var::B);
    static ADD: Scalar = Scalar::Binary(crate::scalar::Binary::Add, &A, &B);
    static MAX: Scalar = Scalar::Binary(crate::scalar::Binary::Max, &A, &B);

    /// Validates every combining walk's kernel for `combines`, returning
    /// how many there are.
    fn validate_walks(walk: CombineWalk, combines: &[&Scalar]) -> usize {
        let mut count = 0;
        for combine in combines {
            for data in DataType::ALL {
                for index in [DataType::Int64, DataType::Int32, DataType::Uint32] {
                    if combine_kernel_unsupported(combine, data, index).is_some() {
                        continue;
                    }
                    let key = format!(
                        "T/{}/{}/{}",
                        walk.name(),
                        data.spec_name(),
                        index.spec_name()
                    );
                    let text = combine_kernel(walk, combine, data, index, &key, "test");
                    let (_, segmented) = segments::segmented_part(&text)
                        .unwrap_or_else(|| panic!("{key}: no segmented variant"));
                    for wgsl in [segments::plain_part(&text), segmented] {
                        crate::wgsl::validated_module(&key, wgsl, SCATTER_ENTRY, WORKGROUP_SIZE);
                    }
                    count += 1;
                }
            }
        }
        count
    }

    #[test]
    fn every_combining_kernel_validates_on_core_webgpu() {
        let count = validate_walks(CombineWalk::Columns, &[&B, &ADD, &MAX]);
        assert!(count > 60, "{count} kernels");
    }

    #[test]
    fn every_scatter_nd_kernel_validates_on_core_webgpu() {
        let count = validate_walks(CombineWalk::Slices, &[&B, &ADD]);
        assert!(count > 40, "{count} kernels");
    }
}
