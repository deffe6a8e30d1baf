pub mod wgsl;
