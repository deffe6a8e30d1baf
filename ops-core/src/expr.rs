//! Shape rules as data: the expression language of spec files, evaluated at
//! run time against a descriptor.
//!
//! `ops-spec` type-checks every rule at compile time and emits it as a
//! `static` tree of [`Expr`]; generated `validate` walks the [`Step`]s here.
//! Evaluation cannot fail on a well-typed tree except for out-of-range list
//! indices, slices or arithmetic overflow, which make the rule fail with a
//! message saying so.

use std::fmt;
use std::rc::Rc;

use crate::{DataType, TensorDesc, ValidationError};

/// A value of the rule language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// An integer.
    Int(i128),
    /// A boolean.
    Bool(bool),
    /// A list of integers.
    List(Vec<i128>),
    /// A data type.
    DType(DataType),
    /// A member of an enum attribute, by index.
    Enum(u32),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::List(v) => write!(f, "{}", ListText(v)),
            Value::DType(t) => write!(f, "{t}"),
            Value::Enum(i) => write!(f, "#{i}"),
        }
    }
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (floor division; division by zero fails the rule)
    Div,
    /// `%`
    Rem,
}

/// Built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// `len(list)`
    Len,
    /// `contains(list, int)`
    Contains,
    /// `unique(list)`: no value occurs twice
    Unique,
    /// `product(list)`
    Product,
    /// `sum(list)`
    Sum,
    /// `min(int, int)`
    Min,
    /// `max(int, int)`
    Max,
    /// `is_signed(dtype)`: a signed integer type
    IsSigned,
    /// `is_float(dtype)`
    IsFloat,
    /// `normalize(list, rank)`: each negative value `v` becomes `v + rank`
    Normalize,
    /// `range(lo, hi)`: the list `[lo, hi)`
    Range,
    /// `broadcastable(a, b)`: two shapes are compatible under
    /// multidirectional (numpy, ONNX) broadcasting: right-aligned, each
    /// pair of dimensions equal or one of them 1
    Broadcastable,
    /// `broadcast(a, b)`: the shape two broadcastable shapes broadcast
    /// to (the longer rank; per right-aligned dimension the one that is
    /// not 1); the rule fails on shapes that are not broadcastable
    Broadcast,
}

