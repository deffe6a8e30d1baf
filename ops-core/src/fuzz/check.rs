//! The properties every operator is fuzzed against.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::invalid::InvalidCase;
use super::valid::{describe_tensor, ValidCase};
use crate::{DataType, Element, FeatureLevel, GpuPlan, HostTensor, OpError, Operator, Tolerance};

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
    compare_by(got, want, None, tol)
}

/// Compares another backend's outputs `got` with the CPU backend's
/// `answer` under the accuracy contract `tol`, stated against the
/// `yardstick` ([`crate::Operator::run_yardstick`]): each element as
/// [`crate::accuracy::contract_matches`] says. The first element that
/// does not meet it, if any, with its ULP distance from the answer and
/// the yardstick's bits.
pub fn compare_contract(
    got: &[HostTensor],
    answer: &[HostTensor],
    yardstick: &[HostTensor],
    tol: crate::Tolerance,
) -> Result<(), String> {
    if yardstick.len() != answer.len()
        || yardstick
            .iter()
            .zip(answer)
            .any(|(y, a)| y.desc() != a.desc())
    {
        return Err(
            "the yardstick's outputs differ from the answer's in number or description".into(),
        );
    }
    compare_by(got, answer, Some(yardstick), tol)
}

fn compare_by(
    got: &[HostTensor],
    want: &[HostTensor],
    yardstick: Option<&[HostTensor]>,
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
        let mismatch = match yardstick {
            Some(y) => crate::accuracy::first_contract_mismatch(&y[k], w, g, tol),
            None => crate::accuracy::first_disagreement(w, g, tol),
        };
        if let Some((i, count)) = mismatch {
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
            let against = match yardstick {
                Some(y) => format!(
                    ", the yardstick {:02x?}",
                    &y[k].bytes()[i * width..(i + 1) * width]
                ),
                None => String::new(),
            };
            return Err(format!(
                "output {k} element {i} (coordinates {coords:?}) is {:02x?}, expected {:02x?}{ulps}{against} ({tol}; {count} of {} elements differ)",
                &g.bytes()[i * width..(i + 1) * width],
                &w.bytes()[i * width..(i + 1) * width],
                w.len()
            ));
        }
    }
    Ok(())
}

/// The float class of an element given by its bits: NaN, `+inf`, `-inf`,
/// or finite (with its value).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    Nan,
    PosInf,
    NegInf,
    Finite(f64),
}

/// (mantissa bits, lowest normal exponent) of a float type.
fn float_format(dtype: DataType) -> (i32, i32) {
    match dtype {
        DataType::Float64 => (52, -1022),
        DataType::Float32 => (23, -126),
        _ => (10, -14),
    }
}

/// The value of element `i` of a float tensor, as its class.
fn class_of(t: &HostTensor, i: usize) -> Class {
    let v = crate::with_element_type!(t.dtype(), T => {
        let v: T = t.get(i);
        v.to_f64()
    });
    match v {
        _ if v.is_nan() => Class::Nan,
        f64::INFINITY => Class::PosInf,
        f64::NEG_INFINITY => Class::NegInf,
        _ => Class::Finite(v),
    }
}

/// `2^k` as an `f64` (`k` in `-1074..=1023`).
fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// One ULP of `dtype` at the magnitude `s`: the spacing of its values
/// between `s` and the next power of two (the subnormal spacing below the
/// normal range; the spacing at the largest finite value above it).
fn ulp_at(dtype: DataType, s: f64) -> f64 {
    let (mantissa, min_exp) = float_format(dtype);
    let max_exp = -min_exp + 1;
    let s = s.abs();
    let e = if s < pow2(min_exp) {
        min_exp
    } else {
        (((s.to_bits() >> 52) & 0x7ff) as i32 - 1023).min(max_exp)
    };
    pow2(e - mantissa)
}

/// The largest finite value of a float type.
fn max_finite(dtype: DataType) -> f64 {
    match dtype {
        DataType::Float64 => f64::MAX,
        DataType::Float32 => f64::from(f32::MAX),
        _ => 65504.0,
    }
}

