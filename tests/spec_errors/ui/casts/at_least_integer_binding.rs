ops_macros::operator!("at_least_integer_binding.op");

fn main() {}
