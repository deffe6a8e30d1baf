//! WGSL kernels of the `view` and `split` families ([`super`]).
//!
//! One kernel per data type. Bindings of group 0: `params` (uniform, the
//! words of [`super::params`]), `input: array<u32>` (read),
//! `output: array<u32>` (read_write). A work item is an output element
//! (32- and 64-bit data) or an output `u32` word of 4 or 2 elements (8- and
//! 16-bit data, assembled in a register and stored once, no atomics). Its
//! source offset is `offset + sum((c_d mod wrap_d) * stride_d)` over its
//! coordinates in the plan's merged dimensions (a loop over the `RANK`
//! word, no unused slots; divisions by the sizes and wraps through the
//! plan's [`crate::family::divisor::Divisor`]s), in wrapping `u32`
//! arithmetic, exact because the plan checked the sum to lie within the
//! input.
//!
//! The tiled kernels ([`Schedule::Tiled`], [`view_tiled_kernel`]; their own
//! kernels, so that the walk's carry no workgroup memory and no barrier)
//! bind the same buffers and read the same parameter words. A workgroup
//! moves one [`TILE`] x [`TILE`] tile of one matrix through `var<workgroup>
//! tile` (`TILE * (TILE + 1)` raw elements; 8- and 16-bit elements held
//! one a word), its matrix and tile from the workgroup's index. Reading,
//! consecutive threads take consecutive input words of one input row (an
//! output column); after a `workgroupBarrier`, consecutive threads write
//! consecutive output words of one output row, each word packed from 1, 2
//! or 4 tile elements. A whole workgroup past the last tile returns
//! before the barrier (its index is uniform).
//!
//! [`Schedule::Tiled`]: super::Schedule::Tiled

use super::{block_side, params, BLOCK_GRID, ELEMENTS_PER_THREAD, TILE, WORKGROUP_SIZE};
use crate::DataType;

use crate::wgsl::dtype;
use crate::wgsl::segments::{self, Buffer};
use crate::wgsl::writer::Writer;

/// The entry point's name.
pub const VIEW_ENTRY: &str = "main";

const BUFFERS: [Buffer<'static>; 3] = [
    Buffer::params(),
    Buffer::read("input", true),
    Buffer::read_write("output", false, true),
];

/// The kernel key by the framework's convention, `{operator}/view/{DATA}`.
pub fn view_kernel_key(operator: &str, data: DataType) -> String {
    format!("{operator}/view/{}", data.spec_name())
}

/// The tiled kernel's key, `{operator}/view_tiled/{DATA}`.
pub fn view_tiled_kernel_key(operator: &str, data: DataType) -> String {
    format!("{operator}/view_tiled/{}", data.spec_name())
}

/// The complete WGSL of one kernel: the module and its segmented variant.
pub fn view_kernel(data: DataType, key: &str, origin: &str) -> String {
    segments::combined(view_kernel_text(data, key, origin))
}

/// The parts of [`view_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn view_kernel_text(data: DataType, key: &str, origin: &str) -> crate::KernelText {
    module(data, key, origin, false)
}

/// The complete WGSL of one tiled kernel
/// ([`super::Schedule::Tiled`]): the module and its
/// segmented variant.
pub fn view_tiled_kernel(data: DataType, key: &str, origin: &str) -> String {
    segments::combined(view_tiled_kernel_text(data, key, origin))
}

/// The parts of [`view_tiled_kernel`], for a kernel generated on first
/// use ([`crate::Kernel::generated`]).
pub fn view_tiled_kernel_text(data: DataType, key: &str, origin: &str) -> crate::KernelText {
    module(data, key, origin, true)
}

/// The blocks kernel's key, `{operator}/view_blocks/{DATA}`.
pub fn view_blocks_kernel_key(operator: &str, data: DataType) -> String {
    format!("{operator}/view_blocks/{}", data.spec_name())
}

/// The buffers of the blocks kernel: its tensors bound as vectors.
const VECTOR_BUFFERS: [Buffer<'static>; 3] = [
    Buffer::params(),
    Buffer::read_vec4("input"),
    Buffer::read_write_vec4("output"),
];

/// The complete WGSL of one blocks kernel ([`super::Schedule::Blocks`]):
/// the module and its segmented variant.
pub fn view_blocks_kernel(data: DataType, key: &str, origin: &str) -> String {
    segments::combined(view_blocks_kernel_text(data, key, origin))
}

