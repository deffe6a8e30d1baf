//! Casts between data types (`ops_core::scalar`, "Casts") on the GPU
//! against the CPU reference, bit for bit, for every pair of the eleven
//! types the GPU computes: `specs/cast_round_trip.op` maps each element
//! through `cast<T>(cast<U>(x))`, one kernel per (`T`, `U`), so each pair
//! is cast in both directions, on every edge value of `T` (NaN, the
//! infinities, both zeros, halfway cases, the limits of every narrower
//! type and beyond) and random bits; then generated fuzzing, reductions
//! and plan variants included.

use ops_core::fuzz::{self, proptest};
use ops_core::{DataType, HostTensor, OpError, Operator, TensorDesc};
use ops_tests::{edge_bits, gpu, tensor_with_edges, Rng};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

ops_macros::operator!("../specs/cast_round_trip.op");
use castroundtrip::Via;

const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/proptest-regressions/casts.txt"
);

/// Each `via` and the type it names.
const VIA: [(Via, DataType); 11] = [
    (Via::Float32, DataType::Float32),
    (Via::Float16, DataType::Float16),
    (Via::Int64, DataType::Int64),
    (Via::Int32, DataType::Int32),
    (Via::Int16, DataType::Int16),
    (Via::Int8, DataType::Int8),
    (Via::Uint64, DataType::Uint64),
    (Via::Uint32, DataType::Uint32),
    (Via::Uint16, DataType::Uint16),
    (Via::Uint8, DataType::Uint8),
    (Via::Bool, DataType::Bool),
];

/// Equal bits, or two NaNs (payloads may differ: NaN payloads are not
/// part of a cast's meaning).
fn assert_same(got: &HostTensor, want: &HostTensor, context: &str) {
    assert_eq!(got.desc(), want.desc(), "{context}");
    let dt = want.dtype();
    let w = dt.size_bytes();
    let is_nan = |b: &[u8]| match dt {
        DataType::Float32 => f32::from_le_bytes(b.try_into().unwrap()).is_nan(),
        DataType::Float16 => half::f16::from_le_bytes(b.try_into().unwrap()).is_nan(),
        _ => false,
    };
    for (i, (g, e)) in got
        .bytes()
        .chunks(w)
        .zip(want.bytes().chunks(w))
        .enumerate()
    {
        assert!(
            g == e || (is_nan(g) && is_nan(e)),
            "{context}: element {i} differs: got {g:02x?}, want {e:02x?}"
        );
    }
}

/// The edge values of `dt` and 4096 elements of edges and random bits.
fn inputs(dt: DataType, rng: &mut Rng) -> HostTensor {
    let edges = edge_bits(dt);
    let random = tensor_with_edges(dt, &[4096], rng);
    let w = dt.size_bytes();
    let mut bytes: Vec<u8> = edges
        .iter()
        .flat_map(|&v| v.to_le_bytes()[..w].to_vec())
        .collect();
    bytes.extend_from_slice(random.bytes());
    let n = (bytes.len() / w) as u32;
    HostTensor::from_bytes(TensorDesc::new(dt, [n]), bytes).unwrap()
}

fn round_trip(input: &TensorDesc, via: Via, axes: Vec<i32>) -> CastRoundTripDesc {
    CastRoundTripDesc::builder()
        .input(input.clone())
        .axes(axes)
        .via(via)
        .build()
        .unwrap()
}

/// Every pair (`T`, `U`), both directions, on every edge value of `T`.
#[test]
fn every_pair_of_types_casts_on_the_gpu_as_on_the_cpu() {
    let mut rng = Rng::new(0xCA57);
    let mut pairs = 0;
    for (_, t) in VIA {
        let x = inputs(t, &mut rng);
        for (via, u) in VIA {
            let d = round_trip(x.desc(), via, Vec::new());
            let cpu = d.run_cpu(&[&x]).unwrap().remove(0);
            let got = gpu().run(&d, &[&x]).unwrap().remove(0);
            assert_same(&got, &cpu, &format!("cast<{t}>(cast<{u}>(x))"));
            pairs += 1;
        }
    }
    assert_eq!(pairs, 121);
}

