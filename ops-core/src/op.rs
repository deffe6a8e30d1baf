//! The traits generated operators implement, and their dynamic form.

use std::collections::BTreeMap;
use std::fmt;

use crate::{
    DataType, DeviceClass, FeatureLevel, GpuPlan, HostTensor, Kernel, OpError, TensorDesc,
    ValidationError,
};

/// A descriptor generated from a spec file, usable as a trait object
/// (`&dyn Operator`, `Box<dyn Operator>`).
pub trait Operator: fmt::Debug + Send + Sync {
    /// Static facts about the operator.
    fn info(&self) -> &'static OperatorInfo;

    /// Checks the descriptor against the rules and the tensor support table of `level`.
    fn validate(&self, level: FeatureLevel) -> Result<(), ValidationError>;

    /// The lowest feature level whose table admits this descriptor, if any
    /// does (`None` also for operators without feature levels).
    fn min_feature_level(&self) -> Option<FeatureLevel>;

    /// The input tensor descriptions, in spec order.
    fn input_descs(&self) -> Vec<TensorDesc>;

    /// The output tensor descriptions, in spec order.
    fn output_descs(&self) -> Vec<TensorDesc>;

    /// The descriptor's own copy of input `i` when the operator reads its
    /// values on the host (`input x: host tensor` in its spec: the
    /// descriptor keeps the data its rules were checked with), else `None`.
    fn host_input(&self, i: usize) -> Option<&HostTensor> {
        let _ = i;
        None
    }

    /// Runs the CPU backend: the answer as the spec computes it, floats
    /// in their declared accumulator type (FLOAT16 and FLOAT32 in `f32`;
    /// [`crate::scalar::Precision::Compute`]).
    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError>;

    /// The yardstick of the accuracy contract ([`Operator::tolerance`]):
    /// the CPU computation with floats in `f64`, rounded once to the
    /// output types ([`crate::scalar::Precision::Yardstick`]). Operators
    /// without float arithmetic return [`Operator::run_cpu`]'s answer.
    fn run_yardstick(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        self.run_cpu(inputs)
    }

    /// The GPU plan for this descriptor on an adapter of `class` (it never
    /// depends on device data; the class only changes how the work is
    /// split, never the result).
    fn gpu_plan_for(&self, class: DeviceClass) -> Result<GpuPlan, OpError>;

    /// The GPU plan for a software adapter
    /// ([`DeviceClass::Software`]); `ops_gpu::Context::run` asks for its
    /// own adapter's class.
    fn gpu_plan(&self) -> Result<GpuPlan, OpError> {
        self.gpu_plan_for(DeviceClass::Software)
    }

    /// Every GPU plan the planners could choose for this descriptor, each
    /// named by its strategy: the plans of both device classes and the
    /// pattern's other kernel variants that can run this call (a split
    /// reduction as one pass, a walk as two passes, ...). All give the
    /// same result bit for bit; tests and `ops fuzz --variants all` run
    /// every one. The default is the two device classes' plans.
    fn gpu_plan_variants(&self) -> Result<Vec<(String, GpuPlan)>, OpError> {
        let mut out: Vec<(String, GpuPlan)> = Vec::new();
        for class in [DeviceClass::Software, DeviceClass::Hardware] {
            let plan = self.gpu_plan_for(class)?;
            if !out.iter().any(|(_, p)| *p == plan) {
                out.push((format!("{class:?}"), plan));
            }
        }
        Ok(out)
    }

    /// How closely either backend's outputs must match the yardstick
    /// ([`Operator::run_yardstick`], which computes in `f64` and rounds
    /// once): the spec's accuracy contract for this descriptor, a bound in
    /// ULPs that may grow with the reduced count, or
    /// [`Tolerance::Exact`](crate::Tolerance::Exact). Where the contract
    /// cannot hold (an `f32` intermediate overflows, a sum cancels), the
    /// backends agree with each other instead
    /// ([`crate::accuracy::contract_matches`]).
    fn tolerance(&self) -> crate::Tolerance {
        crate::Tolerance::Exact
    }

    /// The float input values for which [`Operator::tolerance`]'s ULP bound
    /// is stated, `[lo, hi)`, when the spec narrows them; `None` for the
    /// default domain of ULP contracts: magnitudes in `[0.5, 2)`, all of one
    /// sign (sums without cancellation or overflow). Fuzzers draw float
    /// inputs from it. Outside it the backends still compute the same
    /// function, but rounding may be amplified past the bound (a logarithm
    /// of a sum near 1, a difference of near-equal values).
    fn accuracy_domain(&self) -> Option<(f64, f64)> {
        None
    }

