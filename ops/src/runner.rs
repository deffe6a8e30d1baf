//! Running case files.
