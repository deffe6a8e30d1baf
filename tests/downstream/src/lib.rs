//! An example of a crate outside the `ops` catalog that declares its own
//! operators in its own spec files: `ReduceMax` (`specs/reduce_max.op`), a
//! selection, `Rms` (`specs/rms.op`), a root mean square that no
//! catalog operator computes, whose arithmetic is declared in the spec, and
//! `CountNonZero` (`specs/count_nonzero.op`), whose arithmetic casts a
//! comparison to the tensor's type, and `GainRelu` (`specs/gain_relu.op`),
//! three operations fused into one element-wise kernel with a broadcast
//! input.
//!
//! `ops_macros::operator!` expands it into [`ReduceMaxDesc`] with its
//! builder, validation, WGSL kernels and CPU reference — and, like every
//! generated descriptor, [`ReduceMaxDesc::valid_cases`] and
//! [`ReduceMaxDesc::invalid_cases`], the proptest strategies of
//! `ops_core::fuzz`. `tests/fuzz.rs` fuzzes it on the CPU and the GPU with
//! them; nothing in this crate writes a strategy by hand.

ops_macros::operator!("../specs/reduce_max.op");
ops_macros::operator!("../specs/rms.op");
ops_macros::operator!("../specs/count_nonzero.op");
ops_macros::operator!("../specs/gain_relu.op");
