//! WGSL kernels of the `elementwise` family ([`super`]).
//!
//! One kernel per binding of the expression's type parameters and
//! [`Schedule`] (a kernel holds its schedule's code only). Bindings of
//! group 0: `params` (uniform, the words of
//! [`super::params`]), `in0`.. (read, one per
//! input), `output` (read_write), tensors bound as `array<vec4<u32>>`
//! (accessed a word at a time but in the vector schedules). A work item is an output element (32-
//! and 64-bit outputs) or an output `u32` word of 4 or 2 elements (8- and
//! 16-bit ones, assembled in a register and stored once, no atomics). An
//! element finds its input elements in its kernel's schedule (walking its
//! merged coordinates, or from its row and column; a vector item from its
//! own index, or its row and column vector), decodes one element per input
//! into its compute type and evaluates the spec's expression
//! ([`crate::wgsl::scalar`]).
//!
//! A kernel of one input also has a segmented variant (tensors beyond one
//! binding); with more inputs the segments would exceed core WebGPU's 8
//! storage buffers per stage, and such a call is limited to one binding
//! per tensor.

use super::{
    params, vector_elements, Elementwise, Schedule, ELEMENTS_PER_THREAD, MAX_INPUTS, WORKGROUP_SIZE,
};
use crate::scalar::Var;
use crate::DataType;

use crate::wgsl::dtype;
use crate::wgsl::scalar::{compute_type, gen_codec, gen_expr_helpers, scalar_wgsl};
use crate::wgsl::segments::{self, Buffer};
use crate::wgsl::writer::Writer;

/// The entry point's name.
pub const ELEMENTWISE_ENTRY: &str = "main";

const INPUT_NAMES: [&str; MAX_INPUTS] = ["in0", "in1", "in2", "in3", "in4", "in5", "in6"];

/// The kernel key by the framework's convention,
/// `{operator}/elementwise/{T0}.{T1}..` (the type parameters' bindings) for
/// [`Schedule::Walk`], `elementwise_rows` and `elementwise_vectors` for
/// the others.
pub fn elementwise_kernel_key(operator: &str, schedule: Schedule, types: &[DataType]) -> String {
    let names: Vec<&str> = types.iter().map(|t| t.spec_name()).collect();
    let variant = match schedule {
        Schedule::Walk => "elementwise",
        Schedule::Rows => "elementwise_rows",
        Schedule::Vectors => "elementwise_vectors",
        Schedule::Flat => "elementwise_flat",
    };
    format!("{operator}/{variant}/{}", names.join("."))
}

/// The complete WGSL of one kernel (with its segmented variant when it has
/// one).
pub fn elementwise_kernel(
    e: &Elementwise,
    schedule: Schedule,
    types: &[DataType],
    key: &str,
    origin: &str,
    text: &str,
) -> String {
    segments::combined(elementwise_kernel_text(
        e, schedule, types, key, origin, text,
    ))
}

/// The parts of [`elementwise_kernel`], for a kernel generated on first
/// use ([`crate::Kernel::generated`]): the kernel of `schedule` (only its
/// code: a schedule is a kernel of its own), `types` binds the type
/// parameters, `text` is the expression as the spec writes it (a comment).
pub fn elementwise_kernel_text(
    e: &Elementwise,
    schedule: Schedule,
    types: &[DataType],
    key: &str,
    origin: &str,
    text: &str,
) -> crate::KernelText {
    let mut text = module(e, schedule, types, key, origin, text);
    if e.inputs() > 1 {
        text.segmented = None;
    }
    text
}

fn buffers(inputs: usize) -> Vec<Buffer<'static>> {
    let mut b = vec![Buffer::params()];
    b.extend(INPUT_NAMES[..inputs].iter().map(|n| Buffer::read_vec4(n)));
    b.push(Buffer::read_write_vec4("output"));
    b
}

