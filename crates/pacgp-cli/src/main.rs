//! `pacgp` command-line tool.
fn main() {}
