//! Generated fuzzing of every operator of the catalog: nothing here names an
//! operator, so a new spec file is fuzzed with no code.
//!
//! For each operator, with the strategies `ops_core::fuzz` derives from its
//! `OperatorInfo`:
//!
//! 1. valid descriptors: the GPU result equals the CPU reference bit for bit
//!    (or both fail with the same error, as for an index out of range), and
//!    nothing panics;
//! 2. invalid descriptors (one thing broken): validation rejects them and
//!    the error blames a rule involving what was broken; running them anyway
//!    does not panic;
//! 3. `min_feature_level()` is the lowest level whose table admits the
//!    descriptor (checked on both kinds of cases).
//!
//! The CI case counts keep this file to a few seconds of test time;
//! `PROPTEST_CASES=N` runs N cases per operator and property instead.
//! Failures are persisted in `proptest-regressions/fuzz_catalog.txt` and
//! replayed first on every run.

use std::collections::BTreeSet;

use ops_core::fuzz;
use ops_core::{DataType, HostTensor, OpError, Operator, OperatorInfo};
use ops_tests::gpu;
use proptest::test_runner::{TestCaseError, TestRunner};

/// Where proptest records failing seeds (replayed first on later runs).
const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/proptest-regressions/fuzz_catalog.txt"
);

/// Valid cases per operator in CI (GPU and CPU each run every one).
const VALID_CASES: u32 = 64;
/// Invalid cases per operator in CI (no GPU work: cheap).
const INVALID_CASES: u32 = 256;

fn gpu_run(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    gpu().run(op, inputs)
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(fuzz::config(cases, Some(REGRESSIONS)))
}

#[test]
fn acceptance_of_valid_descriptors_is_above_five_percent() {
    for info in ops::catalog() {
        let a = fuzz::acceptance(info, 2000);
        println!(
            "{:<10} {:>5.1}% of drawn descriptors are valid ({} of {})",
            info.name,
            100.0 * a.rate(),
            a.valid,
            a.attempts
        );
        assert!(
            a.rate() > 0.05,
            "{}: only {:.1}% of drawn descriptors are valid",
            info.name,
            100.0 * a.rate()
        );
    }
}

