ops_macros::operator!("wrong_arity.op");

fn main() {}
