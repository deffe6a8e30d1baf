//! `ops fuzz`: the generated fuzzing of `ops_core::fuzz`, run from the
//! command line over the catalog.
//!
//! ```text
//! ops fuzz [--op NAME]... [--cases N | --time SECONDS] [--seed S]
//!          [--backend cpu|gpu|all] [--variants default|all] [--out DIR]
//!          [--coverage]
//! ```
//!
//! Operators take turns: each turn draws one valid case (checked on the CPU
//! reference and, unless `--backend cpu`, compared with the GPU bit for bit;
//! with `--variants all`, through every plan the planners could choose,
//! [`Operator::gpu_plan_variants`], each compared alike) and one invalid
//! case (validation must reject it, blaming a rule that involves what was
//! broken). A valid descriptor whose run fails with an error its spec does
//! not document ([`fuzz::documented_error`]) is a failure. Valid cases hold
//! up to [`fuzz::FUZZ_ELEMENTS`] elements; one in eight or so has a
//! dimension of thousands to hundreds of thousands. One valid case in
//! [`fuzz::HOSTILE_ONE_IN`] (drawn per case) holds hostile values in its
//! data tensors, for every operator: NaN, ±inf, ±0, subnormals, values near
//! overflow, large magnitudes of both signs, mixed ([`fuzz::hostile_tensor`]);
//! exact contracts still compare exactly, ULP contracts as
//! [`fuzz::compare_hostile`] says (non-finite where the CPU reference is,
//! finite results within the bound at the scale of the inputs' magnitudes).
//! `--cases 0` runs no case. Every other valid case is aimed at one of the coverage cells hit
//! least so far, so that longer runs reach every cell: a cell is an
//! operator's support-table entry, data-type combination the rules admit,
//! and rank of its first input.
//!
//! On a terminal, a progress bar on stderr counts the cases (or seconds)
//! with an ETA; elsewhere (CI, a file) a plain line says where the run is
//! each [`PROGRESS_EVERY`]: the valid cases done of all of them (with
//! `--time`, the seconds gone of the budget and the cases done). The run ends with a summary on stdout of a few
//! lines, whatever the number of operators: the totals over them, the cells
//! no case hit by rank, by data type and by operator (most first), and the
//! failures. `--coverage` prints, besides, every operator's counts on stderr
//! and its coverage table on stdout: how many valid cases hit each cell.
//! `FAIL` and the verdict are coloured on a terminal, unless `NO_COLOR` is
//! set.
//!
//! A failure is shrunk (proptest's value trees) to a minimal case, which is
//! written to `DIR` (default `fuzz-failures/`) as a case file that `ops run`
//! reproduces; the command then exits 1. `--seed` makes a run repeatable
//! (the seed is printed either way).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ops_core::fuzz::proptest::strategy::{Strategy, ValueTree};
use ops_core::fuzz::proptest::test_runner::{Config, TestRng, TestRunner};
use ops_core::fuzz::{self, Aim, InvalidCase, Outcome as FuzzOutcome, ValidCase};
use ops_core::{DataType, FeatureLevel, HostTensor, OpError, Operator, OperatorInfo};

use crate::case::{Case, CaseInput, CaseOutput, ExpectedError};
use crate::runner::{self, CpuExecutor, Executor, GpuExecutor, Outcome};
use crate::term::{Bar, Suspend};

/// The arguments of `ops fuzz`.
#[derive(Debug, Clone, clap::Args)]
pub struct FuzzArgs {
    /// Fuzz only this operator (by name or alias, ignoring case); repeat for
    /// several. Default: the whole catalog.
    #[arg(long = "op", value_name = "NAME")]
    pub ops: Vec<String>,
    /// Valid cases per operator (each with one invalid case beside it).
    #[arg(long, value_name = "N", conflicts_with = "time")]
    pub cases: Option<u64>,
    /// Fuzz for this many seconds in all, the operators taking turns.
    #[arg(long, value_name = "SECONDS")]
    pub time: Option<f64>,
    /// The seed of the run (default: a random one, printed).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Compare the CPU reference with the GPU (`gpu`, `all`), or check the
    /// CPU reference and validation alone (`cpu`). With `all` and no GPU
    /// adapter, the CPU checks run alone.
    #[arg(long, value_enum, default_value_t = FuzzBackend::All)]
    pub backend: FuzzBackend,
    /// Run each valid case on the GPU through the plan the adapter's class
    /// picks (`default`) or through every plan the planners could choose
    /// (`all`), each compared with the CPU reference.
    #[arg(long, value_enum, default_value_t = FuzzVariants::Default)]
    pub variants: FuzzVariants,
    /// Where minimal failing cases are written.
    #[arg(long, value_name = "DIR", default_value = "fuzz-failures")]
    pub out: PathBuf,
    /// Print every operator's coverage table on stdout and its counts on
    /// stderr, besides the summary.
    #[arg(long)]
    pub coverage: bool,
}

/// `--variants` of `ops fuzz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FuzzVariants {
    /// The plan `Context::run` picks for the adapter's device class.
    Default,
    /// Every plan of [`Operator::gpu_plan_variants`], each compared with the
    /// CPU reference.
    All,
}

/// `--backend` of `ops fuzz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FuzzBackend {
    /// The CPU reference and validation only.
    Cpu,
    /// Compare with the GPU (fails without an adapter).
    Gpu,
    /// Compare with the GPU when there is an adapter.
    All,
}

/// Valid cases per operator when neither `--cases` nor `--time` is given.
pub const DEFAULT_CASES: u64 = 100;

/// How long a run lasts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// This many valid cases per operator.
    Cases(u64),
    /// This long in all.
    Time(Duration),
}

