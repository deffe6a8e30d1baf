ops_macros::operator!("given_output_with_shape_rule.op");

fn main() {}
