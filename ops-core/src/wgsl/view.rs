//! WGSL kernels of the `view` pattern ([`crate::patterns::view`]).
//!
//! One kernel per data type. Bindings of group 0: `params` (uniform, the
//! words of [`crate::patterns::view::params`]), `input: array<u32>` (read),
//! `output: array<u32>` (read_write). A work item is an output element
//! (32- and 64-bit data) or an output `u32` word of 4 or 2 elements (8- and
//! 16-bit data, assembled in a register and stored once, no atomics). Its
//! source offset is `offset + sum((c_d mod wrap_d) * stride_d)` over its
//! coordinates in the plan's merged dimensions (a loop over the `RANK`
//! word, no unused slots; divisions by the sizes and wraps through the
//! plan's [`crate::patterns::divisor::Divisor`]s), in wrapping `u32`
//! arithmetic, exact because the plan checked the sum to lie within the
//! input.

use crate::patterns::view::{params, ELEMENTS_PER_THREAD, WORKGROUP_SIZE};
use crate::DataType;

use super::dtype;
use super::segments::{self, Buffer, Layout};
use super::writer::Writer;

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

/// The complete WGSL of one kernel: the module and its segmented variant.
pub fn view_kernel(data: DataType, key: &str, origin: &str) -> String {
    segments::combined(view_kernel_text(data, key, origin))
}

/// The parts of [`view_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn view_kernel_text(data: DataType, key: &str, origin: &str) -> crate::KernelText {
    let plain = module(data, key, origin, Layout::Plain);
    let segmented = module(data, key, origin, Layout::Segmented);
    segments::kernel_text(plain, segmented, &BUFFERS)
}

fn module(data: DataType, key: &str, origin: &str, layout: Layout) -> String {
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!("view: data {data}"));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    w.line(format!(
        "const ELEMENTS_PER_THREAD: u32 = {ELEMENTS_PER_THREAD}u;"
    ));
    for (name, word) in [
        ("P_OUTPUT_COUNT", params::OUTPUT_COUNT),
        ("P_WORK_COUNT", params::WORK_COUNT),
        ("P_OFFSET", params::OFFSET),
        ("P_RANK", params::RANK),
        ("P_SIZES", params::SIZES),
        ("P_STRIDES", params::STRIDES),
        ("P_WRAPS", params::WRAPS),
        ("P_SIZE_MAGIC", params::SIZE_MAGIC),
        ("P_SIZE_SHIFTS", params::SIZE_SHIFTS),
        ("P_WRAP_MAGIC", params::WRAP_MAGIC),
        ("P_WRAP_SHIFTS", params::WRAP_SHIFTS),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.blank();
    segments::declare(&mut w, &BUFFERS, layout);
    w.blank();
    segments::gen_accessors(&mut w, &BUFFERS, layout);
    w.lines(crate::patterns::divisor::WGSL);
    w.blank();
    dtype::gen_load_from(&mut w, "load_input", &BUFFERS[1], layout, data);
    w.blank();
    if !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[2], layout, data);
        w.blank();
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
    super::gen_output_entry(&mut w, VIEW_ENTRY, data, &BUFFERS[2], layout, &[], &|i| {
        format!("load_input(source_of({i}))")
    });
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        for data in DataType::ALL {
            let key = view_kernel_key("T", data);
            let text = view_kernel(data, &key, "test");
            let (_, segmented) = segments::segmented_part(&text)
                .unwrap_or_else(|| panic!("{key}: no segmented variant"));
            for wgsl in [segments::plain_part(&text), segmented] {
                crate::wgsl::validated_module(&key, wgsl, VIEW_ENTRY, WORKGROUP_SIZE);
            }
        }
    }
}
