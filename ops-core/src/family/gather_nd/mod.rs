//! The `gather_nd` and `gather` families: slices of the input addressed by
//! index tuples (`gather_nd`: DirectML GatherND1, ONNX GatherND) or by
//! single index values along an axis (`gather`: DirectML GATHER, ONNX
//! Gather). A spec states them as
//!
//! ```text
//! compute gather_nd { input: X  indices: I  output: Y
//!                     input_rank: <int>  indices_rank: <int>  batch_dims: <int> }
//! compute gather { input: X  indices: I  output: Y  axis: <int>  [indices_rank: <int>] }
//! ```
//!
//! (a gather's `indices_rank` defaults to every dimension of the indices).
//! Both run on one geometry, [`GatherNdGeometry`] ([`GatherShape`] tells
//! them apart), one planner with its variants ([`GatherVariant`], chosen by
//! shape and device class) and one set of kernels ([`wgsl`]).

mod runtime;
pub mod wgsl;

pub use runtime::*;

use super::{Call, Constraint, Family, KernelDecl, Param, Value};
use crate::scalar::Precision;
use crate::{
    DataType, DeviceClass, GpuPlan, HostTensor, IndexBounds, KernelText, OpError, OutOfRange,
};

const INPUT: usize = 0;
const INDICES: usize = 1;
const OUTPUT: usize = 2;

/// The parameters of `compute gather_nd`, in order.
const ND_PARAMS: &[Param] = &[
    Param::input("input"),
    Param::input("indices"),
    Param::output("output"),
    Param::count("input_rank"),
    Param::count("indices_rank"),
    Param::count("batch_dims"),
];

/// The parameters of `compute gather`, in order.
const AXIS_PARAMS: &[Param] = &[
    Param::input("input"),
    Param::input("indices"),
    Param::output("output"),
    Param::count("axis"),
    Param::optional_count("indices_rank"),
];

/// The `gather_nd` family (`nd`) or the `gather` family, as
/// [`super::FAMILIES`] registers them ([`GATHER_ND`], [`GATHER`]).
pub struct Gathers {
    nd: bool,
}

/// `compute gather_nd`.
pub const GATHER_ND: Gathers = Gathers { nd: true };

/// `compute gather`.
pub const GATHER: Gathers = Gathers { nd: false };

impl Gathers {
    /// How the call's tensors relate, its counts evaluated.
    fn shape(&self, call: &Call<'_>) -> Result<GatherShape, OpError> {
        Ok(if self.nd {
            GatherShape::Nd {
                input_rank: call.count(3)?,
                indices_rank: call.count(4)?,
                batch_dims: call.count(5)?,
            }
        } else {
            GatherShape::Axis {
                axis: call.count(3)?,
                indices_rank: match call.optional_count(4)? {
                    Some(r) => r,
                    None => call.desc(INDICES).sizes.len(),
                },
            }
        })
    }

    /// The kernel of `variant` for the call's data and index types.
    fn kernel_of<'a>(
        call: &'a Call<'a>,
    ) -> impl Fn(GatherVariant) -> Option<&'static crate::Kernel> + 'a {
        let (d, x) = (call.desc(INPUT).dtype, call.desc(INDICES).dtype);
        move |v: GatherVariant| call.kernel(v.name(), &[d, x])
    }

    /// The call's tensors, slots and shape, planned with `kernel`.
    fn call<'a>(
        &self,
        call: &'a Call<'a>,
        kernel: &'a dyn Fn(GatherVariant) -> Option<&'static crate::Kernel>,
    ) -> Result<GatherCall<'a>, OpError> {
        Ok(GatherCall {
            input: call.desc(INPUT),
            input_slot: call.input(INPUT),
            indices: call.desc(INDICES),
            indices_slot: call.input(INDICES),
            output: call.desc(OUTPUT),
            output_slot: call.output(OUTPUT),
            shape: self.shape(call)?,
            kernel,
        })
    }
}

impl Family for Gathers {
    fn name(&self) -> &'static str {
        if self.nd {
            "gather_nd"
        } else {
            "gather"
        }
    }

    fn params(&self) -> &'static [Param] {
        if self.nd {
            ND_PARAMS
        } else {
            AXIS_PARAMS
        }
    }

    fn constraints(&self, _config: &[Value]) -> &'static [Constraint] {
        &[
            Constraint::Integer(INDICES),
            Constraint::SameTypes(INPUT, OUTPUT, "moves the elements of"),
        ]
    }

    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl> {
        let pairs = pairs(config[INPUT].tensor(), config[INDICES].tensor());
        let variants = GatherVariant::NAMES.map(|v| (v, wgsl::GATHER_ND_BINDINGS));
        KernelDecl::for_pairs(pairs, wgsl::gather_nd_supported, &variants, WORKGROUP_SIZE)
    }

    fn kernel_text(
        &self,
        _config: &[Value],
        k: &KernelDecl,
        key: &str,
        origin: &str,
    ) -> KernelText {
        let variant = GatherVariant::ALL
            .into_iter()
            .find(|v| v.name() == k.variant)
            .unwrap_or(GatherVariant::Elements);
        wgsl::gather_nd_kernel_text(variant, k.types[0], k.types[1], key, origin)
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        let out = gather_nd_cpu(
            call.host(inputs, INPUT)?,
            call.host(inputs, INDICES)?,
            call.desc(OUTPUT),
            self.shape(call)?,
            call.name(INDICES),
        )?;
        Ok(vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, class: DeviceClass) -> Result<GpuPlan, OpError> {
        gather_nd_plan(&self.call(call, &Self::kernel_of(call))?, class)
    }

    fn gpu_plan_variants(&self, call: &Call<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
        gather_nd_plans(&self.call(call, &Self::kernel_of(call))?)
    }

    fn index_error(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _check: usize,
        position: u64,
    ) -> OpError {
        match (self.shape(call), call.host(inputs, INDICES)) {
            (Ok(shape), Ok(indices)) => gather_nd_index_error(
                call.desc(INPUT),
                indices,
                shape,
                call.name(INDICES),
                position,
            ),
            (Err(e), _) | (_, Err(e)) => e,
        }
    }

    fn index_bounds(&self, call: &Call<'_>) -> Vec<IndexBounds> {
        let Ok(shape) = self.shape(call) else {
            return Vec::new();
        };
        match GatherNdGeometry::of(&call.desc(INPUT).sizes, &call.desc(INDICES).sizes, shape) {
            Ok(g) => vec![IndexBounds {
                tensor: call.input(INDICES),
                addresses: call.slot(INPUT),
                sizes: g.dims.iter().map(|d| d.0 as u32).collect(),
                out_of_range: OutOfRange::Error,
            }],
            Err(_) => Vec::new(),
        }
    }
}
