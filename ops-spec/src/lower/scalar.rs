//! Lowering a pattern's arithmetic: names resolved and every node typed
//! ([`ops_core::scalar`], "Types").
//!
//! Two passes over the expression, each linear in its size. The first
//! ([`Lower::synth`]) resolves names and synthesises each node's type from
//! below: a variable's from the environment, a cast's target, BOOL for a
//! comparison, the operands' (which must agree) for arithmetic, and none
//! for a literal, an attribute or `lowest`/`highest` (and their
//! `finite_` forms), whose type comes
//! from their context. The second ([`Lower::build`]) hands each node the
//! type its context gives it (the other operand's, the cast's target,
//! the pattern's), checks literals against it and builds the static tree.

use ops_core::scalar::{AttrScalar, Binary, Scalar, Ty, Unary, Var};
use ops_core::DataType;

use super::{leak, Lower};
use crate::diag::{near_miss, Diagnostic, Errors, Span};
use crate::model::AttrType;
use crate::syntax::ast::{self, ExprKind};

/// What a pattern's arithmetic may use, and at which types: the names of
/// its type parameters (index = [`Ty::Param`]) with what each stands for,
/// and its variables with their types.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScalarEnv<'a> {
    /// `("T", "the data type of `input`")`, ...
    pub params: &'a [(&'a str, &'a str)],
    /// The variables the parameter may use, and their types.
    pub vars: &'a [(Var, Ty)],
    /// The names a spec writes for variables, where not their own (an
    /// element-wise pattern's inputs are named by their tensors).
    pub names: &'a [(&'a str, Var)],
    /// The type of each tensor the pattern reads or writes, by spec index:
    /// what a `scalar(t)` attribute is.
    pub tensors: &'a [(usize, Ty)],
    /// The data types the support tables bind each type parameter to
    /// (index = [`Ty::Param`]): a cast to `max(T, FLOAT32)` needs them to
    /// be floats.
    pub bound: &'a [Vec<DataType>],
}

impl ScalarEnv<'_> {
    /// The name a spec writes for `v`.
    fn var_name(&self, v: Var) -> &str {
        self.names
            .iter()
            .find(|(_, x)| *x == v)
            .map_or(v.name(), |(n, _)| n)
    }

    /// The variable a spec's name stands for.
    fn var_named(&self, n: &str) -> Option<Var> {
        match self.names.iter().find(|(s, _)| *s == n) {
            Some(&(_, v)) => Some(v),
            None => Var::ALL.iter().copied().find(|v| v.name() == n),
        }
    }

    /// The name of a type in messages (`FLOAT32`, `T`, `max(T, FLOAT32)`).
    pub(crate) fn name(&self, t: Ty) -> String {
        let param = |i: u8| {
            self.params
                .get(usize::from(i))
                .map_or_else(|| format!("T{i}"), |p| p.0.to_string())
        };
        match t {
            Ty::Data(d) => d.spec_name().to_string(),
            Ty::Param(i) => param(i),
            Ty::AtLeast(i, d) => format!("max({}, {})", param(i), d.spec_name()),
        }
    }
}

/// A node after the first pass: kind, span and synthesised type (`None`:
/// the context's).
struct Node {
    kind: Kind,
    span: Span,
    ty: Option<Ty>,
}

enum Kind {
    Var(Var),
    /// An integer literal, its sign applied.
    Int(i128),
    /// A decimal literal: its text (no sign) and whether it is negated.
    Decimal(String, bool),
    Bool(bool),
    Attr(u16, AttrScalar, String),
    Lowest,
    Highest,
    FiniteLowest,
    FiniteHighest,
    Unary(Unary, Box<Node>),
    Binary(Binary, Box<Node>, Box<Node>),
    Select(Box<Node>, Box<Node>, Box<Node>),
    Cast(Ty, Box<Node>),
}

impl Kind {
    fn is_literal(&self) -> bool {
        matches!(self, Kind::Int(_) | Kind::Decimal(..))
    }
}

const BOOL: Ty = Ty::Data(DataType::Bool);

