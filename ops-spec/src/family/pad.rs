//! The `pad` family: each output element is the input element at its
//! coordinates shifted back by the padding before each dimension, or what
//! the mode says outside the input (ONNX Pad, DirectML PADDING1). Runtime:
//! [`ops_core::patterns::pad`]; kernels: [`crate::wgsl::pad`].

use quote::{format_ident, quote};

use ops_core::patterns::pad::PadMode;

use super::{Family, Pattern};
use crate::check::same_types;
use crate::codegen::compute::{dtype_pairs, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::Errors;
use crate::lower::Lower;
use crate::model::*;
use crate::syntax::ast::{self, ParamValue};

/// What a pad's `constant:` parameter names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstantSource {
    /// A host tensor whose element 0 is the constant, as raw bits (ONNX
    /// Pad's `constant_value`).
    Tensor(usize),
    /// A float, integer or boolean attribute whose value, converted to the
    /// data type as `cast<T>` converts it, is the constant (DirectML
    /// PADDING1's `PaddingValue`).
    Attr(usize),
}

/// The family, as [`super::FAMILIES`] registers it.
pub struct PadFamily;

/// A lowered `compute pad { .. }` block.
#[derive(Clone, Debug)]
pub struct PadPattern {
    /// Data tensor.
    pub input: usize,
    /// Output tensor.
    pub output: usize,
    /// The padding before each dimension (a list expression; negative
    /// crops).
    pub begins: Expr,
    /// How coordinates outside the input are filled.
    pub mode: PadMode,
    /// Where the constant comes from, when given (else zeros).
    pub constant: Option<ConstantSource>,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for PadFamily {
    fn name(&self) -> &'static str {
        "pad"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        const KEYS: &[&str] = &["input", "output", "begins", "mode"];
        let params = cx.params_optional(c, KEYS, &["constant"], errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let begins = match params.get("begins") {
            Some(ParamValue::Expr(e)) => cx.expect(e, Ty::List, errors),
            _ => {
                errors.error(c.pattern.span, "parameter `begins` is a list expression");
                None
            }
        };
        let modes: Vec<(&str, PadMode)> = PadMode::ALL.iter().map(|m| (m.name(), *m)).collect();
        let mode = cx.param_word(&params, "mode", &modes, c, errors);
        let constant = match params.get("constant") {
            None => None,
            Some(ParamValue::Expr(ast::Expr {
                kind: ast::ExprKind::Name(n),
                span,
            })) if cx.spec.attrs.iter().any(|a| &a.name == n) => {
                let i = cx.spec.attrs.iter().position(|a| &a.name == n)?;
                match cx.spec.attrs[i].ty {
                    AttrType::Float(_)
                    | AttrType::Int(_)
                    | AttrType::Bool
                    | AttrType::Scalar(_) => Some(ConstantSource::Attr(i)),
                    _ => {
                        errors.error(
                            *span,
                            format!("parameter `constant` names a host tensor or a float, integer or boolean attribute; `{n}` is neither"),
                        );
                        return None;
                    }
                }
            }
            Some(_) => Some(ConstantSource::Tensor(
                cx.param_tensor(&params, "constant", false, c, errors)?,
            )),
        };
        Some(Box::new(PadPattern {
            input: input?,
            output: output?,
            begins: begins?,
            mode: mode?,
            constant,
            docs: c.docs.clone(),
        }))
    }
}

impl Pattern for PadPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        same_types(
            spec,
            self.input,
            self.output,
            "moves the elements of",
            errors,
        );
        if let Some(ConstantSource::Tensor(k)) = self.constant {
            if !spec.tensors[k].host {
                errors.error(
                    spec.tensors[k].span,
                    format!(
                        "`{}` gives the pad's constant, read on the host: declare it `host tensor`",
                        spec.tensors[k].name
                    ),
                );
            }
        }
    }

    fn generate(&self, spec: &Spec, origin: &str, key_name: &str) -> ComputeCode {
        use crate::wgsl::pad::pad_kernel_key;
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let mode = self.mode;
        let mode_tok = format_ident!("{}", format!("{mode:?}"));
        let mode_path = quote!(::ops_core::__private::patterns::pad::PadMode::#mode_tok);
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, self.input, self.output) {
            if a != b {
                continue;
            }
            let key = pad_kernel_key(key_name, mode, a);
            let da = gen_dtype(a);
            kernels.push(
                quote!(()),
                &format!("pad_{}", mode.name()),
                (a, b),
                &key,
                quote!(::ops_core::wgsl::pad::pad_kernel_text(#mode_path, #da, #key, #origin)),
                ops_core::patterns::pad::BINDINGS,
                quote!(::ops_core::__private::patterns::pad::WORKGROUP_SIZE),
            );
        }
        let kernel_ids = kernels.ids();
        let lookup = kernels.items(quote!(()));
        let begins = gen_expr(&self.begins);
        let in_f = format_ident!("{}", spec.tensors[self.input].name);
        let out_f = format_ident!("{}", spec.tensors[self.output].name);
        let (in_slot, out_slot) = (self.input, self.output - n_inputs);
        let pc = quote!(::ops_core::__private::patterns::pad::PadConstant);
        let (constant_cpu, constant_gpu) = match self.constant {
            Some(ConstantSource::Tensor(k)) => {
                let f = format_ident!("{}", spec.tensors[k].name);
                (
                    quote!(#pc::Element(inputs.get(#k).copied())),
                    quote!(#pc::Element(::core::option::Option::Some(&self.#f))),
                )
            }
            Some(ConstantSource::Attr(i)) => {
                let f = format_ident!("{}", spec.attrs[i].name);
                let value = match spec.attrs[i].ty {
                    AttrType::Float(_) => quote!(::ops_core::scalar::Value::F(self.#f as f64)),
                    AttrType::Bool => quote!(::ops_core::scalar::Value::B(self.#f)),
                    AttrType::Scalar(t) => {
                        let tf = format_ident!("{}", spec.tensors[t].name);
                        quote!(self.#f.value_as(self.#tf.dtype))
                    }
                    _ => quote!(::ops_core::scalar::Value::I(self.#f as i128)),
                };
                (quote!(#pc::Value(#value)), quote!(#pc::Value(#value)))
            }
            None => (
                quote!(#pc::Element(::core::option::Option::None)),
                quote!(#pc::Element(::core::option::Option::None)),
            ),
        };
        let name = &spec.name;
        let rt = quote!(::ops_core::__private::patterns::pad);
        let values = quote! {
            let __begins: ::std::vec::Vec<i64> = self
                .__env_list(&BEGINS)?
                .into_iter()
                .map(|x| i64::try_from(x).map_err(|_| ::ops_core::OpError::InvalidArgument(::std::format!("{}: a padding of {} does not fit i64", #name, x))))
                .collect::<::core::result::Result<_, _>>()?;
        };
        let plan = quote! {
            #values
            #rt::pad_plan(#mode_path, &self.#in_f, #in_slot, &self.#out_f, #out_slot, &__begins, #constant_gpu,
                kernel_for((), self.#in_f.dtype, self.#in_f.dtype))
                .map_err(|e| match e {
                    ::ops_core::OpError::Unsupported(m) => ::ops_core::OpError::Unsupported(::std::format!("{}: {m}", #name)),
                    e => e,
                })
        };
        ComputeCode {
            items: quote! {
                #lookup
                pub(crate) static BEGINS: ::ops_core::__private::expr::Expr = #begins;
            },
            kernel_ids,
            tolerance: quote!(::ops_core::Tolerance::Exact),
            domain: quote!(::core::option::Option::None),
            run_cpu: quote! {
                #values
                let out = #rt::pad_cpu(#mode_path, inputs[#in_slot], &self.#out_f, &__begins, #constant_cpu)?;
                ::core::result::Result::Ok(::std::vec![out])
            },
            gpu_plan: quote! {
                let _ = class;
                #plan
            },
            gpu_plan_variants: quote! {
                let plan = { #plan }?;
                ::core::result::Result::Ok(::std::vec![(::std::string::String::from(#rt::PadMode::name(#mode_path)), plan)])
            },
            index_error: quote! {
                ::ops_core::OpError::Device(::std::format!("{} has no index checks, but the GPU reported check {} at {}", #name, check, position))
            },
            index_bounds: quote!(::std::vec::Vec::new()),
            docs: self.docs.clone(),
        }
    }
}
