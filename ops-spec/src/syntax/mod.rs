//! Stage 1: spec text to a syntax tree with spans.

pub mod ast;
pub mod instances;
pub mod lexer;
pub mod parser;

pub use parser::parse_spec;