impl Lower<'_> {
    /// Every data type the support tables list for tensor `t` (what a
    /// type parameter that is `t`'s data type is bound to:
    /// [`ScalarEnv::bound`]).
    pub(crate) fn listed_types(&self, t: usize) -> Vec<DataType> {
        let mut out: Vec<DataType> = Vec::new();
        for e in &self.spec.support {
            for row in e.rows.iter().filter(|r| r.tensor == t) {
                for &d in &row.dtypes {
                    if !out.contains(&d) {
                        out.push(d);
                    }
                }
            }
        }
        out
    }

    /// Lowers a pattern's arithmetic (see [`ops_core::scalar`]): `key` names
    /// the parameter in messages, `env` gives its variables and type
    /// parameters, and `want` is the type the pattern needs of its value.
    pub(crate) fn lower_scalar(
        &self,
        e: &ast::Expr,
        key: &str,
        env: &ScalarEnv<'_>,
        want: Ty,
        errors: &mut Errors,
    ) -> Option<&'static Scalar> {
        let node = self.synth(e, key, env, errors)?;
        if let Some(t) = node.ty {
            if t != want {
                let d = Diagnostic::new(
                    e.span,
                    format!(
                        "`{key}` is {}, but the pattern needs {}",
                        describe(env, t),
                        describe(env, want)
                    ),
                );
                errors.push(d.help(format!(
                    "convert it: `cast<{}>({})`",
                    env.name(want),
                    self.text(e.span)
                )));
                return None;
            }
        }
        build(&node, want, want, errors)
    }

    /// The first pass: names resolved, types synthesised and checked where
    /// both operands have one.
    fn synth(
        &self,
        e: &ast::Expr,
        key: &str,
        env: &ScalarEnv<'_>,
        errors: &mut Errors,
    ) -> Option<Node> {
        let go = |e: &ast::Expr, errors: &mut Errors| self.synth(e, key, env, errors);
        let node = |kind: Kind, ty: Option<Ty>| Node {
            kind,
            span: e.span,
            ty,
        };
        Some(match &e.kind {
            ExprKind::Int(v) => node(Kind::Int(*v), None),
            ExprKind::Decimal(d) => node(Kind::Decimal(d.clone(), false), None),
            ExprKind::Bool(b) => node(Kind::Bool(*b), Some(BOOL)),
            ExprKind::Name(n) => {
                if let Some(v) = env.var_named(n) {
                    let Some(&(_, ty)) = env.vars.iter().find(|(x, _)| *x == v) else {
                        let allowed: Vec<String> = env
                            .vars
                            .iter()
                            .map(|(v, _)| format!("`{}`", env.var_name(*v)))
                            .collect();
                        errors.push(
                            Diagnostic::new(e.span, format!("`{key}` cannot use `{n}`")).help(
                                if allowed.is_empty() {
                                    format!("`{key}` is a constant")
                                } else {
                                    format!("`{key}` sees {}", allowed.join(", "))
                                },
                            ),
                        );
                        return None;
                    };
                    node(Kind::Var(v), Some(ty))
                } else if let Some(i) = self.spec.attrs.iter().position(|a| &a.name == n) {
                    let (kind, ty) = match self.spec.attrs[i].ty {
                        AttrType::Int(_) => (AttrScalar::Int, None),
                        AttrType::Float(_) => (AttrScalar::Float, None),
                        AttrType::Bool => (AttrScalar::Bool, Some(BOOL)),
                        // A value of its tensor's type, as a variable is.
                        AttrType::Scalar(t) => match env.tensors.iter().find(|x| x.0 == t) {
                            Some(&(_, ty)) => (AttrScalar::Number, Some(ty)),
                            None => {
                                errors.error(
                                    e.span,
                                    format!(
                                        "`{n}` holds a value of `{}`'s data type, which `{key}` does not read or write",
                                        self.spec.tensors[t].name
                                    ),
                                );
                                return None;
                            }
                        },
                        AttrType::List(_) | AttrType::Enum(_) => {
                            errors.error(
                                e.span,
                                format!("`{n}` is a list or an enum: arithmetic reads numbers and booleans"),
                            );
                            return None;
                        }
                    };
                    let Ok(i) = u16::try_from(i) else {
                        errors.error(e.span, "too many attributes");
                        return None;
                    };
                    node(Kind::Attr(i, kind, n.clone()), ty)
                } else if n == "lowest" {
                    node(Kind::Lowest, None)
                } else if n == "highest" {
                    node(Kind::Highest, None)
                } else if n == "finite_lowest" {
                    node(Kind::FiniteLowest, None)
                } else if n == "finite_highest" {
                    node(Kind::FiniteHighest, None)
                } else {
                    let mut cands: Vec<&str> =
                        env.vars.iter().map(|(v, _)| env.var_name(*v)).collect();
                    cands.extend(["lowest", "highest", "finite_lowest", "finite_highest"]);
                    let d = Diagnostic::new(e.span, format!("unknown name `{n}` in `{key}`"));
                    errors.push(match near_miss(n, cands.iter().copied()) {
                        Some(m) => d.help(format!("did you mean `{m}`?")),
                        None => d.help(format!("`{key}` may use {}", cands.join(", "))),
                    });
                    return None;
                }
            }
            ExprKind::Unary("-", a) => match &a.kind {
                ExprKind::Int(v) => node(Kind::Int(-*v), None),
                ExprKind::Decimal(d) => node(Kind::Decimal(d.clone(), true), None),
                _ => {
                    let a = go(a, errors)?;
                    let ty = a.ty;
                    node(Kind::Unary(Unary::Neg, Box::new(a)), ty)
                }
            },
            ExprKind::Unary("~", a) => {
                let a = go(a, errors)?;
                let ty = a.ty;
                node(Kind::Unary(Unary::BitNot, Box::new(a)), ty)
            }
            ExprKind::Unary(_, a) => {
                let a = go(a, errors)?;
                expect_bool(&a, env, errors)?;
                node(Kind::Unary(Unary::Not, Box::new(a)), Some(BOOL))
            }
            ExprKind::Binary(op, a, b) => {
                let bin = match *op {
                    "+" => Binary::Add,
                    "-" => Binary::Sub,
                    "*" => Binary::Mul,
                    "/" => Binary::Div,
                    "%" => Binary::Rem,
                    "==" => Binary::Eq,
                    "!=" => Binary::Ne,
                    "<" => Binary::Lt,
                    "<=" => Binary::Le,
                    ">" => Binary::Gt,
                    ">=" => Binary::Ge,
                    "&&" => Binary::And,
                    "||" => Binary::Or,
                    "&" => Binary::BitAnd,
                    "|" => Binary::BitOr,
                    "^" => Binary::BitXor,
                    "<<" => Binary::Shl,
                    ">>" => Binary::Shr,
                    other => {
                        errors.error(e.span, format!("`{other}` is not arithmetic"));
                        return None;
                    }
                };
                let (x, y) = (go(a, errors), go(b, errors));
                let (x, y) = (x?, y?);
                let ty = if bin.is_logical() {
                    let (okx, oky) = (expect_bool(&x, env, errors), expect_bool(&y, env, errors));
                    okx?;
                    oky?;
                    Some(BOOL)
                } else {
                    let t = unify(&x, &y, e.span, env, errors)?;
                    if bin.is_comparison() {
                        Some(BOOL)
                    } else {
                        t
                    }
                };
                node(Kind::Binary(bin, Box::new(x), Box::new(y)), ty)
            }
            ExprKind::If(c, a, b) => {
                let (c, x, y) = (go(c, errors), go(a, errors), go(b, errors));
                let (c, x, y) = (c?, x?, y?);
                expect_bool(&c, env, errors)?;
                let ty = unify(&x, &y, e.span, env, errors)?;
                node(Kind::Select(Box::new(c), Box::new(x), Box::new(y)), ty)
            }
            ExprKind::Cast(ty, a) => {
                let target = cast_target(ty, env, errors);
                let a = go(a, errors);
                let target = target?;
                node(Kind::Cast(target, Box::new(a?)), Some(target))
            }
            ExprKind::Call(f, args) => {
                const UNARY: &[(&str, Unary)] = &[
                    ("neg", Unary::Neg),
                    ("abs", Unary::Abs),
                    ("sqrt", Unary::Sqrt),
                    ("exp", Unary::Exp),
                    ("log", Unary::Log),
                    ("floor", Unary::Floor),
                    ("ceil", Unary::Ceil),
                    ("round", Unary::Round),
                    ("tanh", Unary::Tanh),
                ];
                const BINARY: &[(&str, Binary)] = &[
                    ("min", Binary::Min),
                    ("max", Binary::Max),
                    ("pow", Binary::Pow),
                ];
                let arity = |n: usize, errors: &mut Errors| {
                    if args.len() != n {
                        errors.error(
                            e.span,
                            format!(
                                "`{}` takes {n} argument{}",
                                f.text,
                                if n == 1 { "" } else { "s" }
                            ),
                        );
                        false
                    } else {
                        true
                    }
                };
                if let Some((_, op)) = UNARY.iter().find(|(n, _)| *n == f.text) {
                    if !arity(1, errors) {
                        return None;
                    }
                    let a = go(&args[0], errors)?;
                    let ty = a.ty;
                    node(Kind::Unary(*op, Box::new(a)), ty)
                } else if let Some((_, op)) = BINARY.iter().find(|(n, _)| *n == f.text) {
                    if !arity(2, errors) {
                        return None;
                    }
                    let (x, y) = (go(&args[0], errors), go(&args[1], errors));
                    let (x, y) = (x?, y?);
                    // `pow`'s exponent may have a type of its own
                    // (`ops_core::scalar::Binary::Pow`).
                    let ty = match (*op, x.ty, y.ty) {
                        (Binary::Pow, Some(t), Some(_)) => Some(t),
                        _ => unify(&x, &y, e.span, env, errors)?,
                    };
                    node(Kind::Binary(*op, Box::new(x), Box::new(y)), ty)
                } else if f.text == "select" {
                    if !arity(3, errors) {
                        return None;
                    }
                    let c = go(&args[0], errors);
                    let (x, y) = (go(&args[1], errors), go(&args[2], errors));
                    let (c, x, y) = (c?, x?, y?);
                    expect_bool(&c, env, errors)?;
                    let ty = unify(&x, &y, e.span, env, errors)?;
                    node(Kind::Select(Box::new(c), Box::new(x), Box::new(y)), ty)
                } else {
                    let mut names: Vec<&str> = UNARY.iter().map(|u| u.0).collect();
                    names.extend(BINARY.iter().map(|b| b.0));
                    names.extend(["select", "cast<TYPE>"]);
                    let d = Diagnostic::new(
                        f.span,
                        format!("unknown function `{}` in `{key}`", f.text),
                    );
                    errors.push(match near_miss(&f.text, names.iter().copied()) {
                        Some(m) => d.help(format!("did you mean `{m}`?")),
                        None => d.help(format!("functions: {}", names.join(", "))),
                    });
                    return None;
                }
            }
            _ => {
                let vars: Vec<String> = env
                    .vars
                    .iter()
                    .map(|(v, _)| format!("`{}`", v.name()))
                    .collect();
                errors.error(
                    e.span,
                    format!(
                        "`{key}` is arithmetic on {}",
                        if vars.is_empty() {
                            "literals".to_string()
                        } else {
                            vars.join(", ")
                        }
                    ),
                );
                return None;
            }
        })
    }
}