fn module(
    e: &Elementwise,
    schedule: Schedule,
    types: &[DataType],
    key: &str,
    origin: &str,
    text: &str,
) -> crate::KernelText {
    let n = e.inputs();
    let env = e.env(types);
    let out_dt = env.resolve(e.types[n]);
    let in_dts: Vec<DataType> = (0..n).map(|i| env.var(Var::INPUTS[i])).collect();
    let bufs = buffers(n);
    let mut w = Writer::new();
    let ins: Vec<String> = in_dts.iter().map(DataType::to_string).collect();
    crate::family::Prologue {
        origin,
        key,
        what: &[
            format!(
                "elementwise ({}) -> {out_dt}: {}",
                ins.join(", "),
                text.replace('\n', " ")
            ),
            format!("schedule: {}", schedule.name()),
        ],
        workgroup_size: WORKGROUP_SIZE,
        elements_per_thread: Some(ELEMENTS_PER_THREAD),
        words: params::WGSL,
        consts: &[],
        buffers: &bufs,
    }
    .write(&mut w);
    for (i, &dt) in in_dts.iter().enumerate() {
        gen_codec(&mut w, dt, &format!("{}_", INPUT_NAMES[i]));
        dtype::gen_load_from(
            &mut w,
            &format!("load_{}", INPUT_NAMES[i]),
            &bufs[1 + i],
            dt,
        );
        w.blank();
    }
    gen_codec(&mut w, out_dt, "out_");
    gen_expr_helpers(&mut w, &[e.value], &env);
    w.blank();
    if !dtype::is_packed(out_dt) {
        dtype::gen_store_to(&mut w, "store_output", &bufs[n + 1], out_dt);
        w.blank();
    }
    let ct = compute_type(out_dt);
    let raws: Vec<String> = (0..n)
        .map(|i| format!("r{i}: {}", dtype::raw_type(in_dts[i])))
        .collect();
    w.comment("The output element of the raw input elements r0..");
    w.open(format!("fn value_raw({}) -> {ct}", raws.join(", ")));
    for (i, name) in INPUT_NAMES[..n].iter().enumerate() {
        w.line(format!("let v{i} = {name}_decode(r{i});"));
    }
    let var = |v: Var| match Var::INPUTS.iter().position(|&x| x == v) {
        Some(i) => format!("v{i}"),
        None => "0".to_string(),
    };
    w.line(format!("return {};", scalar_wgsl(e.value, &env, &var)));
    w.close();
    w.blank();
    let args: Vec<String> = (0..n).map(|i| format!("at{i}: u32")).collect();
    let loads: Vec<String> = INPUT_NAMES[..n]
        .iter()
        .enumerate()
        .map(|(i, name)| format!("load_{name}(at{i})"))
        .collect();
    w.comment("The output element of the input elements at0.. (element offsets).");
    w.open(format!("fn value_of({}) -> {ct}", args.join(", ")));
    w.line(format!("return value_raw({});", loads.join(", ")));
    w.close();
    w.blank();
    let offsets = |w: &mut Writer, at: &dyn Fn(usize) -> String| {
        let ats: Vec<String> = (0..n).map(at).collect();
        w.line(format!("return value_of({});", ats.join(", ")));
    };
    match schedule {
        Schedule::Walk => {
            w.comment("Output element o: its merged coordinates, last dimension first, times");
            w.comment("each input's strides; the first needs no division.");
            w.open(format!("fn value_at(o: u32) -> {ct}"));
            w.line("var rest = o;");
            for i in 0..n {
                w.line(format!("var at{i} = 0u;"));
            }
            w.block(
                "for (var d = param(P_RANK) - 1u; d > 0u; d = d - 1u)",
                |w| {
                    w.line("let s = param(P_SIZES + d);");
                    w.line("let q = rest / s;");
                    w.line("let c = rest - q * s;");
                    for i in 0..n {
                        w.line(format!(
                            "at{i} = at{i} + c * param(P_STRIDES + {}u + d);",
                            8 * i
                        ));
                    }
                    w.line("rest = q;");
                },
            );
            offsets(&mut w, &|i| {
                format!("at{i} + rest * param(P_STRIDES + {}u)", 8 * i)
            });
            w.close();
            w.blank();
            w.comment("Output work item `item` (an element, or a word of 8- and 16-bit ones).");
            w.open("fn walk_item(item: u32, outputs: u32)");
            crate::wgsl::store_item(&mut w, out_dt, &bufs[n + 1], &|i| {
                format!("out_encode(value_at({i}))")
            });
            w.close();
        }
        Schedule::Rows => {
            w.comment("Row r, column c of the two merged dimensions.");
            w.open(format!("fn value_rc(r: u32, c: u32) -> {ct}"));
            offsets(&mut w, &|i| {
                format!(
                    "r * param(P_STRIDES + {}u) + c * param(P_STRIDES + {}u)",
                    8 * i,
                    8 * i + 1
                )
            });
            w.close();
        }
        Schedule::Vectors => {
            gen_vector_item(&mut w, &in_dts, out_dt, &bufs);
        }
        Schedule::Flat => {
            gen_flat_item(&mut w, &in_dts, out_dt, &bufs);
        }
    }
    w.blank();
    gen_entry(&mut w, schedule, out_dt, &bufs[n + 1]);
    w.finish_kernel()
}