/// The parts of [`view_blocks_kernel`], for a kernel generated on first
/// use ([`crate::Kernel::generated`]).
pub fn view_blocks_kernel_text(data: DataType, key: &str, origin: &str) -> crate::KernelText {
    blocks_module(data, key, origin)
}

/// The module of [`super::Schedule::Blocks`]: a thread loads the `S`
/// input vectors of its block (input rows `c` to `c + S - 1`, elements
/// `r` to `r + S - 1` of each), and stores output row `r + i` as element
/// `i` of each, in order; `S` ([`block_side`]) and the element's place in
/// a vector are constants, so the transpose is straight-line register
/// moves.
fn blocks_module(data: DataType, key: &str, origin: &str) -> crate::KernelText {
    let side = block_side(data);
    let mut w = Writer::new();
    crate::family::Prologue {
        origin,
        key,
        what: &[format!("view: data {data}, blocks of {side} x {side}")],
        workgroup_size: WORKGROUP_SIZE,
        elements_per_thread: Some(ELEMENTS_PER_THREAD),
        words: params::WGSL,
        consts: &[
            (
                "Elements a vector holds: a block's side.",
                &format!("const SIDE: u32 = {side}u;"),
            ),
            (
                "Blocks across a workgroup's tile.",
                &format!("const GRID: u32 = {BLOCK_GRID}u;"),
            ),
        ],
        buffers: &VECTOR_BUFFERS,
    }
    .write(&mut w);
    let (input, output) = (&VECTOR_BUFFERS[1], &VECTOR_BUFFERS[2]);
    w.blank();
    w.comment("Output element (b, r, c) is input element offset + b * MATRIX_STRIDE + r +");
    w.comment("c * ROW_LENGTH; the workgroup's matrix and tile from its index, the");
    w.comment("thread's block (its first row r and column c) from its local index.");
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {VIEW_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let matrix_tiles = param(P_MATRIX_TILES);");
    w.line("let b = group / matrix_tiles;");
    w.line("let t = group - b * matrix_tiles;");
    w.line("let column_tiles = param(P_COLUMN_TILES);");
    w.line("let tile_row = t / column_tiles;");
    w.line("let r = (tile_row * GRID + lid / GRID) * SIDE;");
    w.line("let c = ((t - tile_row * column_tiles) * GRID + lid % GRID) * SIDE;");
    w.line("let rows = param(P_ROWS);");
    w.line("let columns = param(P_COLUMNS);");
    w.block(
        "if (b >= param(P_MATRICES) || r >= rows || c >= columns)",
        |w| {
            w.line("return;");
        },
    );
    w.line("let at = param(P_OFFSET) + b * param(P_MATRIX_STRIDE) + r + c * param(P_ROW_LENGTH);");
    w.line("let step = param(P_ROW_LENGTH) / SIDE;");
    w.line("let first = at / SIDE;");
    for j in 0..side {
        w.line(format!(
            "let v{j} = {};",
            input.vector(&format!("first + {j}u * step"))
        ));
    }
    w.line("let out = ((b * rows + r) * columns + c) / SIDE;");
    w.line("let out_step = columns / SIDE;");
    // Element `i` of vector `v`, as raw bits in the low bits of a word
    // (32-bit and narrower data).
    let bits = data.size_bits();
    let lanes = 32 / bits.min(32);
    let element = |v: u32, i: u32| -> String {
        match bits {
            32 => format!("v{v}[{i}]"),
            _ => {
                let shift = (i % lanes) * bits;
                let mask = (1u64 << bits) - 1;
                format!("((v{v}[{}] >> {shift}u) & {mask:#x}u)", i / lanes)
            }
        }
    };
    for i in 0..side {
        let words: Vec<String> = match bits {
            // Element i of a vector is words 2i and 2i + 1.
            64 => (0..4)
                .map(|k| format!("v{}[{}]", k / 2, 2 * i + k % 2))
                .collect(),
            _ => (0..4)
                .map(|k| {
                    let parts: Vec<String> = (0..lanes)
                        .map(|e| {
                            let x = element(k * lanes + e, i);
                            match e * bits {
                                0 => x,
                                s => format!("({x} << {s}u)"),
                            }
                        })
                        .collect();
                    parts.join(" | ")
                })
                .collect(),
        };
        w.line(output.store_vector(
            &format!("out + {i}u * out_step"),
            &format!("vec4<u32>({})", words.join(", ")),
        ));
    }
    w.close();
    w.finish_kernel()
}

/// The module of the walk, or of the tiled transpose when `tiled`.
fn module(data: DataType, key: &str, origin: &str, tiled: bool) -> crate::KernelText {
    let mut w = Writer::new();
    crate::family::Prologue {
        origin,
        key,
        what: &[format!(
            "view: data {data}, {}",
            if tiled { "tiled" } else { "walk" }
        )],
        workgroup_size: WORKGROUP_SIZE,
        elements_per_thread: Some(ELEMENTS_PER_THREAD),
        words: params::WGSL,
        consts: &[],
        buffers: &BUFFERS,
    }
    .write(&mut w);
    if !tiled {
        w.lines(crate::family::divisor::WGSL);
    }
    w.blank();
    dtype::gen_load_from(&mut w, "load_input", &BUFFERS[1], data);
    w.blank();
    if !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[2], data);
        w.blank();
    }
    if tiled {
        gen_transpose_tile(&mut w, data);
        w.blank();
        w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
        w.open(format!(
            "fn {VIEW_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
        ));
        w.line("transpose_tile(wg.x + wg.y * num_workgroups.x, lid);");
        w.close();
        return w.finish_kernel();
    }
    w.comment("The input element output element o reads: its merged coordinates");
    w.comment("(last dimension first), each wrapped, times the strides, plus the");
    w.comment("offset. The outermost coordinate is what the divisions leave.");
    w.open("fn source_of(o: u32) -> u32");
    w.line("var rest = o;");
    w.line("var offset = param(P_OFFSET);");
    w.line("let rank = param(P_RANK);");
    w.block("for (var d = rank - 1u; d > 0u; d = d - 1u)", |w| {
        w.line("let q = divide(rest, param(P_SIZE_MAGIC + d), param(P_SIZE_SHIFTS + d));");
        w.line("var c = rest - q * param(P_SIZES + d);");
        w.line("rest = q;");
        w.line("let w = param(P_WRAPS + d);");
        w.block("if (w != 0u)", |w| {
            w.line("c = c - divide(c, param(P_WRAP_MAGIC + d), param(P_WRAP_SHIFTS + d)) * w;");
        });
        w.line("offset = offset + c * param(P_STRIDES + d);");
    });
    w.line("let w0 = param(P_WRAPS);");
    w.block("if (w0 != 0u)", |w| {
        w.line("rest = rest - divide(rest, param(P_WRAP_MAGIC), param(P_WRAP_SHIFTS)) * w0;");
    });
    w.line("return offset + rest * param(P_STRIDES);");
    w.close();
    w.blank();
    crate::wgsl::gen_output_entry(&mut w, VIEW_ENTRY, data, &BUFFERS[2], &[], &|i| {
        format!("load_input(source_of({i}))")
    });
    w.finish_kernel()
}

