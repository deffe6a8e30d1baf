//! The `scatter_elements` and `scatter_nd` families: updates combined into
//! a copy of the input at the elements their indices name, in row-major
//! order of the updates. One engine (one check, CPU reference and planner,
//! [`IndexMap::cpu`], [`combine_plan`], and [`wgsl`]'s kernels) serves
//! both; they differ only in how an update's index maps to an output
//! element ([`IndexMap`]). A spec
//! states them as
//!
//! ```text
//! compute scatter_elements { input: X  indices: I  updates: U  output: Y  axis: <int>
//!                            collisions: last_write_wins }      // or
//!                            combine: <expression of a, b> }
//! compute scatter_nd { input: X  indices: I  updates: U  output: Y
//!                      input_rank: <int>  indices_rank: <int>  combine: <expression of a, b> }
//! ```
//!
//! `combine` is the spec's arithmetic of `a`, the element so far, and `b`,
//! the update, of the scattered tensor's data type: `b` replaces, `a + b`
//! adds. `collisions: last_write_wins` (DirectML Scatter) is the
//! replacement with the indices of the input's sizes off the axis, which
//! plans its own, faster kernels ([`ScatterStrategy`]).

mod runtime;
pub mod wgsl;

pub use runtime::*;

use super::{Call, Constraint, Family, KernelDecl, Missing, Misuse, Param, Value};
use crate::scalar::{Precision, Scalar, Var};
use crate::{DataType, DeviceClass, GpuPlan, HostTensor, IndexBounds, KernelText, OpError};

/// `combine`'s parameter (both families).
const COMBINE: usize = 6;
/// `scatter_elements`' `axis`.
const AXIS: usize = 4;
/// `scatter_elements`' `collisions`.
const COLLISIONS: usize = 5;
/// `scatter_nd`'s `input_rank`.
const INPUT_RANK: usize = 4;
/// `scatter_nd`'s `indices_rank`.
const INDICES_RANK: usize = 5;

/// `combine`: an expression of `a` and `b`, of the data type `T` of the
/// input, the updates and the output.
const fn combine(missing: Missing) -> Param {
    Param::instruction(
        "combine",
        (INPUT, "the scattered tensor's data type"),
        &[(Var::A, None), (Var::B, None)],
        missing,
    )
}

/// The parameters of `compute scatter_elements`, in order.
const ELEMENTS_PARAMS: &[Param] = &[
    Param::input("input"),
    Param::input("indices"),
    Param::input("updates"),
    Param::output("output"),
    Param::count("axis"),
    Param::optional_word("collisions", &["last_write_wins"]),
    combine(Missing::Absent),
];

/// The parameters of `compute scatter_nd`, in order.
const ND_PARAMS: &[Param] = &[
    Param::input("input"),
    Param::input("indices"),
    Param::input("updates"),
    Param::output("output"),
    Param::count("input_rank"),
    Param::count("indices_rank"),
    combine(Missing::Required),
];

/// The `scatter_nd` family (`nd`) or the `scatter_elements` family, as
/// [`super::FAMILIES`] registers them ([`SCATTER_ELEMENTS`],
/// [`SCATTER_ND`]).
pub struct Scatters {
    nd: bool,
}

/// `compute scatter_elements`.
pub const SCATTER_ELEMENTS: Scatters = Scatters { nd: false };

/// `compute scatter_nd`.
pub const SCATTER_ND: Scatters = Scatters { nd: true };

impl Scatters {
    /// The block's `combine`, `None` for `collisions: last_write_wins`.
    fn combine(config: &[Value]) -> Option<&'static Scalar> {
        config[COMBINE].instruction().map(|i| i.value)
    }

    /// The kernel walking a scatter of this family with a `combine`.
    fn walk(&self) -> CombineWalk {
        if self.nd {
            CombineWalk::Slices
        } else {
            CombineWalk::Columns
        }
    }

    /// The call's index map, its counts evaluated.
    fn map(&self, call: &Call<'_>) -> Result<IndexMap, OpError> {
        Ok(if self.nd {
            IndexMap::Tuples {
                input_rank: call.count(INPUT_RANK)?,
                indices_rank: call.count(INDICES_RANK)?,
            }
        } else {
            IndexMap::Axis(call.count(AXIS)?)
        })
    }

    /// The call's last-write-wins kernels, by the call's data and index
    /// types.
    fn stage_kernels(call: &Call<'_>) -> Result<ScatterKernels, OpError> {
        let (d, x) = (call.desc(INPUT).dtype, call.desc(INDICES).dtype);
        ScatterKernels::of(d, |s| call.kernel(s.name(), &[d, x]))
            .ok_or_else(|| OpError::Unsupported(format!("no kernel for {d} data with {x} indices")))
    }

    /// The plan with a `combine` ([`combine_plan`]).
    fn combine_plan(&self, call: &Call<'_>) -> Result<GpuPlan, OpError> {
        let map = self.map(call)?;
        let (d, x) = (call.desc(INPUT).dtype, call.desc(INDICES).dtype);
        let kernel = call.kernel(self.walk().name(), &[d, x]);
        combine_plan(map, &Tensors::of(call), &call.env.scalar_attrs(), kernel)
    }
}

