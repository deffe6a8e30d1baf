//! Shared helpers of the integration tests: the GPU context (failing, never
//! skipping, without an adapter), edge-value tensor data and a small
//! deterministic generator for it (re-exported from `ops_core::fuzz`).

use ops_core::{DataType, HostTensor, TensorDesc};

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

/// Float pairs that probe every part of the generated order key: all
/// 65,536 FLOAT16 values, each beside another (`[65536, 2]`, reduced over
/// axis 1, and `[2, 65536]`, over axis 0: rows and columns kernels), and
/// every ordered pair of FLOAT32 values around zero, the infinities and
/// the NaNs of both signs.
pub fn float_pairs() -> Vec<(HostTensor, HostTensor)> {
    let f16: Vec<u16> = (0..=0xffffu32)
        .flat_map(|i| {
            [
                i as u16,
                (i.wrapping_mul(40503).wrapping_add(12345) & 0xffff) as u16,
            ]
        })
        .collect();
    let f32_edges: [u32; 24] = [
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x807f_ffff,
        0x0080_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7f80_0001,
        0xff80_0001,
        0x7fc0_0000,
        0xffc0_0000,
        0x7fff_ffff,
        0xffff_ffff,
        0x7fbf_ffff,
        0x7f7f_fffe,
        0xff7f_fffe,
        0x0000_0002,
        0x8000_0002,
    ];
    let f32: Vec<u32> = f32_edges
        .iter()
        .flat_map(|&a| f32_edges.iter().flat_map(move |&b| [a, b]))
        .collect();
    // `bytes` holds n pairs: as [n, 2] and, transposed, as [2, n].
    let pairs = |dt: DataType, bytes: Vec<u8>| {
        let w = dt.size_bytes();
        let n = bytes.len() / (2 * w);
        let mut columns = vec![0u8; bytes.len()];
        for (i, element) in bytes.chunks(w).enumerate() {
            let at = ((i % 2) * n + i / 2) * w;
            columns[at..at + w].copy_from_slice(element);
        }
        let n = n as u32;
        let rows = HostTensor::from_bytes(TensorDesc::new(dt, [n, 2]), bytes).unwrap();
        let columns = HostTensor::from_bytes(TensorDesc::new(dt, [2, n]), columns).unwrap();
        (rows, columns)
    };
    vec![
        pairs(
            DataType::Float16,
            f16.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        pairs(
            DataType::Float32,
            f32.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
    ]
}

/// A context whose storage bindings are small enough that a tensor of
/// `bytes` runs through the segmented variant of its kernels, bound in
/// 2 to 4 segments: one context per binding size of 1 KiB times a power
/// of 4, created on first use. `None` for tensors of at most 1 KiB (no
/// binding smaller than that is tried).
pub fn segmented_context_for(bytes: u64) -> Option<&'static ops_gpu::Context> {
    use std::sync::OnceLock;
    const SIZES: usize = 10;
    static CONTEXTS: [OnceLock<ops_gpu::Context>; SIZES] = [const { OnceLock::new() }; SIZES];
    let k = (0..SIZES).find(|&k| {
        let binding = 1024u64 << (2 * k);
        bytes > binding && bytes <= 4 * binding
    })?;
    Some(CONTEXTS[k].get_or_init(|| {
        ops_gpu::Context::new()
            .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
            .with_max_binding_size(1024 << (2 * k))
    }))
}

/// GatherND1 of `x` by `idx` (`indices_dimension_count` 2: `[n, tuple]`
/// indices), gathering from the last `input_dims` dimensions of `x`.
pub fn gather_nd1(x: &HostTensor, idx: &HostTensor, input_dims: u32) -> ops::GatherND1Desc {
    ops::GatherND1Desc::builder()
        .input(x.desc().clone())
        .indices(idx.desc().clone())
        .input_dimension_count(input_dims)
        .indices_dimension_count(2)
        .build()
        .unwrap()
}

/// Scatter of `up` into `x` along axis 0 at `idx`.
pub fn scatter_axis0(x: &HostTensor, idx: &HostTensor, up: &HostTensor) -> ops::ScatterDesc {
    ops::ScatterDesc::builder()
        .input(x.desc().clone())
        .indices(idx.desc().clone())
        .updates(up.desc().clone())
        .axis(0)
        .build()
        .unwrap()
}
