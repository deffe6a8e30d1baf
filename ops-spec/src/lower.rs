//! Stage 2: syntax tree to model. Resolves every name, types every
//! expression, rejects unknown keys; all errors of a file are collected.

use std::collections::HashMap;

use ops_core::{DataType, FeatureLevel};

use crate::diag::{near_miss, Diagnostic, Errors, Span};
use crate::model::*;
use crate::syntax::ast::{self, ExprKind, Item, ParamValue, RuleDecl};

mod scalar;
pub(crate) use scalar::ScalarEnv;

/// Lowers a parsed spec. Returns `None` only when nothing useful survives.
pub fn lower_spec(file: &ast::SpecFile, src: &str, errors: &mut Errors) -> Option<Spec> {
    let name = file.name.clone()?;
    let mut spec = Spec {
        name: name.text.clone(),
        suffix: String::new(),
        groups: Vec::new(),
        docs: file.docs.clone(),
        source: None,
        aliases: Vec::new(),
        introduced: None,
        tensors: Vec::new(),
        attrs: Vec::new(),
        enums: Vec::new(),
        steps: Vec::new(),
        slots: 0,
        support: Vec::new(),
        compute: None,
        support_span: file.span,
        span: file.span,
    };
    let mut seen: HashMap<String, Span> = HashMap::new();
    let mut declare = |n: &ast::Name, errors: &mut Errors| {
        if let Some(prev) = seen.get(&n.text) {
            let (line, _) = crate::diag::line_col(src, prev.start);
            errors.push(
                Diagnostic::new(n.span, format!("duplicate name `{}`", n.text))
                    .help(format!("`{}` is already declared on line {line}", n.text)),
            );
        } else {
            seen.insert(n.text.clone(), n.span);
        }
    };

    // Declarations first (any order in the file), so rules can refer to all of them.
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for item in &file.items {
        match item {
            Item::Source(s, _) => spec.source = Some(s.clone()),
            Item::Aliases(names) => spec.aliases.extend(names.iter().map(|n| n.text.clone())),
            Item::Introduced(l, span) => match FeatureLevel::parse(l) {
                Some(level) => spec.introduced = Some((level, *span)),
                None => errors.push(unknown_level(l, *span)),
            },
            Item::Tensor(t) => {
                declare(&t.name, errors);
                let tensor = Tensor {
                    name: t.name.text.clone(),
                    seed: t.seed.clone().unwrap_or_else(|| t.name.text.clone()),
                    output: t.output,
                    host: t.host,
                    given: t.given,
                    docs: t.docs.clone(),
                    span: t.name.span,
                };
                if t.output {
                    if t.host {
                        errors.error(
                            t.name.span,
                            format!("output `{}` cannot be a host tensor", t.name.text),
                        );
                    }
                    outputs.push(tensor);
                } else {
                    if t.given {
                        errors.push(
                            Diagnostic::new(
                                t.name.span,
                                format!("input `{}` cannot be a given tensor", t.name.text),
                            )
                            .help("`given` marks an output whose sizes the caller describes; every input is given"),
                        );
                    }
                    inputs.push(tensor);
                }
            }
            Item::Enum(e) => {
                declare(&e.name, errors);
                let mut members: Vec<String> = Vec::new();
                for m in &e.members {
                    if members.contains(&m.text) {
                        errors.error(
                            m.span,
                            format!("duplicate member `{}` in enum `{}`", m.text, e.name.text),
                        );
                    } else {
                        members.push(m.text.clone());
                    }
                }
                if members.is_empty() {
                    errors.error(
                        e.name.span,
                        format!("enum `{}` has no members", e.name.text),
                    );
                }
                spec.enums.push(Enum {
                    name: e.name.text.clone(),
                    members,
                    docs: e.docs.clone(),
                });
            }
            _ => {}
        }
    }
    spec.tensors = inputs.into_iter().chain(outputs).collect();
    for item in &file.items {
        if let Item::Attr(a) = item {
            declare(&a.name, errors);
            let ty = lower_type(&a.ty, &spec.enums, &spec.tensors, errors);
            let default = match (&a.default, ty) {
                (Some(d), Some(ty)) => lower_const(d, ty, &spec.enums, errors),
                _ => None,
            };
            if let Some(ty) = ty {
                spec.attrs.push(Attr {
                    name: a.name.text.clone(),
                    ty,
                    default,
                    seed: a.seed.clone().unwrap_or_else(|| a.name.text.clone()),
                    docs: a.docs.clone(),
                    span: a.name.span,
                });
            }
        }
    }

    let mut lx = Lower {
        spec: &spec,
        src,
        scopes: Vec::new(),
        slots: 0,
    };
    let mut steps = Vec::new();
    let mut support = Vec::new();
    let mut compute = None;
    let mut support_span = None;
    let mut compute_seen = false;
    let mut compute_items = Vec::new();
    for item in &file.items {
        match item {
            Item::Rules(rules, _) => {
                for rule in rules {
                    if let Some(step) = lx.lower_rule(rule, errors) {
                        steps.push(step);
                    }
                }
            }
            Item::Support(entries, span) => {
                if support_span.is_some() {
                    errors.error(*span, "duplicate `support` block");
                }
                support_span = Some(*span);
                for e in entries {
                    if let Some(e) = lower_entry(e, lx.spec, errors) {
                        support.push(e);
                    }
                }
            }
            Item::Compute(c) => {
                if compute_seen {
                    errors.error(c.pattern.span, "duplicate `compute` block");
                }
                compute_seen = true;
                compute_items.push(c);
            }
            _ => {}
        }
    }
    // The compute block is lowered last, seeing every rule (a family may
    // read the rules: the element-wise family's tensor types) and the
    // rules' `let` variables.
    let (scopes, slots) = (std::mem::take(&mut lx.scopes), lx.slots);
    let mut with_rules = spec.clone();
    with_rules.steps = steps.clone();
    with_rules.support = support.clone();
    let mut lx = Lower {
        spec: &with_rules,
        src,
        scopes,
        slots,
    };
    for c in compute_items {
        compute = lx.lower_compute(c, errors);
    }
    let slots = lx.slots;
    spec.steps = steps;
    spec.slots = slots;
    spec.support = support;
    spec.compute = compute;
    if let Some(s) = support_span {
        spec.support_span = s;
    } else {
        errors.push(
            Diagnostic::new(
                name.span,
                format!("operator `{}` has no `support` block", name.text),
            )
            .help("add `support { level 3.0 ranks 1..=8 { tensor: TYPES; } }`"),
        );
    }
    if !compute_seen {
        errors.push(
            Diagnostic::new(
                name.span,
                format!("operator `{}` has no `compute` block", name.text),
            )
            .help("add `compute reduce { ... }` (or another pattern)"),
        );
    }
    Some(spec)
}

