//! The IOSpeed test in the simulator: simulated requests per second (one core) with 8
//! processes doing random 4 KiB I/O, one request each in flight, on `sim:null` (no latency),
//! under noop, deadline and bfq, with every job's statistics kept and with totals only
//! ([`Statistics`]), side by side.
//!
//!     cargo bench -p ioslice-sim --bench iospeed
//!
//! Each round runs every configuration once, statistics on and off in an order that
//! alternates between rounds, so load from elsewhere moves them alike; the table gives the
//! median over the rounds of requests per second and of the ratios taken within each round
//! (to noop, and statistics on to off). `IOSPEED_ROUNDS` sets the rounds (default 7).
//! Before timing, every configuration is checked to complete every request exactly once
//! with the same counts and bytes either way.
//!
//!     cargo bench -p ioslice-sim --bench iospeed -- --one randread bfq on 25000
//!
//! runs one configuration once, untimed, with the given requests per process, and prints
//! how many it simulated: what `bench/iospeed-instructions.sh` counts instructions over.

use std::collections::BTreeMap;
use std::time::Instant;

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::JobFile;
use ioslice_sim::simulation::{run_with_statistics, SimConfig, Statistics};

/// 8 synchronous processes of random 4 KiB I/O, `ios` requests each.
fn job(rw: &str, ios: u64) -> String {
    format!(
        "[global]\nioengine=psync\ndirect=1\nrw={rw}\nbs=4k\nsize=1g\nnumber_ios={ios}\n\n\
         [iospeed]\nnumjobs=8\n"
    )
}

fn parse_job(rw: &str, ios: u64) -> JobFile {
    parse_str(&job(rw, ios), "iospeed.fio", &ParseOptions::default()).expect("bench job parses")
}

/// `--one RW SCHED on|off REQUESTS`: one untimed run, for counting instructions.
fn one(args: &[String]) {
    let [rw, sched, on, ios] = args else {
        panic!("--one takes RW SCHED on|off REQUESTS");
    };
    let kept = match on.as_str() {
        "on" => Statistics::Detailed,
        "off" => Statistics::Totals,
        other => panic!("--one takes on or off, not '{other}'"),
    };
    let ios: u64 = ios.parse().expect("--one's REQUESTS is a whole number");
    let outcome =
        run_with_statistics(&parse_job(rw, ios), &config(sched), kept).expect("bench runs");
    println!("{rw} {sched} {on}: {} requests", outcome.submitted);
}

const SCHEDS: [&str; 3] = ["noop", "deadline", "bfq"];
const WORKLOADS: [&str; 2] = ["randread", "randwrite"];

fn config(sched: &str) -> SimConfig {
    SimConfig::new(
        1,
        sched.parse().expect("valid scheduler"),
        "sim:null".parse().expect("valid device"),
    )
}

/// Requests and bytes per job and direction: what both settings must agree on.
fn counts(job_file: &JobFile, sched: &str, kept: Statistics) -> Vec<(u64, u64)> {
    let outcome = run_with_statistics(job_file, &config(sched), kept).expect("bench runs");
    assert_eq!(
        outcome.completed, outcome.submitted,
        "{sched}: every request done"
    );
    assert_eq!(outcome.duplicate_completions, 0, "{sched}: none twice");
    outcome
        .report
        .jobs
        .iter()
        .flat_map(|job| job.stats.directions.iter())
        .map(|direction| (direction.total_ios, direction.io_bytes))
        .collect()
}

/// Simulated requests per second of one run.
fn rate(job_file: &JobFile, sched: &str, kept: Statistics) -> f64 {
    let start = Instant::now();
    let outcome = run_with_statistics(job_file, &config(sched), kept).expect("bench runs");
    outcome.submitted as f64 / start.elapsed().as_secs_f64()
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

type Runs = BTreeMap<(&'static str, &'static str, bool), Vec<f64>>;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--one") {
        one(&args[1..]);
        return;
    }
    let rounds: usize = std::env::var("IOSPEED_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(7)
        .max(1);
    let jobs: Vec<(&str, JobFile)> = WORKLOADS
        .iter()
        .map(|&rw| (rw, parse_job(rw, 25_000)))
        .collect();
    for (rw, job_file) in &jobs {
        for sched in SCHEDS {
            let detailed = counts(job_file, sched, Statistics::Detailed);
            let totals = counts(job_file, sched, Statistics::Totals);
            assert_eq!(detailed, totals, "{rw} {sched}: the same counts either way");
        }
    }
    let mut runs = Runs::new();
    for round in 0..rounds {
        let order = if round.is_multiple_of(2) {
            [true, false]
        } else {
            [false, true]
        };
        for (rw, job_file) in &jobs {
            for sched in SCHEDS {
                for on in order {
                    let kept = if on {
                        Statistics::Detailed
                    } else {
                        Statistics::Totals
                    };
                    let rate = rate(job_file, sched, kept);
                    runs.entry((*rw, sched, on)).or_default().push(rate);
                }
            }
        }
    }
    print(rounds, &runs);
}

fn print(rounds: usize, runs: &Runs) {
    println!("8 processes, 1 request in flight each, sim:null; median of {rounds} rounds");
    println!(
        "{:<10} {:<9} {:<6} {:>22} {:>8} {:>8}",
        "workload", "policy", "stats", "simulated requests/s", "× noop", "on/off"
    );
    let ratio =
        |a: &[f64], b: &[f64]| median(&a.iter().zip(b).map(|(a, b)| a / b).collect::<Vec<_>>());
    for rw in WORKLOADS {
        for sched in SCHEDS {
            for on in [true, false] {
                let these = &runs[&(rw, sched, on)];
                let noop = &runs[&(rw, "noop", on)];
                let off = &runs[&(rw, sched, false)];
                let on_off = if on {
                    format!("{:.3}", ratio(these, off))
                } else {
                    String::new()
                };
                println!(
                    "{:<10} {:<9} {:<6} {:>22.0} {:>8.3} {:>8}",
                    rw,
                    sched,
                    if on { "on" } else { "off" },
                    median(these),
                    ratio(these, noop),
                    on_off
                );
            }
        }
    }
}
