//! The families of [`ops_core::family`], under their typed contract: one
//! adapter for all of them. It lowers a block's declared parameters, checks
//! the declared constraints against the tables, and generates the same glue
//! for every family: the configuration `static`, the kernels the family
//! lists, and calls of the family's methods. It names no family.

use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

use ops_core::family::{Constraint, Family as Contract, KernelDecl, ParamKind, Value};
use quote::quote;

use super::{Family, Pattern};
use crate::check::{integer_types, same_types};
use crate::codegen::compute::{
    dtype_pairs, gen_access, gen_kernel, gen_scalar, gen_ty, kernel_ident, ComputeCode,
};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::{Diagnostic, Errors};
use crate::lower::Lower;
use crate::model::{AttrType, Spec};
use crate::syntax::ast;

/// One adapter per family of [`ops_core::family::FAMILIES`], in its order.
pub(crate) static ADAPTERS: LazyLock<Vec<Adapter>> = LazyLock::new(|| {
    ops_core::family::FAMILIES
        .iter()
        .enumerate()
        .map(|(index, &family)| Adapter { index, family })
        .collect()
});

/// A contract family as a spec-compiler [`Family`].
pub(crate) struct Adapter {
    /// Its position in [`ops_core::family::FAMILIES`].
    index: usize,
    family: &'static dyn Contract,
}

/// A lowered block of a contract family.
#[derive(Clone)]
pub(crate) struct Lowered {
    index: usize,
    family: &'static dyn Contract,
    /// The declared parameters' values, in order.
    values: Vec<Value>,
    docs: Vec<String>,
}

impl fmt::Debug for Lowered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lowered")
            .field("family", &self.family.name())
            .field("values", &self.values)
            .finish()
    }
}

impl Family for Adapter {
    fn name(&self) -> &'static str {
        self.family.name()
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        let decls = self.family.params();
        let names = |optional: bool| -> Vec<&str> {
            decls
                .iter()
                .filter(|p| p.kind.optional() == optional)
                .map(|p| p.name)
                .collect()
        };
        let (keys, optional) = (names(false), names(true));
        let params = cx.params_optional(c, &keys, &optional, errors)?;
        // Every parameter lowered (and its mistakes reported) before any
        // failure returns; arithmetic after the tensors it reads.
        let mut values: Vec<Option<Value>> = decls
            .iter()
            .map(|p| match p.kind {
                ParamKind::Input => cx
                    .param_tensor(&params, p.name, false, c, errors)
                    .map(Value::Tensor),
                ParamKind::Output => cx
                    .param_tensor(&params, p.name, true, c, errors)
                    .map(Value::Tensor),
                // Expressions live for the whole compilation, as the
                // lowered spec's others do.
                ParamKind::Count => cx
                    .param_int(&params, p.name, c, errors)
                    .map(|e| Value::Count(Box::leak(Box::new(e)))),
                _ if p.kind.optional() && !params.contains_key(p.name) => Some(Value::Absent),
                ParamKind::OptionalCount => cx
                    .param_int(&params, p.name, c, errors)
                    .map(|e| Value::Count(Box::leak(Box::new(e)))),
                ParamKind::List | ParamKind::OptionalList => cx
                    .param_list(&params, p.name, c, errors)
                    .map(|e| Value::List(Box::leak(Box::new(e)))),
                ParamKind::Word(words) => {
                    let words: Vec<(&str, u32)> =
                        words.iter().zip(0u32..).map(|(&w, i)| (w, i)).collect();
                    cx.param_word(&params, p.name, &words, c, errors)
                        .map(Value::Word)
                }
                ParamKind::OptionalValue => value_source(cx, &params, p.name, c, errors),
                ParamKind::Inputs { max, device } => cx
                    .param_tensor_list(&params, p.name, (false, device, Some(max)), c, errors)
                    .map(|list| Value::Tensors(list.leak())),
                ParamKind::OptionalWord(words) => {
                    let words: Vec<(&str, u32)> =
                        words.iter().zip(0u32..).map(|(&w, i)| (w, i)).collect();
                    cx.param_word(&params, p.name, &words, c, errors)
                        .map(Value::Word)
                }
                ParamKind::Arithmetic { .. } | ParamKind::Instruction { .. } => Some(Value::Absent),
                ParamKind::WordByAttr(words) => word_by_attr(cx, &params, p.name, words, c, errors),
                ParamKind::AccuracyOf(var) => {
                    super::arithmetic::accuracy_of(cx, &params, p.name, var, errors)
                }
                ParamKind::Accuracy => {
                    super::arithmetic::accuracy(&params, p.name, errors).map(Value::Accuracy)
                }
                ParamKind::OptionalDomain => {
                    super::domain_param(params.get(p.name).copied(), errors).map(|d| match d {
                        Some((lo, hi)) => Value::Domain(lo, hi),
                        None => Value::Absent,
                    })
                }
                ParamKind::Outputs { every } => {
                    let list =
                        cx.param_tensor_list(&params, p.name, (true, false, None), c, errors)?;
                    let all: Vec<usize> = (0..cx.spec.tensors.len())
                        .filter(|&t| cx.spec.tensors[t].output)
                        .collect();
                    if every && list != all {
                        errors.error(
                            c.pattern.span,
                            format!(
                                "`{}` lists every output tensor of the operator, in order",
                                p.name
                            ),
                        );
                        return None;
                    }
                    Some(Value::Tensors(list.leak()))
                }
            })
            .collect();
        for (i, p) in decls.iter().enumerate() {
            values[i] = match p.kind {
                ParamKind::Arithmetic { over, result } => match (values[over], values[result]) {
                    (Some(Value::Tensors(inputs)), Some(Value::Tensor(result))) => {
                        super::arithmetic::lower(cx, &params, p.name, (inputs, result), c, errors)
                            .map(|a| Value::Arithmetic(Box::leak(Box::new(a))))
                    }
                    _ => None,
                },
                ParamKind::Instruction {
                    of,
                    what,
                    vars,
                    missing,
                } => {
                    // A variable gated on a parameter is in scope where the
                    // block gives that parameter.
                    let given = |g: Option<usize>| {
                        g.is_none_or(|g| !matches!(values[g], Some(Value::Absent) | None))
                    };
                    let vars: Vec<_> = vars
                        .iter()
                        .filter(|(_, g)| given(*g))
                        .map(|&(v, _)| v)
                        .collect();
                    match values[of] {
                        Some(Value::Tensor(t)) => super::arithmetic::instruction(
                            cx,
                            &params,
                            p.name,
                            (t, what),
                            &vars,
                            missing,
                            errors,
                        ),
                        _ => None,
                    }
                }
                _ => continue,
            };
        }
        let values: Vec<Value> = values.into_iter().collect::<Option<_>>()?;
        if let Some(m) = self.family.misuse(&values) {
            errors.push(Diagnostic::new(c.pattern.span, m.message).help(m.help));
            return None;
        }
        Some(Box::new(Lowered {
            index: self.index,
            family: self.family,
            values,
            docs: c.docs.clone(),
        }))
    }
}