fn fuzz_valid(info: &'static OperatorInfo, cases: u32) {
    let backend: fuzz::Backend<'_> = &gpu_run;
    let result = runner(cases).run(&fuzz::valid_cases(info), |case| {
        fuzz::check_valid(&case, Some(backend))
            .map(|_| ())
            .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{}: {e}", info.name);
    }
}

// The catalog in two interleaved halves, two tests that the harness runs
// side by side.
#[test]
fn valid_descriptors_gpu_equals_cpu_bitwise_even() {
    valid_descriptors(0);
}

#[test]
fn valid_descriptors_gpu_equals_cpu_bitwise_odd() {
    valid_descriptors(1);
}

/// Every other operator of the catalog from `first`: `VALID_CASES` valid
/// cases each, the GPU equal to the CPU reference.
fn valid_descriptors(first: usize) {
    // Start the adapter outside the timed cases (and fail with the lavapipe
    // hint when there is none).
    gpu();
    for info in ops::catalog().iter().copied().skip(first).step_by(2) {
        let t = std::time::Instant::now();
        fuzz_valid(info, VALID_CASES);
        println!(
            "{:<10} {} valid cases in {:.2?}",
            info.name,
            fuzz::cases(VALID_CASES),
            t.elapsed()
        );
    }
}

#[test]
fn invalid_descriptors_are_rejected_naming_the_broken_rule() {
    for info in ops::catalog() {
        let seen = std::cell::RefCell::new(std::collections::BTreeMap::<&str, u32>::new());
        let result = runner(INVALID_CASES).run(&fuzz::invalid_cases(info), |case| {
            *seen.borrow_mut().entry(case.broken.category()).or_default() += 1;
            fuzz::check_invalid(&case).map_err(TestCaseError::fail)
        });
        if let Err(e) = result {
            panic!("{}: {e}", info.name);
        }
        println!("{:<10} broken: {:?}", info.name, seen.borrow());
    }
}

#[test]
fn every_break_category_occurs_where_the_spec_allows_it() {
    // Over many invalid cases, each operator sees its data types, ranks,
    // sizes and attributes broken, and its level where it has levels.
    for info in ops::catalog() {
        let mut runner = TestRunner::deterministic();
        let strategy = fuzz::invalid_cases(info);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..400 {
            use proptest::strategy::{Strategy, ValueTree};
            let case = strategy.new_tree(&mut runner).unwrap().current();
            seen.insert(case.broken.category());
        }
        let mut want = vec!["rank", "sizes"];
        // A data type can be broken where some tensor's row leaves a data
        // type out (a data-movement operator may list every one).
        if info.table.entries.iter().any(|e| {
            e.tensors
                .iter()
                .any(|t| DataType::ALL.iter().any(|d| !t.dtypes.contains(d)))
        }) {
            want.push("data type");
        }
        // A boolean attribute has no invalid value, nor has a float or a
        // number one (arithmetic only: rules never read it); every other
        // kind has.
        if info.attrs.iter().any(|a| {
            !matches!(
                a.kind,
                ops_core::AttrKind::Bool | ops_core::AttrKind::Float | ops_core::AttrKind::Number
            )
        }) {
            want.push("attribute");
        }
        if info.introduced.is_some() && info.table.entries.len() > 1 {
            want.push("level table");
        }
        if info
            .introduced
            .is_some_and(|l| l > ops::FeatureLevel::FL1_0)
        {
            want.push("level");
        }
        for w in want {
            assert!(
                seen.contains(w),
                "{}: no `{w}` break in 400 cases ({seen:?})",
                info.name
            );
        }
    }
}

#[test]
fn broken_rules_are_matched_precisely() {
    // `Broken::explains` accepts a rule only if it reads what was broken.
    use ops::{ArgMinDesc, DataType, FeatureLevel, TensorDesc};
    use ops_core::fuzz::Broken;
    use ops_core::OperatorType;
    let info = <ArgMinDesc as OperatorType>::INFO;
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [3, 3]))
        .output_dtype(DataType::Uint32)
        .axes([0, 0])
        .build()
        .unwrap();
    let e = d.validate(FeatureLevel::FL3_0).unwrap_err();
    assert!(e.rule.contains("duplicate"), "{e}");
    assert!(Broken::Attribute { attr: 0 }.explains(info, &e));
    assert!(
        !Broken::Attribute { attr: 1 }.explains(info, &e),
        "axis_direction is not read"
    );
    assert!(!Broken::DataType { tensor: 0 }.explains(info, &e));
    assert!(!Broken::Sizes { tensor: 0 }.explains(info, &e));
    assert!(!Broken::Level.explains(info, &e));
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Int64, [3, 3]))
        .output_dtype(DataType::Uint32)
        .axes([1])
        .build()
        .unwrap();
    let e = d.validate(FeatureLevel::FL3_0).unwrap_err();
    assert!(Broken::DataType { tensor: 0 }.explains(info, &e), "{e}");
    assert!(Broken::LevelTable.explains(info, &e), "{e}");
    assert!(!Broken::DataType { tensor: 1 }.explains(info, &e), "{e}");
    assert!(!Broken::Rank { tensor: 0 }.explains(info, &e), "{e}");
    // The output's shape rule reads the input's sizes and the axes, not the
    // input's data type.
    let d = ArgMinDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [3, 3]))
        .output(TensorDesc::new(DataType::Uint32, [3, 3]))
        .axes([1])
        .build()
        .unwrap();
    let e = d.validate(FeatureLevel::FL3_0).unwrap_err();
    assert!(Broken::Sizes { tensor: 1 }.explains(info, &e), "{e}");
    assert!(Broken::Sizes { tensor: 0 }.explains(info, &e), "{e}");
    assert!(Broken::Attribute { attr: 0 }.explains(info, &e), "{e}");
    assert!(!Broken::DataType { tensor: 0 }.explains(info, &e), "{e}");
}