    /// Phrases the error for index check `check` failing at element `position`
    /// of its tensor (the GPU reports only the position).
    fn index_error(&self, inputs: &[&HostTensor], check: usize, position: u64) -> OpError;

    /// The index tensors among the inputs and the dimension sizes their
    /// values address, as the computation pattern defines them (empty for
    /// operators without index tensors, and when the descriptor breaks a
    /// rule). Fuzzers use it to draw index data that is mostly in range.
    fn index_bounds(&self) -> Vec<IndexBounds> {
        Vec::new()
    }
}

/// Checks a call of `op` with `inputs` before either backend runs it:
///
/// - `inputs` are the tensors `op` was built for: as many as its inputs,
///   each of its input description ([`Operator::input_descs`]), and each
///   host-read input holding the values the descriptor keeps
///   ([`Operator::host_input`]); [`OpError::InvalidArgument`] naming the
///   tensor otherwise;
/// - every output has at most `u32::MAX` elements, the element addressing
///   of the GPU kernels, which the CPU reference keeps to as well;
///   [`OpError::TooLarge`] naming the output otherwise;
/// - the outputs, which both backends return in host memory, fit the host
///   limit together ([`crate::host`]); [`OpError::TooLarge`] naming the
///   limit otherwise.
///
/// The CPU reference and `ops_gpu::Context::run` both call it before
/// anything else, so that a mistake gives the same error from either.
pub fn check_call<O: Operator + ?Sized>(op: &O, inputs: &[&HostTensor]) -> Result<(), OpError> {
    let descs: Vec<&TensorDesc> = inputs.iter().map(|t| t.desc()).collect();
    check_call_descs(op, &descs)?;
    let info = op.info();
    let outputs = op.output_descs();
    let bytes = outputs
        .iter()
        .try_fold(0u64, |sum, d| sum.checked_add(d.byte_size()?));
    crate::check_host_bytes(
        || {
            let names: Vec<String> = info.outputs.iter().map(|n| format!("`{n}`")).collect();
            let plural = if names.len() == 1 { "" } else { "s" };
            format!("{}: output{plural} {}", info.name, names.join(", "))
        },
        bytes,
    )?;
    for (i, got) in inputs.iter().enumerate() {
        let name = info.inputs.get(i).copied().unwrap_or("?");
        let want = got.desc();
        let Some(kept) = op.host_input(i) else {
            continue;
        };
        if kept.bytes() == got.bytes() {
            continue;
        }
        // Same description, other bytes: name the first element that differs.
        let width = want.dtype.size_bytes();
        let element = kept
            .bytes()
            .chunks(width)
            .zip(got.bytes().chunks(width))
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let text = |t: &HostTensor| match t.get_int(element) {
            Some(v) => v.to_string(),
            None => format!(
                "{:02x?}",
                t.bytes().chunks(width).nth(element).unwrap_or_default()
            ),
        };
        return Err(OpError::host_input_mismatch(
            info.name,
            name,
            element,
            &text(kept),
            &text(got),
        ));
    }
    Ok(())
}

/// [`check_call`] for tensors known by their descriptions only (tensors on
/// a device): everything but the values of host-read inputs, which the
/// descriptor keeps ([`Operator::host_input`]) and the plans are built
/// from.
pub fn check_call_descs<O: Operator + ?Sized>(
    op: &O,
    inputs: &[&TensorDesc],
) -> Result<(), OpError> {
    let info = op.info();
    let want = op.input_descs();
    if want.len() != inputs.len() {
        return Err(OpError::input_count(
            info.name,
            want.len(),
            info.inputs,
            inputs.len(),
        ));
    }
    let outputs = op.output_descs();
    let all: Vec<&TensorDesc> = want.iter().chain(&outputs).collect();
    info.check_layouts(&all)?;
    for (i, (want, got)) in want.iter().zip(inputs).enumerate() {
        let name = info.inputs.get(i).copied().unwrap_or("?");
        if want != *got {
            return Err(OpError::input_mismatch(info.name, name, want, got));
        }
    }
    for (i, want) in outputs.iter().enumerate() {
        let count = want.element_count();
        if count.is_none_or(|c| c > u64::from(u32::MAX)) {
            let name = info.outputs.get(i).copied().unwrap_or("?");
            return Err(OpError::too_many_elements(info.name, name, count));
        }
    }
    Ok(())
}

