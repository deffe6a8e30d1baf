ops_macros::operator!("tensor_used_as_value.op");

fn main() {}
