ops_macros::operator!("missing_parameter.op");

fn main() {}
