ops_macros::operator!("unterminated_string.op");

fn main() {}
