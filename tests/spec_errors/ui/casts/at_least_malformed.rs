ops_macros::operator!("at_least_malformed.op");

fn main() {}
