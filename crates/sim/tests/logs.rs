//! fio's log files from a simulation: every completed request of a job is an entry, after
//! its ramp, reproducible to the byte for a seed; a log that cannot be written is an error
//! naming it.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{config, run_text};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimOutcome};

const JOB: &str = "\
[global]
rw=randrw
bs=4k
size=16m
runtime=2
time_based
ramp_time=500ms
write_lat_log=j
write_bw_log=j
write_iops_log=j
write_hist_log=j
log_hist_msec=250
[reader]
[averaged]
ioengine=libaio
iodepth=4
log_avg_msec=200
";

/// Run `JOB` with `seed`, its logs in a fresh directory: the outcome and each log's text.
fn logged(seed: u64) -> (SimOutcome, BTreeMap<String, String>) {
    let dir = tempfile::tempdir().expect("scratch directory");
    let mut config = config("deadline", "sim:sata-7200", seed);
    config.run.logs = Some(dir.path().to_path_buf());
    let outcome = run_text(JOB, &config);
    (outcome, read_logs(dir.path()))
}

fn read_logs(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .expect("listing")
        .map(|entry| {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read_to_string(&path).expect("read"))
        })
        .collect()
}

/// The numbers of a value log's column `column`.
fn values(text: &str, column: usize) -> Vec<u64> {
    text.lines()
        .map(|line| {
            let field = line.split(", ").nth(column).expect("the column");
            field.parse().expect("a number")
        })
        .collect()
}

#[test]
fn the_same_seed_writes_the_same_bytes_and_another_seed_other_ones() {
    let (_, first) = logged(5);
    assert_eq!(first.len(), 12, "{:?}", first.keys());
    assert_eq!(first, logged(5).1);
    assert_ne!(first["j_clat.1.log"], logged(6).1["j_clat.1.log"]);
}

#[test]
fn every_request_after_the_ramp_is_an_entry_with_the_report_s_latencies() {
    let (outcome, logs) = logged(5);
    let reader = &outcome.report.jobs[0].stats;
    let clat = &logs["j_clat.1.log"];
    let total: u64 = reader.directions.iter().map(|d| d.total_ios).sum();
    assert_eq!(clat.lines().count() as u64, total);
    for (direction, stats) in reader.directions.iter().enumerate().take(2) {
        let latencies: Vec<u64> = clat
            .lines()
            .zip(values(clat, 2))
            .filter(|(_, d)| *d == direction as u64)
            .map(|(line, _)| values(line, 1)[0])
            .collect();
        assert_eq!(latencies.len() as u64, stats.total_ios);
        assert_eq!(latencies.iter().min().copied(), Some(stats.clat.min()));
        assert_eq!(latencies.iter().max().copied(), Some(stats.clat.max()));
    }
    // Times count from the ramp's end and stay within the runtime.
    let times = values(clat, 0);
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]));
    assert!(times.iter().all(|&t| t <= reader.runtime / 1_000_000));
    assert!(
        times[0] < 100,
        "the first completion after the ramp: {}",
        times[0]
    );
    // A simulated request has no submission latency; psync's is not logged at all.
    assert_eq!(logs["j_slat.1.log"], "");
    assert!(values(&logs["j_slat.2.log"], 1)
        .iter()
        .all(|&slat| slat == 0));
    assert_eq!(logs["j_lat.1.log"], logs["j_clat.1.log"]);
}

#[test]
fn averaged_logs_have_an_entry_per_window_and_direction() {
    let (outcome, logs) = logged(5);
    let averaged = &outcome.report.jobs[1].stats;
    let bw = &logs["j_bw.2.log"];
    // 2 s in 200 ms windows: 10 whole windows, each direction completing in each.
    assert_eq!(
        values(bw, 0),
        (1..=10)
            .flat_map(|w| [w * 200, w * 200])
            .collect::<Vec<_>>()
    );
    assert!(values(bw, 3).iter().all(|&bs| bs == 0));
    // The windows' bytes add up to the job's, but for the last, partial window's.
    let kib: u64 = values(bw, 1).iter().map(|rate| rate * 200 / 1000).sum();
    let total_kib = averaged.directions.iter().map(|d| d.io_bytes).sum::<u64>() / 1024;
    assert!(
        kib <= total_kib && kib * 10 > total_kib * 9,
        "{kib} of {total_kib} KiB"
    );
    let hist = &logs["j_clat_hist.2.log"];
    let counted: u64 = hist
        .lines()
        .map(|line| {
            line.split(", ")
                .skip(3)
                .map(|n| n.parse::<u64>().expect("count"))
                .sum::<u64>()
        })
        .sum();
    let total: u64 = averaged.directions.iter().map(|d| d.total_ios).sum();
    assert!(
        counted <= total && counted * 10 > total * 8,
        "{counted} of {total}"
    );
}

#[test]
fn a_log_that_cannot_be_created_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("scratch directory");
    let mut config = config("noop", "sim:null", 1);
    config.run.logs = Some(dir.path().join("missing"));
    let job_file = parse_str(JOB, "job.fio", &ParseOptions::default()).expect("parses");
    let error = run(&job_file, &config)
        .expect_err("no such directory")
        .to_string();
    assert!(error.contains("missing/j_bw.1.log"), "{error}");
}
