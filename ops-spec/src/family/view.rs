//! The `view` family: data movement whose source is an affine function of
//! the output coordinates, `offset + sum((c_d mod wrap_d) * stride_d)`
//! (ONNX Transpose, Expand, Tile, Reshape and its kin). Runtime:
//! [`ops_core::patterns::view`]; kernels: [`crate::wgsl::view`].

use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::check::same_types;
use crate::codegen::compute::{dtype_pairs, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::*;
use crate::syntax::ast::{self, ParamValue};

/// The family, as [`super::FAMILIES`] registers it.
pub struct ViewFamily;

/// A lowered `compute view { .. }` block.
#[derive(Clone, Debug)]
pub struct ViewPattern {
    /// Data tensor.
    pub input: usize,
    /// Output tensor.
    pub output: usize,
    /// The source offset of the output's first element (an integer
    /// expression).
    pub offset: Expr,
    /// The source step of each output dimension (a list expression).
    pub strides: Expr,
    /// The period of each output coordinate, 0 for none (a list
    /// expression), when given.
    pub wrap: Option<Expr>,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for ViewFamily {
    fn name(&self) -> &'static str {
        "view"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["input", "output", "offset", "strides"];
        let params = cx.params_optional(c, KEYS, &["wrap"], errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let offset = cx.param_int(&params, "offset", c, errors);
        let list = |cx: &mut Lower<'_>, key: &str, errors: &mut Errors| match params.get(key) {
            Some(ParamValue::Expr(e)) => cx.expect(e, Ty::List, errors),
            _ => {
                errors.error(
                    c.pattern.span,
                    format!("parameter `{key}` is a list expression"),
                );
                None
            }
        };
        let strides = list(cx, "strides", errors);
        let wrap = match params.contains_key("wrap") {
            true => Some(list(cx, "wrap", errors)?),
            false => None,
        };
        Some(Box::new(ViewPattern {
            input: input?,
            output: output?,
            offset: offset?,
            strides: strides?,
            wrap,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for ViewPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        same_types(
            spec,
            self.input,
            self.output,
            "moves the elements of",
            errors,
        );
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::view::{view_kernel_key, view_tiled_kernel_key};
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let rt = quote!(::ops_core::__private::patterns::view);
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, self.input, self.output) {
            if a != b {
                continue;
            }
            let da = gen_dtype(a);
            // The walk (any view) and the tiled transpose, each its own kernel.
            for (name, schedule, key, text) in [
                (
                    "view",
                    quote!(#rt::Schedule::Walk),
                    view_kernel_key(key_name, a),
                    quote!(view_kernel_text),
                ),
                (
                    "view_tiled",
                    quote!(#rt::Schedule::Tiled),
                    view_tiled_kernel_key(key_name, a),
                    quote!(view_tiled_kernel_text),
                ),
            ] {
                kernels.push(
                    schedule,
                    name,
                    (a, b),
                    &key,
                    quote!(::ops_core::wgsl::view::#text(#da, #key, #origin)),
                    ops_core::patterns::view::BINDINGS,
                    quote!(#rt::WORKGROUP_SIZE),
                );
            }
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(#rt::Schedule));
        let (offset, strides) = (gen_expr(&self.offset), gen_expr(&self.strides));
        let (wrap_static, wrap_value) = match &self.wrap {
            Some(w) => {
                let w = gen_expr(w);
                (
                    quote!(pub(crate) static WRAP: ::ops_core::__private::expr::Expr = #w;),
                    quote!(::core::option::Option::Some(self.__env_list(&WRAP)?)),
                )
            }
            None => (quote!(), quote!(::core::option::Option::None)),
        };
        let in_f = format_ident!("{}", spec.tensors[self.input].name);
        let out_f = format_ident!("{}", spec.tensors[self.output].name);
        let in_desc = if spec.tensors[self.input].host {
            quote!(self.#in_f.desc())
        } else {
            quote!(&self.#in_f)
        };
        let (in_slot, out_slot) = (self.input, self.output - n_inputs);
        let name = &spec.name;
        let values = quote! {
            let __list = |v: ::std::vec::Vec<i128>| -> ::core::result::Result<::std::vec::Vec<i64>, ::ops_core::OpError> {
                v.into_iter()
                    .map(|x| i64::try_from(x).map_err(|_| ::ops_core::OpError::InvalidArgument(::std::format!("{}: a view step of {} does not fit i64", #name, x))))
                    .collect()
            };
            // An empty output reads nothing: its steps are not computed
            // (they may not fit, for huge dimensions beside a 0).
            let __empty = self.#out_f.element_count() == ::core::option::Option::Some(0);
            let __offset = if __empty { 0 } else { self.__env_count(&OFFSET)? as i64 };
            let __strides = if __empty {
                ::std::vec![0i64; self.#out_f.sizes.len()]
            } else {
                __list(self.__env_list(&STRIDES)?)?
            };
            let __wrap = match if __empty { ::core::option::Option::None } else { #wrap_value } {
                ::core::option::Option::Some(w) => ::core::option::Option::Some(__list(w)?),
                ::core::option::Option::None => ::core::option::Option::None,
            };
        };
        let plan_by = |planner: &str| {
            let planner = format_ident!("{planner}");
            quote! {
                #values
                #rt::#planner(#in_desc, #in_slot, &self.#out_f, #out_slot, __offset, &__strides, __wrap.as_deref(),
                    &|s| kernel_for(s, (#in_desc).dtype, (#in_desc).dtype))
                    .map_err(|e| match e {
                        ::ops_core::OpError::Unsupported(m) => ::ops_core::OpError::Unsupported(::std::format!("{}: {m}", #name)),
                        e => e,
                    })
            }
        };
        let plan = plan_by("view_plan");
        let plans = plan_by("view_plans");
        ComputeCode {
            items: quote! {
                #lookup
                pub(crate) static OFFSET: ::ops_core::__private::expr::Expr = #offset;
                pub(crate) static STRIDES: ::ops_core::__private::expr::Expr = #strides;
                #wrap_static
            },
            kernel_ids,
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            run_cpu: quote! {
                #values
                let out = #rt::view_cpu(inputs[#in_slot], &self.#out_f, __offset, &__strides, __wrap.as_deref())?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                #plan
            },
            gpu_plan_variants: quote! {
                #plans
            },
            index_error: quote! {
                ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
            },
            index_bounds: quote!(::std::vec::Vec::new()),
            docs: self.docs.clone(),
        }
    }
}
