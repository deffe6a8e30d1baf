//! Families: what a spec's `compute <family> { .. }` block means.
//!
//! Every family is one module of `ops-core` under the typed contract
//! ([`ops_core::family`]), reached here through one generic adapter
//! (`contract`): it lowers the block's declared parameters with the
//! spec's names and types (`arithmetic` for the spec's arithmetic),
//! checks the family's constraints against the tables, and generates the
//! same glue for every family. [`Family`] and [`Pattern`] are the
//! compiler's side of that adapter: a family as the parser meets it, and
//! a lowered block. Adding a family is adding its module to
//! `ops_core::family` and one line to `ops_core::family::FAMILIES`.
//!
//! What is computed per element is not the family's: it comes from the
//! spec, as arithmetic ([`ops_core::scalar`]) the family instantiates per
//! data type (the `fold` family's `map`, `combine` and `finish`).

use std::fmt;

use crate::codegen::compute::ComputeCode;
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::Spec;
use crate::syntax::ast;

mod arithmetic;
mod contract;

/// Every family a `compute` block may name outside the contract: none
/// left (every family is one of [`ops_core::family::FAMILIES`]).
pub static FAMILIES: &[&dyn Family] = &[];

/// The family named `name`: one of [`FAMILIES`], or a family of
/// [`ops_core::family::FAMILIES`] (the typed contract).
pub fn family(name: &str) -> Option<&'static dyn Family> {
    FAMILIES
        .iter()
        .copied()
        .chain(contract::ADAPTERS.iter().map(|a| a as &dyn Family))
        .find(|f| f.name() == name)
}

/// Every family's name, for diagnostics.
pub fn names() -> Vec<&'static str> {
    FAMILIES
        .iter()
        .map(|f| f.name())
        .chain(ops_core::family::FAMILIES.iter().map(|f| f.name()))
        .collect()
}

/// A pattern family: the meaning of `compute <name> { .. }`.
pub trait Family: Sync {
    /// The name a spec writes after `compute`.
    fn name(&self) -> &'static str;

    /// Lowers a compute block's parameters with the spec's names and types
    /// (`cx`), recording every mistake in `errors`.
    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>>;
}

/// A lowered compute block of some family.
pub trait Pattern: fmt::Debug {
    /// A boxed copy (the model is cloned per arm of a `compute switch`).
    fn clone_box(&self) -> Box<dyn Pattern>;

    /// Checks the block against the whole spec: its tensors' rows in the
    /// support tables (an output that keeps its input's values lists the same
    /// data types; index tensors list integers; the arithmetic exists for
    /// every listed type).
    fn check(&self, spec: &Spec, errors: &mut Errors);

    /// The code the block contributes to the operator's module, with kernel
    /// keys starting with `key_name` (the operator's qualified name).
    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode;

    /// True when the generated code reads inputs through their strides
    /// (`ops_core::OperatorInfo::strided_inputs`); false for families that
    /// read packed inputs.
    fn strided_inputs(&self) -> bool {
        false
    }
}

impl Clone for Box<dyn Pattern> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The optional `domain: [lo, hi]` parameter of a pattern with a ULP
/// contract: the input values its bound is stated for, which fuzzers draw
/// from (`ops_core::Operator::accuracy_domain`). `Some(None)` when absent,
/// `None` after reporting a malformed one.
pub(crate) fn domain_param(
    param: Option<&ast::ParamValue>,
    errors: &mut Errors,
) -> Option<Option<(f64, f64)>> {
    const SHAPE: &str = "`domain` is `[lo, hi]`, two numbers with lo < hi";
    match param {
        None => Some(None),
        Some(ast::ParamValue::Expr(ast::Expr {
            kind: ast::ExprKind::List(items),
            span,
        })) if items.len() == 2 => {
            match (
                crate::lower::literal_f64(&items[0]),
                crate::lower::literal_f64(&items[1]),
            ) {
                (Some(lo), Some(hi)) if lo < hi => Some(Some((lo, hi))),
                _ => {
                    errors.error(*span, SHAPE);
                    None
                }
            }
        }
        Some(ast::ParamValue::Expr(e)) => {
            errors.error(e.span, SHAPE);
            None
        }
        Some(ast::ParamValue::Map(n, _)) => {
            errors.error(n.span, SHAPE);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    mod fold;
    mod scatter;
}
