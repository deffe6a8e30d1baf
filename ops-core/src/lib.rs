//! Core types of the `ops` framework.
//!
//! Spec files in `specs/` are expanded by `ops-macros` into descriptor types
//! that implement [`Operator`]. This crate holds what those descriptors share:
//! [`DataType`], [`FeatureLevel`], [`TensorDesc`] and [`HostTensor`], the
//! error types, the GPU plan data model executed by `ops-gpu`, and
//! [`family`]: the typed contract every family is one module under
//! (`elementwise`, `fold`, `reduce`, `gather_elements`, `one_hot`,
//! `gather_nd`, `gather`, `view`, `split`, `concat`, `pad`,
//! `scatter_elements` and `scatter_nd`), its CPU reference, GPU plans and
//! kernels, which generated code calls with the spec's parameters
//! ([`family::divisor`] and a few helpers are what several families share). `fuzz` (the `fuzz` feature) derives proptest strategies of
//! valid and invalid calls from any operator's [`OperatorInfo`], so every
//! spec file gets its fuzzing for free.

#![warn(missing_docs)]

pub mod accuracy;
#[doc(hidden)]
pub mod args;
mod dtype;
mod error;
pub mod expr;
#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod host;
mod level;
mod op;
mod plan;
pub mod support;
mod tensor;

pub mod family;
pub mod scalar;
pub mod wgsl;

pub use accuracy::Tolerance;
pub use dtype::{DataType, Element};
pub use error::{quote, OpError, ValidationError, QUOTED_CHARS};
pub use half::f16;
pub use host::{check_host_bytes, host_limit, set_host_limit, DEFAULT_HOST_LIMIT};
pub use level::FeatureLevel;
pub use op::{
    check_call, check_call_descs, AttrInfo, AttrKind, AttrValue, IndexBounds, OpArgs, Operator,
    OperatorInfo, OperatorType, OutOfRange, TensorGroup, TensorInfo,
};
pub use plan::{
    split_workgroups, Access, BufferRef, DeviceClass, GpuPlan, Kernel, KernelText, OutputInit,
    Pass, Segmented, LOOP_BUDGET, MAX_THREAD_STEPS, PARAM_WORDS,
};
pub use scalar::Number;
pub use tensor::{element_count, row_major_strides, HostTensor, TensorDesc};

/// Items only generated code may use.
#[doc(hidden)]
pub mod __private {
    pub use crate::args;
    pub use crate::expr;
    pub use crate::support;

    /// Expands to its items when `ops-core`'s `fuzz` feature is on, to
    /// nothing otherwise: generated code's `valid_cases()`,
    /// `invalid_cases()` and the catalog's spec test go through it, since a
    /// `#[cfg(feature = "fuzz")]` in generated code would read the invoking
    /// crate's features, not this crate's.
    #[cfg(feature = "fuzz")]
    #[macro_export]
    #[doc(hidden)]
    macro_rules! __ops_core_if_fuzz {
        ($($tt:tt)*) => { $($tt)* };
    }

    /// See the `fuzz` variant above.
    #[cfg(not(feature = "fuzz"))]
    #[macro_export]
    #[doc(hidden)]
    macro_rules! __ops_core_if_fuzz {
        ($($tt:tt)*) => {};
    }

    pub use crate::__ops_core_if_fuzz as if_fuzz;
}
