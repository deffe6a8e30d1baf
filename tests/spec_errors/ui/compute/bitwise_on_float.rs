ops_macros::operator!("bitwise_on_float.op");

fn main() {}
