ops_macros::operator!("typed_literal_out_of_range.op");

fn main() {}