/// One failure, shrunk.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The operator.
    pub operator: &'static str,
    /// What went wrong, for the minimal case.
    pub message: String,
    /// The minimal case, as `Debug` prints it.
    pub case: String,
    /// Where its case file was written, if one could be.
    pub file: Option<PathBuf>,
    /// Whether `ops run` reproduces it (None: not checked).
    pub reproduces: Option<bool>,
    /// An invalid case (else a valid one).
    pub invalid: bool,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Valid cases run, per operator.
    pub valid: BTreeMap<String, u64>,
    /// Invalid cases run, per operator.
    pub invalid: BTreeMap<String, u64>,
    /// GPU plan variants run (`--variants all`), per operator.
    pub variants: BTreeMap<String, u64>,
    /// Valid cases with a dimension of [`LARGE_EXTENT`] or more, per operator.
    pub large: BTreeMap<String, u64>,
    /// Valid cases with hostile values ([`fuzz::HOSTILE_ONE_IN`]), per
    /// operator.
    pub hostile: BTreeMap<String, u64>,
    /// Failures, shrunk.
    pub failures: Vec<Failure>,
}

/// A coverage cell: table entry level (None: no levels), data types of
/// every tensor, rank of the first input.
type Cell = (Option<FeatureLevel>, Vec<DataType>, usize);

struct OpRun {
    info: &'static OperatorInfo,
    runner: TestRunner,
    valid: fuzz::ValidCases,
    invalid: fuzz::InvalidCases,
    valid_count: u64,
    invalid_count: u64,
    index_errors: u64,
    run_errors: u64,
    variants_run: u64,
    large: u64,
    hostile: u64,
    elapsed: Duration,
    hits: BTreeMap<Cell, u64>,
    levels: BTreeMap<FeatureLevel, u64>,
    /// Every cell the tables and rules admit, per table entry.
    universe: Vec<(usize, Option<Vec<Cell>>)>,
    /// Cells aimed at without finding a valid case.
    unreachable: BTreeSet<Cell>,
    /// Picks among the least-hit cells.
    pick: fuzz::Rng,
    done: bool,
}

fn rng_for(seed: u64, k: usize) -> TestRng {
    fuzz::Rng::new(seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_test_rng()
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// The longest a failure is shrunk.
pub const SHRINK_FOR: Duration = Duration::from_secs(60);

/// The shortest a failure is shrunk in a `--time` run whose budget is
/// (nearly) spent.
pub const SHRINK_AT_LEAST: Duration = Duration::from_secs(5);

/// Shrinks a failing value tree as proptest's runner does: simplify while
/// the check still fails, complicate back when it passes, for at most
/// `time`. Returns the minimal failing value and its failure.
fn shrink<T: ValueTree>(
    tree: &mut T,
    mut failure: String,
    check: &dyn Fn(&T::Value) -> Result<(), String>,
    time: Duration,
) -> (T::Value, String) {
    let mut minimal = tree.current();
    let deadline = Instant::now() + time;
    let mut iterations = 0;
    if !tree.simplify() {
        return (minimal, failure);
    }
    loop {
        iterations += 1;
        if iterations > 4096 || Instant::now() > deadline {
            break;
        }
        let value = tree.current();
        match check(&value) {
            Err(e) => {
                minimal = value;
                failure = e;
                if !tree.simplify() {
                    break;
                }
            }
            Ok(()) => {
                if !tree.complicate() {
                    break;
                }
            }
        }
    }
    (minimal, failure)
}

fn gpu_backend(
    ctx: Option<&'static ops_gpu::Context>,
) -> impl Fn(&dyn Operator, &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
    move |op, inputs| match ctx {
        Some(c) => c.run(op, inputs),
        None => Err(OpError::NoAdapter("no GPU".into())),
    }
}

/// A valid case counts as large when some dimension of one of its tensors
/// is this long (the summary counts them).
pub const LARGE_EXTENT: u32 = 1000;

/// [`fuzz::check_valid`] on the GPU's default plan and, with
/// `--variants all`, [`fuzz::check_variants`]; the CPU's outcome and the
/// number of plan variants run.
fn check_valid(
    case: &ValidCase,
    gpu: Option<&'static ops_gpu::Context>,
    variants: FuzzVariants,
) -> Result<(FuzzOutcome, u64), String> {
    let run = gpu_backend(gpu);
    let backend: Option<fuzz::Backend<'_>> = gpu.map(|_| &run as fuzz::Backend<'_>);
    let outcome = fuzz::check_valid(case, backend)?;
    let ran = match (gpu, variants) {
        (Some(ctx), FuzzVariants::All) => {
            let run_plan = |op: &dyn Operator, inputs: &[&HostTensor], plan: &ops_core::GpuPlan| {
                ctx.run_plan(op, inputs, plan)
            };
            fuzz::check_variants(case, &outcome, &run_plan)? as u64
        }
        _ => 0,
    };
    Ok((outcome, ran))
}

/// Whether some tensor of `case` has a dimension of [`LARGE_EXTENT`] or more.
fn is_large(case: &ValidCase) -> bool {
    case.op
        .input_descs()
        .iter()
        .chain(case.op.output_descs().iter())
        .any(|d| d.sizes.iter().any(|&s| s >= LARGE_EXTENT))
}

/// The case file of a valid case: its descriptor, level, inputs, and the
/// CPU reference's outputs as the expected data (or `expect_error: index`,
/// `expect_error: empty_reduction`).
pub fn valid_case_file(case: &ValidCase, name: &str, file: &str) -> Case {
    let info = case.info;
    // The inputs as the file carries them (each NaN the one `"NaN"` reads
    // as), and the expected outputs of those.
    let written: Vec<HostTensor> = case.inputs.iter().map(crate::case::as_written).collect();
    let inputs = info
        .inputs
        .iter()
        .zip(&written)
        .map(|(n, t)| CaseInput {
            name: n.to_string(),
            tensor: t.clone(),
        })
        .collect();
    let cpu = case.op.run_cpu(&written.iter().collect::<Vec<_>>());
    let expect_error = match &cpu {
        Err(OpError::IndexOutOfRange { .. }) => Some(ExpectedError::Index),
        Err(OpError::InvalidArgument(m)) if m.contains(fuzz::EMPTY_REDUCTION) => {
            Some(ExpectedError::EmptyReduction)
        }
        _ => None,
    };
    let produced = cpu.ok();
    let outputs = info
        .outputs
        .iter()
        .zip(case.op.output_descs())
        .enumerate()
        .map(|(i, (n, desc))| CaseOutput {
            name: n.to_string(),
            desc,
            expected: produced.as_ref().and_then(|p| p.get(i).cloned()),
        })
        .collect();
    // Attributes left to their defaults stay out: `ops run` applies the same defaults.
    let attributes = case.args.attributes.clone();
    Case {
        file: file.to_string(),
        path: "$".into(),
        name: name.to_string(),
        info,
        op: info.qualified_name(),
        feature_level: info.introduced.map(|_| case.level),
        attributes,
        attribute_paths: Default::default(),
        inputs,
        outputs,
        expect_error,
        expect_message: None,
        tolerance: None,
    }
}

/// The case file of an invalid case: validation must reject it.
fn invalid_case_file(case: &InvalidCase, name: &str, file: &str) -> Option<Case> {
    let op = case.op.as_ref()?;
    let info = case.info;
    let inputs = info
        .tensors
        .iter()
        .filter(|t| !t.output)
        .zip(op.input_descs())
        .map(|(t, d)| CaseInput {
            name: t.name.to_string(),
            tensor: case
                .args
                .host_data
                .get(t.name)
                .cloned()
                .unwrap_or_else(|| HostTensor::zeros(d).expect("a small tensor")),
        })
        .collect();
    let outputs = info
        .outputs
        .iter()
        .zip(op.output_descs())
        .map(|(n, desc)| CaseOutput {
            name: n.to_string(),
            desc,
            expected: None,
        })
        .collect();
    Some(Case {
        file: file.to_string(),
        path: "$".into(),
        name: name.to_string(),
        info,
        op: info.qualified_name(),
        feature_level: Some(case.level),
        attributes: case.args.attributes.clone(),
        attribute_paths: Default::default(),
        inputs,
        outputs,
        expect_error: Some(ExpectedError::Validation),
        expect_message: None,
        tolerance: None,
    })
}

/// Writes `case` as `DIR/<name>.json` (with `note` as an extra key, which
/// readers ignore) and returns the path.
pub fn write_case_file(dir: &Path, case: &Case, note: &str) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{}.json", case.name));
    let expected: Option<Vec<HostTensor>> =
        case.outputs.iter().map(|o| o.expected.clone()).collect();
    let produced = expected.as_deref().filter(|_| case.expect_error.is_none());
    std::fs::write(&path, case.to_json(produced, &[("note", note)]) + "\n")?;
    Ok(path)
}

