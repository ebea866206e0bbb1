//! What several simulator tests share: running a scenario from `scenarios/` under a scheduler
//! on a simulated device (`sim:sata-7200` unless told), checking that every request completed
//! exactly once. Each test file is its own crate and uses only part of this module.
#![allow(dead_code)]

pub mod round_disk;

use std::collections::BTreeMap;
use std::path::PathBuf;

use ioslice_core::limit::Limits;
use ioslice_core::trace::TraceLog;
use ioslice_fio::jobfile::{parse_file, parse_str, ParseOptions};
use ioslice_sim::simulation::{run, run_traced, SimConfig, SimError, SimOutcome};

/// Run `scenarios/<scenario>` with seed 1 under `sched` on `sim:sata-7200`.
pub fn run_scenario(scenario: &str, sched: &str) -> SimOutcome {
    run_scenario_on(scenario, sched, "sim:sata-7200")
}

/// Run `scenarios/<scenario>` with seed 1 under `sched` on `device`.
pub fn run_scenario_on(scenario: &str, sched: &str, device: &str) -> SimOutcome {
    run_scenario_with(scenario, sched, device, |_| {})
}

/// Run `scenarios/<scenario>` with seed 1 under `sched` on `device`, with the configuration
/// changed by `configure` first.
pub fn run_scenario_with(
    scenario: &str,
    sched: &str,
    device: &str,
    configure: impl FnOnce(&mut SimConfig),
) -> SimOutcome {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(scenario);
    let job_file = parse_file(&path, &ParseOptions::default()).expect("scenario parses");
    let mut config = SimConfig::new(
        1,
        sched.parse().expect("scheduler"),
        device.parse().expect("device"),
    );
    configure(&mut config);
    let outcome = run(&job_file, &config).expect("scenario runs");
    assert_eq!(
        outcome.submitted, outcome.completed,
        "{sched}: lost requests"
    );
    assert_eq!(outcome.duplicate_completions, 0, "{sched}");
    outcome
}

/// The longest runtime, in ms, of the jobs whose names start with `prefix` (seed 004's
/// ssh-like readers are `file1` to `file41`).
pub fn slowest_job_ms(outcome: &SimOutcome, prefix: &str) -> u64 {
    outcome
        .report
        .jobs
        .iter()
        .filter(|job| job.description.name.starts_with(prefix))
        .map(|job| job.stats.runtime / 1_000_000)
        .max()
        .expect("jobs of that name")
}

/// Bytes and requests of every job of each name (a job's clones together).
pub fn by_job(outcome: &SimOutcome) -> BTreeMap<String, (u64, u64)> {
    let mut totals = BTreeMap::new();
    for job in &outcome.report.jobs {
        let entry = totals.entry(job.description.name.clone()).or_insert((0, 0));
        for direction in &job.stats.directions {
            entry.0 += direction.io_bytes;
            entry.1 += direction.total_ios;
        }
    }
    totals
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

/// A configuration with `seed` for `sched` on `device`.
pub fn config(sched: &str, device: &str, seed: u64) -> SimConfig {
    SimConfig::new(
        seed,
        sched.parse().expect("scheduler"),
        device.parse().expect("device"),
    )
}

/// Run the job file text `job` with `config`; every request must complete exactly once.
pub fn run_text(job: &str, config: &SimConfig) -> SimOutcome {
    let job_file = parse_str(job, "job.fio", &ParseOptions::default()).expect("job parses");
    let outcome = run(&job_file, config).expect("job runs");
    let sched = &config.run.scheduler.name;
    assert_eq!(
        outcome.submitted, outcome.completed,
        "{sched}: lost requests"
    );
    assert_eq!(outcome.duplicate_completions, 0, "{sched}: duplicates");
    outcome
}

/// Run the job file text `job` under `sched` on `device` with `seed` (group `g` limited to
/// `rbps` bytes per second of reads, if given) and keep its trace; every request must complete.
pub fn trace(job: &str, sched: &str, device: &str, seed: u64, rbps: Option<u64>) -> TraceLog {
    let mut config = config(sched, device, seed);
    if let Some(rate) = rbps {
        let limits = Limits {
            read_bps: Some(rate),
            ..Limits::default()
        };
        config.run.group_limits = vec![("g".to_string(), limits)];
    }
    traced(job, &config).expect("job runs")
}

/// Run the job file text `job` (named `job.fio`) with `config` and keep its trace; a run
/// that ends must have completed every request exactly once.
pub fn traced(job: &str, config: &SimConfig) -> Result<TraceLog, SimError> {
    let job_file = parse_str(job, "job.fio", &ParseOptions::default()).expect("job parses");
    let mut log = TraceLog::default();
    let outcome = run_traced(&job_file, config, &mut log)?;
    let sched = &config.run.scheduler.name;
    assert_eq!(
        outcome.submitted, outcome.completed,
        "{sched}: lost requests"
    );
    assert_eq!(outcome.duplicate_completions, 0, "{sched}: duplicates");
    Ok(log)
}

/// MB/s (10^6 bytes a second) over `seconds`, from the completions in a trace.
pub fn trace_rate(log: &TraceLog, seconds: f64) -> f64 {
    let bytes: u64 = log
        .events
        .iter()
        .filter_map(|(_, event)| match event {
            ioslice_core::TraceEvent::Complete { request, .. } => {
                Some(u64::from(request.sectors) * 512)
            }
            _ => None,
        })
        .sum();
    bytes as f64 / seconds / 1e6
}
