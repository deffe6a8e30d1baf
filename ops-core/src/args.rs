//! Helpers generated builders use: attribute conversion and output inference.

use crate::expr::{Env, Step};
use crate::support::SupportTable;
use crate::{AttrValue, DataType, Element, OpError, TensorDesc};

/// `attr` as an integer of type `T`.
pub fn attr_int<T: TryFrom<i128>>(op: &str, name: &str, v: &AttrValue) -> Result<T, OpError> {
    match v {
        AttrValue::Int(i) => T::try_from(*i).map_err(|_| {
            bad(
                op,
                name,
                &format!("{i} is out of range for {}", std::any::type_name::<T>()),
            )
        }),
        other => Err(bad(
            op,
            name,
            &format!("expected an integer, got {other:?}"),
        )),
    }
}

/// `attr` as a list of integers of type `T`.
pub fn attr_list<T: TryFrom<i128>>(op: &str, name: &str, v: &AttrValue) -> Result<Vec<T>, OpError> {
    match v {
        AttrValue::Ints(l) => l
            .iter()
            .map(|i| {
                T::try_from(*i).map_err(|_| {
                    bad(
                        op,
                        name,
                        &format!("{i} is out of range for {}", std::any::type_name::<T>()),
                    )
                })
            })
            .collect(),
        AttrValue::Int(i) => {
            Ok(vec![T::try_from(*i).map_err(|_| {
                bad(op, name, &format!("{i} is out of range"))
            })?])
        }
        other => Err(bad(
            op,
            name,
            &format!("expected a list of integers, got {other:?}"),
        )),
    }
}

/// `attr` as a boolean.
pub fn attr_bool(op: &str, name: &str, v: &AttrValue) -> Result<bool, OpError> {
    match v {
        AttrValue::Bool(b) => Ok(*b),
        AttrValue::Int(0) => Ok(false),
        AttrValue::Int(1) => Ok(true),
        other => Err(bad(op, name, &format!("expected a boolean, got {other:?}"))),
    }
}

/// `attr` as a float (an integer converts).
pub fn attr_float(op: &str, name: &str, v: &AttrValue) -> Result<f64, OpError> {
    match v {
        AttrValue::Float(f) => Ok(*f),
        AttrValue::Int(i) => Ok(*i as f64),
        other => Err(bad(op, name, &format!("expected a number, got {other:?}"))),
    }
}

/// `attr` as a [`crate::scalar::Number`]: an integer exactly, or a float.
pub fn attr_number(op: &str, name: &str, v: &AttrValue) -> Result<crate::scalar::Number, OpError> {
    match v {
        AttrValue::Int(i) => Ok(crate::scalar::Number::Int(*i)),
        AttrValue::Float(f) => Ok(crate::scalar::Number::Float(*f)),
        other => Err(bad(op, name, &format!("expected a number, got {other:?}"))),
    }
}

/// `attr` as an enum member name.
pub fn attr_enum<'a>(
    op: &str,
    name: &str,
    v: &'a AttrValue,
    members: &[&str],
) -> Result<&'a str, OpError> {
    match v {
        AttrValue::Enum(s) if members.iter().any(|m| m.eq_ignore_ascii_case(s)) => Ok(s),
        other => Err(bad(
            op,
            name,
            &format!("expected one of {}, got {other:?}", members.join(", ")),
        )),
    }
}

/// A required builder field that was not given.
pub fn missing(op: &str, name: &str) -> OpError {
    OpError::InvalidArgument(format!("{op}: `{name}` is required"))
}

/// A `given` output (its sizes are the caller's: nothing infers them) that
/// was not given.
pub fn missing_given(op: &str, name: &str) -> OpError {
    OpError::InvalidArgument(format!(
        "{op}: `{name}` is required: the caller describes its sizes"
    ))
}

fn bad(op: &str, name: &str, what: &str) -> OpError {
    OpError::InvalidArgument(format!("{op}: attribute `{name}`: {what}"))
}

