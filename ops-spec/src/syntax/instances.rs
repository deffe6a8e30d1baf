//! Optional and variadic tensors, unrolled into instances.
//!
//! A tensor declaration may stand for several tensors or none:
//!
//! ```text
//! input min: optional tensor "min"          // 0 or 1 tensor
//! input data: tensor[1..=4] "data"          // 1 to 4 tensors: data_0, data_1, ...
//! ```
//!
//! A spec with such declarations is compiled once per combination of their
//! counts, an *instance*: an ordinary operator of fixed tensors whose
//! descriptor type carries a suffix (`ClipNoMinDesc`, `Sum3Desc`) and whose
//! [`ops_core::OperatorInfo`] keeps the spec's name and lists the counts
//! (`groups`), so that a caller picks the instance by the tensors it has.
//! In each instance the spec's text is rewritten before lowering:
//!
//! - the list `data` is the tensors `data_0 .. data_{n-1}`; `data[k]` (a
//!   literal `k`) names one; `count(data)` is `n`; `present(min)` is whether
//!   the optional tensor is given;
//! - `for t in data { rules }` is the rules once per tensor, `t` naming it
//!   (`for k, t in data` also binds `k` to its position);
//! - a call of `sum`, `product`, `max`, `min` or `broadcast` whose argument
//!   mentions a list (`sum(data)`, `broadcast(data.sizes)`,
//!   `sum(inputs.sizes[a])`) folds the binary operation over the argument
//!   taken once per tensor, left to right; `broadcastable(data.sizes)` says
//!   each tensor broadcasts with the broadcast of those before it;
//! - support rows and compute `inputs: [..]` lists that name a list or an
//!   optional tensor name its tensors (none when absent);
//! - `if`, `!`, `&&` and `||` whose condition became a literal are decided,
//!   so that a branch naming an absent tensor disappears.
//!
//! Every other mistake is left to lowering, which points at the spec's text.

use std::collections::HashMap;

use super::ast::*;
use crate::diag::{Errors, Span};

/// The most tensors one declaration may stand for, and the most instances a
/// spec may have (each is a descriptor type with its kernels).
pub const MAX_COUNT: i128 = 8;
const MAX_INSTANCES: usize = 32;

/// One declaration's count in an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The declared name (`data`).
    pub name: String,
    /// The seed's name of the declaration.
    pub seed: String,
    /// An output declaration.
    pub output: bool,
    /// The fewest tensors the declaration admits.
    pub lo: u32,
    /// The most.
    pub hi: u32,
    /// How many this instance has.
    pub count: u32,
}

/// One instance of a spec: the rewritten file, the suffix of its Rust
/// names, and every tensor declaration's count.
#[derive(Clone, Debug)]
pub struct Instance {
    /// The spec as this instance reads it.
    pub file: SpecFile,
    /// `""` for a spec without optional or variadic tensors, else
    /// `NoMin`, `3`, ... (see [`suffix`]).
    pub suffix: String,
    /// Every tensor declaration in spec order, with its count; empty for a
    /// spec without optional or variadic tensors.
    pub groups: Vec<Group>,
}

