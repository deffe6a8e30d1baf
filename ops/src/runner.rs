//! Running cases: build the descriptor, validate it, run it on each backend
//! and compare the outputs with the expected data.
//!
//! One case gives one [`Report`] per step:
//!
//! * the descriptor is built with [`OperatorInfo::build`] from
//!   [`Case::op_args`] and validated at [`Case::level`] once, whatever the
//!   backends. When that fails, or the case expects a validation error, the
//!   case ends there with a single report for the [`Step::Validate`] step;
//! * otherwise the descriptor runs on each [`Executor`] ([`Step::Run`]), with
//!   the inputs in the operator's order, and every output is checked against
//!   the case's description and, when given, its expected data.
//!
//! Decisions:
//!
//! * `expect_error: "validation"` passes when building fails with
//!   [`OpError::Validation`] or [`Operator::validate`] fails. Any other
//!   build failure ([`OpError::InvalidArgument`]: an attribute missing or of
//!   the wrong type, a tensor the builder cannot take) makes the case
//!   malformed, an [`Outcome::Error`], whatever it expects: a validation case
//!   must be rejected by the rule it is about, not by a misspelt attribute.
//!   Its message names the file and the JSON path of the attribute the
//!   builder refused ([`Case::location_of`]), or of the case.
//!   With `expect_message`, the error's text must also contain it (the
//!   rule the case is about, in the spec's words).
//! * `expect_error: "index"` passes on a backend when its run fails with
//!   [`OpError::IndexOutOfRange`]; `expect_error: "empty_reduction"` when
//!   it fails with the [`OpError::InvalidArgument`] of reducing over an
//!   empty dimension ([`ops_core::fuzz::EMPTY_REDUCTION`]).
//! * [`OpError::Unsupported`] from the GPU backend (a data type the adapter
//!   cannot run) skips that run ([`Outcome::Skip`]); from the CPU reference
//!   it fails.
//! * A panic in operator code is caught and fails the step, so one broken
//!   operator does not hide the results of the others.
//! * Comparison: under the case's own tolerance (`rtol`/`atol`,
//!   [`Tolerance::Close`]) when it gives one, else under the operator's
//!   ([`Operator::tolerance`]), by [`ops_core::accuracy::first_mismatch`].
//!   Under [`Tolerance::Exact`] integers must be equal and floats are equal
//!   when both are NaN or when they are equal as numbers (so -0.0 matches
//!   0.0).
//! * Where both backends ran and passed, the GPU is also held to the CPU
//!   reference: bit for bit (any two NaNs match) under an exact contract,
//!   and under another NaN against NaN, each infinity against itself and
//!   each zero against a zero of its sign (the sign of a zero is the
//!   arithmetic's; the ULP bound holds in the spec's domain, which a case's
//!   inputs may leave). A difference fails the GPU run.
//! * A descriptor the builder refuses with [`OpError::Unsupported`] (a
//!   [`crate::variadic`] chain needing a call the catalog lacks) fails the
//!   case, a gap of the catalog like the reader's below.
//! * A case file that is well formed but needs what the catalog lacks (an
//!   ONNX-shaped case of an operator the `onnx` namespace does not have,
//!   [`crate::case::CaseError::unsupported`]) is one failed case, `FAIL`
//!   naming what is missing, not bad input.

use std::fmt;
use std::io::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use ops_core::{Element, HostTensor, OpError, Operator, OperatorInfo, Tolerance};

use crate::case::{format_element, read_cases, Case, ExpectedError};

/// A backend that runs operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    /// The CPU reference ([`Operator::run_cpu`]).
    Cpu,
    /// The wgpu runtime ([`ops_gpu::Context::run`]).
    Gpu,
}

