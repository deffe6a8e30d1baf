//! Rebuilds the catalog when a spec file is added or removed (editing one is
//! tracked by the `include_bytes!` the macro emits).
fn main() {
    println!("cargo:rerun-if-changed=../specs");
}