/// An index tensor of an operator and the sizes its values address
/// ([`Operator::index_bounds`]).
///
/// Value `k` of the tensor, in row-major order, addresses a dimension of
/// size `n = sizes[k % sizes.len()]`: it must lie in `[-n, n - 1]` for a
/// signed index type (negative values count from the end) and in
/// `[0, n - 1]` for an unsigned one; anything else is
/// [`OpError::IndexOutOfRange`] at run time, or, where the pattern says so
/// ([`OutOfRange::Ignored`]: OneHot), selects nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexBounds {
    /// The index tensor, by input position.
    pub tensor: usize,
    /// The tensor whose dimensions the values address, by its position
    /// among the operator's tensors, inputs first (an input; OneHot's
    /// output).
    pub addresses: usize,
    /// The addressed sizes, cycling over the tensor's elements (one per
    /// tuple coordinate for GatherND, a single one for Scatter).
    pub sizes: Vec<u32>,
    /// What a value outside the bounds means.
    pub out_of_range: OutOfRange,
}

/// What an index value outside its [`IndexBounds`] means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfRange {
    /// An [`OpError::IndexOutOfRange`] (Gather, Scatter and their kin).
    Error,
    /// Nothing: the value selects no position (OneHot's all-off rows).
    Ignored,
}

/// A tensor declaration of a spec with optional or variadic tensors
/// ([`OperatorInfo::groups`]): `input min: optional tensor` admits 0 or 1
/// tensor, `input data: tensor[1..=4]` 1 to 4 (`data_0`, `data_1`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorGroup {
    /// The declared name (`data`).
    pub name: &'static str,
    /// The seed's name of the declaration.
    pub seed: &'static str,
    /// An output declaration.
    pub output: bool,
    /// The fewest tensors it admits.
    pub min: u32,
    /// The most.
    pub max: u32,
    /// How many this instance has.
    pub count: u32,
}

/// The static side of a generated descriptor.
pub trait OperatorType: Operator + Clone + Sized + 'static {
    /// Static facts about the operator.
    const INFO: &'static OperatorInfo;

    /// Builds a descriptor from dynamic arguments (case files, fuzzers).
    fn from_args(args: &OpArgs) -> Result<Self, OpError>;
}

/// Static facts about an operator, and its dynamic entry points.
pub struct OperatorInfo {
    /// The spec's name (`ArgMin`).
    pub name: &'static str,
    /// Which instance of a spec with optional or variadic tensors this is:
    /// the suffix of its descriptor type (`NoMin` for `ClipNoMinDesc`, `3`
    /// for `Sum3Desc`); `""` for other specs. Instances share the spec's
    /// name; [`OperatorInfo::groups`] tells them apart.
    pub instance: &'static str,
    /// Every tensor declaration of the spec, in spec order, with how many
    /// tensors it stands for in this instance; empty when each stands for
    /// exactly one tensor.
    pub groups: &'static [TensorGroup],
    /// The catalog namespace: the spec's folder below the catalog's root,
    /// `""` for the root (DirectML and the others), `"onnx"` for
    /// `specs/onnx/`. Names are unique within a namespace only
    /// (`ArgMax` and `onnx::ArgMax`).
    pub namespace: &'static str,
    /// Other names it answers to (`ScatterElements`).
    pub aliases: &'static [&'static str],
    /// Input tensor names, snake case, in spec order.
    pub inputs: &'static [&'static str],
    /// Output tensor names, snake case, in spec order.
    pub outputs: &'static [&'static str],
    /// The level that introduced the operator, if it has levels.
    pub introduced: Option<FeatureLevel>,
    /// Every generated kernel.
    pub kernels: &'static [&'static Kernel],
    /// Builds a boxed descriptor from dynamic arguments.
    pub build: fn(&OpArgs) -> Result<Box<dyn Operator>, OpError>,
    /// Every tensor, inputs then outputs, in spec order.
    pub tensors: &'static [TensorInfo],
    /// Every attribute, in spec order.
    pub attrs: &'static [AttrInfo],
    /// The tensor support table.
    pub table: &'static crate::support::SupportTable,
    /// The spec's rules, as `validate` runs them (the fuzzers read which
    /// tensors and attributes each rule depends on).
    pub rules: &'static [crate::expr::Step],
    /// True when its inputs may carry strides ([`TensorDesc::strides`]:
    /// DirectML's broadcasting, padding and layouts); other operators read
    /// packed inputs only. Outputs are always packed.
    pub strided_inputs: bool,
}