/// Whether `ops run` fails on the written case (it reproduces the failure).
fn reproduces(path: &Path, gpu: Option<&'static ops_gpu::Context>) -> Option<bool> {
    let cases = crate::case::read_cases(path, ops::catalog()).ok()?;
    let cpu = CpuExecutor;
    let g = gpu.map(GpuExecutor);
    let mut executors: Vec<&dyn Executor> = vec![&cpu];
    if let Some(g) = &g {
        executors.push(g);
    }
    Some(cases.iter().any(|c| {
        runner::run_case(c, &executors)
            .iter()
            .any(|r| !matches!(r.outcome, Outcome::Pass))
    }))
}

fn short(d: DataType) -> &'static str {
    match d {
        DataType::Float64 => "f64",
        DataType::Float32 => "f32",
        DataType::Float16 => "f16",
        DataType::Int64 => "i64",
        DataType::Int32 => "i32",
        DataType::Int16 => "i16",
        DataType::Int8 => "i8",
        DataType::Uint64 => "u64",
        DataType::Uint32 => "u32",
        DataType::Uint16 => "u16",
        DataType::Uint8 => "u8",
        DataType::Bool => "bool",
    }
}

fn combo_text(info: &OperatorInfo, dtypes: &[DataType]) -> String {
    let n_in = info.inputs.len();
    let ins: Vec<&str> = dtypes.iter().take(n_in).map(|&d| short(d)).collect();
    let outs: Vec<&str> = dtypes.iter().skip(n_in).map(|&d| short(d)).collect();
    format!("{} -> {}", ins.join(","), outs.join(","))
}

/// Combinations above this many per table entry are not enumerated: the
/// coverage table then lists only the cells that were hit.
const MAX_COMBOS: usize = 20_000;

/// The data-type combinations of `entry` the rules admit: every combination
/// of the rows, kept when one of `templates` (valid cases of the entry) still
/// validates with those types (data-type rules rarely depend on shapes).
fn feasible_combos(
    info: &'static OperatorInfo,
    entry: usize,
    templates: &[ValidCase],
) -> Option<Vec<Vec<DataType>>> {
    let e = info.table.entries.get(entry)?;
    let rows: Vec<Vec<DataType>> = (0..info.tensors.len())
        .map(|i| {
            e.tensors
                .iter()
                .find(|r| r.tensor == i)
                .map_or(DataType::ALL.to_vec(), |r| r.dtypes.to_vec())
        })
        .collect();
    let total: usize = rows.iter().map(Vec::len).product();
    if total > MAX_COMBOS || templates.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    let mut idx = vec![0usize; rows.len()];
    'combos: loop {
        let combo: Vec<DataType> = idx.iter().zip(&rows).map(|(&k, r)| r[k]).collect();
        if templates.iter().any(|t| admits(t, &combo)) {
            out.push(combo);
        }
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < rows[d].len() {
                continue 'combos;
            }
            idx[d] = 0;
        }
        break;
    }
    Some(out)
}

