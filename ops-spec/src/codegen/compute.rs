//! Per-pattern glue: the kernels of every data-type combination the tables
//! allow, the CPU reference call and the GPU plan call.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use ops_core::patterns::reduce::{Keep, ReduceVariant, Select, Ties, Zeros};
use ops_core::DataType;

use super::exprs::{gen_dtype, gen_expr};
use crate::check::Checked;
use crate::model::{Compute, Spec, TiesParam};
use crate::wgsl::reduce::{reduce_kernel, reduce_kernel_key, reduce_supported};

/// What a pattern contributes to the generated module.
pub struct ComputeCode {
    /// Items at module level (kernels, constants).
    pub items: TokenStream,
    /// Body of `run_cpu` (inputs already checked).
    pub run_cpu: TokenStream,
    /// Body of `gpu_plan`.
    pub gpu_plan: TokenStream,
    /// Body of `index_error`.
    pub index_error: TokenStream,
    /// Documented decisions, for rustdoc.
    pub docs: Vec<String>,
}

/// Every (a, b) data-type pair the tables admit for two tensors.
fn dtype_pairs(spec: &Spec, a: usize, b: usize) -> BTreeSet<(DataType, DataType)> {
    let mut out = BTreeSet::new();
    for e in &spec.support {
        let ra = e.rows.iter().find(|r| r.tensor == a);
        let rb = e.rows.iter().find(|r| r.tensor == b);
        if let (Some(ra), Some(rb)) = (ra, rb) {
            for &x in &ra.dtypes {
                for &y in &rb.dtypes {
                    out.insert((x, y));
                }
            }
        }
    }
    out
}

/// Generates the compute glue of a checked spec.
pub fn gen_compute(checked: &Checked, origin: &str) -> ComputeCode {
    let spec = checked.spec();
    let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
    match spec.compute.as_ref() {
        Some(Compute::Reduce {
            input,
            output,
            axes,
            cfg,
            ties,
            docs,
        }) => {
            let mut kernels = Vec::new();
            let mut arms = Vec::new();
            for (a, b) in dtype_pairs(spec, *input, *output) {
                if !reduce_supported(cfg, a, b) {
                    continue;
                }
                for v in ReduceVariant::ALL {
                    let key = reduce_kernel_key(&spec.name, v, a, b);
                    let wgsl = reduce_kernel(cfg, v, a, b, &key, origin);
                    let id = format_ident!(
                        "K_{}_{}_{}",
                        v.name().to_ascii_uppercase(),
                        a.spec_name(),
                        b.spec_name()
                    );
                    let vi = format_ident!("{}", format!("{v:?}"));
                    let (da, db) = (gen_dtype(a), gen_dtype(b));
                    kernels.push(quote! {
                        static #id: ::ops_core::Kernel = ::ops_core::Kernel {
                            key: #key,
                            wgsl: #wgsl,
                            entry: "main",
                            bindings: &[::ops_core::Access::Read, ::ops_core::Access::Read, ::ops_core::Access::ReadWrite],
                            workgroup_size: ::ops_core::__private::patterns::reduce::WORKGROUP_SIZE,
                        };
                    });
                    arms.push((id, vi, da, db));
                }
            }
            let ids: Vec<_> = arms.iter().map(|a| a.0.clone()).collect();
            let matches = arms.iter().map(|(id, vi, da, db)| {
                quote!((::ops_core::__private::patterns::reduce::ReduceVariant::#vi, #da, #db) => ::core::option::Option::Some(&#id),)
            });
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
                    quote!(match self.#f.index() { #(#idx => #toks,)* _ => ::ops_core::__private::patterns::reduce::Ties::First })
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
                #(#kernels)*
                static KERNELS: &[&::ops_core::Kernel] = &[#(&#ids),*];
                static CFG: ::ops_core::__private::patterns::reduce::ReduceConfig = ::ops_core::__private::patterns::reduce::ReduceConfig {
                    keep: ::ops_core::__private::patterns::reduce::Keep::#keep,
                    select: ::ops_core::__private::patterns::reduce::Select::#select,
                    zeros: ::ops_core::__private::patterns::reduce::Zeros::#zeros,
                };
                static AXES: ::ops_core::__private::expr::Expr = #axes_expr;
                fn kernel_for(
                    v: ::ops_core::__private::patterns::reduce::ReduceVariant,
                    a: ::ops_core::DataType,
                    b: ::ops_core::DataType,
                ) -> ::core::option::Option<&'static ::ops_core::Kernel> {
                    match (v, a, b) {
                        #(#matches)*
                        _ => ::core::option::Option::None,
                    }
                }
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
                run_cpu,
                gpu_plan,
                index_error,
                docs: docs.clone(),
            }
        }
        None => ComputeCode {
            items: quote!(
                static KERNELS: &[&::ops_core::Kernel] = &[];
            ),
            run_cpu: quote!(::core::unreachable!()),
            gpu_plan: quote!(::core::unreachable!()),
            index_error: quote!(::core::unreachable!()),
            docs: Vec::new(),
        },
    }
}
