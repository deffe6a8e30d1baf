//! WGSL kernels of the `gather_elements` pattern (DirectML GATHER_ELEMENTS,
//! ONNX GatherElements).
//!
//! One kernel per data type and index type; the plan builder
//! `crate::patterns::gather_elements::gather_elements_plan` fills the
//! parameter words ([`crate::patterns::gather_elements::params`]). The
//! bindings of group 0, in order ([`GATHER_ELEMENTS_BINDINGS`]):
//!
//! 0. `params` (uniform): the parameter words, read with `param(i)`;
//! 1. `input: array<u32>` (read): the input tensor's packed words;
//! 2. `indices: array<u32>` (read): the index tensor's packed words;
//! 3. `output: array<u32>` (read_write): the output tensor's packed words;
//! 4. `status: array<atomic<u32>>` (read_write): word 0 receives, by
//!    `atomicMin`, the position of the lowest out-of-range index element a
//!    thread met (it stays `0xffffffff` when every index is in range).
//!
//! A work item is an output element (32- and 64-bit data) or an output
//! `u32` word of 4 or 2 elements (8- and 16-bit data), assembled in a
//! register and stored once, so no store needs atomics. Each element's
//! input offset is its position's coordinates walked from the last
//! dimension to the first, times the input's strides, the axis coordinate
//! replaced by its resolved index value. A work item that meets an
//! out-of-range value reports its position and stores nothing.

use crate::patterns::gather_elements::{params, ELEMENTS_PER_THREAD, WORKGROUP_SIZE};
use crate::{Access, DataType};

use super::segments::{self, Buffer, Layout};
use super::writer::Writer;
use super::{dtype, each_item};

/// The bindings of every gather_elements kernel: params, input, indices,
/// output, status.
pub const GATHER_ELEMENTS_BINDINGS: &[Access] = &[
    Access::Uniform,
    Access::Read,
    Access::Read,
    Access::ReadWrite,
    Access::ReadWrite,
];

/// The entry point's name.
pub const GATHER_ELEMENTS_ENTRY: &str = "main";

/// The buffers of every gather_elements kernel, in binding order.
const BUFFERS: [Buffer<'static>; 5] = [
    Buffer::params(),
    Buffer::read("input", true),
    Buffer::read("indices", true),
    Buffer::read_write("output", false, true),
    Buffer::read_write("status", true, false),
];

/// The kernel key by the framework's convention,
/// `{operator}/gather_elements/{DATA}/{INDEX}`.
pub fn gather_elements_kernel_key(operator: &str, data: DataType, index: DataType) -> String {
    format!(
        "{operator}/gather_elements/{}/{}",
        data.spec_name(),
        index.spec_name()
    )
}

/// True when a kernel can be generated for this pair: any data type, any
/// integer index type.
pub fn gather_elements_supported(_data: DataType, index: DataType) -> bool {
    index.is_int()
}

/// The complete WGSL of one kernel: the module and its segmented variant
/// (the input, indices and output are segmented).
pub fn gather_elements_kernel(data: DataType, index: DataType, key: &str, origin: &str) -> String {
    segments::combined(gather_elements_kernel_text(data, index, key, origin))
}

/// The parts of [`gather_elements_kernel`], for a kernel generated on first
/// use ([`crate::Kernel::generated`]).
pub fn gather_elements_kernel_text(
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    let plain = module(data, index, key, origin, Layout::Plain);
    let segmented = module(data, index, key, origin, Layout::Segmented);
    segments::kernel_text(plain, segmented, &BUFFERS)
}