/// `fn vector_item(row: u32, c: u32, v: u32)`: output vector item `v` of
/// [`Schedule::Vectors`](super::Schedule), column vector `c` of row `row`.
/// Each input's words of the item ([`gen_item_input`]): where the input
/// walks the row (column stride 1, its rows starting on a whole vector),
/// from its row's first (`row * row_stride`) plus the item's; where it
/// repeats along the row (column stride 0), its element of the row. A
/// workgroup's threads share their row, so a repeated element is one
/// address in every thread of a workgroup.
fn gen_vector_item(w: &mut Writer, in_dts: &[DataType], out: DataType, bufs: &[Buffer]) {
    let g = vector_elements(out) as usize;
    w.open("fn vector_item(row: u32, c: u32, v: u32)");
    for (i, &dt) in in_dts.iter().enumerate() {
        let words = g * dt.size_bytes() / 4;
        w.line(format!("let at{i} = row * param(P_STRIDES + {}u);", 8 * i));
        // The row's first unit of the input (its rows start on a whole
        // vector of the item's), then the item's.
        let (per_unit, units) = if words >= 4 {
            (16 / dt.size_bytes(), words / 4)
        } else {
            (4 / dt.size_bytes(), words)
        };
        let item = if units == 1 {
            "c".to_string()
        } else {
            format!("c * {units}u")
        };
        let base = format!("at{i} / {per_unit}u + {item}");
        gen_item_input(
            w,
            i,
            dt,
            words,
            &bufs[1 + i],
            8 * i + 1,
            &format!("at{i}"),
            &base,
        );
    }
    gen_vector_store(w, in_dts, out, bufs);
    w.close();
}

/// `fn flat_item(v: u32)`: output vector item `v` of
/// [`Schedule::Flat`](super::Schedule): each input's words of the item
/// ([`gen_item_input`]) at the item's own index where the input is laid
/// out as the output (stride 1), or its one element (stride 0), the same
/// address in every thread.
fn gen_flat_item(w: &mut Writer, in_dts: &[DataType], out: DataType, bufs: &[Buffer]) {
    let g = vector_elements(out) as usize;
    w.open("fn flat_item(v: u32)");
    for (i, &dt) in in_dts.iter().enumerate() {
        let words = g * dt.size_bytes() / 4;
        let units = if words >= 4 { words / 4 } else { words };
        let base = if units == 1 {
            "v".to_string()
        } else {
            format!("v * {units}u")
        };
        gen_item_input(w, i, dt, words, &bufs[1 + i], 8 * i, "0u", &base);
    }
    gen_vector_store(w, in_dts, out, bufs);
    w.close();
}

/// Fills the register array `a{i}` with input `i`'s `words` words of a
/// vector item: where parameter word `stride` is 0, its element `at` (an
/// element index) read once and repeated in words of its layout; else the
/// item's words from `base` on (`vec4<u32>` units where the item holds
/// whole vectors, words otherwise). The branch is uniform (a parameter
/// word: every thread of a call takes the same side), and the code
/// straight-line: every array index is a constant, so the array lives in
/// registers whether or not a compiler unrolls loops.
#[allow(clippy::too_many_arguments)]
fn gen_item_input(
    w: &mut Writer,
    i: usize,
    dt: DataType,
    words: usize,
    buf: &Buffer,
    stride: usize,
    at: &str,
    base: &str,
) {
    let xyzw = ["x", "y", "z", "w"];
    w.line(format!("var a{i}: array<u32, {words}>;"));
    w.open(format!("if (param(P_STRIDES + {stride}u) == 0u)"));
    let splat: Vec<String> = match dt.size_bytes() {
        8 => vec![
            buf.word(&format!("{at} * 2u")),
            buf.word(&format!("{at} * 2u + 1u")),
        ],
        4 => vec![buf.word(at)],
        2 => vec![format!(
            "(({} >> (({at} & 1u) * 16u)) & 0xffffu) * 0x00010001u",
            buf.word(&format!("{at} >> 1u"))
        )],
        _ => vec![format!(
            "(({} >> (({at} & 3u) * 8u)) & 0xffu) * 0x01010101u",
            buf.word(&format!("{at} >> 2u"))
        )],
    };
    for (k, value) in splat.iter().enumerate() {
        w.line(format!("let s{k} = {value};"));
    }
    for m in 0..words {
        w.line(format!("a{i}[{m}u] = s{};", m % splat.len()));
    }
    w.reopen("else");
    w.line(format!("let base = {base};"));
    let unit = |k: usize| match k {
        0 => "base".to_string(),
        k => format!("base + {k}u"),
    };
    if words >= 4 {
        for k in 0..words / 4 {
            w.line(format!("let q{k} = {};", buf.vector(&unit(k))));
            for (c, x) in xyzw.iter().enumerate() {
                w.line(format!("a{i}[{}u] = q{k}.{x};", 4 * k + c));
            }
        }
    } else {
        for m in 0..words {
            w.line(format!("a{i}[{m}u] = {};", buf.word(&unit(m))));
        }
    }
    w.close();
}

