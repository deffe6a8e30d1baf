//! Generated fuzzing: proptest strategies for any operator, driven by its
//! [`OperatorInfo`] alone, so a new spec file gets its fuzzing for free.
//!
//! Every generated descriptor has `valid_cases()` and `invalid_cases()`,
//! thin calls into [`valid_cases`] and [`invalid_cases`] here; `ops fuzz`,
//! the catalog's property tests and downstream crates use them alike.
//!
//! # Valid cases
//!
//! A case is realised from a shrinkable genome of choices:
//!
//! - a support-table entry and a feature level within it (every level from
//!   the entry's up to the next entry's; operators without levels use
//!   [`FeatureLevel::HIGHEST`](crate::FeatureLevel::HIGHEST));
//! - a data type per tensor from the entry's row, often shared with an
//!   earlier tensor's (so rules such as "UpdatesTensor has InputTensor's
//!   data type" hold often);
//! - a rank in the entry's range (half of the time among its three lowest)
//!   and a shared base shape, which each tensor mutates: unchanged, copied
//!   from an earlier tensor, leading dimensions set to 1, one size changed
//!   (now and then to 0), dimensions masked to 1, shifted right behind 1s,
//!   truncated — so equal sizes except on an axis, leading 1s, batch
//!   dimensions and tuple sizes come up often;
//! - now and then (one genome in eight) one dimension of the base shape is
//!   large, from 2^10 up to a few hundred thousand, the others shrinking
//!   so that the case stays within its element bound ([`CASE_ELEMENTS`] for
//!   the strategies, [`FUZZ_ELEMENTS`] in `ops fuzz`,
//!   [`ValidCases::max_elements`]): whatever the rules make of that
//!   dimension (a reduced axis, the index tuples or the slices of a gather,
//!   a scattered axis or its columns) becomes long. It shrinks toward 2^10,
//!   then away;
//! - attributes: integers in `[0, rank]` biased to `rank`, 1 and 0 (and
//!   negative for signed ones), lists as shuffled subsets of `0..rank`
//!   (some written negative for signed lists, now and then empty), booleans,
//!   enum members; attributes with defaults are sometimes left out;
//! - host tensors (ReduceMin's `axes`) hold such a list, shaped by their
//!   row's ranks.
//!
//! Outputs are left to the builder's inference (their data type is given
//! through [`OpArgs::output_dtypes`](crate::OpArgs) only when no rule gives
//! it). The case is kept when `validate(level)` accepts it; [`acceptance`]
//! measures how often that happens. Input data: data tensors mix edge values
//! ([`edge_bits`]: NaN payloads, infinities, signed zeros, subnormals,
//! integer extremes, 64-bit values above 2^32 and 2^53) with ties; index
//! tensors ([`crate::Operator::index_bounds`]) hold values mostly in range
//! (negative ones for signed types), often colliding, and sometimes out of
//! range ([`ValidCase::expect_index_error`]).
//!
//! # Hostile values
//!
//! The data above keeps ULP contracts checkable: an operator with a
//! [`Tolerance::Ulp`](crate::Tolerance::Ulp) contract gets float inputs of
//! one sign in `[0.5, 2)` ([`same_sign_tensor`]). With
//! [`ValidCases::hostile`] (`ops fuzz`: one case in [`HOSTILE_ONE_IN`]),
//! a case's data tensors instead hold hostile values, for every operator
//! ([`hostile_tensor`]: NaN, ±inf, ±0, subnormals, values near overflow,
//! large magnitudes of both signs, mixed with ordinary ones). Exact
//! contracts still compare exactly; a ULP contract cannot hold for every
//! such input (a sum of `2^100`, `1` and `-2^100` loses its `1` in any
//! order of `f32` additions), so a hostile case checks what must hold
//! ([`compare_hostile`]):
//!
//! - every float output element is non-finite on the GPU exactly where
//!   it is on the CPU reference: NaN where NaN, `+inf` where `+inf`,
//!   `-inf` where `-inf`;
//! - a finite pair is within the contract's `n` ULP *at the scale of the
//!   element*, `|gpu - cpu| <= n * ulp(s)`, where `s` is the larger of
//!   `|cpu|` and the CPU reference's result on the inputs' magnitudes
//!   (every float data input with its sign cleared, [`magnitudes`]): the
//!   yardstick of a sum with cancellation is its sum of magnitudes. The
//!   pair is not compared where that magnitude result is not finite: the
//!   intermediate values come near overflow, where no finite bound holds.
//!
//! # Invalid cases
//!
//! A valid case with exactly one thing broken ([`Broken`]): a tensor's data
//! type (one its row at the level does not list), rank, or sizes, an
//! attribute, or the level (below the introduction, or below the lowest
//! level whose table admits the descriptor). Mutations that stay valid are
//! discarded. [`check_invalid`] asserts the rejection blames a rule that
//! involves the broken thing (see [`Broken::explains`]).
//!
//! # Properties
//!
//! [`check_valid`]: the descriptor gets a GPU plan, and the GPU result
//! equals the CPU reference bit for bit, or both fail alike with an error
//! the spec documents for valid descriptors ([`documented_error`]: an index
//! out of range, reducing an empty dimension, too large); any other error
//! means the spec's rules disagree with its pattern, and is a failure. No
//! panic. [`check_variants`] runs a valid case through every plan of
//! [`Operator::gpu_plan_variants`](crate::Operator::gpu_plan_variants)
//! (`ops fuzz --variants all`); [`check_spec`] is the GPU-free check the
//! catalog's generated test runs. [`check_invalid`] as above; both
//! [`check_valid`] and [`check_invalid`] include [`check_min_level`]
//! (`min_feature_level()` is the lowest level whose table admits the
//! descriptor).

