ops_macros::operator!("rank_out_of_range.op");

fn main() {}
