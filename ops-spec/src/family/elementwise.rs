//! The `elementwise` family: each output element is an expression of the
//! inputs' elements at its coordinates (after multidirectional
//! broadcasting) and of scalar attributes. Runtime:
//! [`ops_core::patterns::elementwise`]; kernels: [`crate::wgsl::elementwise`].
//!
//! ```text
//! compute elementwise {
//!     inputs: [A, B]
//!     output: C
//!     value: max(A * alpha + B, 0)
//!     accuracy: ulp(2)
//! }
//! ```
//!
//! `value` names the inputs by their tensors' names. Each tensor's type
//! comes from the spec's rules: tensors a `dtype out = dtype(x)` step or a
//! `require dtype(a) == dtype(b)` (alone or in a conjunction) ties together
//! share a type parameter, a `dtype out = BOOL` step fixes a type (as do
//! tables listing one data type for every tensor of a group), and every
//! other tensor has a parameter of its own. The output's parameter is `T`,
//! what `cast<T>(..)` converts to. A kernel is generated for every binding
//! of the parameters the support tables admit.
//!
//! An optional `domain: [lo, hi]` states the input values a ULP bound holds
//! for (a sum of several inputs holds it without cancellation): fuzzers draw
//! float inputs from it.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::codegen::compute::{gen_kernel, gen_scalar, gen_ty, ComputeCode};
use crate::codegen::exprs::gen_dtype;
use crate::diag::{Diagnostic, Errors};
use crate::lower::{Lower, ScalarEnv};
use crate::model::*;
use crate::syntax::ast::{self, ExprKind, ParamValue};
use ops_core::expr::{CmpOp, Expr as RExpr};
use ops_core::scalar::{Scalar, Ty as STy, TypeEnv, Var};
use ops_core::DataType;

/// The family, as [`super::FAMILIES`] registers it.
pub struct ElementwiseFamily;

/// A lowered `compute elementwise { .. }` block.
#[derive(Clone, Debug)]
pub struct ElementwisePattern {
    /// The input tensors, in the order of [`Var::INPUTS`].
    pub inputs: Vec<usize>,
    /// The output tensor.
    pub output: usize,
    /// The expression.
    pub value: &'static Scalar,
    /// Each tensor's type, inputs then output.
    pub types: Vec<STy>,
    /// The ULP bound (`None`: exact).
    pub accuracy: Option<u64>,
    /// The input values the ULP bound is stated for (`domain: [lo, hi]`);
    /// `None`: the default of ULP contracts.
    pub domain: Option<(f64, f64)>,
    /// The expression and the accuracy as written.
    pub text: (String, String),
    /// Doc lines.
    pub docs: Vec<String>,
}

/// The type of each tensor of a spec from its rules (see the module docs):
/// `Data` for a fixed type, `Param(p)` for a shared one, the output's
/// parameter (when it has one) being 0.
fn tensor_types(spec: &Spec, inputs: &[usize], output: usize) -> Vec<STy> {
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
fn bindings(spec: &Spec, tensors: &[usize], types: &[STy]) -> BTreeSet<Vec<DataType>> {
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

fn env_of<'a>(types: &[STy], params: &'a [DataType]) -> TypeEnv<'a> {
    let mut env = TypeEnv::uniform(params);
    for (i, &t) in types[..types.len() - 1].iter().enumerate() {
        env.vars[Var::INPUTS[i] as usize] = t;
    }
    env
}