/// The CPU reference's outputs for `case` with every float data input's
/// sign bit cleared (index and host-read tensors unchanged): the
/// magnitudes a hostile case's results are measured at
/// ([`compare_hostile`]). `None` when that run fails.
pub fn magnitudes(case: &ValidCase) -> Option<Vec<HostTensor>> {
    let op = case.op.as_ref();
    let bounds = op.index_bounds();
    let inputs: Vec<&crate::TensorInfo> = case.info.tensors.iter().filter(|t| !t.output).collect();
    let abs: Vec<HostTensor> = case
        .inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let data =
                !inputs.get(i).is_some_and(|t| t.host) && !bounds.iter().any(|b| b.tensor == i);
            if !data || !t.dtype().is_float() {
                return t.clone();
            }
            let width = t.dtype().size_bytes();
            let mut bytes = t.bytes().to_vec();
            for chunk in bytes.chunks_mut(width) {
                chunk[width - 1] &= 0x7f;
            }
            HostTensor::from_bytes(t.desc().clone(), bytes).expect("the same description")
        })
        .collect();
    let refs: Vec<&HostTensor> = abs.iter().collect();
    catch_unwind(AssertUnwindSafe(|| op.run_cpu(&refs)))
        .ok()?
        .ok()
}

/// Compares `got` with the CPU reference's `want` for a hostile case
/// ([`ValidCase::hostile`]; see "Hostile values" in the module docs).
/// Under [`Tolerance::Exact`] (and every contract other than a ULP bound)
/// as [`compare_within`]. Under [`Tolerance::Ulp`]`(n)`, each float
/// element:
///
/// - is non-finite exactly where `want` is (NaN where NaN, an infinity
///   where the same infinity), except that a finite value within `n` ULP of
///   the largest finite one may meet the infinity of its sign;
/// - where both are finite, differs from `want` by at most `n` ULP of the
///   output type at `s`, the larger of `|want|` and the same element of
///   `magnitudes` (the reference on the inputs' magnitudes,
///   [`magnitudes`]; `|want|` alone when that is `None`), and is not
///   compared where that element is not finite.
///
/// Integer elements compare exactly. The first difference, if any.
pub fn compare_hostile(
    got: &[HostTensor],
    want: &[HostTensor],
    magnitudes: Option<&[HostTensor]>,
    tol: Tolerance,
) -> Result<(), String> {
    let Tolerance::Ulp(n) = tol else {
        return compare_within(got, want, tol);
    };
    same_descs(got, want)?;
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let dtype = w.dtype();
        let m = magnitudes
            .and_then(|m| m.get(k))
            .filter(|m| m.desc() == w.desc());
        let matches = |i: usize| -> bool {
            if !dtype.is_float() {
                return g.bytes()[i * dtype.size_bytes()..(i + 1) * dtype.size_bytes()]
                    == w.bytes()[i * dtype.size_bytes()..(i + 1) * dtype.size_bytes()];
            }
            let top = max_finite(dtype);
            let near_overflow = |v: f64| top - v.abs() <= n as f64 * ulp_at(dtype, top);
            match (class_of(w, i), class_of(g, i)) {
                (Class::Finite(wv), Class::Finite(gv)) => {
                    let scale = match m.map(|m| class_of(m, i)) {
                        None => wv.abs(),
                        Some(Class::Finite(mv)) => wv.abs().max(mv.abs()),
                        // Intermediate values near overflow: no bound.
                        Some(_) => return true,
                    };
                    (gv - wv).abs() <= n as f64 * ulp_at(dtype, scale)
                }
                (Class::Finite(v), Class::PosInf) | (Class::PosInf, Class::Finite(v)) => {
                    v > 0.0 && near_overflow(v)
                }
                (Class::Finite(v), Class::NegInf) | (Class::NegInf, Class::Finite(v)) => {
                    v < 0.0 && near_overflow(v)
                }
                (a, b) => a == b,
            }
        };
        let mut first = None;
        let mut count = 0;
        for i in 0..w.len() {
            if !matches(i) {
                first.get_or_insert(i);
                count += 1;
            }
        }
        if let Some(i) = first {
            return Err(format!(
                "output {k} element {i}{} (hostile values: non-finite where the CPU is, finite within {n} ULP at the magnitudes' scale; {count} of {} elements differ)",
                element_text(g, w, i),
                w.len()
            ));
        }
    }
    Ok(())
}

