//! WGSL generation: an indenting [`Writer`], per-data-type helpers
//! ([`dtype`]) shared by every pattern, one kernel generator per pattern, and
//! the segmented variant every kernel carries for tensors beyond one storage
//! binding ([`segments`]).
//!
//! Generated code calls these generators when a kernel is first used
//! ([`crate::Kernel::generated`]), with the configuration its spec declared
//! (a fold's arithmetic, a reduction's selection rules); the spec compiler
//! calls them in its tests.

pub mod dtype;
pub mod float64;
pub mod float64_fn;
pub mod scalar;
pub mod segments;
pub mod writer;

pub use writer::Writer;

/// The entry point `entry` of a kernel that writes each output element
/// once, `value(i)` being the WGSL of output element `i`'s raw value:
/// `ELEMENTS_PER_THREAD` work items a thread, `WORKGROUP_SIZE` apart, below
/// the `P_WORK_COUNT` parameter word; an item is an output element (32- and
/// 64-bit outputs, written by `store_output`) or an output `u32` word (8-
/// and 16-bit ones: its lanes, below `P_OUTPUT_COUNT`, assembled in a
/// register and stored once through `output`, no atomics). `prelude` lines
/// run once a thread before the items.
pub(crate) fn gen_output_entry(
    w: &mut Writer,
    entry: &str,
    out: crate::DataType,
    output: &segments::Buffer,
    prelude: &[&str],
    value: &dyn Fn(&str) -> String,
) {
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {entry}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let work = param(P_WORK_COUNT);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    for line in prelude {
        w.line(*line);
    }
    w.comment("ELEMENTS_PER_THREAD work items a thread, WORKGROUP_SIZE apart.");
    w.line("let first = group * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;");
    each_item(w, |w| store_item(w, out, output, value));
    w.close();
}

/// Stores work item `item` of a kernel that writes each output element
/// once (`value(i)` the WGSL of output element `i`'s raw value): an output
/// element (32- and 64-bit outputs, through `store_output`) or an output
/// `u32` word (8- and 16-bit ones: its lanes below `outputs`, assembled in
/// a register and stored once through `output`, no atomics).
pub(crate) fn store_item(
    w: &mut Writer,
    out: crate::DataType,
    output: &segments::Buffer,
    value: &dyn Fn(&str) -> String,
) {
    if dtype::is_packed(out) {
        let width = out.size_bits();
        let lanes = 32 / width;
        w.comment(format!(
            "One output word: {lanes} elements of {width} bits, stored at once."
        ));
        w.line(format!("let o0 = item * {lanes}u;"));
        w.line(format!("let lanes = min({lanes}u, outputs - o0);"));
        w.line("var word = 0u;");
        w.block("for (var e = 0u; e < lanes; e = e + 1u)", |w| {
            w.line(format!(
                "word = word | ({} << (e * {width}u));",
                value("o0 + e")
            ));
        });
        w.line(output.set("item", "word"));
    } else {
        w.line(format!("store_output(item, {});", value("item")));
    }
}

/// A loop over the thread's work items (`ELEMENTS_PER_THREAD` of them,
/// `WORKGROUP_SIZE` apart from `first`, none at or past `work`), `item` in
/// the body: the loop of every kernel that spreads items over threads.
pub(crate) fn each_item(w: &mut Writer, body: impl FnOnce(&mut Writer)) {
    w.block(
        "for (var k = 0u; k < ELEMENTS_PER_THREAD; k = k + 1u)",
        |w| {
            w.line("let item = first + k * WORKGROUP_SIZE;");
            w.block("if (item >= work)", |w| {
                w.line("return;");
            });
            body(w);
        },
    );
}

/// Parses and validates a generated module with no optional capabilities
/// (core WebGPU) and checks its entry point's workgroup size: the check every
/// pattern's kernel tests share.
#[cfg(test)]
pub(crate) fn validated_module(
    key: &str,
    wgsl: &str,
    entry: &str,
    workgroup_size: u32,
) -> naga::Module {
    let module = naga::front::wgsl::parse_str(wgsl)
        .unwrap_or_else(|e| panic!("{key}: {}\n{wgsl}", e.emit_to_string(wgsl)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{key}: {}\n{wgsl}", e.emit_to_string(wgsl)));
    let found = module
        .entry_points
        .iter()
        .find(|e| e.name == entry)
        .unwrap_or_else(|| panic!("{key}: no entry point `{entry}`"));
    assert_eq!(found.workgroup_size, [workgroup_size, 1, 1], "{key}");
    module
}
