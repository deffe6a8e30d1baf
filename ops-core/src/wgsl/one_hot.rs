//! WGSL kernels of the `one_hot` pattern ([`crate::patterns::one_hot`]).
//!
//! One kernel per values (output) data type and indices data type. Bindings
//! of group 0 ([`crate::patterns::one_hot::BINDINGS`]): `params` (uniform,
//! the words of [`crate::patterns::one_hot::params`]), `indices:
//! array<u32>` (read), `values: array<u32>` (read: element 0 is the off
//! value, element 1 the on value), `output: array<u32>` (read_write).
//!
//! A work item is an output element (32- and 64-bit data) or an output
//! `u32` word of 4 or 2 elements (8- and 16-bit data, assembled in a
//! register and stored once). Each element splits its position into the
//! sequence it belongs to and its coordinate `a` on the axis, resolves its
//! sequence's index value into `[0, depth)` (or `NONE`) and stores the on
//! value where that is `a`. Integer index values resolve with
//! [`dtype::gen_resolve_index`]; floating-point ones are truncated toward
//! zero from their bits first (NaN is 0, the infinities and anything of
//! magnitude 2^32 or more select nothing), so no adapter's float-to-int
//! conversion is trusted.

use crate::patterns::one_hot::{params, ELEMENTS_PER_THREAD, WORKGROUP_SIZE};
use crate::DataType;

use super::dtype;
use super::segments::{self, Buffer, Layout};
use super::writer::Writer;

/// The entry point's name.
pub const ONE_HOT_ENTRY: &str = "main";

const BUFFERS: [Buffer<'static>; 4] = [
    Buffer::params(),
    Buffer::read("indices", true),
    Buffer::read("values", true),
    Buffer::read_write("output", false, true),
];

/// The kernel key by the framework's convention,
/// `{operator}/one_hot/{VALUES}/{INDICES}`.
pub fn one_hot_kernel_key(operator: &str, values: DataType, indices: DataType) -> String {
    format!(
        "{operator}/one_hot/{}/{}",
        values.spec_name(),
        indices.spec_name()
    )
}

/// True when a kernel can be generated for this pair: any values type, any
/// numeric indices type (not BOOL).
pub fn one_hot_supported(_values: DataType, indices: DataType) -> bool {
    indices != DataType::Bool
}

/// The complete WGSL of one kernel: the module and its segmented variant.
pub fn one_hot_kernel(values: DataType, indices: DataType, key: &str, origin: &str) -> String {
    segments::combined(one_hot_kernel_text(values, indices, key, origin))
}

/// The parts of [`one_hot_kernel`], for a kernel generated on first use
/// ([`crate::Kernel::generated`]).
pub fn one_hot_kernel_text(
    values: DataType,
    indices: DataType,
    key: &str,
    origin: &str,
) -> crate::KernelText {
    let plain = module(values, indices, key, origin, Layout::Plain);
    let segmented = module(values, indices, key, origin, Layout::Segmented);
    segments::kernel_text(plain, segmented, &BUFFERS)
}

fn module(values: DataType, indices: DataType, key: &str, origin: &str, layout: Layout) -> String {
    let mut w = Writer::new();
    w.comment(format!("@generated from {origin}"));
    w.comment(format!("kernel: {key}"));
    w.comment(format!("one_hot: values {values}, indices {indices}"));
    w.blank();
    w.line(format!("const WORKGROUP_SIZE: u32 = {WORKGROUP_SIZE}u;"));
    w.line(format!(
        "const ELEMENTS_PER_THREAD: u32 = {ELEMENTS_PER_THREAD}u;"
    ));
    for (name, word) in [
        ("P_OUTPUT_COUNT", params::OUTPUT_COUNT),
        ("P_WORK_COUNT", params::WORK_COUNT),
        ("P_DEPTH", params::DEPTH),
        ("P_INNER", params::INNER),
    ] {
        w.line(format!("const {name}: u32 = {word}u;"));
    }
    w.comment("Not a position: the index value selects nothing.");
    w.line("const NONE: u32 = 0xffffffffu;");
    w.blank();
    segments::declare(&mut w, &BUFFERS, layout);
    w.blank();
    segments::gen_accessors(&mut w, &BUFFERS, layout);
    dtype::gen_load_from(&mut w, "load_index", &BUFFERS[1], layout, indices);
    w.blank();
    dtype::gen_load_from(&mut w, "load_value", &BUFFERS[2], layout, values);
    w.blank();
    if !dtype::is_packed(values) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[3], layout, values);
        w.blank();
    }
    if indices.is_float() {
        gen_resolve_float(&mut w, indices);
    } else {
        dtype::gen_resolve_index(&mut w, "resolve", indices, "NONE");
    }
    w.blank();
    let raw = dtype::raw_type(values);
    w.comment("Output element o: the on value where its sequence's index selects its");
    w.comment("coordinate on the axis, else the off value.");
    w.open(format!(
        "fn element(o: u32, off: {raw}, on: {raw}) -> {raw}"
    ));
    w.line("let inner = max(param(P_INNER), 1u);");
    w.line("let depth = max(param(P_DEPTH), 1u);");
    w.line("let q = o / inner;");
    w.line("let sequence = (q / depth) * inner + o % inner;");
    w.line("let hot = resolve(load_index(sequence), param(P_DEPTH)) == q % depth;");
    w.line("return select(off, on, hot);");
    w.close();
    w.blank();
    super::gen_output_entry(
        &mut w,
        ONE_HOT_ENTRY,
        values,
        &BUFFERS[3],
        layout,
        &["let off = load_value(0u);", "let on = load_value(1u);"],
        &|i| format!("element({i}, off, on)"),
    );
    w.finish()
}

