//! BFQ's stable merging on `sim:sata-7200`: sequential readers started together in one group
//! are merged into one queue once 600 ms old, while weight raising keeps idling from paying,
//! and the shared queue then serves their streams in turn, as Linux 6.18's bfq does on the
//! same disk model (four 64 KiB readers: 15.1 MB/s in the kernel, `docs/fidelity.md`).
//! Readers started apart, or in different groups, keep queues of their own.

mod common;

use ioslice_core::TraceEvent;

/// Four O_DIRECT sequential 64 KiB readers, each in a region of its own, for 5 s; `extra`
/// goes into each reader's section.
fn readers(extra: &str) -> String {
    let mut job = String::from(
        "[global]\nfilename=/dev/sdb\ndirect=1\nioengine=psync\nbs=64k\nrw=read\nsize=50g\nruntime=5\ntime_based\n",
    );
    for i in 0..4 {
        job.push_str(&format!(
            "[reader{i}]\noffset={}g\n{}",
            i * 100,
            extra.replace('#', &i.to_string())
        ));
    }
    job
}

/// The times of the queue merges in a run of `job` under `sched`, and its MB/s.
fn merges(job: &str, sched: &str) -> (Vec<f64>, f64) {
    let log = common::trace(job, sched, "sim:sata-7200", 1, None);
    let times = log
        .events
        .iter()
        .filter(|(_, event)| matches!(event, TraceEvent::QueueMerge { .. }))
        .map(|(time, _)| *time as f64 / 1e9)
        .collect();
    (times, common::trace_rate(&log, 5.0))
}

#[test]
fn readers_started_together_share_one_queue_after_600_ms() {
    let (times, rate) = merges(&readers(""), "bfq");
    assert_eq!(
        times.len(),
        3,
        "three queues merge into the first: {times:?}"
    );
    assert!(times.iter().all(|&t| (0.6..0.7).contains(&t)), "{times:?}");
    // One queue serving four streams in turn seeks between them, as the kernel's does.
    assert!(rate < 30.0, "{rate:.1} MB/s");
}

#[test]
fn without_raising_idling_pays_and_the_merges_are_dropped() {
    let (times, rate) = merges(&readers(""), "bfq:low_latency=0");
    assert!(times.is_empty(), "{times:?}");
    assert!(rate > 100.0, "{rate:.1} MB/s");
}

#[test]
fn readers_started_apart_or_in_other_groups_keep_their_queues() {
    let (apart, _) = merges(&readers("startdelay=#\n"), "bfq");
    assert!(apart.is_empty(), "{apart:?}");
    let (grouped, _) = merges(&readers("cgroup=g#\n"), "bfq");
    assert!(grouped.is_empty(), "{grouped:?}");
}
