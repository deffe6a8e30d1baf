//! The `scatter_nd` family: slices of updates combined into a copy of the
//! input at positions index tuples give, in row-major order of the tuples
//! (ONNX ScatterND, DirectML SCATTER_ND). Runtime:
//! [`ops_core::patterns::scatter_nd`]; kernels: [`crate::wgsl::scatter_nd`].

use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::check::{integer_types, same_types};
use crate::codegen::compute::{dtype_pairs, gen_scalar, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::{Diagnostic, Errors};
use crate::lower::{Lower, ScalarEnv};
use crate::model::*;
use crate::syntax::ast::{self, ParamValue};

/// The family, as [`super::FAMILIES`] registers it.
pub struct ScatterNdFamily;

/// A lowered `compute scatter_nd { .. }` block.
#[derive(Clone, Debug)]
pub struct ScatterNdPattern {
    /// Data tensor.
    pub input: usize,
    /// Index tuples.
    pub indices: usize,
    /// Update slices.
    pub updates: usize,
    /// Output tensor.
    pub output: usize,
    /// Meaningful trailing dimensions of `input` (an integer expression).
    pub input_rank: Expr,
    /// Meaningful trailing dimensions of `indices`.
    pub indices_rank: Expr,
    /// The combine of the element so far (`a`) and the update (`b`), with
    /// its text.
    pub combine: (&'static ops_core::scalar::Scalar, String),
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for ScatterNdFamily {
    fn name(&self) -> &'static str {
        "scatter_nd"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        use ops_core::scalar::{Ty as STy, Var};
        const KEYS: &[&str] = &[
            "input",
            "indices",
            "updates",
            "output",
            "input_rank",
            "indices_rank",
            "combine",
        ];
        let params = cx.params(c, KEYS, errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let indices = cx.param_tensor(&params, "indices", false, c, errors);
        let updates = cx.param_tensor(&params, "updates", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let input_rank = cx.param_int(&params, "input_rank", c, errors);
        let indices_rank = cx.param_int(&params, "indices_rank", c, errors);
        let combine = match params.get("combine") {
            Some(ParamValue::Expr(e)) => {
                // One type parameter, `T`: the data type of the input,
                // the updates and the output.
                const PARAMS: &[(&str, &str)] = &[("T", "the scattered tensor's data type")];
                let bound = [input.map_or_else(Vec::new, |t| cx.listed_types(t))];
                let env = ScalarEnv {
                    params: PARAMS,
                    vars: &[(Var::A, STy::T), (Var::B, STy::T)],
                    names: &[],
                    tensors: &[],
                    bound: &bound,
                };
                let s = cx.lower_scalar(e, "combine", &env, STy::T, errors)?;
                Some((s, cx.text(e.span)))
            }
            Some(ParamValue::Map(n, _)) => {
                errors.error(n.span, "`combine` is an arithmetic expression");
                None
            }
            None => None,
        };
        Some(Box::new(ScatterNdPattern {
            input: input?,
            indices: indices?,
            updates: updates?,
            output: output?,
            input_rank: input_rank?,
            indices_rank: indices_rank?,
            combine: combine?,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for ScatterNdPattern {
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
        for e in &spec.support {
            for r in e.rows.iter().filter(|r| r.tensor == self.input) {
                for &dt in &r.dtypes {
                    if let Some(why) =
                        ops_core::patterns::scatter_combine::combine_unsupported(self.combine.0, dt)
                    {
                        errors.push(
                            Diagnostic::new(
                                r.span,
                                format!("{} cannot be combined: {why}", dt.spec_name()),
                            )
                            .help(format!(
                                "remove {} from `{}`'s row",
                                dt.spec_name(),
                                spec.tensors[self.input].name
                            )),
                        );
                    }
                }
            }
        }
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::scatter_nd::{scatter_nd_kernel_key, scatter_nd_unsupported};
        let (combine, text) = &self.combine;
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, self.input, self.indices) {
            if scatter_nd_unsupported(combine, a, b).is_some() {
                continue;
            }
            let key = scatter_nd_kernel_key(key_name, a, b);
            let (da, db) = (gen_dtype(a), gen_dtype(b));
            kernels.push(
                quote!(()),
                "scatter_nd",
                (a, b),
                &key,
                quote!(::ops_core::wgsl::scatter_nd::scatter_nd_kernel_text(
                    COMBINE, #da, #db, #key, #origin,
                )),
                ops_core::patterns::scatter_nd::BINDINGS,
                quote!(::ops_core::__private::patterns::scatter_nd::WORKGROUP_SIZE),
            );
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(()));
        let combine_tok = gen_scalar(combine);
        let (ir, xr) = (gen_expr(&self.input_rank), gen_expr(&self.indices_rank));
        let in_f = format_ident!("{}", spec.tensors[self.input].name);
        let ix_f = format_ident!("{}", spec.tensors[self.indices].name);
        let up_f = format_ident!("{}", spec.tensors[self.updates].name);
        let out_f = format_ident!("{}", spec.tensors[self.output].name);
        let ix_name = &spec.tensors[self.indices].name;
        let (in_slot, ix_slot, up_slot, out_slot) = (
            self.input,
            self.indices,
            self.updates,
            self.output - n_inputs,
        );
        let name = &spec.name;
        let rt = quote!(::ops_core::__private::patterns::scatter_nd);
        let counts = quote! {
            let __ir = self.__env_count(&INPUT_RANK)?;
            let __xr = self.__env_count(&INDICES_RANK)?;
        };
        let plan = quote! {
            #counts
            let (__d, __x) = (self.#in_f.dtype, self.#ix_f.dtype);
            #rt::scatter_nd_plan(
                &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#up_f, #up_slot, &self.#out_f, #out_slot,
                __ir, __xr, &self.__scalar_attrs(), kernel_for((), __d, __x))
                .map_err(|e| match e {
                    ::ops_core::OpError::Unsupported(m) => ::ops_core::OpError::Unsupported(::std::format!("{}: {m}", #name)),
                    e => e,
                })
        };
        let mut docs = self.docs.clone();
        docs.push(String::new());
        docs.push(format!(
            "Each tuple's slice of updates is combined into the slice it names, tuples in row-major order, as `{text}` (`a` the element so far, `b` the update): deterministic, on the GPU as on the CPU (`ops_core::patterns::scatter_nd`)."
        ));
        ComputeCode {
            items: quote! {
                #lookup
                pub(crate) static INPUT_RANK: ::ops_core::__private::expr::Expr = #ir;
                pub(crate) static INDICES_RANK: ::ops_core::__private::expr::Expr = #xr;
                pub(crate) static COMBINE: &::ops_core::scalar::Scalar = #combine_tok;
            },
            kernel_ids,
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            run_cpu: quote! {
                #counts
                let out = #rt::scatter_nd_cpu(
                    COMBINE, inputs[#in_slot], inputs[#ix_slot], inputs[#up_slot], &self.#out_f, __ir, __xr, #ix_name,
                    &self.__scalar_attrs())?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                #plan
            },
            gpu_plan_variants: quote! {
                let plan = { #plan }?;
                ::core::result::Result::Ok(::std::vec![(::std::string::String::from("scatter_nd"), plan)])
            },
            index_error: quote! {
                let counts = (|| -> ::core::result::Result<_, ::ops_core::OpError> { #counts Ok((__ir, __xr)) })();
                match counts {
                    ::core::result::Result::Ok((__ir, __xr)) if inputs.len() > #ix_slot => #rt::scatter_nd_index_error(
                        &self.#in_f, inputs[#ix_slot], __ir, __xr, #ix_name, position),
                    ::core::result::Result::Ok(_) => ::ops_core::OpError::InvalidArgument(::std::format!("{}: missing inputs", #name)),
                    ::core::result::Result::Err(e) => e,
                }
            },
            index_bounds: quote! {
                let counts = (|| -> ::core::result::Result<_, ::ops_core::OpError> { #counts Ok((__ir, __xr)) })();
                let ::core::result::Result::Ok((__ir, __xr)) = counts else { return ::std::vec::Vec::new() };
                let __shape = ::ops_core::family::gather_nd::GatherShape::Nd { input_rank: __ir, indices_rank: __xr, batch_dims: 0 };
                match ::ops_core::family::gather_nd::GatherNdGeometry::of(&self.#in_f.sizes, &self.#ix_f.sizes, __shape) {
                    ::core::result::Result::Ok(g) => ::std::vec![::ops_core::IndexBounds {
                        tensor: #ix_slot,
                        addresses: #in_slot,
                        sizes: g.dims.iter().map(|d| d.0 as u32).collect(),
                        out_of_range: ::ops_core::OutOfRange::Error,
                    }],
                    ::core::result::Result::Err(_) => ::std::vec::Vec::new(),
                }
            },
            docs,
        }
    }
}
