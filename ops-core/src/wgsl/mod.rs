//! WGSL generation: an indenting [`Writer`], per-data-type helpers
//! ([`dtype`]) shared by every pattern, one kernel generator per pattern, and
//! the segmented variant every kernel carries for tensors beyond one storage
//! binding ([`segments`]).
//!
//! Generated code calls these generators when a kernel is first used
//! ([`crate::Kernel::generated`]), with the configuration its spec declared
//! (a fold's arithmetic, a reduction's selection rules); the spec compiler
//! calls them in its tests.

pub mod concat;
pub mod dtype;
pub mod elementwise;
pub mod fold;
pub mod gather_elements;
pub mod gather_nd;
pub mod one_hot;
pub mod pad;
pub mod reduce;
pub mod scalar;
pub mod scatter_combine;
pub mod scatter_elements;
pub mod scatter_nd;
pub mod segments;
pub mod view;
pub mod writer;

pub use reduce::{
    reduce_bindings, reduce_kernel, reduce_kernel_key, reduce_supported, REDUCE_BINDINGS,
    REDUCE_ENTRY,
};
pub use writer::Writer;

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
