//! The lowered model of a spec: names resolved, expressions typed.

use ops_core::{DataType, FeatureLevel};

use crate::diag::Span;

/// A lowered spec.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Operator name (`ArgMin`).
    pub name: String,
    /// The instance's suffix of Rust names and kernel keys (`NoMin`, `3`;
    /// `""` for a spec without optional or variadic tensors; see
    /// [`crate::syntax::instances`]).
    pub suffix: String,
    /// Every tensor declaration's count in this instance (empty without
    /// optional or variadic tensors).
    pub groups: Vec<crate::syntax::instances::Group>,
    /// Doc lines.
    pub docs: Vec<String>,
    /// The seed document.
    pub source: Option<String>,
    /// Other names.
    pub aliases: Vec<String>,
    /// Introduction level.
    pub introduced: Option<(FeatureLevel, Span)>,
    /// Tensors: inputs first, then outputs, each in declaration order.
    pub tensors: Vec<Tensor>,
    /// Attributes.
    pub attrs: Vec<Attr>,
    /// Enums.
    pub enums: Vec<Enum>,
    /// Validation steps.
    pub steps: Vec<Step>,
    /// Variable slots used by the steps.
    pub slots: usize,
    /// Support table entries as written.
    pub support: Vec<Entry>,
    /// The computation.
    pub compute: Option<Compute>,
    /// Span of the `support` block (or the operator).
    pub support_span: Span,
    /// Span of the operator.
    pub span: Span,
}

impl Spec {
    /// The base of the instance's Rust names: the name and its suffix
    /// (`Clip`, `ClipNoMin`, `Sum3`).
    pub fn ident(&self) -> String {
        format!("{}{}", self.name, self.suffix)
    }

    /// The spec of one arm of a `compute switch`: named
    /// `{name}.{FIRST_MEMBER}` (its kernel keys), with the support entries
    /// that apply to its members and the arm's computation.
    pub fn arm(&self, attr: usize, members: &[u32], compute: &Compute) -> Spec {
        let mut spec = self.clone();
        let enum_of = match self.attrs[attr].ty {
            AttrType::Enum(e) => Some(&self.enums[e]),
            _ => None,
        };
        let first = members
            .first()
            .and_then(|&m| enum_of.and_then(|e| e.members.get(m as usize)))
            .map_or("?", |m| m.as_str());
        spec.name = format!("{}.{first}", self.name);
        spec.support.retain(|e| match &e.when {
            None => true,
            Some((_, when, _)) => members.iter().any(|m| when.contains(m)),
        });
        spec.compute = Some(compute.clone());
        spec
    }
}

/// A tensor.
#[derive(Clone, Debug)]
pub struct Tensor {
    /// Snake-case name.
    pub name: String,
    /// The seed's name.
    pub seed: String,
    /// Output or input.
    pub output: bool,
    /// Values read on the host.
    pub host: bool,
    /// An output whose sizes (and data type) the caller gives, as DirectML's
    /// callers describe `OutputTensors`: no `shape` rule computes it, the
    /// rules check it, and the builder requires it.
    pub given: bool,
    /// Doc lines.
    pub docs: Vec<String>,
    /// Where declared.
    pub span: Span,
}

/// An integer attribute's Rust type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntKind {
    /// `u32`
    U32,
    /// `i32`
    I32,
    /// `i64`
    I64,
}

/// An attribute type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrType {
    /// One integer.
    Int(IntKind),
    /// A list of integers.
    List(IntKind),
    /// A boolean.
    Bool,
    /// A float: `f32` (false) or `f64` (true). Arithmetic only: rules never
    /// read one.
    Float(bool),
    /// An enum, by index.
    Enum(usize),
    /// `scalar(t)`: a number of tensor `t`'s data type, exactly (DirectML's
    /// `DML_SCALAR_UNION` read as that type). Arithmetic only: rules never
    /// read one.
    Scalar(usize),
}

