//! The computation patterns a spec's `compute` block names.
//!
//! Each pattern has a compile-time configuration (from the spec), a CPU
//! reference and a GPU plan builder; the WGSL generator of the same pattern
//! is its module of [`crate::wgsl`], and its compile-time half a family of
//! `ops_spec::family`. Generated code fills in the operator-specific parts.

pub mod fold;
pub mod gather_elements;
pub mod gather_nd;
pub mod pad;
pub mod reduce;
pub mod scatter_combine;
pub mod scatter_elements;
pub mod scatter_nd;
pub mod view;

/// The largest power of two at most `v` (1 for 0): team sizes.
fn pow2_floor(v: u64) -> u64 {
    if v <= 1 {
        1
    } else {
        1 << (63 - v.leading_zeros())
    }
}
