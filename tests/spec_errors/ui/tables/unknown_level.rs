ops_macros::operator!("unknown_level.op");

fn main() {}
