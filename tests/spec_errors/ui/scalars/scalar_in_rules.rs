ops_macros::operator!("scalar_in_rules.op");

fn main() {}
