ops_macros::operator!("result_needs_a_cast.op");

fn main() {}