#[test]
fn valid_cases_draw_large_extents_within_the_bound() {
    // Some of the time a dimension is thousands to hundreds of thousands
    // long, on a reduced axis, a gathered tuple count or slice, a scattered
    // axis alike (nothing here names an operator), and every case stays
    // within the strategies' element bound.
    use proptest::strategy::{Strategy, ValueTree};
    const DRAWS: usize = 500;
    for info in ops::catalog() {
        let mut runner = TestRunner::deterministic();
        let strategy = fuzz::valid_cases(info);
        let (mut large, mut largest, mut most) = (0, 0u32, 0u64);
        for _ in 0..DRAWS {
            let case = strategy.new_tree(&mut runner).unwrap().current();
            let descs: Vec<_> = case
                .op
                .input_descs()
                .into_iter()
                .chain(case.op.output_descs())
                .collect();
            let total: u64 = descs.iter().map(|d| d.element_count().unwrap()).sum();
            assert!(
                total <= fuzz::CASE_ELEMENTS,
                "{}: a case of {total} elements: {case:?}",
                info.name
            );
            let extent = descs
                .iter()
                .flat_map(|d| d.sizes.iter().copied())
                .max()
                .unwrap_or(0);
            if extent >= 1000 {
                large += 1;
            }
            largest = largest.max(extent);
            most = most.max(total);
        }
        println!(
            "{:<10} {large} of {DRAWS} cases with a dimension of 1000 or more (largest {largest}, at most {most} elements)",
            info.name
        );
        assert!(
            large >= DRAWS / 50,
            "{}: only {large} of {DRAWS} cases have a dimension of 1000 or more",
            info.name
        );
        assert!(
            large <= DRAWS / 3,
            "{}: {large} of {DRAWS} large cases",
            info.name
        );
    }
}

#[test]
fn check_variants_runs_every_plan_and_names_the_one_that_differs() {
    use proptest::strategy::{Strategy, ValueTree};
    gpu();
    let info = <ops::ArgMinDesc as ops_core::OperatorType>::INFO;
    let mut runner = TestRunner::deterministic();
    let strategy = fuzz::valid_cases(info);
    // A case with outputs and several plans.
    let (case, outcome, plans) = (0..200)
        .find_map(|_| {
            let case = strategy.new_tree(&mut runner).unwrap().current();
            let outcome = fuzz::check_valid(&case, Some(&gpu_run)).unwrap();
            let plans = case.op.gpu_plan_variants().unwrap();
            let some = matches!(&outcome, fuzz::Outcome::Outputs(o) if !o[0].is_empty());
            (some && plans.len() > 1).then_some((case, outcome, plans))
        })
        .expect("an ArgMin case with several plan variants");
    let ran = std::cell::RefCell::new(Vec::new());
    let run_plan = |op: &dyn Operator, inputs: &[&HostTensor], plan: &ops_core::GpuPlan| {
        ran.borrow_mut().push(plan.clone());
        gpu().run_plan(op, inputs, plan)
    };
    assert_eq!(
        fuzz::check_variants(&case, &outcome, &run_plan),
        Ok(plans.len())
    );
    assert_eq!(
        *ran.borrow(),
        plans.iter().map(|p| p.1.clone()).collect::<Vec<_>>()
    );
    // A variant whose result differs by one bit is a failure naming it.
    let (bad_name, bad_plan) = plans.last().unwrap().clone();
    let corrupt = |op: &dyn Operator, inputs: &[&HostTensor], plan: &ops_core::GpuPlan| {
        let out = gpu().run_plan(op, inputs, plan)?;
        if *plan != bad_plan {
            return Ok(out);
        }
        let mut bytes = out[0].bytes().to_vec();
        bytes[0] ^= 1;
        Ok(vec![HostTensor::from_bytes(out[0].desc().clone(), bytes)?])
    };
    let e = fuzz::check_variants(&case, &outcome, &corrupt).unwrap_err();
    assert!(
        e.starts_with(&format!("variant `{bad_name}`: GPU != CPU")),
        "{e}"
    );
}

#[test]
fn given_outputs_are_drawn_as_cuts_of_unequal_parts() {
    // An output the caller describes (`given tensor`, DirectML's SPLIT
    // `OutputTensors`) is drawn, not inferred: most of the time its group
    // tiles the first input along one dimension, in parts of any lengths
    // (nothing here names an operator).
    use proptest::strategy::{Strategy, ValueTree};
    const DRAWS: usize = 300;
    for info in ops::catalog() {
        let given: Vec<usize> = (0..info.tensors.len())
            .filter(|&t| info.is_given(t))
            .collect();
        if given.len() < 2 {
            continue;
        }
        let mut runner = TestRunner::deterministic();
        let strategy = fuzz::valid_cases(info);
        let mut unequal = 0;
        for _ in 0..DRAWS {
            let case = strategy.new_tree(&mut runner).unwrap().current();
            let outs = case.op.output_descs();
            if outs.iter().any(|o| o.sizes != outs[0].sizes) {
                unequal += 1;
            }
        }
        println!(
            "{:<10} {unequal} of {DRAWS} cases with given outputs of unequal sizes",
            info.instance_name()
        );
        assert!(
            unequal >= DRAWS / 5,
            "{}: only {unequal} of {DRAWS} cases cut unequal parts",
            info.instance_name()
        );
    }
}

