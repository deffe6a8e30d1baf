ops_macros::operator!("mismatched_types.op");

fn main() {}
