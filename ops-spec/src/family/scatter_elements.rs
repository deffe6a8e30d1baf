//! The `scatter_elements` family: updates written into a copy of the input
//! at positions an index tensor gives along one axis. With `collisions:
//! last_write_wins` the last update of an element replaces it (runtime:
//! [`ops_core::patterns::scatter_elements`]; kernels:
//! [`crate::wgsl::scatter_elements`]); with `combine: <expression of a, b>`
//! each update is combined into the element in row-major order (runtime:
//! [`ops_core::patterns::scatter_combine`]; kernels:
//! [`crate::wgsl::scatter_combine`]).

use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::check::{integer_types, same_types};
use crate::codegen::compute::{dtype_pairs, gen_kernel, kernel_ident, ComputeCode};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::{Diagnostic, Errors};
use crate::lower::{Lower, ScalarEnv};
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
    /// The declared combine of the element so far (`a`) and the update
    /// (`b`), with its text; `None` for `collisions: last_write_wins`.
    pub combine: Option<(&'static ops_core::scalar::Scalar, String)>,
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
        use crate::syntax::ast::ParamValue;
        use ops_core::scalar::{Ty as STy, Var};
        const KEYS: &[&str] = &["input", "indices", "updates", "output", "axis"];
        let params = cx.params_optional(c, KEYS, &["collisions", "combine"], errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let indices = cx.param_tensor(&params, "indices", false, c, errors);
        let updates = cx.param_tensor(&params, "updates", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axis = cx.param_int(&params, "axis", c, errors);
        let combine = match (params.get("collisions"), params.get("combine")) {
            (Some(_), None) => {
                cx.param_word(&params, "collisions", &[("last_write_wins", ())], c, errors)?;
                None
            }
            (None, Some(ParamValue::Expr(e))) => {
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
            (None, Some(ParamValue::Map(n, _))) => {
                errors.error(n.span, "`combine` is an arithmetic expression");
                return None;
            }
            _ => {
                errors.push(
                    Diagnostic::new(
                        c.pattern.span,
                        "pattern `scatter_elements` needs either `collisions` or `combine`",
                    )
                    .help("`collisions: last_write_wins`, or `combine: a + b` (`a` the element so far, `b` the update)"),
                );
                return None;
            }
        };
        Some(Box::new(ScatterElementsPattern {
            input: input?,
            indices: indices?,
            updates: updates?,
            output: output?,
            axis: axis?,
            combine,
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
        // Every data type the tables give the input must have the combine's
        // arithmetic on the GPU.
        let Some((combine, _)) = self.combine else {
            return;
        };
        for e in &spec.support {
            for r in e.rows.iter().filter(|r| r.tensor == self.input) {
                for &dt in &r.dtypes {
                    if let Some(why) =
                        ops_core::patterns::scatter_combine::combine_unsupported(combine, dt)
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
        if let Some(combine) = &self.combine {
            return self.generate_combine(spec, origin, key_name, combine);
        }
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let ScatterElementsPattern {
            input,
            indices,
            updates,
            output,
            axis,
            docs,
            ..
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
                let id = kernel_ident(stage.name(), &[a, b]);
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
                        out_of_range: ::ops_core::OutOfRange::Error,
                    }],
                    _ => ::std::vec::Vec::new(),
                }
            },
            docs: docs.clone(),
        }
    }
}

impl ScatterElementsPattern {
    /// The code of a scatter with a declared `combine`.
    fn generate_combine(
        &self,
        spec: &Spec,
        origin: &str,
        key_name: &str,
        (combine, text): &(&'static ops_core::scalar::Scalar, String),
    ) -> ComputeCode {
        use crate::codegen::compute::{gen_scalar, VariantKernels};
        use crate::wgsl::scatter_combine::{
            scatter_combine_kernel_key, scatter_combine_unsupported,
        };
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, self.input, self.indices) {
            if scatter_combine_unsupported(combine, a, b).is_some() {
                continue;
            }
            let key = scatter_combine_kernel_key(key_name, a, b);
            let (da, db) = (gen_dtype(a), gen_dtype(b));
            kernels.push(
                quote!(()),
                "scatter_combine",
                (a, b),
                &key,
                quote!(::ops_core::wgsl::scatter_combine::scatter_combine_kernel_text(
                    COMBINE, #da, #db, #key, #origin,
                )),
                ops_core::patterns::scatter_combine::BINDINGS,
                quote!(::ops_core::__private::patterns::scatter_combine::WORKGROUP_SIZE),
            );
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(()));
        let combine_tok = gen_scalar(combine);
        let ax = gen_expr(&self.axis);
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
        let rt = quote!(::ops_core::__private::patterns::scatter_combine);
        let plan = quote! {
            let __axis = self.__env_count(&AXIS)?;
            let (__d, __x) = (self.#in_f.dtype, self.#ix_f.dtype);
            #rt::scatter_combine_plan(
                &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#up_f, #up_slot, &self.#out_f, #out_slot,
                __axis, &self.__scalar_attrs(), kernel_for((), __d, __x))
                .map_err(|e| match e {
                    ::ops_core::OpError::Unsupported(m) => ::ops_core::OpError::Unsupported(::std::format!("{}: {m}", #name)),
                    e => e,
                })
        };
        let mut docs = self.docs.clone();
        docs.push(String::new());
        docs.push(format!(
            "Each update is combined into its element in row-major order of the updates as `{text}` (`a` the element so far, `b` the update): deterministic, on the GPU as on the CPU (`ops_core::patterns::scatter_combine`)."
        ));
        ComputeCode {
            items: quote! {
                #lookup
                pub(crate) static AXIS: ::ops_core::__private::expr::Expr = #ax;
                pub(crate) static COMBINE: &::ops_core::scalar::Scalar = #combine_tok;
            },
            kernel_ids,
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            run_cpu: quote! {
                let __axis = self.__env_count(&AXIS)?;
                let out = #rt::scatter_combine_cpu(
                    COMBINE, inputs[#in_slot], inputs[#ix_slot], inputs[#up_slot], &self.#out_f, __axis, #ix_name,
                    &self.__scalar_attrs())?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                #plan
            },
            gpu_plan_variants: quote! {
                let plan = { #plan }?;
                ::core::result::Result::Ok(::std::vec![(::std::string::String::from("scatter_combine"), plan)])
            },
            index_error: quote! {
                match self.__env_count(&AXIS) {
                    ::core::result::Result::Ok(__axis) if inputs.len() > #ix_slot => ::ops_core::family::gather_elements::gather_elements_index_error(
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
            docs,
        }
    }
}

#[cfg(test)]
mod tests {
    /// A scatter spec whose compute block ends with `tail`, `types` in its
    /// data rows.
    fn spec(types: &str, tail: &str) -> String {
        format!(
            "operator T {{
                input x: tensor \"X\"
                input i: tensor \"I\"
                input u: tensor \"U\"
                output y: tensor \"Y\"
                rules {{ shape y = x.sizes => \"y\"; }}
                support {{ ranks 1..=4 {{ x: {types}; i: INT32; u: {types}; y: {types}; }} }}
                compute scatter_elements {{
                    input: x  indices: i  updates: u  output: y  axis: 0
                    {tail}
                }}
            }}"
        )
    }

    fn errors(src: &str) -> Vec<String> {
        match crate::codegen::expand("t.op", src) {
            Ok(_) => Vec::new(),
            Err(f) => f.diagnostics.into_iter().map(|d| d.message).collect(),
        }
    }

    #[test]
    fn collisions_or_a_combine() {
        assert_eq!(
            errors(&spec("FLOAT32 INT8", "collisions: last_write_wins")),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(&spec("FLOAT32 INT8 FLOAT64", "combine: b")),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(&spec("FLOAT16 INT64", "combine: max(a, b) + 1")),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(&spec("FLOAT32", "")),
            ["pattern `scatter_elements` needs either `collisions` or `combine`"]
        );
        assert_eq!(
            errors(&spec("FLOAT32", "collisions: last_write_wins combine: b")),
            ["pattern `scatter_elements` needs either `collisions` or `combine`"]
        );
        assert_eq!(
            errors(&spec("FLOAT32", "combine: a < b")),
            ["`combine` is BOOL, but the pattern needs a `T` (the scattered tensor's data type)"]
        );
        assert_eq!(
            errors(&spec("FLOAT32", "combine: a + x")),
            ["`combine` cannot use `x`"]
        );
        assert_eq!(
            errors(&spec("FLOAT32 INT32", "combine: sqrt(a + b)")),
            ["INT32 cannot be combined: `sqrt` is not defined on INT32"]
        );
        // FLOAT64 adds, divides and takes powers on the GPU (word pairs).
        assert_eq!(
            errors(&spec("FLOAT64", "combine: a + b")),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(&spec("FLOAT64", "combine: a / b")),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(&spec("FLOAT64", "combine: pow(a, b)")),
            Vec::<String>::new()
        );
    }
}
