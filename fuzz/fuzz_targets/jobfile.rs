//! AFL++ target `jobfile`: see `harness::jobfile`.

#[allow(dead_code)]
#[path = "../src/harness.rs"]
mod harness;

fn main() {
    afl::fuzz!(|data: &[u8]| harness::jobfile(data));
}
