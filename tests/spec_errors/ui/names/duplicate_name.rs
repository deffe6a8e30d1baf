ops_macros::operator!("duplicate_name.op");

fn main() {}