impl Backend {
    /// The backend's name in reports (`cpu`, `gpu`).
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs a built operator on one backend.
pub trait Executor {
    /// Which backend this is.
    fn backend(&self) -> Backend;
    /// Runs `op` on `inputs` (in the operator's input order).
    fn run(&self, op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError>;
}

/// The CPU reference backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuExecutor;

impl Executor for CpuExecutor {
    fn backend(&self) -> Backend {
        Backend::Cpu
    }
    fn run(&self, op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        op.run_cpu(inputs)
    }
}

/// The GPU backend: a wgpu context of `ops-gpu`.
#[derive(Clone, Copy)]
pub struct GpuExecutor(pub &'static ops_gpu::Context);

impl fmt::Debug for GpuExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("GpuExecutor").finish_non_exhaustive()
    }
}

impl Executor for GpuExecutor {
    fn backend(&self) -> Backend {
        Backend::Gpu
    }
    fn run(&self, op: &dyn Operator, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        self.0.run(op, inputs)
    }
}

/// A step of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Building and validating the descriptor (backend independent).
    Validate,
    /// Running on a backend.
    Run(Backend),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Validate => f.write_str("validate"),
            Step::Run(b) => f.write_str(b.name()),
        }
    }
}

/// How a step ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// As the case says.
    Pass,
    /// Not as the case says; the message says how.
    Fail(String),
    /// Not run: the backend cannot run this case (the message says why).
    Skip(String),
    /// The case is malformed (its descriptor cannot be built).
    Error(String),
}

impl Outcome {
    /// The outcome's word in reports: `PASS`, `FAIL`, `SKIP`, `ERROR`.
    pub const fn word(&self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail(_) => "FAIL",
            Outcome::Skip(_) => "SKIP",
            Outcome::Error(_) => "ERROR",
        }
    }
}

/// The result of one step of one case.
#[derive(Clone, Debug)]
pub struct Report {
    /// The case's name.
    pub case: String,
    /// The step.
    pub step: Step,
    /// How it ended.
    pub outcome: Outcome,
    /// The outputs the step produced (runs that succeeded).
    pub outputs: Option<Vec<HostTensor>>,
    /// The error the operator raised, if it raised one.
    pub error: Option<String>,
}

impl fmt::Display for Report {
    /// `PASS argmin-columns [cpu]`, `FAIL argmin-columns [gpu]: output[1, 2]: got 3, expected 2`;
    /// a name with control characters or of more than
    /// [`ops_core::QUOTED_CHARS`] characters is [quoted](ops_core::quote).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plain =
            self.case.len() <= ops_core::QUOTED_CHARS && !self.case.chars().any(char::is_control);
        let name = if plain {
            std::borrow::Cow::from(self.case.as_str())
        } else {
            ops_core::quote(&self.case).into()
        };
        write!(f, "{} {name} [{}]", self.outcome.word(), self.step)?;
        match &self.outcome {
            Outcome::Pass => Ok(()),
            Outcome::Fail(m) | Outcome::Skip(m) | Outcome::Error(m) => write!(f, ": {m}"),
        }
    }
}

/// Runs one case: builds and validates its descriptor, then runs it on each
/// of `executors` (see the module documentation).
pub fn run_case(case: &Case, executors: &[&dyn Executor]) -> Vec<Report> {
    let report = |step, outcome, error: Option<String>| Report {
        case: case.name.clone(),
        step,
        outcome,
        outputs: None,
        error,
    };
    let args = case.op_args();
    let op_name = case.info.name;
    let expects_validation = case.expect_error == Some(ExpectedError::Validation);
    let level = case.level();

    let op = match catch(|| crate::variadic::build(case.info, &args)) {
        Err(panic) => {
            let m = format!("building the {op_name} descriptor panicked: {panic}");
            return vec![report(Step::Validate, Outcome::Fail(m), None)];
        }
        Ok(Ok(op)) => op,
        Ok(Err(OpError::Validation(e))) => {
            let outcome = if expects_validation {
                message_outcome(case, &e.to_string())
            } else {
                Outcome::Fail(format!("validation failed: {e}"))
            };
            return vec![report(Step::Validate, outcome, Some(e.to_string()))];
        }
        Ok(Err(OpError::Unsupported(m))) => {
            // What the catalog cannot build (a chain needing a call it
            // lacks) is a gap, as the reader's are.
            let m = format!("cannot build the {op_name} descriptor: {m}");
            return vec![report(Step::Validate, Outcome::Fail(m.clone()), Some(m))];
        }
        Ok(Err(e)) => {
            let at = case.location_of(&e.to_string());
            let m = format!(
                "{}: {at}: cannot build the {op_name} descriptor: {e}",
                case.file
            );
            return vec![report(
                Step::Validate,
                Outcome::Error(m),
                Some(e.to_string()),
            )];
        }
    };
    let op: &dyn Operator = &*op;

    match catch(|| op.validate(level)) {
        Err(panic) => {
            let m = format!("validation panicked: {panic}");
            return vec![report(Step::Validate, Outcome::Fail(m), None)];
        }
        Ok(Err(e)) => {
            let outcome = if expects_validation {
                message_outcome(case, &e.to_string())
            } else {
                Outcome::Fail(format!("validation failed at feature level {level}: {e}"))
            };
            return vec![report(Step::Validate, outcome, Some(e.to_string()))];
        }
        Ok(Ok(())) if expects_validation => {
            let m = format!(
                "expected a validation error, but the descriptor is valid at feature level {level}"
            );
            return vec![report(Step::Validate, Outcome::Fail(m), None)];
        }
        Ok(Ok(())) => {}
    }

    let inputs = case.input_tensors();
    let mut reports: Vec<Report> = executors
        .iter()
        .map(|exec| run_on(case, op, &inputs, *exec))
        .collect();
    hold_gpu_to_cpu(op, &mut reports);
    reports
}

