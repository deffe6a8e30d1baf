ops_macros::operator!("bad_ties_value.op");

fn main() {}
