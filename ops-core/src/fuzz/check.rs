//! The properties every operator is fuzzed against.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::invalid::InvalidCase;
use super::valid::{describe_tensor, ValidCase};
use crate::{FeatureLevel, GpuPlan, HostTensor, OpError, Operator};

/// A backend other than the CPU reference: runs an operator on inputs
/// (`ops_gpu::Context::run` fits).
pub type Backend<'a> =
    &'a dyn Fn(&dyn Operator, &[&HostTensor]) -> Result<Vec<HostTensor>, OpError>;

/// A backend that runs one given plan of an operator
/// (`ops_gpu::Context::run_plan` fits): [`check_variants`] runs every plan
/// of [`Operator::gpu_plan_variants`] through it.
pub type PlanBackend<'a> =
    &'a dyn Fn(&dyn Operator, &[&HostTensor], &GpuPlan) -> Result<Vec<HostTensor>, OpError>;

/// The words of the error the reduce pattern documents for reducing over an
/// empty dimension (an [`OpError::InvalidArgument`]).
pub const EMPTY_REDUCTION: &str = "cannot reduce over an empty dimension";

/// Whether `e` is a run-time error the specs document for descriptors that
/// validate: an index value out of range, reducing over an empty dimension
/// ([`EMPTY_REDUCTION`]), or a tensor too large for a limit. Any other
/// error of a valid descriptor means the spec's rules and its pattern
/// disagree (say, a `shape` rule that gives the output another element count
/// than the pattern yields), and fuzzing reports it as a failure.
pub fn documented_error(e: &OpError) -> bool {
    match e {
        OpError::IndexOutOfRange { .. } | OpError::TooLarge { .. } => true,
        OpError::InvalidArgument(m) => m.contains(EMPTY_REDUCTION),
        _ => false,
    }
}

/// What a valid case produced on the CPU reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Output tensors.
    Outputs(Vec<HostTensor>),
    /// A run-time error (an index out of range, an empty reduced dimension).
    Error(OpError),
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Property 3: `min_feature_level()` is the lowest level whose table admits
/// the descriptor (`validate` passes there and at no lower level), and
/// `None` for operators without levels.
pub fn check_min_level(op: &dyn Operator) -> Result<(), String> {
    let info = op.info();
    let got = catch_unwind(AssertUnwindSafe(|| op.min_feature_level()))
        .map_err(|p| format!("min_feature_level panicked: {}", panic_text(p)))?;
    let want = if info.introduced.is_some() {
        FeatureLevel::ALL
            .into_iter()
            .find(|&l| op.validate(l).is_ok())
    } else {
        None
    };
    if got != want {
        return Err(format!(
            "{}: min_feature_level() is {got:?}, but the lowest level that validates is {want:?}",
            info.name
        ));
    }
    Ok(())
}

/// Compares two outputs bit for bit (any two NaNs match); the first
/// difference, if any.
pub fn compare_outputs(got: &[HostTensor], want: &[HostTensor]) -> Result<(), String> {
    compare_within(got, want, crate::Tolerance::Exact)
}

/// Compares two backends' outputs within `tol`, the sign of a zero
/// counting ([`crate::accuracy::first_disagreement`]); the first
/// difference, if any, with the ULP distance for floats.
pub fn compare_within(
    got: &[HostTensor],
    want: &[HostTensor],
    tol: crate::Tolerance,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if g.desc() != w.desc() {
            return Err(format!(
                "output {k} is {} {:?}, expected {} {:?}",
                g.dtype(),
                g.sizes(),
                w.dtype(),
                w.sizes()
            ));
        }
        if let Some((i, count)) = crate::accuracy::first_disagreement(w, g, tol) {
            let width = w.dtype().size_bytes();
            let strides = crate::row_major_strides(w.sizes());
            let coords: Vec<u64> = strides
                .iter()
                .zip(w.sizes())
                .map(|(&s, &n)| (i as u64 / s.max(1)) % u64::from(n).max(1))
                .collect();
            let bits = |t: &HostTensor| {
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(&t.bytes()[i * width..(i + 1) * width]);
                u64::from_le_bytes(b)
            };
            let ulps = match crate::accuracy::ulp_distance(w.dtype(), bits(w), bits(g)) {
                Some(d) if w.dtype().is_float() => format!(", {d} ULP apart"),
                _ => String::new(),
            };
            return Err(format!(
                "output {k} element {i} (coordinates {coords:?}) is {:02x?}, expected {:02x?}{ulps} ({tol}; {count} of {} elements differ)",
                &g.bytes()[i * width..(i + 1) * width],
                &w.bytes()[i * width..(i + 1) * width],
                w.len()
            ));
        }
    }
    Ok(())
}

