ops_macros::operator!("type_mismatch.op");

fn main() {}
