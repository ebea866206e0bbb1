//! The arrangement of a kernel elevator on a loop device over `ioslice emulate`, in the
//! simulator: a 128-command driver queue in front of the device's own (`--host
//! driver_queue=128`). The elevator then hands every request over at once, and the device
//! gets them in arrival order: deadline's sorting, which gains on a disk without command
//! queueing, has nothing left to act on.

mod common;

/// Eight random readers at depth 4 on the 2004 IDE disk (no command queueing), 10 s.
const READERS: &str = "[global]\ndirect=1\nioengine=libaio\niodepth=4\nrw=randread\nbs=4k\n\
                       size=4g\nruntime=10\ntime_based\n[r]\nnumjobs=8\n";

/// Requests completed a second under `sched`, with a driver queue of `driver_queue`.
fn iops(sched: &str, driver_queue: usize) -> f64 {
    let mut config = common::config(sched, "sim:ide-2004", 1);
    config.driver_queue = driver_queue;
    common::run_text(READERS, &config).completed as f64 / 10.0
}

#[test]
fn a_deep_driver_queue_leaves_deadline_nothing_to_sort() {
    let noop = iops("noop", 0);
    let deadline = iops("deadline", 0);
    let deadline_behind_driver = iops("deadline", 128);
    // With the device's own depth of one, deadline sorts its queue: 7 % more than noop
    // (135.7 against 125.9 requests a second).
    assert!(deadline > noop * 1.05, "{deadline} against noop's {noop}");
    // Behind the driver queue its requests reach the disk in arrival order, as noop's do.
    let ratio = deadline_behind_driver / noop;
    assert!(
        (0.99..=1.01).contains(&ratio),
        "{deadline_behind_driver} against noop's {noop}"
    );
    // noop is first come first served either way.
    assert_eq!(iops("noop", 128), noop);
}
