ops_macros::operator!("unknown_item.op");

fn main() {}