impl OperatorInfo {
    /// Checks every tensor's layout (`tensors` as [`OperatorInfo::tensors`]
    /// orders them): strides, where given, one per dimension, on inputs only
    /// and only where [`OperatorInfo::strided_inputs`] allows them, and a
    /// strided buffer of at most 2^32 - 1 elements (DirectML's limit on a
    /// buffer tensor).
    pub fn check_layouts(&self, tensors: &[&TensorDesc]) -> Result<(), ValidationError> {
        for (info, t) in self.tensors.iter().zip(tensors) {
            let fail = |rule: String| ValidationError {
                operator: self.name,
                rule,
                detail: format!(
                    "{} has sizes {:?} and strides {:?}",
                    info.seed, t.sizes, t.strides
                ),
            };
            if t.strides.is_none() {
                continue;
            }
            t.check_strides()
                .map_err(|e| fail(format!("{}: {e}", info.seed)))?;
            if t.is_packed() {
                continue;
            }
            if info.output {
                return Err(fail(format!(
                    "{} is written packed: {} takes no Strides but the packed ones",
                    self.name, info.seed
                )));
            }
            if !self.strided_inputs {
                return Err(fail(format!(
                    "{} reads packed tensors: {} takes no Strides but the packed ones",
                    self.name, info.seed
                )));
            }
            if t.buffer_elements().is_none_or(|n| n > u64::from(u32::MAX)) {
                return Err(fail(format!(
                    "a buffer tensor may not exceed 2^32 - 1 elements: {} spans more",
                    info.seed
                )));
            }
        }
        Ok(())
    }
}

/// A tensor of an operator, as its spec declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// Snake-case name (`input`).
    pub name: &'static str,
    /// The seed's name (`InputTensor`).
    pub seed: &'static str,
    /// An output (else an input).
    pub output: bool,
    /// Values read on the host (the descriptor holds its data).
    pub host: bool,
}

/// The kind of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    /// One integer; `signed` for `i32`/`i64`.
    Int {
        /// Negative values are representable.
        signed: bool,
    },
    /// A list of integers.
    List {
        /// Negative values are representable.
        signed: bool,
    },
    /// A boolean.
    Bool,
    /// A float (`f32` or `f64` in the spec): arithmetic only, never read by
    /// the rules.
    Float,
    /// A number of a tensor's data type (`scalar(t)` in the spec, a
    /// [`crate::Number`]): an integer, exact over INT64 and UINT64, or a
    /// float. Arithmetic only, never read by the rules.
    Number,
    /// An enum, by member names.
    Enum(&'static [&'static str]),
}

/// An attribute of an operator, as its spec declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrInfo {
    /// Snake-case name (`axes`).
    pub name: &'static str,
    /// The seed's name (`Axes`).
    pub seed: &'static str,
    /// Its kind.
    pub kind: AttrKind,
    /// It has a default (may be left out).
    pub has_default: bool,
}

