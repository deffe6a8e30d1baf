//! The `ops` operator catalog.
//!
//! Every `specs/*.op` file is expanded here by [`ops_macros::catalog!`] into
//! a module with its descriptor type (`argmin::ArgMinDesc`, re-exported as
//! [`ArgMinDesc`]), every `specs/onnx/*.op` file likewise inside [`onnx`]
//! (namespace `"onnx"`: `onnx::ArgMaxDesc`, ONNX semantics, beside the
//! DirectML [`ArgMaxDesc`]), and all are listed by [`catalog()`]. Adding an
//! operator of a known family is adding a spec file: nothing here names an
//! operator. Each descriptor's page ends its builder section with an example
//! that the spec compiler writes and `cargo test --doc` runs (one merged
//! binary: this crate is edition 2024).
//!
//! The core types ([`DataType`], [`HostTensor`], [`Operator`], ...) and the
//! fuzzing strategies ([`fuzz`]) are re-exported from `ops-core`, the GPU
//! runtime as [`gpu`] (`ops::gpu::shared()`, [`Context`]): a user of the
//! catalog needs this crate alone.
//!
//! ```
//! use ops::{ArgMinDesc, DataType, HostTensor, Operator};
//!
//! let input = HostTensor::from_slice([3, 3], &[1f32, 2., 3., 3., 0., 4., 2., 5., 2.])?;
//! let argmin = ArgMinDesc::builder()
//!     .input(input.desc().clone())
//!     .output_dtype(DataType::Uint32) // sizes inferred from the spec: [1, 3]
//!     .axes([0])
//!     .build()?;
//! let cpu = argmin.run_cpu(&[&input])?;
//! assert_eq!(cpu[0].to_vec::<u32>(), Some(vec![0, 1, 2]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The `ops` command (`ops run`, `ops list`, `ops fuzz`, `ops bench`) is
//! this package's binary; its case-file reader, runner and fuzzer are not
//! part of the library.

pub use ops_core::*;
pub use ops_gpu as gpu;
pub use ops_gpu::Context;

ops_macros::catalog!("../../specs");

/// The README's Rust blocks, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