/// Property 1 (and 3) for a valid case: it validates at its level,
/// `min_feature_level()` is right, the planners give it a GPU plan, the CPU
/// reference runs without panicking (an index error exactly when some index
/// is out of range) and either gives outputs of the descriptor's shapes or
/// fails with an error the spec documents ([`documented_error`]), and
/// `other` (the GPU), when given, gives the same outputs bit for bit or the
/// same error. Returns the CPU's outcome.
pub fn check_valid(case: &ValidCase, other: Option<Backend<'_>>) -> Result<Outcome, String> {
    let op = case.op.as_ref();
    op.validate(case.level)
        .map_err(|e| format!("a drawn case does not validate: {e}"))?;
    check_min_level(op)?;
    let plans = catch_unwind(AssertUnwindSafe(|| op.gpu_plan_variants()))
        .map_err(|p| format!("gpu_plan_variants panicked: {}", panic_text(p)))?;
    if let Err(e) = &plans {
        if !documented_error(e) {
            return Err(format!(
                "the planners reject a descriptor that validates at {}, with an error the spec does not document: {e}",
                case.level
            ));
        }
    }
    let inputs = case.input_refs();
    let cpu = catch_unwind(AssertUnwindSafe(|| op.run_cpu(&inputs)))
        .map_err(|p| format!("the CPU reference panicked: {}", panic_text(p)))?;
    match &cpu {
        Err(OpError::IndexOutOfRange { .. }) if !case.expect_index_error => {
            return Err(format!(
                "the CPU reference reports an index error for in-range indices: {}",
                cpu.as_ref().unwrap_err()
            ))
        }
        Err(e) if !documented_error(e) => {
            return Err(format!(
                "the CPU reference fails on a descriptor that validates at {}, with an error the spec does not document: {e}",
                case.level
            ))
        }
        Ok(_) if case.expect_index_error => {
            return Err("the CPU reference accepted an index out of range".into())
        }
        Ok(out) => {
            let want = op.output_descs();
            let got: Vec<_> = out.iter().map(|t| t.desc().clone()).collect();
            if got != want {
                return Err(format!(
                    "the CPU reference produced {got:?}, the descriptor says {want:?}"
                ));
            }
        }
        _ => {}
    }
    if let Some(run) = other {
        let gpu = catch_unwind(AssertUnwindSafe(|| run(op, &inputs)))
            .map_err(|p| format!("the GPU run panicked: {}", panic_text(p)))?;
        agree(op, &cpu, &gpu)?;
    }
    Ok(match cpu {
        Ok(o) => Outcome::Outputs(o),
        Err(e) => Outcome::Error(e),
    })
}

/// The GPU's result `gpu` against the CPU reference's `cpu`: the same
/// outputs within the operator's tolerance ([`Operator::tolerance`]: bit
/// for bit for exact operators), or the same error.
fn agree(
    op: &dyn Operator,
    cpu: &Result<Vec<HostTensor>, OpError>,
    gpu: &Result<Vec<HostTensor>, OpError>,
) -> Result<(), String> {
    match (cpu, gpu) {
        (Ok(c), Ok(g)) => {
            compare_within(g, c, op.tolerance()).map_err(|e| format!("GPU != CPU: {e}"))
        }
        (Err(c), Err(g)) if c == g => Ok(()),
        (c, g) => Err(format!(
            "GPU and CPU disagree: the CPU gives {}, the GPU gives {}",
            show(c),
            show(g)
        )),
    }
}