/// True when `template` with the data types `combo` still validates at its level.
fn admits(template: &ValidCase, combo: &[DataType]) -> bool {
    let info = template.info;
    let mut args = template.args.clone();
    for (i, t) in info.tensors.iter().enumerate() {
        let d = combo[i];
        if t.output {
            if let Some(desc) = args.tensors.get_mut(t.name) {
                desc.dtype = d;
            } else {
                args.output_dtypes.insert(t.name.to_string(), d);
            }
        } else if t.host {
            let Some(h) = args.host_data.get(t.name) else {
                return false;
            };
            let Some(values) = ops_core::__private::args::host_values(h) else {
                return false;
            };
            let sizes = h.sizes().to_vec();
            args.host_data
                .insert(t.name.to_string(), fuzz::host_tensor(d, &sizes, &values));
        } else if let Some(desc) = args.tensors.get_mut(t.name) {
            desc.dtype = d;
        }
    }
    match (info.build)(&args) {
        Ok(op) => {
            op.validate(template.level).is_ok() && {
                let got: Vec<DataType> = op
                    .input_descs()
                    .iter()
                    .chain(op.output_descs().iter())
                    .map(|d| d.dtype)
                    .collect();
                got == combo
            }
        }
        Err(_) => false,
    }
}

/// Every coverage cell of `info` the tables and rules admit: per table
/// entry, each data-type combination some valid case of the entry still
/// validates with, at every rank of the entry. `None` for an entry whose
/// combinations are too many to enumerate.
fn universe(info: &'static OperatorInfo) -> Vec<(usize, Option<Vec<Cell>>)> {
    info.table
        .entries
        .iter()
        .enumerate()
        .map(|(k, e)| {
            // Templates: a few valid cases of this entry.
            let strategy = fuzz::valid_cases(info).aimed(Aim {
                entry: Some(k),
                ..Aim::default()
            });
            let mut runner = TestRunner::new_with_rng(Config::default(), rng_for(k as u64, 7));
            let templates: Vec<ValidCase> = (0..6)
                .filter_map(|_| strategy.new_tree(&mut runner).ok().map(|t| t.current()))
                .collect();
            let cells = feasible_combos(info, k, &templates).map(|combos| {
                combos
                    .into_iter()
                    .flat_map(|c| {
                        (e.ranks.0 as usize..=e.ranks.1 as usize)
                            .map(move |r| (e.level, c.clone(), r))
                    })
                    .collect()
            });
            (k, cells)
        })
        .collect()
}

/// The coverage counts of one operator (or, added up, of a run).
#[derive(Clone, Debug, Default)]
struct Coverage {
    /// Cells of the table.
    cells: usize,
    /// Cells some valid case hit.
    hit: usize,
    /// Cells aimed at without finding a valid case (`x`).
    unreachable: usize,
    /// Cells not hit, per rank of the first input.
    not_hit_by_rank: BTreeMap<usize, usize>,
    /// Cells not hit, per data type of the first tensor.
    not_hit_by_dtype: BTreeMap<DataType, usize>,
}

impl Coverage {
    fn not_hit(&self) -> usize {
        self.cells - self.hit
    }

    fn add(&mut self, other: &Coverage) {
        self.cells += other.cells;
        self.hit += other.hit;
        self.unreachable += other.unreachable;
        for (r, n) in &other.not_hit_by_rank {
            *self.not_hit_by_rank.entry(*r).or_default() += n;
        }
        for (d, n) in &other.not_hit_by_dtype {
            *self.not_hit_by_dtype.entry(*d).or_default() += n;
        }
    }
}

/// The coverage table of one operator (what `--coverage` prints) and its
/// counts.
fn coverage(run: &OpRun) -> (String, Coverage) {
    let info = run.info;
    let entries = info.table.entries;
    let mut lines = String::new();
    let mut counts = Coverage::default();
    let _ = writeln!(
        lines,
        "\n{}: valid cases per table entry, data types (inputs -> outputs) and rank of `{}`; `.` = no case hit the cell, `x` = no valid case found for it",
        info.instance_name(),
        info.inputs.first().copied().unwrap_or("?")
    );
    for (k, e) in entries.iter().enumerate() {
        let level = e.level;
        let (lo, hi) = (e.ranks.0 as usize, e.ranks.1 as usize);
        let mut combos: BTreeSet<Vec<DataType>> = BTreeSet::new();
        let mut enumerated = false;
        for (kk, cells) in &run.universe {
            if *kk == k
                && let Some(cells) = cells
            {
                enumerated = true;
                combos.extend(cells.iter().map(|c| c.1.clone()));
            }
        }
        for (cell, _) in run.hits.iter().filter(|(c, _)| c.0 == level) {
            combos.insert(cell.1.clone());
        }
        let at = level.map_or("any".to_string(), |l| format!("{l}+"));
        let ranks: Vec<String> = (lo..=hi).map(|r| format!("r{r}")).collect();
        let mut header = vec!["level", "inputs -> outputs"];
        header.extend(ranks.iter().map(String::as_str));
        let mut table = crate::term::table(&header, &(2..header.len()).collect::<Vec<_>>());
        for combo in &combos {
            let mut row = vec![at.clone(), combo_text(info, combo)];
            for r in lo..=hi {
                counts.cells += 1;
                let cell = (level, combo.clone(), r);
                let mark = match run.hits.get(&cell) {
                    Some(n) => {
                        counts.hit += 1;
                        row.push(n.to_string());
                        continue;
                    }
                    None if run.unreachable.contains(&cell) => {
                        counts.unreachable += 1;
                        "x"
                    }
                    None => ".",
                };
                row.push(mark.to_owned());
                *counts.not_hit_by_rank.entry(r).or_default() += 1;
                if let Some(&d) = combo.first() {
                    *counts.not_hit_by_dtype.entry(d).or_default() += 1;
                }
            }
            table.add_row(row);
        }
        lines.push_str(&crate::term::table_text(&table, "  "));
        if !enumerated {
            lines.push_str("   (too many combinations to list; only those hit)\n");
        }
    }
    let levels: Vec<String> = run
        .levels
        .iter()
        .map(|(l, n)| format!("{l}: {n}"))
        .collect();
    if !levels.is_empty() {
        let _ = writeln!(lines, "  cases per feature level: {}", levels.join(", "));
    }
    let _ = writeln!(
        lines,
        "  {} of {} cells hit, {} not hit ({} of them with no valid case found)",
        counts.hit,
        counts.cells,
        counts.not_hit(),
        counts.unreachable
    );
    (lines, counts)
}