/// The rest of a vector item's function: each of the item's elements
/// takes its inputs' elements from the register arrays `a0..` (the item's
/// words of each input), and the output words, assembled from the
/// elements, are stored as one vector at `v` (two of 64-bit outputs).
fn gen_vector_store(w: &mut Writer, in_dts: &[DataType], out: DataType, bufs: &[Buffer]) {
    let g = vector_elements(out) as usize;
    let xyzw = ["x", "y", "z", "w"];
    for j in 0..g {
        let raws: Vec<String> = in_dts
            .iter()
            .enumerate()
            .map(|(i, dt)| match dt.size_bytes() {
                8 => format!("vec2<u32>(a{i}[{}u], a{i}[{}u])", 2 * j, 2 * j + 1),
                4 => format!("a{i}[{j}u]"),
                2 => format!("((a{i}[{}u] >> {}u) & 0xffffu)", j / 2, (j % 2) * 16),
                _ => format!("((a{i}[{}u] >> {}u) & 0xffu)", j / 4, (j % 4) * 8),
            })
            .collect();
        w.line(format!(
            "let e{j} = out_encode(value_raw({}));",
            raws.join(", ")
        ));
    }
    let out_words = g * out.size_bytes() / 4;
    let word = |m: usize| match out.size_bytes() {
        8 => format!("e{}.{}", m / 2, xyzw[m % 2]),
        4 => format!("e{m}"),
        2 => format!("(e{} | (e{} << 16u))", 2 * m, 2 * m + 1),
        _ => format!(
            "(e{} | (e{} << 8u) | (e{} << 16u) | (e{} << 24u))",
            4 * m,
            4 * m + 1,
            4 * m + 2,
            4 * m + 3
        ),
    };
    let output = &bufs[bufs.len() - 1];
    for k in 0..out_words / 4 {
        let index = if out_words > 4 {
            format!("{}u * v + {k}u", out_words / 4)
        } else {
            "v".to_string()
        };
        let value = format!(
            "vec4<u32>({}, {}, {}, {})",
            word(4 * k),
            word(4 * k + 1),
            word(4 * k + 2),
            word(4 * k + 3)
        );
        w.line(output.store_vector(&index, &value));
    }
}

