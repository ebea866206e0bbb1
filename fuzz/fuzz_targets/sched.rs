//! AFL++ target `sched`: see `harness::sched_spec`.

#[allow(dead_code)]
#[path = "../src/harness.rs"]
mod harness;

fn main() {
    afl::fuzz!(|data: &[u8]| harness::sched_spec(data));
}
