//! ONNX HardSigmoid, `max(0, min(1, alpha * X + beta))`, computed in
//! `max(T, FLOAT32)` (`ops_core::scalar::Ty::AtLeast`): on the GPU and on
//! the CPU reference, bit for bit against independent Rust arithmetic.
//!
//! - FLOAT64 (word pairs on the GPU) against Rust's `f64`: `alpha * x`
//!   rounded, `+ beta` rounded, then clamped, NaN propagating, on every
//!   FLOAT64 edge value (NaN, the infinities, both zeros, subnormals,
//!   extremes), on inputs where `alpha * x + beta` cancels to near 0 or
//!   lands near 1, and on random bits, under several `alpha`/`beta`
//!   (FLOAT32 attributes, read exactly) including 0, a negative slope and
//!   a FLOAT32 subnormal.
//! - FLOAT32 against Rust's `f32`, each step a FLOAT32 rounding, as
//!   before the FLOAT64 rows were added.

use std::collections::BTreeMap;

use ops_core::{AttrValue, DataType, HostTensor, OpArgs, Operator, TensorDesc};
use ops_tests::{edge_bits, gpu, Rng};

/// `(alpha, beta)` pairs: the defaults, values whose products and sums
/// round in FLOAT64 (and would round differently in FLOAT32), a negative
/// slope, a zero slope (`0 * inf` is NaN), a FLOAT32 subnormal slope, a
/// negative zero offset and a large slope (overflow to infinity).
const ATTRS: [(f32, f32); 8] = [
    (0.2, 0.5),
    (0.1, 0.3),
    (-1.5, 0.25),
    (0.0, 0.5),
    (1e-40, 1.0),
    (0.3, -0.0),
    (3.0e38, 0.7),
    (1.0 / 3.0, 1.0 / 7.0),
];

/// ONNX HardSigmoid over `x` with `alpha` and `beta`.
fn build(x: &HostTensor, alpha: f32, beta: f32) -> Box<dyn Operator> {
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == "onnx" && i.name == "HardSigmoid")
        .expect("onnx::HardSigmoid is in the catalog");
    let args = OpArgs {
        tensors: BTreeMap::from([("x".to_string(), x.desc().clone())]),
        attributes: BTreeMap::from([
            ("alpha".to_string(), AttrValue::Float(f64::from(alpha))),
            ("beta".to_string(), AttrValue::Float(f64::from(beta))),
        ]),
        ..OpArgs::default()
    };
    (info.build)(&args).unwrap_or_else(|e| panic!("onnx::HardSigmoid: {e}"))
}

/// IEEE 754 `maximum(0, minimum(1, v))`: NaN propagates, -0.0 gives +0.0.
fn clamp01_f64(v: f64) -> f64 {
    // `clamp` keeps NaN and -0.0; `maximum(0, -0.0)` is +0.0.
    if v == 0.0 {
        0.0
    } else {
        v.clamp(0.0, 1.0)
    }
}

fn clamp01_f32(v: f32) -> f32 {
    // `clamp` keeps NaN and -0.0; `maximum(0, -0.0)` is +0.0.
    if v == 0.0 {
        0.0
    } else {
        v.clamp(0.0, 1.0)
    }
}

/// The FLOAT64 meaning, independently: two `f64` roundings (Rust fuses
/// no multiply-add), then the clamp.
fn want_f64(alpha: f32, beta: f32, x: f64) -> f64 {
    clamp01_f64(f64::from(alpha) * x + f64::from(beta))
}

/// The FLOAT32 meaning: the same steps in `f32`.
fn want_f32(alpha: f32, beta: f32, x: f32) -> f32 {
    clamp01_f32(alpha * x + beta)
}

fn tensor(dt: DataType, bits: &[u64]) -> HostTensor {
    let w = dt.size_bytes();
    let bytes: Vec<u8> = bits
        .iter()
        .flat_map(|b| b.to_le_bytes()[..w].to_vec())
        .collect();
    HostTensor::from_bytes(TensorDesc::new(dt, [bits.len() as u32]), bytes).unwrap()
}

fn words(t: &HostTensor) -> Vec<u64> {
    let w = t.dtype().size_bytes();
    t.bytes()
        .chunks(w)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}

