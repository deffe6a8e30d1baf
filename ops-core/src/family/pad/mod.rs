//! The `pad` family: each output element is the input element at its
//! coordinates shifted back by the padding before each dimension, or, where
//! that falls outside the input, what the mode says (ONNX Pad, DirectML
//! PADDING1). A spec states it as
//!
//! ```text
//! compute pad { input: X  output: Y  begins: <list>  mode: constant|edge|reflect|symmetric|wrap
//!               [constant: <host tensor or scalar attribute>] }
//! ```
//!
//! (negative `begins` crop). The run-time half is [`pad_cpu`] and
//! [`pad_plan`]; the kernels, one per data type and mode, are [`wgsl`]'s.

mod runtime;
pub mod wgsl;

pub use runtime::*;

use super::{Call, Constraint, Family, KernelDecl, Param, Value};
use crate::scalar::Precision;
use crate::{DataType, DeviceClass, GpuPlan, HostTensor, KernelText, OpError};

const INPUT: usize = 0;
const OUTPUT: usize = 1;
const BEGINS: usize = 2;
const MODE: usize = 3;
const CONSTANT: usize = 4;

/// The modes' names, in the order of [`PadMode::ALL`].
const MODES: &[&str] = &["constant", "edge", "reflect", "symmetric", "wrap"];

/// The kernel variant of each mode (the middle of its key).
const VARIANTS: [&str; 5] = [
    "pad_constant",
    "pad_edge",
    "pad_reflect",
    "pad_symmetric",
    "pad_wrap",
];

/// The parameters of `compute pad`, in order.
const PARAMS: &[Param] = &[
    Param::input("input"),
    Param::output("output"),
    Param::list("begins"),
    Param::word("mode", MODES),
    Param::optional_value("constant"),
];

/// The family, as [`super::FAMILIES`] registers it.
pub struct Pad;

/// The block's mode.
fn mode_of(config: &[Value]) -> PadMode {
    match config[MODE] {
        Value::Word(w) => PadMode::ALL[(w as usize).min(PadMode::ALL.len() - 1)],
        _ => PadMode::Constant,
    }
}

/// The call's padding before each dimension.
fn begins(call: &Call<'_>) -> Result<Vec<i64>, OpError> {
    call.list(BEGINS)?
        .into_iter()
        .map(|x| {
            i64::try_from(x).map_err(|_| {
                OpError::InvalidArgument(format!(
                    "{}: a padding of {x} does not fit i64",
                    call.env.op_name()
                ))
            })
        })
        .collect()
}

impl Family for Pad {
    fn name(&self) -> &'static str {
        "pad"
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn constraints(&self, _config: &[Value]) -> &'static [Constraint] {
        &[
            Constraint::SameTypes(INPUT, OUTPUT, "moves the elements of"),
            Constraint::Host(CONSTANT, "gives the pad's constant"),
        ]
    }

    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl> {
        let mode = mode_of(config);
        let variant = VARIANTS[PadMode::ALL.iter().position(|&m| m == mode).unwrap_or(0)];
        let pairs = pairs(config[INPUT].tensor(), config[OUTPUT].tensor());
        KernelDecl::for_pairs(pairs, |a, b| a == b, &[(variant, BINDINGS)], WORKGROUP_SIZE)
    }

    /// `{operator}/pad_{mode}/{DATA}`.
    fn one_type(&self) -> bool {
        true
    }

    fn kernel_text(&self, config: &[Value], k: &KernelDecl, key: &str, origin: &str) -> KernelText {
        wgsl::pad_kernel_text(mode_of(config), k.types[0], key, origin)
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        let constant = match call.config[CONSTANT] {
            Value::Tensor(k) => PadConstant::Element(inputs.get(k).copied()),
            Value::Attr(i) => PadConstant::Value(call.env.scalar_attr(i)),
            _ => PadConstant::Element(None),
        };
        let input = call.host(inputs, INPUT)?;
        let out = pad_cpu(
            mode_of(call.config),
            input,
            call.desc(OUTPUT),
            &begins(call)?,
            constant,
        )?;
        Ok(vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, _class: DeviceClass) -> Result<GpuPlan, OpError> {
        let constant = match call.config[CONSTANT] {
            Value::Tensor(k) => PadConstant::Element(call.env.host(k)),
            Value::Attr(i) => PadConstant::Value(call.env.scalar_attr(i)),
            _ => PadConstant::Element(None),
        };
        let (input, mode) = (call.desc(INPUT), mode_of(call.config));
        let variant = VARIANTS[PadMode::ALL.iter().position(|&m| m == mode).unwrap_or(0)];
        pad_plan(
            mode,
            input,
            call.input(INPUT),
            call.desc(OUTPUT),
            call.output(OUTPUT),
            &begins(call)?,
            constant,
            call.kernel(variant, &[input.dtype, input.dtype]),
        )
    }

    /// The one plan, named by its mode.
    fn gpu_plan_variants(&self, call: &Call<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
        let plan = self.gpu_plan(call, DeviceClass::default())?;
        Ok(vec![(mode_of(call.config).name().to_owned(), plan)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_variants_follow_pad_mode_all() {
        for (i, m) in PadMode::ALL.iter().enumerate() {
            assert_eq!(MODES[i], m.name());
            assert_eq!(VARIANTS[i], format!("pad_{}", m.name()));
        }
    }
}
