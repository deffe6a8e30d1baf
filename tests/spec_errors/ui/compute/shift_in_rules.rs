ops_macros::operator!("shift_in_rules.op");

fn main() {}
