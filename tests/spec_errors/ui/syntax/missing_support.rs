ops_macros::operator!("missing_support.op");

fn main() {}
