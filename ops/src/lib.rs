//! The `ops` operator catalog and the `ops` command's library.
//!
//! Every `specs/*.op` file is expanded here by [`ops_macros::catalog!`] into
//! a module with its descriptor type (`argmin::ArgMinDesc`, re-exported as
//! [`ArgMinDesc`]), every `specs/onnx/*.op` file likewise inside [`onnx`]
//! (namespace `"onnx"`: `onnx::ArgMaxDesc`, ONNX semantics, beside the
//! DirectML [`ArgMaxDesc`]), and all are listed by [`catalog()`]. Adding an
//! operator of a known family is adding a spec file: nothing here names an
//! operator.

pub mod bench;
pub mod case;
pub mod fuzz;
pub mod runner;
pub mod term;

pub use ops_core::*;

ops_macros::catalog!("../../specs");

/// The README's Rust blocks, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
