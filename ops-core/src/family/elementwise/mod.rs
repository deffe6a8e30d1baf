//! The `elementwise` family (the map engine): each output element is an expression of the
//! inputs' elements at the same coordinates, after broadcasting, and of the
//! descriptor's scalar attributes (ONNX Add, Relu, Where, Cast and their
//! kin, and any fusion of them a spec writes).
//!
//! ```text
//! output[c] = value(in0[c mod in0], in1[c mod in1], ...)
//! ```
//!
//! Broadcasting is multidirectional (numpy's, ONNX's): each input's sizes
//! are right-aligned with the output's, and a dimension of size 1 (or a
//! missing leading one) repeats its single element; every other dimension
//! equals the output's. A spec whose inputs all have the output's shape
//! (DirectML's element-wise operators) is the special case of no
//! broadcasting. The `value` is a [`Scalar`](crate::scalar::Scalar) expression, so a spec may fuse
//! several operations (`max(x * s + b, 0)`) into one kernel that reads each
//! input element once and writes each output element once.
//!
//! # Types
//!
//! Each tensor (inputs, then the output) has a [`Ty`](crate::scalar::Ty) in
//! [`Elementwise::types`]: a data type, or a type parameter that tensors
//! sharing a type have in common (ONNX's `T` of `Add(A: T, B: T) -> T`).
//! A call binds each parameter to its tensors' data type; tensors of one
//! parameter must agree (the spec's rules say so in its own words, the
//! call checks it again). Parameter 0 is the output's when the output's
//! type is a parameter: what `cast<T>(..)` converts to.
//!
//! # GPU algorithm
//!
//! One pass (two for a vector schedule with a tail): a work item per output element (32- and 64-bit outputs) or
//! per output `u32` word (8- and 16-bit ones, assembled in a register and
//! stored once, no atomics), [`ELEMENTS_PER_THREAD`] items a thread (one
//! vector item a thread in the vector schedules). Each
//! item loads one element per input and evaluates the expression in the
//! compute types of [`crate::scalar`] (FLOAT16 in `f32`, rounded once on
//! store).
//!
//! The plan first merges the output's dimensions ([`merge_dims`]): size-1
//! dimensions go, and neighbours that every input walks as one (contiguous
//! in each, or broadcast in each) become one. The merged shape picks the
//! [`Schedule`], each a kernel of its own (a kernel holds its schedule's
//! code only):
//! - [`Schedule::Walk`]: each item walks its merged coordinates from the
//!   last dimension, one division per merged dimension but the first, and
//!   adds each input's stride (0 where it broadcasts). Where every input is
//!   the output's shape or a scalar (one merged dimension), that is no
//!   division at all.
//! - [`Schedule::Rows`]: two merged dimensions (a row broadcast, a column
//!   broadcast, a transposed input) whose rows hold at least
//!   [`ROWS_MIN_ITEMS`] items: a workgroup takes a block of one row, so an
//!   item's row and column come from its workgroup and thread, with no
//!   division per element.
//! - [`Schedule::Flat`]: one merged dimension (every input the output's
//!   shape, contiguous, or a scalar) of at least one output `vec4<u32>`: a
//!   thread takes one work item of 16 bytes of output ([`vector_elements`]
//!   elements; two vectors of 64-bit ones), reads each input at the item's
//!   own index, a `vec4<u32>` at a time where it holds one (a scalar input
//!   once, the same address in every thread), and stores the output a
//!   vector at a time, in straight-line code: no address arithmetic.
//! - [`Schedule::Vectors`]: two merged dimensions as `Rows` takes them
//!   whose rows are whole output vectors and every input's rows start on
//!   one or repeat one element: the same vector items, a thread one item,
//!   each input read from its row's start (a repeated element once per
//!   row).
//!
//! After the last whole vector of a vector schedule, the rest is a second
//! pass, of the walk kernel from the first of them (its `FIRST` parameter
//! word).
//!
//! A spec states it as
//!
//! ```text
//! compute elementwise {
//!     inputs: [A, B]
//!     output: C
//!     value: max(A * alpha + B, 0)
//!     accuracy: ulp(2)
//! }
//! ```
//!
//! `value` names the inputs by their tensors' names; the spec compiler
//! types it ([`ParamKind::Arithmetic`](super::ParamKind::Arithmetic)) and
//! generates a kernel for every binding of its type parameters the support
//! tables admit. An optional `domain: [lo, hi]` states the input values a
//! ULP bound holds for (a sum of several inputs holds it without
//! cancellation): fuzzers draw float inputs from it.

