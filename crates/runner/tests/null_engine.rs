//! `ioengine=null` in a real run: the job's requests never reach the engine (no system
//! call moves its data) and complete at once, up to its `iodepth` at a time; a reader in
//! the same run still goes through the engine as usual.

use std::sync::PoisonError;

use ioslice_core::TraceSink;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run_traced, RunConfig};

mod common;
use common::Shared;

/// A null job of 16384 random reads of 4 KiB, 8 at a time, and a reader of 64 reads.
const JOB: &str = "\
[global]
rw=randread
bs=4k
[n]
ioengine=null
size=64m
iodepth=8
[r]
ioengine=psync
size=256k
";

#[test]
fn null_requests_skip_the_engine_and_complete_at_once() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).expect("data file");
    file.set_len(64 << 20).expect("a sparse 64 MiB file");
    let job_file = parse_str(JOB, "null.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), path);
    let sink = Shared::default();
    let make = |_: Option<&str>| -> Box<dyn TraceSink + Send> { Box::new(sink.clone()) };
    let outcome = run_traced(&job_file, &config, Some(&make)).expect("run");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);

    let null = &outcome.report.jobs[0].stats;
    assert_eq!(null.issued[0], 16384);
    assert_eq!(null.directions[0].total_ios, 16384);
    assert_eq!(null.directions[0].io_bytes, 64 << 20);
    assert_eq!(null.directions[0].errors, 0);
    // No device to wait for: some 5 ms on an idle machine; a loaded one still far below 2 s.
    assert!(null.runtime < 2_000_000_000, "{} ns", null.runtime);
    // iodepth=8 honoured: up to 8 queued, never more.
    assert!(null.depth_counts[3] > 0, "{:?}", null.depth_counts);
    assert_eq!(null.depth_counts[4..], [0, 0, 0], "{:?}", null.depth_counts);

    let reader = &outcome.report.jobs[1].stats;
    assert_eq!(reader.directions[0].total_ios, 64);
    // Only the reader's requests reached the engine.
    let log = sink.0.lock().unwrap_or_else(PoisonError::into_inner);
    assert_eq!(log.count("insert"), 64);
    assert_eq!(log.count("complete"), log.count("dispatch"));
}
