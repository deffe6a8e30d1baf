//! Error types shared by the descriptors, the CPU reference and the GPU runtime.

use crate::{DataType, FeatureLevel};

/// A descriptor broke one of its operator's rules.
///
/// `rule` is the rule in the seed document's words, `detail` the actual
/// numbers that broke it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{operator}: {rule}: {detail}")]
pub struct ValidationError {
    /// The operator, as its spec names it.
    pub operator: &'static str,
    /// The broken rule, in the seed's words.
    pub rule: String,
    /// What the descriptor holds that breaks it.
    pub detail: String,
}

/// Any failure of an operator call, on either backend.
///
/// One error type for every run-time failure, whichever backend hit it, so
/// that callers match the same variants on the CPU and the GPU: a malformed
/// call is [`OpError::InvalidArgument`], a broken rule
/// [`OpError::Validation`], a bad index value [`OpError::IndexOutOfRange`]
/// (from both backends), a size past a limit [`OpError::TooLarge`] (naming
/// the limit), and the GPU's own failures [`OpError::NoAdapter`],
/// [`OpError::OutOfMemory`], [`OpError::DeviceLost`] and [`OpError::Device`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    /// The descriptor is not valid at the requested feature level.
    #[error("validation failed: {0}")]
    Validation(#[from] ValidationError),
    /// The backend cannot run this data type or level.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A run-time index value lies outside its dimension.
    #[error("index out of range in `{tensor}` at element {position:?}: value {value} is outside [{low}, {high}]")]
    IndexOutOfRange {
        /// The index tensor.
        tensor: String,
        /// The element's coordinates in that tensor.
        position: Vec<u32>,
        /// The offending value.
        value: i128,
        /// Lowest allowed value.
        low: i128,
        /// Highest allowed value.
        high: i128,
    },
    /// A tensor or dispatch exceeds a limit.
    #[error("too large: {what} exceeds {limit}")]
    TooLarge {
        /// What is too large.
        what: String,
        /// Which limit it exceeds.
        limit: String,
    },
    /// The call's tensors do not match the descriptor.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// No GPU adapter could be found.
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The device could not allocate a buffer the call needed (within the
    /// limits, beyond the memory left). The context stays usable.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// The device was lost (driver reset, GPU removed, destroyed): this call
    /// and every later call on the same context fail; a new context is needed.
    #[error("device lost: {0}")]
    DeviceLost(String),
    /// Any other failure of the GPU device or runtime (a wgpu validation or
    /// internal error). The context stays usable.
    #[error("device error: {0}")]
    Device(String),
}

impl OpError {
    /// An `Unsupported` error for a data type at a level.
    pub fn unsupported_dtype(
        operator: &str,
        tensor: &str,
        dtype: DataType,
        level: FeatureLevel,
    ) -> OpError {
        OpError::Unsupported(format!(
            "{operator}: `{tensor}` data type {dtype} is not supported at feature level {level}"
        ))
    }
}
