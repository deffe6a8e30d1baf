//! The arithmetic parameters of the family contract
//! ([`ops_core::family::ParamKind::Arithmetic`], `Accuracy`,
//! `OptionalDomain`): an expression in the spec's arithmetic over a list of
//! tensors, typed by the spec's rules and bound per kernel by its tables.
//!
//! Each tensor's type comes from the spec's rules: tensors a
//! `dtype out = dtype(x)` step or a `require dtype(a) == dtype(b)` (alone or
//! in a conjunction) ties together share a type parameter, a
//! `dtype out = BOOL` step fixes a type (as do tables listing one data type
//! for every tensor of a group), and every other tensor has a parameter of
//! its own. The result's parameter is `T`, what `cast<T>(..)` converts to.
//! A kernel is generated for every binding of the parameters the support
//! tables admit.

use std::collections::{BTreeSet, HashMap};

use ops_core::expr::{CmpOp, Expr as RExpr};
use ops_core::family::{Arithmetic, Instruction, Missing, Types, Value};
use ops_core::scalar::{Scalar, Ty as STy, TypeEnv, Var};
use ops_core::DataType;

use crate::diag::{Diagnostic, Errors};
use crate::lower::{Lower, ScalarEnv};
use crate::model::*;
use crate::syntax::ast::{self, ExprKind, ParamValue};

/// The type of each tensor of a spec from its rules (see the module docs):
/// `Data` for a fixed type, `Param(p)` for a shared one, the output's
/// parameter (when it has one) being 0.
pub(crate) fn tensor_types(spec: &Spec, inputs: &[usize], output: usize) -> Vec<STy> {
    let n = spec.tensors.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], i: usize) -> usize {
        let mut r = i;
        while p[r] != r {
            r = p[r];
        }
        p[i] = r;
        r
    }
    let mut fixed: Vec<Option<DataType>> = vec![None; n];
    fn conjuncts<'e>(e: &'e RExpr, out: &mut Vec<&'e RExpr>) {
        match e {
            RExpr::And(a, b) => {
                conjuncts(a, out);
                conjuncts(b, out);
            }
            other => out.push(other),
        }
    }
    for step in &spec.steps {
        match step {
            Step::DType { tensor, dtype, .. } => match dtype {
                RExpr::TensorDType(j) => {
                    let (a, b) = (find(&mut parent, *tensor), find(&mut parent, *j));
                    parent[a] = b;
                }
                RExpr::DType(d) => fixed[*tensor] = Some(*d),
                _ => {}
            },
            Step::Require { cond, .. } => {
                let mut cs = Vec::new();
                conjuncts(cond, &mut cs);
                for c in cs {
                    if let RExpr::Cmp(CmpOp::Eq, RExpr::TensorDType(i), RExpr::TensorDType(j), ..) =
                        c
                    {
                        let (a, b) = (find(&mut parent, *i), find(&mut parent, *j));
                        parent[a] = b;
                    }
                }
            }
            _ => {}
        }
    }
    // A group with a fixed member is fixed, and so is a group whose
    // tensors the tables give one data type only (a logical operator's
    // BOOL inputs).
    let mut group_fixed: Vec<Option<DataType>> = vec![None; n];
    let mut listed: Vec<BTreeSet<DataType>> = vec![BTreeSet::new(); n];
    for (t, fixed) in fixed.iter().enumerate() {
        let r = find(&mut parent, t);
        if let Some(d) = *fixed {
            group_fixed[r] = Some(d);
        }
        for e in &spec.support {
            for row in e.rows.iter().filter(|row| row.tensor == t) {
                listed[r].extend(row.dtypes.iter().copied());
            }
        }
    }
    for r in 0..n {
        if group_fixed[r].is_none() && listed[r].len() == 1 {
            group_fixed[r] = listed[r].first().copied();
        }
    }
    let mut param_of: Vec<Option<u8>> = vec![None; n];
    let mut next = 0u8;
    let order: Vec<usize> = std::iter::once(output)
        .chain(inputs.iter().copied())
        .collect();
    let mut ty = |t: usize, parent: &mut Vec<usize>| -> STy {
        let r = find(parent, t);
        if let Some(d) = group_fixed[r] {
            return STy::Data(d);
        }
        let p = *param_of[r].get_or_insert_with(|| {
            next += 1;
            next - 1
        });
        STy::Param(p)
    };
    let out_ty = ty(order[0], &mut parent);
    let mut types: Vec<STy> = inputs.iter().map(|&i| ty(i, &mut parent)).collect();
    types.push(out_ty);
    types
}