mod check;
mod data;
mod invalid;
pub mod rules;
mod valid;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use proptest;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestRng, TestRunner,
};

pub use check::{
    check_invalid, check_min_level, check_valid, check_variants, compare_contract, compare_hostile,
    compare_outputs, compare_within, documented_error, magnitudes, Backend, Outcome, PlanBackend,
    EMPTY_REDUCTION,
};
pub use data::{
    data_tensor, edge_bits, host_tensor, hostile_tensor, index_tensor, random_layout,
    same_sign_tensor, tensor_with_edges, IndexMode, Rng, HOSTILE_ONE_IN,
};
pub use invalid::{Broken, InvalidCase, InvalidCases, InvalidTree};
pub use valid::{
    describe_tensor, Aim, Reject, ValidCase, ValidCases, ValidTree, CASE_ELEMENTS, FUZZ_ELEMENTS,
    MAX_ATTEMPTS,
};

use crate::OperatorInfo;

/// Valid calls of the operator `info` describes (see the module docs).
pub fn valid_cases(info: &'static OperatorInfo) -> ValidCases {
    ValidCases {
        info,
        genome: valid::genome(info),
        aim: Arc::new(Aim::default()),
        limit: CASE_ELEMENTS,
        hostile_one_in: 0,
    }
}

/// Invalid descriptors of the operator `info` describes, each with exactly
/// one thing broken (see the module docs).
pub fn invalid_cases(info: &'static OperatorInfo) -> InvalidCases {
    InvalidCases {
        info,
        genome: invalid::invalid_genome(valid::genome(info)),
    }
}

/// How often a drawn genome gives a valid descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acceptance {
    /// Genomes that gave a valid descriptor.
    pub valid: u32,
    /// Genomes drawn.
    pub attempts: u32,
    /// The others, by why: the rule `validate` blamed, or the builder's
    /// error, or that the tensors were too large.
    pub rejected: BTreeMap<String, u32>,
}

impl Acceptance {
    /// `valid / attempts`.
    pub fn rate(&self) -> f64 {
        f64::from(self.valid) / f64::from(self.attempts.max(1))
    }
}

/// Draws `attempts` genomes for `info` (deterministically) and counts those
/// that realise into a valid descriptor (no input data is made).
pub fn acceptance(info: &'static OperatorInfo, attempts: u32) -> Acceptance {
    let strategy = valid::genome(info);
    let mut runner = TestRunner::deterministic();
    let mut valid = 0;
    let mut rejected = BTreeMap::new();
    for _ in 0..attempts {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        match valid::draw(info, &tree.current(), &Aim::default(), CASE_ELEMENTS) {
            Ok(_) => valid += 1,
            Err(r) => {
                let why = match r {
                    Reject::Invalid(rule) => rule,
                    Reject::Build(e) => format!("builder: {e}"),
                    Reject::TooLarge => "too large".into(),
                    Reject::Aim => "aim".into(),
                };
                *rejected.entry(why).or_default() += 1;
            }
        }
    }
    Acceptance {
        valid,
        attempts,
        rejected,
    }
}

/// Checks that a spec's rules agree with its pattern, with no GPU:
/// `cases` valid descriptors drawn deterministically must each get a GPU
/// plan and run on the CPU reference, giving outputs of the shapes the
/// spec's `shape` rules give, or failing only as the spec documents
/// ([`check_valid`] without a backend). A failure is shrunk and returned
/// with the minimal case. The test `ops_macros::catalog!` generates runs it
/// for every operator of the catalog.
pub fn check_spec(info: &'static OperatorInfo, cases: u32) -> Result<(), String> {
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 256,
        ..Config::default()
    };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&valid_cases(info), |case| {
            check_valid(&case, None)
                .map(|_| ())
                .map_err(TestCaseError::fail)
        })
        .map_err(|e| {
            format!(
                "{}: the spec's rules disagree with its pattern: {e}",
                info.name
            )
        })
}

/// `PROPTEST_CASES` when set (and a number), else `default`: the case count
/// CI runs, scaled up by the environment.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A proptest configuration for fuzzing: [`cases`]`(default_cases)` cases,
/// failures persisted to `regressions` (a path; `None` for none), and
/// shrinking bounded so that a failure is reported within a minute or so.
pub fn config(default_cases: u32, regressions: Option<&'static str>) -> Config {
    Config {
        cases: cases(default_cases),
        failure_persistence: regressions
            .map(|p| Box::new(FileFailurePersistence::Direct(p)) as Box<_>),
        max_shrink_iters: 2048,
        ..Config::default()
    }
}
