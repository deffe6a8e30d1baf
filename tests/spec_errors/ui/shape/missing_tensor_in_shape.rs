ops_macros::operator!("missing_tensor_in_shape.op");

fn main() {}
