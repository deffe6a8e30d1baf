ops_macros::operator!("unordered_levels.op");

fn main() {}