/// The next cell to aim at: one of the least-hit cells of the universe
/// (none left to aim at: `None`).
fn next_aim(run: &mut OpRun) -> Option<(Cell, Aim)> {
    let cells: Vec<&Cell> = run
        .universe
        .iter()
        .filter_map(|(_, c)| c.as_ref())
        .flatten()
        .filter(|c| !run.unreachable.contains(*c))
        .collect();
    let least = cells
        .iter()
        .map(|c| run.hits.get(*c).copied().unwrap_or(0))
        .min()?;
    let candidates: Vec<&Cell> = cells
        .into_iter()
        .filter(|c| run.hits.get(*c).copied().unwrap_or(0) == least)
        .collect();
    let cell = candidates[(run.pick.next_u64() % candidates.len() as u64) as usize].clone();
    let entry = run
        .info
        .table
        .entries
        .iter()
        .position(|e| e.level == cell.0)?;
    let aim = Aim {
        entry: Some(entry),
        rank: Some(cell.2),
        dtypes: Some(cell.1.clone()),
    };
    Some((cell, aim))
}

/// Runs `ops fuzz`; the exit status: 0 when nothing failed, 1 on a failure,
/// 2 for bad arguments.
pub fn main(args: &FuzzArgs) -> io::Result<u8> {
    // Colour where the stream is a terminal and NO_COLOR is unset; stderr
    // stays unlocked: the progress bar draws on it from its own thread.
    let mut out = anstream::AutoStream::auto(io::stdout().lock());
    let mut err = anstream::AutoStream::auto(io::stderr());
    let catalog = ops::catalog();
    let mut infos: Vec<&'static OperatorInfo> = Vec::new();
    for name in &args.ops {
        // Every instance of a spec with optional or variadic tensors.
        let found: Vec<&'static OperatorInfo> = catalog
            .iter()
            .copied()
            .filter(|i| i.answers_to(name))
            .collect();
        match found.is_empty() {
            false => {
                for i in found {
                    if !infos.iter().any(|x| std::ptr::eq(*x, i)) {
                        infos.push(i);
                    }
                }
            }
            true => {
                let names: Vec<String> = catalog.iter().map(|i| i.qualified_name()).collect();
                writeln!(
                    err,
                    "ops fuzz: no operator `{name}` in the catalog ({})",
                    names.join(", ")
                )?;
                return Ok(2);
            }
        }
    }
    if infos.is_empty() {
        infos = catalog.to_vec();
    }
    let budget = match (args.cases, args.time) {
        (_, Some(t)) if t.is_finite() && t > 0.0 => Budget::Time(Duration::from_secs_f64(t)),
        (_, Some(t)) => {
            writeln!(
                err,
                "ops fuzz: --time must be a positive number of seconds, got {t}"
            )?;
            return Ok(2);
        }
        (Some(n), None) => Budget::Cases(n),
        (None, None) => Budget::Cases(DEFAULT_CASES),
    };
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id())
    });
    let gpu = if args.backend == FuzzBackend::Cpu {
        None
    } else {
        match ops_gpu::shared() {
            Ok(c) => {
                writeln!(err, "{}", crate::term::gpu_line(c))?;
                Some(c)
            }
            Err(e) => {
                writeln!(err, "ops fuzz: {e}")?;
                if args.backend == FuzzBackend::Gpu {
                    writeln!(err, "ops fuzz: `--backend gpu` needs a GPU adapter")?;
                    return Ok(2);
                }
                writeln!(
                    err,
                    "ops fuzz: checking the CPU reference and validation only"
                )?;
                None
            }
        }
    };
    let what = if infos.len() <= 6 {
        infos
            .iter()
            .map(|i| i.qualified_name())
            .collect::<Vec<_>>()
            .join(", ")
    } else if infos.len() == catalog.len() {
        format!("the catalog's {} operators", infos.len())
    } else {
        format!("{} operators", infos.len())
    };
    writeln!(
        err,
        "fuzzing {what} with seed {seed} (repeat with --seed {seed}), {}{}",
        match budget {
            Budget::Cases(n) => format!("{n} valid and {n} invalid cases per operator"),
            Budget::Time(t) => format!("for {:.0?}", t),
        },
        match (gpu, args.variants) {
            (Some(_), FuzzVariants::All) => ", every GPU plan variant",
            (None, FuzzVariants::All) => ", no GPU: no plan variants",
            _ => "",
        }
    )?;
    let options = FuzzOptions {
        budget,
        seed,
        variants: args.variants,
        out_dir: args.out.clone(),
        coverage: args.coverage,
        color: true,
        progress: true,
    };
    let report = fuzz_catalog(&infos, gpu, &options, &mut out, &mut err)?;
    Ok(if report.failures.is_empty() { 0 } else { 1 })
}