#[test]
fn hostile_values_are_drawn_for_every_operator() {
    // `ops fuzz` draws hostile data in one case in `HOSTILE_ONE_IN`,
    // whatever the operator's accuracy contract; the default strategies
    // draw none.
    use proptest::strategy::{Strategy, ValueTree};
    const DRAWS: usize = 48;
    let (mut hostile_total, mut total) = (0, 0);
    for info in ops::catalog() {
        let mut runner = TestRunner::deterministic();
        let strategy = fuzz::valid_cases(info)
            .max_elements(1 << 12)
            .hostile(fuzz::HOSTILE_ONE_IN);
        let hostile = (0..DRAWS)
            .filter(|_| strategy.new_tree(&mut runner).unwrap().current().hostile)
            .count();
        assert!(
            hostile > 0,
            "{}: no hostile case in {DRAWS}",
            info.qualified_name()
        );
        hostile_total += hostile;
        total += DRAWS;
        let plain = fuzz::valid_cases(info).max_elements(1 << 12);
        assert!((0..4).all(|_| !plain.new_tree(&mut runner).unwrap().current().hostile));
    }
    let share = hostile_total as f64 / total as f64;
    let want = 1.0 / f64::from(fuzz::HOSTILE_ONE_IN);
    assert!(
        (share - want).abs() < 0.05,
        "{hostile_total} of {total} cases are hostile, {share:.3}; the stated share is {want}"
    );
}

/// `outputs` with the first NaN of a float output made `+inf`, and
/// whether there was one.
fn nan_to_infinity(outputs: &[HostTensor]) -> (Vec<HostTensor>, bool) {
    let mut out = outputs.to_vec();
    for t in &mut out {
        let (inf, exp, width): (u64, u64, usize) = match t.dtype() {
            DataType::Float64 => (0x7FF0_0000_0000_0000, 0x7FF0_0000_0000_0000, 8),
            DataType::Float32 => (0x7F80_0000, 0x7F80_0000, 4),
            DataType::Float16 => (0x7C00, 0x7C00, 2),
            _ => continue,
        };
        let mut bytes = t.bytes().to_vec();
        for chunk in bytes.chunks_mut(width) {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(chunk);
            let bits = u64::from_le_bytes(b) & !(1 << (8 * width - 1));
            if bits & exp == exp && bits != inf {
                chunk.copy_from_slice(&inf.to_le_bytes()[..width]);
                *t = HostTensor::from_bytes(t.desc().clone(), bytes).unwrap();
                return (out, true);
            }
        }
    }
    (out, false)
}

fn cpu_as_gpu(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    op.run_cpu(inputs)
}

fn nan_as_infinity(op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    op.run_cpu(inputs).map(|o| nan_to_infinity(&o).0)
}

#[test]
fn a_hostile_case_fails_where_the_gpu_gives_infinity_for_nan() {
    // Hostile cases of operators with a ULP contract, checked against a
    // stand-in GPU: the CPU reference itself passes, and the same outputs
    // with one NaN turned into +inf fail.
    use proptest::strategy::{Strategy, ValueTree};
    let mut caught = BTreeSet::new();
    for info in ops::catalog() {
        let mut runner = TestRunner::deterministic();
        let strategy = fuzz::valid_cases(info).max_elements(1 << 10).hostile(1);
        for _ in 0..8 {
            let case = strategy.new_tree(&mut runner).unwrap().current();
            if !matches!(case.op.tolerance(), ops_core::Tolerance::Ulp(_)) {
                continue;
            }
            let Ok(cpu) = case.op.run_cpu(&case.input_refs()) else {
                continue;
            };
            if !nan_to_infinity(&cpu).1 {
                continue;
            }
            fuzz::check_valid(&case, Some(&cpu_as_gpu)).unwrap();
            let e = fuzz::check_valid(&case, Some(&nan_as_infinity)).unwrap_err();
            assert!(e.contains("GPU != CPU"), "{e}");
            caught.insert(info.qualified_name());
        }
    }
    assert!(caught.len() >= 10, "only {caught:?}");
}