/// A cast's target: `T`, a data type's spec name, or `max(T, FLOAT32)`.
fn cast_target(ty: &ast::CastType, env: &ScalarEnv<'_>, errors: &mut Errors) -> Option<Ty> {
    let name = match ty {
        ast::CastType::Name(name) => name,
        ast::CastType::Max(a, b, span) => return at_least(a, b, *span, env, errors),
    };
    if let Some(i) = env.params.iter().position(|p| p.0 == name.text) {
        return Some(Ty::Param(i as u8));
    }
    if let Some(d) = DataType::ALL
        .into_iter()
        .find(|d| d.spec_name() == name.text)
    {
        return Some(Ty::Data(d));
    }
    let mut names: Vec<&str> = env.params.iter().map(|p| p.0).collect();
    names.extend(DataType::ALL.iter().map(|d| d.spec_name()));
    let d = Diagnostic::new(name.span, format!("unknown data type `{}`", name.text));
    errors.push(match near_miss(&name.text, names.iter().copied()) {
        Some(m) => d.help(format!("did you mean `{m}`?")),
        None => d.help(format!("a cast names {}", names.join(", "))),
    });
    None
}

/// `max(T, FLOAT32)` as a cast's target ([`Ty::AtLeast`]): a type
/// parameter the tables bind to floats only, and FLOAT16 or FLOAT32 (a
/// FLOAT64 floor would make it FLOAT64 in every kernel, a fixed FLOAT64
/// cast, which [`build`] refuses).
fn at_least(
    a: &ast::Name,
    b: &ast::Name,
    span: Span,
    env: &ScalarEnv<'_>,
    errors: &mut Errors,
) -> Option<Ty> {
    const SHAPE: &str =
        "`max(T, FLOAT32)` is the wider of two float types: the one a kernel binds the type parameter `T` to, and FLOAT16 or FLOAT32";
    let data = |n: &ast::Name| DataType::ALL.into_iter().find(|d| d.spec_name() == n.text);
    let param = env.params.iter().position(|p| p.0 == a.text);
    let floor = data(b);
    let mut ok = true;
    if param.is_none() {
        let names: Vec<&str> = env.params.iter().map(|p| p.0).collect();
        let d = if data(a).is_some() || env.params.iter().any(|p| p.0 == b.text) {
            Diagnostic::new(
                a.span,
                format!(
                    "the first type of `max(..)` is a type parameter, not `{}`",
                    a.text
                ),
            )
            .help(format!("write the type parameter first: {SHAPE}"))
        } else {
            let d = Diagnostic::new(a.span, format!("unknown type parameter `{}`", a.text));
            match near_miss(&a.text, names.iter().copied()) {
                Some(m) => d.help(format!("did you mean `{m}`?")),
                None if names.is_empty() => {
                    d.help(format!("this expression has no type parameter; {SHAPE}"))
                }
                None => d.help(format!("type parameters: {}", names.join(", "))),
            }
        };
        errors.push(d);
        ok = false;
    }
    match floor {
        Some(DataType::Float64) => {
            errors.push(
                Diagnostic::new(
                    span,
                    format!("`max({0}, FLOAT64)` is FLOAT64 whatever `{0}` is", a.text),
                )
                .help(format!(
                    "a cast to FLOAT64 by name is refused; `max({0}, FLOAT32)` is FLOAT64 where `{0}` is",
                    a.text
                )),
            );
            ok = false;
        }
        Some(d) if d.is_float() => {}
        _ if param.is_none() => {}
        _ => {
            errors.push(
                Diagnostic::new(
                    b.span,
                    format!(
                        "the second type of `max(..)` is FLOAT16 or FLOAT32, not `{}`",
                        b.text
                    ),
                )
                .help(SHAPE),
            );
            ok = false;
        }
    }
    let (Some(i), Some(floor), true) = (param, floor, ok) else {
        return None;
    };
    let t = Ty::AtLeast(i as u8, floor);
    let others: Vec<&str> = env
        .bound
        .get(i)
        .into_iter()
        .flatten()
        .filter(|d| !d.is_float())
        .map(|d| d.spec_name())
        .collect();
    if !others.is_empty() {
        errors.push(
            Diagnostic::new(
                span,
                format!(
                    "`{}` needs a float `{}`, but the tables bind `{}` to {}",
                    env.name(t),
                    a.text,
                    a.text,
                    others.join(", ")
                ),
            )
            .help(format!(
                "`{}` is the wider of two float types: remove {} from the tables, or cast to a fixed type (`cast<{}>`)",
                env.name(t),
                others.join(", "),
                floor.spec_name()
            )),
        );
        return None;
    }
    Some(t)
}

