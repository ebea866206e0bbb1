//! `sim:ide-2004` against seed 003's one-client figures (Jens Axboe's 2004 time-sliced CFQ
//! tests: one process, O_DIRECT, 30 s, ext2 on an IDE disk). The job files in
//! `scenarios/calibration/` state what each reproduces; each simulated figure must come
//! within ±15 % of the seed's. Only these one-client figures were used to calibrate the
//! preset; multi-client results must follow from the model.

use std::path::PathBuf;

use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig};

/// Run one calibration job on `sim:ide-2004` with noop and return its bandwidth in KiB/s.
fn kib_per_second(job: &str, direction: usize) -> f64 {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/calibration")
        .join(job);
    let job_file = parse_file(&path, &ParseOptions::default()).expect("calibration job parses");
    let config = SimConfig::new(
        1,
        "noop".parse().expect("noop is registered"),
        "sim:ide-2004".parse().expect("valid preset"),
    );
    let outcome = run(&job_file, &config).expect("calibration job runs");
    let stats = &outcome.report.jobs[0].stats;
    stats.directions[direction].io_bytes as f64 / 1024.0 / (stats.runtime as f64 * 1e-9)
}

fn assert_within_15_percent(job: &str, direction: usize, seed_kib: f64) {
    let simulated = kib_per_second(job, direction);
    let ratio = simulated / seed_kib;
    eprintln!(
        "{job}: {simulated:.0} KiB/s, seed 003 {seed_kib} KB/s ({:+.1} %)",
        (ratio - 1.0) * 100.0
    );
    assert!(
        (0.85..=1.15).contains(&ratio),
        "{job}: {simulated:.0} KiB/s against the seed's {seed_kib}"
    );
}

const READ: usize = 0;
const WRITE: usize = 1;

#[test]
fn sequential_4k_reads() {
    assert_within_15_percent("ide2004-seq-read-4k.fio", READ, 19837.0);
}

#[test]
fn random_64k_reads() {
    assert_within_15_percent("ide2004-rand-read-64k.fio", READ, 7042.0);
}

#[test]
fn sequential_4k_writes() {
    assert_within_15_percent("ide2004-seq-write-4k.fio", WRITE, 13406.0);
}

#[test]
fn random_4k_writes() {
    assert_within_15_percent("ide2004-rand-write-4k.fio", WRITE, 4493.0);
}
