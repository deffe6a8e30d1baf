//! Stage 4: code generation. [`rust`] emits the descriptor, its builder,
//! validation and the `Operator` impl; [`compute`] the per-pattern glue and
//! the kernels (through [`crate::wgsl`]); [`exprs`] the rule trees;
//! [`example`] finds the values of each descriptor page's compiled example.

pub mod compute;
pub mod example;
pub mod exprs;
pub mod rust;

use proc_macro2::TokenStream;

use crate::check::{check_spec, Checked};
use crate::diag::{Diagnostic, Errors};
use crate::lower::lower_spec;
use crate::syntax::instances::instances;
use crate::syntax::parse_spec;

/// The result of expanding a spec that has mistakes.
#[derive(Debug)]
pub struct Failure {
    /// Every mistake found.
    pub diagnostics: Vec<Diagnostic>,
    /// The operator's name, when it could be read (for stub items).
    pub operator: Option<String>,
}

/// Runs the whole pipeline on one spec file: `origin` is the path shown in
/// messages and generated headers, `src` its text.
pub fn expand(origin: &str, src: &str) -> Result<TokenStream, Failure> {
    expand_in(origin, "", src)
}

/// [`expand`] for a spec of catalog namespace `namespace` (`""` for the
/// root folder, `"onnx"` for `specs/onnx/`): its `OperatorInfo::namespace`,
/// and the prefix of its kernel keys (`onnx::ArgMax/...`).
///
/// A spec with optional or variadic tensors expands into one operator per
/// instance ([`crate::syntax::instances`]); a mistake in any instance fails
/// the whole spec, each message once.
pub fn expand_in(origin: &str, namespace: &str, src: &str) -> Result<TokenStream, Failure> {
    expand_with(origin, namespace, src, None)
}

/// [`expand_in`] whose descriptor pages carry a compiled example (a
/// doctest, [`example`]) where the search finds one, with the generated
/// items at `paths` (`None`: the text sketch, as [`expand_in`] writes).
pub fn expand_with(
    origin: &str,
    namespace: &str,
    src: &str,
    paths: Option<&rust::DocPaths>,
) -> Result<TokenStream, Failure> {
    let mut errors = Errors::default();
    let (operator, checked) = checked_instances(src, &mut errors);
    let mut out = TokenStream::new();
    for checked in checked.into_iter().flatten() {
        let compute = compute::gen_compute_in(&checked, origin, namespace);
        out.extend(rust::gen_operator(
            &checked, origin, namespace, compute, paths,
        ));
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(Failure {
            diagnostics: errors.into_vec(),
            operator,
        })
    }
}

/// The base names of the Rust items a spec expands into (`{name}Desc`):
/// its operator name, or one per instance of a spec with optional or
/// variadic tensors (`Clip`, `ClipNoMin`, ...); empty when the spec cannot
/// be read.
pub fn operator_idents(src: &str) -> Vec<String> {
    let mut errors = Errors::default();
    let file = parse_spec(src, &mut errors);
    let Some(name) = file.name.as_ref().map(|n| n.text.clone()) else {
        return Vec::new();
    };
    instances(&file, &mut errors)
        .into_iter()
        .map(|i| format!("{name}{}", i.suffix))
        .collect()
}

/// Expands and, when it fails, renders every diagnostic against the file.
pub fn expand_rendered(
    origin: &str,
    src: &str,
) -> Result<TokenStream, (Vec<String>, Option<String>)> {
    expand_rendered_in(origin, "", src)
}

/// [`expand_rendered`] for a spec of catalog namespace `namespace` ([`expand_in`]).
pub fn expand_rendered_in(
    origin: &str,
    namespace: &str,
    src: &str,
) -> Result<TokenStream, (Vec<String>, Option<String>)> {
    expand_rendered_with(origin, namespace, src, None)
}

/// [`expand_rendered_in`] with compiled examples ([`expand_with`]).
pub fn expand_rendered_with(
    origin: &str,
    namespace: &str,
    src: &str,
    paths: Option<&rust::DocPaths>,
) -> Result<TokenStream, (Vec<String>, Option<String>)> {
    expand_with(origin, namespace, src, paths).map_err(|f| {
        (
            f.diagnostics
                .iter()
                .map(|d| d.render(origin, src))
                .collect(),
            f.operator,
        )
    })
}

/// Per instance of a spec (its base name, as [`operator_idents`]), the
/// compiled example its page carries, or `None` where the search finds none
/// and the page keeps the text sketch ([`example::find`]); empty when the
/// spec has mistakes.
pub fn examples(src: &str) -> Vec<(String, Option<example::Example>)> {
    let mut errors = Errors::default();
    let (_, checked) = checked_instances(src, &mut errors);
    if !errors.is_empty() {
        return Vec::new();
    }
    checked
        .iter()
        .flatten()
        .map(|checked| (checked.spec().ident(), example::find(checked.spec())))
        .collect()
}

/// The operator's name (when it could be read) and each instance of the
/// spec ([`instances`]) lowered and checked: `None` for an instance whose
/// mistakes, or the file's, are in `errors`. Lowering runs after syntax
/// errors too, to report every mistake at once; checking runs only on a
/// lowering without mistakes.
fn checked_instances(src: &str, errors: &mut Errors) -> (Option<String>, Vec<Option<Checked>>) {
    let file = parse_spec(src, errors);
    let operator = file.name.as_ref().map(|n| n.text.clone());
    let mut out = Vec::new();
    for inst in instances(&file, errors) {
        let mut errs = Errors::default();
        let lowered = lower_spec(&inst.file, src, &mut errs).map(|mut spec| {
            spec.suffix = inst.suffix.clone();
            spec.groups = inst.groups.clone();
            spec
        });
        let checked = match lowered {
            Some(spec) if errs.is_empty() && errors.is_empty() => check_spec(spec, &mut errs),
            _ => None,
        };
        let checked = checked.filter(|_| errs.is_empty() && errors.is_empty());
        for d in errs.into_vec() {
            errors.push(d);
        }
        out.push(checked);
    }
    (operator, out)
}
