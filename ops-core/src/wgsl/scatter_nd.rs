//! WGSL kernels of the `scatter_nd` pattern
//! ([`crate::patterns::scatter_nd`]).
//!
//! One kernel per (data type, index type) pair and combine; the plan
//! builder `crate::patterns::scatter_nd::scatter_nd_plan` fills the
//! parameter words ([`crate::patterns::scatter_nd::params`]). The bindings
//! of group 0, in order ([`crate::patterns::scatter_nd::BINDINGS`]):
//! `params` (uniform), `indices` (read), `updates` (read), `status`
//! (read_write, atomic: word 0 receives the lowest out-of-range index
//! position by `atomicMin`), `output` (read_write; atomic for 8- and 16-bit
//! data; it starts as a copy of the input).
//!
//! A thread owns one slice position `s` and walks the pass's tuples in
//! order: it resolves each tuple's index values (unrolled up to
//! [`crate::patterns::scatter_nd::MAX_TUPLE`]) into the slice's input
//! offset and combines update `t * S + s` into element `offset + s`. Only
//! this thread writes that element; 8- and 16-bit elements share words
//! with other positions', so they are stored through `atomicAnd`/`atomicOr`
//! of their own lane. A replacement (`combine` is `b`) moves raw bits. With
//! empty slices one thread checks the indices. A thread that meets an
//! out-of-range index value reports its position and stops.

use crate::patterns::scatter_combine::combine_unsupported;
use crate::patterns::scatter_nd::{params, MAX_TUPLE, WORKGROUP_SIZE};
use crate::scalar::{Scalar, Var};
use crate::DataType;

use super::dtype;
use super::scatter_combine::gen_combine;
use super::segments::{self, Buffer, Layout};
use super::writer::Writer;

/// The entry point's name.
pub const SCATTER_ND_ENTRY: &str = "main";

/// The kernel key by the framework's convention,
/// `{operator}/scatter_nd/{DATA}/{INDEX}`.
pub fn scatter_nd_kernel_key(operator: &str, data: DataType, index: DataType) -> String {
    format!(
        "{operator}/scatter_nd/{}/{}",
        data.spec_name(),
        index.spec_name()
    )
}

/// Why no kernel combining with `combine` can be generated for `data` with
/// `index` indices, `None` when one can.
pub fn scatter_nd_unsupported(combine: &Scalar, data: DataType, index: DataType) -> Option<String> {
    if !index.is_int() {
        return Some(format!("{index} is not an index type"));
    }
    combine_unsupported(combine, data)
}

fn buffers(data: DataType) -> [Buffer<'static>; 5] {
    [
        Buffer::params(),
        Buffer::read("indices", true),
        Buffer::read("updates", true),
        Buffer::read_write("status", true, false),
        Buffer::read_write("output", dtype::is_packed(data), true),
    ]
}

/// The complete WGSL of one kernel: the module and its segmented variant.
pub fn scatter_nd_kernel(
    combine: &Scalar,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> String {
    segments::combined(scatter_nd_kernel_text(combine, data, index, key, origin))
}

/// The parts of [`scatter_nd_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn scatter_nd_kernel_text(
    combine: &Scalar,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    let plain = module(combine, data, index, key, origin, Layout::Plain);
    let segmented = module(combine, data, index, key, origin, Layout::Segmented);
    segments::kernel_text(plain, segmented, &buffers(data))
}

fn module(
    combine: &Scalar,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
    layout: Layout,
) -> String {
    let raw = matches!(combine, Scalar::Var(Var::B));
    let buffers = buffers(data);
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!("scatter_nd: data {data}, indices {index}"));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    for (name, word) in [
        ("P_SLICE_LEN", params::SLICE_LEN),
        ("P_TUPLE_SIZE", params::TUPLE_SIZE),
        ("P_START", params::START),
        ("P_END", params::END),
        ("P_DIM_SIZES", params::DIM_SIZES),
        ("P_DIM_STRIDES", params::DIM_STRIDES),
        ("P_ATTRS", params::ATTRS),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.comment("Not an offset: an out-of-range index value.");
    w.line("const BAD: u32 = 0xffffffffu;");
    w.blank();
    segments::declare(&mut w, &buffers, layout);
    w.blank();
    segments::gen_accessors(&mut w, &buffers, layout);
    dtype::gen_load_from(&mut w, "load_index", &buffers[1], layout, index);
    w.blank();
    dtype::gen_load_from(&mut w, "load_update", &buffers[2], layout, data);
    w.blank();
    dtype::gen_load_from(&mut w, "load_output", &buffers[4], layout, data);
    w.blank();
    dtype::gen_store_to(&mut w, "store_output", &buffers[4], layout, data);
    w.blank();
    dtype::gen_resolve_index(&mut w, "resolve", index, "BAD");
    w.blank();
    if !raw {
        gen_combine(&mut w, combine, data);
    }
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
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {SCATTER_ND_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
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
            if raw {
                w.line("store_output(o, load_update(u));");
            } else {
                w.line(
                    "store_output(o, encode(combine(decode(load_output(o)), decode(load_update(u)))));",
                );
            }
        });
    });
    w.close();
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Binary;

    static A: Scalar = Scalar::Var(Var::A);
    static B: Scalar = Scalar::Var(Var::B);
    static ADD: Scalar = Scalar::Binary(Binary::Add, &A, &B);

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        let mut count = 0;
        for combine in [&B, &ADD] {
            for data in DataType::ALL {
                for index in [DataType::Int64, DataType::Int32, DataType::Uint32] {
                    if scatter_nd_unsupported(combine, data, index).is_some() {
                        continue;
                    }
                    let key = scatter_nd_kernel_key("T", data, index);
                    let text = scatter_nd_kernel(combine, data, index, &key, "test");
                    let (_, segmented) = segments::segmented_part(&text)
                        .unwrap_or_else(|| panic!("{key}: no segmented variant"));
                    for wgsl in [segments::plain_part(&text), segmented] {
                        crate::wgsl::validated_module(&key, wgsl, SCATTER_ND_ENTRY, WORKGROUP_SIZE);
                    }
                    count += 1;
                }
            }
        }
        assert!(count > 40, "{count} kernels");
    }
}
