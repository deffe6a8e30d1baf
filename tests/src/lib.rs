//! Shared helpers of the integration tests: the GPU context (failing, never
//! skipping, without an adapter), edge-value tensor data and a small
//! deterministic generator for it.

use ops_core::{DataType, HostTensor, TensorDesc};

/// The shared GPU context; panics with the fix when no adapter exists.
pub fn gpu() -> &'static ops_gpu::Context {
    ops_gpu::shared().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
}

/// SplitMix64: a tiny deterministic generator for tensor data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value below `n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Raw little-endian bit patterns at the edges of a data type: NaNs with
/// payloads, both infinities, both zeros, subnormals, extremes, values above
/// 2^32 and 2^53.
pub fn edge_bits(dtype: DataType) -> Vec<u64> {
    match dtype {
        DataType::Float64 => vec![
            0x7FF8_0000_0000_0000,
            0xFFF8_0000_0000_0001,
            0x7FF0_0000_0000_0001,
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0,
            0x8000_0000_0000_0000,
            1,
            0x8000_0000_0000_0001,
            0x000F_FFFF_FFFF_FFFF,
            0x7FEF_FFFF_FFFF_FFFF,
            0xFFEF_FFFF_FFFF_FFFF,
            1f64.to_bits(),
            (-1f64).to_bits(),
            9_007_199_254_740_993f64.to_bits(),
        ],
        DataType::Float32 => [
            0x7FC0_0000u32,
            0xFFC0_0001,
            0x7F80_0001,
            0x7F80_0000,
            0xFF80_0000,
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007F_FFFF,
            0x7F7F_FFFF,
            0xFF7F_FFFF,
            1f32.to_bits(),
            (-1f32).to_bits(),
        ]
        .map(u64::from)
        .to_vec(),
        DataType::Float16 => [
            0x7E00u16, 0xFE01, 0x7C01, 0x7C00, 0xFC00, 0, 0x8000, 1, 0x8001, 0x03FF, 0x7BFF,
            0xFBFF, 0x3C00, 0xBC00,
        ]
        .map(u64::from)
        .to_vec(),
        DataType::Int64 => [
            i64::MIN,
            i64::MAX,
            0,
            -1,
            1,
            1 << 32,
            -(1 << 32) - 1,
            (1 << 53) + 1,
            -(1 << 53) - 1,
        ]
        .map(|v| v as u64)
        .to_vec(),
        DataType::Uint64 => vec![
            u64::MAX,
            0,
            1,
            1 << 32,
            (1 << 32) - 1,
            (1 << 53) + 1,
            1 << 63,
            (1 << 63) - 1,
        ],
        DataType::Int32 => [i32::MIN, i32::MAX, 0, -1, 1]
            .map(|v| v as u32 as u64)
            .to_vec(),
        DataType::Uint32 => vec![u64::from(u32::MAX), 0, 1, 1 << 31],
        DataType::Int16 => [i16::MIN, i16::MAX, 0, -1, 1]
            .map(|v| v as u16 as u64)
            .to_vec(),
        DataType::Uint16 => vec![0xFFFF, 0, 1, 0x8000],
        DataType::Int8 => [i8::MIN, i8::MAX, 0, -1, 1]
            .map(|v| v as u8 as u64)
            .to_vec(),
        DataType::Uint8 => vec![0xFF, 0, 1, 0x80],
    }
}

/// A tensor of `dtype` and `sizes` whose elements mix edge values, a small
/// pool of repeated values (ties) and random bits.
pub fn tensor_with_edges(dtype: DataType, sizes: &[u32], rng: &mut Rng) -> HostTensor {
    let desc = TensorDesc::new(dtype, sizes.to_vec());
    let n = desc.element_count().unwrap_or(0) as usize;
    let width = dtype.size_bytes();
    let edges = edge_bits(dtype);
    let pool: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
    let mut bytes = Vec::with_capacity(n * width);
    for _ in 0..n {
        let v = match rng.below(4) {
            0 => edges[rng.below(edges.len() as u64) as usize],
            1 => pool[rng.below(pool.len() as u64) as usize],
            2 => rng.below(4),
            _ => rng.next_u64(),
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    HostTensor::from_bytes(desc, bytes).expect("sizes match")
}

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
