//! WGSL generation: an indenting [`Writer`], per-data-type helpers
//! ([`dtype`]) shared by every pattern, one kernel generator per pattern, and
//! the segmented variant every kernel carries for tensors beyond one storage
//! binding ([`segments`]).

pub mod dtype;
pub mod gather_nd;
pub mod reduce;
pub mod scatter_elements;
pub mod segments;
pub mod writer;

pub use reduce::{
    reduce_bindings, reduce_kernel, reduce_kernel_key, reduce_supported, REDUCE_BINDINGS,
    REDUCE_ENTRY,
};
pub use writer::Writer;
