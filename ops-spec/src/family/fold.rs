//! The `fold` family: each output element folds its reduced sub-tensor with
//! arithmetic the spec declares (`identity`, `map`, `combine`, `finish`),
//! under a declared accuracy contract, optionally shifted (`shift: max`:
//! `map` and `finish` read `m`, the sub-tensor's maximum). Runtime: [`ops_core::patterns::fold`];
//! kernels: [`crate::wgsl::fold`].

use quote::{format_ident, quote};

use super::{Family, Pattern};
use crate::check::same_types;
use crate::codegen::compute::{dtype_pairs, gen_scalar, ComputeCode, VariantKernels};
use crate::codegen::exprs::{gen_dtype, gen_expr};
use crate::diag::{Diagnostic, Errors};
use crate::lower::{leak, Lower, ScalarEnv};
use crate::model::*;
use crate::syntax::ast::{self, ExprKind, ParamValue};

/// The family, as [`super::FAMILIES`] registers it.
pub struct FoldFamily;

/// A lowered `compute fold { .. }` block.
#[derive(Clone, Debug)]
pub struct FoldPattern {
    /// Reduced tensor.
    pub input: usize,
    /// Output tensor.
    pub output: usize,
    /// The axes, a list expression.
    pub axes: Expr,
    /// The arithmetic (expressions leaked for the compiler's lifetime).
    pub fold: ops_core::patterns::fold::Fold,
    /// The expressions as written.
    pub text: FoldText,
    /// The accuracy contract as written (`exact`, `ulp(n)`).
    pub accuracy: String,
    /// Doc lines.
    pub docs: Vec<String>,
}

impl Family for FoldFamily {
    fn name(&self) -> &'static str {
        "fold"
    }

    fn lower(
        &self,
        cx: &mut Lower<'_>,
        c: &ast::ComputeDecl,
        errors: &mut Errors,
    ) -> Option<Box<dyn Pattern>> {
        use ops_core::scalar::{Scalar, Ty as STy, Var};
        const KEYS: &[&str] = &[
            "input", "output", "axes", "identity", "map", "combine", "accuracy",
        ];
        let params = cx.params_optional(c, KEYS, &["finish", "domain", "shift"], errors)?;
        let input = cx.param_tensor(&params, "input", false, c, errors);
        let output = cx.param_tensor(&params, "output", true, c, errors);
        let axes = match params.get("axes") {
            Some(ParamValue::Expr(e)) => cx.expect(e, Ty::List, errors),
            _ => None,
        };
        // One type parameter, `T`: the folded tensor's data type, bound
        // per table row; every variable is a `T`, and so is every result.
        const PARAMS: &[(&str, &str)] = &[("T", "the folded tensor's data type")];
        let bound = [input.map_or_else(Vec::new, |t| cx.listed_types(t))];
        let scalar = |key: &str,
                      vars: &[(Var, STy)],
                      errors: &mut Errors|
         -> Option<(&'static Scalar, String)> {
            match params.get(key) {
                Some(ParamValue::Expr(e)) => {
                    let env = ScalarEnv {
                        params: PARAMS,
                        vars,
                        names: &[],
                        tensors: &[],
                        bound: &bound,
                    };
                    let s = cx.lower_scalar(e, key, &env, STy::T, errors)?;
                    Some((s, cx.text(e.span)))
                }
                Some(ParamValue::Map(n, _)) => {
                    errors.error(n.span, format!("`{key}` is an arithmetic expression"));
                    None
                }
                None => Some((leak(Scalar::Var(Var::Acc)), "acc".to_string())),
            }
        };
        let shift = shift_param(params.get("shift").copied(), errors);
        // A shifted fold's `map` and `finish` also see `m`.
        let m: &[(Var, STy)] = match shift {
            Some(Some(_)) => &[(Var::M, STy::T)],
            _ => &[],
        };
        let identity = scalar("identity", &[], errors);
        let map = scalar("map", &[&[(Var::X, STy::T)], m].concat(), errors);
        let combine = scalar("combine", &[(Var::A, STy::T), (Var::B, STy::T)], errors);
        let finish = scalar(
            "finish",
            &[&[(Var::Acc, STy::T), (Var::N, STy::T)], m].concat(),
            errors,
        );
        let accuracy = match params.get("accuracy") {
            Some(ParamValue::Expr(ast::Expr {
                kind: ExprKind::Name(n),
                ..
            })) if n == "exact" => Some((None, "exact".to_string())),
            Some(ParamValue::Expr(
                e @ ast::Expr {
                    kind: ExprKind::Call(f, args),
                    ..
                },
            )) if f.text == "ulp" && args.len() == 1 => {
                // An integer expression of `n`, evaluated as INT64.
                const INT64: STy = STy::Data(ops_core::DataType::Int64);
                let env = ScalarEnv {
                    params: &[],
                    vars: &[(Var::N, INT64)],
                    names: &[],
                    tensors: &[],
                    bound: &[],
                };
                let bound = cx.lower_scalar(&args[0], "accuracy", &env, INT64, errors)?;
                Some((Some(bound), cx.text(e.span)))
            }
            Some(ParamValue::Expr(e)) => {
                errors.push(
                    Diagnostic::new(e.span, "`accuracy` is `exact` or `ulp(bound)`")
                        .help("`bound` is an integer expression of `n`, the number of elements folded: `ulp(2 * n + 1)`"),
                );
                None
            }
            _ => None,
        };
        let domain = super::domain_param(params.get("domain").copied(), errors);
        let (identity, map, combine, finish, accuracy, domain, shift) = (
            identity?, map?, combine?, finish?, accuracy?, domain?, shift?,
        );
        Some(Box::new(FoldPattern {
            input: input?,
            output: output?,
            axes: axes?,
            fold: ops_core::patterns::fold::Fold {
                identity: identity.0,
                map: map.0,
                combine: combine.0,
                finish: finish.0,
                accuracy: accuracy.0,
                domain,
                shift,
            },
            text: FoldText {
                identity: identity.1,
                map: map.1,
                combine: combine.1,
                finish: finish.1,
            },
            accuracy: accuracy.1,
            docs: c.docs.clone(),
        }))
    }
}