/// `T (the data type of `input`)`, `FLOAT32`, `BOOL (a comparison)`.
fn describe(env: &ScalarEnv<'_>, t: Ty) -> String {
    match t {
        Ty::Param(i) => match env.params.get(usize::from(i)) {
            Some((n, what)) => format!("a `{n}` ({what})"),
            None => format!("a `T{i}`"),
        },
        Ty::AtLeast(..) => format!("a `{}`", env.name(t)),
        Ty::Data(d) => format!("{d}"),
    }
}

/// The type both operands have (`None`: both take their context's).
fn unify(
    x: &Node,
    y: &Node,
    span: Span,
    env: &ScalarEnv<'_>,
    errors: &mut Errors,
) -> Option<Option<Ty>> {
    match (x.ty, y.ty) {
        (Some(a), Some(b)) if a != b => {
            errors.push(
                Diagnostic::new(
                    span,
                    format!(
                        "mismatched types: {} and {}",
                        describe(env, a),
                        describe(env, b)
                    ),
                )
                .help(format!(
                    "convert one operand: `cast<{}>(...)` or `cast<{}>(...)`",
                    env.name(a),
                    env.name(b)
                )),
            );
            None
        }
        (a, b) => Some(a.or(b)),
    }
}

/// Checks that `n` is a BOOL (or takes its context's type).
fn expect_bool(n: &Node, env: &ScalarEnv<'_>, errors: &mut Errors) -> Option<()> {
    match n.ty {
        Some(t) if t != BOOL => {
            errors.error(
                n.span,
                format!(
                    "expected a boolean (a comparison or a BOOL), found {}",
                    describe(env, t)
                ),
            );
            None
        }
        _ => Some(()),
    }
}

