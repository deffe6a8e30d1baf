//! WGSL kernels of the `gather_nd` pattern (being written).