/// A constant (attribute default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Const {
    /// Integer.
    Int(i128),
    /// List.
    List(Vec<i128>),
    /// Boolean.
    Bool(bool),
    /// Float, by its `f64` bits.
    Float(u64),
    /// Enum member.
    Enum(u32),
}

/// An attribute.
#[derive(Clone, Debug)]
pub struct Attr {
    /// Snake-case name.
    pub name: String,
    /// Type.
    pub ty: AttrType,
    /// Default.
    pub default: Option<Const>,
    /// The seed's name.
    pub seed: String,
    /// Doc lines.
    pub docs: Vec<String>,
    /// Where declared.
    pub span: Span,
}

/// An enum.
#[derive(Clone, Debug)]
pub struct Enum {
    /// Name.
    pub name: String,
    /// Members (SCREAMING_CASE as the seed writes them).
    pub members: Vec<String>,
    /// Doc lines.
    pub docs: Vec<String>,
}

/// The type of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// Integer.
    Int,
    /// Boolean.
    Bool,
    /// List of integers.
    List,
    /// Data type.
    DType,
    /// Enum member.
    Enum(usize),
}

impl Ty {
    /// Name for messages.
    pub fn describe(self, spec_enums: &[Enum]) -> String {
        match self {
            Ty::Int => "an integer".into(),
            Ty::Bool => "a boolean".into(),
            Ty::List => "a list".into(),
            Ty::DType => "a data type".into(),
            Ty::Enum(e) => format!("`{}`", spec_enums.get(e).map_or("?", |e| e.name.as_str())),
        }
    }
}

pub use ops_core::expr::{ArithOp, CmpOp, Func};

/// A typed rule expression: the one tree type of rules, which the compiler
/// builds while lowering (nodes leaked for its lifetime) and generated code
/// holds in statics.
pub use ops_core::expr::Expr;

/// A validation step.
#[derive(Clone, Debug)]
pub enum Step {
    /// `require`
    Require {
        /// Condition.
        cond: Expr,
        /// Message.
        message: String,
    },
    /// `let`
    Let {
        /// Slot.
        var: usize,
        /// Value.
        value: Expr,
    },
    /// `shape`
    Shape {
        /// Output tensor.
        tensor: usize,
        /// Sizes.
        sizes: Expr,
        /// Message.
        message: String,
    },
    /// `dtype`
    DType {
        /// Output tensor.
        tensor: usize,
        /// Data type.
        dtype: Expr,
        /// Message.
        message: String,
    },
}

/// A support table entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// `when attr in [..]`: the selector attribute and its members.
    pub when: Option<(usize, Vec<u32>, Span)>,
    /// Level, if any.
    pub level: Option<(FeatureLevel, Span)>,
    /// Ranks.
    pub ranks: (i128, i128, Span),
    /// Rows.
    pub rows: Vec<Row>,
    /// Span.
    pub span: Span,
}

/// A support row.
#[derive(Clone, Debug)]
pub struct Row {
    /// Tensor index.
    pub tensor: usize,
    /// Data types.
    pub dtypes: Vec<DataType>,
    /// Per-tensor ranks.
    pub ranks: Option<(i128, i128, Span)>,
    /// Span.
    pub span: Span,
}

/// The computation.
#[derive(Clone, Debug)]
pub enum Compute {
    /// `compute switch attr { .. }`: a computation per member of an enum
    /// attribute.
    Switch {
        /// The enum attribute.
        attr: usize,
        /// Each arm's members and computation (never a switch).
        arms: Vec<(Vec<u32>, Compute)>,
    },
    /// `compute <family> { .. }`: a block of one of the
    /// [`crate::family::FAMILIES`].
    Pattern(Box<dyn crate::family::Pattern>),
}

impl Compute {
    /// True when every computation reads strided inputs.
    pub fn strided_inputs(&self) -> bool {
        match self {
            Compute::Switch { arms, .. } => arms.iter().all(|(_, c)| c.strided_inputs()),
            Compute::Pattern(p) => p.strided_inputs(),
        }
    }
}
