//! The `fold` family: each output element folds its reduced sub-tensor with
//! arithmetic the spec declares (ReduceSum, ReduceMean, ReduceL2, ...).
//!
//! A fold is TVM's `comm_reducer` with a map and a finish, all
//! [`Scalar`](crate::scalar::Scalar) expressions from the spec:
//!
//! ```text
//! acc = identity
//! for x in sub-tensor:  acc = combine(acc, map(x))     (a = acc, b = map(x))
//! output = finish(acc)                                  (n = elements folded)
//! ```
//!
//! `combine` must be associative and commutative up to rounding: the GPU
//! folds chunks of a sub-tensor separately and combines their partial
//! results, the CPU backend folds in row-major order. Both accumulate
//! FLOAT16 and FLOAT32 in `f32` (FLOAT64 in `f64`; [`crate::scalar`]), so
//! a sum whose `f32` partial sums overflow is infinity on both. The
//! spec's accuracy contract ([`Fold::accuracy`]) bounds each backend's
//! distance from the yardstick, the same fold in `f64` rounded once
//! ([`Precision::Yardstick`]); [`crate::accuracy::contract_matches`] says
//! what is checked where it cannot hold. An empty sub-tensor gives
//! `finish(identity)` with `n = 0`.
//!
//! # Shifted folds
//!
//! A fold may declare a shift ([`Fold::shift`]; `shift: max` in a spec):
//! each output's `m` is found first, by the fold [`SHIFT_MAX`] over the
//! same sub-tensor, and `map` and `finish` read it as the variable `m`
//! ([`Var::M`]). Log-sum-exp is `map: exp(x - m)`, `finish: log(acc) + m`:
//! every mapped value is at most 1 and the sum at least 1, so no `exp`
//! overflows and `log` is finite wherever the answer is.
//! The maximum propagates NaN, and `m` is 0 where the maximum is not
//! finite (NaN, an infinity, or the -infinity of an empty sub-tensor), so
//! that such an output is what the unshifted fold gives: -infinity when
//! every value is -infinity or there are none, +infinity with a +infinity
//! among the values, NaN with a NaN.
//!
//! # GPU plan
//!
//! Two kernels per data type ([`FoldVariant`]): `fold_input` folds chunks of
//! the input (one thread per output and chunk), `fold_partials` folds chunks
//! of partial results. A sub-tensor of at most one chunk is one
//! `fold_input` pass that writes the output; longer ones write partials to
//! scratch and `fold_partials` passes combine them, each thread folding at
//! most [`FoldStrategy::cap`] values, until one per output remains and is
//! finished into the output.
//!
//! A shifted fold runs the same passes twice with one strategy: first
//! `shift_input` and `shift_partials` over the shift's fold, whose final
//! pass writes each output's `m` to a scratch buffer of one partial per
//! output, then `fold_input` and `fold_partials`, which bind that buffer
//! as a fifth binding (four storage buffers in all, within core WebGPU's
//! eight) and read output `o`'s `m`.

//!
//! A spec states a fold as `compute fold { input, output, axes, identity,
//! map, combine, [finish], accuracy, [domain], [shift] }`: the arithmetic
//! roles are [`Instruction`](super::Instruction)s of the folded tensor's
//! data type `T`, the accuracy an INT64 expression of `n`.

mod runtime;
pub mod wgsl;

pub use runtime::*;

use super::{Call, Constraint, Family, KernelDecl, Missing, Param, Value};
use crate::scalar::{Precision, Var};
use crate::{DataType, DeviceClass, GpuPlan, HostTensor, KernelText, OpError, Tolerance};
use wgsl::FoldText;

const INPUT: usize = 0;
const OUTPUT: usize = 1;
const AXES: usize = 2;
const IDENTITY: usize = 3;
const MAP: usize = 4;
const COMBINE: usize = 5;
const FINISH: usize = 6;
const ACCURACY: usize = 7;
const DOMAIN: usize = 8;
const SHIFT: usize = 9;

/// What `T` is in a fold's arithmetic.
const T: (usize, &str) = (INPUT, "the folded tensor's data type");

/// The family, as [`super::FAMILIES`] registers it: the kernels of
/// [`FoldVariant`], keyed `{operator}/{variant}/{T}`.
pub struct FoldFamily;

/// The fold `config` declares.
fn fold_of(config: &[Value]) -> Fold {
    let role = |p: usize| config[p].instruction().map_or(&ZERO, |i| i.value);
    Fold {
        identity: role(IDENTITY),
        map: role(MAP),
        combine: role(COMBINE),
        finish: role(FINISH),
        accuracy: match config[ACCURACY] {
            Value::Bound(b) => b.map(|b| b.value),
            _ => None,
        },
        domain: match config[DOMAIN] {
            Value::Domain(lo, hi) => Some((lo, hi)),
            _ => None,
        },
        shift: config[SHIFT].word().map(|_| Shift::Max),
    }
}

/// What an absent role would read: never, every role is required or has
/// a default.
static ZERO: crate::scalar::Scalar = crate::scalar::Scalar::Int(0, crate::scalar::Ty::T);

/// The spec's text of each role, for the kernels' comments.
fn text_of(config: &[Value]) -> FoldText {
    let text = |p: usize| config[p].instruction().map_or("", |i| i.text).to_string();
    FoldText {
        identity: text(IDENTITY),
        map: text(MAP),
        combine: text(COMBINE),
        finish: text(FINISH),
    }
}

/// The variant named `name`.
fn variant_of(name: &str) -> FoldVariant {
    FoldVariant::ALL
        .into_iter()
        .find(|v| v.name() == name)
        .unwrap_or(FoldVariant::Input)
}