/// A [`ParamKind::OptionalValue`]: a float, integer, boolean or scalar
/// attribute ([`Value::Attr`]), else an input tensor ([`Value::Tensor`]).
fn value_source(
    cx: &mut Lower<'_>,
    params: &HashMap<String, &ast::ParamValue>,
    key: &str,
    c: &ast::ComputeDecl,
    errors: &mut Errors,
) -> Option<Value> {
    let named = match params.get(key) {
        None => return Some(Value::Absent),
        Some(ast::ParamValue::Expr(ast::Expr {
            kind: ast::ExprKind::Name(n),
            span,
        })) => cx
            .spec
            .attrs
            .iter()
            .position(|a| &a.name == n)
            .map(|i| (i, n, *span)),
        Some(_) => None,
    };
    let Some((i, n, span)) = named else {
        return cx
            .param_tensor(params, key, false, c, errors)
            .map(Value::Tensor);
    };
    match cx.spec.attrs[i].ty {
        AttrType::Float(_) | AttrType::Int(_) | AttrType::Bool | AttrType::Scalar(_) => {
            Some(Value::Attr(i))
        }
        _ => {
            errors.error(
                span,
                format!("parameter `{key}` names a host tensor or a float, integer or boolean attribute; `{n}` is neither"),
            );
            None
        }
    }
}