/// Integer values of a host tensor, as the rules' `values(t)` reads them:
/// floating-point values truncated toward zero as `cast<INT64>` does (NaN
/// is 0, values beyond `i64` saturate; ONNX OneHot's `depth` "will be
/// casted to int64 before use").
pub fn host_values(t: &crate::HostTensor) -> Option<Vec<i128>> {
    if t.dtype().is_float() {
        let cast = |x: f64| {
            if x.is_nan() {
                0
            } else {
                x.trunc() as i64 as i128
            }
        };
        return match t.dtype() {
            crate::DataType::Float64 => {
                t.to_vec::<f64>().map(|v| v.into_iter().map(cast).collect())
            }
            crate::DataType::Float32 => t
                .to_vec::<f32>()
                .map(|v| v.into_iter().map(|x| cast(f64::from(x))).collect()),
            _ => t
                .to_vec::<crate::f16>()
                .map(|v| v.into_iter().map(|x| cast(f64::from(x))).collect()),
        };
    }
    let width = t.dtype().size_bytes();
    crate::with_element_type!(t.dtype(), T => t
        .bytes()
        .chunks_exact(width)
        .map(|b| T::read_le(b).to_i128())
        .collect())
}

/// An inferred output: its tensor index, sizes and (if a `dtype` step gives it) data type.
pub type InferredOutput = (usize, Vec<u32>, Option<DataType>);

/// Infers the outputs listed in `missing` from the spec's `let`, `shape`
/// and `dtype` steps (`require` steps are left to `validate`).
///
/// `tensors[i]` of a missing output is a placeholder; the first `inputs`
/// tensors are the inputs. Returns, per missing output, its sizes and (when
/// a `dtype` step gives it) its data type, and whether every step could be
/// evaluated. Nothing is inferred when an input's dimension count exceeds
/// any `table` admits ([`SupportTable::check_input_ranks`]: the rules
/// iterate over dimensions; `validate` refuses the rank).
#[allow(clippy::too_many_arguments)]
pub fn infer_outputs(
    operator: &'static str,
    steps: &[Step],
    slots: usize,
    tensors: &[&TensorDesc],
    names: &[&'static str],
    host: &[Option<Vec<i128>>],
    attrs: &[crate::expr::Value],
    missing: &[usize],
    table: &SupportTable,
    inputs: usize,
) -> (Vec<InferredOutput>, bool) {
    let mut out: Vec<InferredOutput> = missing.iter().map(|&m| (m, Vec::new(), None)).collect();
    if table
        .check_input_ranks(None, None, tensors, inputs)
        .is_err()
    {
        return (out, false);
    }
    let mut env = Env::new(tensors, names, host, attrs, slots);
    // A step that cannot be evaluated ends inference quietly: the descriptor
    // breaks a rule, and `validate` names it (the rules run in spec order,
    // so the broken guard is reported rather than this consequence).
    let mut complete = false;
    'steps: {
        for step in steps {
            match step {
                Step::Require { .. } => {}
                Step::Let { var, value } => {
                    if env.bind(*var, value).is_err() {
                        break 'steps;
                    }
                }
                Step::Shape { tensor, sizes, .. } => {
                    if let Some(slot) = out.iter_mut().find(|o| o.0 == *tensor) {
                        let Ok(l) = env.list(sizes) else { break 'steps };
                        match l
                            .iter()
                            .map(|&s| u32::try_from(s))
                            .collect::<Result<Vec<u32>, _>>()
                        {
                            Ok(sizes) => slot.1 = sizes,
                            Err(_) => break 'steps,
                        }
                    }
                }
                Step::DType { tensor, dtype, .. } => {
                    if let Some(slot) = out.iter_mut().find(|o| o.0 == *tensor) {
                        let Ok(t) = env.dtype(dtype) else {
                            break 'steps;
                        };
                        slot.2 = Some(t);
                    }
                }
            }
        }
        complete = true;
    }
    let _ = operator;
    (out, complete)
}
