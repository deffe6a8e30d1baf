//! WGSL kernels of the `concat` pattern ([`crate::patterns::concat`]).
//!
//! One kernel per data type and input count. Bindings of group 0: `params`
//! (uniform, the words of [`crate::patterns::concat::params`]), `in0`..
//! (read, one per input), `output` (read_write). A work item is an output
//! element (32- and 64-bit data) or an output `u32` word of 4 or 2
//! elements (8- and 16-bit data, assembled in a register and stored once,
//! no atomics). An element splits its index into outer, axis and inner
//! parts (dividing by the plan's [`crate::patterns::divisor::Divisor`]s,
//! no division instruction), takes the last input whose start is at most its axis coordinate,
//! and reads that input's element. A kernel of one input also has a
//! segmented variant (tensors beyond one binding); with more, the segments
//! would exceed core WebGPU's 8 storage buffers per stage, and each tensor
//! is limited to one binding.

use crate::patterns::concat::{params, ELEMENTS_PER_THREAD, MAX_INPUTS, WORKGROUP_SIZE};
use crate::DataType;

use super::dtype;
use super::segments::{self, Buffer, Layout};
use super::writer::Writer;

/// The entry point's name.
pub const CONCAT_ENTRY: &str = "main";

const INPUT_NAMES: [&str; MAX_INPUTS] = ["in0", "in1", "in2", "in3", "in4", "in5", "in6"];

/// The kernel key by the framework's convention,
/// `{operator}/concat{n}/{DATA}`.
pub fn concat_kernel_key(operator: &str, inputs: usize, data: DataType) -> String {
    format!("{operator}/concat{inputs}/{}", data.spec_name())
}

/// The complete WGSL of one kernel.
pub fn concat_kernel(data: DataType, inputs: usize, key: &str, origin: &str) -> String {
    segments::combined(concat_kernel_text(data, inputs, key, origin))
}

/// The parts of [`concat_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn concat_kernel_text(
    data: DataType,
    inputs: usize,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    let n = inputs.clamp(1, MAX_INPUTS);
    let plain = module(data, n, key, origin, Layout::Plain);
    if n == 1 {
        let segmented = module(data, n, key, origin, Layout::Segmented);
        segments::kernel_text(plain, segmented, &buffers(n))
    } else {
        crate::KernelText {
            wgsl: plain,
            segmented: None,
        }
    }
}

fn buffers(n: usize) -> Vec<Buffer<'static>> {
    let mut bufs = vec![Buffer::params()];
    bufs.extend(INPUT_NAMES[..n].iter().map(|name| Buffer::read(name, true)));
    bufs.push(Buffer::read_write("output", false, true));
    bufs
}

fn module(data: DataType, n: usize, key: &str, origin: &str, layout: Layout) -> String {
    let bufs = buffers(n);
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!("concat: {n} inputs of {data}"));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    w.line(format!(
        "const ELEMENTS_PER_THREAD: u32 = {ELEMENTS_PER_THREAD}u;"
    ));
    for (name, word) in [
        ("P_OUTPUT_COUNT", params::OUTPUT_COUNT),
        ("P_WORK_COUNT", params::WORK_COUNT),
        ("P_INNER", params::INNER),
        ("P_EXTENT", params::EXTENT),
        ("P_STARTS", params::STARTS),
        ("P_EXTENTS", params::EXTENTS),
        ("P_INNER_DIVISOR", params::INNER_DIVISOR),
        ("P_EXTENT_DIVISOR", params::EXTENT_DIVISOR),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.blank();
    segments::declare(&mut w, &bufs, layout);
    w.blank();
    segments::gen_accessors(&mut w, &bufs, layout);
    w.lines(crate::patterns::divisor::WGSL);
    w.blank();
    for (i, name) in INPUT_NAMES[..n].iter().enumerate() {
        dtype::gen_load_from(&mut w, &format!("load_{name}"), &bufs[1 + i], layout, data);
        w.blank();
    }
    if !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &bufs[n + 1], layout, data);
        w.blank();
    }
    let ty = dtype::raw_type(data);
    w.comment("Output element o: the input whose range along the axis holds its");
    w.comment("coordinate there, and the element of that input it is.");
    w.open(format!("fn element(o: u32) -> {ty}"));
    w.line("let inner = param(P_INNER);");
    w.line("let rest = divide(o, param(P_INNER_DIVISOR), param(P_INNER_DIVISOR + 1u));");
    w.line("let j = o - rest * inner;");
    w.line("let outer = divide(rest, param(P_EXTENT_DIVISOR), param(P_EXTENT_DIVISOR + 1u));");
    w.line("let c = rest - outer * param(P_EXTENT);");
    for k in (1..n).rev() {
        w.block(format!("if (c >= param(P_STARTS + {k}u))"), |w| {
            w.line(format!(
                "return load_{}((outer * param(P_EXTENTS + {k}u) + c - param(P_STARTS + {k}u)) * inner + j);",
                INPUT_NAMES[k]
            ));
        });
    }
    w.line(format!(
        "return load_{}((outer * param(P_EXTENTS) + c) * inner + j);",
        INPUT_NAMES[0]
    ));
    w.close();
    w.blank();
    super::gen_output_entry(
        &mut w,
        CONCAT_ENTRY,
        data,
        &bufs[n + 1],
        layout,
        &[],
        &|i| format!("element({i})"),
    );
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        for data in DataType::ALL {
            for n in 1..=MAX_INPUTS {
                let key = concat_kernel_key("T", n, data);
                let text = concat_kernel(data, n, &key, "test");
                let plain = segments::plain_part(&text);
                crate::wgsl::validated_module(&key, plain, CONCAT_ENTRY, WORKGROUP_SIZE);
                if let Some((_, segmented)) = segments::segmented_part(&text) {
                    crate::wgsl::validated_module(&key, segmented, CONCAT_ENTRY, WORKGROUP_SIZE);
                }
            }
        }
    }
}
