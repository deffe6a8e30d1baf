//! The `concat` family: the inputs laid end to end along one axis (ONNX
//! Concat, DirectML JOIN). Runtime: [`ops_core::patterns::concat`];
//! kernels: [`crate::wgsl::concat`].
//!
//! ```text
//! compute concat {
//!     inputs: [inputs]      // a variadic list (or several tensors)
//!     output: concat_result
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
pub struct ConcatFamily;

/// A lowered `compute concat { .. }` block.
#[derive(Clone, Debug)]
pub struct ConcatPattern {
    /// The input tensors, in order.
    pub inputs: Vec<usize>,
    /// Output tensor.
    pub output: usize,
    /// The axis (an integer expression).
    pub axis: Expr,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for ConcatFamily {
    fn name(&self) -> &'static str {
        "concat"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["inputs", "output", "axis"];
        let params = cx.params_optional(c, KEYS, &[], errors)?;
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axis = cx.param_int(&params, "axis", c, errors);
        let limits = (false, true, Some(ops_core::patterns::concat::MAX_INPUTS));
        let inputs = cx.param_tensor_list(&params, "inputs", limits, c, errors);
        Some(Box::new(ConcatPattern {
            inputs: inputs?,
            output: output?,
            axis: axis?,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for ConcatPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        for &i in &self.inputs {
            same_types(
                spec,
                i,
                self.output,
                "lays end to end the elements of",
                errors,
            );
        }
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::concat::concat_kernel_key;
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let n = self.inputs.len();
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, self.inputs[0], self.output) {
            if a != b {
                continue;
            }
            let key = concat_kernel_key(key_name, n, a);
            let da = gen_dtype(a);
            kernels.push(
                quote!(()),
                "concat",
                (a, b),
                &key,
                quote!(::ops_core::wgsl::concat::concat_kernel_text(#da, #n, #key, #origin)),
                ops_core::patterns::concat::bindings(n),
                quote!(::ops_core::__private::patterns::concat::WORKGROUP_SIZE),
            );
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(()));
        let axis = gen_expr(&self.axis);
        let in_fs: Vec<_> = self
            .inputs
            .iter()
            .map(|&i| format_ident!("{}", spec.tensors[i].name))
            .collect();
        let slots = &self.inputs;
        let out_f = format_ident!("{}", spec.tensors[self.output].name);
        let out_slot = self.output - n_inputs;
        let name = &spec.name;
        let rt = quote!(::ops_core::__private::patterns::concat);
        let plan = quote! {
            let __axis = self.__env_count(&AXIS)?;
            let __inputs = [#((&self.#in_fs, #slots)),*];
            #rt::concat_plan(&__inputs, &self.#out_f, #out_slot, __axis,
                kernel_for((), self.#out_f.dtype, self.#out_f.dtype))
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
                let out = #rt::concat_cpu(&[#(inputs[#slots]),*], &self.#out_f, __axis)?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                #plan
            },
            gpu_plan_variants: quote! {
                let plan = { #plan }?;
                ::core::result::Result::Ok(::std::vec![(::std::string::String::from("concat"), plan)])
            },
            index_error: quote! {
                ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
            },
            index_bounds: quote!(::std::vec::Vec::new()),
            docs: self.docs.clone(),
        }
    }
}
