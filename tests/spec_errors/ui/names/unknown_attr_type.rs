ops_macros::operator!("unknown_attr_type.op");

fn main() {}
