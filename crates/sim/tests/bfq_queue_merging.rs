//! BFQ's early queue merging on the simulated disk: three processes reading one region in
//! interleaved 16 KiB zones (`scenarios/bfq/interleaved-readers.fio`) read sequentially
//! together. Without merging, each per-process queue looks like a stream with holes and BFQ
//! serves them one after another, seeking between them; merged into one queue their requests
//! are sorted into one stream, and BFQ moves what noop does, where the drive's read-ahead
//! serves the interleaved reads.

mod common;

/// Aggregate bandwidth of the readers, bytes per second of their runtime, and the share of
/// the least-served reader.
fn interleaved(sched: &str) -> (f64, f64) {
    let outcome = common::run_scenario("bfq/interleaved-readers.fio", sched);
    let rates = common::job_bytes_per_second(&outcome);
    let total: f64 = rates.iter().sum();
    let least = rates.iter().copied().fold(f64::INFINITY, f64::min);
    (total, least / total)
}

#[test]
fn interleaved_readers_are_merged_and_read_as_fast_as_under_noop() {
    let (noop, _) = interleaved("noop");
    for sched in ["bfq", "bfq:low_latency=0"] {
        let (bfq, least_share) = interleaved(sched);
        assert!(
            bfq >= 0.9 * noop,
            "{sched}: {:.1} MB/s against noop's {:.1}",
            bfq / 1e6,
            noop / 1e6
        );
        assert!(
            (least_share - 1.0 / 3.0).abs() < 0.02,
            "{sched}: the least-served reader has {least_share:.3} of the total"
        );
    }
}
