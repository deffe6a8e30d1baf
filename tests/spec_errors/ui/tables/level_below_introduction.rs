ops_macros::operator!("level_below_introduction.op");

fn main() {}
