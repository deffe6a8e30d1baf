//! What each rule of a spec reads: the tensors' ranks, sizes, data types and
//! values and the attributes it depends on, directly or through `let`
//! variables. Property 2 uses it to check that the rule a rejected
//! descriptor is blamed on involves the thing that was broken.

use crate::expr::{Expr, Step};
use crate::OperatorInfo;

/// Bit sets (bit `i` = tensor or attribute `i`) of what a rule reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// `rank(t)`.
    pub rank: u64,
    /// `t.sizes`.
    pub sizes: u64,
    /// `dtype(t)`.
    pub dtype: u64,
    /// `values(t)` of host tensors.
    pub values: u64,
    /// Attributes.
    pub attrs: u64,
}

impl Reads {
    fn union(self, o: Reads) -> Reads {
        Reads {
            rank: self.rank | o.rank,
            sizes: self.sizes | o.sizes,
            dtype: self.dtype | o.dtype,
            values: self.values | o.values,
            attrs: self.attrs | o.attrs,
        }
    }
}

fn bit(i: usize) -> u64 {
    1u64.checked_shl(i as u32).unwrap_or(0)
}

struct Walker {
    vars: Vec<Reads>,
}

impl Walker {
    fn var(&mut self, i: usize) -> &mut Reads {
        if self.vars.len() <= i {
            self.vars.resize(i + 1, Reads::default());
        }
        &mut self.vars[i]
    }

    fn expr(&mut self, e: &Expr) -> Reads {
        let mut r = Reads::default();
        match e {
            Expr::Int(_) | Expr::Bool(_) | Expr::DType(_) | Expr::Enum(_) => {}
            Expr::Attr(i) => r.attrs = bit(*i),
            Expr::Var(i) => r = *self.var(*i),
            Expr::Rank(t) => r.rank = bit(*t),
            Expr::Sizes(t) => r.sizes = bit(*t),
            Expr::TensorDType(t) => r.dtype = bit(*t),
            Expr::Values(t) => r.values = bit(*t),
            Expr::Index(a, b)
            | Expr::Concat(a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Arith(_, a, b)
            | Expr::Cmp(_, a, b, _, _) => r = self.expr(a).union(self.expr(b)),
            Expr::Slice(a, b, c) | Expr::If(a, b, c) => {
                r = self.expr(a).union(self.expr(b)).union(self.expr(c))
            }
            Expr::Neg(a) | Expr::Not(a) => r = self.expr(a),
            Expr::Call(_, args, _) => {
                for a in args.iter() {
                    r = r.union(self.expr(a));
                }
            }
            Expr::All {
                var, lo, hi, body, ..
            }
            | Expr::ListFor {
                var, lo, hi, body, ..
            } => {
                let bounds = self.expr(lo).union(self.expr(hi));
                *self.var(*var) = bounds;
                r = bounds.union(self.expr(body));
                if let Expr::ListFor {
                    filter: Some(f), ..
                } = e
                {
                    r = r.union(self.expr(f));
                }
            }
            Expr::List(items) => {
                for a in items.iter() {
                    r = r.union(self.expr(a));
                }
            }
        }
        r
    }
}

/// What a rule reads, by its message.
#[derive(Clone, Debug)]
pub struct RuleReads {
    /// The rule in the seed's words (several steps may share one).
    pub message: &'static str,
    /// What it reads.
    pub reads: Reads,
}

/// What every `require`, `shape` and `dtype` step of `rules` reads, in
/// order, plus one entry for `let` steps whose evaluation failed
/// (message `"a shape rule could not be evaluated"`, reading the union of
/// every `let`).
pub fn rule_reads(rules: &[Step]) -> Vec<RuleReads> {
    let mut w = Walker { vars: Vec::new() };
    let mut out = Vec::new();
    let mut lets = Reads::default();
    for step in rules {
        match step {
            Step::Require { cond, message } => out.push(RuleReads {
                message,
                reads: w.expr(cond),
            }),
            Step::Let { var, value } => {
                let r = w.expr(value);
                *w.var(*var) = r;
                lets = lets.union(r);
            }
            Step::Shape {
                tensor,
                sizes,
                message,
            } => {
                let mut r = w.expr(sizes);
                r.sizes |= bit(*tensor);
                r.rank |= bit(*tensor);
                out.push(RuleReads { message, reads: r });
            }
            Step::DType {
                tensor,
                dtype,
                message,
            } => {
                let mut r = w.expr(dtype);
                r.dtype |= bit(*tensor);
                out.push(RuleReads { message, reads: r });
            }
        }
    }
    out.push(RuleReads {
        message: "a shape rule could not be evaluated",
        reads: lets,
    });
    out
}

/// What the rule `message` of `info` reads: the union over the steps that
/// carry that message; `None` when no step does (a support-table rule, or a
/// message the rules do not know).
pub fn reads_of(info: &OperatorInfo, message: &str) -> Option<Reads> {
    let all = rule_reads(info.rules);
    let matching: Vec<&RuleReads> = all.iter().filter(|r| r.message == message).collect();
    if matching.is_empty() {
        return None;
    }
    Some(
        matching
            .iter()
            .fold(Reads::default(), |acc, r| acc.union(r.reads)),
    )
}

/// What the `shape` step (`shape: true`) or the `dtype` step of output
/// tensor `tensor` reads: where an inferred output's sizes or data type come
/// from. `None` when the spec has no such step.
pub fn output_rule_reads(info: &OperatorInfo, tensor: usize, shape: bool) -> Option<Reads> {
    let mut w = Walker { vars: Vec::new() };
    let mut found = None;
    for step in info.rules {
        match step {
            Step::Require { cond, .. } => {
                w.expr(cond);
            }
            Step::Let { var, value } => {
                let r = w.expr(value);
                *w.var(*var) = r;
            }
            Step::Shape {
                tensor: t, sizes, ..
            } => {
                let r = w.expr(sizes);
                if shape && *t == tensor {
                    found = Some(r);
                }
            }
            Step::DType {
                tensor: t, dtype, ..
            } => {
                let r = w.expr(dtype);
                if !shape && *t == tensor {
                    found = Some(r);
                }
            }
        }
    }
    found
}
