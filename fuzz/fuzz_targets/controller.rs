//! AFL++ target `controller`: see `harness::controller`.

#[allow(dead_code)]
#[path = "../src/harness.rs"]
mod harness;

fn main() {
    afl::fuzz!(|data: &[u8]| harness::controller(data));
}