/// How [`fuzz_catalog`] runs and reports.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// How long it runs.
    pub budget: Budget,
    /// The seed of the run.
    pub seed: u64,
    /// Which GPU plans each valid case runs through.
    pub variants: FuzzVariants,
    /// Where minimal failing cases are written.
    pub out_dir: PathBuf,
    /// Also print, per operator, its counts (on `err`) and its coverage
    /// table (on `out`), not the summary alone (`--coverage`).
    pub coverage: bool,
    /// Write `FAIL` and the verdict in colour, as ANSI escapes (see
    /// [`crate::runner::RunOptions::color`]).
    pub color: bool,
    /// Show a progress bar on stderr when it is a terminal, and otherwise a
    /// plain progress line on `err` each [`PROGRESS_EVERY`].
    pub progress: bool,
}

/// How often a run whose stderr is not a terminal prints a progress line.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(15);

/// Operators the summary names among those with the most cells not hit.
const SUMMARY_OPERATORS: usize = 5;

/// Failures the summary lists (each was printed in full as it happened).
const SUMMARY_FAILURES: usize = 10;

/// Fuzzes `infos` with `options`; see the module documentation. Prints
/// failures as they happen and a short summary at the end: totals over the
/// operators, the cells not hit by rank, data type and operator, and the
/// failures; with [`FuzzOptions::coverage`], every operator's counts and
/// coverage table too.
pub fn fuzz_catalog(
    infos: &[&'static OperatorInfo],
    gpu: Option<&'static ops_gpu::Context>,
    options: &FuzzOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<Report> {
    let FuzzOptions {
        budget,
        seed,
        variants,
        ref out_dir,
        color,
        ..
    } = *options;
    let mut bar = match budget {
        _ if !options.progress => Bar::hidden(),
        Budget::Cases(n) => Bar::new(n * infos.len() as u64, "cases", Duration::ZERO),
        Budget::Time(t) => Bar::new(t.as_secs().max(1), "s", Duration::ZERO),
    };
    let mut runs: Vec<OpRun> = Vec::with_capacity(infos.len());
    for (k, &info) in infos.iter().enumerate() {
        if bar.drawn() {
            let name = info.instance_name();
            bar.update(0, format!("listing the coverage cells of {name}"));
        }
        runs.push(OpRun {
            info,
            runner: TestRunner::new_with_rng(Config::default(), rng_for(seed, k)),
            valid: fuzz::valid_cases(info)
                .max_elements(fuzz::FUZZ_ELEMENTS)
                .hostile(fuzz::HOSTILE_ONE_IN),
            invalid: fuzz::invalid_cases(info),
            valid_count: 0,
            invalid_count: 0,
            index_errors: 0,
            run_errors: 0,
            variants_run: 0,
            large: 0,
            hostile: 0,
            elapsed: Duration::ZERO,
            hits: BTreeMap::new(),
            levels: BTreeMap::new(),
            universe: universe(info),
            unreachable: BTreeSet::new(),
            pick: fuzz::Rng::new(seed ^ k as u64),
            // `--cases 0`: nothing to run.
            done: budget == Budget::Cases(0),
        });
    }
    let mut report = Report::default();
    let start = Instant::now();
    let progress_bar = options.progress && bar.drawn();
    let progress_lines = options.progress && !bar.drawn();
    let handle = bar.bar().clone();
    let mut bar_err = Suspend::new(&handle, &mut *err);
    let mut last_line = Instant::now();
    let operators = runs.len();
    // Valid cases run (hostile ones among them), and the bar's count of
    // cases.
    let (mut valid, mut hostile, mut cases_pos) = (0u64, 0u64, 0u64);
    loop {
        let mut any = false;
        for run in runs.iter_mut().filter(|r| !r.done) {
            if let Budget::Time(t) = budget
                && start.elapsed() >= t
            {
                run.done = true;
                continue;
            }
            any = true;
            let before = run.valid_count;
            let hostile_before = run.hostile;
            let t0 = Instant::now();
            // A failure found late in a `--time` run shrinks within what
            // is left of the budget (at least a few seconds).
            let shrink_for = match budget {
                Budget::Time(t) => t
                    .saturating_sub(start.elapsed())
                    .clamp(SHRINK_AT_LEAST, SHRINK_FOR),
                Budget::Cases(_) => SHRINK_FOR,
            };
            if let Some(f) = step(run, gpu, variants, seed, out_dir, shrink_for)? {
                print_failure(&mut bar_err, &f, color)?;
                report.failures.push(f);
                run.done = true;
            }
            run.elapsed += t0.elapsed();
            if let Budget::Cases(n) = budget
                && run.valid_count >= n
            {
                run.done = true;
            }
            valid += run.valid_count - before;
            hostile += run.hostile - hostile_before;
            let failed = report.failures.len();
            if progress_bar {
                let pos = match budget {
                    Budget::Cases(n) => {
                        cases_pos += if run.done { n } else { run.valid_count.min(n) };
                        cases_pos -= before.min(n);
                        cases_pos
                    }
                    Budget::Time(_) => start.elapsed().as_secs(),
                };
                let name = run.info.instance_name();
                let message = match budget {
                    Budget::Cases(_) => format!("{failed} failed, {name}"),
                    Budget::Time(_) => format!("{valid} valid cases, {failed} failed, {name}"),
                };
                bar.update(pos, message);
            } else if progress_lines && last_line.elapsed() >= PROGRESS_EVERY {
                last_line = Instant::now();
                let done = match budget {
                    Budget::Cases(n) => format!(
                        "{valid} of {} valid cases done",
                        n.saturating_mul(operators as u64)
                    ),
                    Budget::Time(t) => format!(
                        "{} of {} s, {valid} valid cases done",
                        start.elapsed().as_secs(),
                        t.as_secs_f64().ceil()
                    ),
                };
                writeln!(
                    bar_err,
                    "{done} ({hostile} with hostile values), {failed} failed"
                )?;
            }
        }
        if !any {
            break;
        }
    }
    bar_err.flush()?;
    drop(bar_err);
    bar.finish();

    let mut total = Coverage::default();
    let mut per_op: Vec<(String, Coverage)> = Vec::new();
    if options.coverage {
        writeln!(out, "coverage")?;
    }
    for run in &runs {
        let name = run.info.instance_name();
        report.valid.insert(name.clone(), run.valid_count);
        report.invalid.insert(name.clone(), run.invalid_count);
        report.variants.insert(name.clone(), run.variants_run);
        report.large.insert(name.clone(), run.large);
        report.hostile.insert(name.clone(), run.hostile);
        let (table, counts) = coverage(run);
        total.add(&counts);
        if options.coverage {
            let variants_text = match (gpu, variants) {
                (Some(_), FuzzVariants::All) => {
                    format!(", {} GPU plan variants run", run.variants_run)
                }
                _ => String::new(),
            };
            writeln!(
                err,
                "{name}: {} valid cases ({} with hostile values, {} with a dimension of {LARGE_EXTENT} or more, {} with an index out of range, {} other run-time errors, alike on every backend){variants_text}, {} invalid cases, {:.1?}",
                run.valid_count,
                run.hostile,
                run.large,
                run.index_errors,
                run.run_errors,
                run.invalid_count,
                run.elapsed
            )?;
            out.write_all(table.as_bytes())?;
        }
        per_op.push((name, counts));
    }
    if options.coverage {
        writeln!(out)?;
    }
    summary(
        &runs,
        &report,
        &total,
        per_op,
        start.elapsed(),
        options,
        gpu,
        out,
    )?;
    out.flush()?;
    let n = report.failures.len();
    let verdict = if n == 0 {
        crate::term::paint_as("no failures", "PASS", color)
    } else {
        let text = format!("{n} failure{}", if n == 1 { "" } else { "s" });
        crate::term::paint_as(&text, "FAIL", color)
    };
    writeln!(err, "ops fuzz: {verdict} (seed {seed})")?;
    Ok(report)
}

/// Prints a failure as it happens: what failed, the minimal case and
/// where its case file went.
fn print_failure(err: &mut dyn Write, f: &Failure, color: bool) -> io::Result<()> {
    writeln!(
        err,
        "{} {}: {}",
        crate::term::paint("FAIL", color),
        f.operator,
        f.message
    )?;
    writeln!(
        err,
        "  minimal case: {}",
        f.case.trim_end().replace('\n', "\n  ")
    )?;
    match (&f.file, f.reproduces) {
        (Some(p), Some(true)) => writeln!(
            err,
            "  written to {}; `ops run {}` reproduces it",
            p.display(),
            p.display()
        ),
        (Some(p), _) => writeln!(
            err,
            "  written to {}; `ops run` passes it: {}",
            p.display(),
            if f.invalid {
                "a case file checks that validation fails, not which rule it blames"
            } else if f.message.starts_with("variant `") {
                "`ops run` runs the default plan only; the note names the variant"
            } else {
                "case files compare floats by value (NaN = NaN, -0 = +0), not bit for bit"
            }
        ),
        (None, _) => writeln!(err, "  (no case file: the builder rejects these arguments)"),
    }
}

/// The summary at the end of a run: a few lines, whatever the number of
/// operators.
#[allow(clippy::too_many_arguments)]
fn summary(
    runs: &[OpRun],
    report: &Report,
    total: &Coverage,
    mut per_op: Vec<(String, Coverage)>,
    elapsed: Duration,
    options: &FuzzOptions,
    gpu: Option<&'static ops_gpu::Context>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let sum = |f: fn(&OpRun) -> u64| runs.iter().map(f).sum::<u64>();
    let variants_text = match (gpu, options.variants) {
        (Some(_), FuzzVariants::All) => {
            format!(", {} GPU plan variants run", sum(|r| r.variants_run))
        }
        _ => String::new(),
    };
    let fewest_hostile = runs
        .iter()
        .min_by_key(|r| r.hostile)
        .map_or(String::new(), |r| {
            format!(", fewest {} for {}", r.hostile, r.info.instance_name())
        });
    writeln!(
        out,
        "{} operator{}: {} valid cases ({} with hostile values{fewest_hostile}; {} with a dimension of {LARGE_EXTENT} or more, {} with an index out of range, {} other run-time errors){variants_text}, {} invalid cases, {:.1?}",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        sum(|r| r.valid_count),
        sum(|r| r.hostile),
        sum(|r| r.large),
        sum(|r| r.index_errors),
        sum(|r| r.run_errors),
        sum(|r| r.invalid_count),
        elapsed
    )?;
    let percent = 100.0 * total.hit as f64 / total.cells.max(1) as f64;
    writeln!(
        out,
        "coverage: {} of {} cells (operator, table entry, data types, rank) hit, {percent:.0}%; {} with no valid case found{}",
        total.hit,
        total.cells,
        total.unreachable,
        if options.coverage {
            ""
        } else {
            "; `--coverage` prints the table"
        }
    )?;
    if total.not_hit() > 0 {
        let ranks: Vec<String> = total
            .not_hit_by_rank
            .iter()
            .map(|(r, n)| format!("r{r} {n}"))
            .collect();
        writeln!(
            out,
            "  not hit, by rank of the first input: {}",
            ranks.join(", ")
        )?;
        let dtypes: Vec<String> = total
            .not_hit_by_dtype
            .iter()
            .map(|(d, n)| format!("{} {n}", short(*d)))
            .collect();
        writeln!(
            out,
            "  not hit, by data type of the first input: {}",
            dtypes.join(", ")
        )?;
        per_op.retain(|(_, c)| c.not_hit() > 0);
        per_op.sort_by(|a, b| b.1.not_hit().cmp(&a.1.not_hit()).then(a.0.cmp(&b.0)));
        let named: Vec<String> = per_op
            .iter()
            .take(SUMMARY_OPERATORS)
            .map(|(name, c)| format!("{name} {} of {}", c.not_hit(), c.cells))
            .collect();
        let more = per_op.len().saturating_sub(SUMMARY_OPERATORS);
        writeln!(
            out,
            "  not hit, most first: {}{}",
            named.join(", "),
            if more > 0 {
                format!(
                    ", and {more} more operator{}",
                    if more == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        )?;
    }
    for f in report.failures.iter().take(SUMMARY_FAILURES) {
        let message = f.message.lines().next().unwrap_or("");
        write!(
            out,
            "{} {}: {message}",
            crate::term::paint("FAIL", options.color),
            f.operator
        )?;
        match &f.file {
            Some(p) => writeln!(out, " ({})", p.display())?,
            None => writeln!(out)?,
        }
    }
    let more = report.failures.len().saturating_sub(SUMMARY_FAILURES);
    if more > 0 {
        writeln!(out, "and {more} more failures (above)")?;
    }
    Ok(())
}

/// One turn of one operator: a valid case and an invalid case. Returns the
/// (shrunk) failure, if any.
fn step(
    run: &mut OpRun,
    gpu: Option<&'static ops_gpu::Context>,
    variants: FuzzVariants,
    seed: u64,
    out_dir: &Path,
    shrink_for: Duration,
) -> io::Result<Option<Failure>> {
    let info = run.info;
    let name = info.name;
    let base = format!(
        "fuzz-{}-{seed}-{}",
        info.qualified_name()
            .to_ascii_lowercase()
            .replace("::", "-"),
        run.valid_count
    );

    // A valid case: every other turn aimed at a cell no case hit yet (or
    // hit least), so that long runs cover every combination.
    let aim = if run.valid_count % 2 == 1 {
        next_aim(run)
    } else {
        None
    };
    let strategy = match &aim {
        Some((_, a)) => run.valid.clone().aimed(a.clone()),
        None => run.valid.clone(),
    };
    let tree = catch_unwind(AssertUnwindSafe(|| strategy.new_tree(&mut run.runner)));
    let mut tree = match tree {
        Err(p) => return Ok(Some(panicked(name, "drawing a valid case", p))),
        Ok(Err(_)) if aim.is_some() => {
            // The cell admits no case after all: note it, try another turn.
            if let Some((cell, _)) = aim {
                run.unreachable.insert(cell);
            }
            return Ok(None);
        }
        Ok(Err(reason)) => {
            return Ok(Some(Failure {
                operator: name,
                message: format!("no valid case could be drawn: {reason}"),
                case: String::new(),
                file: None,
                reproduces: None,
                invalid: false,
            }))
        }
        Ok(Ok(t)) => t,
    };
    let case = tree.current();
    run.valid_count += 1;
    run.hostile += u64::from(case.hostile);
    let check = |c: &ValidCase| check_valid(c, gpu, variants).map(|_| ());
    match check_valid(&case, gpu, variants) {
        Ok((outcome, ran)) => {
            run.variants_run += ran;
            run.large += u64::from(is_large(&case));
            *run.hits
                .entry((case.entry_level(), case.dtypes(), case.rank()))
                .or_default() += 1;
            *run.levels.entry(case.level).or_default() += 1;
            match outcome {
                FuzzOutcome::Error(OpError::IndexOutOfRange { .. }) => run.index_errors += 1,
                FuzzOutcome::Error(_) => run.run_errors += 1,
                FuzzOutcome::Outputs(_) => {}
            }
        }
        Err(first) => {
            let (minimal, message) = shrink(&mut tree, first, &check, shrink_for);
            let case_file = valid_case_file(&minimal, &base, "");
            let path = write_case_file(out_dir, &case_file, &message)?;
            let reproduces = reproduces(&path, gpu);
            return Ok(Some(Failure {
                operator: name,
                message,
                case: format!("{minimal:?}"),
                file: Some(path),
                reproduces,
                invalid: false,
            }));
        }
    }

    // An invalid case.
    let tree = catch_unwind(AssertUnwindSafe(|| run.invalid.new_tree(&mut run.runner)));
    let mut tree = match tree {
        Err(p) => return Ok(Some(panicked(name, "drawing an invalid case", p))),
        // Some operators admit nothing to break at some draws; not a failure.
        Ok(Err(_)) => return Ok(None),
        Ok(Ok(t)) => t,
    };
    run.invalid_count += 1;
    let case = tree.current();
    let check = |c: &InvalidCase| fuzz::check_invalid(c);
    if let Err(first) = check(&case) {
        let (minimal, message) = shrink(&mut tree, first, &check, shrink_for);
        let file = invalid_case_file(&minimal, &format!("{base}-invalid"), "")
            .map(|c| write_case_file(out_dir, &c, &message))
            .transpose()?;
        let reproduces = file.as_deref().and_then(|p| reproduces(p, gpu));
        return Ok(Some(Failure {
            operator: name,
            message,
            case: format!("{minimal:?}"),
            file,
            reproduces,
            invalid: true,
        }));
    }
    Ok(None)
}

fn panicked(operator: &'static str, what: &str, p: Box<dyn std::any::Any + Send>) -> Failure {
    Failure {
        operator,
        message: format!("{what} panicked: {}", panic_text(p)),
        case: String::new(),
        file: None,
        reproduces: None,
        invalid: false,
    }
}
