//! AFL++ target `device`: see `harness::device`.

#[allow(dead_code)]
#[path = "../src/harness.rs"]
mod harness;

fn main() {
    afl::fuzz!(|data: &[u8]| harness::device(data));
}
