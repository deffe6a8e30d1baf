//! Case files.