/// Every binding of the parameters of `types` the support tables admit.
pub(crate) fn bindings(spec: &Spec, tensors: &[usize], types: &[STy]) -> BTreeSet<Vec<DataType>> {
    let params = types
        .iter()
        .filter_map(|t| t.param().map(|p| usize::from(p) + 1))
        .max()
        .unwrap_or(0);
    let mut out = BTreeSet::new();
    for e in &spec.support {
        let mut cands: Vec<Option<BTreeSet<DataType>>> = vec![None; params];
        let mut ok = true;
        for (k, &t) in tensors.iter().enumerate() {
            let Some(row) = e.rows.iter().find(|r| r.tensor == t) else {
                continue;
            };
            let listed: BTreeSet<DataType> = row.dtypes.iter().copied().collect();
            match types[k] {
                STy::Data(d) => ok &= listed.contains(&d),
                // A cast's type, never a tensor's (`tensor_types`).
                STy::AtLeast(..) => ok = false,
                STy::Param(p) => {
                    let slot = &mut cands[usize::from(p)];
                    *slot = Some(match slot.take() {
                        None => listed,
                        Some(s) => s.intersection(&listed).copied().collect(),
                    });
                }
            }
        }
        if !ok || cands.iter().any(Option::is_none) {
            continue;
        }
        let mut combos: Vec<Vec<DataType>> = vec![Vec::new()];
        for c in cands.into_iter().flatten() {
            combos = combos
                .into_iter()
                .flat_map(|prefix| {
                    c.iter().map(move |&d| {
                        let mut v = prefix.clone();
                        v.push(d);
                        v
                    })
                })
                .collect();
        }
        out.extend(combos);
    }
    out
}

/// Lowers arithmetic parameter `key` over the input tensors `inputs` with
/// the type of tensor `result`.
pub(crate) fn lower(
    cx: &mut Lower<'_>,
    params: &HashMap<String, &ParamValue>,
    key: &str,
    (inputs, result): (&[usize], usize),
    c: &ast::ComputeDecl,
    errors: &mut Errors,
) -> Option<Arithmetic> {
    let types = tensor_types(cx.spec, inputs, result);
    let names: Vec<(String, Var)> = inputs
        .iter()
        .enumerate()
        .map(|(i, &t)| (cx.spec.tensors[t].name.clone(), Var::INPUTS[i]))
        .collect();
    let names: Vec<(&str, Var)> = names.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let vars: Vec<(Var, STy)> = types[..inputs.len()]
        .iter()
        .enumerate()
        .map(|(i, &t)| (Var::INPUTS[i], t))
        .collect();
    let count = types
        .iter()
        .filter_map(|t| t.param().map(|p| usize::from(p) + 1))
        .max()
        .unwrap_or(0);
    if count > Types::MAX {
        errors.push(
            Diagnostic::new(
                c.pattern.span,
                format!(
                    "`{key}` reads tensors of {count} type parameters; a kernel binds at most {}",
                    Types::MAX
                ),
            )
            .help("tie tensors' types with `require dtype(a) == dtype(b)`"),
        );
        return None;
    }
    let param_names: Vec<(String, String)> = {
        (0..count)
            .map(|p| {
                let name = if p == 0 && matches!(types[inputs.len()], STy::Param(0)) {
                    "T".to_string()
                } else {
                    format!("T{p}")
                };
                (name, format!("type parameter {p}"))
            })
            .collect()
    };
    let param_refs: Vec<(&str, &str)> = param_names
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let tensors: Vec<usize> = inputs.iter().copied().chain([result]).collect();
    let tensor_types: Vec<(usize, STy)> =
        tensors.iter().copied().zip(types.iter().copied()).collect();
    let combos = bindings(cx.spec, &tensors, &types);
    // What the tables bind each parameter to (`max(T, FLOAT32)` needs
    // floats).
    let mut bound: Vec<Vec<DataType>> = vec![Vec::new(); param_refs.len()];
    for combo in &combos {
        for (b, &d) in bound.iter_mut().zip(combo) {
            if !b.contains(&d) {
                b.push(d);
            }
        }
    }
    let env = ScalarEnv {
        params: &param_refs,
        vars: &vars,
        names: &names,
        tensors: &tensor_types,
        bound: &bound,
    };
    let (value, text) = match params.get(key) {
        Some(ParamValue::Expr(e)) => {
            let v = cx.lower_scalar(e, key, &env, types[inputs.len()], errors)?;
            (v, cx.text(e.span))
        }
        _ => {
            errors.error(
                c.pattern.span,
                format!("`{key}` is an arithmetic expression"),
            );
            return None;
        }
    };
    // The configuration lives for the whole compilation, as the lowered
    // spec's expressions do.
    Some(Arithmetic {
        value,
        types: types.leak(),
        bindings: combos
            .iter()
            .map(|c| Types::new(c))
            .collect::<Vec<_>>()
            .leak(),
        text: text.leak(),
    })
}

