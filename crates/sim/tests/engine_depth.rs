//! The queue depth each engine gets in simulation, as fio gives it: its synchronous
//! (`FIO_SYNCIO`) engines one request at a time whatever `iodepth` says (fio prints "queue
//! depth will be capped at 1"), `posixaio` and the other asynchronous ones up to `iodepth`.
//! Measured with fio 3.33 on a 1 MiB file, `--iodepth=8 --rw=read --bs=4k`: sync, psync,
//! pvsync, pvsync2 and mmap reported `iodepth_level` 1=100%, posixaio spread over 1 to 8.
//! fio's `vsync` sends its requests one at a time too (with the default `iodepth_batch`,
//! one iovec per `readv`), but reaps them in batches, so its report counts the n-th request
//! at depth n until `iodepth` (1, 2, 4, 8 and 497 of 512 at `iodepth=16`, fio 3.33 on a
//! file); ioslice's report counts them the same.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig};

/// The depth buckets (1, 2, 4, 8, 16, 32, >=64) of one random-read job with `engine`.
fn depths(engine: &str) -> [u64; 7] {
    let text = format!(
        "[j]\nioengine={engine}\niodepth=16\nrw=randread\nbs=4k\nsize=64m\nnumber_ios=2000\ndirect=1\n"
    );
    let job_file = parse_str(&text, "depth.fio", &ParseOptions::default()).expect("parses");
    let config = SimConfig::new(
        7,
        "noop".parse().expect("noop"),
        "sim:ssd".parse().expect("device"),
    );
    let outcome = run(&job_file, &config).expect("runs");
    let job = &outcome.report.jobs[0];
    assert_eq!(job.description.ioengine, engine, "fio's name is kept");
    assert_eq!(job.stats.directions[0].total_ios, 2000, "{engine}");
    job.stats.depth_counts
}

#[test]
fn synchronous_engines_keep_one_request_in_flight() {
    for engine in ["sync", "psync", "pvsync", "pvsync2", "mmap"] {
        assert_eq!(depths(engine), [2000, 0, 0, 0, 0, 0, 0], "{engine}");
    }
}

#[test]
fn vsync_is_counted_at_the_depth_fio_reports() {
    assert_eq!(depths("vsync"), [1, 2, 4, 8, 1985, 0, 0]);
}

#[test]
fn posixaio_keeps_iodepth_in_flight() {
    let posixaio = depths("posixaio");
    assert_eq!(posixaio, depths("libaio"), "the same queue as libaio");
    assert!(posixaio[4] > 1900, "{posixaio:?}");
}
