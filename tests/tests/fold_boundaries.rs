//! The fold pattern at and across every size threshold its planner has.
//!
//! Nothing here lists a threshold by hand: for each shape family the test
//! scans the reduced length, asks `ops_core::family::fold` where the plan
//! of either device class changes kind (one pass or chunks and a combine
//! pass, and how many passes), and runs every plan variant of the call
//! (`Operator::gpu_plan_variants`: both classes' picks, one pass, two
//! chunks, and chunks of three combined three at a time) at `n - 1`, `n`
//! and `n + 1` of each change, through DirectML REDUCE's SUM, MAX, L2,
//! MULTIPLY and LOG_SUM_EXP (a fold shifted by the maximum: two folds a
//! plan) on every data type their tables list, against the CPU
//! backend and the yardstick within the spec's accuracy contract. The planner's own picks
//! also run through the segmented kernels (the largest buffer bound in
//! several bindings).

use ops::reduce::{ReduceDesc, ReduceFunction};
use ops_core::family::fold::{fold_strategy, FoldStrategy};
use ops_core::family::reduce::chunk_len;
use ops_core::fuzz::{same_sign_tensor, tensor_with_edges, Rng};
use ops_core::{
    accuracy, DataType, DeviceClass, FeatureLevel, HostTensor, Operator, TensorDesc,
    MAX_THREAD_STEPS,
};
use ops_tests::{gpu, segmented_context_for};

/// Passes of a fold plan: the first pass, then one combine pass per level.
fn passes(s: FoldStrategy) -> u32 {
    let mut n = 1;
    let mut count = s.chunks;
    while count > 1 {
        count = if count <= s.cap {
            1
        } else {
            count.div_ceil(s.cap)
        };
        n += 1;
    }
    n
}

