ops_macros::operator!("cast_to_float64.op");

fn main() {}
