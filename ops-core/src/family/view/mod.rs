//! The `view` and `split` families: data movement whose source is an
//! affine function of the output coordinates. A spec states them as
//!
//! ```text
//! compute view { input: X  output: Y  offset: <int>  strides: <list>  [wrap: <list>] }
//! compute split { input: X  outputs: [Y0, Y1, ..]  axis: <int> }
//! ```
//!
//! A view is ONNX Transpose, Expand, Tile, Reshape, Squeeze, Unsqueeze,
//! Flatten or Identity; a split (ONNX Split, DirectML SPLIT) is a view per
//! output, each the input's slab along the axis after the previous one.
//! Both run on one run-time half (the geometry, [`View`], and the planner
//! with its [`Schedule`]s) and one set of kernels ([`wgsl`]).

mod runtime;
pub mod wgsl;

pub use runtime::*;

use super::{Call, Constraint, Family, KernelDecl, Param, Value};
use crate::scalar::Precision;
use crate::{DataType, DeviceClass, GpuPlan, HostTensor, KernelText, OpError};

const INPUT: usize = 0;
const OUTPUT: usize = 1;
const OFFSET: usize = 2;
const STRIDES: usize = 3;
const WRAP: usize = 4;
const AXIS: usize = 2;

/// The parameters of `compute view`, in order.
const VIEW_PARAMS: &[Param] = &[
    Param::input("input"),
    Param::output("output"),
    Param::count("offset"),
    Param::list("strides"),
    Param::optional_list("wrap"),
];

/// The parameters of `compute split`, in order.
const SPLIT_PARAMS: &[Param] = &[
    Param::input("input"),
    Param::outputs("outputs", true),
    Param::count("axis"),
];

/// The kernel variants (the middle of their keys): the walk, the tiled
/// transpose, the transpose in register blocks.
const WALK: &str = "view";
const TILED: &str = "view_tiled";
const BLOCKS: &str = "view_blocks";

/// The `view` family (`split: false`) or the `split` family, as
/// [`super::FAMILIES`] registers them ([`VIEW`], [`SPLIT`]).
pub struct Views {
    split: bool,
}

/// `compute view`.
pub const VIEW: Views = Views { split: false };

/// `compute split`.
pub const SPLIT: Views = Views { split: true };

/// The kernel of `schedule` for the call's data type.
fn kernel_of<'a>(
    call: &'a Call<'a>,
    data: DataType,
) -> impl Fn(Schedule) -> Option<&'static crate::Kernel> + 'a {
    move |s: Schedule| {
        let variant = match s {
            Schedule::Walk => WALK,
            Schedule::Tiled => TILED,
            Schedule::Blocks => BLOCKS,
        };
        call.kernel(variant, &[data, data])
    }
}

/// A view's source offset, strides and optional wraps.
type Steps = (i64, Vec<i64>, Option<Vec<i64>>);

/// A view call's [`Steps`], evaluated (none for an empty output, which
/// reads nothing: its steps may not fit, for huge dimensions beside a 0).
fn view_steps(call: &Call<'_>) -> Result<Steps, OpError> {
    let output = call.desc(OUTPUT);
    if output.element_count() == Some(0) {
        return Ok((0, vec![0; output.sizes.len()], None));
    }
    let steps = |v: Vec<i128>| -> Result<Vec<i64>, OpError> {
        v.into_iter()
            .map(|x| {
                i64::try_from(x).map_err(|_| {
                    OpError::InvalidArgument(format!(
                        "{}: a view step of {x} does not fit i64",
                        call.env.op_name()
                    ))
                })
            })
            .collect()
    };
    let offset = call.count(OFFSET)? as i64;
    let strides = steps(call.list(STRIDES)?)?;
    let wrap = call.optional_list(WRAP)?.map(steps).transpose()?;
    Ok((offset, strides, wrap))
}

/// `plan` of the [`ViewCall`] of a view call: its input and output (and
/// slots) and its evaluated [`Steps`].
fn view_planned<R>(call: &Call<'_>, plan: impl FnOnce(&ViewCall<'_>) -> R) -> Result<R, OpError> {
    let (offset, strides, wrap) = view_steps(call)?;
    Ok(plan(&ViewCall {
        input: call.desc(INPUT),
        input_slot: call.input(INPUT),
        output: call.desc(OUTPUT),
        output_slot: call.output(OUTPUT),
        offset,
        strides: &strides,
        wraps: wrap.as_deref(),
    }))
}

impl Family for Views {
    fn name(&self) -> &'static str {
        if self.split {
            "split"
        } else {
            "view"
        }
    }

    fn params(&self) -> &'static [Param] {
        if self.split {
            SPLIT_PARAMS
        } else {
            VIEW_PARAMS
        }
    }

    fn constraints(&self, _config: &[Value]) -> &'static [Constraint] {
        if self.split {
            &[Constraint::SameTypes(
                INPUT,
                OUTPUT,
                "cuts into slabs the elements of",
            )]
        } else {
            &[Constraint::SameTypes(
                INPUT,
                OUTPUT,
                "moves the elements of",
            )]
        }
    }

    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl> {
        let output = match config[OUTPUT] {
            Value::Tensors(t) => t[0],
            v => v.tensor(),
        };
        let variants: &[super::Variant] = if self.split {
            &[(WALK, BINDINGS)]
        } else {
            &[(WALK, BINDINGS), (TILED, BINDINGS), (BLOCKS, BINDINGS)]
        };
        KernelDecl::for_pairs(
            pairs(config[INPUT].tensor(), output),
            |a, b| a == b,
            variants,
            WORKGROUP_SIZE,
        )
    }

    /// `{operator}/{variant}/{DATA}`.
    fn one_type(&self) -> bool {
        true
    }

    fn kernel_text(
        &self,
        _config: &[Value],
        k: &KernelDecl,
        key: &str,
        origin: &str,
    ) -> KernelText {
        match k.variant {
            TILED => wgsl::view_tiled_kernel_text(k.types[0], key, origin),
            BLOCKS => wgsl::view_blocks_kernel_text(k.types[0], key, origin),
            _ => wgsl::view_kernel_text(k.types[0], key, origin),
        }
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        let input = call.host(inputs, INPUT)?;
        if self.split {
            return split_cpu(input, &call.descs(OUTPUT), call.count(AXIS)?);
        }
        let (offset, strides, wrap) = view_steps(call)?;
        let out = view_cpu(input, call.desc(OUTPUT), offset, &strides, wrap.as_deref())?;
        Ok(vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, class: DeviceClass) -> Result<GpuPlan, OpError> {
        let input = call.desc(INPUT);
        let kernels = kernel_of(call, input.dtype);
        if self.split {
            let walk = kernels(Schedule::Walk);
            return split_plan(
                input,
                call.input(INPUT),
                &call.descs(OUTPUT),
                call.count(AXIS)?,
                walk,
            );
        }
        view_planned(call, |c| view_plan(c, class, &kernels))?
    }

    fn gpu_plan_variants(&self, call: &Call<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
        if self.split {
            let plan = self.gpu_plan(call, DeviceClass::default())?;
            return Ok(vec![(self.name().to_owned(), plan)]);
        }
        let kernels = kernel_of(call, call.desc(INPUT).dtype);
        view_planned(call, |c| view_plans(c, &kernels))?
    }
}
