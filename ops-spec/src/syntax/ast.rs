//! The syntax tree of a spec file, with spans.

use crate::diag::Span;

/// A name and where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    /// The text.
    pub text: String,
    /// The span.
    pub span: Span,
}

/// A whole spec file.
#[derive(Clone, Debug, Default)]
pub struct SpecFile {
    /// Doc lines before `operator`.
    pub docs: Vec<String>,
    /// The operator's name.
    pub name: Option<Name>,
    /// Items in order.
    pub items: Vec<Item>,
    /// The whole `operator { .. }` span.
    pub span: Span,
}

/// A top-level item of the operator block.
#[derive(Clone, Debug)]
pub enum Item {
    /// `source "..."`
    Source(String, Span),
    /// `aliases A, B`
    Aliases(Vec<Name>),
    /// `introduced 3.0`
    Introduced(String, Span),
    /// `input x: tensor "Seed"` / `output ...`
    Tensor(TensorDecl),
    /// `attr x: type = default "Seed"`
    Attr(AttrDecl),
    /// `enum E { A, B }`
    Enum(EnumDecl),
    /// `rules { .. }`
    Rules(Vec<RuleDecl>, Span),
    /// `support { .. }`
    Support(Vec<EntryDecl>, Span),
    /// `compute pattern { .. }`
    Compute(ComputeDecl),
}

/// A tensor declaration.
#[derive(Clone, Debug)]
pub struct TensorDecl {
    /// Doc lines.
    pub docs: Vec<String>,
    /// True for `output`.
    pub output: bool,
    /// True for `host tensor` (values read on the host).
    pub host: bool,
    /// True for `given tensor`: an output whose sizes the caller gives
    /// (DirectML's caller-described `OutputTensors`); rules check them.
    pub given: bool,
    /// Name.
    pub name: Name,
    /// The seed's name (`InputTensor`).
    pub seed: Option<String>,
    /// How many tensors the declaration stands for, when it is not exactly
    /// one: `optional tensor` is `0..=1`, `tensor[1..=4]` a variadic list
    /// (see [`crate::syntax::instances`]).
    pub count: Option<RangeLit>,
}

/// An attribute type as written.
#[derive(Clone, Debug)]
pub struct TypeRef {
    /// Base name (`u32`, `bool`, an enum).
    pub base: Name,
    /// `[]` follows.
    pub list: bool,
    /// `scalar(output)`: the tensor whose data type the value has.
    pub of: Option<Name>,
}

/// An attribute declaration.
#[derive(Clone, Debug)]
pub struct AttrDecl {
    /// Doc lines.
    pub docs: Vec<String>,
    /// Name.
    pub name: Name,
    /// Type.
    pub ty: TypeRef,
    /// Default value.
    pub default: Option<Expr>,
    /// The seed's name.
    pub seed: Option<String>,
}

/// An enum declaration.
#[derive(Clone, Debug)]
pub struct EnumDecl {
    /// Doc lines.
    pub docs: Vec<String>,
    /// Name.
    pub name: Name,
    /// Members.
    pub members: Vec<Name>,
}

/// A rule of the `rules` block.
#[derive(Clone, Debug)]
pub enum RuleDecl {
    /// `let x = e;`
    Let(Name, Expr),
    /// `require e => "msg";`
    Require(Expr, String, Span),
    /// `shape out = e => "msg";`
    Shape(Name, Expr, String, Span),
    /// `dtype out = e => "msg";`
    DType(Name, Expr, String, Span),
    /// `for t in list { rules }` or `for k, t in list { rules }`: the rules
    /// once per tensor of a variadic list, `t` naming it and `k` its
    /// position (unrolled by [`crate::syntax::instances`]).
    For(Option<Name>, Name, Name, Vec<RuleDecl>, Span),
}

/// An inclusive range `a..=b` or a single `a`.
#[derive(Clone, Copy, Debug)]
pub struct RangeLit {
    /// Low end.
    pub lo: i128,
    /// High end.
    pub hi: i128,
    /// The span.
    pub span: Span,
}

/// One entry of the `support` block.
#[derive(Clone, Debug)]
pub struct EntryDecl {
    /// `when attr in [A, B] { .. }` around the entry: the selector
    /// attribute and the members the entry applies to.
    pub when: Option<(Name, Vec<Name>)>,
    /// `level 3.0`, if any.
    pub level: Option<(String, Span)>,
    /// `ranks 1..=8`.
    pub ranks: Option<RangeLit>,
    /// Rows.
    pub rows: Vec<RowDecl>,
    /// The entry's span.
    pub span: Span,
}

/// A row of a support entry: `input: FLOAT32 FLOAT16 [ranks 0..=1];`
#[derive(Clone, Debug)]
pub struct RowDecl {
    /// The tensor.
    pub tensor: Name,
    /// The data types.
    pub dtypes: Vec<Name>,
    /// Per-tensor ranks.
    pub ranks: Option<RangeLit>,
    /// The row's span.
    pub span: Span,
}

/// `compute pattern { key: value ... }`
#[derive(Clone, Debug)]
pub struct ComputeDecl {
    /// Doc lines (the decisions the spec documents).
    pub docs: Vec<String>,
    /// Pattern name.
    pub pattern: Name,
    /// Parameters.
    pub params: Vec<Param>,
    /// `compute switch attr { A, B: pattern { .. } ... }`: the enum
    /// attribute and each arm's members and computation (`pattern` is
    /// `switch`, `params` empty).
    pub switch: Option<(Name, Vec<SwitchArm>)>,
    /// The block's span.
    pub span: Span,
}

/// One arm of a `compute switch`: its enum members and computation.
pub type SwitchArm = (Vec<Name>, ComputeDecl);

/// One compute parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// Key.
    pub key: Name,
    /// Value.
    pub value: ParamValue,
}

/// A parameter value.
#[derive(Clone, Debug)]
pub enum ParamValue {
    /// An expression (often a bare name).
    Expr(Expr),
    /// `attr { MEMBER: value, ... }`: a value chosen by an enum attribute.
    Map(Name, Vec<(Name, Name)>),
}

/// A cast's target type as written.
#[derive(Clone, Debug)]
pub enum CastType {
    /// A name: `FLOAT32`, `T`.
    Name(Name),
    /// `max(T, FLOAT32)`: the two names, and the span of the whole form.
    Max(Name, Name, Span),
}

/// An expression with its span.
#[derive(Clone, Debug)]
pub struct Expr {
    /// The kind.
    pub kind: ExprKind,
    /// The span.
    pub span: Span,
}

/// Expression kinds.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Integer literal.
    Int(i128),
    /// Decimal literal (`0.5`), as written.
    Decimal(String),
    /// `true` / `false`.
    Bool(bool),
    /// A name.
    Name(String),
    /// `f(args)`
    Call(Name, Vec<Expr>),
    /// `cast<TYPE>(e)`: the type as written, and the operand.
    Cast(CastType, Box<Expr>),
    /// `e.field`
    Field(Box<Expr>, Name),
    /// `e[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `e[a..b]`
    Slice(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Unary `-` or `!`.
    Unary(&'static str, Box<Expr>),
    /// Binary operator.
    Binary(&'static str, Box<Expr>, Box<Expr>),
    /// `if c { a } else { b }`
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `all(v in a..b: body)`
    All(Name, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `[for v in a..b if f: body]`
    ListFor(Name, Box<Expr>, Box<Expr>, Option<Box<Expr>>, Box<Expr>),
    /// `[a, b]`
    List(Vec<Expr>),
}
