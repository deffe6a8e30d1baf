//! The `gather_elements` family: each output element reads the input at
//! its own coordinates, the axis coordinate taken from the indices
//! (DirectML GATHER_ELEMENTS, ONNX GatherElements). Runtime:
//! [`ops_core::patterns::gather_elements`]; kernels:
//! [`crate::wgsl::gather_elements`].

use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::check::{integer_types, same_types};
use crate::codegen::compute::{dtype_pairs, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::*;
use crate::syntax::ast;

/// The family, as [`super::FAMILIES`] registers it.
pub struct GatherElementsFamily;

/// A lowered `compute gather_elements { .. }` block.
#[derive(Clone, Debug)]
pub struct GatherElementsPattern {
    /// Data tensor.
    pub input: usize,
    /// Index tensor (the output's shape).
    pub indices: usize,
    /// Output tensor.
    pub output: usize,
    /// The gathered dimension of `input` (an integer expression).
    pub axis: Expr,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for GatherElementsFamily {
    fn name(&self) -> &'static str {
        "gather_elements"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["input", "indices", "output", "axis"];
        let params = cx.params(c, KEYS, errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let indices = cx.param_tensor(&params, "indices", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axis = cx.param_int(&params, "axis", c, errors);
        Some(Box::new(GatherElementsPattern {
            input: input?,
            indices: indices?,
            output: output?,
            axis: axis?,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for GatherElementsPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        integer_types(spec, self.indices, errors);
        same_types(
            spec,
            self.input,
            self.output,
            "moves the elements of",
            errors,
        );
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::gather_elements::{
            gather_elements_kernel_key, gather_elements_supported, GATHER_ELEMENTS_BINDINGS,
        };
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, self.input, self.indices) {
            if !gather_elements_supported(a, b) {
                continue;
            }
            let key = gather_elements_kernel_key(key_name, a, b);
            let (da, db) = (gen_dtype(a), gen_dtype(b));
            kernels.push(
                quote!(()),
                "gather_elements",
                (a, b),
                &key,
                quote!(::ops_core::wgsl::gather_elements::gather_elements_kernel_text(
                    #da, #db, #key, #origin,
                )),
                GATHER_ELEMENTS_BINDINGS,
                quote!(::ops_core::__private::patterns::gather_elements::WORKGROUP_SIZE),
            );
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(()));
        let axis = gen_expr(&self.axis);
        let in_f = format_ident!("{}", spec.tensors[self.input].name);
        let ix_f = format_ident!("{}", spec.tensors[self.indices].name);
        let out_f = format_ident!("{}", spec.tensors[self.output].name);
        let ix_name = &spec.tensors[self.indices].name;
        let (in_slot, ix_slot, out_slot) = (self.input, self.indices, self.output - n_inputs);
        let rt = quote!(::ops_core::__private::patterns::gather_elements);
        let name = &spec.name;
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
                let out = #rt::gather_elements_cpu(inputs[#in_slot], inputs[#ix_slot], &self.#out_f, __axis, #ix_name)?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                let __axis = self.__env_count(&AXIS)?;
                let (__d, __x) = (self.#in_f.dtype, self.#ix_f.dtype);
                #rt::gather_elements_plan(
                    &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#out_f, #out_slot, __axis,
                    kernel_for((), __d, __x))
                    .map_err(|e| match e {
                        ::ops_core::OpError::Unsupported(m) => ::ops_core::OpError::Unsupported(::std::format!("{}: {m}", #name)),
                        e => e,
                    })
            },
            gpu_plan_variants: quote! {
                let __axis = self.__env_count(&AXIS)?;
                let (__d, __x) = (self.#in_f.dtype, self.#ix_f.dtype);
                let plan = #rt::gather_elements_plan(
                    &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#out_f, #out_slot, __axis,
                    kernel_for((), __d, __x))?;
                ::core::result::Result::Ok(::std::vec![(::std::string::String::from("gather_elements"), plan)])
            },
            index_error: quote! {
                match self.__env_count(&AXIS) {
                    ::core::result::Result::Ok(__axis) if inputs.len() > #ix_slot => #rt::gather_elements_index_error(
                        &self.#in_f, inputs[#ix_slot], __axis, #ix_name, position),
                    ::core::result::Result::Ok(_) => ::ops_core::OpError::InvalidArgument(::std::format!("{}: missing inputs", #name)),
                    ::core::result::Result::Err(e) => e,
                }
            },
            index_bounds: quote! {
                match self.__env_count(&AXIS) {
                    ::core::result::Result::Ok(__axis) if __axis < self.#in_f.sizes.len() => ::std::vec![::ops_core::IndexBounds {
                        tensor: #ix_slot,
                        addresses: #in_slot,
                        sizes: ::std::vec![self.#in_f.sizes[__axis]],
                        out_of_range: ::ops_core::OutOfRange::Error,
                    }],
                    _ => ::std::vec::Vec::new(),
                }
            },
            docs: self.docs.clone(),
        }
    }
}
