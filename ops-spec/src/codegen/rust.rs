//! The descriptor type, its builder, validation and the `Operator` impl.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::compute::ComputeCode;
use super::exprs::{gen_dtype, gen_step};
use crate::check::Checked;
use crate::model::{AttrType, Compute, Const, IntKind, Spec, Step};

fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

/// The module of an operator named `name`: its name in lower case, a raw
/// identifier where that is a Rust keyword (`r#mod` for ONNX Mod, `r#where`
/// for Where).
pub fn module_ident(name: &str) -> Ident {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "box", "break", "const", "continue", "do", "dyn", "else", "enum",
        "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro",
        "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "static",
        "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use", "virtual",
        "where", "while", "yield", "abstract", "become",
    ];
    let lower = name.to_ascii_lowercase();
    if KEYWORDS.contains(&lower.as_str()) {
        Ident::new_raw(&lower, Span::call_site())
    } else {
        ident(&lower)
    }
}

/// `INCREASING` -> `Increasing`.
pub fn camel(s: &str) -> String {
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + &c.as_str().to_ascii_lowercase(),
                None => String::new(),
            }
        })
        .collect()
}

fn int_ty(k: IntKind) -> TokenStream {
    match k {
        IntKind::U32 => quote!(u32),
        IntKind::I32 => quote!(i32),
        IntKind::I64 => quote!(i64),
    }
}