/// The shape `a` and `b` broadcast to under multidirectional broadcasting,
/// or `None` when a pair of right-aligned dimensions differs and neither is
/// 1.
pub fn broadcast_shapes(a: &[i128], b: &[i128]) -> Option<Vec<i128>> {
    let r = a.len().max(b.len());
    let at = |l: &[i128], d: usize| -> i128 {
        match (d + l.len()).checked_sub(r) {
            Some(i) => l[i],
            None => 1,
        }
    };
    (0..r)
        .map(|d| match (at(a, d), at(b, d)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// An expression of the rule language, as static data.
#[derive(Clone, Copy, Debug)]
pub enum Expr {
    /// An integer literal.
    Int(i128),
    /// A boolean literal.
    Bool(bool),
    /// A data type literal.
    DType(DataType),
    /// An enum member literal.
    Enum(u32),
    /// Attribute `i` of the descriptor.
    Attr(usize),
    /// Variable slot `i` (a `let` or a loop variable).
    Var(usize),
    /// `rank(t)` of tensor `i`.
    Rank(usize),
    /// `t.sizes` of tensor `i`.
    Sizes(usize),
    /// `dtype(t)` of tensor `i`.
    TensorDType(usize),
    /// `values(t)` of host tensor `i`.
    Values(usize),
    /// `list[i]`
    Index(&'static Expr, &'static Expr),
    /// `list[a..b]`
    Slice(&'static Expr, &'static Expr, &'static Expr),
    /// `a ++ b`
    Concat(&'static Expr, &'static Expr),
    /// `-a`
    Neg(&'static Expr),
    /// `!a`
    Not(&'static Expr),
    /// `a && b`
    And(&'static Expr, &'static Expr),
    /// `a || b`
    Or(&'static Expr, &'static Expr),
    /// Arithmetic on integers.
    Arith(ArithOp, &'static Expr, &'static Expr),
    /// A comparison, with the source text of both sides for messages.
    Cmp(
        CmpOp,
        &'static Expr,
        &'static Expr,
        &'static str,
        &'static str,
    ),
    /// `if c { a } else { b }`
    If(&'static Expr, &'static Expr, &'static Expr),
    /// A built-in function call, with the source text of the arguments.
    Call(Func, &'static [Expr], &'static [&'static str]),
    /// `all(v in lo..hi: body)`, the variable's slot and name.
    All {
        /// Slot of the bound variable.
        var: usize,
        /// Its name, for messages.
        name: &'static str,
        /// Lower bound (inclusive).
        lo: &'static Expr,
        /// Upper bound (exclusive).
        hi: &'static Expr,
        /// Condition that must hold for every value.
        body: &'static Expr,
    },
    /// `[for v in lo..hi if filter: body]`
    ListFor {
        /// Slot of the bound variable.
        var: usize,
        /// Lower bound (inclusive).
        lo: &'static Expr,
        /// Upper bound (exclusive).
        hi: &'static Expr,
        /// Optional filter.
        filter: Option<&'static Expr>,
        /// Element expression.
        body: &'static Expr,
    },
    /// `[a, b, c]`
    List(&'static [Expr]),
}

/// One step of a descriptor's validation, in spec order.
#[derive(Debug)]
pub enum Step {
    /// A condition that must hold.
    Require {
        /// The condition.
        cond: Expr,
        /// The rule in the seed's words.
        message: &'static str,
    },
    /// `let` binds a variable slot.
    Let {
        /// The slot.
        var: usize,
        /// The value.
        value: Expr,
    },
    /// The sizes of an output tensor (inferred by the builder, checked by `validate`).
    Shape {
        /// The output tensor.
        tensor: usize,
        /// Its sizes.
        sizes: Expr,
        /// The rule in the seed's words.
        message: &'static str,
    },
    /// The data type of an output tensor (inferred by the builder, checked by `validate`).
    DType {
        /// The output tensor.
        tensor: usize,
        /// Its data type.
        dtype: Expr,
        /// The rule in the seed's words.
        message: &'static str,
    },
}

/// A list while a rule is evaluated: borrowed from the environment (an
/// attribute, a host tensor's values) or shared (sizes, computed lists), so
/// that reading a list, indexing it or binding it to a variable never copies
/// it.
#[derive(Clone, Debug)]
enum List<'a> {
    Borrowed(&'a [i128]),
    Shared(Rc<[i128]>),
}

impl std::ops::Deref for List<'_> {
    type Target = [i128];

    fn deref(&self) -> &[i128] {
        match self {
            List::Borrowed(l) => l,
            List::Shared(l) => l,
        }
    }
}

impl<'a> List<'a> {
    fn owned(v: Vec<i128>) -> List<'a> {
        List::Shared(v.into())
    }
}

/// A value while a rule is evaluated: a [`Value`] whose lists are [`List`]s.
#[derive(Clone, Debug)]
enum Val<'a> {
    Int(i128),
    Bool(bool),
    List(List<'a>),
    DType(DataType),
    Enum(u32),
}

impl Val<'_> {
    fn to_value(&self) -> Value {
        match self {
            Val::Int(v) => Value::Int(*v),
            Val::Bool(v) => Value::Bool(*v),
            Val::List(l) => Value::List(l.to_vec()),
            Val::DType(t) => Value::DType(*t),
            Val::Enum(i) => Value::Enum(*i),
        }
    }
}

impl fmt::Display for Val<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v}"),
            Val::Bool(v) => write!(f, "{v}"),
            Val::List(l) => write!(f, "{}", ListText(l)),
            Val::DType(t) => write!(f, "{t}"),
            Val::Enum(i) => write!(f, "#{i}"),
        }
    }
}

/// Lists of more values than this are shown by their first values and
/// their length in messages.
const LIST_SHOWN: usize = 16;

/// A list as messages show it: `[1, 2, 3]`, or for a long one its first
/// [`LIST_SHOWN`] values and its length, so that a message stays short
/// whatever the input.
struct ListText<'l>(&'l [i128]);

impl fmt::Display for ListText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() <= LIST_SHOWN {
            return write!(f, "{:?}", self.0);
        }
        let head: Vec<String> = self.0[..LIST_SHOWN].iter().map(i128::to_string).collect();
        write!(f, "[{}, ... ({} values)]", head.join(", "), self.0.len())
    }
}

