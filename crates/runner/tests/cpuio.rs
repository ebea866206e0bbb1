//! fio's `cpuio` engine in a real run (`cpumode=noop`), against what fio 3.33 does with
//! `--name=c --ioengine=cpuio --cpuload=50 --runtime=1 --time_based`: ten cycles, each
//! 50 ms of spinning then 50 ms of sleep, counted as reads of no bytes (`total_ios` 10), and
//! half a CPU held. The CPU time is the job thread's own, measured on a loaded machine, so
//! it is checked within a wide band: between a quarter and 0.65 of the second.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, RunConfig};

#[test]
fn ten_cycles_of_fifty_milliseconds_hold_half_a_cpu_and_make_no_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let job = "[c]\nioengine=cpuio\ncpuload=50\nruntime=1\ntime_based\n";
    let job_file = parse_str(job, "cpuio.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), dir.path().into());
    let outcome = run(&job_file, &config).expect("run");
    let stats = &outcome.report.jobs[0].stats;
    let read = &stats.directions[0];
    assert_eq!((read.total_ios, read.io_bytes), (10, 0));
    let clat_ms = (read.clat.min() / 1_000_000, read.clat.max() / 1_000_000);
    assert!(clat_ms.0 >= 50 && clat_ms.1 < 100, "{clat_ms:?}");
    let cpu_ms = (stats.cpu.user + stats.cpu.system) / 1_000_000;
    assert!((250..650).contains(&cpu_ms), "{cpu_ms} ms of CPU");
    assert_eq!(std::fs::read_dir(dir.path()).expect("listing").count(), 0);
}

#[test]
fn qsort_mode_is_refused_in_one_line() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let job = "[q]\nioengine=cpuio\ncpuload=50\ncpumode=qsort\nruntime=1\ntime_based\n";
    let job_file = parse_str(job, "cpuio.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "noop".parse().expect("scheduler"), dir.path().into());
    let error = match run(&job_file, &config) {
        Ok(_) => panic!("qsort should be refused"),
        Err(error) => error.to_string(),
    };
    assert_eq!(
        error,
        "job q: ioengine=cpuio with cpumode=qsort runs only simulated: expected cpumode=noop, or a sim: device"
    );
}
