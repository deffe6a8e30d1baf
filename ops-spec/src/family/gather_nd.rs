//! The `gather_nd` and `gather` families: slices of the input addressed by
//! index tuples (`gather_nd`: DirectML GatherND1, ONNX GatherND) or by
//! single index values along an axis (`gather`: DirectML GATHER, ONNX
//! Gather). Both run on one runtime, [`ops_core::patterns::gather_nd`]
//! ([`GatherShape`](ops_core::patterns::gather_nd::GatherShape) tells
//! them apart), and one set of kernels, [`crate::wgsl::gather_nd`].

use quote::{format_ident, quote};

use ops_core::patterns::gather_nd::GatherVariant;

use super::{Family, Pattern};
use crate::check::{integer_types, same_types};
use crate::codegen::compute::{dtype_pairs, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::*;
use crate::syntax::ast;

/// The `gather_nd` family, as [`super::FAMILIES`] registers it.
pub struct GatherNdFamily;

/// The `gather` family, as [`super::FAMILIES`] registers it.
pub struct GatherFamily;

/// How a lowered gather relates its tensors (integer expressions).
#[derive(Clone, Debug)]
pub enum GatherShapeExprs {
    /// `compute gather_nd`: meaningful ranks and the batch count.
    Nd {
        /// Meaningful trailing dimensions of `input`.
        input_rank: Expr,
        /// Meaningful trailing dimensions of `indices`.
        indices_rank: Expr,
        /// Leading meaningful dimensions that are batches.
        batch_dims: Expr,
    },
    /// `compute gather`: the axis, and the indices' meaningful trailing
    /// dimensions (all of them when the spec leaves it out).
    Axis {
        /// The gathered dimension of `input`.
        axis: Expr,
        /// Meaningful trailing dimensions of `indices`.
        indices_rank: Option<Expr>,
    },
}

/// A lowered `compute gather_nd { .. }` or `compute gather { .. }` block.
#[derive(Clone, Debug)]
pub struct GatherNdPattern {
    /// Data tensor.
    pub input: usize,
    /// Index tensor.
    pub indices: usize,
    /// Output tensor.
    pub output: usize,
    /// How the tensors relate.
    pub shape: GatherShapeExprs,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for GatherNdFamily {
    fn name(&self) -> &'static str {
        "gather_nd"
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
            "output",
            "input_rank",
            "indices_rank",
            "batch_dims",
        ];
        let params = cx.params(c, KEYS, errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let indices = cx.param_tensor(&params, "indices", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let input_rank = cx.param_int(&params, "input_rank", c, errors);
        let indices_rank = cx.param_int(&params, "indices_rank", c, errors);
        let batch_dims = cx.param_int(&params, "batch_dims", c, errors);
        Some(Box::new(GatherNdPattern {
            input: input?,
            indices: indices?,
            output: output?,
            shape: GatherShapeExprs::Nd {
                input_rank: input_rank?,
                indices_rank: indices_rank?,
                batch_dims: batch_dims?,
            },
            docs: c.docs.clone(),
        }))
    }
}

impl Family for GatherFamily {
    fn name(&self) -> &'static str {
        "gather"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["input", "indices", "output", "axis"];
        let params = cx.params_optional(c, KEYS, &["indices_rank"], errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let indices = cx.param_tensor(&params, "indices", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axis = cx.param_int(&params, "axis", c, errors);
        let indices_rank = match params.contains_key("indices_rank") {
            true => Some(cx.param_int(&params, "indices_rank", c, errors)?),
            false => None,
        };
        Some(Box::new(GatherNdPattern {
            input: input?,
            indices: indices?,
            output: output?,
            shape: GatherShapeExprs::Axis {
                axis: axis?,
                indices_rank,
            },
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for GatherNdPattern {
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
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let GatherNdPattern {
            input,
            indices,
            output,
            shape,
            docs,
        } = self;

        use crate::wgsl::gather_nd::{
            gather_nd_kernel_key, gather_nd_supported, GATHER_ND_BINDINGS,
        };
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, *input, *indices) {
            if !gather_nd_supported(a, b) {
                continue;
            }
            for v in GatherVariant::ALL {
                let key = gather_nd_kernel_key(key_name, v, a, b);
                let vi = format_ident!("{}", format!("{v:?}"));
                let (da, db) = (gen_dtype(a), gen_dtype(b));
                let generate = quote!(::ops_core::wgsl::gather_nd::gather_nd_kernel_text(
                    ::ops_core::__private::patterns::gather_nd::GatherVariant::#vi,
                    #da,
                    #db,
                    #key,
                    #origin,
                ));
                kernels.push(
                    quote!(::ops_core::__private::patterns::gather_nd::GatherVariant::#vi),
                    v.name(),
                    (a, b),
                    &key,
                    generate,
                    GATHER_ND_BINDINGS,
                    quote!(::ops_core::__private::patterns::gather_nd::WORKGROUP_SIZE),
                );
            }
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(
            ::ops_core::__private::patterns::gather_nd::GatherVariant
        ));
        let in_f = format_ident!("{}", spec.tensors[*input].name);
        let ix_f = format_ident!("{}", spec.tensors[*indices].name);
        let out_f = format_ident!("{}", spec.tensors[*output].name);
        let ix_name = &spec.tensors[*indices].name;
        let (in_slot, ix_slot, out_slot) = (*input, *indices, *output - n_inputs);
        let shape_type = quote!(::ops_core::__private::patterns::gather_nd::GatherShape);
        let (statics, counts) = match shape {
            GatherShapeExprs::Nd {
                input_rank,
                indices_rank,
                batch_dims,
            } => {
                let (ir, xr, bd) = (
                    gen_expr(input_rank),
                    gen_expr(indices_rank),
                    gen_expr(batch_dims),
                );
                (
                    quote! {
                        pub(crate) static INPUT_RANK: ::ops_core::__private::expr::Expr = #ir;
                        pub(crate) static INDICES_RANK: ::ops_core::__private::expr::Expr = #xr;
                        pub(crate) static BATCH_DIMS: ::ops_core::__private::expr::Expr = #bd;
                    },
                    quote! {
                        let __shape = #shape_type::Nd {
                            input_rank: self.__env_count(&INPUT_RANK)?,
                            indices_rank: self.__env_count(&INDICES_RANK)?,
                            batch_dims: self.__env_count(&BATCH_DIMS)?,
                        };
                    },
                )
            }
            GatherShapeExprs::Axis { axis, indices_rank } => {
                let ax = gen_expr(axis);
                let (rank_static, rank) = match indices_rank {
                    Some(r) => {
                        let xr = gen_expr(r);
                        (
                            quote!(pub(crate) static INDICES_RANK: ::ops_core::__private::expr::Expr = #xr;),
                            quote!(self.__env_count(&INDICES_RANK)?),
                        )
                    }
                    None => (quote!(), quote!(self.#ix_f.sizes.len())),
                };
                (
                    quote! {
                        pub(crate) static AXIS: ::ops_core::__private::expr::Expr = #ax;
                        #rank_static
                    },
                    quote! {
                        let __shape = #shape_type::Axis {
                            axis: self.__env_count(&AXIS)?,
                            indices_rank: #rank,
                        };
                    },
                )
            }
        };
        let items = quote! {
            #lookup
            #statics
        };
        let name = &spec.name;
        ComputeCode {
            items,
            kernel_ids,
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            run_cpu: quote! {
                #counts
                let out = ::ops_core::__private::patterns::gather_nd::gather_nd_cpu(inputs[#in_slot], inputs[#ix_slot], &self.#out_f, __shape, #ix_name)?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                #counts
                let (__d, __x) = (self.#in_f.dtype, self.#ix_f.dtype);
                ::ops_core::__private::patterns::gather_nd::gather_nd_plan(
                    &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#out_f, #out_slot, __shape,
                    class, &|v| kernel_for(v, __d, __x))
                    .map_err(|e| match e {
                        ::ops_core::OpError::Unsupported(m) => ::ops_core::OpError::Unsupported(::std::format!("{}: {m}", #name)),
                        e => e,
                    })
            },
            gpu_plan_variants: quote! {
                #counts
                let (__d, __x) = (self.#in_f.dtype, self.#ix_f.dtype);
                ::ops_core::__private::patterns::gather_nd::gather_nd_plans(
                    &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#out_f, #out_slot, __shape,
                    &|v| kernel_for(v, __d, __x))
            },
            index_error: quote! {
                let counts = (|| -> ::core::result::Result<_, ::ops_core::OpError> { #counts Ok(__shape) })();
                match counts {
                    ::core::result::Result::Ok(__shape) if inputs.len() > #ix_slot => ::ops_core::__private::patterns::gather_nd::gather_nd_index_error(
                        &self.#in_f, inputs[#ix_slot], __shape, #ix_name, position),
                    ::core::result::Result::Ok(_) => ::ops_core::OpError::InvalidArgument(::std::format!("{}: missing inputs", #name)),
                    ::core::result::Result::Err(e) => e,
                }
            },
            index_bounds: quote! {
                let counts = (|| -> ::core::result::Result<_, ::ops_core::OpError> { #counts Ok(__shape) })();
                let ::core::result::Result::Ok(__shape) = counts else { return ::std::vec::Vec::new() };
                match ::ops_core::__private::patterns::gather_nd::GatherNdGeometry::of(&self.#in_f.sizes, &self.#ix_f.sizes, __shape) {
                    ::core::result::Result::Ok(g) => ::std::vec![::ops_core::IndexBounds {
                        tensor: #ix_slot,
                        addresses: #in_slot,
                        sizes: g.dims.iter().map(|d| d.0 as u32).collect(),
                        out_of_range: ::ops_core::OutOfRange::Error,
                    }],
                    ::core::result::Result::Err(_) => ::std::vec::Vec::new(),
                }
            },
            docs: docs.clone(),
        }
    }
}