/// ` (coordinates [..]) is <bits>, expected <bits>` for element `i`.
fn element_text(got: &HostTensor, want: &HostTensor, i: usize) -> String {
    let width = want.dtype().size_bytes();
    let strides = crate::row_major_strides(want.sizes());
    let coords: Vec<u64> = strides
        .iter()
        .zip(want.sizes())
        .map(|(&s, &n)| (i as u64 / s.max(1)) % u64::from(n).max(1))
        .collect();
    format!(
        " (coordinates {coords:?}) is {:02x?}, expected {:02x?}",
        &got.bytes()[i * width..(i + 1) * width],
        &want.bytes()[i * width..(i + 1) * width],
    )
}

/// The same number of outputs, each of the same description.
fn same_descs(got: &[HostTensor], want: &[HostTensor]) -> Result<(), String> {
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
        let yardstick = yardstick(op, &inputs, &cpu)?;
        let gpu = catch_unwind(AssertUnwindSafe(|| run(op, &inputs)))
            .map_err(|p| format!("the GPU run panicked: {}", panic_text(p)))?;
        agree(
            case,
            &cpu,
            yardstick.as_deref(),
            &gpu,
            &hostile_magnitudes(case, &cpu),
        )?;
    }
    Ok(match cpu {
        Ok(o) => Outcome::Outputs(o),
        Err(e) => Outcome::Error(e),
    })
}

/// The yardstick of an operator with a ULP contract whose CPU run
/// succeeded ([`Operator::run_yardstick`]), `None` otherwise (an exact
/// operator's yardstick is its answer).
fn yardstick(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    cpu: &Result<Vec<HostTensor>, OpError>,
) -> Result<Option<Vec<HostTensor>>, String> {
    if cpu.is_err() || op.tolerance() == crate::Tolerance::Exact {
        return Ok(None);
    }
    catch_unwind(AssertUnwindSafe(|| op.run_yardstick(inputs)))
        .map_err(|p| format!("the CPU yardstick panicked: {}", panic_text(p)))?
        .map(Some)
        .map_err(|e| format!("the CPU yardstick fails where the CPU backend does not: {e}"))
}

/// For a hostile case under a ULP contract whose CPU run gave outputs,
/// [`magnitudes`]; otherwise `None`.
fn hostile_magnitudes(
    case: &ValidCase,
    cpu: &Result<Vec<HostTensor>, OpError>,
) -> Option<Vec<HostTensor>> {
    let ulp = matches!(case.op.tolerance(), Tolerance::Ulp(_));
    (case.hostile && ulp && cpu.is_ok())
        .then(|| magnitudes(case))
        .flatten()
}

