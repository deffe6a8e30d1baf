//! Per-pattern glue: the kernels of every data-type combination the tables
//! allow, the CPU reference call and the GPU plan call.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use ops_core::DataType;

use super::exprs::gen_dtype;
use crate::check::Checked;
use crate::model::{Compute, Spec};

/// What a pattern contributes to the generated module.
pub struct ComputeCode {
    /// Items at module level (kernels, constants), `pub(crate)` where the
    /// bodies below name them.
    pub items: TokenStream,
    /// The kernel statics among `items`.
    pub kernel_ids: Vec<proc_macro2::Ident>,
    /// Body of `run_cpu` and `run_yardstick` (inputs already checked;
    /// `__precision: ops_core::scalar::Precision` in scope).
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
pub(crate) fn gen_scalar(s: &ops_core::scalar::Scalar) -> TokenStream {
    use ops_core::scalar::Scalar;
    let path = quote!(::ops_core::scalar);
    let node = match *s {
        Scalar::Var(v) => {
            let v = format_ident!("{}", format!("{v:?}"));
            quote!(#path::Scalar::Var(#path::Var::#v))
        }
        Scalar::Attr(i, kind, t) => {
            let kind = format_ident!("{}", format!("{kind:?}"));
            let t = gen_ty(t);
            quote!(#path::Scalar::Attr(#i, #path::AttrScalar::#kind, #t))
        }
        Scalar::Int(i, t) => {
            let t = gen_ty(t);
            quote!(#path::Scalar::Int(#i, #t))
        }
        Scalar::Float(f, t) => {
            let t = gen_ty(t);
            // By its bits: `f` is the value the compiler chose, exactly.
            let bits = f.to_bits();
            quote!(#path::Scalar::Float(f64::from_bits(#bits), #t))
        }
        Scalar::Bool(b) => quote!(#path::Scalar::Bool(#b)),
        Scalar::Lowest(t) => {
            let t = gen_ty(t);
            quote!(#path::Scalar::Lowest(#t))
        }
        Scalar::Highest(t) => {
            let t = gen_ty(t);
            quote!(#path::Scalar::Highest(#t))
        }
        Scalar::FiniteLowest(t) => {
            let t = gen_ty(t);
            quote!(#path::Scalar::FiniteLowest(#t))
        }
        Scalar::FiniteHighest(t) => {
            let t = gen_ty(t);
            quote!(#path::Scalar::FiniteHighest(#t))
        }
        Scalar::Cast(t, a) => {
            let (t, a) = (gen_ty(t), gen_scalar(a));
            quote!(#path::Scalar::Cast(#t, #a))
        }
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

/// A [`ops_core::scalar::Ty`] as a constant expression.
pub(crate) fn gen_ty(t: ops_core::scalar::Ty) -> TokenStream {
    use ops_core::scalar::Ty;
    match t {
        Ty::Param(i) => quote!(::ops_core::scalar::Ty::Param(#i)),
        Ty::Data(d) => {
            let d = gen_dtype(d);
            quote!(::ops_core::scalar::Ty::Data(#d))
        }
        Ty::AtLeast(i, d) => {
            let d = gen_dtype(d);
            quote!(::ops_core::scalar::Ty::AtLeast(#i, #d))
        }
    }
}

/// Every (a, b) data-type pair the tables admit for two tensors.
pub(crate) fn dtype_pairs(spec: &Spec, a: usize, b: usize) -> BTreeSet<(DataType, DataType)> {
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
    gen_compute_spec(spec, origin, &kernel_key_name(namespace, &spec.ident()))
}

/// [`gen_compute`] of a checked spec's model (or of one arm of its switch),
/// its kernel keys starting with `key_name`.
fn gen_compute_spec(spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
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
        Some(Compute::Pattern(p)) => p.generate(spec, origin, key_name),
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

/// `K_<NAME>_<A>_<B>..`: the static holding the kernel of variant (or
/// stage) `name` for data types `types`.
pub(crate) fn kernel_ident(name: &str, types: &[DataType]) -> proc_macro2::Ident {
    let mut id = format!("K_{}", name.to_ascii_uppercase());
    for t in types {
        id.push('_');
        id.push_str(t.spec_name());
    }
    format_ident!("{id}")
}

/// An [`ops_core::Access`] as a constant expression.
pub(crate) fn gen_access(b: &ops_core::Access) -> TokenStream {
    match b {
        ops_core::Access::Read => quote!(::ops_core::Access::Read),
        ops_core::Access::Uniform => quote!(::ops_core::Access::Uniform),
        ops_core::Access::ReadWrite => quote!(::ops_core::Access::ReadWrite),
    }
}

/// A `static` kernel item named `id`.
pub(crate) fn gen_kernel(
    id: &proc_macro2::Ident,
    key: &str,
    generate: TokenStream,
    bindings: &[ops_core::Access],
    workgroup_size: TokenStream,
) -> (proc_macro2::Ident, TokenStream) {
    let bindings = bindings.iter().map(gen_access);
    // The text is generated on first use by the family's generator
    // (`generate`, an expression of `ops_core::KernelText` over the module's
    // statics), not embedded: see `ops_core::Kernel::generated`.
    let item = quote! {
        pub(crate) static #id: ::ops_core::Kernel = ::ops_core::Kernel::generated(
            #key,
            "main",
            &[#(#bindings),*],
            #workgroup_size,
            || #generate,
        );
    };
    (id.clone(), item)
}