/// The second pass: `n` gets the type `ty` (its own, when it has one);
/// `default` is the type of operands nothing types (`1 < 2`).
fn build(n: &Node, ty: Ty, default: Ty, errors: &mut Errors) -> Option<&'static Scalar> {
    let go = |n: &Node, ty: Ty, errors: &mut Errors| build(n, ty, default, errors);
    let s = match &n.kind {
        Kind::Var(v) => Scalar::Var(*v),
        Kind::Int(v) => Scalar::Int(int_literal(*v, n.span, ty, errors)?, ty),
        Kind::Decimal(text, neg) => {
            Scalar::Float(decimal_literal(text, *neg, n.span, ty, errors)?, ty)
        }
        Kind::Bool(b) => Scalar::Bool(*b),
        Kind::Attr(i, kind, name) => {
            if let (AttrScalar::Float, Ty::Data(d)) = (kind, ty) {
                if !d.is_float() {
                    errors.error(
                        n.span,
                        format!("`{name}` is a float attribute: it has no {d} value"),
                    );
                    return None;
                }
            }
            Scalar::Attr(*i, *kind, ty)
        }
        Kind::Lowest => Scalar::Lowest(ty),
        Kind::Highest => Scalar::Highest(ty),
        Kind::FiniteLowest => Scalar::FiniteLowest(ty),
        Kind::FiniteHighest => Scalar::FiniteHighest(ty),
        Kind::Unary(Unary::Not, a) => Scalar::Unary(Unary::Not, go(a, BOOL, errors)?),
        Kind::Unary(op, a) => Scalar::Unary(*op, go(a, ty, errors)?),
        Kind::Binary(op, a, b) => {
            let operands = if op.is_logical() {
                BOOL
            } else if op.is_comparison() {
                a.ty.or(b.ty).unwrap_or(default)
            } else {
                ty
            };
            let (x, y) = (go(a, operands, errors), go(b, operands, errors));
            Scalar::Binary(*op, x?, y?)
        }
        Kind::Select(c, t, f) => {
            let (c, t, f) = (go(c, BOOL, errors), go(t, ty, errors), go(f, ty, errors));
            Scalar::Select(c?, t?, f?)
        }
        Kind::Cast(target, a) => {
            // An operand without a type of its own takes the cast's target:
            // `cast<FLOAT16>(0.1)` is a FLOAT16 literal.
            let from = a.ty.unwrap_or(*target);
            let inner = go(a, from, errors)?;
            // Whatever the tables: FLOAT64 has no arithmetic on the GPU.
            const F64: Ty = Ty::Data(DataType::Float64);
            if *target == F64 || from == F64 {
                errors.push(
                    Diagnostic::new(
                        n.span,
                        "a cast to or from FLOAT64 cannot run on the GPU (core WebGPU has no f64)",
                    )
                    .help("FLOAT32 is the widest float the kernels compute in"),
                );
                return None;
            }
            if a.kind.is_literal() && from == *target {
                return Some(inner);
            }
            Scalar::Cast(*target, inner)
        }
    };
    Some(leak(s))
}

