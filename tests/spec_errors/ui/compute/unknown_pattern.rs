ops_macros::operator!("unknown_pattern.op");

fn main() {}
