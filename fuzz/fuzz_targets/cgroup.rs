//! AFL++ target `cgroup`: see `harness::cgroup`.

#[allow(dead_code)]
#[path = "../src/harness.rs"]
mod harness;

fn main() {
    afl::fuzz!(|data: &[u8]| harness::cgroup(data));
}