fn unknown_level(l: &str, span: Span) -> Diagnostic {
    let known: Vec<String> = FeatureLevel::ALL.iter().map(|l| l.to_string()).collect();
    let d = Diagnostic::new(span, format!("unknown feature level `{l}`"));
    match near_miss(l, known.iter().map(|s| s.as_str())) {
        Some(m) => d.help(format!("did you mean `{m}`?")),
        None => d.help(format!("known levels: {}", known.join(", "))),
    }
}

fn lower_type(
    t: &ast::TypeRef,
    enums: &[Enum],
    tensors: &[Tensor],
    errors: &mut Errors,
) -> Option<AttrType> {
    if t.base.text == "scalar" {
        let Some(of) = &t.of else {
            errors.push(
                Diagnostic::new(
                    t.base.span,
                    "`scalar` names the tensor whose data type it holds",
                )
                .help("write `scalar(output)`: a number of `output`'s data type"),
            );
            return None;
        };
        return match tensors.iter().position(|x| x.name == of.text) {
            Some(i) if !tensors[i].host && !t.list => Some(AttrType::Scalar(i)),
            Some(_) => {
                errors.error(
                    of.span,
                    "a `scalar` attribute is one number of a device tensor's data type",
                );
                None
            }
            None => {
                let d = Diagnostic::new(of.span, format!("unknown tensor `{}`", of.text));
                errors.push(
                    match near_miss(&of.text, tensors.iter().map(|x| x.name.as_str())) {
                        Some(m) => d.help(format!("did you mean `{m}`?")),
                        None => d,
                    },
                );
                None
            }
        };
    }
    if let Some(of) = &t.of {
        errors.error(
            of.span,
            format!("`{}` takes no tensor; only `scalar(t)` does", t.base.text),
        );
        return None;
    }
    let int = match t.base.text.as_str() {
        "u32" => Some(IntKind::U32),
        "i32" => Some(IntKind::I32),
        "i64" => Some(IntKind::I64),
        _ => None,
    };
    if let Some(k) = int {
        return Some(if t.list {
            AttrType::List(k)
        } else {
            AttrType::Int(k)
        });
    }
    if t.list {
        errors.error(
            t.base.span,
            format!(
                "lists of `{}` are not supported; lists hold integers",
                t.base.text
            ),
        );
        return None;
    }
    if t.base.text == "bool" {
        return Some(AttrType::Bool);
    }
    if t.base.text == "f32" || t.base.text == "f64" {
        return Some(AttrType::Float(t.base.text == "f64"));
    }
    if let Some(i) = enums.iter().position(|e| e.name == t.base.text) {
        return Some(AttrType::Enum(i));
    }
    let mut candidates = vec!["u32", "i32", "i64", "bool", "f32", "f64", "scalar"];
    candidates.extend(enums.iter().map(|e| e.name.as_str()));
    let d = Diagnostic::new(
        t.base.span,
        format!("unknown attribute type `{}`", t.base.text),
    );
    errors.push(match near_miss(&t.base.text, candidates.iter().copied()) {
        Some(m) => d.help(format!("did you mean `{m}`?")),
        None => d.help("attribute types are `u32`, `i32`, `i64`, `bool`, an `enum` of this spec, or a list `u32[]`"),
    });
    None
}

/// A number written as a literal in a spec (an integer or a decimal,
/// possibly negated), as the `f64` that rounds once to the literal's
/// correct FLOAT16 and FLOAT32 values ([`scalar::decimal_value`]); `None`
/// for anything else. The one reader of such numbers outside arithmetic:
/// float attributes' defaults and a fold's `domain`.
pub(crate) fn literal_f64(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v as f64),
        ExprKind::Decimal(d) => d.parse::<f64>().ok().map(|v| scalar::decimal_value(d, v)),
        ExprKind::Unary("-", inner)
            if matches!(inner.kind, ExprKind::Int(_) | ExprKind::Decimal(_)) =>
        {
            literal_f64(inner).map(|v| -v)
        }
        _ => None,
    }
}

