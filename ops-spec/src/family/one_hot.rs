//! The `one_hot` family: each output element is the on value where the
//! index value of its sequence along the axis selects its coordinate, the
//! off value elsewhere (ONNX OneHot, DirectML ONE_HOT). Runtime:
//! [`ops_core::patterns::one_hot`]; kernels: [`crate::wgsl::one_hot`].

use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::check::same_types;
use crate::codegen::compute::{dtype_pairs, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::*;
use crate::syntax::ast;

/// The family, as [`super::FAMILIES`] registers it.
pub struct OneHotFamily;

/// A lowered `compute one_hot { .. }` block.
#[derive(Clone, Debug)]
pub struct OneHotPattern {
    /// Index tensor: one value per sequence of the output along the axis.
    pub indices: usize,
    /// Values tensor: element 0 the off value, element 1 the on value.
    pub values: usize,
    /// Output tensor.
    pub output: usize,
    /// The output's one-hot dimension (an integer expression).
    pub axis: Expr,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for OneHotFamily {
    fn name(&self) -> &'static str {
        "one_hot"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["indices", "values", "output", "axis"];
        let params = cx.params(c, KEYS, errors)?;
        let indices = cx.param_tensor(&params, "indices", false, c, errors);
        let values = cx.param_tensor(&params, "values", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axis = cx.param_int(&params, "axis", c, errors);
        Some(Box::new(OneHotPattern {
            indices: indices?,
            values: values?,
            output: output?,
            axis: axis?,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for OneHotPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        // The indices are numbers (floats truncate); BOOL indices select
        // nothing meaningful.
        for e in &spec.support {
            for r in e.rows.iter().filter(|r| r.tensor == self.indices) {
                if r.dtypes.contains(&ops_core::DataType::Bool) {
                    errors.error(
                        r.span,
                        format!(
                            "`{}` holds indices: its data types must be numbers, not BOOL",
                            spec.tensors[self.indices].name
                        ),
                    );
                }
            }
        }
        same_types(
            spec,
            self.values,
            self.output,
            "takes its elements from",
            errors,
        );
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::one_hot::{one_hot_kernel_key, one_hot_supported};
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let mut kernels = VariantKernels::default();
        for (v, x) in dtype_pairs(spec, self.values, self.indices) {
            if !one_hot_supported(v, x) {
                continue;
            }
            let key = one_hot_kernel_key(key_name, v, x);
            let (dv, dx) = (gen_dtype(v), gen_dtype(x));
            kernels.push(
                quote!(()),
                "one_hot",
                (v, x),
                &key,
                quote!(::ops_core::wgsl::one_hot::one_hot_kernel_text(#dv, #dx, #key, #origin)),
                ops_core::patterns::one_hot::BINDINGS,
                quote!(::ops_core::__private::patterns::one_hot::WORKGROUP_SIZE),
            );
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(()));
        let axis = gen_expr(&self.axis);
        let ix_f = format_ident!("{}", spec.tensors[self.indices].name);
        let va_f = format_ident!("{}", spec.tensors[self.values].name);
        let out_f = format_ident!("{}", spec.tensors[self.output].name);
        let (ix_slot, va_slot, out_slot) = (self.indices, self.values, self.output - n_inputs);
        let rt = quote!(::ops_core::__private::patterns::one_hot);
        let name = &spec.name;
        let plan = quote! {
            let __axis = self.__env_count(&AXIS)?;
            #rt::one_hot_plan(
                &self.#ix_f, #ix_slot, &self.#va_f, #va_slot, &self.#out_f, #out_slot, __axis,
                kernel_for((), self.#va_f.dtype, self.#ix_f.dtype))
                .map_err(|e| match e {
                    ::ops_core::OpError::Unsupported(m) => ::ops_core::OpError::Unsupported(::std::format!("{}: {m}", #name)),
                    e => e,
                })
        };
        ComputeCode {
            items: quote! {
                #lookup
                pub(crate) static AXIS: ::ops_core::__private::expr::Expr = #axis;
            },
            kernel_ids,
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            run_cpu: quote! {
                let __axis = self.__env_count(&AXIS)?;
                let out = #rt::one_hot_cpu(inputs[#ix_slot], inputs[#va_slot], &self.#out_f, __axis)?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                #plan
            },
            gpu_plan_variants: quote! {
                let plan = { #plan }?;
                ::core::result::Result::Ok(::std::vec![(::std::string::String::from("one_hot"), plan)])
            },
            index_error: quote! {
                ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
            },
            index_bounds: quote! {
                match self.__env_count(&AXIS) {
                    ::core::result::Result::Ok(__axis) if __axis < self.#out_f.sizes.len() => ::std::vec![::ops_core::IndexBounds {
                        tensor: #ix_slot,
                        addresses: #out_slot + #n_inputs,
                        sizes: ::std::vec![self.#out_f.sizes[__axis]],
                        out_of_range: ::ops_core::OutOfRange::Ignored,
                    }],
                    _ => ::std::vec::Vec::new(),
                }
            },
            docs: self.docs.clone(),
        }
    }
}