/// An integer literal of type `ty`: in the type's range when the type is
/// stated (a data type), in the 64-bit range for a type parameter. The
/// bits of a UINT64 above `i64::MAX` are kept (the tree wraps them back).
fn int_literal(v: i128, span: Span, ty: Ty, errors: &mut Errors) -> Option<i64> {
    let (lo, hi) = match ty {
        Ty::Data(d) if d.is_float() => (i128::from(i64::MIN), i128::from(i64::MAX)),
        Ty::Data(d) => ops_core::scalar::int_range(d),
        Ty::Param(_) | Ty::AtLeast(..) => (i128::from(i64::MIN), i128::from(i64::MAX)),
    };
    if v < lo || v > hi {
        let what = match ty {
            Ty::Data(d) if !d.is_float() => format!("{d}'s range [{lo}, {hi}]"),
            _ => "the 64-bit range".to_string(),
        };
        errors.error(span, format!("integer literal {v} is out of {what}"));
        return None;
    }
    Some(v as i64)
}

/// A decimal literal of type `ty` (a float type, or a type parameter
/// whose integer bindings the tables' check rejects), as the `f64` that
/// rounds once to the literal's correct value in FLOAT16 and FLOAT32 (see
/// [`decimal_value`]).
fn decimal_literal(text: &str, neg: bool, span: Span, ty: Ty, errors: &mut Errors) -> Option<f64> {
    if let Ty::Data(d) = ty {
        if !d.is_float() {
            errors.error(span, format!("a decimal literal has no {d} value"));
            return None;
        }
    }
    let Ok(v) = text.parse::<f64>() else {
        errors.error(span, format!("bad decimal literal `{text}`"));
        return None;
    };
    let v = if ty == Ty::Data(DataType::Float64) {
        v
    } else {
        decimal_value(text, v)
    };
    Some(if neg { -v } else { v })
}

