//! BFQ's parallel service on a simulated NVMe drive (`policy/bfq/parallel.rs`): eight groups
//! weighted 100…800 get their weight shares, where the kernel's one-queue-at-a-time BFQ
//! (`parallel=0`) loses the shares to injection.
//!
//! With one request in flight per reader, a reader cannot go faster than its round trip, and
//! the drive is far from busy: the shares can only be kept by holding the lighter readers back,
//! and the total is then the heaviest reader's rate times 3600/800 (4.5 readers' worth of
//! noop's 8). At depth 8 the drive is the bottleneck and BFQ keeps noop's throughput.

mod common;

/// Each group's bytes per second, g1 to g8.
fn group_rates(scenario: &str, sched: &str) -> Vec<f64> {
    common::job_bytes_per_second(&common::run_scenario_on(scenario, sched, "sim:nvme"))
}

/// The largest deviation of a group's share from its weight share, relative to it.
fn worst_share_error(rates: &[f64]) -> f64 {
    let total: f64 = rates.iter().sum();
    rates
        .iter()
        .enumerate()
        .map(|(i, rate)| {
            let expected = (i + 1) as f64 / 36.0;
            (rate / total - expected).abs() / expected
        })
        .fold(0.0, f64::max)
}

#[test]
fn one_request_readers_keep_their_weights_at_the_heaviest_readers_pace() {
    let scenario = "bfq/fast-device-psync-8groups.fio";
    let noop = group_rates(scenario, "noop");
    let bfq = group_rates(scenario, "bfq");
    let error = worst_share_error(&bfq);
    assert!(error < 0.02, "shares {:.1}% off: {bfq:?}", error * 100.0);
    // The heaviest reader goes as fast as a reader under noop.
    assert!(bfq[7] >= 0.98 * noop[7], "{bfq:?} against noop {noop:?}");
    let (total, noop_total): (f64, f64) = (bfq.iter().sum(), noop.iter().sum());
    assert!(
        total >= 0.98 * noop_total * 4.5 / 8.0,
        "{total} against noop's {noop_total}"
    );
    // The kernel's way, one queue in service, does not keep the weights here: while it idles
    // for a reader, blk-mq runs the queue at every other reader's submission, and injection
    // (which never slows the reader in service down on this drive) serves them all.
    let kernel = group_rates(scenario, "bfq:parallel=0");
    assert!(worst_share_error(&kernel) > 0.5, "{kernel:?}");
}

#[test]
fn deep_readers_keep_their_weights_and_noops_throughput() {
    let scenario = "bfq/fast-device-qd8-8groups.fio";
    let noop: f64 = group_rates(scenario, "noop").iter().sum();
    let bfq = group_rates(scenario, "bfq");
    let error = worst_share_error(&bfq);
    assert!(error < 0.02, "shares {:.1}% off: {bfq:?}", error * 100.0);
    assert!(
        bfq.iter().sum::<f64>() >= 0.99 * noop,
        "{bfq:?} against {noop}"
    );
}

#[test]
fn lead_keeps_the_shares() {
    for scenario in [
        "bfq/fast-device-psync-8groups.fio",
        "bfq/fast-device-qd8-8groups.fio",
    ] {
        let noop: f64 = group_rates(scenario, "noop").iter().sum();
        for sched in ["bfq:parallel_lead=0", "bfq:parallel_lead=64"] {
            let bfq = group_rates(scenario, sched);
            let error = worst_share_error(&bfq);
            assert!(
                error < 0.02,
                "{scenario} {sched}: shares {:.1}% off",
                error * 100.0
            );
            let share_of_noop = bfq.iter().sum::<f64>() / noop;
            assert!(share_of_noop > 0.5, "{scenario} {sched}: {share_of_noop}");
        }
    }
}

#[test]
fn only_readers_with_one_request_in_flight_take_a_lead() {
    // Readers at depth 8 get one only for their very first request (dispatched, on blk-mq,
    // before their second is submitted), whatever its size: the rates stay within 0.01 %.
    let scenario = "bfq/fast-device-qd8-8groups.fio";
    let without = group_rates(scenario, "bfq:parallel_lead=0");
    for sched in ["bfq", "bfq:parallel_lead=64"] {
        let with = group_rates(scenario, sched);
        for (a, b) in with.iter().zip(&without) {
            assert!(
                (a - b).abs() <= b * 1e-4,
                "{sched}: {with:?} against {without:?}"
            );
        }
    }
}
