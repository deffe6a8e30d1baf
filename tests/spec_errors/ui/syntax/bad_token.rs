ops_macros::operator!("bad_token.op");

fn main() {}