fn attr_ty(spec: &Spec, t: AttrType) -> TokenStream {
    match t {
        AttrType::Int(k) => int_ty(k),
        AttrType::List(k) => {
            let k = int_ty(k);
            quote!(::std::vec::Vec<#k>)
        }
        AttrType::Bool => quote!(bool),
        AttrType::Float(false) => quote!(f32),
        AttrType::Float(true) => quote!(f64),
        AttrType::Scalar(_) => quote!(::ops_core::Number),
        AttrType::Enum(e) => {
            let n = ident(&spec.enums[e].name);
            quote!(#n)
        }
    }
}

fn const_value(spec: &Spec, t: AttrType, c: &Const) -> TokenStream {
    match (t, c) {
        (AttrType::Int(k), Const::Int(v)) => {
            let v = proc_macro2::Literal::i128_unsuffixed(*v);
            let k = int_ty(k);
            quote!((#v as #k))
        }
        (AttrType::List(k), Const::List(l)) => {
            let k = int_ty(k);
            let l = l.iter().map(|v| proc_macro2::Literal::i128_unsuffixed(*v));
            quote!(::std::vec![#(#l as #k),*])
        }
        (AttrType::Bool, Const::Bool(b)) => quote!(#b),
        (AttrType::Float(wide), Const::Float(bits)) => {
            let v = f64::from_bits(*bits);
            if wide {
                quote!(#v)
            } else {
                let v = v as f32;
                quote!(#v)
            }
        }
        (AttrType::Scalar(_), Const::Int(v)) => {
            let v = proc_macro2::Literal::i128_unsuffixed(*v);
            quote!(::ops_core::Number::Int(#v))
        }
        (AttrType::Scalar(_), Const::Float(bits)) => {
            let v = f64::from_bits(*bits);
            quote!(::ops_core::Number::Float(#v))
        }
        (AttrType::Enum(e), Const::Enum(i)) => {
            let en = &spec.enums[e];
            let n = ident(&en.name);
            let m = ident(&camel(&en.members[*i as usize]));
            quote!(#n::#m)
        }
        _ => quote!(::core::default::Default::default()),
    }
}

/// The rustdoc of the descriptor: the spec's prose, its tensors and
/// attributes, and the support table.
fn gen_docs(
    spec: &Spec,
    origin: &str,
    compute_docs: &[String],
    paths: Option<&DocPaths>,
) -> String {
    let mut d = String::new();
    for l in &spec.docs {
        d.push_str(l);
        d.push('\n');
    }
    d.push('\n');
    if let Some(s) = &spec.source {
        d.push_str(&format!("Seed: {s}. "));
    }
    d.push_str(&format!("Generated from `{origin}`.\n\n"));
    if !spec.aliases.is_empty() {
        d.push_str(&format!("Also known as: {}.\n\n", spec.aliases.join(", ")));
    }
    d.push_str("# Tensor support\n\n");
    if let Some((l, _)) = spec.introduced {
        d.push_str(&format!("Introduced in feature level {l}.\n\n"));
    }
    let names: Vec<String> = spec.tensors.iter().map(|t| t.seed.clone()).collect();
    d.push_str(&format!("| level | dimensions | {} |\n", names.join(" | ")));
    d.push_str(&format!("|---|---|{}\n", "---|".repeat(names.len())));
    for e in &spec.support {
        let level = e
            .level
            .map(|(l, _)| format!("{l}+"))
            .unwrap_or_else(|| "any".into());
        let dims = format!("{}-{}", e.ranks.0, e.ranks.1);
        let cols: Vec<String> = spec
            .tensors
            .iter()
            .enumerate()
            .map(|(i, _)| {
                e.rows
                    .iter()
                    .find(|r| r.tensor == i)
                    .map(|r| {
                        let mut s = r
                            .dtypes
                            .iter()
                            .map(|t| t.spec_name())
                            .collect::<Vec<_>>()
                            .join(", ");
                        if let Some(rr) = r.ranks {
                            s.push_str(&format!(" (dimensions {}-{})", rr.0, rr.1));
                        }
                        s
                    })
                    .unwrap_or_default()
            })
            .collect();
        d.push_str(&format!("| {level} | {dims} | {} |\n", cols.join(" | ")));
    }
    gen_rule_docs(spec, &mut d);
    gen_builder_docs(spec, &mut d, paths);
    if !compute_docs.is_empty() {
        d.push_str("\n# Semantics\n\n");
        for l in compute_docs {
            d.push_str(l);
            d.push('\n');
        }
    }
    d
}

/// The `# Rules` section: what `validate` and `build` check, in the spec's
/// own words (each `require`, `shape` and `dtype` step's message, once).
fn gen_rule_docs(spec: &Spec, d: &mut String) {
    let mut seen = std::collections::BTreeSet::new();
    let mut lines = Vec::new();
    for step in &spec.steps {
        let (what, message) = match step {
            Step::Require { message, .. } => (None, message),
            Step::Shape {
                tensor, message, ..
            } => (Some(("sizes", *tensor)), message),
            Step::DType {
                tensor, message, ..
            } => (Some(("data type", *tensor)), message),
            Step::Let { .. } => continue,
        };
        if message.is_empty() || !seen.insert((what, message)) {
            continue;
        }
        let line = match what {
            None => format!("- {}\n", md_escape(message)),
            Some((what, t)) => format!(
                "- `{}` {what}: {}\n",
                spec.tensors[t].name,
                md_escape(message)
            ),
        };
        lines.push(line);
    }
    if lines.is_empty() {
        return;
    }
    d.push_str("\n# Rules\n\n");
    d.push_str("`build` and `validate` check these, in the spec's words (the `shape` and `dtype` rules also give `build` the outputs it infers):\n\n");
    for l in lines {
        d.push_str(&l);
    }
}

/// The `# Builder` section: each setter, what it takes, and whether it is
/// required or what its default is; and a sketch of a call.
fn gen_builder_docs(spec: &Spec, d: &mut String, paths: Option<&DocPaths>) {
    let inferred_dtype = |i: usize| {
        spec.steps
            .iter()
            .any(|s| matches!(s, Step::DType { tensor, .. } if *tensor == i))
    };
    d.push_str("\n# Builder\n\n");
    d.push_str("| setter | takes | required or default |\n|---|---|---|\n");
    let mut sketch = Vec::new();
    for (i, t) in spec.tensors.iter().enumerate() {
        let takes = if t.host {
            "`HostTensor`"
        } else {
            "`TensorDesc`"
        };
        if !t.output {
            d.push_str(&format!("| `{}` | {takes} | required |\n", t.name));
            sketch.push(format!(".{}({})", t.name, t.name));
        } else if inferred_dtype(i) {
            d.push_str(&format!(
                "| `{0}` or `{0}_dtype` | {takes} or `DataType` | optional: `build` infers the sizes from the `shape` rules and the data type from the `dtype` rule |\n",
                t.name
            ));
        } else {
            d.push_str(&format!(
                "| `{0}` or `{0}_dtype` | {takes} or `DataType` | one of them required: with `{0}_dtype`, `build` infers the sizes from the `shape` rules |\n",
                t.name
            ));
            sketch.push(format!(".{}_dtype(DataType::...)", t.name));
        }
    }
    for a in &spec.attrs {
        let takes = attr_type_text(spec, a.ty);
        match &a.default {
            Some(c) => d.push_str(&format!(
                "| `{}` | `{takes}` | default `{}` |\n",
                a.name,
                const_text(spec, a.ty, c)
            )),
            None => {
                d.push_str(&format!("| `{}` | `{takes}` | required |\n", a.name));
                sketch.push(format!(".{}(...)", a.name));
            }
        }
    }
    let desc = format!("{}Desc", spec.ident());
    if let Some(paths) = paths {
        if let Some(ex) = super::example::find(spec) {
            gen_example(spec, &ex, paths, d);
            return;
        }
    }
    d.push_str("\nA call with the required setters only (the `ops` crate's documentation has a complete one that runs):\n\n```text\n");
    d.push_str(&format!("let op = {desc}::builder()\n"));
    for s in sketch {
        d.push_str(&format!("    {s}\n"));
    }
    d.push_str("    .build()?;\nop.validate(level)?;\n```\n");
}

/// Where a descriptor page's doctest finds the generated items.
#[derive(Clone, Debug)]
pub struct DocPaths {
    /// The path of the catalog's root module from a doctest (`ops`); a
    /// spec of namespace `onnx` is under `ops::onnx`.
    pub items: String,
    /// The path of the core types (`DataType`, `TensorDesc`, ...) from a
    /// doctest: `ops`, which re-exports them, or `ops_core`.
    pub core: String,
    /// The spec's namespace (`""` or `"onnx"`).
    pub namespace: String,
}

/// Rust's literal of one value of `dtype` (a host tensor's element).
fn element_literal(dtype: ops_core::DataType, v: i128) -> String {
    use ops_core::DataType as D;
    let suffix = match dtype {
        D::Int64 => "i64",
        D::Int32 => "i32",
        D::Int16 => "i16",
        D::Int8 => "i8",
        D::Uint64 => "u64",
        D::Uint32 => "u32",
        D::Uint16 => "u16",
        D::Uint8 => "u8",
        D::Float64 => "f64",
        _ => "f32",
    };
    format!("{v}{suffix}")
}

fn sizes_literal(sizes: &[u32]) -> String {
    if sizes.is_empty() {
        "[0u32; 0]".into()
    } else {
        format!(
            "[{}]",
            sizes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The `# Example` section: a doctest that builds the descriptor found by
/// [`super::example::find`], validates it at the example's level, runs the
/// CPU reference on zeros and checks the outputs' sizes and data types.
fn gen_example(spec: &Spec, ex: &super::example::Example, paths: &DocPaths, d: &mut String) {
    use ops_core::expr::Value;
    let desc = format!("{}Desc", spec.ident());
    let items = if paths.namespace.is_empty() {
        paths.items.clone()
    } else {
        format!("{}::{}", paths.items, paths.namespace)
    };
    let module = module_ident(&spec.ident()).to_string();
    let core = &paths.core;
    let mut uses = vec![format!("{items}::{desc}")];
    let mut code = String::new();
    code.push_str(&format!("let op = {desc}::builder()\n"));
    for (t, e) in spec.tensors.iter().zip(&ex.tensors) {
        let dt = format!("DataType::{:?}", e.dtype);
        if t.host {
            let values = e.values.as_deref().unwrap_or_default();
            let vals = if values.is_empty() {
                format!("[0{}; 0]", &element_literal(e.dtype, 0)[1..])
            } else {
                format!(
                    "[{}]",
                    values
                        .iter()
                        .map(|&v| element_literal(e.dtype, v))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            code.push_str(&format!(
                "    .{}(HostTensor::from_slice({}, &{vals})?)\n",
                t.name,
                sizes_literal(&e.sizes)
            ));
        } else if !t.output || t.given {
            code.push_str(&format!(
                "    .{}(TensorDesc::new({dt}, {}))\n",
                t.name,
                sizes_literal(&e.sizes)
            ));
        } else if e.dtype_setter {
            code.push_str(&format!("    .{}_dtype({dt})\n", t.name));
        }
    }
    for (a, v) in spec.attrs.iter().zip(&ex.attrs) {
        let Some(v) = v else { continue };
        let text = match (a.ty, v) {
            (AttrType::Float(_), _) => "0.0".to_string(),
            (AttrType::Scalar(_), _) => "0".to_string(),
            (AttrType::List(k), Value::List(l)) if l.is_empty() => {
                format!("Vec::<{}>::new()", int_ty(k))
            }
            (AttrType::List(_), Value::List(l)) => format!(
                "[{}]",
                l.iter().map(i128::to_string).collect::<Vec<_>>().join(", ")
            ),
            (AttrType::Enum(e), Value::Enum(m)) => {
                let en = &spec.enums[e];
                uses.push(format!("{items}::{module}::{}", en.name));
                format!("{}::{}", en.name, camel(&en.members[*m as usize]))
            }
            (_, Value::Int(i)) => i.to_string(),
            (_, Value::Bool(b)) => b.to_string(),
            _ => continue,
        };
        code.push_str(&format!("    .{}({text})\n", a.name));
    }
    code.push_str("    .build()?;\n");
    let l = ex.level;
    code.push_str(&format!(
        "op.validate(FeatureLevel::new({}, {}))?;\n",
        l.major, l.minor
    ));
    code.push_str("\n// The CPU reference, on zeros (host tensors: their values).\n");
    let mut args = Vec::new();
    for t in spec.tensors.iter().filter(|t| !t.output) {
        if t.host {
            args.push(format!("&op.{}", t.name));
        } else {
            code.push_str(&format!(
                "let {0} = HostTensor::zeros(op.{0}.clone())?;\n",
                t.name
            ));
            args.push(format!("&{}", t.name));
        }
    }
    code.push_str(&format!("let out = op.run_cpu(&[{}])?;\n", args.join(", ")));
    let outputs: Vec<_> = spec
        .tensors
        .iter()
        .zip(&ex.tensors)
        .filter(|(t, _)| t.output)
        .collect();
    code.push_str(&format!("assert_eq!(out.len(), {});\n", outputs.len()));
    for (j, (t, e)) in outputs.iter().enumerate() {
        let what = if t.given {
            "as described"
        } else {
            "as `build` inferred"
        };
        code.push_str(&format!(
            "assert_eq!(out[{j}].sizes(), {}); // `{}`, {what}\nassert_eq!(out[{j}].dtype(), DataType::{:?});\n",
            sizes_literal(&e.sizes),
            t.name,
            e.dtype
        ));
    }
    let mut core_uses = vec!["DataType", "FeatureLevel", "HostTensor", "Operator"];
    if spec
        .tensors
        .iter()
        .any(|t| !t.host && (!t.output || t.given))
    {
        core_uses.push("TensorDesc");
    }
    d.push_str("\n# Example\n\n");
    d.push_str(&format!(
        "A descriptor that validates at feature level {l}: the required setters, and an attribute set away from its default only where the rules need it. The spec compiler found the values from the spec's table and rules; the block is compiled and run as a doctest.\n\n```\n"
    ));
    d.push_str(&format!("use {core}::{{{}}};\n", core_uses.join(", ")));
    uses.sort();
    uses.dedup();
    for u in uses {
        d.push_str(&format!("use {u};\n"));
    }
    d.push('\n');
    d.push_str(&code);
    d.push_str("# Ok::<(), Box<dyn std::error::Error>>(())\n```\n");
}

/// An attribute type as its setter takes it, for docs.
fn attr_type_text(spec: &Spec, t: AttrType) -> String {
    let int = |k: IntKind| int_ty(k).to_string();
    match t {
        AttrType::Int(k) => int(k),
        AttrType::List(k) => format!("impl Into<Vec<{}>>", int(k)),
        AttrType::Bool => "bool".into(),
        AttrType::Float(false) => "f32".into(),
        AttrType::Float(true) => "f64".into(),
        AttrType::Enum(e) => spec.enums[e].name.clone(),
        AttrType::Scalar(t) => format!(
            "impl Into<ops_core::Number> (a number of `{}`'s data type)",
            spec.tensors[t].name
        ),
    }
}

/// An attribute's default as Rust spells it, for docs.
fn const_text(spec: &Spec, ty: AttrType, c: &Const) -> String {
    match c {
        Const::Int(v) => v.to_string(),
        Const::List(l) => format!(
            "vec![{}]",
            l.iter().map(i128::to_string).collect::<Vec<_>>().join(", ")
        ),
        Const::Bool(b) => b.to_string(),
        Const::Float(bits) => format!("{:?}", f64::from_bits(*bits)),
        Const::Enum(m) => match ty {
            AttrType::Enum(e) => {
                let en = &spec.enums[e];
                en.members.get(*m as usize).map_or_else(
                    || m.to_string(),
                    |member| format!("{}::{}", en.name, camel(member)),
                )
            }
            _ => m.to_string(),
        },
    }
}

/// `s` with the characters Markdown would read as markup escaped, so that
/// a rule's message reads in the docs as the spec writes it.
fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\`*_[]<>|#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The whole module generated for one spec.
/// `namespace` is the catalog namespace (`""` or `"onnx"`, see
/// `ops_core::OperatorInfo::namespace`).
pub fn gen_operator(
    checked: &Checked,
    origin: &str,
    namespace: &str,
    compute: ComputeCode,
    paths: Option<&DocPaths>,
) -> TokenStream {
    let spec = checked.spec();
    let op_name = &spec.name;
    let module = module_ident(&spec.ident());
    let desc = format_ident!("{}Desc", spec.ident());
    let builder = format_ident!("{}Builder", spec.ident());
    let instance = &spec.suffix;
    let groups = spec.groups.iter().map(|g| {
        let (name, seed, output, lo, hi, count) = (&g.name, &g.seed, g.output, g.lo, g.hi, g.count);
        quote!(::ops_core::TensorGroup { name: #name, seed: #seed, output: #output, min: #lo, max: #hi, count: #count })
    });
    let n_inputs = spec.tensors.iter().filter(|t| !t.output).count();
    let docs = gen_docs(spec, origin, &compute.docs, paths);

    // Enums.
    let enums = spec.enums.iter().enumerate().map(|(ei, en)| {
        let name = ident(&en.name);
        let variants: Vec<Ident> = en.members.iter().map(|m| ident(&camel(m))).collect();
        let members = &en.members;
        let idx = 0..en.members.len() as u32;
        let idx2 = idx.clone();
        let default = spec
            .attrs
            .iter()
            .find_map(|a| match (a.ty, &a.default) {
                (AttrType::Enum(e), Some(Const::Enum(i))) if e == ei => Some(*i as usize),
                _ => None,
            })
            .unwrap_or(0);
        let default_v = &variants[default];
        let edoc = if en.docs.is_empty() {
            format!("`{}` of {}.", en.name, spec.name)
        } else {
            en.docs.join("\n")
        };
        let vdocs = members.iter().map(|m| format!("`{m}`"));
        quote! {
            #[doc = #edoc]
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
            pub enum #name {
                #( #[doc = #vdocs] #variants, )*
            }
            impl ::core::default::Default for #name {
                fn default() -> Self { #name::#default_v }
            }
            impl #name {
                /// Every member, in spec order.
                pub const ALL: &'static [#name] = &[#(#name::#variants),*];
                /// The member's name as the seed writes it.
                pub const fn name(self) -> &'static str {
                    match self { #(#name::#variants => #members,)* }
                }
                /// The member's position in the spec.
                pub const fn index(self) -> u32 {
                    match self { #(#name::#variants => #idx,)* }
                }
                /// A member by its name, ignoring case.
                pub fn from_name(s: &str) -> ::core::option::Option<#name> {
                    #name::ALL.iter().copied().find(|m| m.name().eq_ignore_ascii_case(s))
                }
                #[doc(hidden)]
                pub fn __from_index(i: u32) -> #name {
                    match i { #(#idx2 => #name::#variants,)* _ => #name::#default_v }
                }
            }
        }
    });

    // Fields.
    let tensor_fields: Vec<Ident> = spec.tensors.iter().map(|t| ident(&t.name)).collect();
    let tensor_tys: Vec<TokenStream> = spec
        .tensors
        .iter()
        .map(|t| {
            if t.host {
                quote!(::ops_core::HostTensor)
            } else {
                quote!(::ops_core::TensorDesc)
            }
        })
        .collect();
    let tensor_docs: Vec<String> = spec
        .tensors
        .iter()
        .map(|t| {
            let mut s = format!(
                "{} (`{}`){}.",
                if t.output { "Output" } else { "Input" },
                t.seed,
                if t.host {
                    ", read on the host"
                } else if t.given {
                    ", described by the caller (required: no rule infers its sizes)"
                } else {
                    ""
                }
            );
            for l in &t.docs {
                s.push('\n');
                s.push_str(l);
            }
            s
        })
        .collect();
    let attr_fields: Vec<Ident> = spec.attrs.iter().map(|a| ident(&a.name)).collect();
    let attr_tys: Vec<TokenStream> = spec.attrs.iter().map(|a| attr_ty(spec, a.ty)).collect();
    let attr_docs: Vec<String> = spec
        .attrs
        .iter()
        .map(|a| {
            let mut s = format!("`{}`.", a.seed);
            for l in &a.docs {
                s.push('\n');
                s.push_str(l);
            }
            match &a.default {
                Some(c) => s.push_str(&format!("\n\nDefault: `{}`.", const_text(spec, a.ty, c))),
                None => s.push_str("\n\nRequired by the builder."),
            }
            s
        })
        .collect();
    let tensor_names: Vec<&str> = spec.tensors.iter().map(|t| t.name.as_str()).collect();
    let seed_names: Vec<&str> = spec.tensors.iter().map(|t| t.seed.as_str()).collect();
    let input_names = &tensor_names[..n_inputs];
    let output_names = &tensor_names[n_inputs..];
    let n_tensors = spec.tensors.len();

    let desc_refs: Vec<TokenStream> = spec
        .tensors
        .iter()
        .map(|t| {
            let f = ident(&t.name);
            if t.host {
                quote!(self.#f.desc())
            } else {
                quote!(&self.#f)
            }
        })
        .collect();
    let host_values: Vec<TokenStream> = spec
        .tensors
        .iter()
        .map(|t| {
            let f = ident(&t.name);
            if t.host {
                quote!(::ops_core::__private::args::host_values(&self.#f))
            } else {
                quote!(::core::option::Option::None)
            }
        })
        .collect();
    let attr_values: Vec<TokenStream> = spec
        .attrs
        .iter()
        .map(|a| {
            let f = ident(&a.name);
            match a.ty {
                AttrType::Int(_) => quote!(::ops_core::__private::expr::Value::Int(self.#f as i128)),
                AttrType::List(_) => quote!(::ops_core::__private::expr::Value::List(self.#f.iter().map(|&v| v as i128).collect())),
                AttrType::Bool => quote!(::ops_core::__private::expr::Value::Bool(self.#f)),
                // Rules never read a float attribute (the compiler refuses it).
                AttrType::Float(_) | AttrType::Scalar(_) => quote!(::ops_core::__private::expr::Value::Int(0)),
                AttrType::Enum(_) => quote!(::ops_core::__private::expr::Value::Enum(self.#f.index())),
            }
        })
        .collect();

    // Attribute values as arithmetic reads them (`ops_core::scalar`).
    let scalar_values: Vec<TokenStream> = spec
        .attrs
        .iter()
        .map(|a| {
            let f = ident(&a.name);
            match a.ty {
                AttrType::Int(_) => quote!(::ops_core::scalar::Value::I(self.#f as i128)),
                AttrType::Float(_) => quote!(::ops_core::scalar::Value::F(self.#f as f64)),
                AttrType::Bool => quote!(::ops_core::scalar::Value::B(self.#f)),
                // Read as its tensor's data type (DirectML's `MinMaxDataType`).
                AttrType::Scalar(t) => {
                    let tf = ident(&spec.tensors[t].name);
                    quote!(self.#f.value_as(self.#tf.dtype))
                }
                AttrType::Enum(_) => quote!(::ops_core::scalar::Value::I(self.#f as i128)),
                AttrType::List(_) => quote!(::ops_core::scalar::Value::I(0)),
            }
        })
        .collect();
    let steps = spec.steps.iter().map(gen_step);
    let slots = spec.slots;

    // Support table.
    let entries = spec.support.iter().map(|e| {
        let level = match e.level {
            Some((l, _)) => {
                let (a, b) = (l.major, l.minor);
                quote!(::core::option::Option::Some(::ops_core::FeatureLevel::new(#a, #b)))
            }
            None => quote!(::core::option::Option::None),
        };
        let (lo, hi) = (e.ranks.0 as u8, e.ranks.1 as u8);
        let rows = e.rows.iter().map(|r| {
            let t = r.tensor;
            let dts = r.dtypes.iter().map(|d| gen_dtype(*d));
            let ranks = match r.ranks {
                Some((a, b, _)) => {
                    let (a, b) = (a as u8, b as u8);
                    quote!(::core::option::Option::Some((#a, #b)))
                }
                None => quote!(::core::option::Option::None),
            };
            quote!(::ops_core::__private::support::TensorSupport { tensor: #t, dtypes: &[#(#dts),*], ranks: #ranks })
        });
        let when: Vec<u32> = e.when.as_ref().map(|w| w.1.clone()).unwrap_or_default();
        quote!(::ops_core::__private::support::SupportEntry { when: &[#(#when),*], level: #level, ranks: (#lo, #hi), tensors: &[#(#rows),*] })
    });
    let introduced = match spec.introduced {
        Some((l, _)) => {
            let (a, b) = (l.major, l.minor);
            quote!(::core::option::Option::Some(::ops_core::FeatureLevel::new(#a, #b)))
        }
        None => quote!(::core::option::Option::None),
    };
    let leveled = spec.introduced.is_some();
    let aliases = &spec.aliases;

    // Builder.
    let builder_tensor_setters = spec.tensors.iter().map(|t| {
        let f = ident(&t.name);
        let doc = format!("Sets `{}` ({}).", t.name, t.seed);
        if t.host {
            quote! { #[doc = #doc] pub fn #f(mut self, t: ::ops_core::HostTensor) -> Self { self.#f = ::core::option::Option::Some(t); self } }
        } else {
            quote! { #[doc = #doc] pub fn #f(mut self, d: ::ops_core::TensorDesc) -> Self { self.#f = ::core::option::Option::Some(d); self } }
        }
    });
    // A `given` output is the caller's (no `_dtype` setter: nothing infers it).
    let output_dtype_setters = spec.tensors.iter().filter(|t| t.output && !t.given).map(|t| {
        let f = format_ident!("{}_dtype", t.name);
        let doc = format!("Sets the data type of `{}` and lets `build` infer its sizes.", t.name);
        quote! { #[doc = #doc] pub fn #f(mut self, d: ::ops_core::DataType) -> Self { self.#f = ::core::option::Option::Some(d); self } }
    });
    let output_dtype_fields: Vec<Ident> = spec
        .tensors
        .iter()
        .filter(|t| t.output && !t.given)
        .map(|t| format_ident!("{}_dtype", t.name))
        .collect();
    let attr_setters = spec.attrs.iter().map(|a| {
        let f = ident(&a.name);
        let doc = format!("Sets `{}` ({}).", a.name, a.seed);
        match a.ty {
            AttrType::List(k) => {
                let k = int_ty(k);
                quote! { #[doc = #doc] pub fn #f(mut self, v: impl ::core::convert::Into<::std::vec::Vec<#k>>) -> Self { self.#f = ::core::option::Option::Some(v.into()); self } }
            }
            AttrType::Scalar(_) => {
                quote! { #[doc = #doc] pub fn #f(mut self, v: impl ::core::convert::Into<::ops_core::Number>) -> Self { self.#f = ::core::option::Option::Some(v.into()); self } }
            }
            _ => {
                let t = attr_ty(spec, a.ty);
                quote! { #[doc = #doc] pub fn #f(mut self, v: #t) -> Self { self.#f = ::core::option::Option::Some(v); self } }
            }
        }
    });
    let input_takes = spec.tensors.iter().filter(|t| !t.output).map(|t| {
        let f = ident(&t.name);
        let n = &t.name;
        quote!(let #f = self.#f.ok_or_else(|| ::ops_core::__private::args::missing(#op_name, #n))?;)
    });
    let output_takes = spec.tensors.iter().enumerate().filter(|(_, t)| t.output).map(|(i, t)| {
        let f = ident(&t.name);
        let fd = format_ident!("{}_dtype", t.name);
        if t.given {
            let n = &t.name;
            return quote!(let #f = self.#f.ok_or_else(|| ::ops_core::__private::args::missing_given(#op_name, #n))?;);
        }
        quote! {
            if self.#f.is_none() { __missing.push(#i); }
            let #f = self.#f.unwrap_or_else(|| ::ops_core::TensorDesc::new(self.#fd.unwrap_or(::ops_core::DataType::Float32), ::std::vec::Vec::new()));
        }
    });
    let output_fix = spec.tensors.iter().enumerate().filter(|(_, t)| t.output && !t.given).map(|(i, t)| {
        let f = ident(&t.name);
        let fd = format_ident!("{}_dtype", t.name);
        let n = &t.name;
        quote! {
            if __i == #i {
                __d.#f.sizes = __sizes.clone();
                match (__dt, self_dtypes.#fd) {
                    (_, ::core::option::Option::Some(d)) => __d.#f.dtype = d,
                    (::core::option::Option::Some(d), ::core::option::Option::None) => __d.#f.dtype = d,
                    (::core::option::Option::None, ::core::option::Option::None) if __complete => {
                        return ::core::result::Result::Err(::ops_core::OpError::InvalidArgument(::std::format!(
                            "{}: `{}` needs a data type: give `{}` or `{}_dtype`", #op_name, #n, #n, #n)));
                    }
                    (::core::option::Option::None, ::core::option::Option::None) => {}
                }
            }
        }
    });
    let attr_takes = spec.attrs.iter().map(|a| {
        let f = ident(&a.name);
        let n = &a.name;
        match &a.default {
            Some(c) => {
                let v = const_value(spec, a.ty, c);
                quote!(let #f = self.#f.unwrap_or_else(|| #v);)
            }
            None => quote!(let #f = self.#f.ok_or_else(|| ::ops_core::__private::args::missing(#op_name, #n))?;),
        }
    });

    // from_args.
    let args_tensors = spec.tensors.iter().map(|t| {
        let f = ident(&t.name);
        let n = &t.name;
        if t.host {
            quote! { if let ::core::option::Option::Some(t) = args.host_data.get(#n) { b = b.#f(t.clone()); } }
        } else {
            quote! { if let ::core::option::Option::Some(d) = args.tensors.get(#n) { b = b.#f(d.clone()); } }
        }
    });
    let args_output_dtypes = spec.tensors.iter().filter(|t| t.output && !t.given).map(|t| {
        let f = format_ident!("{}_dtype", t.name);
        let n = &t.name;
        quote! { if let ::core::option::Option::Some(d) = args.output_dtypes.get(#n) { b = b.#f(*d); } }
    });
    let args_attrs = spec.attrs.iter().map(|a| {
        let f = ident(&a.name);
        let n = &a.name;
        let conv = match a.ty {
            AttrType::Int(_) => quote!(::ops_core::__private::args::attr_int(#op_name, #n, v)?),
            AttrType::List(_) => quote!(::ops_core::__private::args::attr_list(#op_name, #n, v)?),
            AttrType::Bool => quote!(::ops_core::__private::args::attr_bool(#op_name, #n, v)?),
            AttrType::Float(false) => quote!(::ops_core::__private::args::attr_float(#op_name, #n, v)? as f32),
            AttrType::Float(true) => quote!(::ops_core::__private::args::attr_float(#op_name, #n, v)?),
            AttrType::Scalar(_) => quote!(::ops_core::__private::args::attr_number(#op_name, #n, v)?),
            AttrType::Enum(e) => {
                let en = &spec.enums[e];
                let ename = ident(&en.name);
                let members = &en.members;
                quote!({
                    let s = ::ops_core::__private::args::attr_enum(#op_name, #n, v, &[#(#members),*])?;
                    #ename::from_name(s).unwrap_or_default()
                })
            }
        };
        quote! { if let ::core::option::Option::Some(v) = args.attributes.get(#n) { b = b.#f(#conv); } }
    });

    // The enum attribute that picks support entries, if any entry has `when`.
    let selector_attr = spec
        .support
        .iter()
        .find_map(|e| e.when.as_ref().map(|w| w.0));
    let (selector, member) = match selector_attr {
        Some(ai) => {
            let a = &spec.attrs[ai];
            let members: Vec<&str> = match a.ty {
                AttrType::Enum(e) => spec.enums[e].members.iter().map(|m| m.as_str()).collect(),
                _ => Vec::new(),
            };
            let (name, seed) = (&a.name, &a.seed);
            let f = ident(&a.name);
            (
                quote!(::core::option::Option::Some(::ops_core::__private::support::Selector {
                    attr: #ai, name: #name, seed: #seed, members: &[#(#members),*],
                })),
                quote!(::core::option::Option::Some(self.#f.index())),
            )
        }
        None => (
            quote!(::core::option::Option::None),
            quote!(::core::option::Option::None),
        ),
    };

    let min_level = if leveled {
        quote! {
            let tensors = self.__tensors();
            let host: [::core::option::Option<::std::vec::Vec<i128>>; #n_tensors] = self.__host_values();
            let attrs = self.__attrs();
            TABLE.check_input_ranks(::core::option::Option::None, #member, &tensors, N_INPUTS).ok()?;
            let mut env = ::ops_core::__private::expr::Env::new(&tensors, TENSOR_NAMES, &host, &attrs, SLOTS);
            env.run_steps(#op_name, STEPS).ok()?;
            TABLE.min_level(#member, &tensors)
        }
    } else {
        quote!(::core::option::Option::None)
    };

    let strided_inputs = spec.compute.as_ref().is_some_and(Compute::strided_inputs);
    let ComputeCode {
        items: compute_items,
        run_cpu,
        gpu_plan,
        gpu_plan_variants,
        index_error,
        index_bounds,
        tolerance,
        domain,
        ..
    } = compute;
    let output_descs = spec.tensors.iter().filter(|t| t.output).map(|t| {
        let f = ident(&t.name);
        quote!(self.#f.clone())
    });
    let input_descs = spec.tensors.iter().filter(|t| !t.output).map(|t| {
        let f = ident(&t.name);
        if t.host {
            quote!(self.#f.desc().clone())
        } else {
            quote!(self.#f.clone())
        }
    });
    let host_input_arms = spec
        .tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| t.host && !t.output)
        .map(|(i, t)| {
            let f = ident(&t.name);
            quote!(#i => ::core::option::Option::Some(&self.#f),)
        });
    let tensor_infos = spec.tensors.iter().map(|t| {
        let (name, seed, output, host) = (&t.name, &t.seed, t.output, t.host);
        quote!(::ops_core::TensorInfo { name: #name, seed: #seed, output: #output, host: #host })
    });
    let attr_infos = spec.attrs.iter().map(|a| {
        let (name, seed, has_default) = (&a.name, &a.seed, a.default.is_some());
        let kind = match a.ty {
            AttrType::Int(k) => {
                let signed = k != IntKind::U32;
                quote!(::ops_core::AttrKind::Int { signed: #signed })
            }
            AttrType::List(k) => {
                let signed = k != IntKind::U32;
                quote!(::ops_core::AttrKind::List { signed: #signed })
            }
            AttrType::Bool => quote!(::ops_core::AttrKind::Bool),
            AttrType::Float(_) => quote!(::ops_core::AttrKind::Float),
            AttrType::Scalar(_) => quote!(::ops_core::AttrKind::Number),
            AttrType::Enum(e) => {
                let members = &spec.enums[e].members;
                quote!(::ops_core::AttrKind::Enum(&[#(#members),*]))
            }
        };
        quote!(::ops_core::AttrInfo { name: #name, seed: #seed, kind: #kind, has_default: #has_default })
    });
    let mod_doc = format!("The `{op_name}` operator, generated from `{origin}`.");
    let builder_doc =
        format!("Builds a [`{desc}`]; outputs not given are inferred from the spec's shape rules.");

    quote! {
        #[doc = #mod_doc]
        pub mod #module {
            #![allow(clippy::all, dead_code, unused_imports, unused_variables, unused_mut, non_camel_case_types)]
            #(#enums)*

            #[doc = #docs]
            #[derive(Clone, Debug, PartialEq)]
            pub struct #desc {
                #( #[doc = #tensor_docs] pub #tensor_fields: #tensor_tys, )*
                #( #[doc = #attr_docs] pub #attr_fields: #attr_tys, )*
            }

            #[doc = #builder_doc]
            #[derive(Clone, Debug, Default)]
            pub struct #builder {
                #( #tensor_fields: ::core::option::Option<#tensor_tys>, )*
                #( #output_dtype_fields: ::core::option::Option<::ops_core::DataType>, )*
                #( #attr_fields: ::core::option::Option<#attr_tys>, )*
            }

            static STEPS: &[::ops_core::__private::expr::Step] = &[#(#steps),*];
            const SLOTS: usize = #slots;
            static TENSOR_NAMES: &[&str] = &[#(#tensor_names),*];
            static TABLE: ::ops_core::__private::support::SupportTable = ::ops_core::__private::support::SupportTable {
                operator: #op_name,
                selector: #selector,
                introduced: #introduced,
                entries: &[#(#entries),*],
                tensor_names: &[#(#tensor_names),*],
                seed_names: &[#(#seed_names),*],
            };
            const N_INPUTS: usize = #n_inputs;

            #compute_items

            impl #builder {
                #(#builder_tensor_setters)*
                #(#output_dtype_setters)*
                #(#attr_setters)*

                /// Builds the descriptor, inferring outputs that were not given.
                /// It is not validated: call `validate(level)`.
                pub fn build(self) -> ::core::result::Result<#desc, ::ops_core::OpError> {
                    #[derive(Clone, Copy)]
                    struct Dtypes { #( #output_dtype_fields: ::core::option::Option<::ops_core::DataType>, )* }
                    let self_dtypes = Dtypes { #( #output_dtype_fields: self.#output_dtype_fields, )* };
                    let mut __missing: ::std::vec::Vec<usize> = ::std::vec::Vec::new();
                    #(#input_takes)*
                    #(#output_takes)*
                    #(#attr_takes)*
                    let mut __d = #desc { #(#tensor_fields,)* #(#attr_fields,)* };
                    if !__missing.is_empty() {
                        let tensors = __d.__tensors();
                        let host = __d.__host_values();
                        let attrs = __d.__attrs();
                        let (inferred, __complete) = ::ops_core::__private::args::infer_outputs(#op_name, STEPS, SLOTS, &tensors, TENSOR_NAMES, &host, &attrs, &__missing, &TABLE, N_INPUTS);
                        for (__i, __sizes, __dt) in inferred {
                            #(#output_fix)*
                        }
                    }
                    ::core::result::Result::Ok(__d)
                }
            }

            impl #desc {
                /// A builder.
                pub fn builder() -> #builder {
                    #builder::default()
                }

                ::ops_core::__private::if_fuzz! {
                    /// A proptest strategy of valid calls of this operator: a
                    /// descriptor drawn from the support table and the rules
                    /// (every entry, level, data-type combination and rank),
                    /// valid at the case's level, with edge-value input data
                    /// (see [`::ops_core::fuzz`]).
                    pub fn valid_cases() -> ::ops_core::fuzz::ValidCases {
                        ::ops_core::fuzz::valid_cases(&INFO)
                    }

                    /// A proptest strategy of invalid descriptors of this
                    /// operator: a valid one with exactly one thing broken (a
                    /// data type, a rank, sizes, an attribute or the level),
                    /// remembering which (see [`::ops_core::fuzz`]).
                    pub fn invalid_cases() -> ::ops_core::fuzz::InvalidCases {
                        ::ops_core::fuzz::invalid_cases(&INFO)
                    }
                }

                fn __tensors(&self) -> [&::ops_core::TensorDesc; #n_tensors] {
                    [#(#desc_refs),*]
                }

                fn __host_values(&self) -> [::core::option::Option<::std::vec::Vec<i128>>; #n_tensors] {
                    [#(#host_values),*]
                }

                fn __attrs(&self) -> ::std::vec::Vec<::ops_core::__private::expr::Value> {
                    ::std::vec![#(#attr_values),*]
                }

                #[allow(dead_code)]
                fn __scalar_attrs(&self) -> ::std::vec::Vec<::ops_core::scalar::Value> {
                    ::std::vec![#(#scalar_values),*]
                }

                fn __env_list(&self, e: &::ops_core::__private::expr::Expr) -> ::core::result::Result<::std::vec::Vec<i128>, ::ops_core::OpError> {
                    let tensors = self.__tensors();
                    let host = self.__host_values();
                    let attrs = self.__attrs();
                    TABLE.check_input_ranks(::core::option::Option::None, #member, &tensors, N_INPUTS)?;
                    let mut env = ::ops_core::__private::expr::Env::new(&tensors, TENSOR_NAMES, &host, &attrs, SLOTS);
                    env.run_steps(#op_name, STEPS)?;
                    env.list(e).map_err(|e| ::ops_core::OpError::InvalidArgument(::std::format!("{}: {}", #op_name, e.0)))
                }

                fn __env_count(&self, e: &::ops_core::__private::expr::Expr) -> ::core::result::Result<usize, ::ops_core::OpError> {
                    let tensors = self.__tensors();
                    let host = self.__host_values();
                    let attrs = self.__attrs();
                    TABLE.check_input_ranks(::core::option::Option::None, #member, &tensors, N_INPUTS)?;
                    let mut env = ::ops_core::__private::expr::Env::new(&tensors, TENSOR_NAMES, &host, &attrs, SLOTS);
                    env.run_steps(#op_name, STEPS)?;
                    let v = env.int(e).map_err(|e| ::ops_core::OpError::InvalidArgument(::std::format!("{}: {}", #op_name, e.0)))?;
                    usize::try_from(v).map_err(|_| ::ops_core::OpError::InvalidArgument(::std::format!("{}: {} is not a valid count", #op_name, v)))
                }
            }

            static INFO: ::ops_core::OperatorInfo = ::ops_core::OperatorInfo {
                name: #op_name,
                instance: #instance,
                groups: &[#(#groups),*],
                namespace: #namespace,
                aliases: &[#(#aliases),*],
                inputs: &[#(#input_names),*],
                outputs: &[#(#output_names),*],
                introduced: #introduced,
                kernels: KERNELS,
                tensors: &[#(#tensor_infos),*],
                attrs: &[#(#attr_infos),*],
                table: &TABLE,
                rules: STEPS,
                strided_inputs: #strided_inputs,
                build: |args| {
                    let d = <#desc as ::ops_core::OperatorType>::from_args(args)?;
                    ::core::result::Result::Ok(::std::boxed::Box::new(d))
                },
            };

            impl ::ops_core::OperatorType for #desc {
                const INFO: &'static ::ops_core::OperatorInfo = &INFO;

                fn from_args(args: &::ops_core::OpArgs) -> ::core::result::Result<Self, ::ops_core::OpError> {
                    let mut b = #desc::builder();
                    #(#args_tensors)*
                    #(#args_output_dtypes)*
                    #(#args_attrs)*
                    b.build()
                }
            }

            impl #desc {
                /// The CPU computation at `__precision`: the answer
                /// (`Compute`) or the accuracy contract's yardstick.
                fn __run_cpu(&self, inputs: &[&::ops_core::HostTensor], __precision: ::ops_core::scalar::Precision) -> ::core::result::Result<::std::vec::Vec<::ops_core::HostTensor>, ::ops_core::OpError> {
                    ::ops_core::check_call(self, inputs)?;
                    #run_cpu
                }
            }

            impl ::ops_core::family::OpEnv for #desc {
                fn op_name(&self) -> &'static str {
                    #op_name
                }
                fn tensor(&self, i: usize) -> &::ops_core::TensorDesc {
                    self.__tensors()[i]
                }
                fn tensor_name(&self, i: usize) -> &'static str {
                    TENSOR_NAMES[i]
                }
                fn input_count(&self) -> usize {
                    N_INPUTS
                }
                fn count(&self, e: &::ops_core::__private::expr::Expr) -> ::core::result::Result<usize, ::ops_core::OpError> {
                    self.__env_count(e)
                }
                fn list(&self, e: &::ops_core::__private::expr::Expr) -> ::core::result::Result<::std::vec::Vec<i128>, ::ops_core::OpError> {
                    self.__env_list(e)
                }
                fn scalar_attr(&self, i: usize) -> ::ops_core::scalar::Value {
                    self.__scalar_attrs()[i]
                }
                fn scalar_attrs(&self) -> ::std::vec::Vec<::ops_core::scalar::Value> {
                    self.__scalar_attrs()
                }
                fn host(&self, i: usize) -> ::core::option::Option<&::ops_core::HostTensor> {
                    ::ops_core::Operator::host_input(self, i)
                }
            }

            impl ::ops_core::Operator for #desc {
                fn info(&self) -> &'static ::ops_core::OperatorInfo {
                    &INFO
                }

                fn validate(&self, level: ::ops_core::FeatureLevel) -> ::core::result::Result<(), ::ops_core::ValidationError> {
                    // An input rank beyond any the table admits first (the
                    // rules iterate over dimensions), the spec's rules next
                    // (they explain a shape that could not be inferred),
                    // then the level's table.
                    let tensors = self.__tensors();
                    INFO.check_layouts(&tensors)?;
                    TABLE.check_input_ranks(::core::option::Option::Some(level), #member, &tensors, N_INPUTS)?;
                    let host = self.__host_values();
                    let attrs = self.__attrs();
                    let mut env = ::ops_core::__private::expr::Env::new(&tensors, TENSOR_NAMES, &host, &attrs, SLOTS);
                    env.run_steps(#op_name, STEPS)?;
                    TABLE.check(level, #member, &tensors)
                }

                fn min_feature_level(&self) -> ::core::option::Option<::ops_core::FeatureLevel> {
                    #min_level
                }

                fn input_descs(&self) -> ::std::vec::Vec<::ops_core::TensorDesc> {
                    ::std::vec![#(#input_descs),*]
                }

                fn output_descs(&self) -> ::std::vec::Vec<::ops_core::TensorDesc> {
                    ::std::vec![#(#output_descs),*]
                }

                fn host_input(&self, i: usize) -> ::core::option::Option<&::ops_core::HostTensor> {
                    match i {
                        #(#host_input_arms)*
                        _ => ::core::option::Option::None,
                    }
                }

                fn run_cpu(&self, inputs: &[&::ops_core::HostTensor]) -> ::core::result::Result<::std::vec::Vec<::ops_core::HostTensor>, ::ops_core::OpError> {
                    self.__run_cpu(inputs, ::ops_core::scalar::Precision::Compute)
                }

                fn run_yardstick(&self, inputs: &[&::ops_core::HostTensor]) -> ::core::result::Result<::std::vec::Vec<::ops_core::HostTensor>, ::ops_core::OpError> {
                    self.__run_cpu(inputs, ::ops_core::scalar::Precision::Yardstick)
                }

                fn gpu_plan_for(&self, class: ::ops_core::DeviceClass) -> ::core::result::Result<::ops_core::GpuPlan, ::ops_core::OpError> {
                    #gpu_plan
                }

                fn index_error(&self, inputs: &[&::ops_core::HostTensor], check: usize, position: u64) -> ::ops_core::OpError {
                    #index_error
                }

                fn gpu_plan_variants(&self) -> ::core::result::Result<::std::vec::Vec<(::std::string::String, ::ops_core::GpuPlan)>, ::ops_core::OpError> {
                    #gpu_plan_variants
                }
                fn tolerance(&self) -> ::ops_core::Tolerance {
                    #tolerance
                }
                fn accuracy_domain(&self) -> ::core::option::Option<(f64, f64)> {
                    #domain
                }
                fn index_bounds(&self) -> ::std::vec::Vec<::ops_core::IndexBounds> {
                    #index_bounds
                }

            }
        }
        pub use #module::#desc;
    }
}

#[cfg(test)]
mod tests {
    use super::DocPaths;

    /// The descriptor page (the `#[doc]` of `{name}Desc`) of a spec, as the
    /// catalog of crate `ops` expands it (`paths`), else as `operator!`.
    fn page(src: &str, namespace: &str, examples: bool) -> String {
        let paths = DocPaths {
            items: "ops".into(),
            core: "ops".into(),
            namespace: namespace.into(),
        };
        let tokens =
            crate::codegen::expand_with("t.op", namespace, src, examples.then_some(&paths))
                .unwrap_or_else(|f| panic!("{:?}", f.diagnostics));
        let text = tokens.to_string();
        // The first `#[doc = "..."]` long enough to be the descriptor's.
        let start = text.find("# Tensor support").expect("a support table");
        let start = text[..start].rfind("doc = \"").unwrap() + 7;
        let end = start + text[start..].find("\"]").unwrap();
        text[start..end].replace("\\n", "\n").replace("\\\"", "\"")
    }

    const SPEC: &str = r#"
operator Scale {
    introduced 3.0
    input input: tensor "InputTensor"
    output output: tensor "OutputTensor"
    attr axes: u32[] "Axes"
    attr keep: bool = true "Keep"
    rules {
        let r = rank(input);
        require len(axes) >= 1 && all(j in 0..len(axes): axes[j] < r)
            => "Axes must name dimensions of the input";
        shape output = input.sizes => "same sizes";
    }
    support {
        level 3.0 ranks 1..=4 {
            input: FLOAT32 FLOAT16;
            output: FLOAT32 FLOAT16;
        }
    }
    compute elementwise {
        inputs: [input]
        output: output
        value: cast<T>(input)
        accuracy: exact
    }
}
"#;

    #[test]
    fn catalog_pages_carry_a_compiled_example() {
        let d = page(SPEC, "", true);
        // The earlier sections stay.
        for section in ["# Tensor support", "# Rules", "# Builder", "| `axes` |"] {
            assert!(d.contains(section), "{section} missing:\n{d}");
        }
        let example = &d[d.find("# Example").expect("an example section")..];
        assert!(!example.contains("```text"), "{example}");
        for line in [
            "use ops::{DataType, FeatureLevel, HostTensor, Operator, TensorDesc};",
            "use ops::ScaleDesc;",
            "    .input(TensorDesc::new(DataType::Float32, [2, 3]))",
            "    .output_dtype(DataType::Float32)",
            "    .axes([0])",
            "op.validate(FeatureLevel::new(3, 0))?;",
            "let out = op.run_cpu(&[&input])?;",
            "assert_eq!(out[0].sizes(), [2, 3]);",
            "assert_eq!(out[0].dtype(), DataType::Float32);",
        ] {
            assert!(example.contains(line), "{line} missing:\n{example}");
        }
        // An attribute left at its default is not set.
        assert!(!example.contains(".keep("), "{example}");
    }

    #[test]
    fn namespaced_pages_name_their_module() {
        let d = page(SPEC, "onnx", true);
        assert!(d.contains("use ops::onnx::ScaleDesc;"), "{d}");
    }

    #[test]
    fn operator_pages_keep_the_sketch() {
        let d = page(SPEC, "", false);
        assert!(!d.contains("# Example"), "{d}");
        assert!(d.contains("```text\nlet op = ScaleDesc::builder()\n    .input(input)\n    .output_dtype(DataType::...)\n    .axes(...)\n    .build()?;"), "{d}");
    }
}