/// The reduced lengths in `1..=max` where either class's plan for
/// `outputs` outputs, a thread folding at most `steps` values, changes its
/// number of passes, or where its chunk length reaches the thread cap.
fn boundaries(outputs: u64, max: u64, steps: u64) -> Vec<u64> {
    let mut out = Vec::new();
    for class in DeviceClass::ALL {
        let mut prev = None;
        for len in 1..=max {
            let s = fold_strategy(outputs, len, class, steps);
            let kind = (passes(s), chunk_len(len, s.chunks) == s.cap);
            if prev.is_some_and(|p| p != kind) {
                out.push(len);
            }
            prev = Some(kind);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Data for `f` on `dtype`: floats from the accuracy domain of `f`'s
/// contract, integers with their edge values.
fn data(f: ReduceFunction, dtype: DataType, sizes: &[u32], rng: &mut Rng) -> HostTensor {
    if dtype.is_float() {
        let probe = HostTensor::zeros(TensorDesc::new(dtype, [1])).unwrap();
        let domain = reduce(&probe, f, &[0]).accuracy_domain();
        same_sign_tensor(dtype, sizes, domain, rng)
    } else {
        tensor_with_edges(dtype, sizes, rng)
    }
}

fn reduce(x: &HostTensor, function: ReduceFunction, axes: &[u32]) -> ReduceDesc {
    ReduceDesc::builder()
        .input(x.desc().clone())
        .output_dtype(x.dtype())
        .function(function)
        .axes(axes.to_vec())
        .build()
        .unwrap()
}

/// Runs every plan variant of `op` on `x` against the CPU reference.
fn check(op: &ReduceDesc, x: &HostTensor, what: &str) -> usize {
    check_with(op, x, &[x], what)
}

/// [`check`] of any fold operator whose first input is `x`, with all its
/// inputs (host tensors included).
fn check_with<O: Operator>(op: &O, x: &HostTensor, inputs: &[&HostTensor], what: &str) -> usize {
    op.validate(FeatureLevel::HIGHEST)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let cpu = op.run_cpu(inputs).unwrap().remove(0);
    let yardstick = op.run_yardstick(inputs).unwrap().remove(0);
    let tol = op.tolerance();
    let mut runs = 0;
    for (name, plan) in op.gpu_plan_variants().unwrap() {
        let got = gpu().run_plan(op, inputs, &plan).unwrap().remove(0);
        if let Some((i, n)) = accuracy::first_contract_mismatch(&yardstick, &cpu, &got, tol) {
            panic!(
                "{what} {name}: element {i} ({n} differ) is {:?}, expected {:?} ({tol})",
                &got.bytes()[i * x.dtype().size_bytes()..(i + 1) * x.dtype().size_bytes()],
                &cpu.bytes()[i * x.dtype().size_bytes()..(i + 1) * x.dtype().size_bytes()],
            );
        }
        runs += 1;
    }
    runs
}

const FUNCTIONS: [(ReduceFunction, &[DataType]); 5] = [
    (
        ReduceFunction::Sum,
        &[
            DataType::Float32,
            DataType::Float16,
            DataType::Int32,
            DataType::Uint64,
        ],
    ),
    (
        ReduceFunction::Max,
        &[
            DataType::Float16,
            DataType::Int8,
            DataType::Int64,
            DataType::Uint16,
        ],
    ),
    (ReduceFunction::L2, &[DataType::Float32]),
    (
        ReduceFunction::Multiply,
        &[DataType::Int64, DataType::Float32],
    ),
    (
        ReduceFunction::LogSumExp,
        &[DataType::Float32, DataType::Float16],
    ),
];

#[test]
fn every_threshold_of_every_shape_family() {
    let mut rng = Rng::new(0xF01D);
    let mut runs = 0;
    let mut sizes_run = 0;
    // (outputs, how the reduced length and the outputs lie).
    for outputs in [1u32, 3, 300] {
        let lens = boundaries(
            u64::from(outputs),
            2 * MAX_THREAD_STEPS + 8,
            MAX_THREAD_STEPS,
        );
        assert!(!lens.is_empty(), "no threshold for {outputs} outputs");
        println!("{outputs} outputs: thresholds at {lens:?}");
        for &n in &lens {
            for len in [n - 1, n, n + 1] {
                let len = len as u32;
                // Rows (contiguous), columns (strided), a middle axis, and
                // a sub-tensor split over two reduced dimensions.
                // Two reduced dimensions a kept one apart: `len = p * q`
                // with `p` its smallest factor (a prime `len` keeps one).
                let p = (2..=len).find(|p| len.is_multiple_of(*p)).unwrap_or(1);
                let families: [(Vec<u32>, Vec<u32>); 4] = [
                    (vec![outputs, len], vec![1]),
                    (vec![len, outputs], vec![0]),
                    (vec![2, len, outputs.div_ceil(2)], vec![1]),
                    (vec![p, outputs, len / p], vec![0, 2]),
                ];
                for (k, (shape, axes)) in families.iter().enumerate() {
                    // Rotate functions and types over the families and
                    // sizes to keep the run short.
                    let (f, types) = FUNCTIONS[(k + len as usize) % FUNCTIONS.len()];
                    let dtype = types[(len as usize / 3 + k) % types.len()];
                    let x = data(f, dtype, shape, &mut rng);
                    let op = reduce(&x, f, axes);
                    runs += check(&op, &x, &format!("{f:?} {dtype} {shape:?} over {axes:?}"));
                    sizes_run += 1;
                }
            }
        }
    }
    println!("{sizes_run} calls, {runs} GPU runs");
}

#[test]
fn deep_combine_trees_and_empty_sub_tensors() {
    let mut rng = Rng::new(7);
    // Chunks of three combined three at a time: 7 passes for 1000.
    for (shape, axes) in [
        (vec![1000u32], vec![0u32]),
        (vec![5, 243], vec![1]),
        (vec![244, 5], vec![0]),
        (vec![3, 0, 2], vec![1]),
    ] {
        for (f, types) in FUNCTIONS {
            for &dtype in types {
                let x = data(f, dtype, &shape, &mut rng);
                let op = reduce(&x, f, &axes);
                check(&op, &x, &format!("{f:?} {dtype} {shape:?}"));
            }
        }
    }
}

#[test]
fn the_planners_picks_through_segmented_bindings() {
    let mut rng = Rng::new(11);
    for (f, dtype, shape, axes) in [
        (
            ReduceFunction::Sum,
            DataType::Float32,
            vec![5u32, 40_000],
            vec![1u32],
        ),
        (
            ReduceFunction::Max,
            DataType::Int64,
            vec![20_000, 3],
            vec![0],
        ),
        (
            ReduceFunction::L2,
            DataType::Float16,
            vec![4, 30_000, 2],
            vec![1],
        ),
        (
            ReduceFunction::LogSumExp,
            DataType::Float32,
            vec![3, 40_000],
            vec![1],
        ),
    ] {
        let x = data(f, dtype, &shape, &mut rng);
        let op = reduce(&x, f, &axes);
        let bytes = x.bytes().len() as u64;
        let ctx = segmented_context_for(bytes).expect("a binding size below the input");
        let cpu = op.run_cpu(&[&x]).unwrap().remove(0);
        let yardstick = op.run_yardstick(&[&x]).unwrap().remove(0);
        for class in DeviceClass::ALL {
            let plan = op.gpu_plan_for(class).unwrap();
            let got = ctx.run_plan(&op, &[&x], &plan).unwrap().remove(0);
            assert_eq!(
                accuracy::first_contract_mismatch(&yardstick, &cpu, &got, op.tolerance()),
                None,
                "{f:?} {dtype} {shape:?} {class:?}"
            );
        }
    }
}

#[test]
fn seed_examples_and_empty_results() {
    let x = HostTensor::from_slice(
        [3u32, 3].as_slice(),
        &[1f32, 2., 3., 3., 0., 4., 2., 4., 2.],
    )
    .unwrap();
    let sum = |axes: &[u32]| {
        let op = reduce(&x, ReduceFunction::Sum, axes);
        let got = gpu().run(&op, &[&x]).unwrap().remove(0);
        assert_eq!(got, op.run_cpu(&[&x]).unwrap().remove(0));
        got.to_vec::<f32>().unwrap()
    };
    assert_eq!(sum(&[0]), [6., 6., 9.]);
    assert_eq!(sum(&[1]), [6., 7., 8.]);
    assert_eq!(sum(&[0, 1]), [21.]);
    let empty = HostTensor::from_slice([2u32, 0].as_slice(), &[] as &[f32]).unwrap();
    for (f, want) in [
        (ReduceFunction::Sum, 0.0f32),
        (ReduceFunction::Multiply, 1.0),
        (ReduceFunction::Max, f32::NEG_INFINITY),
        (ReduceFunction::Min, f32::INFINITY),
        (ReduceFunction::LogSum, f32::NEG_INFINITY),
    ] {
        let op = reduce(&empty, f, &[1]);
        for got in [
            op.run_cpu(&[&empty]).unwrap().remove(0),
            gpu().run(&op, &[&empty]).unwrap().remove(0),
        ] {
            assert_eq!(got.to_vec::<f32>().unwrap(), [want, want], "{f:?}");
        }
    }
    let op = reduce(&empty, ReduceFunction::Average, &[1]);
    let got = gpu().run(&op, &[&empty]).unwrap().remove(0);
    assert!(got.to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
}

#[test]
fn integer_folds_wrap_and_floats_meet_their_bounds() {
    // INT32 sums wrap; UINT32 squares wrap.
    let x = HostTensor::from_slice([4u32].as_slice(), &[i32::MAX, 1, i32::MAX, 5]).unwrap();
    let op = reduce(&x, ReduceFunction::Sum, &[0]);
    let got = gpu().run(&op, &[&x]).unwrap().remove(0);
    assert_eq!(
        got.to_vec::<i32>().unwrap(),
        [i32::MAX
            .wrapping_add(1)
            .wrapping_add(i32::MAX)
            .wrapping_add(5)]
    );
    let u = HostTensor::from_slice([2u32].as_slice(), &[0x1_0001u32, 3]).unwrap();
    let op = ReduceDesc::builder()
        .input(u.desc().clone())
        .output(TensorDesc::new(DataType::Uint32, [1]))
        .function(ReduceFunction::SumSquare)
        .axes([0])
        .build()
        .unwrap();
    let got = gpu().run(&op, &[&u]).unwrap().remove(0);
    assert_eq!(
        got.to_vec::<u32>().unwrap(),
        [0x1_0001u32.wrapping_mul(0x1_0001).wrapping_add(9)]
    );
    // A long FLOAT32 sum: the GPU's chunked order differs from the CPU's,
    // and the contract (N ULP) holds where bit equality does not have to.
    let mut rng = Rng::new(3);
    let x = same_sign_tensor(DataType::Float32, &[100_000], None, &mut rng);
    let op = reduce(&x, ReduceFunction::Sum, &[0]);
    assert_eq!(op.tolerance(), ops_core::Tolerance::Ulp(100_000));
    let cpu = op.run_cpu(&[&x]).unwrap().remove(0);
    let got = gpu().run(&op, &[&x]).unwrap().remove(0);
    let d = accuracy::max_ulp_distance(&cpu, &got).unwrap();
    println!("FLOAT32 sum of 100000: {d} ULP from the f64 reference");
    assert!(d <= 100_000);
}

/// Log-sum-exp shifted by each output's maximum (`shift: max`), ONNX
/// ReduceLogSumExp and DirectML REDUCE's LOG_SUM_EXP, on both backends and
/// through every GPU plan variant: finite where `exp` of the elements
/// overflows the compute type (`f32` for FLOAT16 and FLOAT32, `f64` for
/// FLOAT64), and the unshifted formula's infinities and NaN.
#[test]
fn log_sum_exp_is_shifted_by_the_maximum() {
    use ops::onnx::ReduceLogSumExpDesc;
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let ln2 = std::f64::consts::LN_2;
    // (row, log-sum-exp).
    let rows = [
        ([100.0, 100.0], 100.0 + ln2),
        ([-inf, -inf], -inf),
        ([inf, 1.0], inf),
        ([-inf, inf], inf),
        ([nan, 1.0], nan),
        ([nan, inf], nan),
        ([-inf, 2.0], 2.0),
        ([1000.0, 0.0], 1000.0),
    ];
    let flat: Vec<f64> = rows.iter().flat_map(|r| r.0).collect();
    let sizes = [rows.len() as u32, 2];
    let axes = HostTensor::from_slice([1u32].as_slice(), &[1i64]).unwrap();
    // Each row's result, as `f64`, for every backend and plan variant.
    fn results<O: Operator>(op: &O, inputs: &[&HostTensor]) -> Vec<(String, Vec<f64>)> {
        let as_f64 = |t: HostTensor| match t.dtype() {
            DataType::Float16 => t
                .to_vec::<half::f16>()
                .unwrap()
                .iter()
                .map(|v| v.to_f64())
                .collect(),
            DataType::Float32 => t
                .to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|&v| f64::from(v))
                .collect(),
            _ => t.to_vec::<f64>().unwrap(),
        };
        let mut out = vec![(
            "cpu".to_string(),
            as_f64(op.run_cpu(inputs).unwrap().remove(0)),
        )];
        for (name, plan) in op.gpu_plan_variants().unwrap() {
            let got = gpu().run_plan(op, inputs, &plan).unwrap().remove(0);
            out.push((format!("gpu {name}"), as_f64(got)));
        }
        out
    }
    for dtype in [DataType::Float32, DataType::Float16, DataType::Float64] {
        let x = match dtype {
            DataType::Float32 => {
                let v: Vec<f32> = flat.iter().map(|&v| v as f32).collect();
                HostTensor::from_slice(sizes.as_slice(), &v).unwrap()
            }
            DataType::Float16 => {
                let v: Vec<half::f16> = flat.iter().map(|&v| half::f16::from_f64(v)).collect();
                HostTensor::from_slice(sizes.as_slice(), &v).unwrap()
            }
            _ => HostTensor::from_slice(sizes.as_slice(), &flat).unwrap(),
        };
        // The expected value rounded to the type, and how far the GPU's
        // `exp` and `log` may leave it.
        let (round, slack): (fn(f64) -> f64, f64) = match dtype {
            DataType::Float32 => (|v| f64::from(v as f32), 1e-4),
            DataType::Float16 => (|v| half::f16::from_f64(v).to_f64(), 0.0),
            _ => (|v| v, 1e-12),
        };
        let onnx = ReduceLogSumExpDesc::builder()
            .data(x.desc().clone())
            .axes(axes.clone())
            .build()
            .unwrap();
        let mut runs = results(&onnx, &[&x, &axes]);
        if dtype != DataType::Float64 {
            runs.extend(results(&reduce(&x, ReduceFunction::LogSumExp, &[1]), &[&x]));
        }
        for (name, got) in runs {
            for ((row, want), got) in rows.iter().zip(got) {
                let want = round(*want);
                let ok = if want.is_finite() {
                    (got - want).abs() <= slack * want.abs()
                } else {
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
                };
                assert!(
                    ok,
                    "{dtype} {name}: log-sum-exp of {row:?} is {got}, expected {want}"
                );
            }
        }
    }
    // Beyond `f64`'s `exp` too.
    let x = HostTensor::from_slice([2u32].as_slice(), &[800f64, 800.0]).unwrap();
    let axes0 = HostTensor::from_slice([1u32].as_slice(), &[0i64]).unwrap();
    let onnx = ReduceLogSumExpDesc::builder()
        .data(x.desc().clone())
        .axes(axes0.clone())
        .build()
        .unwrap();
    for (name, got) in results(&onnx, &[&x, &axes0]) {
        assert!(
            (got[0] - (800.0 + ln2)).abs() < 1e-12,
            "FLOAT64 {name}: {}",
            got[0]
        );
    }
}

/// Each output's shift is the maximum of its whole sub-tensor, however
/// its plan splits it into chunks: one element of 1000 among values in
/// `[0, 1)`, first, in the middle or last of a row, gives 1000 exactly,
/// where a shift that missed it would leave `exp(1000 - m)` to overflow.
#[test]
fn the_shift_spans_every_chunk() {
    let mut rng = Rng::new(0x15E);
    let mut runs = 0;
    for len in [2u32, 3, 1000, 1025, 5000] {
        for dtype in [DataType::Float32, DataType::Float16] {
            let mut v: Vec<f64> = (0..3 * len)
                .map(|_| rng.below(1 << 20) as f64 / f64::from(1u32 << 20))
                .collect();
            for (row, at) in [0, len / 2, len - 1].into_iter().enumerate() {
                v[row * len as usize + at as usize] = 1000.0;
            }
            let x = match dtype {
                DataType::Float32 => {
                    let v: Vec<f32> = v.iter().map(|&v| v as f32).collect();
                    HostTensor::from_slice([3u32, len].as_slice(), &v).unwrap()
                }
                _ => {
                    let v: Vec<half::f16> = v.iter().map(|&v| half::f16::from_f64(v)).collect();
                    HostTensor::from_slice([3u32, len].as_slice(), &v).unwrap()
                }
            };
            let op = reduce(&x, ReduceFunction::LogSumExp, &[1]);
            let want = op.run_cpu(&[&x]).unwrap().remove(0);
            let thousand = HostTensor::from_bytes(
                want.desc().clone(),
                match dtype {
                    DataType::Float32 => {
                        [1000f32; 3].iter().flat_map(|v| v.to_le_bytes()).collect()
                    }
                    _ => [half::f16::from_f32(1000.0); 3]
                        .iter()
                        .flat_map(|v| v.to_le_bytes())
                        .collect(),
                },
            )
            .unwrap();
            assert_eq!(want, thousand, "cpu {dtype} {len}");
            for (name, plan) in op.gpu_plan_variants().unwrap() {
                let got = gpu().run_plan(&op, &[&x], &plan).unwrap().remove(0);
                assert_eq!(got, thousand, "{dtype} {len} {name}");
                runs += 1;
            }
        }
    }
    println!("{runs} GPU runs");
}

/// The most values a thread of `op` folds (its plans' `cap` but for the
/// deep-tree variant's 3), from the plan variants' names.
fn thread_steps<O: Operator>(op: &O) -> u64 {
    op.gpu_plan_variants()
        .unwrap()
        .iter()
        .filter_map(|(name, _)| {
            let cap = name.split("cap: ").nth(1)?.trim_end_matches(" }");
            cap.parse::<u64>().ok().filter(|&c| c != 3)
        })
        .max()
        .expect("a plan with the planner's cap")
}

/// FLOAT64 folds (ONNX's reductions; DirectML REDUCE has no FLOAT64) at
/// `n - 1`, `n` and `n + 1` of every threshold, rows or columns, through
/// every plan variant: the word-pair accumulators of each kind of pass,
/// the finishing `/ n` (mean), `sqrt` (L2) and `log` (log-sums), and
/// log-sum-exp's `exp` per value, whose helper loops lower the values a
/// thread may fold (its own thresholds).
#[test]
fn float64_folds_at_every_threshold() {
    use ops::onnx;
    // Builds the ONNX reduction `$desc` of `x` over `axes`, and checks it
    // (`run!(.. check)`) or says how many values a thread folds.
    macro_rules! run {
        ($desc:ident, $x:expr, $axes:expr, $what:expr, $check:expr) => {{
            let op = onnx::$desc::builder()
                .data($x.desc().clone())
                .axes($axes.clone())
                .build()
                .unwrap();
            if $check {
                check_with(
                    &op,
                    $x,
                    &[$x, $axes],
                    &format!("{} {}", stringify!($desc), $what),
                )
            } else {
                thread_steps(&op) as usize
            }
        }};
    }
    // The folds in turn; `None` for the probe of the thread steps.
    let fold = |i: usize, x: &HostTensor, axes: &HostTensor, what: &str, check: bool| match i {
        0 => run!(ReduceSumDesc, x, axes, what, check),
        1 => run!(ReduceProdDesc, x, axes, what, check),
        2 => run!(ReduceMaxDesc, x, axes, what, check),
        3 => run!(ReduceMeanDesc, x, axes, what, check),
        4 => run!(ReduceL2Desc, x, axes, what, check),
        5 => run!(ReduceSumSquareDesc, x, axes, what, check),
        6 => run!(ReduceLogSumDesc, x, axes, what, check),
        7 => run!(ReduceL1Desc, x, axes, what, check),
        _ => run!(ReduceLogSumExpDesc, x, axes, what, check),
    };
    let mut rng = Rng::new(0xF64);
    let probe = HostTensor::from_slice([2u32, 2].as_slice(), &[1.0f64; 4]).unwrap();
    let axis1 = HostTensor::from_slice([1u32].as_slice(), &[1i64]).unwrap();
    // The folds grouped by the values a thread may fold.
    let mut groups: Vec<(u64, Vec<usize>)> = Vec::new();
    for i in 0..9 {
        let steps = fold(i, &probe, &axis1, "", false) as u64;
        match groups.iter_mut().find(|(s, _)| *s == steps) {
            Some((_, g)) => g.push(i),
            None => groups.push((steps, vec![i])),
        }
    }
    assert!(
        groups.len() >= 2,
        "exp's loops lower log-sum-exp's steps: {groups:?}"
    );
    let mut runs = 0;
    for (steps, folds) in &groups {
        for outputs in [1u32, 300] {
            for n in boundaries(u64::from(outputs), 2 * steps + 8, *steps) {
                for len in [n - 1, n, n + 1] {
                    let len = len as u32;
                    // Rows and columns in turn, the folds in turn.
                    let k = (len as usize + runs) % 2;
                    let (shape, axis) =
                        [(vec![outputs, len], 1i64), (vec![len, outputs], 0)][k].clone();
                    let x =
                        &same_sign_tensor(DataType::Float64, &shape, Some((0.5, 2.0)), &mut rng);
                    let axes = &HostTensor::from_slice([1u32].as_slice(), &[axis]).unwrap();
                    let what = format!("FLOAT64 {shape:?} over {axis} ({steps} steps a thread)");
                    let i = folds[(k + len as usize) % folds.len()];
                    runs += fold(i, x, axes, &what, true);
                }
            }
        }
    }
    println!("{runs} FLOAT64 GPU runs, thread steps {groups:?}");
}

/// Three and four reduced dimensions that do not merge: the offset loop
/// runs once per dimension for every value, so a thread folds fewer
/// values (llvmpipe ends every loop of a thread past 65,535 iterations in
/// all). Every variant around the one-pass and two-chunk limits (the
/// lengths there that factor into the dimensions).
#[test]
fn many_reduced_dimensions_stay_within_the_loop_budget() {
    use ops_core::family::fold::{fold_thread_steps, FoldLoops};
    use ops_core::family::reduce::ReduceGeometry;
    /// `len` as `k` factors above 1, or `None`.
    fn factors(mut len: u32, k: usize) -> Option<Vec<u32>> {
        let mut primes = Vec::new();
        let mut p = 2;
        while p * p <= len {
            while len.is_multiple_of(p) {
                primes.push(p);
                len /= p;
            }
            p += 1;
        }
        if len > 1 {
            primes.push(len);
        }
        if primes.len() < k {
            return None;
        }
        let mut out = vec![1u32; k];
        for (i, p) in primes.into_iter().rev().enumerate() {
            let j = if i < k {
                i
            } else {
                (0..k).min_by_key(|&j| out[j]).unwrap()
            };
            out[j] *= p;
        }
        Some(out)
    }
    let mut rng = Rng::new(0x3D);
    let mut checked = 0;
    for dims in [3usize, 4] {
        // The reduced dimensions with a kept one of 2 between each two.
        let shape_of = |f: &[u32]| -> (Vec<u32>, Vec<u32>) {
            let mut shape = Vec::new();
            let mut axes = Vec::new();
            for (i, &d) in f.iter().enumerate() {
                if i > 0 {
                    shape.push(2);
                }
                axes.push(shape.len() as u32);
                shape.push(d);
            }
            (shape, axes)
        };
        let probe = shape_of(&vec![2; dims]);
        let geometry = ReduceGeometry::new(&probe.0, &probe.1).unwrap();
        assert_eq!(geometry.reduced.len(), dims);
        let steps = fold_thread_steps(&geometry, FoldLoops::default());
        assert!(steps < MAX_THREAD_STEPS, "{dims} dimensions: {steps}");
        let around = |n: u64| n - 2..=n + 2;
        for len in around(steps).chain(around(2 * steps)) {
            let Some(f) = factors(len as u32, dims) else {
                continue;
            };
            let (shape, axes) = shape_of(&f);
            let x = data(ReduceFunction::Sum, DataType::Float32, &shape, &mut rng);
            let op = reduce(&x, ReduceFunction::Sum, &axes);
            check(
                &op,
                &x,
                &format!("SUM {shape:?} over {axes:?} ({steps} steps a thread)"),
            );
            checked += 1;
        }
    }
    assert!(checked >= 8, "{checked} lengths checked");
}
