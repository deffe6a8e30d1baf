//! The `scatter_elements` family: updates written into a copy of the input
//! at positions an index tensor gives along one axis. Runtime:
//! [`ops_core::patterns::scatter_elements`]; kernels:
//! [`crate::wgsl::scatter_elements`].

use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::check::{integer_types, same_types};
use crate::codegen::compute::{dtype_pairs, gen_kernel, kernel_ident, ComputeCode};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::*;
use crate::syntax::ast;

/// The family, as [`super::FAMILIES`] registers it.
pub struct ScatterElementsFamily;

/// A lowered `compute scatter_elements { .. }` block.
#[derive(Clone, Debug)]
pub struct ScatterElementsPattern {
    /// Data tensor.
    pub input: usize,
    /// Index tensor.
    pub indices: usize,
    /// Update tensor.
    pub updates: usize,
    /// Output tensor.
    pub output: usize,
    /// The axis the indices replace (an integer expression).
    pub axis: Expr,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for ScatterElementsFamily {
    fn name(&self) -> &'static str {
        "scatter_elements"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &[
            "input",
            "indices",
            "updates",
            "output",
            "axis",
            "collisions",
        ];
        let params = cx.params(c, KEYS, errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let indices = cx.param_tensor(&params, "indices", false, c, errors);
        let updates = cx.param_tensor(&params, "updates", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axis = cx.param_int(&params, "axis", c, errors);
        let _collisions =
            cx.param_word(&params, "collisions", &[("last_write_wins", ())], c, errors);
        Some(Box::new(ScatterElementsPattern {
            input: input?,
            indices: indices?,
            updates: updates?,
            output: output?,
            axis: axis?,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for ScatterElementsPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        integer_types(spec, self.indices, errors);
        same_types(spec, self.input, self.updates, "is written into", errors);
        same_types(
            spec,
            self.input,
            self.output,
            "moves the elements of",
            errors,
        );
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let ScatterElementsPattern {
            input,
            indices,
            updates,
            output,
            axis,
            docs,
        } = self;

        use crate::wgsl::scatter_elements::{
            scatter_bindings, scatter_kernel_key, scatter_supported,
        };
        use ops_core::patterns::scatter_elements::ScatterStage;
        let mut kernels = Vec::new();
        let mut arms = Vec::new();
        for (a, b) in dtype_pairs(spec, *input, *indices) {
            if !scatter_supported(a, b) {
                continue;
            }
            let mut ids = std::collections::HashMap::new();
            for stage in ScatterStage::ALL.into_iter().filter(|s| s.serves(a)) {
                let key = scatter_kernel_key(key_name, stage, a, b);
                let id = kernel_ident(stage.name(), a, b);
                let si = format_ident!("{}", format!("{stage:?}"));
                let (da, db) = (gen_dtype(a), gen_dtype(b));
                let generate = quote!(::ops_core::wgsl::scatter_elements::scatter_kernel_text(
                    ::ops_core::wgsl::scatter_elements::ScatterStage::#si,
                    #da,
                    #db,
                    #key,
                    #origin,
                ));
                kernels.push(gen_kernel(
                    &id,
                    &key,
                    generate,
                    scatter_bindings(stage),
                    quote!(::ops_core::__private::patterns::scatter_elements::WORKGROUP_SIZE),
                ));
                ids.insert(stage, id);
            }
            let (da, db) = (gen_dtype(a), gen_dtype(b));
            let (w, x, c, v) = (
                &ids[&ScatterStage::Winner],
                &ids[&ScatterStage::Write],
                &ids[&ScatterStage::Columns],
                &ids[&ScatterStage::ColumnVectors],
            );
            let words = match ids.get(&ScatterStage::ColumnWords) {
                Some(id) => quote!(::core::option::Option::Some(&#id)),
                None => quote!(::core::option::Option::None),
            };
            arms.push(quote!((#da, #db) => ::core::option::Option::Some(::ops_core::__private::patterns::scatter_elements::ScatterKernels { winner: &#w, write: &#x, columns: &#c, column_words: #words, column_vectors: &#v }),));
        }
        let ids = kernels.iter().map(|k| k.0.clone()).collect::<Vec<_>>();
        let kernel_ids = ids.clone();
        let statics = kernels.iter().map(|k| &k.1);
        let ax = gen_expr(axis);
        let in_f = format_ident!("{}", spec.tensors[*input].name);
        let ix_f = format_ident!("{}", spec.tensors[*indices].name);
        let up_f = format_ident!("{}", spec.tensors[*updates].name);
        let out_f = format_ident!("{}", spec.tensors[*output].name);
        let ix_name = &spec.tensors[*indices].name;
        let (in_slot, ix_slot, up_slot, out_slot) =
            (*input, *indices, *updates, *output - n_inputs);
        let name = &spec.name;
        let items = quote! {
            #(#statics)*
            static KERNELS: &[&::ops_core::Kernel] = &[#(&#ids),*];
            pub(crate) static AXIS: ::ops_core::__private::expr::Expr = #ax;
            pub(crate) fn kernels_for(a: ::ops_core::DataType, b: ::ops_core::DataType) -> ::core::option::Option<::ops_core::__private::patterns::scatter_elements::ScatterKernels> {
                match (a, b) {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }
        };
        ComputeCode {
            items,
            kernel_ids,
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            run_cpu: quote! {
                let __axis = self.__env_count(&AXIS)?;
                let out = ::ops_core::__private::patterns::scatter_elements::scatter_elements_cpu(
                    inputs[#in_slot], inputs[#ix_slot], inputs[#up_slot], &self.#out_f, __axis, #ix_name)?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let __axis = self.__env_count(&AXIS)?;
                let k = kernels_for(self.#in_f.dtype, self.#ix_f.dtype).ok_or_else(|| ::ops_core::OpError::Unsupported(::std::format!(
                    "{}: no kernel for {} data with {} indices", #name, self.#in_f.dtype, self.#ix_f.dtype)))?;
                ::ops_core::__private::patterns::scatter_elements::scatter_elements_plan(
                    &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#up_f, #up_slot, &self.#out_f, #out_slot, __axis, class, &k)
            },
            gpu_plan_variants: quote! {
                let __axis = self.__env_count(&AXIS)?;
                let k = kernels_for(self.#in_f.dtype, self.#ix_f.dtype).ok_or_else(|| ::ops_core::OpError::Unsupported(::std::format!(
                    "{}: no kernel for {} data with {} indices", #name, self.#in_f.dtype, self.#ix_f.dtype)))?;
                ::ops_core::__private::patterns::scatter_elements::scatter_elements_plans(
                    &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#up_f, #up_slot, &self.#out_f, #out_slot, __axis, &k)
            },
            index_error: quote! {
                match self.__env_count(&AXIS) {
                    ::core::result::Result::Ok(__axis) if inputs.len() > #ix_slot => ::ops_core::__private::patterns::scatter_elements::scatter_elements_index_error(
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
                    }],
                    _ => ::std::vec::Vec::new(),
                }
            },
            docs: docs.clone(),
        }
    }
}