/// Fails each GPU run that passed but disagrees with the CPU reference's
/// passing run where the outcome is the arithmetic's, not rounding: bit
/// for bit (any two NaNs match) under an exact contract; under another,
/// NaN against NaN, each infinity against itself and each zero against a
/// zero of its sign (the ULP bound itself holds in the spec's domain,
/// which a case's inputs may leave).
fn hold_gpu_to_cpu(op: &dyn Operator, reports: &mut [Report]) {
    let Some(cpu) = reports
        .iter()
        .find(|r| r.step == Step::Run(Backend::Cpu) && r.outcome == Outcome::Pass)
        .and_then(|r| r.outputs.clone())
    else {
        return;
    };
    let tolerance = match op.tolerance() {
        Tolerance::Exact => Tolerance::Exact,
        // Any two values match but zeros of opposite signs.
        _ => Tolerance::Close {
            rtol: f64::INFINITY,
            atol: f64::INFINITY,
        },
    };
    for r in reports.iter_mut() {
        if r.step != Step::Run(Backend::Gpu) || r.outcome != Outcome::Pass {
            continue;
        }
        let Some(gpu) = &r.outputs else {
            continue;
        };
        if let Err(m) = ops_core::fuzz::compare_within(gpu, &cpu, tolerance) {
            r.outcome = Outcome::Fail(format!("the GPU disagrees with the CPU reference: {m}"));
        }
    }
}

/// A validation case's outcome once it was rejected with `message`: a pass
/// unless the case names words (`expect_message`) the message lacks.
fn message_outcome(case: &Case, message: &str) -> Outcome {
    match &case.expect_message {
        Some(want) if !message.contains(want.as_str()) => Outcome::Fail(format!(
            "expected a validation error containing `{want}`, got: {message}"
        )),
        _ => Outcome::Pass,
    }
}

fn run_on(case: &Case, op: &dyn Operator, inputs: &[&HostTensor], exec: &dyn Executor) -> Report {
    let backend = exec.backend();
    let mut report = Report {
        case: case.name.clone(),
        step: Step::Run(backend),
        outcome: Outcome::Pass,
        outputs: None,
        error: None,
    };
    // The run-time error the case expects, in words.
    let expected = match case.expect_error {
        Some(ExpectedError::Index) => Some("an index-out-of-range error"),
        Some(ExpectedError::EmptyReduction) => Some("an empty-reduction error"),
        _ => None,
    };
    match catch(|| exec.run(op, inputs)) {
        Err(panic) => report.outcome = Outcome::Fail(format!("panicked: {panic}")),
        Ok(Err(e)) => {
            report.outcome = match (&e, case.expect_error) {
                (OpError::IndexOutOfRange { .. }, Some(ExpectedError::Index)) => Outcome::Pass,
                (OpError::InvalidArgument(m), Some(ExpectedError::EmptyReduction))
                    if m.contains(ops_core::fuzz::EMPTY_REDUCTION) =>
                {
                    Outcome::Pass
                }
                (OpError::Unsupported(m), _) if backend == Backend::Gpu => Outcome::Skip(m.clone()),
                _ => match expected {
                    Some(what) => Outcome::Fail(format!("expected {what}, got: {e}")),
                    None => Outcome::Fail(e.to_string()),
                },
            };
            report.error = Some(e.to_string());
        }
        Ok(Ok(outputs)) => {
            report.outcome = if let Some(what) = expected {
                Outcome::Fail(format!("expected {what}, but the run succeeded"))
            } else {
                match check_outputs(case, op, &outputs) {
                    Ok(()) => Outcome::Pass,
                    Err(m) => Outcome::Fail(m),
                }
            };
            report.outputs = Some(outputs);
        }
    }
    report
}

