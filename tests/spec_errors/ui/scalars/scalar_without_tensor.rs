ops_macros::operator!("scalar_without_tensor.op");

fn main() {}
