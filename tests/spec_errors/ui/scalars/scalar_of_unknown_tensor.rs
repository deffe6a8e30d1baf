ops_macros::operator!("scalar_of_unknown_tensor.op");

fn main() {}
