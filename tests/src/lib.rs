//! Shared helpers of the integration tests: the GPU context (failing, never
//! skipping, without an adapter), edge-value tensor data and a small
//! deterministic generator for it (re-exported from `ops_core::fuzz`).

use ops_core::HostTensor;

/// The shared GPU context; panics with the fix when no adapter exists.
pub fn gpu() -> &'static ops_gpu::Context {
    ops_gpu::shared().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
}

// The edge-value data helpers live in `ops_core::fuzz`, where the generated
// fuzzing strategies use them too.
pub use ops_core::fuzz::{edge_bits, tensor_with_edges, Rng};

/// Asserts two tensors are equal bit for bit, naming the first difference.
pub fn assert_bitwise_eq(got: &HostTensor, want: &HostTensor, context: &str) {
    assert_eq!(got.desc(), want.desc(), "{context}: descriptions differ");
    if got.bytes() != want.bytes() {
        let w = want.dtype().size_bytes();
        let i = got
            .bytes()
            .chunks(w)
            .zip(want.bytes().chunks(w))
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{context}: element {i} differs: got {:02x?}, want {:02x?}",
            &got.bytes()[i * w..(i + 1) * w],
            &want.bytes()[i * w..(i + 1) * w]
        );
    }
}