/// The decimal `text` (digits, a point, digits) as an `f64` from which
/// rounding to FLOAT32 or FLOAT16 gives the decimal's own correct
/// rounding. `nearest` is the `f64` nearest the decimal; a second
/// rounding of it goes wrong only when it lies exactly halfway between two
/// FLOAT32 (or FLOAT16) values while the decimal does not: then it moves
/// one `f64` step toward the decimal, off the halfway point. Comparing
/// the decimal with `nearest` is exact (`nearest`'s decimal expansion is
/// finite) and linear in the text.
pub(crate) fn decimal_value(text: &str, nearest: f64) -> f64 {
    if !nearest.is_finite() || !halfway(nearest) {
        return nearest;
    }
    match compare_decimal(text, nearest) {
        std::cmp::Ordering::Equal => nearest,
        std::cmp::Ordering::Greater => f64::from_bits(nearest.to_bits() + 1),
        std::cmp::Ordering::Less => f64::from_bits(nearest.to_bits() - 1),
    }
}

/// True when `x >= 0` lies exactly halfway between two adjacent FLOAT32
/// or two adjacent FLOAT16 values.
fn halfway(x: f64) -> bool {
    let f32_mid = {
        let f = x as f32;
        let down = if f64::from(f) > x {
            f32::from_bits(f.to_bits() - 1)
        } else {
            f
        };
        let up = f32::from_bits(down.to_bits() + 1);
        f64::from(down) != x && up.is_finite() && (f64::from(down) + f64::from(up)) / 2.0 == x
    };
    let f16_mid = {
        let h = half::f16::from_bits(ops_core::scalar::f16_bits(x));
        let down = if h.to_f64() > x {
            half::f16::from_bits(h.to_bits() - 1)
        } else {
            h
        };
        let up = half::f16::from_bits(down.to_bits() + 1);
        down.to_f64() != x && up.is_finite() && (down.to_f64() + up.to_f64()) / 2.0 == x
    };
    f32_mid || f16_mid
}

