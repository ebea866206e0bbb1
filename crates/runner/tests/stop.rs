//! Ending a real run early (SIGINT): once the stop is asked, every job thread stops
//! issuing, what is in flight completes, and each job reports exactly what it issued.

use std::time::{Duration, Instant};

use ioslice_core::StopSignal;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, RunConfig};

/// A 30 s writer at depth 8, two psync readers, and a reader that thinks for an hour
/// between requests (it must end at the stop, not an hour later).
const JOB: &str = "\
[global]
bs=4k
size=64m
runtime=30
time_based
[writer]
rw=randwrite
ioengine=io_uring
iodepth=8
[readers]
rw=randread
numjobs=2
[thinker]
rw=read
thinktime=3600000000
";

#[test]
fn a_stop_ends_every_job_and_accounts_for_every_request() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).expect("data file");
    file.set_len(64 << 20).expect("a sparse 64 MiB file");
    let job_file = parse_str(JOB, "stop.fio", &ParseOptions::default()).expect("job parses");
    for sched in ["noop", "bfq"] {
        let stop = StopSignal::new();
        let mut config = RunConfig::new(1, sched.parse().expect("scheduler"), path.clone());
        config.run.stop = stop.clone();
        let asker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            stop.set(2);
            Instant::now()
        });
        let outcome = run(&job_file, &config).expect("runs");
        let ended = Instant::now();
        let asked = asker.join().expect("asker");
        assert!(
            ended.duration_since(asked) < Duration::from_secs(1),
            "{sched}: ends within a second of the stop"
        );
        assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
        for job in &outcome.report.jobs {
            let stats = &job.stats;
            let name = &job.description.name;
            for (d, direction) in stats.directions.iter().enumerate() {
                assert_eq!(
                    direction.total_ios, stats.issued[d],
                    "{sched} {name}: issued = done"
                );
            }
            assert!(
                stats.runtime < 5_000_000_000,
                "{sched} {name}: ran {} ns",
                stats.runtime
            );
            assert!(
                stats.directions.iter().any(|d| d.total_ios > 0),
                "{sched} {name}: it ran"
            );
        }
    }
}