/// The `shift` parameter: absent, or `max` ([`ops_core::patterns::fold::Shift`]).
fn shift_param(
    param: Option<&ParamValue>,
    errors: &mut Errors,
) -> Option<Option<ops_core::patterns::fold::Shift>> {
    use ops_core::patterns::fold::Shift;
    match param {
        None => Some(None),
        Some(ParamValue::Expr(ast::Expr {
            kind: ExprKind::Name(n),
            ..
        })) if n == Shift::Max.name() => Some(Some(Shift::Max)),
        Some(
            ParamValue::Expr(ast::Expr { span, .. }) | ParamValue::Map(ast::Name { span, .. }, _),
        ) => {
            errors.push(
                Diagnostic::new(*span, "`shift` is `max`")
                    .help("`shift: max` lets `map` and `finish` read `m`, the maximum of the output's elements"),
            );
            None
        }
    }
}

impl Pattern for FoldPattern {
    fn clone_box(&self) -> Box<dyn Pattern> {
        Box::new(self.clone())
    }

    fn check(&self, spec: &Spec, errors: &mut Errors) {
        same_types(
            spec,
            self.input,
            self.output,
            "folds the elements of",
            errors,
        );
        // Every data type the tables give the input must have the arithmetic
        // on the GPU.
        for e in &spec.support {
            for r in e.rows.iter().filter(|r| r.tensor == self.input) {
                for &dt in &r.dtypes {
                    if let Some(why) = crate::wgsl::fold::fold_unsupported(&self.fold, dt) {
                        errors.push(
                            Diagnostic::new(
                                r.span,
                                format!("{} cannot be folded: {why}", dt.spec_name()),
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
        let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
        let FoldPattern {
            input,
            output,
            axes,
            fold,
            text,
            accuracy,
            docs,
        } = self;

        use crate::wgsl::fold::{fold_kernel_key, fold_unsupported};
        use ops_core::patterns::fold::FoldVariant;
        let mut kernels = VariantKernels::default();
        for (a, b) in dtype_pairs(spec, *input, *output) {
            if a != b || fold_unsupported(fold, a).is_some() {
                continue;
            }
            for &v in FoldVariant::of(fold) {
                let key = fold_kernel_key(key_name, v, a);
                let vi = format_ident!("{}", format!("{v:?}"));
                let da = gen_dtype(a);
                let (ti, tm, tc, tf) = (&text.identity, &text.map, &text.combine, &text.finish);
                let generate = quote!(::ops_core::wgsl::fold::fold_kernel_text(
                    &FOLD,
                    ::ops_core::__private::patterns::fold::FoldVariant::#vi,
                    #da,
                    #key,
                    #origin,
                    &::ops_core::wgsl::fold::FoldText {
                        identity: ::std::string::String::from(#ti),
                        map: ::std::string::String::from(#tm),
                        combine: ::std::string::String::from(#tc),
                        finish: ::std::string::String::from(#tf),
                    },
                ));
                kernels.push(
                    quote!(::ops_core::__private::patterns::fold::FoldVariant::#vi),
                    v.name(),
                    (a, b),
                    &key,
                    generate,
                    v.bindings(fold),
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
        let shift_tok = match fold.shift {
            Some(s) => {
                let s = format_ident!("{}", format!("{s:?}"));
                quote!(::core::option::Option::Some(::ops_core::__private::patterns::fold::Shift::#s))
            }
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
                shift: #shift_tok,
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
            let out = ::ops_core::__private::patterns::fold::fold_cpu(&FOLD, inputs[#in_slot], &__axes, &self.#out_f, &self.__scalar_attrs(), __precision)?;
            ::core::result::Result::Ok(::std::vec![out])
        };
        let call = quote! {
            let __attrs = self.__scalar_attrs();
            let __call = ::ops_core::__private::patterns::fold::FoldCall {
                input: #in_desc,
                input_slot: #in_slot,
                axes: &__axes,
                output: &self.#out_f,
                output_slot: #out_slot,
                attrs: &__attrs,
                loops: ::ops_core::__private::patterns::fold::FoldLoops::of(&FOLD, (#in_desc).dtype),
                shift: FOLD.shift,
            };
            let __dt = (#in_desc).dtype;
        };
        let gpu_plan = quote! {
            #axes_u32
            #call
            ::ops_core::__private::patterns::fold::fold_plan(&__call, class, &|v| kernel_for(v, __dt, __dt))
        };
        let gpu_plan_variants = quote! {
            #axes_u32
            #call
            ::ops_core::__private::patterns::fold::fold_plans(&__call, &|v| kernel_for(v, __dt, __dt))
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
        if let Some(s) = fold.shift {
            docs.push(format!(
                "- shift `m`: the `{}` of the output's elements, 0 where it is not finite, found first",
                s.name()
            ));
        }
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
}

#[cfg(test)]
mod tests {
    /// A fold spec with `compute` replaced and `types` in its table.
    fn spec(types: &str, attrs: &str, rules: &str, compute: &str) -> String {
        format!(
            "operator T {{
                input x: tensor \"X\"
                output y: tensor \"Y\"
                {attrs}
                rules {{
                    {rules}
                    shape y = [for d in 0..rank(x) if d != 0: x.sizes[d]] => \"y\";
                }}
                support {{ ranks 1..=4 {{ x: {types}; y: {types}; }} }}
                compute fold {{
                    input: x  axes: [0]  output: y
                    {compute}
                }}
            }}"
        )
    }

    /// The messages of the spec's errors (empty when it compiles).
    fn errors(src: &str) -> Vec<String> {
        match crate::codegen::expand("t.op", src) {
            Ok(_) => Vec::new(),
            Err(f) => f.diagnostics.into_iter().map(|d| d.message).collect(),
        }
    }

    const SUM: &str = "identity: 0 map: x combine: a + b accuracy: ulp(n)";

    #[test]
    fn a_fold_compiles() {
        assert_eq!(
            errors(&spec("FLOAT32 INT64 BOOL", "", "", SUM)),
            Vec::<String>::new()
        );
        let scaled = "identity: 0 map: x combine: a + b finish: acc * s accuracy: ulp(n + 1)";
        let with_attr = spec("FLOAT32 FLOAT16", "attr s: f32 = 0.5 \"S\"", "", scaled);
        assert_eq!(errors(&with_attr), Vec::<String>::new());
    }

    #[test]
    fn a_shift_lets_map_and_finish_read_m() {
        let lse = "identity: 0 shift: max map: exp(x - m) combine: a + b \
                   finish: log(acc) + m accuracy: ulp(2 * n + 18)";
        assert_eq!(
            errors(&spec("FLOAT32 FLOAT16 FLOAT64", "", "", lse)),
            Vec::<String>::new()
        );
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: 0 map: exp(x - m) combine: a + b accuracy: exact",
        ));
        assert_eq!(e, ["`map` cannot use `m`"]);
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: 0 shift: max map: x combine: a + m accuracy: exact",
        ));
        assert_eq!(e, ["`combine` cannot use `m`"]);
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: 0 shift: min map: x combine: a + b accuracy: exact",
        ));
        assert_eq!(e, ["`shift` is `max`"]);
        let e = errors(&spec(
            "FLOAT32 INT32",
            "",
            "",
            "identity: 0 shift: max map: x - m combine: a + b accuracy: exact",
        ));
        assert_eq!(
            e,
            ["INT32 cannot be folded: `shift: max` is for float types"]
        );
    }

    #[test]
    fn arithmetic_a_type_lacks_is_an_error_at_its_row() {
        let e = errors(&spec(
            "FLOAT32 INT32",
            "",
            "",
            "identity: 0 map: x combine: a + b finish: sqrt(acc) accuracy: ulp(n)",
        ));
        assert_eq!(
            e,
            ["INT32 cannot be folded: `sqrt` is not defined on INT32"]
        );
        // FLOAT64 adds and takes square roots and exponentials on the GPU
        // (word pairs).
        assert_eq!(errors(&spec("FLOAT64", "", "", SUM)), Vec::<String>::new());
        let e = errors(&spec(
            "FLOAT64",
            "",
            "",
            "identity: 0 map: x combine: a + b finish: sqrt(acc) accuracy: ulp(n)",
        ));
        assert!(e.is_empty(), "FLOAT64 takes square roots: {e:?}");
        let e = errors(&spec(
            "FLOAT64",
            "",
            "",
            "identity: 0 map: x combine: a + b finish: exp(acc) accuracy: ulp(n)",
        ));
        assert!(e.is_empty(), "FLOAT64 takes exponentials: {e:?}");
        let e = errors(&spec(
            "INT64",
            "",
            "",
            "identity: 0 map: x combine: a / b accuracy: exact",
        ));
        assert!(e.is_empty(), "64-bit integers divide: {e:?}");
        let e = errors(&spec(
            "INT32",
            "attr s: f32 = 0.5 \"S\"",
            "",
            "identity: 0 map: x * s combine: a + b accuracy: exact",
        ));
        assert_eq!(
            e,
            ["INT32 cannot be folded: a float attribute has no INT32 value"]
        );
    }

    #[test]
    fn names_and_types_are_checked() {
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: x map: x combine: a + b accuracy: exact",
        ));
        assert_eq!(e, ["`identity` cannot use `x`"]);
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: 0 map: y combine: a + b accuracy: exact",
        ));
        assert_eq!(e, ["unknown name `y` in `map`"]);
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: 0 map: x combine: a < b accuracy: exact",
        ));
        assert_eq!(
            e,
            ["`combine` is BOOL, but the pattern needs a `T` (the folded tensor's data type)"]
        );
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: 0 map: x combine: a + b accuracy: ulp(0.5)",
        ));
        assert_eq!(e, ["a decimal literal has no INT64 value"]);
        let e = errors(&spec(
            "FLOAT32",
            "",
            "",
            "identity: 0 map: x combine: a + b",
        ));
        assert_eq!(e, ["pattern `fold` needs parameter `accuracy`"]);
        let e = errors(&spec(
            "FLOAT32",
            "attr s: f32 = 0.5 \"S\"",
            "require s > 0 => \"s\";",
            SUM,
        ));
        assert!(
            e[0].starts_with("`s` is a float attribute: rules compute on integers"),
            "{e:?}"
        );
    }

    const ALL: &str = "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8 BOOL";

    /// A fold whose `map` is `map` (max combine, exact).
    fn cast_spec(types: &str, map: &str) -> String {
        spec(
            types,
            "",
            "",
            &format!("identity: lowest map: {map} combine: max(a, b) accuracy: exact"),
        )
    }

    #[test]
    fn casts_compile_for_every_type() {
        for u in ALL.split(' ') {
            let e = errors(&cast_spec(ALL, &format!("cast<T>(cast<{u}>(x))")));
            assert_eq!(e, Vec::<String>::new(), "{u}");
        }
        // A count of nonzero elements; typed literals; BOOL conditions.
        for map in [
            "cast<T>(x != 0)",
            "cast<T>(cast<INT8>(x) + cast<INT8>(100))",
            "cast<T>(cast<FLOAT16>(0.1) * cast<FLOAT16>(x))",
            "if cast<BOOL>(x) { x } else { lowest }",
            "cast<T>(cast<UINT64>(18446744073709551615) > cast<UINT64>(x))",
        ] {
            assert_eq!(errors(&cast_spec(ALL, map)), Vec::<String>::new(), "{map}");
        }
    }

    #[test]
    fn cast_mistakes_are_errors_at_the_expression() {
        assert_eq!(
            errors(&cast_spec("FLOAT32", "cast<FLAOT32>(x)")),
            ["unknown data type `FLAOT32`"]
        );
        assert_eq!(
            errors(&cast_spec(
                "FLOAT32",
                "cast<T>(cast<INT8>(x) + cast<FLOAT32>(x))"
            )),
            ["mismatched types: INT8 and FLOAT32"]
        );
        assert_eq!(
            errors(&cast_spec("FLOAT32", "cast<INT8>(x)")),
            ["`map` is INT8, but the pattern needs a `T` (the folded tensor's data type)"]
        );
        assert_eq!(
            errors(&cast_spec("FLOAT32", "cast<T>(cast<UINT8>(-1))")),
            ["integer literal -1 is out of UINT8's range [0, 255]"]
        );
        assert_eq!(
            errors(&cast_spec("FLOAT32", "cast<T>(cast<INT8>(x) * 300)")),
            ["integer literal 300 is out of INT8's range [-128, 127]"]
        );
        assert_eq!(
            errors(&cast_spec("FLOAT32", "cast<T>(cast<INT32>(0.5))")),
            ["a decimal literal has no INT32 value"]
        );
        assert_eq!(
            errors(&cast_spec("FLOAT32", "if cast<INT8>(x) { x } else { x }")),
            ["expected a boolean (a comparison or a BOOL), found INT8"]
        );
        // A cast written to FLOAT64 is refused at the cast (a literal or
        // attribute would reach the GPU as f32); `cast<T>` on a FLOAT64 row
        // runs from the bits.
        assert_eq!(
            errors(&cast_spec("FLOAT32 INT32", "cast<T>(cast<FLOAT64>(x))")),
            ["a cast to or from FLOAT64 cannot run on the GPU (core WebGPU has no f64)"]
        );
        assert_eq!(
            errors(&cast_spec("FLOAT32 FLOAT64", "cast<T>(cast<INT8>(x))")),
            Vec::<String>::new()
        );
        // Casts are arithmetic, not rules.
        let e = errors(&spec(
            "FLOAT32",
            "",
            "require cast<INT8>(1) > 0 => \"r\";",
            SUM,
        ));
        assert_eq!(e, ["casts belong in a pattern's arithmetic, not in rules"]);
    }
}
