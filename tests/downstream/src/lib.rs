//! An example of a crate outside the `ops` catalog that declares its own
//! operator, `ReduceMax`, in its own spec file (`specs/reduce_max.op`).
//!
//! `ops_macros::operator!` expands it into [`ReduceMaxDesc`] with its
//! builder, validation, WGSL kernels and CPU reference — and, like every
//! generated descriptor, [`ReduceMaxDesc::valid_cases`] and
//! [`ReduceMaxDesc::invalid_cases`], the proptest strategies of
//! `ops_core::fuzz`. `tests/fuzz.rs` fuzzes it on the CPU and the GPU with
//! them; nothing in this crate writes a strategy by hand.

ops_macros::operator!("../specs/reduce_max.op");