mod runtime;
pub mod wgsl;

pub use runtime::*;

use super::{Call, Family, KernelDecl, Param, Value};
use crate::scalar::Precision;
use crate::{DeviceClass, GpuPlan, HostTensor, KernelText, OpError, TensorDesc, Tolerance};

const INPUTS: usize = 0;
const OUTPUT: usize = 1;
const VALUE: usize = 2;
const ACCURACY: usize = 3;

/// The family, as [`super::FAMILIES`] registers it: one kernel variant per
/// input count (its bindings) and schedule, `elementwise<n>`,
/// `elementwise<n>_rows`, `elementwise<n>_vectors` and
/// `elementwise<n>_flat`.
pub struct ElementwiseFamily;

/// The variants' names, by input count and schedule (in the order of
/// [`Schedule::ALL`]).
const VARIANTS: [[&str; 4]; MAX_INPUTS + 1] = [
    [
        "elementwise0",
        "elementwise0_rows",
        "elementwise0_vectors",
        "elementwise0_flat",
    ],
    [
        "elementwise1",
        "elementwise1_rows",
        "elementwise1_vectors",
        "elementwise1_flat",
    ],
    [
        "elementwise2",
        "elementwise2_rows",
        "elementwise2_vectors",
        "elementwise2_flat",
    ],
    [
        "elementwise3",
        "elementwise3_rows",
        "elementwise3_vectors",
        "elementwise3_flat",
    ],
    [
        "elementwise4",
        "elementwise4_rows",
        "elementwise4_vectors",
        "elementwise4_flat",
    ],
    [
        "elementwise5",
        "elementwise5_rows",
        "elementwise5_vectors",
        "elementwise5_flat",
    ],
    [
        "elementwise6",
        "elementwise6_rows",
        "elementwise6_vectors",
        "elementwise6_flat",
    ],
    [
        "elementwise7",
        "elementwise7_rows",
        "elementwise7_vectors",
        "elementwise7_flat",
    ],
];

/// The input count and schedule of `variant`.
fn variant_of(variant: &str) -> (usize, Schedule) {
    for (n, names) in VARIANTS.iter().enumerate() {
        if let Some(s) = names.iter().position(|&v| v == variant) {
            return (n, Schedule::ALL[s]);
        }
    }
    (0, Schedule::Walk)
}

/// The variant of `inputs` inputs in `schedule`.
fn variant(inputs: usize, schedule: Schedule) -> &'static str {
    let s = Schedule::ALL
        .iter()
        .position(|&x| x == schedule)
        .unwrap_or(0);
    VARIANTS[inputs.min(MAX_INPUTS)][s]
}

/// The computation `config` declares.
fn computation(config: &[Value]) -> Elementwise {
    let a = config[VALUE].arithmetic();
    Elementwise {
        value: a.value,
        types: a.types,
        accuracy: config[ACCURACY].accuracy(),
    }
}

/// One call's tensors, attributes and kernel look-up.
struct Bound<'a> {
    e: Elementwise,
    inputs: Vec<&'a TensorDesc>,
    slots: Vec<usize>,
    attrs: Vec<crate::scalar::Value>,
}

impl<'a> Bound<'a> {
    fn new(call: &Call<'a>) -> Bound<'a> {
        Bound {
            e: computation(call.config),
            inputs: call.descs(INPUTS),
            slots: call.config[INPUTS].tensors().to_vec(),
            attrs: call.env.scalar_attrs(),
        }
    }

    /// The operator's kernel of a schedule and type parameters.
    fn kernels<'k>(
        &self,
        c: &'k Call<'_>,
    ) -> impl Fn(Schedule, &[crate::DataType]) -> Option<&'static crate::Kernel> + 'k {
        let inputs = self.inputs.len();
        move |s, params| c.kernel(variant(inputs, s), params)
    }

