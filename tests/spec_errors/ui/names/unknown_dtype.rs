ops_macros::operator!("unknown_dtype.op");

fn main() {}