/// The call's axes, each a valid `u32`.
fn axes(call: &Call<'_>) -> Result<Vec<u32>, OpError> {
    super::reduce::axes(call, AXES)
}

/// The plans of a call: `plan` given the call's [`FoldCall`] and its
/// kernels.
fn with_call<R>(
    call: &Call<'_>,
    plan: impl FnOnce(&FoldCall<'_>, &dyn Fn(FoldVariant) -> Option<&'static crate::Kernel>) -> R,
) -> Result<R, OpError> {
    let axes = axes(call)?;
    let attrs = call.env.scalar_attrs();
    let fold = fold_of(call.config);
    let input = call.desc(INPUT);
    let dt = input.dtype;
    let fc = FoldCall {
        input,
        input_slot: call.input(INPUT),
        axes: &axes,
        output: call.desc(OUTPUT),
        output_slot: call.output(OUTPUT),
        attrs: &attrs,
        loops: FoldLoops::of(&fold, dt),
        shift: fold.shift,
    };
    Ok(plan(&fc, &|v| call.kernel(v.name(), &[dt, dt])))
}

impl Family for FoldFamily {
    fn name(&self) -> &'static str {
        "fold"
    }

    fn params(&self) -> &'static [Param] {
        const M: (Var, Option<usize>) = (Var::M, Some(SHIFT));
        const PARAMS: &[Param] = &[
            Param::input("input"),
            Param::output("output"),
            Param::list("axes"),
            Param::instruction("identity", T, &[], Missing::Required),
            Param::instruction("map", T, &[(Var::X, None), M], Missing::Required),
            Param::instruction(
                "combine",
                T,
                &[(Var::A, None), (Var::B, None)],
                Missing::Required,
            ),
            Param::instruction(
                "finish",
                T,
                &[(Var::Acc, None), (Var::N, None), M],
                Missing::Var(Var::Acc),
            ),
            Param::accuracy_of("accuracy", Var::N),
            Param::optional_domain("domain"),
            Param::optional_word("shift", &["max"]),
        ];
        PARAMS
    }

    fn constraints(&self, _config: &[Value]) -> &'static [Constraint] {
        &[
            Constraint::SameTypes(INPUT, OUTPUT, "folds the elements of"),
            Constraint::Computes(INPUT, "folded"),
        ]
    }

    fn unsupported(&self, config: &[Value], dtype: DataType) -> Option<String> {
        wgsl::fold_unsupported(&fold_of(config), dtype)
    }

    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl> {
        let fold = fold_of(config);
        let variants: Vec<super::Variant> = FoldVariant::of(&fold)
            .iter()
            .map(|v| (v.name(), v.bindings(&fold)))
            .collect();
        let (input, output) = (config[INPUT].tensor(), config[OUTPUT].tensor());
        KernelDecl::for_pairs(
            pairs(input, output),
            |a, b| a == b && wgsl::fold_unsupported(&fold, a).is_none(),
            &variants,
            WORKGROUP_SIZE,
        )
    }

    fn one_type(&self) -> bool {
        true
    }

    fn kernel_text(&self, config: &[Value], k: &KernelDecl, key: &str, origin: &str) -> KernelText {
        let (fold, text) = (fold_of(config), text_of(config));
        wgsl::fold_kernel_text(&fold, variant_of(k.variant), k.types[0], key, origin, &text)
    }

    fn tolerance(&self, call: &Call<'_>) -> Tolerance {
        // Axes the call would reject (a tolerance is asked for before the
        // call is checked) fold nothing.
        match call.list(AXES) {
            Ok(list) => {
                let axes: Vec<u32> = list
                    .into_iter()
                    .filter_map(|a| u32::try_from(a).ok())
                    .collect();
                fold_tolerance(&fold_of(call.config), call.desc(INPUT), &axes)
            }
            Err(_) => Tolerance::Exact,
        }
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        let axes = axes(call)?;
        let input = call.host(inputs, INPUT)?;
        let attrs = call.env.scalar_attrs();
        let fold = fold_of(call.config);
        fold_cpu(&fold, input, &axes, call.desc(OUTPUT), &attrs, precision).map(|out| vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, class: DeviceClass) -> Result<GpuPlan, OpError> {
        with_call(call, |fc, kernel| fold_plan(fc, class, kernel))?
    }

    fn gpu_plan_variants(&self, call: &Call<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
        with_call(call, fold_plans)?
    }

    fn docs(&self, config: &[Value]) -> Vec<String> {
        let fold = fold_of(config);
        let text = text_of(config);
        let mut docs = vec![
            String::new(),
            "Computed as a fold (`ops_core::family::fold`):".into(),
        ];
        if let Some(s) = fold.shift {
            docs.push(format!(
                "- shift `m`: the `{}` of the output's elements, 0 where it is not finite, found first",
                s.name()
            ));
        }
        docs.push(format!("- identity `{}`", text.identity));
        docs.push(format!("- map `x` to `{}`", text.map));
        docs.push(format!("- combine `a`, `b` as `{}`", text.combine));
        docs.push(format!(
            "- finish `acc` (and `n`, the count) as `{}`",
            text.finish
        ));
        let accuracy = match config[ACCURACY] {
            Value::Bound(Some(b)) => b.text,
            _ => "exact",
        };
        docs.push(format!("- accuracy: `{accuracy}`"));
        if let Some((lo, hi)) = fold.domain {
            docs.push(format!("  for inputs in `[{lo}, {hi})`"));
        }
        docs
    }
}