/// Lowers instruction role `key` ([`ops_core::family::ParamKind::Instruction`]):
/// an expression of `vars` (those in scope), each of type `T`, the data
/// type of tensor `tensor` (`what`).
pub(crate) fn instruction(
    cx: &mut Lower<'_>,
    params: &HashMap<String, &ParamValue>,
    key: &str,
    (tensor, what): (usize, &str),
    vars: &[Var],
    missing: Missing,
    errors: &mut Errors,
) -> Option<Value> {
    let e = match (params.get(key), missing) {
        (Some(ParamValue::Expr(e)), _) => e,
        (Some(ParamValue::Map(n, _)), _) => {
            errors.error(n.span, format!("`{key}` is an arithmetic expression"));
            return None;
        }
        (None, Missing::Var(v)) => {
            return Some(Value::Instruction(Box::leak(Box::new(Instruction {
                value: Box::leak(Box::new(Scalar::Var(v))),
                text: v.name(),
            }))))
        }
        // `Required` is reported with the block's other missing keys.
        (None, _) => return Some(Value::Absent),
    };
    let params_decl: &[(&str, &str)] = &[("T", what)];
    let bound = [cx.listed_types(tensor)];
    let vars: Vec<(Var, STy)> = vars.iter().map(|&v| (v, STy::T)).collect();
    let env = ScalarEnv {
        params: params_decl,
        vars: &vars,
        names: &[],
        tensors: &[],
        bound: &bound,
    };
    let value = cx.lower_scalar(e, key, &env, STy::T, errors)?;
    // The configuration lives for the whole compilation, as the lowered
    // spec's expressions do.
    Some(Value::Instruction(Box::leak(Box::new(Instruction {
        value,
        text: cx.text(e.span).leak(),
    }))))
}

/// Lowers accuracy parameter `key` whose bound is an expression of `var`
/// ([`ops_core::family::ParamKind::AccuracyOf`]): `exact` or `ulp(bound)`,
/// `bound` an INT64 expression.
pub(crate) fn accuracy_of(
    cx: &mut Lower<'_>,
    params: &HashMap<String, &ParamValue>,
    key: &str,
    var: Var,
    errors: &mut Errors,
) -> Option<Value> {
    match params.get(key) {
        Some(ParamValue::Expr(ast::Expr {
            kind: ExprKind::Name(n),
            ..
        })) if n == "exact" => Some(Value::Bound(None)),
        Some(ParamValue::Expr(
            e @ ast::Expr {
                kind: ExprKind::Call(f, args),
                ..
            },
        )) if f.text == "ulp" && args.len() == 1 => {
            const INT64: STy = STy::Data(DataType::Int64);
            let env = ScalarEnv {
                params: &[],
                vars: &[(var, INT64)],
                names: &[],
                tensors: &[],
                bound: &[],
            };
            let value = cx.lower_scalar(&args[0], key, &env, INT64, errors)?;
            Some(Value::Bound(Some(Box::leak(Box::new(Instruction {
                value,
                text: cx.text(e.span).leak(),
            })))))
        }
        Some(ParamValue::Expr(e)) => {
            errors.push(
                Diagnostic::new(e.span, format!("`{key}` is `exact` or `ulp(bound)`")).help(
                    format!(
                        "`bound` is an integer expression of `{}`: `ulp(2 * {} + 1)`",
                        var.name(),
                        var.name()
                    ),
                ),
            );
            None
        }
        _ => None,
    }
}

