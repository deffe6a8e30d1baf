ops_macros::operator!("at_least_in_a_fold.op");

fn main() {}
