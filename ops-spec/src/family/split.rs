//! The `split` family: the input cut along one axis into consecutive slabs,
//! one per output (ONNX Split, DirectML SPLIT). Each output's extent along
//! the axis comes from the spec's shape rules, or from the caller for a
//! `given` output (DirectML's); the slabs follow one another from the
//! axis's start. Runtime: [`ops_core::patterns::view`]'s `split_plan` and
//! `split_cpu` (a view pass per output); kernels: [`crate::wgsl::view`].
//!
//! ```text
//! compute split {
//!     input: input
//!     outputs: [outputs]    // a variadic list (or several tensors)
//!     axis: a               // an integer expression of the rules, in [0, rank)
//! }
//! ```

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
pub struct SplitFamily;

/// A lowered `compute split { .. }` block.
#[derive(Clone, Debug)]
pub struct SplitPattern {
    /// Data tensor.
    pub input: usize,
    /// The output tensors, in order.
    pub outputs: Vec<usize>,
    /// The axis (an integer expression).
    pub axis: Expr,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for SplitFamily {
    fn name(&self) -> &'static str {
        "split"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["input", "outputs", "axis"];
        let params = cx.params_optional(c, KEYS, &[], errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let axis = cx.param_int(&params, "axis", c, errors);
        let outputs = cx.param_tensor_list(&params, "outputs", (true, false, None), c, errors);
        let outputs = outputs?;
        let all: Vec<usize> = (0..cx.spec.tensors.len())
            .filter(|&t| cx.spec.tensors[t].output)
            .collect();
        if outputs != all {
            errors.error(
                c.pattern.span,
                "`outputs` lists every output tensor of the operator, in order",
            );
            return None;
        }
        Some(Box::new(SplitPattern {
            input: input?,
            outputs,
            axis: axis?,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for SplitPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        for &o in &self.outputs {
            same_types(
                spec,
                self.input,
                o,
                "cuts into slabs the elements of",
                errors,
            );
        }
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::view::view_kernel_key;
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, self.input, self.outputs[0]) {
            if a != b {
                continue;
            }
            let key = view_kernel_key(key_name, a);
            let da = gen_dtype(a);
            kernels.push(
                quote!(()),
                "view",
                (a, b),
                &key,
                quote!(::ops_core::wgsl::view::view_kernel_text(#da, #key, #origin)),
                ops_core::patterns::view::BINDINGS,
                quote!(::ops_core::__private::patterns::view::WORKGROUP_SIZE),
            );
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(()));
        let axis = gen_expr(&self.axis);
        let in_f = format_ident!("{}", spec.tensors[self.input].name);
        let out_fs: Vec<_> = self
            .outputs
            .iter()
            .map(|&o| format_ident!("{}", spec.tensors[o].name))
            .collect();
        let in_slot = self.input;
        let name = &spec.name;
        let rt = quote!(::ops_core::__private::patterns::view);
        let plan = quote! {
            let __axis = self.__env_count(&AXIS)?;
            let __dt = self.#in_f.dtype;
            #rt::split_plan(&self.#in_f, #in_slot, &[#(&self.#out_fs),*], __axis, kernel_for((), __dt, __dt))
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
                #rt::split_cpu(inputs[#in_slot], &[#(&self.#out_fs),*], __axis)
            },
            gpu_plan: quote! {
                let _ = class;
                #plan
            },
            gpu_plan_variants: quote! {
                let plan = { #plan }?;
                ::core::result::Result::Ok(::std::vec![(::std::string::String::from("split"), plan)])
            },
            index_error: quote! {
                ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
            },
            index_bounds: quote!(::std::vec::Vec::new()),
            docs: self.docs.clone(),
        }
    }
}