/// Checks produced outputs against the case's descriptions and expected
/// data, under the case's tolerance or else the operator's.
fn check_outputs(case: &Case, op: &dyn Operator, outputs: &[HostTensor]) -> Result<(), String> {
    let tolerance = case.tolerance_over(op.tolerance());
    if outputs.len() != case.outputs.len() {
        return Err(format!(
            "the run produced {} output tensors, the case describes {}",
            outputs.len(),
            case.outputs.len()
        ));
    }
    for (want, got) in case.outputs.iter().zip(outputs) {
        if got.desc() != &want.desc {
            return Err(format!(
                "{}: got a {} tensor of shape {:?}, expected {} of shape {:?}",
                want.name,
                got.dtype(),
                got.sizes(),
                want.desc.dtype,
                want.desc.sizes
            ));
        }
        if let Some(expected) = &want.expected {
            compare_within(&want.name, expected, got, tolerance).map_err(|m| match tolerance {
                Tolerance::Exact => m.to_string(),
                t => format!("{m} (tolerance: {t})"),
            })?;
        }
    }
    Ok(())
}

/// Where two tensors first differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The tensor's name.
    pub tensor: String,
    /// What differs.
    pub kind: MismatchKind,
}

/// What differs between two tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MismatchKind {
    /// The data types or shapes differ.
    Desc {
        /// The produced tensor's data type and shape, as text.
        got: String,
        /// The expected one.
        expected: String,
    },
    /// An element differs.
    Element {
        /// The first differing element's coordinates, outermost first.
        coords: Vec<u32>,
        /// The produced value, as text.
        got: String,
        /// The expected value, as text.
        expected: String,
        /// How many elements differ in all.
        count: usize,
        /// The element count of the tensor.
        total: usize,
    },
}

impl fmt::Display for Mismatch {
    /// `output[1, 2]: got 3, expected 2 (2 of 9 elements differ)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            MismatchKind::Desc { got, expected } => {
                write!(f, "{}: got {got}, expected {expected}", self.tensor)
            }
            MismatchKind::Element {
                coords,
                got,
                expected,
                count,
                total,
            } => {
                let coords: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
                write!(
                    f,
                    "{}[{}]: got {got}, expected {expected}",
                    self.tensor,
                    coords.join(", ")
                )?;
                if *count > 1 {
                    write!(f, " ({count} of {total} elements differ)")?;
                }
                Ok(())
            }
        }
    }
}

/// Compares `actual` with `expected`, naming the tensor `name` in the
/// mismatch. Integers must be equal; floats are equal when both are NaN or
/// when they are equal as numbers (-0.0 matches 0.0).
pub fn compare(name: &str, expected: &HostTensor, actual: &HostTensor) -> Result<(), Mismatch> {
    if expected.desc() != actual.desc() {
        let show = |t: &HostTensor| format!("{} {:?}", t.dtype(), t.sizes());
        return Err(Mismatch {
            tensor: name.to_owned(),
            kind: MismatchKind::Desc {
                got: show(actual),
                expected: show(expected),
            },
        });
    }
    let differing: Vec<usize> = ops_core::with_element_type!(expected.dtype(), T => {
        let (e, a) = (expected.to_vec::<T>(), actual.to_vec::<T>());
        let (e, a) = (e.unwrap_or_default(), a.unwrap_or_default());
        e.iter()
            .zip(&a)
            .enumerate()
            .filter(|(_, (x, y))| !elements_equal(**x, **y))
            .map(|(i, _)| i)
            .collect()
    });
    let Some(&first) = differing.first() else {
        return Ok(());
    };
    Err(Mismatch {
        tensor: name.to_owned(),
        kind: MismatchKind::Element {
            coords: coordinates(actual.sizes(), first),
            got: format_element(actual, first),
            expected: format_element(expected, first),
            count: differing.len(),
            total: expected.len(),
        },
    })
}

