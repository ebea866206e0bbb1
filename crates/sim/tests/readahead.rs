//! Buffered sequential reads get the kernel's read-ahead: the device sees 128 KiB windows,
//! most reads are served from memory, and random or O_DIRECT reads are read as asked.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig, SimOutcome};

fn simulate(text: &str) -> SimOutcome {
    let job_file = parse_str(text, "readahead.fio", &ParseOptions::default()).expect("job parses");
    let config = SimConfig::new(
        3,
        "deadline".parse().expect("deadline"),
        "sim:sata-7200".parse().expect("sata"),
    );
    run(&job_file, &config).expect("simulation runs")
}

#[test]
fn a_buffered_sequential_reader_reads_whole_windows() {
    let outcome = simulate("[reader]\nrw=read\nbs=4k\nsize=4m\ndirect=0\n");
    let read = &outcome.report.jobs[0].stats.directions[0];
    assert_eq!(read.total_ios, 1024);
    let readahead = outcome.readahead;
    assert_eq!(readahead.submitted, readahead.completed);
    // The first read is read as asked; from the second on, 128 KiB windows cover the file.
    assert_eq!(readahead.submitted, (4 * 1024 - 4) / 128 + 1);
    let disk = &outcome.report.disk_util[0];
    assert_eq!(
        disk.ios[0] + disk.merges[0],
        1 + readahead.submitted,
        "one read plus the windows, some merged while queued"
    );
    assert!(
        readahead.hits > 900,
        "most reads are in memory when they come: {} hits",
        readahead.hits
    );
}

#[test]
fn buffered_random_and_direct_reads_are_read_as_asked() {
    let random = simulate("[reader]\nrw=randread\nbs=4k\nsize=4m\ndirect=0\nnumber_ios=200\n");
    assert_eq!(random.readahead.submitted, 0);
    assert_eq!(random.report.disk_util[0].ios[0], 200);
    let direct = simulate("[reader]\nrw=read\nbs=4k\nsize=1m\ndirect=1\n");
    assert_eq!(direct.readahead.submitted, 0);
    assert_eq!(direct.report.disk_util[0].ios[0], 256);
}

#[test]
fn read_ahead_makes_a_buffered_stream_faster_than_direct_4k_reads() {
    let buffered = simulate("[reader]\nrw=read\nbs=4k\nsize=16m\ndirect=0\n");
    let direct = simulate("[reader]\nrw=read\nbs=4k\nsize=16m\ndirect=1\n");
    let runtime = |outcome: &SimOutcome| outcome.report.jobs[0].stats.runtime;
    assert!(
        runtime(&buffered) * 2 < runtime(&direct),
        "buffered {} ns, direct {} ns",
        runtime(&buffered),
        runtime(&direct)
    );
}