/// The most steps one [`Env`] evaluates: each iteration of an `all` or a
/// list comprehension and each list value a built-in reads or makes is one.
///
/// Rules iterate over dimensions and over lists of a few per dimension
/// (axes, pads, a shape), so a descriptor within the support tables' ranks
/// takes a few thousand steps at most; nested iterations over a list a user
/// made huge (200,000 `axes`) would take time quadratic in its length. Past
/// this budget the evaluation fails, so validation time is bounded whatever
/// the descriptor holds.
pub const RULE_STEPS: u64 = 1 << 22;

/// What a rule is evaluated against.
///
/// Evaluation is linear in what a rule reads: lists are borrowed from the
/// environment or shared between values, never copied to be read, and a
/// tensor's sizes are made into a list once, on first use. Its work is
/// bounded by [`RULE_STEPS`].
pub struct Env<'a> {
    /// Tensor descriptions, in spec order (inputs then outputs).
    tensors: &'a [&'a TensorDesc],
    /// Tensor names, for messages.
    tensor_names: &'a [&'static str],
    /// Values of host-read tensors (`None` for device tensors).
    host_values: &'a [Option<Vec<i128>>],
    /// Attribute values, in spec order.
    attrs: &'a [Value],
    /// Each tensor's sizes as a list, once asked for.
    sizes: Vec<Option<Rc<[i128]>>>,
    /// Variable slots.
    vars: Vec<Val<'a>>,
    /// Steps evaluated so far ([`RULE_STEPS`]).
    steps: u64,
}

/// Why an evaluation could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError(pub String);

type R<T> = Result<T, EvalError>;

fn err<T>(msg: impl Into<String>) -> R<T> {
    Err(EvalError(msg.into()))
}

