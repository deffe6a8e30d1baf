//! WGSL kernels of the `scatter_elements` pattern (being written).