/// Writes the tile's constants and workgroup memory and `fn
/// transpose_tile(group: u32, lid: u32)`, which moves tile `group` of
/// [`super::Schedule::Tiled`].
fn gen_transpose_tile(w: &mut Writer, data: DataType) {
    let lanes = if dtype::is_packed(data) {
        32 / data.size_bits()
    } else {
        1
    };
    let raw = if dtype::is_packed(data) {
        "u32"
    } else {
        dtype::raw_type(data)
    };
    w.line(format!("const TILE: u32 = {TILE}u;"));
    w.comment("A tile row's pitch: one element more, so that a column of the tile");
    w.comment("spreads over the memory banks.");
    w.line("const TILE_PITCH: u32 = TILE + 1u;");
    w.comment("Elements a word; a tile row of TILE elements is TILE_WORDS words.");
    w.line(format!("const LANES: u32 = {lanes}u;"));
    w.line("const TILE_WORDS: u32 = TILE / LANES;");
    w.line("const WORDS_PER_THREAD: u32 = TILE * TILE_WORDS / WORKGROUP_SIZE;");
    w.line(format!(
        "var<workgroup> tile: array<{raw}, {}>;",
        TILE * (TILE + 1)
    ));
    w.blank();
    w.comment("Tile `group` of a batched transpose: output element (b, r, c) is input");
    w.comment("element offset + b * MATRIX_STRIDE + r + c * ROW_LENGTH. Read along");
    w.comment("the input's rows (r), write along the output's (c).");
    w.open("fn transpose_tile(group: u32, lid: u32)");
    w.line("let matrix_tiles = param(P_MATRIX_TILES);");
    w.line("let b = group / matrix_tiles;");
    w.block("if (b >= param(P_MATRICES))", |w| {
        w.line("return;");
    });
    w.line("let t = group - b * matrix_tiles;");
    w.line("let tile_row = t / param(P_COLUMN_TILES);");
    w.line("let r0 = tile_row * TILE;");
    w.line("let c0 = (t - tile_row * param(P_COLUMN_TILES)) * TILE;");
    w.line("let rows = param(P_ROWS);");
    w.line("let columns = param(P_COLUMNS);");
    w.line("let row_length = param(P_ROW_LENGTH);");
    w.line("let base = param(P_OFFSET) + b * param(P_MATRIX_STRIDE);");
    w.comment("Tile element (c - c0, r - r0) at tile[(c - c0) * TILE_PITCH + r - r0].");
    w.block("for (var k = 0u; k < WORDS_PER_THREAD; k = k + 1u)", |w| {
        w.line("let u = lid + k * WORKGROUP_SIZE;");
        w.line("let lc = u / TILE_WORDS;");
        w.line("let lr = (u % TILE_WORDS) * LANES;");
        w.line("let c = c0 + lc;");
        w.line("let r = r0 + lr;");
        w.block("if (c < columns && r < rows)", |w| {
            w.line("let i = base + c * row_length + r;");
            if lanes == 1 {
                w.line("tile[lc * TILE_PITCH + lr] = load_input(i);");
            } else {
                // The word holding element i (a whole word of the
                // input row, whose elements past `rows` stay unused).
                let width = data.size_bits();
                let mask = dtype::lane_mask(data).expect("a packed type");
                w.line(format!("let word = {};", BUFFERS[1].word("i / LANES")));
                w.block("for (var e = 0u; e < LANES; e = e + 1u)", |w| {
                    w.line(format!(
                        "tile[lc * TILE_PITCH + lr + e] = (word >> (e * {width}u)) & {mask};"
                    ));
                });
            }
        });
    });
    w.line("workgroupBarrier();");
    w.block("for (var k = 0u; k < WORDS_PER_THREAD; k = k + 1u)", |w| {
        w.line("let u = lid + k * WORKGROUP_SIZE;");
        w.line("let lr = u / TILE_WORDS;");
        w.line("let lc = (u % TILE_WORDS) * LANES;");
        w.line("let r = r0 + lr;");
        w.line("let c = c0 + lc;");
        w.block("if (r < rows && c < columns)", |w| {
            w.line("let o = (b * rows + r) * columns + c;");
            if lanes == 1 {
                w.line("store_output(o, tile[lc * TILE_PITCH + lr]);");
            } else {
                // `columns` is whole words: every lane is an element
                // of this row.
                let width = data.size_bits();
                w.line("var word = 0u;");
                w.block("for (var e = 0u; e < LANES; e = e + 1u)", |w| {
                    w.line(format!(
                        "word = word | (tile[(lc + e) * TILE_PITCH + lr] << (e * {width}u));"
                    ));
                });
                w.line(BUFFERS[2].set("o / LANES", "word"));
            }
        });
    });
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        for data in DataType::ALL {
            for (key, text) in [
                (
                    view_kernel_key("T", data),
                    view_kernel as fn(_, &_, &_) -> _,
                ),
                (view_tiled_kernel_key("T", data), view_tiled_kernel),
                (view_blocks_kernel_key("T", data), view_blocks_kernel),
            ] {
                let text = text(data, &key, "test");
                let (_, segmented) = segments::segmented_part(&text)
                    .unwrap_or_else(|| panic!("{key}: no segmented variant"));
                for wgsl in [segments::plain_part(&text), segmented] {
                    crate::wgsl::validated_module(&key, wgsl, VIEW_ENTRY, WORKGROUP_SIZE);
                }
                // Only the tiled kernel has workgroup memory and a barrier.
                let tiled = key.contains("view_tiled");
                assert_eq!(text.contains("workgroupBarrier"), tiled, "{key}");
                assert_eq!(text.contains("var<workgroup>"), tiled, "{key}");
            }
        }
    }
}
