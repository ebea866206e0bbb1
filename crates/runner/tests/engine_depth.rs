//! The queue depth each engine gets in a real run, as fio gives it: the synchronous engines
//! one request at a time whatever `iodepth` says, `posixaio` more than one.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, RunConfig};

/// The depth buckets (1, 2, 4, 8, 16, 32, >=64) of 512 random 4 KiB reads with `engine` at
/// `iodepth=16`, and the engine's name in the report.
fn depths(engine: &str) -> ([u64; 7], String) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    std::fs::write(&path, vec![7u8; 8 << 20]).expect("data file");
    let text = format!(
        "[j]\nioengine={engine}\niodepth=16\nrw=randread\nbs=4k\nsize=8m\nnumber_ios=512\n"
    );
    let job_file = parse_str(&text, "depth.fio", &ParseOptions::default()).expect("parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), path);
    let outcome = run(&job_file, &config).expect("run");
    let job = &outcome.report.jobs[0];
    assert_eq!(job.stats.directions[0].total_ios, 512, "{engine}");
    (job.stats.depth_counts, job.description.ioengine.clone())
}

#[test]
fn synchronous_engines_keep_one_request_in_flight() {
    for engine in ["sync", "psync", "pvsync", "pvsync2", "mmap"] {
        let (counts, name) = depths(engine);
        assert_eq!(counts, [512, 0, 0, 0, 0, 0, 0], "{engine}");
        assert_eq!(name, engine);
    }
}

/// fio 3.33's `vsync` sends one request at a time too, but reaps them in batches and counts
/// up to `iodepth` in flight: on this job fio reports 1=0.195 %, 2=0.391 %, 4=0.781 %,
/// 8=1.563 %, 16=97.070 %, that is 1, 2, 4, 8 and 497 of the 512 submissions.
#[test]
fn vsync_reports_its_depth_as_fio_does() {
    let (counts, name) = depths("vsync");
    assert_eq!(counts, [1, 2, 4, 8, 497, 0, 0]);
    assert_eq!(name, "vsync");
}

#[test]
fn posixaio_keeps_more_than_one() {
    let (counts, name) = depths("posixaio");
    assert_eq!(name, "posixaio");
    assert!(counts[1..].iter().sum::<u64>() > 0, "{counts:?}");
    assert_eq!(counts[5..], [0, 0], "never past iodepth=16: {counts:?}");
}
