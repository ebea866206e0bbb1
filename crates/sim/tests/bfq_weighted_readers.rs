//! BFQ keeps cgroup weights between sequential readers on `sim:sata-7200` with its default
//! tunables, as the kernel's bfq does on the same disk model (`docs/fidelity.md`): weight
//! raising of the new queues does not flatten the shares or let injection interleave the
//! streams (the queue in service keeps the disk; the woken reader's next request arrives
//! before blk-mq's deferred queue run), and deep queues do not starve the lighter group.
//! Shares within 10 % of the weights' (relative), totals within 25 % of `low_latency=0`'s.

mod common;

/// Each group's share of the bytes, and the total MB/s.
fn shares(scenario: &str, sched: &str) -> (Vec<f64>, f64) {
    let outcome = common::run_scenario(scenario, sched);
    let rates = common::job_bytes_per_second(&outcome);
    let total: f64 = rates.iter().sum();
    (rates.iter().map(|r| r / total).collect(), total / 1e6)
}

fn assert_weighted(scenario: &str, weights: &[f64]) {
    let sum: f64 = weights.iter().sum();
    let (raised, raised_total) = shares(scenario, "bfq");
    let (_, plain_total) = shares(scenario, "bfq:low_latency=0");
    for (share, weight) in raised.iter().zip(weights) {
        let expected = weight / sum;
        assert!(
            (share - expected).abs() <= expected * 0.10,
            "{scenario}: shares {raised:?}, weights {weights:?}"
        );
    }
    assert!(
        raised_total >= plain_total * 0.75,
        "{scenario}: {raised_total:.1} MB/s with raising, {plain_total:.1} without"
    );
}

#[test]
fn two_raised_groups_keep_their_weights() {
    assert_weighted("bfq/weighted-readers-2-groups.fio", &[100.0, 500.0]);
}

#[test]
fn four_raised_groups_keep_their_weights_in_order() {
    assert_weighted(
        "bfq/weighted-readers-4-groups.fio",
        &[100.0, 300.0, 600.0, 1000.0],
    );
}

#[test]
fn deep_queues_keep_their_weights_without_raising() {
    let (shares, _) = shares("bfq/weighted-readers-deep.fio", "bfq:low_latency=0");
    assert!(
        (shares[0] - 0.2).abs() <= 0.02 && (shares[1] - 0.8).abs() <= 0.08,
        "{shares:?}"
    );
}