/// Compares `actual` with `expected` under `tolerance`: [`compare`] for
/// [`Tolerance::Exact`], else [`ops_core::accuracy::first_mismatch`].
pub fn compare_within(
    name: &str,
    expected: &HostTensor,
    actual: &HostTensor,
    tolerance: Tolerance,
) -> Result<(), Mismatch> {
    if tolerance == Tolerance::Exact || expected.desc() != actual.desc() {
        return compare(name, expected, actual);
    }
    let Some((first, count)) = ops_core::accuracy::first_mismatch(expected, actual, tolerance)
    else {
        return Ok(());
    };
    Err(Mismatch {
        tensor: name.to_owned(),
        kind: MismatchKind::Element {
            coords: coordinates(actual.sizes(), first),
            got: format_element(actual, first),
            expected: format_element(expected, first),
            count,
            total: expected.len(),
        },
    })
}

/// Element equality of case comparison.
fn elements_equal<T: Element>(a: T, b: T) -> bool {
    (a.is_nan() && b.is_nan()) || a.partial_cmp_value(b) == Some(std::cmp::Ordering::Equal)
}

/// The row-major coordinates of flat element `index` in a tensor of `sizes`.
pub fn coordinates(sizes: &[u32], index: usize) -> Vec<u32> {
    let mut rest = index as u64;
    let mut coords = vec![0u32; sizes.len()];
    for (d, &size) in sizes.iter().enumerate().rev() {
        if size == 0 {
            continue;
        }
        coords[d] = (rest % u64::from(size)) as u32;
        rest /= u64::from(size);
    }
    coords
}

/// A panic's message.
fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a non-string panic payload".to_owned()
        }
    })
}

/// Counts of step outcomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Steps that passed.
    pub passed: usize,
    /// Steps that failed.
    pub failed: usize,
    /// Runs skipped.
    pub skipped: usize,
    /// Malformed cases and unreadable or malformed case files.
    pub errors: usize,
}

impl Summary {
    /// Counts one outcome.
    pub fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail(_) => self.failed += 1,
            Outcome::Skip(_) => self.skipped += 1,
            Outcome::Error(_) => self.errors += 1,
        }
    }

    /// The command's exit status: 2 when any input was bad, else 1 when any
    /// step failed, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.errors > 0 {
            2
        } else if self.failed > 0 {
            1
        } else {
            0
        }
    }
}

impl fmt::Display for Summary {
    /// `12 passed, 1 failed`, with `, 2 skipped` and `, 1 error` when there are any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)?;
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        if self.errors > 0 {
            let s = if self.errors == 1 { "" } else { "s" };
            write!(f, ", {} error{s}", self.errors)?;
        }
        Ok(())
    }
}

/// How [`run_files`] reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// One line per case and step on `out`, then the summary line.
    #[default]
    Text,
    /// A JSON array on `out` of the cases with their produced outputs (one
    /// object per case and backend, with `backend` and, when the operator
    /// raised one, `error` keys), which reads back as a case file; failure
    /// lines and the summary go to `err`.
    Json,
}

/// What [`run_files_with`] does beyond [`run_files`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// How it reports.
    pub format: Format,
    /// Write the outcome words (`PASS`, `FAIL`, `SKIP`, `ERROR`) in colour,
    /// as ANSI escapes ([`crate::term::word_style`]): for a terminal, or a
    /// writer that drops them where they are not wanted
    /// (`anstream::AutoStream`, which the `ops` command writes through).
    /// Off by default: plain text, as [`Report`]'s `Display`.
    pub color: bool,
}