/// A [`ParamKind::WordByAttr`]: one of `words`, or `attr { MEMBER: word,
/// .. }` with a word for every member of an enum attribute or both values
/// of a boolean one.
fn word_by_attr(
    cx: &mut Lower<'_>,
    params: &HashMap<String, &ast::ParamValue>,
    key: &str,
    words: &[&str],
    c: &ast::ComputeDecl,
    errors: &mut Errors,
) -> Option<Value> {
    let Some(ast::ParamValue::Map(attr, pairs)) = params.get(key) else {
        let words: Vec<(&str, u32)> = words.iter().zip(0u32..).map(|(&w, i)| (w, i)).collect();
        return cx
            .param_word(params, key, &words, c, errors)
            .map(Value::Word);
    };
    let Some(ai) = cx.spec.attrs.iter().position(|a| a.name == attr.text) else {
        cx.unknown_name(attr.span, &attr.text, errors);
        return None;
    };
    // An enum's members in order, or a bool's `false`, `true` (what
    // `OpEnv::scalar_attr` gives).
    let bools = ["false".to_owned(), "true".to_owned()];
    let (members, what) = match cx.spec.attrs[ai].ty {
        AttrType::Enum(ei) => {
            let en = &cx.spec.enums[ei];
            (&en.members[..], format!("a member of enum `{}`", en.name))
        }
        AttrType::Bool => (&bools[..], "`false` or `true`".to_owned()),
        _ => {
            errors.error(
                attr.span,
                format!("`{}` is not an enum or bool attribute", attr.text),
            );
            return None;
        }
    };
    let mut out: Vec<Option<u32>> = vec![None; members.len()];
    let mut ok = true;
    for (m, v) in pairs {
        let Some(mi) = members.iter().position(|x| x == &m.text) else {
            errors.error(m.span, format!("`{}` is not {what}", m.text));
            ok = false;
            continue;
        };
        match words.iter().position(|&w| w == v.text) {
            Some(w) => out[mi] = Some(w as u32),
            None => {
                let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
                errors.error(v.span, format!("{key} must be {}", quoted.join(" or ")));
                ok = false;
            }
        }
    }
    if let Some(missing) = out.iter().position(Option::is_none) {
        if ok {
            errors.error(
                attr.span,
                format!("`{key}` does not say what `{}` means", members[missing]),
            );
        }
        return None;
    }
    let words: Vec<u32> = out.into_iter().flatten().collect();
    ok.then(|| Value::WordByAttr(ai, words.leak()))
}

/// Reports each table row of tensor `t` that lists BOOL.
fn numbers(spec: &Spec, t: usize, errors: &mut Errors) {
    for e in &spec.support {
        for r in e.rows.iter().filter(|r| r.tensor == t) {
            if r.dtypes.contains(&ops_core::DataType::Bool) {
                errors.error(
                    r.span,
                    format!(
                        "`{}` holds indices: its data types must be numbers, not BOOL",
                        spec.tensors[t].name
                    ),
                );
            }
        }
    }
}

impl Lowered {
    /// Reports each data type a table row lists for tensor `t` that the
    /// family cannot compute for ([`Constraint::Computes`]).
    fn computes(&self, spec: &Spec, t: usize, verb: &str, errors: &mut Errors) {
        for e in &spec.support {
            for r in e.rows.iter().filter(|r| r.tensor == t) {
                for &dt in &r.dtypes {
                    if let Some(why) = self.family.unsupported(&self.values, dt) {
                        errors.push(
                            Diagnostic::new(
                                r.span,
                                format!("{} cannot be {verb}: {why}", dt.spec_name()),
                            )
                            .help(format!(
                                "remove {} from `{}`'s row",
                                dt.spec_name(),
                                spec.tensors[t].name
                            )),
                        );
                    }
                }
            }
        }
    }
}