/// Runs a valid case through every plan of
/// [`Operator::gpu_plan_variants`] with `run_plan`, and compares each
/// result with `cpu` (the outcome [`check_valid`] returned) exactly as
/// [`check_valid`] compares the default plan's. A failure names the
/// variant. Returns how many variants ran (none when the planners reject
/// the descriptor with the CPU's own error).
pub fn check_variants(
    case: &ValidCase,
    cpu: &Outcome,
    run_plan: PlanBackend<'_>,
) -> Result<usize, String> {
    let op = case.op.as_ref();
    let inputs = case.input_refs();
    let cpu: Result<Vec<HostTensor>, OpError> = match cpu {
        Outcome::Outputs(o) => Ok(o.clone()),
        Outcome::Error(e) => Err(e.clone()),
    };
    let plans = catch_unwind(AssertUnwindSafe(|| op.gpu_plan_variants()))
        .map_err(|p| format!("gpu_plan_variants panicked: {}", panic_text(p)))?;
    let plans = match plans {
        Ok(p) => p,
        Err(e) => {
            agree(op, &cpu, &Err(e)).map_err(|m| format!("the plan variants: {m}"))?;
            return Ok(0);
        }
    };
    for (name, plan) in &plans {
        let gpu = catch_unwind(AssertUnwindSafe(|| run_plan(op, &inputs, plan)))
            .map_err(|p| format!("variant `{name}`: the GPU run panicked: {}", panic_text(p)))?;
        agree(op, &cpu, &gpu).map_err(|m| format!("variant `{name}`: {m}"))?;
    }
    Ok(plans.len())
}

fn show(r: &Result<Vec<HostTensor>, OpError>) -> String {
    match r {
        Ok(v) => v.iter().map(describe_tensor).collect::<Vec<_>>().join("; "),
        Err(e) => format!("error: {e}"),
    }
}

/// Property 2 (and 3) for an invalid case: the builder or `validate`
/// rejects it, the error names a rule involving what was broken
/// ([`super::Broken::explains`]), nothing panics, and
/// `min_feature_level()` is right.
pub fn check_invalid(case: &InvalidCase) -> Result<(), String> {
    let info = case.info;
    let what = case.broken.describe(info);
    if let Some(e) = &case.build_error {
        return if case.broken.explains_build_error(info, e) {
            Ok(())
        } else {
            Err(format!(
                "broke {what}; the builder's error does not name it: {e}"
            ))
        };
    }
    let Some(op) = &case.op else {
        return Err("an invalid case with neither a descriptor nor an error".into());
    };
    let op = op.as_ref();
    let r = catch_unwind(AssertUnwindSafe(|| op.validate(case.level)))
        .map_err(|p| format!("validate panicked: {}", panic_text(p)))?;
    let e = match r {
        Ok(()) => return Err(format!("broke {what}, but validate accepts it")),
        Err(e) => e,
    };
    if !case.broken.explains(info, &e) {
        return Err(format!(
            "broke {what}, but the error blames a rule that does not involve it: {e}"
        ));
    }
    check_min_level(op)?;
    // Running an invalid descriptor anyway may fail any way it likes, but
    // must not panic.
    let inputs: Vec<HostTensor> = info
        .tensors
        .iter()
        .filter(|t| !t.output)
        .zip(op.input_descs())
        .map(|(t, d)| match case.args.host_data.get(t.name) {
            Some(h) => Ok(h.clone()),
            None => HostTensor::zeros(d),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot make inputs: {e}"))?;
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let _ = catch_unwind(AssertUnwindSafe(|| op.run_cpu(&refs))).map_err(|p| {
        format!(
            "run_cpu of an invalid descriptor panicked: {}",
            panic_text(p)
        )
    })?;
    let _ = catch_unwind(AssertUnwindSafe(|| op.gpu_plan())).map_err(|p| {
        format!(
            "gpu_plan of an invalid descriptor panicked: {}",
            panic_text(p)
        )
    })?;
    Ok(())
}
