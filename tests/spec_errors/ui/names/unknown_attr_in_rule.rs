ops_macros::operator!("unknown_attr_in_rule.op");

fn main() {}
