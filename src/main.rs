//! The `toolwright` binary.

fn main() {
    println!("toolwright {}", env!("CARGO_PKG_VERSION"));
}