fn lower_const(e: &ast::Expr, ty: AttrType, enums: &[Enum], errors: &mut Errors) -> Option<Const> {
    let mismatch = |errors: &mut Errors| {
        errors.error(e.span, "default value does not match the attribute's type");
        None
    };
    match (&e.kind, ty) {
        (ExprKind::Int(v), AttrType::Int(_)) => Some(Const::Int(*v)),
        (ExprKind::Unary("-", inner), AttrType::Int(_)) => match inner.kind {
            ExprKind::Int(v) => Some(Const::Int(-v)),
            _ => mismatch(errors),
        },
        (ExprKind::Bool(b), AttrType::Bool) => Some(Const::Bool(*b)),
        (_, AttrType::Float(_)) => match literal_f64(e) {
            Some(v) => Some(Const::Float(v.to_bits())),
            None => mismatch(errors),
        },
        (ExprKind::Int(v), AttrType::Scalar(_)) => Some(Const::Int(*v)),
        (_, AttrType::Scalar(_)) => match (&e.kind, literal_f64(e)) {
            (ExprKind::Unary("-", inner), _) if matches!(inner.kind, ExprKind::Int(_)) => {
                match inner.kind {
                    ExprKind::Int(v) => Some(Const::Int(-v)),
                    _ => mismatch(errors),
                }
            }
            (_, Some(v)) => Some(Const::Float(v.to_bits())),
            _ => mismatch(errors),
        },
        (ExprKind::List(items), AttrType::List(_)) => {
            let mut out = Vec::new();
            for i in items {
                match i.kind {
                    ExprKind::Int(v) => out.push(v),
                    _ => return mismatch(errors),
                }
            }
            Some(Const::List(out))
        }
        (ExprKind::Name(n), AttrType::Enum(ei)) => {
            let en = &enums[ei];
            match en.members.iter().position(|m| m == n) {
                Some(i) => Some(Const::Enum(i as u32)),
                None => {
                    let d = Diagnostic::new(
                        e.span,
                        format!("`{n}` is not a member of enum `{}`", en.name),
                    );
                    errors.push(match near_miss(n, en.members.iter().map(|s| s.as_str())) {
                        Some(m) => d.help(format!("did you mean `{m}`?")),
                        None => d.help(format!("members: {}", en.members.join(", "))),
                    });
                    None
                }
            }
        }
        _ => mismatch(errors),
    }
}

fn lower_entry(e: &ast::EntryDecl, spec: &Spec, errors: &mut Errors) -> Option<Entry> {
    let tensors = &spec.tensors[..];
    let when = match &e.when {
        None => None,
        Some((attr, members)) => Some(lower_members(spec, attr, members, errors)?),
    };
    let level = match &e.level {
        Some((l, span)) => match FeatureLevel::parse(l) {
            Some(level) => Some((level, *span)),
            None => {
                errors.push(unknown_level(l, *span));
                return None;
            }
        },
        None => None,
    };
    let ranks = match e.ranks {
        Some(r) => (r.lo, r.hi, r.span),
        None => {
            errors.error(e.span, "support entry has no `ranks`");
            (1, 8, e.span)
        }
    };
    let mut rows = Vec::new();
    for r in &e.rows {
        let Some(tensor) = tensors.iter().position(|t| t.name == r.tensor.text) else {
            let d = Diagnostic::new(
                r.tensor.span,
                format!("unknown tensor `{}` in support table", r.tensor.text),
            );
            errors.push(
                match near_miss(&r.tensor.text, tensors.iter().map(|t| t.name.as_str())) {
                    Some(m) => d.help(format!("did you mean `{m}`?")),
                    None => d,
                },
            );
            continue;
        };
        let mut dtypes = Vec::new();
        for d in &r.dtypes {
            match DataType::ALL.iter().find(|t| t.spec_name() == d.text) {
                Some(t) => {
                    if dtypes.contains(t) {
                        errors.error(d.span, format!("data type `{}` is listed twice", d.text));
                    }
                    dtypes.push(*t);
                }
                None => {
                    let diag = Diagnostic::new(d.span, format!("unknown data type `{}`", d.text));
                    errors.push(match near_miss(&d.text, DataType::ALL.iter().map(|t| t.spec_name())) {
                        Some(m) => diag.help(format!("did you mean `{m}`?")),
                        None => diag.help("data types are FLOAT64, FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8"),
                    });
                }
            }
        }
        rows.push(Row {
            tensor,
            dtypes,
            ranks: r.ranks.map(|r| (r.lo, r.hi, r.span)),
            span: r.span,
        });
    }
    Some(Entry {
        when,
        level,
        ranks,
        rows,
        span: e.span,
    })
}

/// The lowering context of a spec's rules and compute block: its names, the
/// scopes of `let` variables, and the helpers families lower their
/// parameters with.
pub struct Lower<'a> {
    /// The spec lowered so far (tensors, attributes, enums).
    pub(crate) spec: &'a Spec,
    src: &'a str,
    scopes: Vec<(String, usize, Ty)>,
    slots: usize,
}

const FUNCS: &[&str] = &[
    "len",
    "contains",
    "unique",
    "product",
    "sum",
    "min",
    "max",
    "is_signed",
    "is_float",
    "normalize",
    "range",
    "broadcastable",
    "broadcast",
    "rank",
    "dtype",
    "values",
];

