ops_macros::operator!("unknown_cast_type.op");

fn main() {}
