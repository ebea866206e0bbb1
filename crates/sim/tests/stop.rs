//! Ending a simulation early (SIGINT): once the stop is asked, every job stops issuing,
//! everything issued completes exactly once, and the report covers what was done.

use std::time::{Duration, Instant};

use ioslice_core::StopSignal;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig};

/// Three jobs that would run for a simulated day: two readers at depth 8, and a writer
/// that thinks for an hour between requests (it must end at the stop, not an hour later).
const JOB: &str = "\
[global]
bs=4k
size=1g
direct=1
runtime=86400
time_based
[deep]
rw=randread
ioengine=libaio
iodepth=8
numjobs=2
[thinker]
rw=randwrite
thinktime=3600000000
";

#[test]
fn a_stop_ends_every_job_and_accounts_for_every_request() {
    let job_file = parse_str(JOB, "stop.fio", &ParseOptions::default()).expect("job parses");
    for sched in ["noop", "bfq", "cfq"] {
        let mut config = SimConfig::new(
            1,
            sched.parse().expect("scheduler"),
            "sim:ssd".parse().expect("device"),
        );
        let stop = StopSignal::new();
        config.run.stop = stop.clone();
        let asker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            stop.set(2);
            Instant::now()
        });
        let outcome = run(&job_file, &config).expect("runs");
        let ended = Instant::now();
        let asked = asker.join().expect("asker");
        assert!(
            ended.duration_since(asked) < Duration::from_secs(1),
            "{sched}: ends within a second"
        );
        assert_eq!(
            outcome.completed, outcome.submitted,
            "{sched}: every request completed"
        );
        assert_eq!(outcome.duplicate_completions, 0, "{sched}: none twice");
        let hour = 3_600_000_000_000;
        for job in &outcome.report.jobs {
            let stats = &job.stats;
            for (d, direction) in stats.directions.iter().enumerate() {
                assert_eq!(
                    direction.total_ios, stats.issued[d],
                    "{sched} {}: issued = done",
                    job.description.name
                );
            }
            assert!(
                stats.runtime < hour,
                "{sched} {}: stopped early, runtime {}",
                job.description.name,
                stats.runtime
            );
        }
        let deep = &outcome.report.jobs[0].stats;
        assert!(deep.directions[0].total_ios > 0, "{sched}: the readers ran");
    }
}
