ops_macros::operator!("scalar_of_a_tensor_the_pattern_lacks.op");

fn main() {}
