//! AFL++ target `simulate`: see `harness::simulate`.

#[allow(dead_code)]
#[path = "../src/harness.rs"]
mod harness;

fn main() {
    afl::fuzz!(|data: &[u8]| harness::simulate(data));
}
