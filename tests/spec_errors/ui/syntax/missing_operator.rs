ops_macros::operator!("missing_operator.op");

fn main() {}