/// Compares the non-negative decimal `text` with `x >= 0`, exactly.
fn compare_decimal(text: &str, x: f64) -> std::cmp::Ordering {
    // (significant digits, decimal exponent of the first one).
    fn normal(int: &str, frac: &str) -> (String, i64) {
        let all: String = format!("{int}{frac}");
        let lead = all.len() - all.trim_start_matches('0').len();
        let digits = all
            .trim_start_matches('0')
            .trim_end_matches('0')
            .to_string();
        (digits, int.len() as i64 - lead as i64 - 1)
    }
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let a = normal(int, frac);
    // `{:.1100e}` prints `x`'s exact expansion (an `f64` has fewer than
    // 800 significant decimal digits).
    let s = format!("{x:.1100e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let (mi, mf) = mant.split_once('.').unwrap_or((mant, ""));
    let (digits, e) = normal(mi, mf);
    let b = (digits, e + exp.parse::<i64>().unwrap_or(0));
    match (a.0.is_empty(), b.0.is_empty()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        // Both nonzero: the exponent, then the digits (equal-length
        // prefixes compare as strings; a longer tail is larger).
        (false, false) => a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages of the errors of an element-wise spec over `types`
    /// whose value is `value` (empty when it compiles).
    fn elementwise_errors(types: &str, value: &str) -> Vec<String> {
        let src = format!(
            "operator E {{
                input x: tensor \"X\"
                output y: tensor \"Y\"
                attr alpha: f32 = 0.5 \"alpha\"
                rules {{
                    dtype y = dtype(x) => \"y\";
                    shape y = x.sizes => \"y\";
                }}
                support {{ ranks 1..=4 {{ x: {types}; y: {types}; }} }}
                compute elementwise {{
                    inputs: [x]
                    output: y
                    value: {value}
                    accuracy: exact
                }}
            }}"
        );
        match crate::codegen::expand("t.op", &src) {
            Ok(_) => Vec::new(),
            Err(f) => f.diagnostics.into_iter().map(|d| d.message).collect(),
        }
    }

    #[test]
    fn at_least_casts_compile_on_float_rows_only() {
        const WIDE: &str = "cast<T>(cast<max(T, FLOAT32)>(cast<max(T, FLOAT32)>(x) * alpha) + 1)";
        assert_eq!(
            elementwise_errors("FLOAT64 FLOAT32 FLOAT16", WIDE),
            Vec::<String>::new()
        );
        assert_eq!(
            elementwise_errors("FLOAT16 FLOAT64", "cast<T>(cast<max(T, FLOAT16)>(x) - 0.5)"),
            Vec::<String>::new()
        );
        // One error at each use of the form.
        assert_eq!(
            elementwise_errors("FLOAT32 INT32 UINT8", WIDE),
            ["`max(T, FLOAT32)` needs a float `T`, but the tables bind `T` to INT32, UINT8"; 2]
        );
        assert_eq!(
            elementwise_errors("FLOAT32 FLOAT16", "cast<T>(cast<max(T, INT8)>(x))"),
            ["the second type of `max(..)` is FLOAT16 or FLOAT32, not `INT8`"]
        );
        assert_eq!(
            elementwise_errors("FLOAT32 FLOAT16", "cast<T>(cast<max(T, T)>(x))"),
            ["the second type of `max(..)` is FLOAT16 or FLOAT32, not `T`"]
        );
        assert_eq!(
            elementwise_errors("FLOAT32 FLOAT16", "cast<T>(cast<max(FLOAT32, T)>(x))"),
            ["the first type of `max(..)` is a type parameter, not `FLOAT32`"]
        );
        assert_eq!(
            elementwise_errors("FLOAT32 FLOAT16", "cast<T>(cast<max(U, FLOAT32)>(x))"),
            ["unknown type parameter `U`"]
        );
        assert_eq!(
            elementwise_errors("FLOAT32 FLOAT16", "cast<T>(cast<max(T, FLOAT64)>(x))"),
            ["`max(T, FLOAT64)` is FLOAT64 whatever `T` is"]
        );
        // A type of its own: it mixes with neither `T` nor FLOAT32.
        assert_eq!(
            elementwise_errors(
                "FLOAT32 FLOAT16",
                "cast<T>(cast<max(T, FLOAT32)>(x) + cast<FLOAT32>(x))"
            ),
            ["mismatched types: a `max(T, FLOAT32)` and FLOAT32"]
        );
        assert_eq!(
            elementwise_errors("FLOAT32 FLOAT16", "cast<max(T, FLOAT32)>(x)"),
            ["`value` is a `max(T, FLOAT32)`, but the pattern needs a `T` (type parameter 0)"]
        );
        // Malformed forms are syntax errors.
        let e = elementwise_errors("FLOAT32 FLOAT16", "cast<T>(cast<max(T FLOAT32)>(x))");
        assert!(
            e.contains(&"expected `,`, found `FLOAT32`".to_string()),
            "{e:?}"
        );
    }

    #[test]
    fn decimals_compare_exactly() {
        use std::cmp::Ordering::*;
        assert_eq!(compare_decimal("0.5", 0.5), Equal);
        assert_eq!(compare_decimal("0.50000", 0.5), Equal);
        assert_eq!(
            compare_decimal("000.1", 0.1),
            Less,
            "0.1 < f64 0.1000000000000000055..."
        );
        assert_eq!(compare_decimal("12.0", 12.0), Equal);
        assert_eq!(compare_decimal("12.000000000000000000001", 12.0), Greater);
        assert_eq!(compare_decimal("0.0", 0.0), Equal);
        assert_eq!(compare_decimal("100.0", 99.5), Greater);
    }

    #[test]
    fn decimals_round_once_to_narrow_types() {
        // 1 + 2^-11 + 10^-21: just above a FLOAT16 tie (FLOAT32-exact);
        // the nearest f64 is the tie itself.
        let text = "1.000488281250000000001";
        let nearest: f64 = text.parse().unwrap();
        assert_eq!(nearest, 1.0 + 2f64.powi(-11));
        let v = decimal_value(text, nearest);
        assert_eq!(ops_core::scalar::f16_bits(v), 0x3c01, "rounds up, once");
        assert_eq!(v as f32, 1.0 + 2f32.powi(-11));
        // Just below the tie: down.
        let below = "1.00048828124999999999";
        let v = decimal_value(below, below.parse().unwrap());
        assert_eq!(ops_core::scalar::f16_bits(v), 0x3c00);
        // The tie itself, exactly: to even.
        let v = decimal_value("1.00048828125", 1.00048828125);
        assert_eq!(ops_core::scalar::f16_bits(v), 0x3c00);
        // Nothing near a tie: unchanged.
        assert_eq!(decimal_value("0.1", 0.1), 0.1);
    }
}
