//! Seed 003's sequential 4 KiB O_DIRECT writers (case 3) on `sim:ide-2004` with the drive's
//! write-back cache limited to one write segment (`write_segments=1`, the value of DiskSim's
//! validated Barracuda): deadline, which alternates the clients' writes, makes every write
//! wait for a destage of the other stream's segment, while cfq's time slices keep one stream
//! writing for a whole slice. And the bound that keeps the limit out of the preset's
//! default: with one write segment a single random 4 KiB writer gets a fraction of the
//! seed's one-client figure (4493 KB/s under cfq), since every write waits for a destage.

mod common;

use std::path::PathBuf;

use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig, SimOutcome};

const ONE_SEGMENT: &str = "sim:ide-2004:write_segments=1";

fn simulate(name: &str, sched: &str, clients: u32) -> SimOutcome {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/seed-003")
        .join(name);
    let mut job_file = parse_file(&path, &ParseOptions::default()).expect("scenario parses");
    for job in &mut job_file.jobs {
        job.numjobs = clients;
    }
    let config = SimConfig::new(
        1,
        sched.parse().expect("scheduler spec"),
        ONE_SEGMENT.parse().expect("device spec"),
    );
    run(&job_file, &config).expect("scenario runs")
}

/// Aggregate bandwidth, KB/s (1000 bytes).
fn aggregate(name: &str, sched: &str, clients: u32) -> f64 {
    let outcome = simulate(name, sched, clients);
    common::job_bytes_per_second(&outcome).iter().sum::<f64>() / 1000.0
}

const SEQUENTIAL_WRITERS: &str = "write-sequential-4k.fio";

#[test]
fn deadline_collapses_and_cfq_holds_with_one_write_segment() {
    let one = aggregate(SEQUENTIAL_WRITERS, "deadline", 1);
    let deadline = aggregate(SEQUENTIAL_WRITERS, "deadline", 8);
    let cfq = aggregate(SEQUENTIAL_WRITERS, "cfq", 8);
    assert!(deadline < one / 3.0, "deadline {deadline} against {one}");
    assert!((cfq - one).abs() < one * 0.1, "cfq {cfq} against {one}");
}

#[test]
fn one_write_segment_caps_a_random_writer_far_below_the_seeds_figure() {
    let random = aggregate("write-random-4k.fio", "cfq", 1);
    assert!(random < 4493.0 / 3.0, "random writer {random}");
}
