//! Per-pattern glue: the kernels of every data-type combination the tables
//! allow, the CPU reference call and the GPU plan call.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use ops_core::patterns::gather_nd::GatherVariant;
use ops_core::patterns::reduce::{Keep, ReduceVariant, Select, Ties, Zeros};
use ops_core::DataType;

use super::exprs::{gen_dtype, gen_expr};
use crate::check::Checked;
use crate::model::{Compute, Spec, TiesParam};
use crate::wgsl::reduce::{reduce_kernel, reduce_kernel_key, reduce_supported, REDUCE_BINDINGS};

/// What a pattern contributes to the generated module.
pub struct ComputeCode {
    /// Items at module level (kernels, constants), `pub(crate)` where the
    /// bodies below name them.
    pub items: TokenStream,
    /// The kernel statics among `items`.
    pub kernel_ids: Vec<proc_macro2::Ident>,
    /// Body of `run_cpu` (inputs already checked).
    pub run_cpu: TokenStream,
    /// Body of `gpu_plan_for` (its `class: DeviceClass` argument in scope).
    pub gpu_plan: TokenStream,
    /// Body of `gpu_plan_variants`.
    pub gpu_plan_variants: TokenStream,
    /// Body of `tolerance`.
    pub tolerance: TokenStream,
    /// Body of `accuracy_domain`.
    pub domain: TokenStream,
    /// Body of `index_error`.
    pub index_error: TokenStream,
    /// Body of `index_bounds`.
    pub index_bounds: TokenStream,
    /// Documented decisions, for rustdoc.
    pub docs: Vec<String>,
}

