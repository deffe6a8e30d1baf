//! Procedural macros of the `ops` framework: a thin shim over `ops-spec`.
//!
//! - `operator!("path/to/op.op")` expands one spec file into a module with
//!   its descriptor type (re-exported beside it).
//! - `catalog!("path/to/specs")` expands every `*.op` file of a folder, and
//!   those of each of its subfolders into a module of the subfolder's name
//!   (`specs/onnx/argmax.op` into `pub mod onnx { pub mod argmax {...} }`,
//!   namespace `"onnx"`), and a `catalog()` function listing them all, with
//!   a generated test (under `cfg(test)`) that every spec's rules agree with
//!   its pattern (`ops_core::fuzz::check_spec`).
//!
//! Paths are relative to the file that invokes the macro (falling back to
//! `CARGO_MANIFEST_DIR`). Every file read is `include_bytes!`-ed so that
//! editing a spec rebuilds. Mistakes in a spec become `compile_error!`s that
//! name the spec file, line and column, beside stub items so that one mistake
//! does not cascade.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{parse_macro_input, LitStr};

/// Expands one spec file. See the crate docs.
#[proc_macro]
pub fn operator(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let lit = parse_macro_input!(input as LitStr);
    let path = resolve(&lit.value());
    let (items, _) = expand_file(&path, "", lit.span(), false);
    items.into()
}

