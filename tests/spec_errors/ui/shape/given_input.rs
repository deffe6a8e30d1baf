ops_macros::operator!("given_input.op");

fn main() {}