fn module(data: DataType, index: DataType, key: &str, origin: &str, layout: Layout) -> String {
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!("gather_elements: data {data}, indices {index}"));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    w.line(format!(
        "const ELEMENTS_PER_THREAD: u32 = {ELEMENTS_PER_THREAD}u;"
    ));
    for (name, word) in [
        ("P_OUTPUT_COUNT", params::OUTPUT_COUNT),
        ("P_WORK_COUNT", params::WORK_COUNT),
        ("P_DIMS", params::DIMS),
        ("P_AXIS", params::AXIS),
        ("P_AXIS_LEN", params::AXIS_LEN),
        ("P_SIZES", params::SIZES),
        ("P_STRIDES", params::STRIDES),
        ("P_SIZE_MAGIC", params::SIZE_MAGIC),
        ("P_SIZE_SHIFTS", params::SIZE_SHIFTS),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.comment("Not an offset: an out-of-range index value.");
    w.line("const BAD: u32 = 0xffffffffu;");
    w.blank();
    segments::declare(&mut w, &BUFFERS, layout);
    w.blank();
    segments::gen_accessors(&mut w, &BUFFERS, layout);
    w.lines(crate::patterns::divisor::WGSL);
    w.blank();
    dtype::gen_load_from(&mut w, "load_input", &BUFFERS[1], layout, data);
    w.blank();
    dtype::gen_load_from(&mut w, "load_index", &BUFFERS[2], layout, index);
    w.blank();
    if !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[3], layout, data);
        w.blank();
    }
    dtype::gen_resolve_index(&mut w, "resolve", index, "BAD");
    w.blank();
    gen_source(&mut w);
    w.blank();
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {GATHER_ELEMENTS_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let walk = Walk(param(P_DIMS), param(P_AXIS), param(P_AXIS_LEN));");
    w.line("let work = param(P_WORK_COUNT);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    w.comment("ELEMENTS_PER_THREAD work items a thread, WORKGROUP_SIZE apart.");
    w.line("let first = group * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;");
    each_item(&mut w, |w| {
        if dtype::is_packed(data) {
            gen_packed_item(w, data, layout);
        } else {
            w.line("let s = source_of(item, walk);");
            w.block("if (s != BAD)", |w| {
                w.line("store_output(item, load_input(s));");
            });
        }
    });
    w.close();
    w.finish()
}

/// `struct Walk` and `fn source_of(o: u32, g: Walk) -> u32`: the input
/// offset output element `o` reads, or `BAD` after reporting `o`.
fn gen_source(w: &mut Writer) {
    w.comment("The walk's parameter words read once at the kernel's top.");
    w.block("struct Walk", |w| {
        w.line("dims: u32,");
        w.line("axis: u32,");
        w.line("len: u32,");
    });
    w.blank();
    w.comment("The input offset output element o reads: its coordinates (last dimension");
    w.comment("first, divided out with the plan's divisors) times the input's strides,");
    w.comment("the axis coordinate replaced by its index value; BAD after reporting o");
    w.comment("when that value is out of range.");
    w.open("fn source_of(o: u32, g: Walk) -> u32");
    w.line("let i = resolve(load_index(o), g.len);");
    w.block("if (i == BAD)", |w| {
        w.line("atomicMin(&status[0], o);");
        w.line("return BAD;");
    });
    w.line("var rest = o;");
    w.line("var offset = 0u;");
    w.block("for (var k = 0u; k < g.dims; k = k + 1u)", |w| {
        w.line("let d = g.dims - 1u - k;");
        w.line("let q = divide(rest, param(P_SIZE_MAGIC + d), param(P_SIZE_SHIFTS + d));");
        w.line("let c = select(rest - q * param(P_SIZES + d), i, d == g.axis);");
        w.line("rest = q;");
        w.line("offset = offset + c * param(P_STRIDES + d);");
    });
    w.line("return offset;");
    w.close();
}

/// One output word of 8- or 16-bit data: its lanes' elements gathered and
/// stored at once.
fn gen_packed_item(w: &mut Writer, data: DataType, layout: Layout) {
    let width = data.size_bits();
    let lanes = 32 / width;
    w.comment(format!(
        "One output word: {lanes} elements of {width} bits, stored at once."
    ));
    w.line(format!("let o0 = item * {lanes}u;"));
    w.line(format!("let lanes = min({lanes}u, outputs - o0);"));
    w.line("var word = 0u;");
    w.line("var ok = true;");
    w.block("for (var e = 0u; e < lanes; e = e + 1u)", |w| {
        w.line("let s = source_of(o0 + e, walk);");
        w.block("if (s == BAD)", |w| {
            w.line("ok = false;");
            w.line("break;");
        });
        w.line(format!("word = word | (load_input(s) << (e * {width}u));"));
    });
    w.comment("After an out-of-range index value the word is not stored.");
    w.block("if (ok)", |w| {
        w.line(BUFFERS[3].set(layout, "item", "word"));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        for data in DataType::ALL {
            for index in [
                DataType::Int64,
                DataType::Int32,
                DataType::Uint64,
                DataType::Uint32,
                DataType::Int8,
                DataType::Uint16,
            ] {
                let key = gather_elements_kernel_key("T", data, index);
                let text = gather_elements_kernel(data, index, &key, "test");
                let (counts, segmented) = segments::segmented_part(&text)
                    .unwrap_or_else(|| panic!("{key}: no segmented variant"));
                assert_eq!(counts.len(), GATHER_ELEMENTS_BINDINGS.len(), "{key}");
                for wgsl in [segments::plain_part(&text), segmented] {
                    crate::wgsl::validated_module(
                        &key,
                        wgsl,
                        GATHER_ELEMENTS_ENTRY,
                        WORKGROUP_SIZE,
                    );
                }
            }
        }
    }
}
