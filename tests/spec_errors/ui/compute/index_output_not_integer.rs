ops_macros::operator!("index_output_not_integer.op");

fn main() {}
