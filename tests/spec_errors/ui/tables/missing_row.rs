ops_macros::operator!("missing_row.op");

fn main() {}
