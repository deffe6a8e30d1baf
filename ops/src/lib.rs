//! The `ops` operator catalog and the `ops` command's library.

pub mod case;
pub mod runner;

/// Every operator of the catalog (placeholder until the spec catalog is wired in).
pub fn catalog() -> &'static [&'static ops_core::OperatorInfo] {
    &[]
}