impl Family for Scatters {
    fn name(&self) -> &'static str {
        if self.nd {
            "scatter_nd"
        } else {
            "scatter_elements"
        }
    }

    fn params(&self) -> &'static [Param] {
        if self.nd {
            ND_PARAMS
        } else {
            ELEMENTS_PARAMS
        }
    }

    fn constraints(&self, _config: &[Value]) -> &'static [Constraint] {
        &[
            Constraint::Integer(INDICES),
            Constraint::SameTypes(INPUT, UPDATES, "is written into"),
            Constraint::SameTypes(INPUT, OUTPUT, "moves the elements of"),
            Constraint::Computes(INPUT, "combined"),
        ]
    }

    fn unsupported(&self, config: &[Value], dtype: DataType) -> Option<String> {
        Scatters::combine(config).and_then(|c| combine_unsupported(c, dtype))
    }

    fn misuse(&self, config: &[Value]) -> Option<Misuse> {
        if self.nd {
            return None;
        }
        match (config[COLLISIONS].word(), config[COMBINE].instruction()) {
            (Some(_), None) | (None, Some(_)) => None,
            _ => Some(Misuse {
                message: "pattern `scatter_elements` needs either `collisions` or `combine`".into(),
                help: "`collisions: last_write_wins`, or `combine: a + b` (`a` the element so far, `b` the update)".into(),
            }),
        }
    }

    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl> {
        let pairs = pairs(config[INPUT].tensor(), config[INDICES].tensor());
        match Scatters::combine(config) {
            Some(combine) => {
                let keep = |a, b| wgsl::combine_kernel_unsupported(combine, a, b).is_none();
                let variants = [(self.walk().name(), &WALK_ACCESS[..])];
                KernelDecl::for_pairs(pairs, keep, &variants, WORKGROUP_SIZE)
            }
            // Every stage serving the data type, pair by pair.
            None => pairs
                .into_iter()
                .filter(|&(a, b)| wgsl::scatter_supported(a, b))
                .flat_map(|(a, b)| {
                    let stages = ScatterStage::ALL.into_iter().filter(move |s| s.serves(a));
                    stages.map(move |s| KernelDecl {
                        variant: s.name(),
                        types: super::Types::pair(a, b),
                        bindings: wgsl::scatter_bindings(s),
                        workgroup_size: WORKGROUP_SIZE,
                    })
                })
                .collect(),
        }
    }

    fn kernel_text(&self, config: &[Value], k: &KernelDecl, key: &str, origin: &str) -> KernelText {
        let (data, index) = (k.types[0], k.types[1]);
        match (ScatterStage::named(k.variant), Scatters::combine(config)) {
            (None, Some(combine)) => {
                wgsl::combine_kernel_text(self.walk(), combine, data, index, key, origin)
            }
            // A stage; `Columns` for no other variant (`kernels` lists none).
            (stage, _) => {
                let stage = stage.unwrap_or(ScatterStage::Columns);
                wgsl::scatter_kernel_text(stage, data, index, key, origin)
            }
        }
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        static REPLACE: Scalar = Scalar::Var(Var::B);
        let combine = Scatters::combine(call.config).unwrap_or(&REPLACE);
        let out = self.map(call)?.cpu(
            combine,
            call.host(inputs, INPUT)?,
            call.host(inputs, INDICES)?,
            call.host(inputs, UPDATES)?,
            call.desc(OUTPUT),
            call.name(INDICES),
            &call.env.scalar_attrs(),
        )?;
        Ok(vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, class: DeviceClass) -> Result<GpuPlan, OpError> {
        match Scatters::combine(call.config) {
            Some(_) => self.combine_plan(call),
            None => {
                let kernels = Scatters::stage_kernels(call)?;
                stages_plan(None, &Tensors::of(call), call.count(AXIS)?, class, &kernels)
            }
        }
    }

    fn gpu_plan_variants(&self, call: &Call<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
        let named = |e| super::name_unsupported(call, e);
        match Scatters::combine(call.config) {
            Some(_) => {
                let plan = self.combine_plan(call).map_err(named)?;
                Ok(vec![(self.walk().name().to_owned(), plan)])
            }
            None => {
                let kernels = Scatters::stage_kernels(call).map_err(named)?;
                stages_plans(&Tensors::of(call), call.count(AXIS)?, &kernels)
            }
        }
    }

    fn index_error(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _check: usize,
        position: u64,
    ) -> OpError {
        match (self.map(call), call.host(inputs, INDICES)) {
            (Ok(map), Ok(indices)) => {
                map.index_error(call.desc(INPUT), indices, call.name(INDICES), position)
            }
            (Err(e), _) | (_, Err(e)) => e,
        }
    }

    fn index_bounds(&self, call: &Call<'_>) -> Vec<IndexBounds> {
        match self.map(call) {
            Ok(map) => map.index_bounds(&Tensors::of(call)),
            Err(_) => Vec::new(),
        }
    }

    fn docs(&self, config: &[Value]) -> Vec<String> {
        let Some(combine) = config[COMBINE].instruction() else {
            return Vec::new();
        };
        let text = combine.text;
        let what = if self.nd {
            format!("Each tuple's slice of updates is combined into the slice it names, tuples in row-major order, as `{text}`")
        } else {
            format!("Each update is combined into its element in row-major order of the updates as `{text}`")
        };
        vec![
            String::new(),
            format!("{what} (`a` the element so far, `b` the update): deterministic, on the GPU as on the CPU (`ops_core::family::scatter`)."),
        ]
    }
}
