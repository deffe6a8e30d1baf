//! WGSL kernels of the `pad` pattern ([`super`]).
//!
//! One kernel per data type and [`PadMode`]. Bindings of group 0: `params`
//! (uniform, the words of [`super::params`]), `input:
//! array<u32>` (read), `output: array<u32>` (read_write). A work item is an
//! output element (32- and 64-bit data) or an output `u32` word of 4 or 2
//! elements (8- and 16-bit data, assembled in a register and stored once).
//! Each element walks its coordinates from the last dimension, unrolled
//! over every dimension slot (unused ones have sizes 1, padding 0 and
//! stride 0), maps each into the cropped input as the mode says (signed
//! `i32` arithmetic, Euclidean remainders) and reads that element, offset
//! by the crop, or takes the constant from the parameter words.

use super::{params, PadMode, ELEMENTS_PER_THREAD, MAX_DIMS, WORKGROUP_SIZE};
use crate::DataType;

use crate::wgsl::dtype;
use crate::wgsl::segments::{self, Buffer};
use crate::wgsl::writer::Writer;

/// The entry point's name.
pub const PAD_ENTRY: &str = "main";

const BUFFERS: [Buffer<'static>; 3] = [
    Buffer::params(),
    Buffer::read("input", true),
    Buffer::read_write("output", false, true),
];

/// The kernel key by the framework's convention,
/// `{operator}/pad_{mode}/{DATA}`.
pub fn pad_kernel_key(operator: &str, mode: PadMode, data: DataType) -> String {
    format!("{operator}/pad_{}/{}", mode.name(), data.spec_name())
}

/// The complete WGSL of one kernel: the module and its segmented variant.
pub fn pad_kernel(mode: PadMode, data: DataType, key: &str, origin: &str) -> String {
    segments::combined(pad_kernel_text(mode, data, key, origin))
}

/// The parts of [`pad_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn pad_kernel_text(
    mode: PadMode,
    data: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    module(mode, data, key, origin)
}

fn module(mode: PadMode, data: DataType, key: &str, origin: &str) -> crate::KernelText {
    let mut w = Writer::new();
    crate::family::Prologue {
        origin,
        key,
        what: &[format!("pad ({}): data {data}", mode.name())],
        workgroup_size: WORKGROUP_SIZE,
        elements_per_thread: Some(ELEMENTS_PER_THREAD),
        words: params::WGSL,
        consts: &[(
            "Not an offset: the element is the constant.",
            "const CONSTANT: u32 = 0xffffffffu;",
        )],
        buffers: &BUFFERS,
    }
    .write(&mut w);
    dtype::gen_load_from(&mut w, "load_input", &BUFFERS[1], data);
    w.blank();
    if !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[2], data);
        w.blank();
    }
    let raw = dtype::raw_type(data);
    w.comment("The constant as a raw element.");
    w.open(format!("fn constant() -> {raw}"));
    match data.size_bits() {
        64 => w.line("return vec2<u32>(param(P_CONSTANT), param(P_CONSTANT + 1u));"),
        32 => w.line("return param(P_CONSTANT);"),
        16 => w.line("return param(P_CONSTANT) & 0xffffu;"),
        _ => w.line("return param(P_CONSTANT) & 0xffu;"),
    };
    w.close();
    w.blank();
    w.comment(format!(
        "The input coordinate position i (output coordinate minus the padding) reads in a dimension of n ({}), or CONSTANT.",
        mode.name()
    ));
    w.open("fn source_coordinate(i: i32, n: i32) -> u32");
    w.block("if (i >= 0 && i < n)", |w| {
        w.line("return u32(i);");
    });
    match mode {
        PadMode::Constant => {
            w.line("return CONSTANT;");
        }
        PadMode::Edge => {
            w.line("return u32(clamp(i, 0, max(n - 1, 0)));");
        }
        PadMode::Wrap => {
            w.line("return u32(((i % n) + n) % n);");
        }
        PadMode::Reflect => {
            w.block("if (n == 1)", |w| {
                w.line("return 0u;");
            });
            w.line("let period = 2 * (n - 1);");
            w.line("let k = ((i % period) + period) % period;");
            w.line("return u32(select(period - k, k, k < n));");
        }
        PadMode::Symmetric => {
            w.line("let period = 2 * n;");
            w.line("let k = ((i % period) + period) % period;");
            w.line("return u32(select(period - 1 - k, k, k < n));");
        }
    }
    w.close();
    w.blank();
    w.comment("The input element output element o reads, or CONSTANT.");
    w.open("fn source_of(o: u32) -> u32");
    w.line("var rest = o;");
    w.line("var offset = param(P_CROP_OFFSET);");
    w.line("var outside = false;");
    for d in (0..MAX_DIMS).rev() {
        w.line(format!("let s{d} = max(param(P_OUT_SIZES + {d}u), 1u);"));
        w.line(format!(
            "let j{d} = source_coordinate(i32(rest % s{d}) - bitcast<i32>(param(P_BEGINS + {d}u)), i32(param(P_IN_SIZES + {d}u)));"
        ));
        w.line(format!("outside = outside || j{d} == CONSTANT;"));
        w.line(format!(
            "offset = offset + select(j{d}, 0u, j{d} == CONSTANT) * param(P_STRIDES + {d}u);"
        ));
        if d > 0 {
            w.line(format!("rest = rest / s{d};"));
        }
    }
    w.line("return select(offset, CONSTANT, outside);");
    w.close();
    w.blank();
    w.comment("The output element o: its input element, or the constant.");
    w.open(format!("fn element(o: u32) -> {raw}"));
    w.line("let s = source_of(o);");
    w.block("if (s == CONSTANT)", |w| {
        w.line("return constant();");
    });
    w.line("return load_input(s);");
    w.close();
    w.blank();
    crate::wgsl::gen_output_entry(&mut w, PAD_ENTRY, data, &BUFFERS[2], &[], &|i| {
        format!("element({i})")
    });
    w.finish_kernel()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        for mode in PadMode::ALL {
            for data in DataType::ALL {
                let key = pad_kernel_key("T", mode, data);
                let text = pad_kernel(mode, data, &key, "test");
                let (_, segmented) = segments::segmented_part(&text)
                    .unwrap_or_else(|| panic!("{key}: no segmented variant"));
                for wgsl in [segments::plain_part(&text), segmented] {
                    crate::wgsl::validated_module(&key, wgsl, PAD_ENTRY, WORKGROUP_SIZE);
                }
            }
        }
    }
}