/// The meaning the scalar docs give, on both backends.
#[test]
fn casts_mean_what_the_docs_say() {
    let both = |x: &HostTensor, via: Via| -> HostTensor {
        let d = round_trip(x.desc(), via, Vec::new());
        let cpu = d.run_cpu(&[x]).unwrap().remove(0);
        let got = gpu().run(&d, &[x]).unwrap().remove(0);
        assert_same(&got, &cpu, &format!("{via:?}"));
        cpu
    };
    let f = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        2.7,
        -2.7,
        300.0,
        -129.0,
        1e10,
        65519.0,
        1.0 + 2f32.powi(-11) + 2f32.powi(-23),
    ];
    let x = HostTensor::from_slice([f.len() as u32], &f).unwrap();
    let out = |t: HostTensor| t.to_vec::<f32>().unwrap();
    // Truncation toward zero, NaN to 0, saturation.
    assert_eq!(
        out(both(&x, Via::Int8)),
        [0., 127., -128., 0., 2., -2., 127., -128., 127., 127., 1.]
    );
    assert_eq!(
        out(both(&x, Via::Uint8)),
        [0., 255., 0., 0., 2., 0., 255., 0., 255., 255., 1.]
    );
    // BOOL: nonzero, NaN included.
    assert_eq!(
        out(both(&x, Via::Bool)),
        [1., 1., 1., 0., 1., 1., 1., 1., 1., 1., 1.]
    );
    // FLOAT16: rounded once (a sticky bit above the tie rounds up), to
    // infinity from 65520.
    let h = out(both(&x, Via::Float16));
    assert_eq!(h[8], f32::INFINITY);
    assert_eq!(h[9], 65504.0);
    assert_eq!(h[10], 1.0 + 2f32.powi(-10));
    assert_eq!(h[4], 691.0 / 256.0, "2.7 to the nearest FLOAT16");
    // 64-bit integers round to FLOAT32 from all their bits.
    let i = [
        (1i64 << 60) + (1 << 36) + 1,
        (1 << 53) + 1,
        i64::MIN,
        300,
        -1,
    ];
    let x = HostTensor::from_slice([5], &i).unwrap();
    let v = both(&x, Via::Float32).to_vec::<i64>().unwrap();
    assert_eq!(v[0], (1 << 60) + (1 << 37));
    assert_eq!(v[1], 1 << 53);
    assert_eq!(v[2], i64::MIN);
    // Integers wrap.
    let v = both(&x, Via::Int8).to_vec::<i64>().unwrap();
    assert_eq!(&v[3..], [44, -1]);
    let v = both(&x, Via::Uint16).to_vec::<i64>().unwrap();
    assert_eq!(&v[3..], [300, 65535]);
}

fn gpu_run(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    gpu().run(op, inputs)
}

fn gpu_plan(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    plan: &ops_core::GpuPlan,
) -> Result<Vec<HostTensor>, OpError> {
    gpu().run_plan(op, inputs, plan)
}

proptest! {
    #![proptest_config(fuzz::config(48, Some(REGRESSIONS)))]

    /// Generated cases: any type pair, rank, axes, reductions with `max`,
    /// through every plan variant.
    #[test]
    fn generated_round_trips_gpu_equals_cpu(case in CastRoundTripDesc::valid_cases()) {
        let cpu = fuzz::check_valid(&case, Some(&gpu_run)).map_err(TestCaseError::fail)?;
        fuzz::check_variants(&case, &cpu, &gpu_plan).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn invalid_cases_are_rejected_naming_the_rule(case in CastRoundTripDesc::invalid_cases()) {
        fuzz::check_invalid(&case).map_err(TestCaseError::fail)?;
    }
}

/// The generated cases are mostly valid, so the fuzzing above runs.
#[test]
fn acceptance_is_above_five_percent() {
    use ops_core::OperatorType;
    let a = fuzz::acceptance(<CastRoundTripDesc as OperatorType>::INFO, 2000);
    println!(
        "CastRoundTrip: {:.1}% of drawn descriptors are valid",
        100.0 * a.rate()
    );
    assert!(a.rate() > 0.05, "{a:?}");
}
