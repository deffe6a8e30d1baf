ops_macros::operator!("unclosed_block.op");

fn main() {}
