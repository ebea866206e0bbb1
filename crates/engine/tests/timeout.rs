//! The I/O timeout: a request the device does not answer in time completes once with
//! `ETIMEDOUT`, counted; its slot no longer holds the queue depth; the device's late answer is
//! absorbed; and the engine goes on serving.

mod common;

use std::time::{Duration, Instant};

use common::{be, probed_engine, wait_until};

#[test]
fn a_request_the_device_does_not_answer_times_out_once_and_its_late_answer_is_absorbed() {
    // Depth 1: the second read is only dispatched because the first's slot was freed.
    let (builder, probe) = probed_engine(1);
    let timeout = Duration::from_millis(100);
    let engine = builder
        .scheduler("noop")
        .io_timeout(Some(timeout))
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(1, "/", be()).expect("root");
    probe.hold();
    let started = Instant::now();
    let first = client.read(0, 4096).wait().expect_err("the device stalls");
    assert_eq!(first.errno(), libc::ETIMEDOUT, "{first}");
    assert!(started.elapsed() >= timeout, "{:?}", started.elapsed());
    let second = client.read(4096, 4096).wait().expect_err("still stalled");
    assert_eq!(second.errno(), libc::ETIMEDOUT, "{second}");
    let stats = handle.stats();
    assert_eq!((stats.timed_out, stats.late_completions), (2, 0));
    assert_eq!(stats.in_flight, 0, "timed-out requests are not in flight");
    // The device answers at last: the next turn absorbs both answers, nothing completes
    // twice.
    probe.release();
    probe.fill(8192, &[7; 4096]);
    let third = client.read(8192, 4096).wait().expect("served again");
    assert_eq!(third.buffer.as_slice(), &[7; 4096][..]);
    assert_eq!(handle.stats().late_completions, 2);
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!(stats.totals.requests, 3);
    assert_eq!(stats.totals.errors, 2);
    assert_eq!((stats.timed_out, stats.late_completions), (2, 2));
    assert_eq!(stats.double_completions, 0);
    assert_eq!((stats.in_flight, stats.queued), (0, 0));
}

#[test]
fn without_a_timeout_a_stalled_request_waits_for_the_device() {
    let (builder, probe) = probed_engine(1);
    let engine = builder
        .scheduler("noop")
        .io_timeout(None)
        .start()
        .expect("engine starts");
    let handle = engine.handle();
    let client = handle.client(1, "/", be()).expect("root");
    probe.hold();
    let future = client.read(0, 4096);
    wait_until(|| handle.stats().in_flight == 1);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(handle.stats().timed_out, 0);
    probe.release();
    future.wait().expect("answered when the device answers");
    let stats = engine.shutdown().expect("clean shutdown");
    assert_eq!((stats.timed_out, stats.totals.errors), (0, 0));
}
