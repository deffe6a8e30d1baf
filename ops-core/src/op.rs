//! The traits generated operators implement, and their dynamic form.

use std::collections::BTreeMap;
use std::fmt;

use crate::{FeatureLevel, GpuPlan, HostTensor, Kernel, OpError, TensorDesc, ValidationError};

/// A descriptor generated from a spec file.
pub trait Operator: Clone + fmt::Debug + Send + Sync + 'static {
    /// Static facts about the operator.
    const INFO: &'static OperatorInfo;

    /// Checks the descriptor against the rules and the tensor support table of `level`.
    fn validate(&self, level: FeatureLevel) -> Result<(), ValidationError>;

    /// The lowest feature level whose table admits this descriptor, if any does.
    fn min_feature_level(&self) -> Option<FeatureLevel>;

    /// The input tensor descriptions, in spec order.
    fn input_descs(&self) -> Vec<TensorDesc>;

    /// The output tensor descriptions, in spec order.
    fn output_descs(&self) -> Vec<TensorDesc>;

    /// Runs the CPU reference.
    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError>;

    /// The GPU plan for this descriptor. The inputs are given for operators
    /// with host-read tensors; a plan never depends on device data.
    fn gpu_plan(&self) -> Result<GpuPlan, OpError>;

    /// Phrases the error for index check `check` failing at element `position`
    /// of its tensor (the GPU reports only the position).
    fn index_error(&self, inputs: &[&HostTensor], check: usize, position: u64) -> OpError;

    /// Builds a descriptor from dynamic arguments (case files, fuzzers).
    fn from_args(args: &OpArgs) -> Result<Self, OpError>;
}

/// Static facts about an operator, and its dynamic entry points.
pub struct OperatorInfo {
    /// The spec's name (`ArgMin`).
    pub name: &'static str,
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
    pub build: fn(&OpArgs) -> Result<Box<dyn DynOperator>, OpError>,
}

impl fmt::Debug for OperatorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperatorInfo")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl OperatorInfo {
    /// True when `name` is the operator's name or an alias, ignoring case.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// An object-safe view of an [`Operator`].
pub trait DynOperator: fmt::Debug + Send + Sync {
    /// Static facts.
    fn info(&self) -> &'static OperatorInfo;
    /// See [`Operator::validate`].
    fn validate(&self, level: FeatureLevel) -> Result<(), ValidationError>;
    /// See [`Operator::min_feature_level`].
    fn min_feature_level(&self) -> Option<FeatureLevel>;
    /// See [`Operator::input_descs`].
    fn input_descs(&self) -> Vec<TensorDesc>;
    /// See [`Operator::output_descs`].
    fn output_descs(&self) -> Vec<TensorDesc>;
    /// See [`Operator::run_cpu`].
    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError>;
    /// See [`Operator::gpu_plan`].
    fn gpu_plan(&self) -> Result<GpuPlan, OpError>;
    /// See [`Operator::index_error`].
    fn index_error(&self, inputs: &[&HostTensor], check: usize, position: u64) -> OpError;
}

impl<O: Operator> DynOperator for O {
    fn info(&self) -> &'static OperatorInfo {
        O::INFO
    }
    fn validate(&self, level: FeatureLevel) -> Result<(), ValidationError> {
        Operator::validate(self, level)
    }
    fn min_feature_level(&self) -> Option<FeatureLevel> {
        Operator::min_feature_level(self)
    }
    fn input_descs(&self) -> Vec<TensorDesc> {
        Operator::input_descs(self)
    }
    fn output_descs(&self) -> Vec<TensorDesc> {
        Operator::output_descs(self)
    }
    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        Operator::run_cpu(self, inputs)
    }
    fn gpu_plan(&self) -> Result<GpuPlan, OpError> {
        Operator::gpu_plan(self)
    }
    fn index_error(&self, inputs: &[&HostTensor], check: usize, position: u64) -> OpError {
        Operator::index_error(self, inputs, check, position)
    }
}

/// A dynamic attribute value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrValue {
    /// An integer.
    Int(i128),
    /// A list of integers.
    Ints(Vec<i128>),
    /// A boolean.
    Bool(bool),
    /// An enum member, by name (matched without regard to case).
    Enum(String),
}

/// Dynamic arguments for building a descriptor: tensor descriptions by
/// snake-case name, host data for tensors the operator reads on the host,
/// and attributes by snake-case name.
#[derive(Clone, Debug, Default)]
pub struct OpArgs {
    /// Tensor descriptions, inputs and outputs.
    pub tensors: BTreeMap<String, TensorDesc>,
    /// Host data, for tensors whose values the descriptor needs.
    pub host_data: BTreeMap<String, HostTensor>,
    /// Attributes.
    pub attributes: BTreeMap<String, AttrValue>,
}
