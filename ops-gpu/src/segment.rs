//! Segmented variants: tensors larger than one storage binding.
//!
//! A kernel's WGSL may end with a second module in a block comment (every
//! generated kernel does; see `ops_spec::wgsl::segments`):
//!
//! ```text
//! /* @segmented 1 4 4
//! ...
//! */
//! ```
//!
//! The numbers give, for each binding of the kernel in order, how many
//! consecutive bindings of the variant it becomes, each with the binding's
//! access. A binding of `n > 1` segments binds bytes `[k * S, (k + 1) * S)`
//! of its buffer as segment `k`, where `S` is the context's segment size (the
//! last segment ends with the buffer; segments past the end bind a dummy
//! buffer). The runtime runs a pass with the variant only when one of its
//! buffers exceeds the binding limit.

use ops_core::{Access, Kernel, OpError};

/// The marker that opens the variant's block comment.
const MARKER: &str = "/* @segmented";

/// A kernel's segmented variant.
pub(crate) struct Segmented {
    /// Bindings of the variant per binding of the kernel.
    pub(crate) counts: Vec<u32>,
    /// The variant's WGSL.
    pub(crate) wgsl: &'static str,
}

impl Segmented {
    /// The access of every binding of the variant.
    pub(crate) fn bindings(&self, kernel: &Kernel) -> Vec<Access> {
        kernel
            .bindings
            .iter()
            .zip(&self.counts)
            .flat_map(|(&a, &n)| std::iter::repeat_n(a, n as usize))
            .collect()
    }
}

/// The segmented variant of `kernel`, `None` when it has none; an error when
/// its header does not fit the kernel's bindings.
pub(crate) fn variant(kernel: &'static Kernel) -> Result<Option<Segmented>, OpError> {
    let Some(at) = kernel.wgsl.find(MARKER) else {
        return Ok(None);
    };
    let key = kernel.key;
    let malformed = |why: &str| {
        OpError::InvalidArgument(format!(
            "kernel `{key}`: malformed segmented variant: {why}"
        ))
    };
    let rest = &kernel.wgsl[at + MARKER.len()..];
    let (header, body) = rest
        .split_once('\n')
        .ok_or_else(|| malformed("no module after the header"))?;
    let wgsl = body
        .trim_end()
        .strip_suffix("*/")
        .ok_or_else(|| malformed("the comment does not end the kernel"))?;
    let counts = header
        .split_whitespace()
        .map(|c| c.parse::<u32>().ok().filter(|&n| (1..=64).contains(&n)))
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| malformed("segment counts must be integers in 1..=64"))?;
    if counts.len() != kernel.bindings.len() {
        return Err(malformed(&format!(
            "{} segment counts for {} bindings",
            counts.len(),
            kernel.bindings.len()
        )));
    }
    Ok(Some(Segmented { counts, wgsl }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(wgsl: &'static str) -> &'static Kernel {
        Box::leak(Box::new(Kernel {
            key: "t",
            wgsl,
            entry: "main",
            bindings: &[Access::Read, Access::ReadWrite],
            workgroup_size: 1,
        }))
    }

    #[test]
    fn parses_the_header() {
        let k = kernel("fn main() {}\n/* @segmented 1 3\nfn x() {}\n*/\n");
        let s = variant(k).unwrap().unwrap();
        assert_eq!(s.counts, [1, 3]);
        assert_eq!(s.wgsl, "fn x() {}\n");
        assert_eq!(
            s.bindings(k),
            [
                Access::Read,
                Access::ReadWrite,
                Access::ReadWrite,
                Access::ReadWrite
            ]
        );
        assert!(variant(kernel("fn main() {}")).unwrap().is_none());
    }

    #[test]
    fn malformed_headers_are_errors() {
        for bad in [
            "/* @segmented 1\nx\n*/",
            "/* @segmented 1 0\nx\n*/",
            "/* @segmented 1 x\nx\n*/",
            "/* @segmented 1 2\nx\n",
            "/* @segmented 1 2",
        ] {
            assert!(
                matches!(variant(kernel(bad)), Err(OpError::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
