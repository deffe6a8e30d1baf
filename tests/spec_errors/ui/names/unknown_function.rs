ops_macros::operator!("unknown_function.op");

fn main() {}