/// The instances of `file`: one, unchanged, when no declaration has a count.
pub fn instances(file: &SpecFile, errors: &mut Errors) -> Vec<Instance> {
    let decls: Vec<&TensorDecl> = file
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Tensor(t) => Some(t),
            _ => None,
        })
        .collect();
    if decls.iter().all(|t| t.count.is_none()) {
        return vec![Instance {
            file: file.clone(),
            suffix: String::new(),
            groups: Vec::new(),
        }];
    }
    let mut ok = true;
    for t in &decls {
        let Some(r) = t.count else { continue };
        if r.lo < 0 || r.hi < r.lo || r.hi < 1 || r.hi > MAX_COUNT {
            errors.error(
                r.span,
                format!("a tensor count must be a range within 0..={MAX_COUNT} that admits at least one tensor"),
            );
            ok = false;
        }
        if t.host {
            errors.error(
                t.name.span,
                "a host tensor cannot be optional or variadic".to_string(),
            );
            ok = false;
        }
    }
    for output in [false, true] {
        let lists: Vec<&&TensorDecl> = decls
            .iter()
            .filter(|t| t.output == output && t.count.is_some_and(|r| r.hi > 1))
            .collect();
        if lists.len() > 1 {
            errors.error(
                lists[1].name.span,
                format!(
                    "a spec may have one variadic {} list",
                    if output { "output" } else { "input" }
                ),
            );
            ok = false;
        }
        // Positional callers (ONNX nodes) give a variadic list last.
        if let Some(list) = lists.first() {
            let last = decls.iter().rev().find(|t| t.output == output);
            if last.is_some_and(|l| l.name.text != list.name.text) {
                errors.error(
                    list.name.span,
                    format!(
                        "a variadic list must be the last {} declared",
                        if output { "output" } else { "input" }
                    ),
                );
                ok = false;
            }
        }
    }
    if !ok {
        return Vec::new();
    }

    // Every combination of counts, the first declaration varying slowest.
    let ranges: Vec<(u32, u32)> = decls
        .iter()
        .map(|t| t.count.map_or((1, 1), |r| (r.lo as u32, r.hi as u32)))
        .collect();
    let total: usize = ranges
        .iter()
        .map(|(lo, hi)| (hi - lo + 1) as usize)
        .product();
    if total > MAX_INSTANCES {
        errors.error(
            file.name.as_ref().map_or(file.span, |n| n.span),
            format!(
                "the tensor counts make {total} instances; at most {MAX_INSTANCES} are allowed"
            ),
        );
        return Vec::new();
    }
    let mut combos: Vec<Vec<u32>> = vec![Vec::new()];
    for (lo, hi) in &ranges {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                (*lo..=*hi).rev().map(move |n| {
                    let mut c = c.clone();
                    c.push(n);
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|counts| {
            let groups: Vec<Group> = decls
                .iter()
                .zip(&counts)
                .zip(&ranges)
                .map(|((t, &count), &(lo, hi))| Group {
                    name: t.name.text.clone(),
                    seed: t.seed.clone().unwrap_or_else(|| t.name.text.clone()),
                    output: t.output,
                    lo,
                    hi,
                    count,
                })
                .collect();
            Instance {
                file: rewrite(file, &groups),
                suffix: suffix(&groups),
                groups,
            }
        })
        .collect()
}

/// The suffix of an instance's Rust names: `No{Name}` for each absent
/// optional tensor, the count of a variadic list (`Sum3`).
pub fn suffix(groups: &[Group]) -> String {
    let mut s = String::new();
    for g in groups {
        if g.hi == 1 && g.lo == 0 && g.count == 0 {
            s.push_str("No");
            s.push_str(&crate::codegen::rust::camel(&g.name));
        } else if g.hi > 1 {
            s.push_str(&g.count.to_string());
        }
    }
    s
}

/// The tensor names a declaration stands for in an instance.
fn members(g: &Group) -> Vec<String> {
    if g.hi > 1 {
        (0..g.count).map(|k| format!("{}_{k}", g.name)).collect()
    } else if g.count == 1 {
        vec![g.name.clone()]
    } else {
        Vec::new()
    }
}

struct Rw {
    /// Declared name to its tensors, for declarations with a count.
    lists: HashMap<String, Vec<String>>,
    /// `for` variables to the tensor they name.
    vars: Vec<(String, String)>,
    /// `for` position variables to their values.
    ints: Vec<(String, i128)>,
    /// The declarations that are variadic lists (not optional tensors):
    /// the ones a fold walks.
    variadic: Vec<String>,
}

fn rewrite(file: &SpecFile, groups: &[Group]) -> SpecFile {
    let mut rw = Rw {
        lists: HashMap::new(),
        vars: Vec::new(),
        ints: Vec::new(),
        variadic: groups
            .iter()
            .filter(|g| g.hi > 1)
            .map(|g| g.name.clone())
            .collect(),
    };
    let mut out = file.clone();
    let mut items = Vec::new();
    for item in &file.items {
        match item {
            Item::Tensor(t) => {
                let Some(g) = groups.iter().find(|g| g.name == t.name.text) else {
                    continue;
                };
                if t.count.is_none() {
                    items.push(item.clone());
                    continue;
                }
                let names = members(g);
                rw.lists.insert(g.name.clone(), names.clone());
                for (k, n) in names.iter().enumerate() {
                    let mut t = t.clone();
                    t.count = None;
                    if g.hi > 1 {
                        t.seed = Some(format!("{}_{k}", t.seed.as_deref().unwrap_or(&g.name)));
                    }
                    t.name.text = n.clone();
                    items.push(Item::Tensor(t));
                }
            }
            other => items.push(other.clone()),
        }
    }
    out.items = items
        .into_iter()
        .map(|item| match item {
            Item::Rules(rules, span) => Item::Rules(rw.rules(&rules), span),
            Item::Support(entries, span) => Item::Support(
                entries
                    .into_iter()
                    .map(|mut e| {
                        e.rows = e
                            .rows
                            .into_iter()
                            .flat_map(|r| match rw.lists.get(&r.tensor.text) {
                                None => vec![r],
                                Some(names) => names
                                    .iter()
                                    .map(|n| {
                                        let mut r = r.clone();
                                        r.tensor.text = n.clone();
                                        r
                                    })
                                    .collect(),
                            })
                            .collect();
                        e
                    })
                    .collect(),
                span,
            ),
            Item::Compute(c) => Item::Compute(rw.compute(&c)),
            other => other,
        })
        .collect();
    out
}

impl Rw {
    fn rules(&mut self, rules: &[RuleDecl]) -> Vec<RuleDecl> {
        let mut out = Vec::new();
        for r in rules {
            match r {
                RuleDecl::Let(n, e) => out.push(RuleDecl::Let(n.clone(), self.expr(e))),
                RuleDecl::Require(e, m, s) => {
                    out.push(RuleDecl::Require(self.expr(e), m.clone(), *s))
                }
                RuleDecl::Shape(n, e, m, s) => {
                    out.push(RuleDecl::Shape(self.target(n), self.expr(e), m.clone(), *s))
                }
                RuleDecl::DType(n, e, m, s) => {
                    out.push(RuleDecl::DType(self.target(n), self.expr(e), m.clone(), *s))
                }
                RuleDecl::For(index, var, list, body, span) => {
                    match self.lists.get(&list.text).cloned() {
                        // Lowering reports a `for` over anything else.
                        None => out.push(RuleDecl::For(
                            index.clone(),
                            var.clone(),
                            list.clone(),
                            body.clone(),
                            *span,
                        )),
                        Some(names) => {
                            for (k, n) in names.into_iter().enumerate() {
                                self.vars.push((var.text.clone(), n));
                                if let Some(i) = index {
                                    self.ints.push((i.text.clone(), k as i128));
                                }
                                out.extend(self.rules(body));
                                self.vars.pop();
                                if index.is_some() {
                                    self.ints.pop();
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    fn compute(&mut self, c: &ComputeDecl) -> ComputeDecl {
        let mut c = c.clone();
        for p in &mut c.params {
            if let ParamValue::Expr(e) = &mut p.value {
                if let ExprKind::List(items) = &e.kind {
                    let mut spliced = Vec::new();
                    for it in items {
                        match &it.kind {
                            ExprKind::Name(n) if self.lists.contains_key(n) => {
                                for m in &self.lists[n] {
                                    spliced.push(Expr {
                                        kind: ExprKind::Name(m.clone()),
                                        span: it.span,
                                    });
                                }
                            }
                            _ => spliced.push(it.clone()),
                        }
                    }
                    e.kind = ExprKind::List(spliced);
                }
                *e = self.expr(e);
            }
        }
        if let Some((attr, arms)) = &mut c.switch {
            let _ = attr;
            for (_, arm) in arms.iter_mut() {
                *arm = self.compute(arm);
            }
        }
        c
    }

    /// The tensor a `shape` or `dtype` rule names, a `for` variable
    /// replaced by its tensor.
    fn target(&self, n: &Name) -> Name {
        match self.vars.iter().rev().find(|(v, _)| *v == n.text) {
            Some((_, t)) => Name {
                text: t.clone(),
                span: n.span,
            },
            None => n.clone(),
        }
    }

    /// The variadic list `e` mentions, when it mentions one standing for at
    /// least one tensor.
    fn mentioned_list(&self, e: &Expr) -> Option<String> {
        let mut found = None;
        visit(e, &mut |x| {
            if let ExprKind::Name(n) = &x.kind {
                if self.variadic.contains(n) && self.lists.get(n).is_some_and(|m| !m.is_empty()) {
                    found = Some(n.clone());
                }
            }
        });
        found
    }

    /// The tensors `e` names when it is a list (or optional) name.
    fn list_of(&self, e: &Expr) -> Option<&Vec<String>> {
        match &e.kind {
            ExprKind::Name(n) => self.lists.get(n),
            _ => None,
        }
    }

    fn expr(&self, e: &Expr) -> Expr {
        let span = e.span;
        let mk = |kind| Expr { kind, span };
        let b = |e: &Expr| Box::new(self.expr(e));
        match &e.kind {
            ExprKind::Name(n) => match self.vars.iter().rev().find(|(v, _)| v == n) {
                Some((_, t)) => mk(ExprKind::Name(t.clone())),
                None => match self.ints.iter().rev().find(|(v, _)| v == n) {
                    Some((_, k)) => mk(ExprKind::Int(*k)),
                    None => e.clone(),
                },
            },
            ExprKind::Call(f, args) => {
                if args.len() == 1 {
                    if let Some(names) = self.list_of(&args[0]) {
                        match f.text.as_str() {
                            "present" => return mk(ExprKind::Bool(!names.is_empty())),
                            "count" => return mk(ExprKind::Int(names.len() as i128)),
                            _ => {}
                        }
                    }
                    // A fold over a list: the argument once per tensor,
                    // the list's name standing for it (`data`,
                    // `data.sizes`, `inputs.sizes[a]`).
                    if let Some(list) = self.mentioned_list(&args[0]) {
                        let items: Vec<Expr> = self.lists[&list]
                            .iter()
                            .map(|n| self.expr(&rename(&args[0], &list, n)))
                            .collect();
                        if let Some(folded) = fold(&f.text, items, span) {
                            return folded;
                        }
                    }
                }
                mk(ExprKind::Call(
                    f.clone(),
                    args.iter().map(|a| self.expr(a)).collect(),
                ))
            }
            ExprKind::Index(base, i) => {
                if let (Some(names), ExprKind::Int(k)) = (self.list_of(base), &i.kind) {
                    if let Some(n) = usize::try_from(*k).ok().and_then(|k| names.get(k)) {
                        return mk(ExprKind::Name(n.clone()));
                    }
                }
                mk(ExprKind::Index(b(base), b(i)))
            }
            ExprKind::If(c, t, f) => {
                let c = self.expr(c);
                match c.kind {
                    ExprKind::Bool(true) => self.expr(t),
                    ExprKind::Bool(false) => self.expr(f),
                    _ => mk(ExprKind::If(Box::new(c), b(t), b(f))),
                }
            }
            ExprKind::Unary(op, x) => {
                let x = self.expr(x);
                match (*op, &x.kind) {
                    ("!", ExprKind::Bool(v)) => mk(ExprKind::Bool(!v)),
                    _ => mk(ExprKind::Unary(op, Box::new(x))),
                }
            }
            ExprKind::Binary(op, l, r) if *op == "&&" || *op == "||" => {
                let l = self.expr(l);
                let short = *op == "||";
                if let ExprKind::Bool(v) = l.kind {
                    return if v == short { l } else { self.expr(r) };
                }
                let r = self.expr(r);
                match r.kind {
                    ExprKind::Bool(v) if v == short => r,
                    ExprKind::Bool(_) => l,
                    _ => mk(ExprKind::Binary(op, Box::new(l), Box::new(r))),
                }
            }
            ExprKind::Binary(op, l, r) => mk(ExprKind::Binary(op, b(l), b(r))),
            ExprKind::Cast(t, x) => mk(ExprKind::Cast(t.clone(), b(x))),
            ExprKind::Field(x, f) => mk(ExprKind::Field(b(x), f.clone())),
            ExprKind::Slice(x, lo, hi) => mk(ExprKind::Slice(b(x), b(lo), b(hi))),
            ExprKind::All(v, lo, hi, body) => mk(ExprKind::All(v.clone(), b(lo), b(hi), b(body))),
            ExprKind::ListFor(v, lo, hi, cond, body) => mk(ExprKind::ListFor(
                v.clone(),
                b(lo),
                b(hi),
                cond.as_ref().map(|c| b(c)),
                b(body),
            )),
            ExprKind::List(items) => {
                mk(ExprKind::List(items.iter().map(|i| self.expr(i)).collect()))
            }
            ExprKind::Int(_) | ExprKind::Decimal(_) | ExprKind::Bool(_) => e.clone(),
        }
    }
}

/// Calls `f` on `e` and every expression inside it.
fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Call(_, args) | ExprKind::List(args) => args.iter().for_each(|a| visit(a, f)),
        ExprKind::Cast(_, x) | ExprKind::Field(x, _) | ExprKind::Unary(_, x) => visit(x, f),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            visit(a, f);
            visit(b, f);
        }
        ExprKind::Slice(a, b, c) | ExprKind::If(a, b, c) | ExprKind::All(_, a, b, c) => {
            visit(a, f);
            visit(b, f);
            visit(c, f);
        }
        ExprKind::ListFor(_, a, b, c, d) => {
            visit(a, f);
            visit(b, f);
            if let Some(c) = c {
                visit(c, f);
            }
            visit(d, f);
        }
        ExprKind::Int(_) | ExprKind::Decimal(_) | ExprKind::Bool(_) | ExprKind::Name(_) => {}
    }
}

/// `e` with every name `from` replaced by `to`.
fn rename(e: &Expr, from: &str, to: &str) -> Expr {
    let r = |x: &Expr| Box::new(rename(x, from, to));
    let kind = match &e.kind {
        ExprKind::Name(n) if n == from => ExprKind::Name(to.to_owned()),
        ExprKind::Call(f, args) => ExprKind::Call(
            f.clone(),
            args.iter().map(|a| rename(a, from, to)).collect(),
        ),
        ExprKind::List(items) => {
            ExprKind::List(items.iter().map(|a| rename(a, from, to)).collect())
        }
        ExprKind::Cast(t, x) => ExprKind::Cast(t.clone(), r(x)),
        ExprKind::Field(x, fld) => ExprKind::Field(r(x), fld.clone()),
        ExprKind::Unary(op, x) => ExprKind::Unary(op, r(x)),
        ExprKind::Index(a, b) => ExprKind::Index(r(a), r(b)),
        ExprKind::Binary(op, a, b) => ExprKind::Binary(op, r(a), r(b)),
        ExprKind::Slice(a, b, c) => ExprKind::Slice(r(a), r(b), r(c)),
        ExprKind::If(a, b, c) => ExprKind::If(r(a), r(b), r(c)),
        ExprKind::All(v, a, b, c) => ExprKind::All(v.clone(), r(a), r(b), r(c)),
        ExprKind::ListFor(v, a, b, c, d) => {
            ExprKind::ListFor(v.clone(), r(a), r(b), c.as_ref().map(|c| r(c)), r(d))
        }
        other => other.clone(),
    };
    Expr { kind, span: e.span }
}

/// `f` folded over `items` left to right, when `f` is a fold this module
/// knows.
fn fold(f: &str, items: Vec<Expr>, span: Span) -> Option<Expr> {
    let mk = |kind| Expr { kind, span };
    let call = |name: &str, a: Expr, b: Expr| {
        mk(ExprKind::Call(
            Name {
                text: name.to_owned(),
                span,
            },
            vec![a, b],
        ))
    };
    let mut it = items.into_iter();
    let first = it.next()?;
    match f {
        "sum" | "product" => {
            let op = if f == "sum" { "+" } else { "*" };
            Some(it.fold(first, |a, x| {
                mk(ExprKind::Binary(op, Box::new(a), Box::new(x)))
            }))
        }
        "max" | "min" | "broadcast" => Some(it.fold(first, |a, x| call(f, a, x))),
        "broadcastable" => {
            let mut acc = first;
            let mut cond: Option<Expr> = None;
            for x in it {
                let c = call("broadcastable", acc.clone(), x.clone());
                cond = Some(match cond {
                    None => c,
                    Some(p) => mk(ExprKind::Binary("&&", Box::new(p), Box::new(c))),
                });
                acc = call("broadcast", acc, x);
            }
            Some(cond.unwrap_or(mk(ExprKind::Bool(true))))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_spec;

    const CLIP: &str = r#"operator C {
        input x: tensor "X"
        input lo: optional tensor "Lo"
        input hi: optional tensor "Hi"
        output y: tensor "Y"
        rules {
            require !present(lo) || dtype(lo) == dtype(x) => "lo";
            require !present(hi) || dtype(hi) == dtype(x) => "hi";
            dtype y = dtype(x) => "y";
            shape y = x.sizes => "y";
        }
        support { ranks 0..=4 { x: FLOAT32 INT32; lo: FLOAT32 INT32; hi: FLOAT32 INT32; y: FLOAT32 INT32; } }
        compute elementwise {
            inputs: [x, lo, hi]
            output: y
            value: if present(lo) { if present(hi) { min(max(x, lo), hi) } else { max(x, lo) } }
                   else { if present(hi) { min(x, hi) } else { x } }
            accuracy: exact
        }
    }"#;

    const SUM: &str = r#"operator S {
        input data: tensor[1..=3] "data"
        output s: tensor "S"
        rules {
            for t in data { require dtype(t) == dtype(data[0]) => "same type"; }
            require broadcastable(data.sizes) => "broadcastable";
            dtype s = dtype(data[0]) => "s";
            shape s = broadcast(data.sizes) => "s";
        }
        support { ranks 0..=4 { data: FLOAT32; s: FLOAT32; } }
        compute elementwise { inputs: [data] output: s value: sum(data) / count(data) accuracy: ulp(3) }
    }"#;

    fn of(src: &str) -> (Vec<Instance>, Vec<String>) {
        let mut errors = Errors::default();
        let file = parse_spec(src, &mut errors);
        let out = instances(&file, &mut errors);
        (
            out,
            errors.into_vec().into_iter().map(|d| d.message).collect(),
        )
    }

    fn tensors(i: &Instance) -> Vec<String> {
        i.file
            .items
            .iter()
            .filter_map(|it| match it {
                Item::Tensor(t) => Some(t.name.text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn optional_tensors_make_an_instance_per_presence() {
        let (insts, errors) = of(CLIP);
        assert!(errors.is_empty(), "{errors:?}");
        let suffixes: Vec<&str> = insts.iter().map(|i| i.suffix.as_str()).collect();
        assert_eq!(suffixes, ["", "NoHi", "NoLo", "NoLoNoHi"]);
        assert_eq!(tensors(&insts[2]), ["x", "hi", "y"]);
        assert_eq!(tensors(&insts[3]), ["x", "y"]);
        let counts: Vec<u32> = insts[2].groups.iter().map(|g| g.count).collect();
        assert_eq!(counts, [1, 0, 1, 1]);
        // Each instance compiles: the branches naming an absent tensor are gone.
        assert!(crate::codegen::expand("c.op", CLIP).is_ok());
        assert_eq!(
            crate::codegen::operator_idents(CLIP),
            ["C", "CNoHi", "CNoLo", "CNoLoNoHi"]
        );
    }

    #[test]
    fn a_variadic_list_unrolls_rules_folds_and_rows() {
        let (insts, errors) = of(SUM);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(insts.len(), 3);
        let three = &insts[0];
        assert_eq!(three.suffix, "3");
        assert_eq!(tensors(three), ["data_0", "data_1", "data_2", "s"]);
        let Some(Item::Rules(rules, _)) = three
            .file
            .items
            .iter()
            .find(|i| matches!(i, Item::Rules(..)))
        else {
            panic!("no rules");
        };
        // Three unrolled `for` rules, the broadcastable fold, dtype, shape.
        assert_eq!(rules.len(), 6);
        let Some(Item::Support(entries, _)) = three
            .file
            .items
            .iter()
            .find(|i| matches!(i, Item::Support(..)))
        else {
            panic!("no support");
        };
        let rows: Vec<&str> = entries[0]
            .rows
            .iter()
            .map(|r| r.tensor.text.as_str())
            .collect();
        assert_eq!(rows, ["data_0", "data_1", "data_2", "s"]);
        assert!(crate::codegen::expand("s.op", SUM).is_ok());
        assert_eq!(crate::codegen::operator_idents(SUM), ["S3", "S2", "S1"]);
    }

    #[test]
    fn an_unguarded_absent_tensor_is_a_compile_error() {
        let src = CLIP.replace(
            "require !present(hi) || dtype(hi) == dtype(x)",
            "require dtype(hi) == dtype(x)",
        );
        let err = crate::codegen::expand("c.op", &src).expect_err("hi is absent in two instances");
        assert!(
            err.diagnostics.iter().any(|d| d.message.contains("`hi`")),
            "{:?}",
            err.diagnostics
        );
    }

    #[test]
    fn count_mistakes_are_reported() {
        let bad = [
            (
                SUM.replace("tensor[1..=3]", "tensor[0..=0]"),
                "a tensor count",
            ),
            (
                SUM.replace("tensor[1..=3]", "tensor[1..=9]"),
                "a tensor count",
            ),
            (
                CLIP.replace("optional tensor \"Lo\"", "optional host tensor \"Lo\""),
                "host tensor",
            ),
            (
                SUM.replace(
                    "output s: tensor \"S\"",
                    "input z: tensor \"Z\"\n output s: tensor \"S\"",
                ),
                "must be the last input",
            ),
        ];
        for (src, want) in bad {
            let (_, errors) = of(&src);
            assert!(
                errors.iter().any(|e| e.contains(want)),
                "{want}: {errors:?}"
            );
        }
    }
}
