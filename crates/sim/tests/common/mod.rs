//! What several simulator tests share: running a scenario from `scenarios/` under a scheduler
//! on a simulated device (`sim:sata-7200` unless told), checking that every request completed
//! exactly once. Each test file is its own crate and uses only part of this module.
#![allow(dead_code)]

use std::path::PathBuf;

use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig, SimOutcome};

/// Run `scenarios/<scenario>` with seed 1 under `sched` on `sim:sata-7200`.
pub fn run_scenario(scenario: &str, sched: &str) -> SimOutcome {
    run_scenario_on(scenario, sched, "sim:sata-7200")
}

/// Run `scenarios/<scenario>` with seed 1 under `sched` on `device`.
pub fn run_scenario_on(scenario: &str, sched: &str, device: &str) -> SimOutcome {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(scenario);
    let job_file = parse_file(&path, &ParseOptions::default()).expect("scenario parses");
    let config = SimConfig::new(
        1,
        sched.parse().expect("scheduler"),
        device.parse().expect("device"),
    );
    let outcome = run(&job_file, &config).expect("scenario runs");
    assert_eq!(
        outcome.submitted, outcome.completed,
        "{sched}: lost requests"
    );
    assert_eq!(outcome.duplicate_completions, 0, "{sched}");
    outcome
}

/// Each job's bytes per second over its run time, reads and writes together, in job order.
pub fn job_bytes_per_second(outcome: &SimOutcome) -> Vec<f64> {
    outcome
        .report
        .jobs
        .iter()
        .map(|job| {
            let bytes: u64 = job.stats.directions.iter().map(|d| d.io_bytes).sum();
            let seconds = job.stats.runtime as f64 / 1e9;
            bytes as f64 / seconds.max(1e-9)
        })
        .collect()
}
