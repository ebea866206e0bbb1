//! BFQ's low-latency heuristics on the simulated disk: an application that starts (a burst of
//! small dependent reads after more than 2 s without I/O) under eight greedy sequential readers
//! (`scenarios/bfq/startup-under-readers.fio`) completes at least five times faster with
//! `low_latency=1` than with `low_latency=0`, because its new queue is weight raised while the
//! readers, created together, form a large burst and are not.

mod common;

use ioslice_sim::simulation::SimOutcome;

fn startup(sched: &str) -> SimOutcome {
    common::run_scenario("bfq/startup-under-readers.fio", sched)
}

/// The application's start-up time (its job's runtime), in seconds.
fn app_seconds(outcome: &SimOutcome) -> f64 {
    let app = outcome
        .report
        .jobs
        .iter()
        .find(|job| job.description.name == "app")
        .expect("the app job");
    app.stats.runtime as f64 / 1e9
}

/// The readers' aggregate throughput over the run, MB/s.
fn readers_mb_per_s(outcome: &SimOutcome) -> f64 {
    let bytes: u64 = outcome
        .report
        .jobs
        .iter()
        .filter(|job| job.description.name == "reader")
        .flat_map(|job| job.stats.directions.iter().map(|d| d.io_bytes))
        .sum();
    bytes as f64 / 1e6 / 20.0
}

#[test]
fn an_application_starts_at_least_five_times_faster_with_low_latency() {
    let raised = startup("bfq");
    let plain = startup("bfq:low_latency=0");
    let (fast, slow) = (app_seconds(&raised), app_seconds(&plain));
    assert!(
        slow >= 5.0 * fast,
        "start-up {fast:.2} s with low_latency=1 against {slow:.2} s without"
    );
    // The price: the readers lose a little while the application is favoured, not their share.
    let (with, without) = (readers_mb_per_s(&raised), readers_mb_per_s(&plain));
    assert!(
        with >= 0.8 * without,
        "readers {with:.1} MB/s with low_latency=1 against {without:.1} MB/s without"
    );
}
