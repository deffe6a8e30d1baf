//! WGSL kernels of the `view` pattern ([`crate::patterns::view`]).
//!
//! One kernel per data type. Bindings of group 0: `params` (uniform, the
//! words of [`crate::patterns::view::params`]), `input: array<u32>` (read),
//! `output: array<u32>` (read_write). A work item is an output element
//! (32- and 64-bit data) or an output `u32` word of 4 or 2 elements (8- and
//! 16-bit data, assembled in a register and stored once, no atomics). Its
//! source offset is `offset + sum((c_d mod wrap_d) * stride_d)` over its
//! coordinates, unrolled over every dimension slot (unused ones have size
//! 1, stride 0), in wrapping `u32` arithmetic, exact because the plan
//! checked the sum to lie within the input.

use crate::patterns::view::{params, ELEMENTS_PER_THREAD, MAX_DIMS, WORKGROUP_SIZE};
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
        ("P_SIZES", params::SIZES),
        ("P_STRIDES", params::STRIDES),
        ("P_WRAPS", params::WRAPS),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.blank();
    segments::declare(&mut w, &BUFFERS, layout);
    w.blank();
    segments::gen_accessors(&mut w, &BUFFERS, layout);
    dtype::gen_load_from(&mut w, "load_input", &BUFFERS[1], layout, data);
    w.blank();
    if !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[2], layout, data);
        w.blank();
    }
    w.comment("The input element output element o reads: its coordinates (last");
    w.comment("dimension first), each wrapped, times the strides, plus the offset.");
    w.open("fn source_of(o: u32) -> u32");
    w.line("var rest = o;");
    w.line("var offset = param(P_OFFSET);");
    for d in (0..MAX_DIMS).rev() {
        w.line(format!("let s{d} = max(param(P_SIZES + {d}u), 1u);"));
        w.line(format!("var c{d} = rest % s{d};"));
        w.line(format!("let w{d} = param(P_WRAPS + {d}u);"));
        w.block(format!("if (w{d} != 0u)"), |w| {
            w.line(format!("c{d} = c{d} % w{d};"));
        });
        w.line(format!("offset = offset + c{d} * param(P_STRIDES + {d}u);"));
        if d > 0 {
            w.line(format!("rest = rest / s{d};"));
        }
    }
    w.line("return offset;");
    w.close();
    w.blank();
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {VIEW_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let work = param(P_WORK_COUNT);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    w.line("let first = group * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;");
    w.block(
        "for (var k = 0u; k < ELEMENTS_PER_THREAD; k = k + 1u)",
        |w| {
            w.line("let item = first + k * WORKGROUP_SIZE;");
            w.block("if (item >= work)", |w| {
                w.line("return;");
            });
            if dtype::is_packed(data) {
                let width = data.size_bits();
                let lanes = 32 / width;
                w.line(format!("let o0 = item * {lanes}u;"));
                w.line(format!("let lanes = min({lanes}u, outputs - o0);"));
                w.line("var word = 0u;");
                w.block("for (var e = 0u; e < lanes; e = e + 1u)", |w| {
                    w.line(format!(
                        "word = word | (load_input(source_of(o0 + e)) << (e * {width}u));"
                    ));
                });
                w.line(BUFFERS[2].set(layout, "item", "word"));
            } else {
                w.line("store_output(item, load_input(source_of(item)));");
            }
        },
    );
    w.close();
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
