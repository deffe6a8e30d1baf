ops_macros::operator!("missing_shape_rule.op");

fn main() {}