impl Family for ElementwiseFamily {
    fn name(&self) -> &'static str {
        "elementwise"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["inputs", "output", "value", "accuracy"];
        let params = cx.params_optional(c, KEYS, &["domain"], errors)?;
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let limits = (
            false,
            false,
            Some(ops_core::patterns::elementwise::MAX_INPUTS),
        );
        let inputs = cx
            .param_tensor_list(&params, "inputs", limits, c, errors)
            .map(|ts| {
                ts.into_iter()
                    .map(|t| (t, cx.spec.tensors[t].name.clone()))
                    .collect::<Vec<_>>()
            });
        let (inputs, output) = (inputs?, output?);
        let tensors: Vec<usize> = inputs.iter().map(|t| t.0).collect();
        let types = tensor_types(cx.spec, &tensors, output);
        let names: Vec<(&str, Var)> = inputs
            .iter()
            .enumerate()
            .map(|(i, (_, n))| (n.as_str(), Var::INPUTS[i]))
            .collect();
        let vars: Vec<(Var, STy)> = types[..inputs.len()]
            .iter()
            .enumerate()
            .map(|(i, &t)| (Var::INPUTS[i], t))
            .collect();
        let param_names: Vec<(String, String)> = {
            let count = types
                .iter()
                .filter_map(|t| t.param().map(|p| usize::from(p) + 1))
                .max()
                .unwrap_or(0);
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
        let tensor_types: Vec<(usize, STy)> = tensors
            .iter()
            .chain([&output])
            .zip(&types)
            .map(|(&t, &ty)| (t, ty))
            .collect();
        // What the tables bind each parameter to (`max(T, FLOAT32)` needs
        // floats).
        let mut bound: Vec<Vec<DataType>> = vec![Vec::new(); param_refs.len()];
        for combo in bindings(cx.spec, &tensors, &types) {
            for (b, d) in bound.iter_mut().zip(combo) {
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
        let value = match params.get("value") {
            Some(ParamValue::Expr(e)) => {
                let v = cx.lower_scalar(e, "value", &env, types[inputs.len()], errors)?;
                Some((v, cx.text(e.span)))
            }
            _ => {
                errors.error(c.pattern.span, "`value` is an arithmetic expression");
                None
            }
        };
        let accuracy = match params.get("accuracy") {
            Some(ParamValue::Expr(ast::Expr {
                kind: ExprKind::Name(n),
                ..
            })) if n == "exact" => Some((None, "exact".to_string())),
            Some(ParamValue::Expr(
                e @ ast::Expr {
                    kind: ExprKind::Call(f, args),
                    ..
                },
            )) if f.text == "ulp" && args.len() == 1 => match &args[0].kind {
                ExprKind::Int(n) if *n >= 0 && *n <= i128::from(u32::MAX) => {
                    Some((Some(*n as u64), cx.text(e.span)))
                }
                _ => {
                    errors.error(args[0].span, "the ULP bound is a non-negative integer");
                    None
                }
            },
            Some(ParamValue::Expr(e)) => {
                errors.push(
                    Diagnostic::new(e.span, "`accuracy` is `exact` or `ulp(bound)`")
                        .help("`bound` is the most ULPs of the output type the GPU may differ from the CPU reference: `ulp(1)`"),
                );
                None
            }
            _ => None,
        };
        let domain = super::domain_param(params.get("domain").copied(), errors);
        let ((value, text), (accuracy, acc_text), domain) = (value?, accuracy?, domain?);
        Some(Box::new(ElementwisePattern {
            inputs: tensors,
            output,
            value,
            types,
            accuracy,
            domain,
            text: (text, acc_text),
            docs: c.docs.clone(),
        }))
    }
}

impl ElementwisePattern {
    fn tensors(&self) -> Vec<usize> {
        let mut t = self.inputs.clone();
        t.push(self.output);
        t
    }
}

impl Pattern for ElementwisePattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        let combos = bindings(spec, &self.tensors(), &self.types);
        if combos.is_empty() {
            errors.error(
                spec.support_span,
                "the support tables admit no data types for the element-wise computation",
            );
        }
        for params in &combos {
            let env = env_of(&self.types, params);
            if let Some(why) = self.value.unsupported_for(&env) {
                let names: Vec<&str> = params.iter().map(|d| d.spec_name()).collect();
                errors.push(
                    Diagnostic::new(
                        spec.support_span,
                        format!(
                            "`{}` cannot be computed with the types ({}): {why}",
                            self.text.0,
                            names.join(", ")
                        ),
                    )
                    .help("remove the type from the tables, or cast the operand"),
                );
                return;
            }
        }
    }

