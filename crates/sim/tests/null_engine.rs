//! fio's `null` engine in simulation: its requests pass the policy but not the device, so a
//! null job finishes far sooner than the disk could serve it, every request completed once,
//! and a reader sharing the run keeps its own figures.

mod common;

use common::{by_job, config, run_text, trace};

/// 4 KiB random reads of 64 MiB: 16384 requests.
const NULL_JOB: &str = "[n]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\niodepth=8\n";

/// A reader of the disk, five seconds long.
const READER: &str = "[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\nsize=64m\nruntime=5\n";

#[test]
fn a_null_job_completes_every_request_without_the_disk() {
    for sched in [
        "noop",
        "deadline",
        "anticipatory",
        "cfq",
        "bfq",
        "mq-deadline",
        "kyber",
    ] {
        let outcome = run_text(NULL_JOB, &config(sched, "sim:sata-7200", 1));
        assert_eq!(outcome.submitted, 16384, "{sched}");
        assert_eq!(outcome.completed, 16384, "{sched}");
        let job = &outcome.report.jobs[0];
        assert_eq!(job.stats.directions[0].total_ios, 16384, "{sched}");
        // The disk does some 180 random reads a second: 16384 would take 90 s.
        assert!(
            job.stats.runtime < 100_000_000,
            "{sched}: {} ns",
            job.stats.runtime
        );
        let disk = &outcome.report.disk_util[0];
        assert_eq!(disk.ios, [0, 0], "{sched}: the disk saw nothing");
    }
}

#[test]
fn a_null_job_alone_runs_at_its_own_cpu_cost() {
    let outcome = run_text(NULL_JOB, &config("noop", "sim:sata-7200", 1));
    // 107 ns a request on the job's thread, whatever its depth: 16384 in 1.75 ms.
    let job = &outcome.report.jobs[0];
    assert_eq!(job.stats.runtime, 16384 * 107);
    assert_eq!(job.stats.directions[0].io_bytes, 64 << 20);
    // iodepth=8 is honoured: the job keeps up to 8 in flight, never more.
    let depths = job.stats.depth_counts;
    assert!(depths[3] > 0, "{depths:?}");
    assert_eq!(depths[4..], [0, 0, 0], "{depths:?}");
}

#[test]
fn null_requests_pass_the_policy_and_complete_at_dispatch() {
    for sched in ["noop", "cfq", "bfq", "mq-deadline", "kyber"] {
        let log = trace(NULL_JOB, sched, "sim:sata-7200", 1, None);
        assert_eq!(log.count("insert"), 16384, "{sched}");
        assert_eq!(log.count("dispatch") + log.count("merge"), 16384, "{sched}");
        assert_eq!(log.count("complete"), log.count("dispatch"), "{sched}");
        let mut dispatched_at = std::collections::HashMap::new();
        for (at, event) in &log.events {
            match event {
                ioslice_core::trace::TraceEvent::Dispatch { request, .. } => {
                    dispatched_at.insert(request.id, *at);
                }
                ioslice_core::trace::TraceEvent::Complete { request, .. } => {
                    assert_eq!(dispatched_at.get(&request.id), Some(at), "{sched}");
                }
                _ => {}
            }
        }
    }
}

#[test]
fn a_reader_beside_a_null_job_keeps_its_figures() {
    for sched in ["noop", "cfq", "bfq", "mq-deadline", "kyber"] {
        let alone = run_text(READER, &config(sched, "sim:sata-7200", 1));
        let mixed = run_text(
            &format!("{READER}{NULL_JOB}"),
            &config(sched, "sim:sata-7200", 1),
        );
        let reader = |outcome: &ioslice_sim::simulation::SimOutcome| {
            let job = &outcome.report.jobs[0];
            (job.stats.directions[0].total_ios, job.stats.runtime)
        };
        assert_eq!(reader(&mixed), reader(&alone), "{sched}");
        assert_eq!(by_job(&mixed)["n"], (64 << 20, 16384), "{sched}");
        assert_eq!(
            mixed.report.disk_util[0].ios, alone.report.disk_util[0].ios,
            "{sched}: only the reader reaches the disk"
        );
    }
}