/// Expands every `*.op` file of a folder and of its subfolders (one module
/// per subfolder), plus `pub fn catalog()` and the generated test of its
/// specs.
#[proc_macro]
pub fn catalog(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let lit = parse_macro_input!(input as LitStr);
    let dir = resolve(&lit.value());
    let (files, folders) = match list_folder(&dir) {
        Ok(listing) => listing,
        Err(e) => {
            let msg = format!("cannot read the spec folder `{}`: {e}", dir.display());
            return quote::quote_spanned!(lit.span()=> ::core::compile_error!(#msg);).into();
        }
    };
    let mut out = TokenStream::new();
    let mut infos = Vec::new();
    for f in &files {
        let (items, names) = expand_file(f, "", lit.span(), true);
        out.extend(items);
        for name in names {
            let desc = format_ident!("{}Desc", name);
            infos.push(quote!(<#desc as ::ops_core::OperatorType>::INFO));
        }
    }
    for folder in &folders {
        let namespace = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let module = match syn::parse_str::<syn::Ident>(&namespace) {
            Ok(m) => m,
            Err(_) => {
                let msg = format!(
                    "spec folder `{}`: `{namespace}` is not a Rust module name",
                    folder.display()
                );
                out.extend(quote::quote_spanned!(lit.span()=> ::core::compile_error!(#msg);));
                continue;
            }
        };
        let files = match list_folder(folder) {
            Ok((files, _)) => files,
            Err(e) => {
                let msg = format!("cannot read the spec folder `{}`: {e}", folder.display());
                out.extend(quote::quote_spanned!(lit.span()=> ::core::compile_error!(#msg);));
                continue;
            }
        };
        let mut items = TokenStream::new();
        for f in &files {
            let (expanded, names) = expand_file(f, &namespace, lit.span(), true);
            items.extend(expanded);
            for name in names {
                let desc = format_ident!("{}Desc", name);
                infos.push(quote!(<#module::#desc as ::ops_core::OperatorType>::INFO));
            }
        }
        let doc = format!(
            "The operators of namespace `{namespace}` (`{}`), with the semantics of that standard.",
            display(folder)
        );
        out.extend(quote! {
            #[doc = #doc]
            pub mod #module {
                #items
            }
        });
    }
    out.extend(quote! {
        /// Every operator of the catalog: the root folder's in spec-file
        /// order, then each subfolder's (namespace) in name order.
        pub fn catalog() -> &'static [&'static ::ops_core::OperatorInfo] {
            static CATALOG: &[&::ops_core::OperatorInfo] = &[#(#infos),*];
            CATALOG
        }

        /// Generated tests of the catalog's specs.
        #[cfg(test)]
        mod __ops_catalog_tests {
            // Needs `ops-core`'s `fuzz` feature, as `valid_cases()` does.
            ::ops_core::__private::if_fuzz! {
                /// Every spec's rules agree with its pattern: descriptors that
                /// validate get a GPU plan and run on the CPU reference with
                /// outputs of the `shape` rules' sizes, or fail only as the
                /// spec documents (`ops_core::fuzz::check_spec`).
                #[test]
                fn shape_rules_agree_with_patterns() {
                    for info in super::catalog() {
                        if let ::core::result::Result::Err(e) = ::ops_core::fuzz::check_spec(info, 64) {
                            ::core::panic!("{}", e);
                        }
                    }
                }
            }
        }
    });
    out.into()
}

fn resolve(rel: &str) -> PathBuf {
    let rel = Path::new(rel);
    if rel.is_absolute() {
        return rel.to_path_buf();
    }
    let from_file = proc_macro::Span::call_site()
        .local_file()
        .and_then(|f| f.parent().map(|p| p.join(rel)));
    match from_file {
        Some(p) if p.exists() => p,
        _ => Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join(rel),
    }
}

fn display(path: &Path) -> String {
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Ok(cwd) = std::env::current_dir() {
        if let Ok(rel) = abs.strip_prefix(&cwd) {
            return rel.display().to_string();
        }
    }
    abs.display().to_string()
}

/// The `*.op` files and the subfolders of `dir`, each sorted.
fn list_folder(dir: &Path) -> std::io::Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut files = Vec::new();
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            folders.push(path);
        } else if path.extension().is_some_and(|e| e == "op") {
            files.push(path);
        }
    }
    files.sort();
    folders.sort();
    Ok((files, folders))
}

/// Expands one file of catalog namespace `namespace`; returns the items
/// and, when it succeeded, the base names of its descriptor types (one per
/// instance of a spec with optional or variadic tensors).
///
/// With `examples`, each descriptor page carries a compiled example where
/// the spec compiler finds one: a doctest that names the descriptor from the
/// invoking crate's root (`ops::onnx::SliceDesc`), as `catalog!` places it
/// when invoked there; `operator!`, which may expand anywhere, keeps the
/// text sketch.
fn expand_file(
    path: &Path,
    namespace: &str,
    span: Span,
    examples: bool,
) -> (TokenStream, Vec<String>) {
    let shown = display(path);
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            let msg = format!("cannot read spec file `{shown}`: {e}");
            return (
                quote::quote_spanned!(span=> ::core::compile_error!(#msg);),
                Vec::new(),
            );
        }
    };
    let abs = path
        .canonicalize()
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string();
    let track = quote!(
        const _: &[u8] = ::core::include_bytes!(#abs);
    );
    // Cargo names the crate being compiled to the compiler, and so to its
    // proc macros.
    let paths = std::env::var("CARGO_CRATE_NAME")
        .ok()
        .filter(|_| examples)
        .map(|krate| ops_spec::codegen::rust::DocPaths {
            // `ops` re-exports the core types; another crate reaches them
            // through `ops_core`.
            core: if krate == "ops" {
                krate.clone()
            } else {
                "ops_core".into()
            },
            items: krate,
            namespace: namespace.to_string(),
        });
    match ops_spec::codegen::expand_rendered_with(&shown, namespace, &src, paths.as_ref()) {
        Ok(items) => {
            let names = ops_spec::codegen::operator_idents(&src);
            (quote!(#track #items), names)
        }
        Err((messages, operator)) => {
            let errors = messages
                .iter()
                .map(|m| quote::quote_spanned!(span=> ::core::compile_error!(#m);));
            let stub = operator.map(|name| {
                let module = ops_spec::codegen::rust::module_ident(&name);
                let desc = format_ident!("{}Desc", name);
                quote! {
                    #[doc(hidden)]
                    pub mod #module {
                        /// Stub: the spec has errors.
                        pub struct #desc;
                    }
                    pub use #module::#desc;
                }
            });
            (quote!(#track #(#errors)* #stub), Vec::new())
        }
    }
}