    fn strided_inputs(&self) -> bool {
        true
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::elementwise::elementwise_kernel_key;
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let rt = quote!(::ops_core::__private::patterns::elementwise);
        let bindings_list = ops_core::patterns::elementwise::bindings(self.inputs.len());
        let (text, acc_text) = &self.text;
        let mut statics = Vec::new();
        let mut arms = Vec::new();
        for params in bindings(spec, &self.tensors(), &self.types) {
            if self
                .value
                .unsupported_for(&env_of(&self.types, &params))
                .is_some()
            {
                continue;
            }
            let key = elementwise_kernel_key(key_name, &params);
            let names: Vec<&str> = params.iter().map(|d| d.spec_name()).collect();
            let id = format_ident!("K_ELEMENTWISE_{}", names.join("_"));
            let dts: Vec<TokenStream> = params.iter().map(|&d| gen_dtype(d)).collect();
            let generate = quote!(::ops_core::wgsl::elementwise::elementwise_kernel_text(
                &ELEMENTWISE, &[#(#dts),*], #key, #origin, #text
            ));
            let (id, item) = gen_kernel(
                &id,
                &key,
                generate,
                bindings_list,
                quote!(#rt::WORKGROUP_SIZE),
            );
            arms.push(quote!([#(#dts),*] => ::core::option::Option::Some(&#id),));
            statics.push((id, item));
        }
        let kernel_ids: Vec<proc_macro2::Ident> = statics.iter().map(|s| s.0.clone()).collect();
        let items_k = statics.iter().map(|s| &s.1);
        let value = gen_scalar(self.value);
        let types = self.types.iter().map(|&t| gen_ty(t));
        let accuracy = match self.accuracy {
            Some(n) => quote!(::core::option::Option::Some(#n)),
            None => quote!(::core::option::Option::None),
        };
        let descs: Vec<TokenStream> = self
            .inputs
            .iter()
            .map(|&i| {
                let f = format_ident!("{}", spec.tensors[i].name);
                if spec.tensors[i].host {
                    quote!(self.#f.desc())
                } else {
                    quote!(&self.#f)
                }
            })
            .collect();
        let slots = &self.inputs;
        let out_f = format_ident!("{}", spec.tensors[self.output].name);
        let out_slot = self.output - n_inputs;
        let items = quote! {
            #(#items_k)*
            static KERNELS: &[&::ops_core::Kernel] = &[#(&#kernel_ids),*];
            pub(crate) fn kernel_for(types: &[::ops_core::DataType]) -> ::core::option::Option<&'static ::ops_core::Kernel> {
                match types {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }
            pub(crate) static ELEMENTWISE: #rt::Elementwise = #rt::Elementwise {
                value: #value,
                types: &[#(#types),*],
                accuracy: #accuracy,
            };
        };
        let call = quote! {
            let __attrs = self.__scalar_attrs();
            let __inputs: &[&::ops_core::TensorDesc] = &[#(#descs),*];
            let __call = #rt::ElementwiseCall {
                inputs: __inputs,
                input_slots: &[#(#slots),*],
                output: &self.#out_f,
                output_slot: #out_slot,
                attrs: &__attrs,
            };
            let __params = #rt::call_params(&ELEMENTWISE, &__call)?;
            let __plan = #rt::elementwise_plan(&ELEMENTWISE, &__call, kernel_for(&__params));
        };
        let name = &spec.name;
        let mut docs = self.docs.clone();
        docs.push(String::new());
        docs.push("Computed element-wise (`ops_core::patterns::elementwise`), inputs broadcast multidirectionally:".into());
        docs.push(format!("- value `{text}`"));
        docs.push(format!("- accuracy: `{acc_text}`"));
        ComputeCode {
            items,
            kernel_ids,
            run_cpu: quote! {
                let out = #rt::elementwise_cpu(&ELEMENTWISE, &[#(inputs[#slots]),*], &self.#out_f, &self.__scalar_attrs(), __precision)?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                #call
                __plan
            },
            gpu_plan_variants: quote! {
                #call
                let _ = __plan;
                #rt::elementwise_plans(&ELEMENTWISE, &__call, kernel_for(&__params))
            },
            tolerance: quote!(ELEMENTWISE.tolerance(self.#out_f.dtype)),
            domain: match self.domain {
                Some((lo, hi)) => quote!(::core::option::Option::Some((#lo, #hi))),
                None => quote!(::core::option::Option::None),
            },
            index_error: quote! {
                ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
            },
            index_bounds: quote!(::std::vec::Vec::new()),
            docs,
        }
    }
}