/// Lowers accuracy parameter `key`: `exact` (`None`) or `ulp(n)`.
pub(crate) fn accuracy(
    params: &HashMap<String, &ParamValue>,
    key: &str,
    errors: &mut Errors,
) -> Option<Option<u64>> {
    match params.get(key) {
        Some(ParamValue::Expr(ast::Expr {
            kind: ExprKind::Name(n),
            ..
        })) if n == "exact" => Some(None),
        Some(ParamValue::Expr(ast::Expr {
            kind: ExprKind::Call(f, args),
            ..
        })) if f.text == "ulp" && args.len() == 1 => match &args[0].kind {
            ExprKind::Int(n) if *n >= 0 && *n <= i128::from(u32::MAX) => Some(Some(*n as u64)),
            _ => {
                errors.error(args[0].span, "the ULP bound is a non-negative integer");
                None
            }
        },
        Some(ParamValue::Expr(e)) => {
            errors.push(
                Diagnostic::new(e.span, format!("`{key}` is `exact` or `ulp(bound)`"))
                    .help("`bound` is the most ULPs of the output type the GPU may differ from the CPU reference: `ulp(1)`"),
            );
            None
        }
        _ => None,
    }
}

/// Checks an arithmetic parameter against the tables: some binding is
/// admitted, and the expression is defined for every one.
pub(crate) fn check(a: &Arithmetic, spec: &Spec, errors: &mut Errors) {
    if a.bindings.is_empty() {
        errors.error(
            spec.support_span,
            format!("the support tables admit no data types for `{}`", a.text),
        );
    }
    for params in a.bindings {
        let env = TypeEnv::of_inputs(a.types, params.as_slice());
        if let Some(why) = a.value.unsupported_for(&env) {
            let names: Vec<&str> = params.as_slice().iter().map(|d| d.spec_name()).collect();
            errors.push(
                Diagnostic::new(
                    spec.support_span,
                    format!(
                        "`{}` cannot be computed with the types ({}): {why}",
                        a.text,
                        names.join(", ")
                    ),
                )
                .help("remove the type from the tables, or cast the operand"),
            );
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    /// The messages of the errors of an element-wise spec of `n` inputs
    /// whose types no rule ties (empty when it compiles).
    fn untied_inputs_errors(n: usize) -> Vec<String> {
        let names: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
        let inputs: String = names
            .iter()
            .map(|x| format!("input {x}: tensor \"X\"\n"))
            .collect();
        let rows: String = names.iter().map(|x| format!("{x}: INT32 INT8; ")).collect();
        let src = format!(
            "operator E {{
                {inputs}
                output y: tensor \"Y\"
                rules {{
                    dtype y = INT32 => \"y\";
                    shape y = x0.sizes => \"y\";
                }}
                support {{ ranks 1..=4 {{ {rows} y: INT32; }} }}
                compute elementwise {{
                    inputs: [{}]
                    output: y
                    value: cast<INT32>({})
                    accuracy: exact
                }}
            }}",
            names.join(", "),
            names.join(") + cast<INT32>("),
        );
        match crate::codegen::expand("t.op", &src) {
            Ok(_) => Vec::new(),
            Err(f) => f.diagnostics.into_iter().map(|d| d.message).collect(),
        }
    }

    #[test]
    fn a_kernel_binds_at_most_four_type_parameters() {
        assert_eq!(untied_inputs_errors(4), Vec::<String>::new());
        let errors = untied_inputs_errors(5);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("5 type parameters; a kernel binds at most 4"),
            "{errors:?}"
        );
    }
}
