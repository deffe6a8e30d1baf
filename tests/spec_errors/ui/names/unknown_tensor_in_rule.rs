ops_macros::operator!("unknown_tensor_in_rule.op");

fn main() {}
