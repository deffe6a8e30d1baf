ops_macros::operator!("empty_dtype_list.op");

fn main() {}