impl<'a> Env<'a> {
    /// An environment with `slots` variable slots.
    pub fn new(
        tensors: &'a [&'a TensorDesc],
        tensor_names: &'a [&'static str],
        host_values: &'a [Option<Vec<i128>>],
        attrs: &'a [Value],
        slots: usize,
    ) -> Env<'a> {
        Env {
            tensors,
            tensor_names,
            host_values,
            attrs,
            sizes: vec![None; tensors.len()],
            vars: vec![Val::Int(0); slots],
            steps: 0,
        }
    }

    /// Counts `n` steps against [`RULE_STEPS`]; past it, fails naming the
    /// longest list the descriptor holds.
    fn spend(&mut self, n: usize) -> R<()> {
        self.steps = self.steps.saturating_add(n as u64);
        if self.steps <= RULE_STEPS {
            return Ok(());
        }
        let hosts = self.host_values.iter().enumerate().filter_map(|(t, v)| {
            let v = v.as_ref()?;
            Some((v.len(), format!("`values({})`", self.tensor_names[t])))
        });
        let attrs = self.attrs.iter().filter_map(|a| match a {
            Value::List(l) => Some((l.len(), "an attribute".to_string())),
            _ => None,
        });
        let longest = hosts
            .chain(attrs)
            .max_by_key(|(n, _)| *n)
            .map(|(n, what)| format!(" ({what} holds {n} values)"))
            .unwrap_or_default();
        err(format!(
            "evaluating the rules takes more than {RULE_STEPS} steps{longest}"
        ))
    }

    /// Evaluates an expression.
    pub fn eval(&mut self, e: &Expr) -> R<Value> {
        Ok(self.val(e)?.to_value())
    }

    /// Evaluates `e` into variable slot `var` (a `let`).
    pub fn bind(&mut self, var: usize, e: &Expr) -> R<()> {
        let v = self.val(e)?;
        self.vars[var] = v;
        Ok(())
    }

    /// Tensor `t`'s sizes as a list, made on first use.
    fn sizes_of(&mut self, t: usize) -> Rc<[i128]> {
        let tensors = self.tensors;
        self.sizes[t]
            .get_or_insert_with(|| tensors[t].sizes.iter().map(|&s| i128::from(s)).collect())
            .clone()
    }

    fn val(&mut self, e: &Expr) -> R<Val<'a>> {
        Ok(match e {
            Expr::Int(v) => Val::Int(*v),
            Expr::Bool(v) => Val::Bool(*v),
            Expr::DType(t) => Val::DType(*t),
            Expr::Enum(i) => Val::Enum(*i),
            Expr::Attr(i) => {
                let attrs: &'a [Value] = self.attrs;
                match &attrs[*i] {
                    Value::Int(v) => Val::Int(*v),
                    Value::Bool(v) => Val::Bool(*v),
                    Value::List(l) => Val::List(List::Borrowed(l)),
                    Value::DType(t) => Val::DType(*t),
                    Value::Enum(m) => Val::Enum(*m),
                }
            }
            Expr::Var(i) => self.vars[*i].clone(),
            Expr::Rank(t) => Val::Int(self.tensors[*t].rank() as i128),
            Expr::Sizes(t) => Val::List(List::Shared(self.sizes_of(*t))),
            Expr::TensorDType(t) => Val::DType(self.tensors[*t].dtype),
            Expr::Values(t) => {
                let host: &'a [Option<Vec<i128>>] = self.host_values;
                match &host[*t] {
                    Some(v) => Val::List(List::Borrowed(v)),
                    None => {
                        let dtype = self.tensors[*t].dtype;
                        let why = if dtype.is_float() {
                            format!(": its data type {dtype} is not an integer type")
                        } else {
                            String::new()
                        };
                        return err(format!(
                            "the values of `{}` are not known{why}",
                            self.tensor_names[*t]
                        ));
                    }
                }
            }
            Expr::Index(l, i) => {
                let l = self.list_val(l)?;
                let i = self.int(i)?;
                match usize::try_from(i).ok().and_then(|i| l.get(i)) {
                    Some(v) => Val::Int(*v),
                    None => {
                        return err(format!("index {i} is outside a list of length {}", l.len()))
                    }
                }
            }
            Expr::Slice(l, a, b) => {
                let l = self.list_val(l)?;
                let (a, b) = (self.int(a)?, self.int(b)?);
                let range = usize::try_from(a)
                    .ok()
                    .zip(usize::try_from(b).ok())
                    .filter(|&(a, b)| a <= b && b <= l.len());
                let Some((a, b)) = range else {
                    return err(format!(
                        "slice {a}..{b} is outside a list of length {}",
                        l.len()
                    ));
                };
                Val::List(match l {
                    List::Borrowed(l) => List::Borrowed(&l[a..b]),
                    List::Shared(l) => {
                        self.spend(b - a)?;
                        List::owned(l[a..b].to_vec())
                    }
                })
            }
            Expr::Concat(a, b) => {
                let (a, b) = (self.list_val(a)?, self.list_val(b)?);
                self.spend(a.len() + b.len())?;
                let mut v = Vec::with_capacity(a.len() + b.len());
                v.extend_from_slice(&a);
                v.extend_from_slice(&b);
                Val::List(List::owned(v))
            }
            Expr::Neg(a) => Val::Int(self.int(a)?.checked_neg().ok_or_else(overflow)?),
            Expr::Not(a) => Val::Bool(!self.bool(a)?),
            Expr::And(a, b) => Val::Bool(self.bool(a)? && self.bool(b)?),
            Expr::Or(a, b) => Val::Bool(self.bool(a)? || self.bool(b)?),
            Expr::Arith(op, a, b) => {
                let (a, b) = (self.int(a)?, self.int(b)?);
                let v = match op {
                    ArithOp::Add => a.checked_add(b),
                    ArithOp::Sub => a.checked_sub(b),
                    ArithOp::Mul => a.checked_mul(b),
                    ArithOp::Div => (b != 0).then(|| a.div_euclid(b)),
                    ArithOp::Rem => (b != 0).then(|| a.rem_euclid(b)),
                };
                Val::Int(v.ok_or_else(overflow)?)
            }
            Expr::Cmp(op, a, b, _, _) => {
                let (a, b) = (self.val(a)?, self.val(b)?);
                if let (Val::List(a), Val::List(b)) = (&a, &b) {
                    self.spend(a.len().min(b.len()))?;
                }
                Val::Bool(compare(*op, &a, &b))
            }
            Expr::If(c, a, b) => {
                if self.bool(c)? {
                    self.val(a)?
                } else {
                    self.val(b)?
                }
            }
            Expr::Call(f, args, _) => self.call(*f, args)?,
            Expr::All {
                var, lo, hi, body, ..
            } => {
                let (lo, hi) = (self.int(lo)?, self.int(hi)?);
                let mut ok = true;
                for v in lo..hi {
                    self.spend(1)?;
                    self.vars[*var] = Val::Int(v);
                    if !self.bool(body)? {
                        ok = false;
                        break;
                    }
                }
                Val::Bool(ok)
            }
            Expr::ListFor {
                var,
                lo,
                hi,
                filter,
                body,
            } => {
                let (lo, hi) = (self.int(lo)?, self.int(hi)?);
                let mut out = Vec::new();
                for v in lo..hi {
                    self.spend(1)?;
                    self.vars[*var] = Val::Int(v);
                    if let Some(f) = filter {
                        if !self.bool(f)? {
                            continue;
                        }
                    }
                    out.push(self.int(body)?);
                }
                Val::List(List::owned(out))
            }
            Expr::List(items) => Val::List(List::owned(
                items.iter().map(|e| self.int(e)).collect::<R<_>>()?,
            )),
        })
    }

    fn call(&mut self, f: Func, args: &[Expr]) -> R<Val<'a>> {
        Ok(match f {
            Func::Len => Val::Int(self.list_val(&args[0])?.len() as i128),
            Func::Contains => {
                let l = self.list_val(&args[0])?;
                let v = self.int(&args[1])?;
                self.spend(l.len())?;
                Val::Bool(l.contains(&v))
            }
            Func::Unique => {
                let mut l = self.list_val(&args[0])?.to_vec();
                let n = l.len();
                self.spend(n)?;
                l.sort_unstable();
                l.dedup();
                Val::Bool(l.len() == n)
            }
            Func::Product => {
                // Zero-aware, as `element_count`: a 0 makes 0 whatever the
                // order of the other values.
                let l = self.list_val(&args[0])?;
                self.spend(l.len())?;
                if l.contains(&0) {
                    Val::Int(0)
                } else {
                    Val::Int(
                        l.iter()
                            .try_fold(1i128, |a, &b| a.checked_mul(b))
                            .ok_or_else(overflow)?,
                    )
                }
            }
            Func::Sum => Val::Int({
                let l = self.list_val(&args[0])?;
                self.spend(l.len())?;
                l.iter()
                    .try_fold(0i128, |a, &b| a.checked_add(b))
                    .ok_or_else(overflow)?
            }),
            Func::Min => Val::Int(self.int(&args[0])?.min(self.int(&args[1])?)),
            Func::Max => Val::Int(self.int(&args[0])?.max(self.int(&args[1])?)),
            Func::IsSigned => Val::Bool(self.dtype(&args[0])?.is_signed_int()),
            Func::IsFloat => Val::Bool(self.dtype(&args[0])?.is_float()),
            Func::Normalize => {
                let l = self.list_val(&args[0])?;
                let r = self.int(&args[1])?;
                self.spend(l.len())?;
                let l = l
                    .iter()
                    .map(|&v| if v < 0 { v.checked_add(r) } else { Some(v) })
                    .collect::<Option<Vec<i128>>>()
                    .ok_or_else(overflow)?;
                Val::List(List::owned(l))
            }
            Func::Range => {
                let (a, b) = (self.int(&args[0])?, self.int(&args[1])?);
                if b.checked_sub(a).is_none_or(|n| n > 1 << 20) {
                    return err("range too long");
                }
                self.spend(usize::try_from(b.saturating_sub(a).max(0)).unwrap_or(usize::MAX))?;
                Val::List(List::owned((a..b.max(a)).collect()))
            }
            Func::Broadcastable => {
                let (a, b) = (self.list_val(&args[0])?, self.list_val(&args[1])?);
                self.spend(a.len().max(b.len()))?;
                Val::Bool(broadcast_shapes(&a, &b).is_some())
            }
            Func::Broadcast => {
                let (a, b) = (self.list_val(&args[0])?, self.list_val(&args[1])?);
                self.spend(a.len().max(b.len()))?;
                match broadcast_shapes(&a, &b) {
                    Some(l) => Val::List(List::owned(l)),
                    None => {
                        return err(format!(
                            "{} and {} do not broadcast",
                            ListText(&a),
                            ListText(&b)
                        ))
                    }
                }
            }
        })
    }

    /// Evaluates to an integer.
    pub fn int(&mut self, e: &Expr) -> R<i128> {
        match self.val(e)? {
            Val::Int(v) => Ok(v),
            v => err(format!("expected an integer, got {v}")),
        }
    }

    /// Evaluates to a boolean.
    pub fn bool(&mut self, e: &Expr) -> R<bool> {
        match self.val(e)? {
            Val::Bool(v) => Ok(v),
            v => err(format!("expected a boolean, got {v}")),
        }
    }

    fn list_val(&mut self, e: &Expr) -> R<List<'a>> {
        match self.val(e)? {
            Val::List(v) => Ok(v),
            v => err(format!("expected a list, got {v}")),
        }
    }

    /// Evaluates to a list.
    pub fn list(&mut self, e: &Expr) -> R<Vec<i128>> {
        Ok(self.list_val(e)?.to_vec())
    }

    /// Evaluates to a data type.
    pub fn dtype(&mut self, e: &Expr) -> R<DataType> {
        match self.val(e)? {
            Val::DType(v) => Ok(v),
            v => err(format!("expected a data type, got {v}")),
        }
    }

    /// The value of `e` as messages show it, or why it has none.
    fn text(&mut self, e: &Expr) -> String {
        self.val(e).map(|v| v.to_string()).unwrap_or_else(|e| e.0)
    }

    /// Why a condition is false: the values of its operands, by their source text.
    pub fn explain(&mut self, e: &Expr) -> String {
        match e {
            Expr::Cmp(_, a, b, ta, tb) => {
                let va = self.text(a);
                let vb = self.text(b);
                if literal(b) {
                    format!("`{ta}` is {va}")
                } else if literal(a) {
                    format!("`{tb}` is {vb}")
                } else {
                    format!("`{ta}` is {va}, `{tb}` is {vb}")
                }
            }
            Expr::Call(_, args, texts) => args
                .iter()
                .zip(texts.iter())
                .filter(|(a, _)| !literal(a))
                .map(|(a, t)| format!("`{t}` is {}", self.text(a)))
                .collect::<Vec<_>>()
                .join(", "),
            Expr::And(a, b) => {
                if matches!(self.bool(a), Ok(true)) {
                    self.explain(b)
                } else {
                    self.explain(a)
                }
            }
            Expr::Not(a) => format!("not {}", self.explain(a)),
            // Every side is false: say why each is, each reason once
            // (`to == 1 || to == 2 || ...` explains itself as "`to` is 8").
            Expr::Or(..) => {
                let mut sides = Vec::new();
                let mut stack = vec![e];
                while let Some(x) = stack.pop() {
                    match x {
                        Expr::Or(a, b) => stack.extend([*b, *a]),
                        _ => sides.push(x),
                    }
                }
                let mut reasons: Vec<String> = Vec::new();
                for side in sides {
                    let r = self.explain(side);
                    if !reasons.contains(&r) {
                        reasons.push(r);
                    }
                }
                reasons.join(" and ")
            }
            Expr::All {
                var,
                name,
                lo,
                hi,
                body,
            } => {
                let (Ok(lo), Ok(hi)) = (self.int(lo), self.int(hi)) else {
                    return "its bounds could not be evaluated".into();
                };
                for v in lo..hi {
                    self.vars[*var] = Val::Int(v);
                    if !matches!(self.bool(body), Ok(true)) {
                        return format!("{} (for {name} = {v})", self.explain(body));
                    }
                }
                "it holds".into()
            }
            _ => match self.val(e) {
                Ok(_) => "it does not hold".into(),
                Err(e) => e.0,
            },
        }
    }

    /// Runs validation steps in order; the first failure is returned.
    pub fn run_steps(
        &mut self,
        operator: &'static str,
        steps: &[Step],
    ) -> Result<(), ValidationError> {
        for step in steps {
            match step {
                Step::Require { cond, message } => match self.bool(cond) {
                    Ok(true) => {}
                    Ok(false) => {
                        let detail = self.explain(cond);
                        return Err(fail(operator, message, detail));
                    }
                    Err(e) => return Err(fail(operator, message, e.0)),
                },
                Step::Let { var, value } => {
                    if let Err(e) = self.bind(*var, value) {
                        return Err(fail(operator, "a shape rule could not be evaluated", e.0));
                    }
                }
                Step::Shape {
                    tensor,
                    sizes,
                    message,
                } => {
                    let want = self
                        .list_val(sizes)
                        .map_err(|e| fail(operator, message, e.0))?;
                    let got = &self.tensors[*tensor].sizes;
                    let same = want.len() == got.len()
                        && want.iter().zip(got).all(|(&w, &g)| w == i128::from(g));
                    if !same {
                        let name = self.tensor_names[*tensor];
                        let got: Vec<i128> = got.iter().map(|&s| i128::from(s)).collect();
                        return Err(fail(
                            operator,
                            message,
                            format!(
                                "`{name}.sizes` is {}, expected {}",
                                ListText(&got),
                                ListText(&want)
                            ),
                        ));
                    }
                }
                Step::DType {
                    tensor,
                    dtype,
                    message,
                } => {
                    let want = self
                        .dtype(dtype)
                        .map_err(|e| fail(operator, message, e.0))?;
                    let got = self.tensors[*tensor].dtype;
                    if want != got {
                        let name = self.tensor_names[*tensor];
                        return Err(fail(
                            operator,
                            message,
                            format!("`dtype({name})` is {got}, expected {want}"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

fn literal(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Int(_) | Expr::Bool(_) | Expr::DType(_) | Expr::Enum(_)
    )
}

fn overflow() -> EvalError {
    EvalError("arithmetic overflow or division by zero".into())
}

fn fail(operator: &'static str, rule: &str, detail: String) -> ValidationError {
    ValidationError {
        operator,
        rule: rule.to_string(),
        detail,
    }
}

fn compare(op: CmpOp, a: &Val<'_>, b: &Val<'_>) -> bool {
    let ord = match (a, b) {
        (Val::Int(a), Val::Int(b)) => a.cmp(b),
        (Val::List(a), Val::List(b)) => a[..].cmp(&b[..]),
        _ => {
            let eq = match (a, b) {
                (Val::Bool(a), Val::Bool(b)) => a == b,
                (Val::DType(a), Val::DType(b)) => a == b,
                (Val::Enum(a), Val::Enum(b)) => a == b,
                _ => false,
            };
            return match op {
                CmpOp::Eq => eq,
                CmpOp::Ne => !eq,
                _ => false,
            };
        }
    };
    match op {
        CmpOp::Eq => ord.is_eq(),
        CmpOp::Ne => ord.is_ne(),
        CmpOp::Lt => ord.is_lt(),
        CmpOp::Le => ord.is_le(),
        CmpOp::Gt => ord.is_gt(),
        CmpOp::Ge => ord.is_ge(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static AXES_LT_RANK: Expr = Expr::All {
        var: 0,
        name: "i",
        lo: &Expr::Int(0),
        hi: &Expr::Call(Func::Len, &[Expr::Attr(0)], &["axes"]),
        body: &Expr::Cmp(
            CmpOp::Lt,
            &Expr::Index(&Expr::Attr(0), &Expr::Var(0)),
            &Expr::Rank(0),
            "axes[i]",
            "rank(input)",
        ),
    };

    /// `all(i in 0..len(axes): contains(axes, i))`: quadratic in `axes`.
    static QUADRATIC: Expr = Expr::All {
        var: 0,
        name: "i",
        lo: &Expr::Int(0),
        hi: &Expr::Call(Func::Len, &[Expr::Attr(0)], &["axes"]),
        body: &Expr::Call(
            Func::Contains,
            &[Expr::Attr(0), Expr::Var(0)],
            &["axes", "i"],
        ),
    };

    #[test]
    fn evaluation_stops_past_its_step_budget() {
        let t = TensorDesc::new(DataType::Float32, [3, 3]);
        let tensors = [&t];
        // 1,000 axes: 1,000 iterations of 1,000 steps each, within budget.
        let attrs = [Value::List((0..1000).collect())];
        let mut env = Env::new(&tensors, &["input"], &[None], &attrs, 1);
        assert_eq!(env.bool(&QUADRATIC), Ok(true));
        // 1,000,000 axes would take 10^12 steps: refused after RULE_STEPS.
        let attrs = [Value::List((0..1_000_000).collect())];
        let mut env = Env::new(&tensors, &["input"], &[None], &attrs, 1);
        let e = env.bool(&QUADRATIC).unwrap_err();
        assert_eq!(
            e.0,
            format!(
                "evaluating the rules takes more than {RULE_STEPS} steps (an attribute holds 1000000 values)"
            )
        );
        assert!(env.steps <= RULE_STEPS + 1_000_000);
    }

    #[test]
    fn all_explains_the_failing_element() {
        let t = TensorDesc::new(DataType::Float32, [3, 3]);
        let tensors = [&t];
        let attrs = [Value::List(vec![0, 5])];
        let mut env = Env::new(&tensors, &["input"], &[None], &attrs, 1);
        assert_eq!(env.bool(&AXES_LT_RANK), Ok(false));
        assert_eq!(
            env.explain(&AXES_LT_RANK),
            "`axes[i]` is 5, `rank(input)` is 2 (for i = 1)"
        );
    }

    /// A chain of `||` says why each side is false, each reason once.
    #[test]
    fn or_chains_explain_each_reason_once() {
        static TO: Expr = Expr::Attr(0);
        static ONE_OF: Expr = Expr::Or(
            &Expr::Or(
                &Expr::Cmp(CmpOp::Eq, &TO, &Expr::Int(1), "to", "1"),
                &Expr::Cmp(CmpOp::Eq, &TO, &Expr::Int(2), "to", "2"),
            ),
            &Expr::Or(
                &Expr::Cmp(CmpOp::Eq, &TO, &Expr::Int(3), "to", "3"),
                &Expr::Cmp(CmpOp::Lt, &Expr::Rank(0), &Expr::Int(1), "rank(x)", "1"),
            ),
        );
        let t = TensorDesc::new(DataType::Float32, [3, 3]);
        let tensors = [&t];
        let attrs = [Value::Int(8)];
        let mut env = Env::new(&tensors, &["x"], &[None], &attrs, 0);
        assert_eq!(env.bool(&ONE_OF), Ok(false));
        assert_eq!(env.explain(&ONE_OF), "`to` is 8 and `rank(x)` is 2");
    }

    #[test]
    fn product_with_a_zero_is_zero_in_any_order() {
        static BIG_FIRST: Expr = Expr::Call(Func::Product, &[Expr::Sizes(0)], &["t.sizes"]);
        let m = u32::MAX;
        for sizes in [[m, m, m, m, 0], [0, m, m, m, m]] {
            let t = TensorDesc::new(DataType::Float32, sizes);
            let tensors = [&t];
            let mut env = Env::new(&tensors, &["t"], &[None], &[], 0);
            assert_eq!(env.int(&BIG_FIRST), Ok(0), "{sizes:?}");
        }
        let t = TensorDesc::new(DataType::Float32, [m, m, m, m, 2]);
        let tensors = [&t];
        let mut env = Env::new(&tensors, &["t"], &[None], &[], 0);
        assert!(env.int(&BIG_FIRST).is_err());
    }

    #[test]
    fn long_lists_are_shown_short() {
        let v = Value::List((0..1000).collect());
        assert_eq!(
            v.to_string(),
            "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ... (1000 values)]"
        );
        assert_eq!(Value::List(vec![1, 2]).to_string(), "[1, 2]");
    }

    #[test]
    fn index_out_of_range_is_an_error_not_a_panic() {
        static E: Expr = Expr::Index(&Expr::Sizes(0), &Expr::Int(7));
        let t = TensorDesc::new(DataType::Float32, [3]);
        let tensors = [&t];
        let mut env = Env::new(&tensors, &["input"], &[None], &[], 0);
        assert!(env.eval(&E).is_err());
    }
}