/// A static [`ops_core::scalar::Scalar`] tree as a `&'static` constant
/// expression (promoted in a `static`'s initializer).
fn gen_scalar(s: &ops_core::scalar::Scalar) -> TokenStream {
    use ops_core::scalar::Scalar;
    let path = quote!(::ops_core::scalar);
    let node = match *s {
        Scalar::Var(v) => {
            let v = format_ident!("{}", format!("{v:?}"));
            quote!(#path::Scalar::Var(#path::Var::#v))
        }
        Scalar::Int(i) => quote!(#path::Scalar::Int(#i)),
        Scalar::Float(f) => quote!(#path::Scalar::Float(#f)),
        Scalar::Bool(b) => quote!(#path::Scalar::Bool(#b)),
        Scalar::Lowest => quote!(#path::Scalar::Lowest),
        Scalar::Highest => quote!(#path::Scalar::Highest),
        Scalar::Unary(op, a) => {
            let op = format_ident!("{}", format!("{op:?}"));
            let a = gen_scalar(a);
            quote!(#path::Scalar::Unary(#path::Unary::#op, #a))
        }
        Scalar::Binary(op, a, b) => {
            let op = format_ident!("{}", format!("{op:?}"));
            let (a, b) = (gen_scalar(a), gen_scalar(b));
            quote!(#path::Scalar::Binary(#path::Binary::#op, #a, #b))
        }
        Scalar::Select(c, t, f) => {
            let (c, t, f) = (gen_scalar(c), gen_scalar(t), gen_scalar(f));
            quote!(#path::Scalar::Select(#c, #t, #f))
        }
    };
    quote!(&#node)
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
    gen_compute_in(checked, origin, "")
}

/// The operator name that starts its kernel keys: `name` qualified by its
/// catalog namespace (`onnx::ArgMax`; `ArgMax` in the root namespace), so
/// that operators of one name in two namespaces never share a kernel key.
pub fn kernel_key_name(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_owned()
    } else {
        format!("{namespace}::{name}")
    }
}

/// [`gen_compute`] for an operator of catalog namespace `namespace`, whose
/// kernel keys start with [`kernel_key_name`].
pub fn gen_compute_in(checked: &Checked, origin: &str, namespace: &str) -> ComputeCode {
    let spec = checked.spec();
    gen_compute_spec(spec, origin, &kernel_key_name(namespace, &spec.name))
}

/// [`gen_compute`] of a checked spec's model (or of one arm of its switch),
/// its kernel keys starting with `key_name`.
fn gen_compute_spec(spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
    let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
    match spec.compute.as_ref() {
        Some(Compute::Switch { attr, arms }) => {
            let f = format_ident!("{}", spec.attrs[*attr].name);
            let enum_members: Vec<String> = match spec.attrs[*attr].ty {
                crate::model::AttrType::Enum(e) => spec.enums[e].members.clone(),
                _ => Vec::new(),
            };
            let mut items = TokenStream::new();
            let mut kernel_paths = Vec::new();
            let mut bodies: [Vec<TokenStream>; 7] = Default::default();
            let mut docs = Vec::new();
            for (k, (members, c)) in arms.iter().enumerate() {
                let arm = spec.arm(*attr, members, c);
                // `Reduce.SUM`: the arm's member after the operator's key.
                let arm_key = format!("{key_name}{}", &arm.name[spec.name.len()..]);
                let code = gen_compute_spec(&arm, origin, &arm_key);
                let m = format_ident!("__arm_{}", k);
                let arm_items = &code.items;
                items.extend(quote! {
                    #[allow(dead_code, unused_imports)]
                    mod #m {
                        use super::*;
                        #arm_items
                    }
                });
                kernel_paths.extend(code.kernel_ids.iter().map(|id| quote!(#m::#id)));
                let idx = members.iter();
                let pat = quote!(#(#idx)|*);
                for (slot, body) in bodies.iter_mut().zip([
                    &code.run_cpu,
                    &code.gpu_plan,
                    &code.gpu_plan_variants,
                    &code.index_error,
                    &code.index_bounds,
                    &code.tolerance,
                    &code.domain,
                ]) {
                    slot.push(quote!(#pat => {
                        #[allow(unused_imports)]
                        use self::#m::*;
                        #body
                    }));
                }
                let names: Vec<&str> = members
                    .iter()
                    .filter_map(|&i| enum_members.get(i as usize).map(|s| s.as_str()))
                    .collect();
                docs.push(String::new());
                docs.push(format!(
                    "## `{}` {}",
                    spec.attrs[*attr].seed,
                    names.join(", ")
                ));
                docs.push(String::new());
                docs.extend(code.docs.iter().cloned());
            }
            let name = &spec.name;
            let unknown = quote!(::ops_core::OpError::InvalidArgument(
                ::std::format!("{}: no computation for this {}", #name, stringify!(#f))
            ));
            let [run_cpu, gpu_plan, gpu_plan_variants, index_error, index_bounds, tolerance, domain] =
                bodies;
            items.extend(quote! {
                static KERNELS: &[&::ops_core::Kernel] = &[#(&#kernel_paths),*];
            });
            ComputeCode {
                items,
                kernel_ids: Vec::new(),
                run_cpu: quote!(match self.#f.index() { #(#run_cpu)* _ => ::core::result::Result::Err(#unknown) }),
                gpu_plan: quote!(match self.#f.index() { #(#gpu_plan)* _ => { let _ = class; ::core::result::Result::Err(#unknown) } }),
                gpu_plan_variants: quote!(match self.#f.index() { #(#gpu_plan_variants)* _ => ::core::result::Result::Err(#unknown) }),
                index_error: quote!(match self.#f.index() { #(#index_error)* _ => #unknown }),
                index_bounds: quote!(match self.#f.index() { #(#index_bounds)* _ => ::std::vec::Vec::new() }),
                tolerance: quote!(match self.#f.index() { #(#tolerance)* _ => ::ops_core::Tolerance::Exact }),
                domain: quote!(match self.#f.index() { #(#domain)* _ => ::core::option::Option::None }),
                docs,
            }
        }
        Some(Compute::Fold {
            input,
            output,
            axes,
            fold,
            text,
            accuracy,
            docs,
        }) => {
            use crate::wgsl::fold::{fold_kernel, fold_kernel_key, fold_unsupported};
            use ops_core::patterns::fold::{FoldVariant, BINDINGS};
            let mut kernels = VariantKernels::default();
            for (a, b) in dtype_pairs(spec, *input, *output) {
                if a != b || fold_unsupported(fold, a).is_some() {
                    continue;
                }
                for v in FoldVariant::ALL {
                    let key = fold_kernel_key(key_name, v, a);
                    let wgsl = fold_kernel(fold, v, a, &key, origin, text);
                    let vi = format_ident!("{}", format!("{v:?}"));
                    kernels.push(
                        quote!(::ops_core::__private::patterns::fold::FoldVariant::#vi),
                        v.name(),
                        (a, b),
                        &key,
                        &wgsl,
                        BINDINGS,
                        quote!(::ops_core::__private::patterns::fold::WORKGROUP_SIZE),
                    );
                }
            }
            let kernel_ids = kernels.ids();
            let lookup = kernels.items(quote!(::ops_core::__private::patterns::fold::FoldVariant));
            let (identity, map, combine, finish) = (
                gen_scalar(fold.identity),
                gen_scalar(fold.map),
                gen_scalar(fold.combine),
                gen_scalar(fold.finish),
            );
            let accuracy_tok = match fold.accuracy {
                Some(a) => {
                    let a = gen_scalar(a);
                    quote!(::core::option::Option::Some(#a))
                }
                None => quote!(::core::option::Option::None),
            };
            let domain_tok = match fold.domain {
                Some((lo, hi)) => quote!(::core::option::Option::Some((#lo, #hi))),
                None => quote!(::core::option::Option::None),
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
                #lookup
                pub(crate) static FOLD: ::ops_core::__private::patterns::fold::Fold = ::ops_core::__private::patterns::fold::Fold {
                    identity: #identity,
                    map: #map,
                    combine: #combine,
                    finish: #finish,
                    accuracy: #accuracy_tok,
                    domain: #domain_tok,
                };
                pub(crate) static AXES: ::ops_core::__private::expr::Expr = #axes_expr;
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
                let out = ::ops_core::__private::patterns::fold::fold_cpu(&FOLD, inputs[#in_slot], &__axes, &self.#out_f)?;
                ::core::result::Result::Ok(::std::vec![out])
            };
            let gpu_plan = quote! {
                #axes_u32
                let __dt = (#in_desc).dtype;
                ::ops_core::__private::patterns::fold::fold_plan(
                    #in_desc, #in_slot, &__axes, &self.#out_f, #out_slot, class,
                    &|v| kernel_for(v, __dt, __dt),
                )
            };
            let gpu_plan_variants = quote! {
                #axes_u32
                let __dt = (#in_desc).dtype;
                ::ops_core::__private::patterns::fold::fold_plans(
                    #in_desc, #in_slot, &__axes, &self.#out_f, #out_slot,
                    &|v| kernel_for(v, __dt, __dt),
                )
            };
            let tolerance = quote! {
                match self.__env_list(&AXES) {
                    ::core::result::Result::Ok(list) => {
                        let __axes: ::std::vec::Vec<u32> = list.into_iter().filter_map(|a| u32::try_from(a).ok()).collect();
                        ::ops_core::__private::patterns::fold::fold_tolerance(&FOLD, #in_desc, &__axes)
                    }
                    ::core::result::Result::Err(_) => ::ops_core::Tolerance::Exact,
                }
            };
            let domain = quote!(FOLD.domain);
            let name = &spec.name;
            let index_error = quote! {
                ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
            };
            let mut docs = docs.clone();
            docs.push(String::new());
            docs.push("Computed as a fold (`ops_core::patterns::fold`):".into());
            docs.push(format!("- identity `{}`", text.identity));
            docs.push(format!("- map `x` to `{}`", text.map));
            docs.push(format!("- combine `a`, `b` as `{}`", text.combine));
            docs.push(format!(
                "- finish `acc` (and `n`, the count) as `{}`",
                text.finish
            ));
            docs.push(format!("- accuracy: `{accuracy}`"));
            if let Some((lo, hi)) = fold.domain {
                docs.push(format!("  for inputs in `[{lo}, {hi})`"));
            }
            ComputeCode {
                items,
                kernel_ids,
                run_cpu,
                gpu_plan,
                gpu_plan_variants,
                index_error,
                index_bounds: quote!(::std::vec::Vec::new()),
                tolerance,
                domain,
                docs,
            }
        }
        Some(Compute::Reduce {
            input,
            output,
            axes,
            cfg,
            ties,
            docs,
        }) => {
            let mut kernels = VariantKernels::default();
            for (a, b) in dtype_pairs(spec, *input, *output) {
                if !reduce_supported(cfg, a, b) {
                    continue;
                }
                for v in ReduceVariant::ALL {
                    let key = reduce_kernel_key(key_name, v, a, b);
                    let wgsl = reduce_kernel(cfg, v, a, b, &key, origin);
                    let vi = format_ident!("{}", format!("{v:?}"));
                    kernels.push(
                        quote!(::ops_core::__private::patterns::reduce::ReduceVariant::#vi),
                        v.name(),
                        (a, b),
                        &key,
                        &wgsl,
                        REDUCE_BINDINGS,
                        quote!(::ops_core::__private::patterns::reduce::WORKGROUP_SIZE),
                    );
                }
            }
            let kernel_ids = kernels.ids();
            let lookup = kernels.items(quote!(
                ::ops_core::__private::patterns::reduce::ReduceVariant
            ));
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
                    quote!(match self.#f as u32 { #(#idx => #toks,)* _ => ::ops_core::__private::patterns::reduce::Ties::First })
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
                #lookup
                pub(crate) static CFG: ::ops_core::__private::patterns::reduce::ReduceConfig = ::ops_core::__private::patterns::reduce::ReduceConfig {
                    keep: ::ops_core::__private::patterns::reduce::Keep::#keep,
                    select: ::ops_core::__private::patterns::reduce::Select::#select,
                    zeros: ::ops_core::__private::patterns::reduce::Zeros::#zeros,
                };
                pub(crate) static AXES: ::ops_core::__private::expr::Expr = #axes_expr;
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
                    &CFG, #ties_expr, #in_desc, #in_slot, &__axes, &self.#out_f, #out_slot, class,
                    &|v| kernel_for(v, (#in_desc).dtype, self.#out_f.dtype),
                )
            };
            let gpu_plan_variants = quote! {
                #axes_u32
                ::ops_core::__private::patterns::reduce::reduce_plans(
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
                kernel_ids,
                run_cpu,
                gpu_plan,
                gpu_plan_variants,
                index_error,
                index_bounds: quote!(::std::vec::Vec::new()),
                tolerance: quote!(::ops_core::Tolerance::Exact),
                domain: quote!(::core::option::Option::None),
                docs: docs.clone(),
            }
        }
        Some(Compute::GatherNd {
            input,
            indices,
            output,
            input_rank,
            indices_rank,
            batch_dims,
            docs,
        }) => {
            use crate::wgsl::gather_nd::{
                gather_nd_kernel, gather_nd_kernel_key, gather_nd_supported, GATHER_ND_BINDINGS,
            };
            let mut kernels = VariantKernels::default();
            for (a, b) in dtype_pairs(spec, *input, *indices) {
                if !gather_nd_supported(a, b) {
                    continue;
                }
                for v in GatherVariant::ALL {
                    let key = gather_nd_kernel_key(key_name, v, a, b);
                    let wgsl = gather_nd_kernel(v, a, b, &key, origin);
                    let vi = format_ident!("{}", format!("{v:?}"));
                    kernels.push(
                        quote!(::ops_core::__private::patterns::gather_nd::GatherVariant::#vi),
                        v.name(),
                        (a, b),
                        &key,
                        &wgsl,
                        GATHER_ND_BINDINGS,
                        quote!(::ops_core::__private::patterns::gather_nd::WORKGROUP_SIZE),
                    );
                }
            }
            let kernel_ids = kernels.ids();
            let lookup = kernels.items(quote!(
                ::ops_core::__private::patterns::gather_nd::GatherVariant
            ));
            let (ir, xr, bd) = (
                gen_expr(input_rank),
                gen_expr(indices_rank),
                gen_expr(batch_dims),
            );
            let in_f = format_ident!("{}", spec.tensors[*input].name);
            let ix_f = format_ident!("{}", spec.tensors[*indices].name);
            let out_f = format_ident!("{}", spec.tensors[*output].name);
            let ix_name = &spec.tensors[*indices].name;
            let (in_slot, ix_slot, out_slot) = (*input, *indices, *output - n_inputs);
            let items = quote! {
                #lookup
                pub(crate) static INPUT_RANK: ::ops_core::__private::expr::Expr = #ir;
                pub(crate) static INDICES_RANK: ::ops_core::__private::expr::Expr = #xr;
                pub(crate) static BATCH_DIMS: ::ops_core::__private::expr::Expr = #bd;
            };
            let counts = quote! {
                let __ir = self.__env_count(&INPUT_RANK)?;
                let __xr = self.__env_count(&INDICES_RANK)?;
                let __bd = self.__env_count(&BATCH_DIMS)?;
            };
            let name = &spec.name;
            ComputeCode {
                items,
                kernel_ids,
                tolerance: quote!(::ops_core::Tolerance::Exact),
                domain: quote!(::core::option::Option::None),
                run_cpu: quote! {
                    #counts
                    let out = ::ops_core::__private::patterns::gather_nd::gather_nd_cpu(inputs[#in_slot], inputs[#ix_slot], &self.#out_f, __ir, __xr, __bd, #ix_name)?;
                    ::core::result::Result::Ok(::std::vec![out])
                },
                gpu_plan: quote! {
                    #counts
                    let (__d, __x) = (self.#in_f.dtype, self.#ix_f.dtype);
                    ::ops_core::__private::patterns::gather_nd::gather_nd_plan(
                        &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#out_f, #out_slot, __ir, __xr, __bd,
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
                        &self.#in_f, #in_slot, &self.#ix_f, #ix_slot, &self.#out_f, #out_slot, __ir, __xr, __bd,
                        &|v| kernel_for(v, __d, __x))
                },
                index_error: quote! {
                    let counts = (|| -> ::core::result::Result<_, ::ops_core::OpError> { #counts Ok((__ir, __xr, __bd)) })();
                    match counts {
                        ::core::result::Result::Ok((__ir, __xr, __bd)) if inputs.len() > #ix_slot => ::ops_core::__private::patterns::gather_nd::gather_nd_index_error(
                            &self.#in_f, inputs[#ix_slot], __ir, __xr, __bd, #ix_name, position),
                        ::core::result::Result::Ok(_) => ::ops_core::OpError::InvalidArgument(::std::format!("{}: missing inputs", #name)),
                        ::core::result::Result::Err(e) => e,
                    }
                },
                index_bounds: quote! {
                    let counts = (|| -> ::core::result::Result<_, ::ops_core::OpError> { #counts Ok((__ir, __xr, __bd)) })();
                    let ::core::result::Result::Ok((__ir, __xr, __bd)) = counts else { return ::std::vec::Vec::new() };
                    match ::ops_core::__private::patterns::gather_nd::GatherNdGeometry::new(&self.#in_f.sizes, &self.#ix_f.sizes, __ir, __xr, __bd) {
                        ::core::result::Result::Ok(g) => ::std::vec![::ops_core::IndexBounds {
                            tensor: #ix_slot,
                            addresses: #in_slot,
                            sizes: g.dims.iter().map(|d| d.0 as u32).collect(),
                        }],
                        ::core::result::Result::Err(_) => ::std::vec::Vec::new(),
                    }
                },
                docs: docs.clone(),
            }
        }
        Some(Compute::ScatterElements {
            input,
            indices,
            updates,
            output,
            axis,
            docs,
        }) => {
            use crate::wgsl::scatter_elements::{
                scatter_bindings, scatter_kernel, scatter_kernel_key, scatter_supported,
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
                    let wgsl = scatter_kernel(stage, a, b, &key, origin);
                    let id = kernel_ident(stage.name(), a, b);
                    kernels.push(gen_kernel(
                        &id,
                        &key,
                        &wgsl,
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
        None => ComputeCode {
            kernel_ids: Vec::new(),
            items: quote!(
                static KERNELS: &[&::ops_core::Kernel] = &[];
            ),
            run_cpu: quote!(::core::unreachable!()),
            gpu_plan: quote! {
                let _ = class;
                ::core::unreachable!()
            },
            gpu_plan_variants: quote!(::core::unreachable!()),
            index_error: quote!(::core::unreachable!()),
            index_bounds: quote!(::std::vec::Vec::new()),
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            docs: Vec::new(),
        },
    }
}

/// A `static` kernel item named `id`.
/// `K_<NAME>_<A>_<B>`: the static holding the kernel of variant (or stage)
/// `name` for data types `a` and `b`.
fn kernel_ident(name: &str, a: DataType, b: DataType) -> proc_macro2::Ident {
    format_ident!(
        "K_{}_{}_{}",
        name.to_ascii_uppercase(),
        a.spec_name(),
        b.spec_name()
    )
}

/// The kernels of a pattern with one kernel per variant and data-type pair
/// (reduce, gather_nd), and the arms of their look-up by `(variant, a, b)`.
#[derive(Default)]
struct VariantKernels {
    statics: Vec<(proc_macro2::Ident, TokenStream)>,
    arms: Vec<TokenStream>,
}

impl VariantKernels {
    /// Adds the kernel of `variant` (a path to the enum value; `name` in its
    /// key) for the data types `(a, b)`.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        variant: TokenStream,
        name: &str,
        (a, b): (DataType, DataType),
        key: &str,
        wgsl: &str,
        bindings: &[ops_core::Access],
        workgroup_size: TokenStream,
    ) {
        let id = kernel_ident(name, a, b);
        let (da, db) = (gen_dtype(a), gen_dtype(b));
        self.arms
            .push(quote!((#variant, #da, #db) => ::core::option::Option::Some(&#id),));
        self.statics
            .push(gen_kernel(&id, key, wgsl, bindings, workgroup_size));
    }

    /// The kernel statics' names.
    fn ids(&self) -> Vec<proc_macro2::Ident> {
        self.statics.iter().map(|k| k.0.clone()).collect()
    }

    /// The kernel statics, `KERNELS`, and `fn kernel_for(v, a, b)` over the
    /// variant type `ty`.
    fn items(&self, ty: TokenStream) -> TokenStream {
        let ids = self.statics.iter().map(|k| &k.0);
        let statics = self.statics.iter().map(|k| &k.1);
        let arms = &self.arms;
        quote! {
            #(#statics)*
            static KERNELS: &[&::ops_core::Kernel] = &[#(&#ids),*];
            pub(crate) fn kernel_for(
                v: #ty,
                a: ::ops_core::DataType,
                b: ::ops_core::DataType,
            ) -> ::core::option::Option<&'static ::ops_core::Kernel> {
                match (v, a, b) {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    }
}

fn gen_kernel(
    id: &proc_macro2::Ident,
    key: &str,
    wgsl: &str,
    bindings: &[ops_core::Access],
    workgroup_size: TokenStream,
) -> (proc_macro2::Ident, TokenStream) {
    let bindings = bindings.iter().map(|b| match b {
        ops_core::Access::Read => quote!(::ops_core::Access::Read),
        ops_core::Access::Uniform => quote!(::ops_core::Access::Uniform),
        ops_core::Access::ReadWrite => quote!(::ops_core::Access::ReadWrite),
    });
    // The generators write the segmented variant after the plain module;
    // the kernel holds them apart.
    let plain = crate::wgsl::segments::plain_part(wgsl);
    let segmented = match crate::wgsl::segments::segmented_part(wgsl) {
        Some((counts, text)) => quote!(::core::option::Option::Some(::ops_core::Segmented {
            wgsl: #text,
            segments: &[#(#counts),*],
        })),
        None => quote!(::core::option::Option::None),
    };
    let item = quote! {
        pub(crate) static #id: ::ops_core::Kernel = ::ops_core::Kernel {
            key: #key,
            wgsl: #plain,
            entry: "main",
            bindings: &[#(#bindings),*],
            workgroup_size: #workgroup_size,
            segmented: #segmented,
        };
    };
    (id.clone(), item)
}