impl fmt::Debug for OperatorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperatorInfo")
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl OperatorInfo {
    /// True when tensor `tensor` (spec order) is an output the caller
    /// describes (a spec's `given tensor`): no `shape` rule computes its
    /// sizes, so nothing infers it and the rules check the caller's.
    pub fn is_given(&self, tensor: usize) -> bool {
        self.tensors.get(tensor).is_some_and(|t| t.output)
            && !self
                .rules
                .iter()
                .any(|s| matches!(s, crate::expr::Step::Shape { tensor: t, .. } if *t == tensor))
    }

    /// The tensors of the declaration that tensor `tensor` (spec order)
    /// belongs to: the first one's index and their number (`tensor`
    /// and 1 for a declaration of one tensor).
    pub fn group_of(&self, tensor: usize) -> (usize, usize) {
        let n_in = self.tensors.iter().filter(|t| !t.output).count();
        // Groups are in declaration order; tensors are inputs, then outputs.
        for (output, mut first) in [(false, 0), (true, n_in)] {
            for g in self.groups.iter().filter(|g| g.output == output) {
                let n = g.count as usize;
                if (first..first + n).contains(&tensor) {
                    return (first, n);
                }
                first += n;
            }
        }
        (tensor, 1)
    }

    /// The name qualified by the namespace: `onnx::ArgMax`, or `ArgMin`
    /// for the root namespace.
    pub fn qualified_name(&self) -> String {
        if self.namespace.is_empty() {
            self.name.to_owned()
        } else {
            format!("{}::{}", self.namespace, self.name)
        }
    }

    /// [`OperatorInfo::qualified_name`] with the instance of a spec with
    /// optional or variadic tensors (`onnx::Clip[NoMin]`, `onnx::Sum[3]`),
    /// for messages.
    pub fn instance_name(&self) -> String {
        if self.instance.is_empty() {
            self.qualified_name()
        } else {
            format!("{}[{}]", self.qualified_name(), self.instance)
        }
    }

    /// The instance of this operator's spec in `catalog` whose inputs are
    /// exactly `names` (in any order): for a spec with optional or variadic
    /// tensors, the one a caller with those tensors wants (`onnx::Clip`
    /// given `input` and `max` is `onnx::Clip[NoMin]`); `self` when it
    /// has them, `None` when no instance does.
    pub fn instance_with_inputs(
        &'static self,
        catalog: &[&'static OperatorInfo],
        names: &[&str],
    ) -> Option<&'static OperatorInfo> {
        self.instance_with(catalog, names, None)
    }

    /// [`OperatorInfo::instance_with_inputs`] whose outputs are also
    /// exactly `outputs`, when given (ONNX Split's instances differ only in
    /// their outputs).
    pub fn instance_with(
        &'static self,
        catalog: &[&'static OperatorInfo],
        names: &[&str],
        outputs: Option<&[&str]>,
    ) -> Option<&'static OperatorInfo> {
        let same = |have: &[&str], want: &[&str]| {
            have.len() == want.len() && have.iter().all(|n| want.contains(n))
        };
        let has =
            |i: &OperatorInfo| same(i.inputs, names) && outputs.is_none_or(|o| same(i.outputs, o));
        if has(self) {
            return Some(self);
        }
        catalog
            .iter()
            .copied()
            .find(|i| i.namespace == self.namespace && i.name == self.name && has(i))
    }

    /// True when `name` is the operator's name or an alias, ignoring case,
    /// qualified by the operator's namespace (`onnx::ArgMax`) unless that
    /// is the root namespace (`ArgMin`).
    pub fn answers_to(&self, name: &str) -> bool {
        // Longer than any name this operator answers to (a hostile case
        // file's): no need to read it.
        let longest = self
            .aliases
            .iter()
            .map(|a| a.len())
            .fold(self.name.len(), usize::max);
        if name.len() > self.namespace.len() + 2 + longest {
            return false;
        }
        let bare = match name.rsplit_once("::") {
            Some((ns, bare)) if ns.eq_ignore_ascii_case(self.namespace) => bare,
            Some(_) => return false,
            None if self.namespace.is_empty() => name,
            None => return false,
        };
        self.name.eq_ignore_ascii_case(bare)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(bare))
    }
}

/// A dynamic attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// An integer.
    Int(i128),
    /// A list of integers.
    Ints(Vec<i128>),
    /// A boolean.
    Bool(bool),
    /// A float.
    Float(f64),
    /// An enum member, by name (matched without regard to case).
    Enum(String),
}

/// Dynamic arguments for building a descriptor: tensor descriptions by
/// snake-case name, host data for tensors the operator reads on the host,
/// and attributes by snake-case name.
///
/// An output left out of `tensors` is inferred from the spec's rules; when
/// the rules do not give its data type (ArgMin's output), name it in
/// `output_dtypes` and only its sizes are inferred.
#[derive(Clone, Debug, Default)]
pub struct OpArgs {
    /// Tensor descriptions, inputs and outputs.
    pub tensors: BTreeMap<String, TensorDesc>,
    /// Data types of outputs whose sizes are to be inferred (the builder's
    /// `<output>_dtype` setters); ignored for outputs given in `tensors`.
    pub output_dtypes: BTreeMap<String, DataType>,
    /// Host data, for tensors whose values the descriptor needs.
    pub host_data: BTreeMap<String, HostTensor>,
    /// Attributes.
    pub attributes: BTreeMap<String, AttrValue>,
}