    fn call(&self, c: &Call<'a>) -> ElementwiseCall<'_> {
        ElementwiseCall {
            inputs: &self.inputs,
            input_slots: &self.slots,
            output: c.desc(OUTPUT),
            output_slot: c.output(OUTPUT),
            attrs: &self.attrs,
        }
    }
}

impl Family for ElementwiseFamily {
    fn name(&self) -> &'static str {
        "elementwise"
    }

    fn params(&self) -> &'static [Param] {
        const PARAMS: &[Param] = &[
            Param::any_inputs("inputs", MAX_INPUTS),
            Param::output("output"),
            Param::arithmetic("value", INPUTS, OUTPUT),
            Param::accuracy("accuracy"),
            Param::optional_domain("domain"),
        ];
        PARAMS
    }

    fn strided_inputs(&self) -> bool {
        true
    }

    fn kernels(
        &self,
        config: &[Value],
        _pairs: &dyn Fn(usize, usize) -> Vec<(crate::DataType, crate::DataType)>,
    ) -> Vec<KernelDecl> {
        let inputs = config[INPUTS].tensors().len();
        let e = computation(config);
        let mut out = Vec::new();
        for &types in config[VALUE].arithmetic().bindings {
            for schedule in Schedule::ALL {
                if !schedule.is_vector() || vectorizes(&e, types.as_slice()) {
                    out.push(KernelDecl {
                        variant: variant(inputs, schedule),
                        types,
                        bindings: bindings(inputs),
                        workgroup_size: WORKGROUP_SIZE,
                    });
                }
            }
        }
        out
    }

    /// `{operator}/elementwise/{T0}.{T1}..` (the type parameters' bindings)
    /// for the walk, `elementwise_rows`, `elementwise_vectors` and
    /// `elementwise_flat` for the other schedules.
    fn kernel_key(&self, operator: &str, k: &KernelDecl) -> String {
        wgsl::elementwise_kernel_key(operator, variant_of(k.variant).1, k.types.as_slice())
    }

    fn kernel_text(&self, config: &[Value], k: &KernelDecl, key: &str, origin: &str) -> KernelText {
        let text = config[VALUE].arithmetic().text;
        let schedule = variant_of(k.variant).1;
        let e = computation(config);
        wgsl::elementwise_kernel_text(&e, schedule, k.types.as_slice(), key, origin, text)
    }

    fn tolerance(&self, call: &Call<'_>) -> Tolerance {
        computation(call.config).tolerance(call.desc(OUTPUT).dtype)
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        let ins: Vec<&HostTensor> = call.config[INPUTS]
            .tensors()
            .iter()
            .map(|&slot| {
                inputs.get(slot).copied().ok_or_else(|| {
                    OpError::InvalidArgument(format!("{}: missing inputs", call.env.op_name()))
                })
            })
            .collect::<Result<_, _>>()?;
        let attrs = call.env.scalar_attrs();
        let e = computation(call.config);
        elementwise_cpu(&e, &ins, call.desc(OUTPUT), &attrs, precision).map(|out| vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, _class: DeviceClass) -> Result<GpuPlan, OpError> {
        let b = Bound::new(call);
        elementwise_plan(&b.e, &b.call(call), &b.kernels(call))
    }

    fn gpu_plan_variants(&self, call: &Call<'_>) -> Result<Vec<(String, GpuPlan)>, OpError> {
        let b = Bound::new(call);
        elementwise_plans(&b.e, &b.call(call), &b.kernels(call))
    }

    fn docs(&self, config: &[Value]) -> Vec<String> {
        let accuracy = match config[ACCURACY].accuracy() {
            Some(n) => format!("ulp({n})"),
            None => "exact".to_string(),
        };
        vec![
            String::new(),
            "Computed element-wise (`ops_core::family::elementwise`), inputs broadcast multidirectionally:".into(),
            format!("- value `{}`", config[VALUE].arithmetic().text),
            format!("- accuracy: `{accuracy}`"),
        ]
    }
}
