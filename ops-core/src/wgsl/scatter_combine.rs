//! WGSL kernels of the `scatter_elements` pattern with a declared
//! `combine` ([`crate::patterns::scatter_combine`]).
//!
//! One kernel per (data type, index type) pair and combine; the plan
//! builder `crate::patterns::scatter_combine::scatter_combine_plan` fills
//! the parameter words ([`crate::patterns::scatter_combine::params`]). The
//! bindings of group 0, in order
//! ([`crate::patterns::scatter_combine::BINDINGS`]):
//!
//! 0. `params` (uniform): the parameter words, read with `param(i)`;
//! 1. `indices: array<u32>` (read);
//! 2. `updates: array<u32>` (read);
//! 3. `status: array<atomic<u32>>` (read_write): word 0 receives, by
//!    `atomicMin`, the position of the lowest out-of-range index element;
//! 4. `output: array<u32>` (read_write; `array<atomic<u32>>` for 8- and
//!    16-bit data): starts as a copy of the input.
//!
//! A thread owns a column (the update positions sharing their coordinates
//! off the axis) and walks its updates in order along the axis: each one's
//! target is its coordinates times the input's strides with the axis
//! coordinate its resolved index value, and the target becomes
//! `combine(target, update)`, computed in the data type's compute type
//! ([`super::scalar`]) and stored at once. Only this thread writes the
//! target element; 8- and 16-bit elements share words with other columns'
//! targets, so they are stored through `atomicAnd`/`atomicOr` of their own
//! lane. A replacement (`combine` is `b`) moves raw bits. A thread that
//! meets an out-of-range index value reports its position and stops. A
//! pass walks updates `[P_WALK_START, P_WALK_END)` of every column: long
//! walks take several passes, in order.

use crate::patterns::scatter_combine::{combine_unsupported, params, MAX_DIMS, WORKGROUP_SIZE};
use crate::scalar::{Scalar, TypeEnv, Var};
use crate::DataType;

use super::dtype;
use super::scalar::{compute_type, gen_expr_helpers, gen_helpers, scalar_wgsl};
use super::segments::{self, Buffer, Layout};
use super::writer::Writer;

/// The entry point's name.
pub const SCATTER_COMBINE_ENTRY: &str = "main";

/// The kernel key by the framework's convention,
/// `{operator}/scatter_combine/{DATA}/{INDEX}`.
pub fn scatter_combine_kernel_key(operator: &str, data: DataType, index: DataType) -> String {
    format!(
        "{operator}/scatter_combine/{}/{}",
        data.spec_name(),
        index.spec_name()
    )
}

/// Why no kernel combining with `combine` can be generated for `data` with
/// `index` indices, `None` when one can.
pub fn scatter_combine_unsupported(
    combine: &Scalar,
    data: DataType,
    index: DataType,
) -> Option<String> {
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
pub fn scatter_combine_kernel(
    combine: &Scalar,
    data: DataType,
    index: DataType,
    key: &str,
    origin: &str,
) -> String {
    segments::combined(scatter_combine_kernel_text(
        combine, data, index, key, origin,
    ))
}

/// The parts of [`scatter_combine_kernel`], for a kernel generated on first
/// use ([`crate::Kernel::generated`]).
pub fn scatter_combine_kernel_text(
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

/// Writes `fn combine(a: T, b: T) -> T` for a scatter combining `data`
/// elements with `combine` (`a` the element, `b` the update), in `data`'s
/// compute type, with the `decode`/`encode` helpers and those `combine`
/// calls. The scatter_nd kernels use it too.
pub(crate) fn gen_combine(w: &mut Writer, combine: &Scalar, data: DataType) {
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
    w.comment(format!(
        "scatter with a combine: data {data}, indices {index}"
    ));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    for (name, word) in [
        ("P_COLUMNS", params::COLUMNS),
        ("P_WALK", params::WALK),
        ("P_INNER", params::INNER),
        ("P_DIMS", params::DIMS),
        ("P_AXIS", params::AXIS),
        ("P_AXIS_LEN", params::AXIS_LEN),
        ("P_WALK_START", params::WALK_START),
        ("P_WALK_END", params::WALK_END),
        ("P_SIZES", params::SIZES),
        ("P_STRIDES", params::STRIDES),
        ("P_ATTRS", params::ATTRS),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.comment("Not a position: an out-of-range index value.");
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
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {SCATTER_COMBINE_ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
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
            if raw {
                w.line("store_output(t, load_update(u));");
            } else {
                w.line(
                "store_output(t, encode(combine(decode(load_output(t)), decode(load_update(u)))));",
            );
            }
        },
    );
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
    static MAX: Scalar = Scalar::Binary(Binary::Max, &A, &B);

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        let mut count = 0;
        for combine in [&B, &ADD, &MAX] {
            for data in DataType::ALL {
                for index in [DataType::Int64, DataType::Int32, DataType::Uint32] {
                    if scatter_combine_unsupported(combine, data, index).is_some() {
                        continue;
                    }
                    let key = scatter_combine_kernel_key("T", data, index);
                    let text = scatter_combine_kernel(combine, data, index, &key, "test");
                    let (_, segmented) = segments::segmented_part(&text)
                        .unwrap_or_else(|| panic!("{key}: no segmented variant"));
                    for wgsl in [segments::plain_part(&text), segmented] {
                        crate::wgsl::validated_module(
                            &key,
                            wgsl,
                            SCATTER_COMBINE_ENTRY,
                            WORKGROUP_SIZE,
                        );
                    }
                    count += 1;
                }
            }
        }
        assert!(count > 60, "{count} kernels");
    }
}
