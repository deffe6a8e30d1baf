//! The spec-file compiler of the `ops` framework.
//!
//! A spec file goes through stages you can see in the module names:
//! [`syntax`] (text to a syntax tree with spans) -> [`lower`] (syntax tree to
//! an immutable model; names resolved, expressions typed) -> [`check`]
//! (cross-item rules; its output, [`check::Checked`], only the checker can
//! build) -> [`codegen`] (Rust descriptors and validation, the CPU reference
//! glue) with [`wgsl`] generating the kernels. `ops-macros` is a one-function
//! shim over [`expand`], so all of this is unit tested without a macro context.
//! What a `compute` block means is a [`family`]: one module per pattern.

pub mod check;
pub mod codegen;
pub mod diag;
pub mod family;
pub mod lower;
pub mod model;
pub mod syntax;

/// The kernel generators, which live in `ops-core` so that generated code can
/// produce a kernel's WGSL on first use.
pub use ops_core::wgsl;

pub use codegen::expand;
