ops_macros::operator!("unknown_parameter.op");

fn main() {}
