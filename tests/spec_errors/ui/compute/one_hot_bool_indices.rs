ops_macros::operator!("one_hot_bool_indices.op");

fn main() {}