/// The GPU's result `gpu` against the CPU backend's `cpu`: the same
/// outputs under the operator's accuracy contract ([`Operator::tolerance`]
/// against `yardstick`, [`compare_contract`]; bit for bit for exact
/// operators, `yardstick` `None`), for a hostile case as
/// [`compare_hostile`] says (with `mags`, [`hostile_magnitudes`]), or the
/// same error.
fn agree(
    case: &ValidCase,
    cpu: &Result<Vec<HostTensor>, OpError>,
    yardstick: Option<&[HostTensor]>,
    gpu: &Result<Vec<HostTensor>, OpError>,
    mags: &Option<Vec<HostTensor>>,
) -> Result<(), String> {
    let tol = case.op.tolerance();
    match (cpu, gpu) {
        (Ok(c), Ok(g)) if case.hostile => {
            compare_hostile(g, c, mags.as_deref(), tol).map_err(|e| format!("GPU != CPU: {e}"))
        }
        (Ok(c), Ok(g)) => match yardstick {
            Some(y) => compare_contract(g, c, y, tol),
            None => compare_within(g, c, tol),
        }
        .map_err(|e| format!("GPU != CPU: {e}")),
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
            agree(case, &cpu, None, &Err(e), &None)
                .map_err(|m| format!("the plan variants: {m}"))?;
            return Ok(0);
        }
    };
    let yardstick = yardstick(op, &inputs, &cpu)?;
    let mags = hostile_magnitudes(case, &cpu);
    for (name, plan) in &plans {
        let gpu = catch_unwind(AssertUnwindSafe(|| run_plan(op, &inputs, plan)))
            .map_err(|p| format!("variant `{name}`: the GPU run panicked: {}", panic_text(p)))?;
        agree(case, &cpu, yardstick.as_deref(), &gpu, &mags)
            .map_err(|m| format!("variant `{name}`: {m}"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<HostTensor> {
        vec![HostTensor::from_slice([v.len() as u32], v).unwrap()]
    }

    #[test]
    fn hostile_comparisons_need_the_same_non_finite_results() {
        let want = f32s(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0]);
        let ulp = Tolerance::Ulp(4);
        assert_eq!(compare_hostile(&want, &want, None, ulp), Ok(()));
        // Any NaN matches any NaN.
        let payload = f32s(&[
            -f32::from_bits(0x7FC0_0123),
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.0,
        ]);
        assert_eq!(compare_hostile(&payload, &want, None, ulp), Ok(()));
        for broken in [
            [f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, 1.0],
            [f32::NAN, f32::NEG_INFINITY, f32::NEG_INFINITY, 1.0],
            [f32::NAN, f32::INFINITY, -1.0, 1.0],
            [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::NAN],
        ] {
            let e = compare_hostile(&f32s(&broken), &want, None, ulp).unwrap_err();
            assert!(e.contains("1 of 4 elements differ"), "{e}");
        }
        // Exact contracts compare as ever: NaN against +inf fails there too.
        let got = f32s(&[f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, 1.0]);
        assert!(compare_hostile(&got, &want, None, Tolerance::Exact).is_err());
    }

    #[test]
    fn hostile_finite_results_are_held_to_the_bound_at_the_magnitudes_scale() {
        let ulp = Tolerance::Ulp(2);
        let next = |v: f32, k: u32| f32::from_bits(v.to_bits() + k);
        let want = f32s(&[1.0, 3.0e38]);
        assert_eq!(
            compare_hostile(&f32s(&[next(1.0, 2), 3.0e38]), &want, None, ulp),
            Ok(())
        );
        let e = compare_hostile(&f32s(&[next(1.0, 3), 3.0e38]), &want, None, ulp).unwrap_err();
        assert!(e.contains("element 0"), "{e}");
        // 2^100 + 1 - 2^100 in f32 is 0: wrong by the 1, which is far below
        // one ULP of the magnitudes' sum, 2^101.
        let mags = f32s(&[2f32.powi(101), 3.0e38]);
        let lost = f32s(&[0.0, 3.0e38]);
        assert_eq!(compare_hostile(&lost, &want, Some(&mags), ulp), Ok(()));
        let off = f32s(&[2f32.powi(80), 3.0e38]);
        assert!(compare_hostile(&off, &want, Some(&mags), ulp).is_err());
        // Magnitudes that overflow: the finite pair is not compared.
        let mags = f32s(&[f32::INFINITY, 3.0e38]);
        assert_eq!(compare_hostile(&off, &want, Some(&mags), ulp), Ok(()));
        // Within the bound of the largest finite value, an infinity of the
        // same sign matches; elsewhere not.
        let top = f32s(&[1.0, f32::MAX]);
        assert_eq!(
            compare_hostile(&f32s(&[1.0, f32::INFINITY]), &top, None, ulp),
            Ok(())
        );
        assert!(compare_hostile(&f32s(&[1.0, f32::NEG_INFINITY]), &top, None, ulp).is_err());
        assert!(compare_hostile(&f32s(&[1.0, f32::INFINITY]), &want, None, ulp).is_err());
    }

    #[test]
    fn ulps_at_a_scale() {
        assert_eq!(ulp_at(DataType::Float32, 1.0), f64::from(f32::EPSILON));
        assert_eq!(ulp_at(DataType::Float32, 1.5), f64::from(f32::EPSILON));
        assert_eq!(ulp_at(DataType::Float32, 0.0), pow2(-149));
        assert_eq!(ulp_at(DataType::Float32, 1e300), pow2(127 - 23));
        assert_eq!(ulp_at(DataType::Float16, 1.0), pow2(-10));
        assert_eq!(ulp_at(DataType::Float64, 0.0), pow2(-1074));
        assert_eq!(ulp_at(DataType::Float64, 2.0), 2.0 * f64::EPSILON);
    }
}
