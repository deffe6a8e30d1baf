//! The `gather_nd` pattern (being written).
