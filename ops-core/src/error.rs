//! Error types shared by the descriptors, the CPU reference and the GPU runtime.

use crate::{DataType, FeatureLevel, TensorDesc};

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
#[non_exhaustive]
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
    /// A device tensor handed to a context other than the one that made it
    /// (tensors are tied to their context's device, pool and queue).
    #[error("wrong context: {0}")]
    WrongContext(String),
}

/// The errors both backends give for the same mistake in a call, phrased
/// once here so that the CPU reference and the GPU runtime say the same.
impl OpError {
    /// `operator`, which takes `takes` input tensors (named `names`, when
    /// they are as many), was given `got`: "ArgMin takes 1 input (`input`),
    /// got 0".
    pub fn input_count(operator: &str, takes: usize, names: &[&str], got: usize) -> OpError {
        let plural = if takes == 1 { "" } else { "s" };
        let names = if names.len() == takes && takes > 0 {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!(" ({})", list.join(", "))
        } else {
            String::new()
        };
        OpError::InvalidArgument(format!(
            "{operator} takes {takes} input{plural}{names}, got {got}"
        ))
    }

    /// Input `name` of `operator` is not the tensor its descriptor
    /// describes (`want`).
    pub fn input_mismatch(
        operator: &str,
        name: &str,
        want: &TensorDesc,
        got: &TensorDesc,
    ) -> OpError {
        OpError::InvalidArgument(format!(
            "{operator}: input `{name}` should be a {} tensor of sizes {:?}, got a {} tensor of sizes {:?}",
            want.dtype, want.sizes, got.dtype, got.sizes
        ))
    }

    /// Host-read input `name` of `operator` holds other values than those
    /// the descriptor was built from: element `element` is `got`, the
    /// descriptor's is `want`.
    pub fn host_input_mismatch(
        operator: &str,
        name: &str,
        element: usize,
        want: &str,
        got: &str,
    ) -> OpError {
        OpError::InvalidArgument(format!(
            "{operator}: input `{name}` must hold the values the descriptor was built from: element {element} is {got}, the descriptor's is {want}"
        ))
    }

    /// Output `name` of `operator` has `count` elements (`None`: more than
    /// `u64` counts), beyond the `u32` element addressing of the kernels.
    pub fn too_many_elements(operator: &str, name: &str, count: Option<u64>) -> OpError {
        let count = count.map_or_else(|| "more than 2^64".to_string(), |c| c.to_string());
        OpError::TooLarge {
            what: format!("{operator}: output `{name}` of {count} elements"),
            limit: "u32 element addressing".into(),
        }
    }

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

/// The most characters of a user's text that [`quote`] shows.
pub const QUOTED_CHARS: usize = 64;

/// User-given text (an operator, attribute or tensor name, a value read
/// from a file) as a message shows it: in backticks, control characters
/// and backticks escaped (`\n`, `\u{1b}`, `` \` ``), cut after
/// [`QUOTED_CHARS`] characters with its length in bytes, so that a message
/// stays one short line whatever a file holds.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(QUOTED_CHARS + 2);
    out.push('`');
    let mut chars = text.chars();
    for c in chars.by_ref().take(QUOTED_CHARS) {
        if c == '`' {
            out.push_str("\\`");
        } else if c.is_control() || c == '\\' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('`');
    if chars.next().is_some() {
        out.push_str(&format!("... ({} bytes)", text.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_is_short_and_escaped() {
        assert_eq!(quote("ArgMin"), "`ArgMin`");
        assert_eq!(quote("a\nb\u{1b}[31m`"), "`a\\nb\\u{1b}[31m\\``");
        let long = "x".repeat(10 << 20);
        let q = quote(&long);
        assert!(q.len() < QUOTED_CHARS + 40, "{q}");
        assert!(q.ends_with("... (10485760 bytes)"), "{q}");
        // Cut by characters, never inside one.
        assert_eq!(
            quote(&"é".repeat(100))
                .chars()
                .filter(|&c| c == 'é')
                .count(),
            QUOTED_CHARS
        );
    }
}
