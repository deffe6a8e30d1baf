//! The `scatter_elements` pattern (being written).