impl Lower<'_> {
    pub(crate) fn text(&self, span: Span) -> String {
        self.src
            .get(span.start..span.end)
            .unwrap_or("?")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn new_slot(&mut self) -> usize {
        self.slots += 1;
        self.slots - 1
    }

    fn output_tensor(&self, n: &ast::Name, errors: &mut Errors) -> Option<usize> {
        match self.spec.tensors.iter().position(|t| t.name == n.text) {
            Some(i) if self.spec.tensors[i].output => Some(i),
            Some(_) => {
                errors.error(
                    n.span,
                    format!(
                        "`{}` is an input; `shape` and `dtype` rules name an output",
                        n.text
                    ),
                );
                None
            }
            None => {
                self.unknown_name(n.span, &n.text, errors);
                None
            }
        }
    }

    fn lower_rule(&mut self, rule: &RuleDecl, errors: &mut Errors) -> Option<Step> {
        match rule {
            RuleDecl::Let(name, e) => {
                let (value, ty) = self.lower_expr(e, errors)?;
                if self.scopes.iter().any(|(n, _, _)| n == &name.text)
                    || self.lookup_global(&name.text)
                {
                    errors.error(name.span, format!("duplicate name `{}`", name.text));
                }
                let var = self.new_slot();
                self.scopes.push((name.text.clone(), var, ty));
                Some(Step::Let { var, value })
            }
            RuleDecl::Require(e, msg, _) => {
                let cond = self.expect(e, Ty::Bool, errors)?;
                Some(Step::Require {
                    cond,
                    message: msg.clone(),
                })
            }
            RuleDecl::Shape(n, e, msg, _) => {
                let tensor = self.output_tensor(n, errors);
                if let Some(t) = tensor.map(|t| &self.spec.tensors[t]).filter(|t| t.given) {
                    errors.push(
                        Diagnostic::new(
                            n.span,
                            format!("output `{}` is given: the caller sets its sizes, no `shape` rule computes them", t.name),
                        )
                        .help(format!("check `{}.sizes` with `require` rules", n.text)),
                    );
                }
                let sizes = self.expect(e, Ty::List, errors)?;
                Some(Step::Shape {
                    tensor: tensor?,
                    sizes,
                    message: msg.clone(),
                })
            }
            RuleDecl::DType(n, e, msg, _) => {
                let tensor = self.output_tensor(n, errors);
                let dtype = self.expect(e, Ty::DType, errors)?;
                Some(Step::DType {
                    tensor: tensor?,
                    dtype,
                    message: msg.clone(),
                })
            }
            // `syntax::instances` unrolls every `for` before lowering.
            RuleDecl::For(_, _, list, _, span) => {
                errors.error(
                    *span,
                    format!(
                        "`for` walks a variadic tensor list; `{}` is none",
                        list.text
                    ),
                );
                None
            }
        }
    }

    fn lookup_global(&self, n: &str) -> bool {
        self.spec.tensors.iter().any(|t| t.name == n) || self.spec.attrs.iter().any(|a| a.name == n)
    }

    pub(crate) fn expect(&mut self, e: &ast::Expr, want: Ty, errors: &mut Errors) -> Option<Expr> {
        let (m, ty) = self.lower_expr(e, errors)?;
        if ty != want {
            errors.error(
                e.span,
                format!(
                    "type mismatch: expected {}, found {}",
                    want.describe(&self.spec.enums),
                    ty.describe(&self.spec.enums)
                ),
            );
            return None;
        }
        Some(m)
    }

    pub(crate) fn unknown_name(&self, span: Span, name: &str, errors: &mut Errors) {
        let mut cands: Vec<&str> = self.spec.tensors.iter().map(|t| t.name.as_str()).collect();
        cands.extend(self.spec.attrs.iter().map(|a| a.name.as_str()));
        cands.extend(self.scopes.iter().map(|s| s.0.as_str()));
        let d = Diagnostic::new(span, format!("unknown name `{name}`"));
        errors.push(match near_miss(name, cands.iter().copied()) {
            Some(m) => d.help(format!("did you mean `{m}`?")),
            None => d,
        });
    }

    pub(crate) fn tensor_arg(&self, e: &ast::Expr, errors: &mut Errors) -> Option<usize> {
        if let ExprKind::Name(n) = &e.kind {
            if let Some(i) = self.spec.tensors.iter().position(|t| &t.name == n) {
                return Some(i);
            }
            self.unknown_name(e.span, n, errors);
            return None;
        }
        errors.error(e.span, "expected a tensor name");
        None
    }

    fn lower_expr(&mut self, e: &ast::Expr, errors: &mut Errors) -> Option<(Expr, Ty)> {
        Some(match &e.kind {
            ExprKind::Int(v) => (Expr::Int(*v), Ty::Int),
            ExprKind::Decimal(_) => {
                errors.error(
                    e.span,
                    "decimal literals belong in a pattern's arithmetic, not in rules",
                );
                return None;
            }
            ExprKind::Cast(..) => {
                errors.error(
                    e.span,
                    "casts belong in a pattern's arithmetic, not in rules",
                );
                return None;
            }
            ExprKind::Bool(b) => (Expr::Bool(*b), Ty::Bool),
            ExprKind::Name(n) => {
                if let Some((_, slot, ty)) = self.scopes.iter().rev().find(|s| &s.0 == n) {
                    return Some((Expr::Var(*slot), *ty));
                }
                if let Some(i) = self.spec.attrs.iter().position(|a| &a.name == n) {
                    let ty = match self.spec.attrs[i].ty {
                        AttrType::Int(_) => Ty::Int,
                        AttrType::List(_) => Ty::List,
                        AttrType::Bool => Ty::Bool,
                        AttrType::Enum(ei) => Ty::Enum(ei),
                        AttrType::Float(_) | AttrType::Scalar(_) => {
                            let what = if matches!(self.spec.attrs[i].ty, AttrType::Float(_)) {
                                "a float"
                            } else {
                                "a scalar"
                            };
                            errors.error(
                                e.span,
                                format!("`{n}` is {what} attribute: rules compute on integers; use it in a pattern's arithmetic"),
                            );
                            return None;
                        }
                    };
                    return Some((Expr::Attr(i), ty));
                }
                if self.spec.tensors.iter().any(|t| &t.name == n) {
                    errors.push(
                        Diagnostic::new(e.span, format!("tensor `{n}` used as a value"))
                            .help(format!("use `rank({n})`, `{n}.sizes` or `dtype({n})`")),
                    );
                    return None;
                }
                if let Some(t) = DataType::ALL.iter().find(|t| t.spec_name() == n) {
                    return Some((Expr::DType(*t), Ty::DType));
                }
                for (ei, en) in self.spec.enums.iter().enumerate() {
                    if let Some(m) = en.members.iter().position(|m| m == n) {
                        return Some((Expr::Enum(m as u32), Ty::Enum(ei)));
                    }
                }
                self.unknown_name(e.span, n, errors);
                return None;
            }
            ExprKind::Call(f, args) => return self.lower_call(f, args, e.span, errors),
            ExprKind::Field(base, field) => {
                let t = self.tensor_arg(base, errors)?;
                if field.text != "sizes" {
                    let d = Diagnostic::new(field.span, format!("unknown field `{}`", field.text));
                    errors.push(d.help(
                        "tensors have `.sizes`; use `rank(t)` and `dtype(t)` for the others",
                    ));
                    return None;
                }
                (Expr::Sizes(t), Ty::List)
            }
            ExprKind::Index(l, i) => {
                let l = self.expect(l, Ty::List, errors);
                let i = self.expect(i, Ty::Int, errors);
                (Expr::Index(ex(l?), ex(i?)), Ty::Int)
            }
            ExprKind::Slice(l, a, b) => {
                let l = self.expect(l, Ty::List, errors);
                let a = self.expect(a, Ty::Int, errors);
                let b = self.expect(b, Ty::Int, errors);
                (Expr::Slice(ex(l?), ex(a?), ex(b?)), Ty::List)
            }
            ExprKind::Unary("~", _) => {
                errors.error(
                    e.span,
                    "`~` is arithmetic of a `compute` block, not of the rules",
                );
                return None;
            }
            ExprKind::Unary(op, a) => {
                if *op == "-" {
                    (Expr::Neg(ex(self.expect(a, Ty::Int, errors)?)), Ty::Int)
                } else {
                    (Expr::Not(ex(self.expect(a, Ty::Bool, errors)?)), Ty::Bool)
                }
            }
            ExprKind::Binary(op, a, b) => {
                let arith = match *op {
                    "+" => Some(ArithOp::Add),
                    "-" => Some(ArithOp::Sub),
                    "*" => Some(ArithOp::Mul),
                    "/" => Some(ArithOp::Div),
                    "%" => Some(ArithOp::Rem),
                    _ => None,
                };
                if let Some(aop) = arith {
                    let a = self.expect(a, Ty::Int, errors);
                    let b = self.expect(b, Ty::Int, errors);
                    return Some((Expr::Arith(aop, ex(a?), ex(b?)), Ty::Int));
                }
                match *op {
                    "&" | "|" | "^" | "<<" | ">>" => {
                        errors.error(
                            e.span,
                            format!("`{op}` is arithmetic of a `compute` block, not of the rules"),
                        );
                        return None;
                    }
                    "++" => {
                        let a = self.expect(a, Ty::List, errors);
                        let b = self.expect(b, Ty::List, errors);
                        (Expr::Concat(ex(a?), ex(b?)), Ty::List)
                    }
                    "&&" | "||" => {
                        let a = self.expect(a, Ty::Bool, errors);
                        let b = self.expect(b, Ty::Bool, errors);
                        let (a, b) = (ex(a?), ex(b?));
                        (
                            if *op == "&&" {
                                Expr::And(a, b)
                            } else {
                                Expr::Or(a, b)
                            },
                            Ty::Bool,
                        )
                    }
                    _ => {
                        let cmp = match *op {
                            "==" => CmpOp::Eq,
                            "!=" => CmpOp::Ne,
                            "<" => CmpOp::Lt,
                            "<=" => CmpOp::Le,
                            ">" => CmpOp::Gt,
                            _ => CmpOp::Ge,
                        };
                        let la = self.lower_expr(a, errors);
                        let lb = self.lower_expr(b, errors);
                        let ((ma, ta), (mb, tb)) = (la?, lb?);
                        if ta != tb {
                            errors.error(
                                e.span,
                                format!(
                                    "type mismatch: `{op}` compares {} with {}",
                                    ta.describe(&self.spec.enums),
                                    tb.describe(&self.spec.enums)
                                ),
                            );
                            return None;
                        }
                        if !matches!(cmp, CmpOp::Eq | CmpOp::Ne) && !matches!(ta, Ty::Int) {
                            errors.error(
                                e.span,
                                format!(
                                    "`{op}` orders integers only, found {}",
                                    ta.describe(&self.spec.enums)
                                ),
                            );
                            return None;
                        }
                        (
                            Expr::Cmp(
                                cmp,
                                ex(ma),
                                ex(mb),
                                leak_str(self.text(a.span)),
                                leak_str(self.text(b.span)),
                            ),
                            Ty::Bool,
                        )
                    }
                }
            }
            ExprKind::If(c, a, b) => {
                let c = self.expect(c, Ty::Bool, errors);
                let la = self.lower_expr(a, errors);
                let lb = self.lower_expr(b, errors);
                let ((ma, ta), (mb, tb)) = (la?, lb?);
                if ta != tb {
                    errors.error(
                        e.span,
                        format!(
                            "type mismatch: `if` branches are {} and {}",
                            ta.describe(&self.spec.enums),
                            tb.describe(&self.spec.enums)
                        ),
                    );
                    return None;
                }
                (Expr::If(ex(c?), ex(ma), ex(mb)), ta)
            }
            ExprKind::All(v, lo, hi, body) => {
                let lo = self.expect(lo, Ty::Int, errors);
                let hi = self.expect(hi, Ty::Int, errors);
                let var = self.new_slot();
                self.scopes.push((v.text.clone(), var, Ty::Int));
                let body = self.expect(body, Ty::Bool, errors);
                self.scopes.pop();
                (
                    Expr::All {
                        var,
                        name: leak_str(v.text.clone()),
                        lo: ex(lo?),
                        hi: ex(hi?),
                        body: ex(body?),
                    },
                    Ty::Bool,
                )
            }
            ExprKind::ListFor(v, lo, hi, filter, body) => {
                let lo = self.expect(lo, Ty::Int, errors);
                let hi = self.expect(hi, Ty::Int, errors);
                let var = self.new_slot();
                self.scopes.push((v.text.clone(), var, Ty::Int));
                let filter = filter.as_ref().map(|f| self.expect(f, Ty::Bool, errors));
                let body = self.expect(body, Ty::Int, errors);
                self.scopes.pop();
                let filter = match filter {
                    Some(f) => Some(ex(f?)),
                    None => None,
                };
                (
                    Expr::ListFor {
                        var,
                        lo: ex(lo?),
                        hi: ex(hi?),
                        filter,
                        body: ex(body?),
                    },
                    Ty::List,
                )
            }
            ExprKind::List(items) => {
                let mut out = Vec::new();
                let mut ok = true;
                for i in items {
                    match self.expect(i, Ty::Int, errors) {
                        Some(m) => out.push(m),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                (Expr::List(Box::leak(out.into_boxed_slice())), Ty::List)
            }
        })
    }

    fn lower_call(
        &mut self,
        f: &ast::Name,
        args: &[ast::Expr],
        span: Span,
        errors: &mut Errors,
    ) -> Option<(Expr, Ty)> {
        let sig: (&[Ty], Ty, Option<Func>) = match f.text.as_str() {
            "len" => (&[Ty::List], Ty::Int, Some(Func::Len)),
            "contains" => (&[Ty::List, Ty::Int], Ty::Bool, Some(Func::Contains)),
            "unique" => (&[Ty::List], Ty::Bool, Some(Func::Unique)),
            "product" => (&[Ty::List], Ty::Int, Some(Func::Product)),
            "sum" => (&[Ty::List], Ty::Int, Some(Func::Sum)),
            "min" => (&[Ty::Int, Ty::Int], Ty::Int, Some(Func::Min)),
            "max" => (&[Ty::Int, Ty::Int], Ty::Int, Some(Func::Max)),
            "is_signed" => (&[Ty::DType], Ty::Bool, Some(Func::IsSigned)),
            "is_float" => (&[Ty::DType], Ty::Bool, Some(Func::IsFloat)),
            "normalize" => (&[Ty::List, Ty::Int], Ty::List, Some(Func::Normalize)),
            "range" => (&[Ty::Int, Ty::Int], Ty::List, Some(Func::Range)),
            "broadcastable" => (&[Ty::List, Ty::List], Ty::Bool, Some(Func::Broadcastable)),
            "broadcast" => (&[Ty::List, Ty::List], Ty::List, Some(Func::Broadcast)),
            "rank" | "dtype" | "values" => (&[Ty::Int], Ty::Int, None),
            other => {
                let d = Diagnostic::new(f.span, format!("unknown function `{other}`"));
                errors.push(match near_miss(other, FUNCS.iter().copied()) {
                    Some(m) => d.help(format!("did you mean `{m}`?")),
                    None => d.help(format!("functions: {}", FUNCS.join(", "))),
                });
                return None;
            }
        };
        if args.len() != sig.0.len() {
            errors.error(
                span,
                format!(
                    "`{}` takes {} argument{}, found {}",
                    f.text,
                    sig.0.len(),
                    if sig.0.len() == 1 { "" } else { "s" },
                    args.len()
                ),
            );
            return None;
        }
        let Some(func) = sig.2 else {
            let t = self.tensor_arg(&args[0], errors)?;
            return Some(match f.text.as_str() {
                "rank" => (Expr::Rank(t), Ty::Int),
                "dtype" => (Expr::TensorDType(t), Ty::DType),
                _ => {
                    if !self.spec.tensors[t].host {
                        errors.push(
                            Diagnostic::new(
                                args[0].span,
                                format!(
                                    "`values` needs a host tensor; `{}` lives on the device",
                                    self.spec.tensors[t].name
                                ),
                            )
                            .help("declare it as `input NAME: host tensor`"),
                        );
                        return None;
                    }
                    (Expr::Values(t), Ty::List)
                }
            });
        };
        let mut margs = Vec::new();
        let mut ok = true;
        for (a, want) in args.iter().zip(sig.0) {
            match self.expect(a, *want, errors) {
                Some(m) => margs.push(m),
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        let texts: Vec<&'static str> = args.iter().map(|a| leak_str(self.text(a.span))).collect();
        Some((
            Expr::Call(
                func,
                Box::leak(margs.into_boxed_slice()),
                Box::leak(texts.into_boxed_slice()),
            ),
            sig.1,
        ))
    }

    fn lower_compute(&mut self, c: &ast::ComputeDecl, errors: &mut Errors) -> Option<Compute> {
        if let Some((attr, arms)) = &c.switch {
            return self.lower_switch(attr, arms, errors);
        }
        let Some(family) = crate::family::family(&c.pattern.text) else {
            let names = crate::family::names();
            let d = Diagnostic::new(
                c.pattern.span,
                format!("unknown compute pattern `{}`", c.pattern.text),
            );
            errors.push(match near_miss(&c.pattern.text, names.iter().copied()) {
                Some(m) => d.help(format!("did you mean `{m}`?")),
                None => d.help(format!("patterns: {}", names.join(", "))),
            });
            return None;
        };
        family.lower(self, c, errors).map(Compute::Pattern)
    }

    /// `compute switch attr { A, B: pattern { .. } ... }`: every member of
    /// the enum in exactly one arm, no arm a switch.
    fn lower_switch(
        &mut self,
        attr: &ast::Name,
        arms: &[(Vec<ast::Name>, ast::ComputeDecl)],
        errors: &mut Errors,
    ) -> Option<Compute> {
        let mut out = Vec::new();
        let mut seen: Vec<u32> = Vec::new();
        let mut ok = true;
        let mut ai = None;
        for (members, decl) in arms {
            let Some((a, ms, span)) = lower_members(self.spec, attr, members, errors) else {
                ok = false;
                continue;
            };
            ai = Some(a);
            for m in &ms {
                if seen.contains(m) {
                    errors.error(span, "a member has two arms");
                    ok = false;
                }
                seen.push(*m);
            }
            if decl.switch.is_some() {
                errors.error(decl.pattern.span, "a switch arm cannot be a switch");
                ok = false;
                continue;
            }
            match self.lower_compute(decl, errors) {
                Some(c) => out.push((ms, c)),
                None => ok = false,
            }
        }
        let ai = ai?;
        if let AttrType::Enum(ei) = self.spec.attrs[ai].ty {
            let en = &self.spec.enums[ei];
            let missing: Vec<&str> = (0..en.members.len() as u32)
                .filter(|m| !seen.contains(m))
                .map(|m| en.members[m as usize].as_str())
                .collect();
            if ok && !missing.is_empty() {
                errors.error(
                    attr.span,
                    format!("the switch has no arm for {}", missing.join(", ")),
                );
                ok = false;
            }
        }
        ok.then_some(Compute::Switch {
            attr: ai,
            arms: out,
        })
    }
    pub(crate) fn param_int(
        &mut self,
        params: &HashMap<String, &ParamValue>,
        key: &str,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Expr> {
        match params.get(key) {
            Some(ParamValue::Expr(e)) => self.expect(e, Ty::Int, errors),
            _ => {
                errors.error(
                    c.pattern.span,
                    format!("parameter `{key}` is an integer expression"),
                );
                None
            }
        }
    }
    /// Parameter `key`, a list expression.
    pub(crate) fn param_list(
        &mut self,
        params: &HashMap<String, &ParamValue>,
        key: &str,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Expr> {
        match params.get(key) {
            Some(ParamValue::Expr(e)) => self.expect(e, Ty::List, errors),
            _ => {
                errors.error(
                    c.pattern.span,
                    format!("parameter `{key}` is a list expression"),
                );
                None
            }
        }
    }

    /// A compute block's parameters by key: every one of `keys` given, the
    /// `optional` keys maybe; an unknown key (with its near miss), a key
    /// given twice and a missing one are errors.
    pub(crate) fn params_optional<'p>(
        &self,
        c: &'p ast::ComputeDecl,
        keys: &[&str],
        optional: &[&str],
        errors: &mut Errors,
    ) -> Option<HashMap<String, &'p ParamValue>> {
        let mut map = HashMap::new();
        let mut ok = true;
        let all: Vec<&str> = keys.iter().chain(optional).copied().collect();
        let keys = &all[..];
        for p in &c.params {
            if !keys.contains(&p.key.text.as_str()) {
                let d = Diagnostic::new(
                    p.key.span,
                    format!(
                        "unknown parameter `{}` of pattern `{}`",
                        p.key.text, c.pattern.text
                    ),
                );
                errors.push(match near_miss(&p.key.text, keys.iter().copied()) {
                    Some(m) => d.help(format!("did you mean `{m}`?")),
                    None => d.help(format!("parameters: {}", keys.join(", "))),
                });
                ok = false;
            } else if map.insert(p.key.text.clone(), &p.value).is_some() {
                errors.error(
                    p.key.span,
                    format!("parameter `{}` given twice", p.key.text),
                );
            }
        }
        for k in keys.iter().filter(|k| !optional.contains(k)) {
            if !map.contains_key(*k) {
                errors.error(
                    c.pattern.span,
                    format!("pattern `{}` needs parameter `{k}`", c.pattern.text),
                );
                ok = false;
            }
        }
        ok.then_some(map)
    }

    pub(crate) fn param_tensor(
        &self,
        params: &HashMap<String, &ParamValue>,
        key: &str,
        output: bool,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<usize> {
        let Some(ParamValue::Expr(e)) = params.get(key) else {
            errors.error(c.pattern.span, format!("parameter `{key}` names a tensor"));
            return None;
        };
        let t = self.tensor_arg(e, errors)?;
        if self.spec.tensors[t].output != output {
            errors.error(
                e.span,
                format!(
                    "parameter `{key}` needs an {} tensor",
                    if output { "output" } else { "input" }
                ),
            );
            return None;
        }
        Some(t)
    }

    /// Parameter `key`, a list of 1 to `max` tensors (any number without a
    /// `max`), each an output tensor when `output`, else an input tensor
    /// (read on the device when `device`).
    pub(crate) fn param_tensor_list(
        &self,
        params: &HashMap<String, &ParamValue>,
        key: &str,
        (output, device, max): (bool, bool, Option<usize>),
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Vec<usize>> {
        let kind = if output { "output" } else { "input" };
        let items = match params.get(key) {
            Some(ParamValue::Expr(ast::Expr {
                kind: ExprKind::List(items),
                span,
            })) => {
                if items.is_empty() || max.is_some_and(|m| items.len() > m) {
                    let count = match max {
                        Some(m) => format!("1 to {m}"),
                        None => "one or more".into(),
                    };
                    errors.error(*span, format!("`{key}` lists {count} {kind} tensors"));
                    return None;
                }
                items
            }
            _ => {
                errors.error(
                    c.pattern.span,
                    format!("parameter `{key}` is a list of {kind} tensors: `{key}: [a, b]`"),
                );
                return None;
            }
        };
        let tensors: Vec<Option<usize>> = items
            .iter()
            .map(|e| {
                let t = self.tensor_arg(e, errors)?;
                let tensor = &self.spec.tensors[t];
                if tensor.output != output || (device && tensor.host) {
                    let read = if device { " read on the device" } else { "" };
                    errors.error(e.span, format!("`{key}` lists {kind} tensors{read}"));
                    return None;
                }
                Some(t)
            })
            .collect();
        tensors.into_iter().collect()
    }

    pub(crate) fn param_word<T: Copy>(
        &self,
        params: &HashMap<String, &ParamValue>,
        key: &str,
        words: &[(&str, T)],
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<T> {
        let names: Vec<&str> = words.iter().map(|w| w.0).collect();
        let (text, span) = match params.get(key) {
            Some(ParamValue::Expr(ast::Expr {
                kind: ExprKind::Name(n),
                span,
            })) => (n.as_str(), *span),
            Some(ParamValue::Expr(e)) => ("", e.span),
            _ => ("", c.pattern.span),
        };
        if let Some((_, v)) = words.iter().find(|w| w.0 == text) {
            return Some(*v);
        }
        let d = match names[..] {
            [one] => Diagnostic::new(span, format!("`{key}` is `{one}`")),
            _ => Diagnostic::new(
                span,
                format!("parameter `{key}` must be one of {}", names.join(", ")),
            ),
        };
        errors.push(match near_miss(text, names.iter().copied()) {
            Some(m) if !text.is_empty() => d.help(format!("did you mean `{m}`?")),
            _ => d,
        });
        None
    }
}

/// Resolves `attr` to an enum attribute and `members` to its member indices.
pub(crate) fn lower_members(
    spec: &Spec,
    attr: &ast::Name,
    members: &[ast::Name],
    errors: &mut Errors,
) -> Option<(usize, Vec<u32>, Span)> {
    let Some(ai) = spec.attrs.iter().position(|a| a.name == attr.text) else {
        errors.error(attr.span, format!("unknown attribute `{}`", attr.text));
        return None;
    };
    let AttrType::Enum(ei) = spec.attrs[ai].ty else {
        errors.error(
            attr.span,
            format!("`{}` is not an enum attribute", attr.text),
        );
        return None;
    };
    let en = &spec.enums[ei];
    let mut out = Vec::new();
    let mut ok = true;
    for m in members {
        match en.members.iter().position(|x| x == &m.text) {
            Some(i) if out.contains(&(i as u32)) => {
                errors.error(m.span, format!("`{}` is listed twice", m.text));
                ok = false;
            }
            Some(i) => out.push(i as u32),
            None => {
                let d = Diagnostic::new(
                    m.span,
                    format!("`{}` is not a member of enum `{}`", m.text, en.name),
                );
                errors.push(
                    match near_miss(&m.text, en.members.iter().map(|s| s.as_str())) {
                        Some(n) => d.help(format!("did you mean `{n}`?")),
                        None => d,
                    },
                );
                ok = false;
            }
        }
    }
    let span = members.iter().fold(attr.span, |s, m| s.join(m.span));
    (ok && !out.is_empty()).then_some((ai, out, span))
}

/// A rule-expression node for the compiler's lifetime: the model holds the
/// same `&'static` trees (`ops_core::expr::Expr`) that generated code holds
/// in statics.
fn ex(e: Expr) -> &'static Expr {
    Box::leak(Box::new(e))
}

/// A string for the compiler's lifetime (message texts in `Expr` nodes).
fn leak_str(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// An expression node for the compiler's lifetime (a proc-macro run): the
/// pattern's expressions are `&'static` trees, as generated code holds them.
pub(crate) fn leak(s: ops_core::scalar::Scalar) -> &'static ops_core::scalar::Scalar {
    Box::leak(Box::new(s))
}