impl Pattern for Lowered {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        // A parameter's tensors: one, or a list's.
        let slots = |p: usize| match self.values[p] {
            Value::Tensors(t) => t.to_vec(),
            Value::Tensor(t) => vec![t],
            _ => Vec::new(),
        };
        for c in self.family.constraints(&self.values) {
            match *c {
                Constraint::Integer(p) => {
                    for t in slots(p) {
                        integer_types(spec, t, errors);
                    }
                }
                Constraint::Host(p, what) => {
                    for t in slots(p) {
                        if !spec.tensors[t].host {
                            errors.error(
                                spec.tensors[t].span,
                                format!(
                                    "`{}` {what}, read on the host: declare it `host tensor`",
                                    spec.tensors[t].name
                                ),
                            );
                        }
                    }
                }
                Constraint::Numbers(p) => {
                    for t in slots(p) {
                        numbers(spec, t, errors);
                    }
                }
                Constraint::SameTypes(a, b, what) => {
                    for x in slots(a) {
                        for y in slots(b) {
                            same_types(spec, x, y, what, errors);
                        }
                    }
                }
                Constraint::Computes(p, verb) => {
                    for t in slots(p) {
                        self.computes(spec, t, verb, errors);
                    }
                }
            }
        }
        for v in &self.values {
            if let Value::Arithmetic(a) = v {
                super::arithmetic::check(a, spec, errors);
            }
        }
    }

    fn strided_inputs(&self) -> bool {
        self.family.strided_inputs()
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        let index = self.index;
        let family = quote!(::ops_core::family::FAMILIES[#index]);
        let pairs = |a: usize, b: usize| dtype_pairs(spec, a, b).into_iter().collect();
        let mut statics = Vec::new();
        let mut entries = Vec::new();
        for k in self.family.kernels(&self.values, &pairs) {
            let KernelDecl {
                variant,
                types,
                bindings,
                workgroup_size: size,
            } = k;
            let key = self.family.kernel_key(key_name, &k);
            let types = gen_types(types.as_slice());
            let access = bindings.iter().map(gen_access);
            let decl = quote!(::ops_core::family::KernelDecl {
                variant: #variant,
                types: #types,
                bindings: &[#(#access),*],
                workgroup_size: #size,
            });
            let id = kernel_ident(variant, k.types.as_slice());
            statics.push(gen_kernel(
                &id,
                &key,
                quote!(#family.kernel_text(CONFIG, &#decl, #key, #origin)),
                bindings,
                quote!(#size),
            ));
            entries.push(quote!(::ops_core::family::KernelEntry { decl: #decl, kernel: &#id }));
        }
        let values = self.values.iter().map(|v| match *v {
            Value::Tensor(t) => quote!(::ops_core::family::Value::Tensor(#t)),
            Value::Count(e) => {
                let e = gen_expr(e);
                quote!(::ops_core::family::Value::Count(&#e))
            }
            Value::List(e) => {
                let e = gen_expr(e);
                quote!(::ops_core::family::Value::List(&#e))
            }
            Value::Tensors(t) => quote!(::ops_core::family::Value::Tensors(&[#(#t),*])),
            Value::Word(w) => quote!(::ops_core::family::Value::Word(#w)),
            Value::Arithmetic(a) => {
                let value = gen_scalar(a.value);
                let types = a.types.iter().map(|&t| gen_ty(t));
                let bindings = a.bindings.iter().map(|b| gen_types(b.as_slice()));
                let text = a.text;
                quote!(::ops_core::family::Value::Arithmetic(&::ops_core::family::Arithmetic {
                    value: #value,
                    types: &[#(#types),*],
                    bindings: &[#(#bindings),*],
                    text: #text,
                }))
            }
            Value::Accuracy(None) => quote!(::ops_core::family::Value::Accuracy(
                ::core::option::Option::None
            )),
            Value::Accuracy(Some(n)) => {
                quote!(::ops_core::family::Value::Accuracy(::core::option::Option::Some(#n)))
            }
            Value::Domain(lo, hi) => quote!(::ops_core::family::Value::Domain(#lo, #hi)),
            Value::Attr(i) => quote!(::ops_core::family::Value::Attr(#i)),
            Value::WordByAttr(a, words) => {
                quote!(::ops_core::family::Value::WordByAttr(#a, &[#(#words),*]))
            }
            Value::Instruction(i) => {
                let i = gen_instruction(i);
                quote!(::ops_core::family::Value::Instruction(#i))
            }
            Value::Bound(None) => {
                quote!(::ops_core::family::Value::Bound(
                    ::core::option::Option::None
                ))
            }
            Value::Bound(Some(b)) => {
                let b = gen_instruction(b);
                quote!(::ops_core::family::Value::Bound(::core::option::Option::Some(#b)))
            }
            Value::Absent => quote!(::ops_core::family::Value::Absent),
        });
        let domain = self.values.iter().find_map(|v| match *v {
            Value::Domain(lo, hi) => Some(quote!(::core::option::Option::Some((#lo, #hi)))),
            _ => None,
        });
        let mut docs = self.docs.clone();
        docs.extend(self.family.docs(&self.values));
        let kernel_ids: Vec<_> = statics.iter().map(|(id, _)| id.clone()).collect();
        let kernel_items = statics.iter().map(|(_, item)| item);
        let call = quote!(::ops_core::family::Call::new(self, CONFIG, KERNEL_SET));
        ComputeCode {
            items: quote! {
                pub(crate) static CONFIG: &[::ops_core::family::Value] = &[#(#values),*];
                #(#kernel_items)*
                pub(crate) static KERNEL_SET: &[::ops_core::family::KernelEntry] = &[#(#entries),*];
                static KERNELS: &[&::ops_core::Kernel] = &[#(&#kernel_ids),*];
            },
            kernel_ids,
            tolerance: quote!(#family.tolerance(&#call)),
            domain: domain.unwrap_or_else(|| quote!(::core::option::Option::None)),
            run_cpu: quote!(#family.run_cpu(&#call, inputs, __precision)),
            gpu_plan: quote!(::ops_core::family::gpu_plan(#family, &#call, class)),
            gpu_plan_variants: quote!(#family.gpu_plan_variants(&#call)),
            index_error: quote!(#family.index_error(&#call, inputs, check, position)),
            index_bounds: quote!(#family.index_bounds(&#call)),
            docs,
        }
    }
}

/// A reference to an [`ops_core::family::Instruction`] as a constant
/// expression.
fn gen_instruction(i: &ops_core::family::Instruction) -> proc_macro2::TokenStream {
    let (value, text) = (gen_scalar(i.value), i.text);
    quote!(&::ops_core::family::Instruction {
        value: #value,
        text: #text,
    })
}

/// A [`ops_core::family::Types`] as a constant expression.
fn gen_types(types: &[ops_core::DataType]) -> proc_macro2::TokenStream {
    let types = types.iter().map(|&d| gen_dtype(d));
    quote!(::ops_core::family::Types::new(&[#(#types),*]))
}
