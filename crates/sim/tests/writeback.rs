//! Buffered writes go through the page cache: they return at once below the dirty limit,
//! a flusher writes them back as async requests, writers wait at the limit, and every
//! dirtied byte reaches the device by the end of the run.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::page_cache::PageCacheConfig;
use ioslice_sim::simulation::{run, SimConfig, SimOutcome};

/// 64 MiB of memory: the dirty limit is 6.4 MiB and the flusher starts at 3.2 MiB.
fn small_memory() -> PageCacheConfig {
    PageCacheConfig {
        memory_bytes: 64 << 20,
        ..PageCacheConfig::default()
    }
}

fn simulate(text: &str, page_cache: PageCacheConfig) -> SimOutcome {
    let job_file = parse_str(text, "writeback.fio", &ParseOptions::default()).expect("job parses");
    let mut config = SimConfig::new(
        7,
        "deadline".parse().expect("deadline"),
        "sim:sata-7200".parse().expect("sata"),
    );
    config.page_cache = page_cache;
    run(&job_file, &config).expect("simulation runs")
}

const WRITER: &str = "[writer]\nrw=write\nbs=1m\nsize=64m\ndirect=0\nioengine=psync\n";

#[test]
fn writes_below_the_background_threshold_return_at_once_and_are_written_at_the_end() {
    let outcome = simulate(
        "[writer]\nrw=write\nbs=1m\nsize=2m\ndirect=0\n",
        small_memory(),
    );
    let write = &outcome.report.jobs[0].stats.directions[1];
    assert_eq!(write.total_ios, 2);
    assert_eq!(write.clat.max(), 0, "copied into the cache, no device wait");
    let writeback = outcome.writeback;
    assert_eq!(writeback.bytes_dirtied, 2 << 20);
    assert_eq!(writeback.bytes_written, 2 << 20, "drained after the job");
    assert_eq!(writeback.submitted, 4, "two MiB in 512 KiB writes");
    assert_eq!(writeback.completed, writeback.submitted);
}

#[test]
fn a_writer_past_the_dirty_limit_waits_for_writeback() {
    let outcome = simulate(WRITER, small_memory());
    let write = &outcome.report.jobs[0].stats.directions[1];
    assert_eq!(write.total_ios, 64);
    assert!(
        write.clat.max() > 1_000_000,
        "some write waited for writeback: max clat {} ns",
        write.clat.max()
    );
    assert_eq!(outcome.writeback.bytes_written, 64 << 20);
    // The device wrote 64 MiB: its write count is the flusher's requests (merged or not).
    let disk = &outcome.report.disk_util[0];
    assert!(disk.ios[1] > 0 && disk.ios[1] <= outcome.writeback.submitted);
}

#[test]
fn rewriting_dirty_data_dirties_it_once() {
    let text = "[writer]\nrw=write\nbs=64k\nsize=1m\nloops=4\ndirect=0\n";
    let outcome = simulate(text, PageCacheConfig::default());
    assert_eq!(outcome.report.jobs[0].stats.directions[1].total_ios, 64);
    assert_eq!(outcome.writeback.bytes_dirtied, 1 << 20);
    assert_eq!(outcome.writeback.bytes_written, 1 << 20);
}

#[test]
fn direct_writes_bypass_the_cache() {
    let outcome = simulate(
        "[writer]\nrw=write\nbs=64k\nsize=1m\ndirect=1\n",
        PageCacheConfig::default(),
    );
    assert_eq!(outcome.writeback.submitted, 0);
    assert_eq!(outcome.report.disk_util[0].ios[1], 16);
}
