ops_macros::operator!("many_mistakes_in_one_file.op");

fn main() {}
