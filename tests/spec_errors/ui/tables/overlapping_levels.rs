ops_macros::operator!("overlapping_levels.op");

fn main() {}