/// `fn resolve(v: raw, n: u32) -> u32` for a floating-point index type: the
/// value truncated toward zero from its bits (NaN is 0), then the position
/// it selects in `[0, n)` (negative values count from the end), or `NONE`.
/// A magnitude of 2^32 or more (and an infinity) is beyond any `n`.
fn gen_resolve_float(w: &mut Writer, index: DataType) {
    w.comment(format!(
        "The position {index} index value v, truncated toward zero (NaN is 0), selects in a dimension of size n, or NONE."
    ));
    w.open(format!(
        "fn resolve(v: {}, n: u32) -> u32",
        dtype::raw_type(index)
    ));
    // (exponent field bits, fraction bits) of the word holding the sign,
    // and where it sits.
    let (exp_bits, frac_bits, sign_bit) = match index.size_bits() {
        64 => (11u32, 20u32, 31u32),
        32 => (8, 23, 31),
        _ => (5, 10, 15),
    };
    let bias = (1u32 << (exp_bits - 1)) - 1;
    let exp_mask = (1u32 << exp_bits) - 1;
    let frac_mask = (1u32 << frac_bits) - 1;
    if index.size_bits() == 64 {
        w.comment("v = (lo, hi): the sign, exponent and top 20 fraction bits are in hi.");
        w.line("let hi = v.y;");
        w.line("let lo = v.x;");
    } else {
        w.line("let hi = v;");
        w.line("let lo = 0u;");
    }
    w.line(format!("let negative = ((hi >> {sign_bit}u) & 1u) == 1u;"));
    w.line(format!("let e = (hi >> {frac_bits}u) & {exp_mask}u;"));
    w.line(format!("let f = hi & {frac_mask}u;"));
    w.block(format!("if (e == {exp_mask}u)"), |w| {
        w.comment("NaN is 0; an infinity selects nothing.");
        w.line("return select(NONE, select(NONE, 0u, n > 0u), f != 0u || lo != 0u);");
    });
    w.block(format!("if (e < {bias}u)"), |w| {
        w.comment("|v| < 1 (zeros and subnormals too): 0.");
        w.line("return select(NONE, 0u, n > 0u);");
    });
    w.line(format!("let p = e - {bias}u;"));
    w.block("if (p >= 32u)", |w| {
        w.line("return NONE;");
    });
    w.line(format!("let m = f | {}u;", 1u32 << frac_bits));
    w.line("var magnitude = 0u;");
    if index.size_bits() == 64 {
        w.comment("The 53-bit significand is m * 2^32 + lo; keep its top p + 1 bits.");
        w.open(format!("if (p <= {frac_bits}u)"));
        w.line(format!("magnitude = m >> ({frac_bits}u - p);"));
        w.reopen("else");
        w.line(format!(
            "magnitude = (m << (p - {frac_bits}u)) | (lo >> ({}u - p));",
            frac_bits + 32
        ));
        w.close();
    } else {
        w.open(format!("if (p <= {frac_bits}u)"));
        w.line(format!("magnitude = m >> ({frac_bits}u - p);"));
        w.reopen("else");
        w.line(format!("magnitude = m << (p - {frac_bits}u);"));
        w.close();
    }
    w.block("if (negative)", |w| {
        w.line("return select(NONE, n - magnitude, magnitude <= n);");
    });
    w.line("return select(NONE, magnitude, magnitude < n);");
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_validates_on_core_webgpu() {
        for values in DataType::ALL {
            for indices in DataType::ALL {
                if !one_hot_supported(values, indices) {
                    continue;
                }
                let key = one_hot_kernel_key("T", values, indices);
                let text = one_hot_kernel(values, indices, &key, "test");
                let (counts, segmented) = segments::segmented_part(&text)
                    .unwrap_or_else(|| panic!("{key}: no segmented variant"));
                assert_eq!(counts.len(), BUFFERS.len(), "{key}");
                for wgsl in [segments::plain_part(&text), segmented] {
                    crate::wgsl::validated_module(&key, wgsl, ONE_HOT_ENTRY, WORKGROUP_SIZE);
                }
            }
        }
    }
}