/// Where [`run_files_with`] is: reported after each case and each file.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The file being run (the last one, once all are done).
    pub file: &'a Path,
    /// Files finished.
    pub files_done: usize,
    /// Files in all.
    #[allow(
        dead_code,
        reason = "the command's bar knows the count already; tests read it"
    )]
    pub files: usize,
    /// Cases of `file` run so far.
    pub cases_done: usize,
    /// Cases in `file` (0 when it could not be read).
    pub cases: usize,
}

/// Reads and runs every case of `files` on `executors`, reporting on `out`
/// and `err`, and returns the counts ([`Summary::exit_code`] is the command's
/// status). A file that cannot be read or holds mistakes is reported on
/// `err` and counted as one error; the other files still run. Plain text:
/// [`run_files_with`] can colour the outcome words and report progress.
#[cfg(test)]
pub fn run_files(
    files: &[impl AsRef<Path>],
    catalog: &[&'static OperatorInfo],
    executors: &[&dyn Executor],
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<Summary> {
    let options = RunOptions {
        format,
        color: false,
    };
    run_files_with(files, catalog, executors, options, out, err, &mut |_| {})
}

/// [`run_files`] with `options`, calling `progress` after each case and
/// each file (the `ops` command draws its progress bar from it).
pub fn run_files_with(
    files: &[impl AsRef<Path>],
    catalog: &[&'static OperatorInfo],
    executors: &[&dyn Executor],
    options: RunOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: &mut dyn FnMut(Progress<'_>),
) -> io::Result<Summary> {
    let RunOptions { format, color } = options;
    let fail = crate::term::paint("FAIL", color);
    let line = |report: &Report| {
        let text = report.to_string();
        let word = report.outcome.word();
        format!("{}{}", crate::term::paint(word, color), &text[word.len()..])
    };
    let mut summary = Summary::default();
    // `--json`: every produced case, written as one array at the end.
    let mut json = Vec::new();
    for (done, file) in files.iter().enumerate() {
        let path = file.as_ref();
        let mut at = Progress {
            file: path,
            files_done: done,
            files: files.len(),
            cases_done: 0,
            cases: 0,
        };
        progress(at);
        let cases = match read_cases(path, catalog) {
            Ok(cases) => cases,
            Err(errors) if errors.all_unsupported() => {
                // A gap of the catalog, not bad input: one failed case.
                for e in &errors.errors {
                    match format {
                        Format::Text => writeln!(out, "{fail} {e}")?,
                        Format::Json => writeln!(err, "{fail} {e}")?,
                    }
                }
                summary.failed += 1;
                at.files_done += 1;
                progress(at);
                continue;
            }
            Err(errors) => {
                writeln!(err, "{errors}")?;
                summary.errors += 1;
                at.files_done += 1;
                progress(at);
                continue;
            }
        };
        at.cases = cases.len();
        for case in &cases {
            for report in run_case(case, executors) {
                summary.add(&report.outcome);
                match format {
                    Format::Text => writeln!(out, "{}", line(&report))?,
                    Format::Json => {
                        if !matches!(report.outcome, Outcome::Pass) {
                            writeln!(err, "{}", line(&report))?;
                        }
                        let mut extra = vec![("backend", report.step.to_string())];
                        if let Some(e) = &report.error {
                            extra.push(("error", e.clone()));
                        }
                        let extra: Vec<(&str, &str)> =
                            extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
                        // Expected data and an expected error do not mix in a case file.
                        let produced = report
                            .outputs
                            .as_deref()
                            .filter(|_| case.expect_error.is_none());
                        json.push(case.json(produced, &extra));
                    }
                }
            }
            at.cases_done += 1;
            if at.cases_done == at.cases {
                at.files_done += 1;
            }
            progress(at);
        }
        if cases.is_empty() {
            at.files_done += 1;
            progress(at);
        }
    }
    match format {
        Format::Text => writeln!(out, "{summary}")?,
        Format::Json => {
            crate::case::write_cases(&mut *out, &json)?;
            writeln!(out)?;
            writeln!(err, "{summary}")?;
        }
    }
    out.flush()?;
    Ok(summary)
}