/// Runs HardSigmoid on the GPU and on the CPU reference and asserts both
/// are `want(x)` bit for bit, any NaN matching any NaN (NaN payloads are
/// not specified). Returns how many results were NaN, 0, 1 and strictly
/// between.
fn check(dt: DataType, alpha: f32, beta: f32, bits: &[u64]) -> [usize; 4] {
    let x = tensor(dt, bits);
    let op = build(&x, alpha, beta);
    assert!(
        matches!(op.tolerance(), ops_core::accuracy::Tolerance::Exact),
        "HardSigmoid is exact"
    );
    let cpu = op.run_cpu(&[&x]).expect("cpu");
    let gpu = gpu().run(op.as_ref(), &[&x]).expect("gpu");
    let (cpu, gpu) = (words(&cpu[0]), words(&gpu[0]));
    let mut kinds = [0; 4];
    for (i, &b) in bits.iter().enumerate() {
        let (want, nan, zero_or_one) = match dt {
            DataType::Float64 => {
                let w = want_f64(alpha, beta, f64::from_bits(b));
                (w.to_bits(), w.is_nan(), [0.0, 1.0].map(|c| w == c))
            }
            _ => {
                let w = want_f32(alpha, beta, f32::from_bits(b as u32));
                (
                    u64::from(w.to_bits()),
                    w.is_nan(),
                    [0.0, 1.0].map(|c| w == c),
                )
            }
        };
        for (backend, got) in [("gpu", gpu[i]), ("cpu", cpu[i])] {
            let got_nan = match dt {
                DataType::Float64 => f64::from_bits(got).is_nan(),
                _ => f32::from_bits(got as u32).is_nan(),
            };
            assert!(
                got == want || (nan && got_nan),
                "{dt} alpha {alpha:e} beta {beta:e}, x = {b:#018x} ({}): {backend} gives {got:#018x}, want {want:#018x}",
                if dt == DataType::Float64 {
                    f64::from_bits(b)
                } else {
                    f64::from(f32::from_bits(b as u32))
                },
            );
        }
        kinds[match (nan, zero_or_one) {
            (true, _) => 0,
            (_, [true, _]) => 1,
            (_, [_, true]) => 2,
            _ => 3,
        }] += 1;
    }
    kinds
}

/// FLOAT64 inputs next to `x` (a few ULPs either side, both signs of a
/// zero).
fn around(x: f64, out: &mut Vec<u64>) {
    if !x.is_finite() {
        return;
    }
    let b = x.to_bits() as i64;
    for k in -6i64..=6 {
        out.push((b + k) as u64);
    }
}

#[test]
fn float64_is_f64_bit_for_bit_on_edges_cancellation_and_random_bits() {
    let dt = DataType::Float64;
    let mut rng = Rng::new(0x4a5d);
    let mut totals = [0usize; 4];
    for (alpha, beta) in ATTRS {
        let (a, b) = (f64::from(alpha), f64::from(beta));
        let mut bits = edge_bits(dt);
        bits.extend([
            f64::MIN_POSITIVE.to_bits(),
            (-f64::MIN_POSITIVE).to_bits(),
            (f64::MIN_POSITIVE / 2.0).to_bits(),
            1e-300f64.to_bits(),
            (-1e-300f64).to_bits(),
            1e300f64.to_bits(),
            (-1e300f64).to_bits(),
            0.5f64.to_bits(),
            1.0e-20f64.to_bits(),
        ]);
        if a != 0.0 {
            // Where `alpha * x + beta` cancels to (near) 0, and where it
            // reaches 1.
            around(-b / a, &mut bits);
            around((1.0 - b) / a, &mut bits);
            around(f64::from(-beta / alpha), &mut bits);
        }
        for _ in 0..4096 {
            let sign = rng.next_u64() & (1 << 63);
            bits.push(match rng.below(4) {
                0 => rng.next_u64(),
                // Magnitudes near 1 / |alpha|: the interesting range.
                1 => sign | ((rng.next_u64() >> 12) | (rng.range(1000, 1090) as u64) << 52),
                // Subnormals and tiny normals.
                2 => sign | (rng.next_u64() >> rng.range(11, 63)),
                // Random points of the cancellation neighbourhood.
                _ if a != 0.0 => {
                    let x0 = -b / a;
                    (x0.to_bits() as i64 + rng.range(-1 << 20, 1 << 20)) as u64
                }
                _ => rng.next_u64(),
            });
        }
        let kinds = check(dt, alpha, beta, &bits);
        for (t, k) in totals.iter_mut().zip(kinds) {
            *t += k;
        }
    }
    // The cases reach every part of the clamp, and plenty of results
    // strictly inside it.
    assert!(totals.iter().all(|&k| k > 50), "kinds: {totals:?}");
}

/// The FLOAT64 kernel computes in FLOAT64: where the FLOAT32 steps would
/// round, the result is the `f64` one, not a FLOAT32 value widened.
#[test]
fn float64_does_not_compute_in_float32() {
    let (alpha, beta) = (0.1f32, 0.3f32);
    let xs = [1.0f64, 0.7, 2.999_999_955_296_516_4, -2.5];
    for x in xs {
        let wide = want_f64(alpha, beta, x);
        let narrow = f64::from(want_f32(alpha, beta, x as f32));
        assert_ne!(wide, narrow, "x = {x}: FLOAT32 steps give the same");
    }
    let bits: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
    let kinds = check(DataType::Float64, alpha, beta, &bits);
    assert_eq!(kinds[3], xs.len(), "every result is strictly inside (0, 1)");
}

#[test]
fn float32_steps_stay_float32_roundings() {
    let dt = DataType::Float32;
    let mut rng = Rng::new(0x4a5e);
    for (alpha, beta) in ATTRS {
        let mut bits = edge_bits(dt);
        if alpha != 0.0 {
            let x0 = -beta / alpha;
            if x0.is_finite() {
                let b = x0.to_bits() as i64;
                bits.extend((-6..=6).map(|k| (b + k) as u32 as u64));
            }
        }
        bits.extend((0..4096).map(|_| rng.next_u64() & 0xffff_ffff));
        check(dt, alpha, beta, &bits);
    }
}