/// The entry point of `schedule`'s kernel:
///
/// - [`Schedule::Walk`]: `ELEMENTS_PER_THREAD` items a thread,
///   `WORKGROUP_SIZE` apart from `P_FIRST`, each walking its coordinates;
/// - [`Schedule::Rows`]: a workgroup takes `ELEMENTS_PER_THREAD *
///   WORKGROUP_SIZE` items of one row (rows hold whole output words), its
///   row and block from its index, once;
/// - [`Schedule::Vectors`]: the same, an item a whole output vector (after
///   one merged dimension's last whole vector, the plan's walk pass takes
///   the rest).
fn gen_entry(w: &mut Writer, schedule: Schedule, out: DataType, output: &Buffer) {
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {ELEMENTWISE_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let work = param(P_WORK_COUNT);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    let lanes = 4 / out.size_bytes().min(4);
    match schedule {
        Schedule::Vectors => {
            w.line("let row_blocks = param(P_ROW_BLOCKS);");
            w.line("let row = group / row_blocks;");
            w.line("let c = (group - row * row_blocks) * WORKGROUP_SIZE + lid;");
            w.line("let row_items = param(P_ROW_ITEMS);");
            w.block("if (row < param(P_ROWS) && c < row_items)", |w| {
                w.line("vector_item(row, c, row * row_items + c);");
            });
        }
        Schedule::Rows => {
            w.line("let row_blocks = param(P_ROW_BLOCKS);");
            w.line("let row = group / row_blocks;");
            w.block("if (row >= param(P_ROWS))", |w| {
                w.line("return;");
            });
            w.line("let row_items = param(P_ROW_ITEMS);");
            w.line("let first_col = (group - row * row_blocks) * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;");
            w.line("let row_start = row * row_items;");
            w.line(format!("let row_first = row_start * {lanes}u;"));
            w.block(
                "for (var k = 0u; k < ELEMENTS_PER_THREAD; k = k + 1u)",
                |w| {
                    w.line("let col = first_col + k * WORKGROUP_SIZE;");
                    w.block("if (col >= row_items)", |w| {
                        w.line("return;");
                    });
                    w.line("let item = row_start + col;");
                    crate::wgsl::store_item(w, out, output, &|i| {
                        format!("out_encode(value_rc(row, {i} - row_first))")
                    });
                },
            );
        }
        Schedule::Flat => {
            w.line("let v = group * WORKGROUP_SIZE + lid;");
            w.block("if (v < param(P_VECTORS))", |w| {
                w.line("flat_item(v);");
            });
        }
        Schedule::Walk => {
            w.line(
                "let first = param(P_FIRST) + group * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;",
            );
            crate::wgsl::each_item(w, |w| {
                w.line("walk_item(item, outputs);");
            });
        }
    }
    w.close();
}

#[cfg(test)]
mod tests {
    use super::super::vectorizes;
    use super::*;
    use crate::scalar::{Binary, Scalar, Ty};

    static SELECT: Scalar = Scalar::Select(
        &Scalar::Var(Var::In0),
        &Scalar::Binary(Binary::Add, &Scalar::Var(Var::In1), &Scalar::Var(Var::In2)),
        &Scalar::Var(Var::In2),
    );

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        let where_add = Elementwise {
            value: &SELECT,
            types: &[Ty::Data(DataType::Bool), Ty::T, Ty::T, Ty::T],
            accuracy: None,
        };
        static NEG: Scalar = Scalar::Unary(crate::scalar::Unary::Neg, &Scalar::Var(Var::In0));
        let neg = Elementwise {
            value: &NEG,
            types: &[Ty::T, Ty::T],
            accuracy: None,
        };
        // The widest: seven inputs and the output, core WebGPU's 8 storage
        // buffers per stage.
        static SUM7: Scalar = {
            use crate::scalar::Binary::Add;
            const V: [Scalar; 7] = [
                Scalar::Var(Var::In0),
                Scalar::Var(Var::In1),
                Scalar::Var(Var::In2),
                Scalar::Var(Var::In3),
                Scalar::Var(Var::In4),
                Scalar::Var(Var::In5),
                Scalar::Var(Var::In6),
            ];
            const A: Scalar = Scalar::Binary(Add, &V[0], &V[1]);
            const B: Scalar = Scalar::Binary(Add, &A, &V[2]);
            const C: Scalar = Scalar::Binary(Add, &B, &V[3]);
            const D: Scalar = Scalar::Binary(Add, &C, &V[4]);
            const E: Scalar = Scalar::Binary(Add, &D, &V[5]);
            Scalar::Binary(Add, &E, &V[6])
        };
        let sum7 = Elementwise {
            value: &SUM7,
            types: &[Ty::T; MAX_INPUTS + 1],
            accuracy: None,
        };
        assert_eq!(
            crate::family::elementwise::bindings(MAX_INPUTS).len(),
            MAX_INPUTS + 2
        );
        for data in DataType::ALL {
            for (e, schedule) in [&where_add, &neg, &sum7]
                .into_iter()
                .flat_map(|e| Schedule::ALL.map(|s| (e, s)))
                .filter(|&(e, s)| {
                    !matches!(s, Schedule::Vectors | Schedule::Flat) || vectorizes(e, &[data])
                })
            {
                let key = elementwise_kernel_key("T", schedule, &[data]);
                let text = elementwise_kernel(e, schedule, &[data], &key, "test", "test");
                crate::wgsl::validated_module(
                    &key,
                    segments::plain_part(&text),
                    ELEMENTWISE_ENTRY,
                    WORKGROUP_SIZE,
                );
                if let Some((_, segmented)) = segments::segmented_part(&text) {
                    crate::wgsl::validated_module(
                        &key,
                        segmented,
                        ELEMENTWISE_ENTRY,
                        WORKGROUP_SIZE,
                    );
                }
            }
        }
    }
}
