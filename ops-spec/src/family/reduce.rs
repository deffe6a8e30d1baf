//! The `reduce` family: each output element selects one element of its
//! reduced sub-tensor (ArgMin, ArgMax, ReduceMin), exactly, with tie, zero and
//! NaN rules from the spec. Runtime: [`ops_core::patterns::reduce`]; kernels:
//! [`crate::wgsl::reduce`].

use std::collections::HashMap;

use quote::{format_ident, quote};

use ops_core::patterns::reduce::{Keep, ReduceConfig, ReduceVariant, Select, Ties, Zeros};

use crate::wgsl::reduce::{reduce_kernel_key, reduce_supported, REDUCE_BINDINGS};

use super::{Family, Pattern};
use crate::check::{integer_types, same_types};
use crate::codegen::compute::{dtype_pairs, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::*;
use crate::syntax::ast::{self, ParamValue};

/// The family, as [`super::FAMILIES`] registers it.
pub struct ReduceFamily;

/// A lowered `compute reduce { .. }` block.
#[derive(Clone, Debug)]
pub struct ReducePattern {
    /// Reduced tensor.
    pub input: usize,
    /// Output tensor.
    pub output: usize,
    /// The axes, a list expression.
    pub axes: Expr,
    /// Compile-time configuration.
    pub cfg: ReduceConfig,
    /// Tie rule.
    pub ties: TiesParam,
    /// Doc lines (documented decisions).
    pub docs: Vec<String>,
}

impl Family for ReduceFamily {
    fn name(&self) -> &'static str {
        "reduce"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &[
            "input", "output", "axes", "keep", "select", "ties", "zeros", "nan",
        ];
        let params = cx.params(c, KEYS, errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axes = match params.get("axes") {
            Some(ParamValue::Expr(e)) => cx.expect(e, Ty::List, errors),
            _ => None,
        };
        let keep = cx.param_word(
            &params,
            "keep",
            &[("index", Keep::Index), ("value", Keep::Value)],
            c,
            errors,
        );
        let select = cx.param_word(
            &params,
            "select",
            &[("min", Select::Min), ("max", Select::Max)],
            c,
            errors,
        );
        let zeros = cx.param_word(
            &params,
            "zeros",
            &[
                ("equal", Zeros::Equal),
                ("negative_first", Zeros::NegativeFirst),
            ],
            c,
            errors,
        );
        let _nan = cx.param_word(&params, "nan", &[("wins", ())], c, errors);
        let ties = param_ties(cx, &params, c, errors);
        Some(Box::new(ReducePattern {
            input: input?,
            output: output?,
            axes: axes?,
            cfg: ReduceConfig {
                keep: keep?,
                select: select?,
                zeros: zeros?,
            },
            ties: ties?,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for ReducePattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        match self.cfg.keep {
            Keep::Index => integer_types(spec, self.output, errors),
            Keep::Value => same_types(spec, self.input, self.output, "keeps values of", errors),
        }
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let ReducePattern {
            input,
            output,
            axes,
            cfg,
            ties,
            docs,
        } = self;

        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, *input, *output) {
            if !reduce_supported(cfg, a, b) {
                continue;
            }
            for v in ReduceVariant::ALL {
                let key = reduce_kernel_key(key_name, v, a, b);
                let vi = format_ident!("{}", format!("{v:?}"));
                let (da, db) = (gen_dtype(a), gen_dtype(b));
                let generate = quote!(::ops_core::wgsl::reduce::reduce_kernel_text(
                    &CFG,
                    ::ops_core::__private::patterns::reduce::ReduceVariant::#vi,
                    #da,
                    #db,
                    #key,
                    #origin,
                ));
                kernels.push(
                    quote!(::ops_core::__private::patterns::reduce::ReduceVariant::#vi),
                    v.name(),
                    (a, b),
                    &key,
                    generate,
                    REDUCE_BINDINGS,
                    quote!(::ops_core::__private::patterns::reduce::WORKGROUP_SIZE),
                );
            }
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(
            ::ops_core::__private::patterns::reduce::ReduceVariant
        ));
        let keep = match cfg.keep {
            Keep::Index => quote!(Index),
            Keep::Value => quote!(Value),
        };
        let select = match cfg.select {
            Select::Min => quote!(Min),
            Select::Max => quote!(Max),
        };
        let zeros = match cfg.zeros {
            Zeros::Equal => quote!(Equal),
            Zeros::NegativeFirst => quote!(NegativeFirst),
        };
        let tie_tok = |t: &Ties| match t {
            Ties::First => quote!(::ops_core::__private::patterns::reduce::Ties::First),
            Ties::Last => quote!(::ops_core::__private::patterns::reduce::Ties::Last),
        };
        let ties_expr = match ties {
            TiesParam::Fixed(t) => tie_tok(t),
            TiesParam::ByAttr(ai, per) => {
                let f = format_ident!("{}", spec.attrs[*ai].name);
                let idx = 0..per.len() as u32;
                let toks = per.iter().map(tie_tok);
                quote!(match self.#f as u32 { #(#idx => #toks,)* _ => ::ops_core::__private::patterns::reduce::Ties::First })
            }
        };
        let axes_expr = gen_expr(axes);
        let in_f = format_ident!("{}", spec.tensors[*input].name);
        let out_f = format_ident!("{}", spec.tensors[*output].name);
        let in_desc = if spec.tensors[*input].host {
            quote!(self.#in_f.desc())
        } else {
            quote!(&self.#in_f)
        };
        let in_slot = *input;
        let out_slot = *output - n_inputs;
        let items = quote! {
            #lookup
            pub(crate) static CFG: ::ops_core::__private::patterns::reduce::ReduceConfig = ::ops_core::__private::patterns::reduce::ReduceConfig {
                keep: ::ops_core::__private::patterns::reduce::Keep::#keep,
                select: ::ops_core::__private::patterns::reduce::Select::#select,
                zeros: ::ops_core::__private::patterns::reduce::Zeros::#zeros,
            };
            pub(crate) static AXES: ::ops_core::__private::expr::Expr = #axes_expr;
        };
        let axes_u32 = quote! {
            let __axes: ::std::vec::Vec<u32> = self
                .__env_list(&AXES)?
                .into_iter()
                .map(|a| u32::try_from(a).map_err(|_| ::ops_core::OpError::InvalidArgument(::std::format!("axis {} is out of range", a))))
                .collect::<::core::result::Result<_, _>>()?;
        };
        let run_cpu = quote! {
            #axes_u32
            let out = ::ops_core::__private::patterns::reduce::reduce_cpu(&CFG, #ties_expr, inputs[#in_slot], &__axes, &self.#out_f)?;
            ::core::result::Result::Ok(::std::vec![out])
        };
        let gpu_plan = quote! {
            #axes_u32
            ::ops_core::__private::patterns::reduce::reduce_plan(
                &CFG, #ties_expr, #in_desc, #in_slot, &__axes, &self.#out_f, #out_slot, class,
                &|v| kernel_for(v, (#in_desc).dtype, self.#out_f.dtype),
            )
        };
        let gpu_plan_variants = quote! {
            #axes_u32
            ::ops_core::__private::patterns::reduce::reduce_plans(
                &CFG, #ties_expr, #in_desc, #in_slot, &__axes, &self.#out_f, #out_slot,
                &|v| kernel_for(v, (#in_desc).dtype, self.#out_f.dtype),
            )
        };
        let name = &spec.name;
        let index_error = quote! {
            ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
        };
        ComputeCode {
            items,
            kernel_ids,
            run_cpu,
            gpu_plan,
            gpu_plan_variants,
            index_error,
            index_bounds: quote!(::std::vec::Vec::new()),
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            docs: docs.clone(),
        }
    }
}

/// `ties: first`, or `ties: attr { MEMBER: first, ... }` by an enum or bool
/// attribute.
fn param_ties(
    cx: &Lower<'_>,
    params: &HashMap<String, &ParamValue>,
    c: &ast::ComputeDecl,
    errors: &mut Errors,
) -> Option<TiesParam> {
    let words = [("first", Ties::First), ("last", Ties::Last)];
    match params.get("ties") {
        Some(ParamValue::Map(attr, pairs)) => {
            let Some(ai) = cx.spec.attrs.iter().position(|a| a.name == attr.text) else {
                cx.unknown_name(attr.span, &attr.text, errors);
                return None;
            };
            // An enum's members in order, or a bool's `false`, `true`
            // (the generated code indexes by `attr as u32`).
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
            let mut out: Vec<Option<Ties>> = vec![None; members.len()];
            let mut ok = true;
            for (m, v) in pairs {
                let Some(mi) = members.iter().position(|x| x == &m.text) else {
                    errors.error(m.span, format!("`{}` is not {what}", m.text));
                    ok = false;
                    continue;
                };
                match words.iter().find(|w| w.0 == v.text) {
                    Some((_, t)) => out[mi] = Some(*t),
                    None => {
                        errors.error(v.span, "ties must be `first` or `last`");
                        ok = false;
                    }
                }
            }
            if let Some(missing) = out.iter().position(|o| o.is_none()) {
                if ok {
                    errors.error(
                        attr.span,
                        format!("`ties` does not say what `{}` means", members[missing]),
                    );
                }
                return None;
            }
            ok.then(|| TiesParam::ByAttr(ai, out.into_iter().flatten().collect()))
        }
        _ => cx
            .param_word(params, "ties", &words, c, errors)
            .map(TiesParam::Fixed),
    }
}
