//! Scheduled changes to the groups on a real run (`; ioslice-at:`, `RunSpec::group_changes`),
//! on a temporary file, traced: a group made during the run and a job moved into it (its
//! requests are charged to the old group until the move and to the new one after it, the
//! other job's never move), a limit given during the run to a group that had none, and a
//! removal while a job still runs in the group, which stops the run with an error naming the
//! line and the time. Times are real: the tests leave 100 ms around each change.

use std::sync::PoisonError;

use ioslice_core::limit::Limits;
use ioslice_core::trace::TraceLog;
use ioslice_core::{Nanos, TraceEvent, TraceSink};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::run_spec::{GroupAction, GroupChange};
use ioslice_runner::{run_traced, RunConfig, RunError, RunOutcome};

mod common;
use common::Shared;

const MS: Nanos = 1_000_000;

/// Two readers, `a` and `b`, of 4 KiB one at a time in group `g1` for 600 ms, far apart.
const READERS: &str = "\
[global]
ioengine=psync
rw=read
bs=4k
size=16m
time_based
runtime=600ms
cgroup=g1
[a]
[b]
offset=64m
";

fn change(at_ms: u64, group: &str, action: GroupAction) -> GroupChange {
    GroupChange {
        at: at_ms * MS,
        group: group.to_string(),
        action,
        weight: None,
        limits: None,
        origin: "job.fio:9".to_string(),
    }
}

/// Run `job` for real on a temporary file under `sched` with `changes`; its trace with the
/// outcome.
fn run(
    job: &str,
    sched: &str,
    changes: Vec<GroupChange>,
) -> (Result<RunOutcome, RunError>, TraceLog) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).expect("data file");
    file.set_len(128 << 20).expect("a sparse 128 MiB file");
    let job_file = parse_str(job, "job.fio", &ParseOptions::default()).expect("job parses");
    let mut config = RunConfig::new(1, sched.parse().expect("scheduler"), path);
    config.run.group_changes = changes;
    let sink = Shared::default();
    let make = |_: Option<&str>| -> Box<dyn TraceSink + Send> { Box::new(sink.clone()) };
    let outcome = run_traced(&job_file, &config, Some(&make));
    let log = sink
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    (outcome, log)
}

/// Each process's completions: (time, group id), in order.
fn completions(log: &TraceLog, process: u32) -> Vec<(Nanos, u32)> {
    log.events
        .iter()
        .filter_map(|(time, event)| match event {
            TraceEvent::Complete { request, .. } if request.process.0 == process => {
                Some((*time, request.group.0))
            }
            _ => None,
        })
        .collect()
}

/// At 200 ms `g2` is made with weight 500 and `b` moved into it: b's requests are g1's up to
/// then and g2's after (one switch, near 200 ms), a's are g1's throughout, and the report
/// lists g2 with the weight bfq gave it. Every request completes.
#[test]
fn a_job_moves_into_a_group_made_during_the_run() {
    let mut create = change(200, "g2", GroupAction::Create);
    create.weight = Some(500);
    let moved = change(200, "g2", GroupAction::Move { job: "b".into() });
    let (outcome, log) = run(READERS, "bfq", vec![create, moved]);
    let outcome = outcome.expect("the run");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
    assert_eq!(
        log.count("insert"),
        log.count("complete") + log.count("merge")
    );
    // The report charges b's I/O after the move to g2.
    let moves: Vec<Vec<&str>> = outcome
        .report
        .jobs
        .iter()
        .map(|job| job.stats.moves.iter().map(|m| m.group.as_str()).collect())
        .collect();
    assert_eq!(moves, vec![Vec::<&str>::new(), vec!["g2"]]);
    let g2 = outcome
        .report
        .cgroups
        .iter()
        .find(|group| group.path == "g2")
        .expect("g2 listed");
    assert_eq!((g2.weight, g2.weight_set), (Some(500), true));
    let processes: Vec<u32> = {
        let mut seen: Vec<u32> = log
            .events
            .iter()
            .filter_map(|(_, event)| match event {
                TraceEvent::Complete { request, .. } => Some(request.process.0),
                _ => None,
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        seen
    };
    assert_eq!(processes.len(), 2, "{processes:?}");
    let (a, b) = (
        completions(&log, processes[0]),
        completions(&log, processes[1]),
    );
    let g1 = a[0].1;
    assert!(a.iter().all(|&(_, group)| group == g1), "a stays in g1");
    let switch = b
        .iter()
        .position(|&(_, group)| group != g1)
        .expect("b moved");
    assert!(
        b[switch..].iter().all(|&(_, group)| group == b[switch].1),
        "b's requests after the move are all the new group's"
    );
    let moved_at = b[switch].0;
    assert!(
        (150 * MS..=400 * MS).contains(&moved_at),
        "b moved at {} ms, expected near 200",
        moved_at / MS
    );
    assert!(
        switch > 0 && b.len() > switch + 1,
        "{switch} of {}",
        b.len()
    );
}

/// A lone reader (for 800 ms) whose group had no limit is limited to 1 MiB/s at 300 ms:
/// from 500 ms to the end it reads no more than the limit allows from 300 ms (with its
/// 100 ms burst), where before the change it read several MiB. (The trace's clock starts
/// with the engine, a little before the run's: the windows leave 200 ms for it.)
#[test]
fn a_limit_given_during_the_run_holds_the_group_from_then() {
    let lone = READERS
        .replace("[b]\noffset=64m\n", "")
        .replace("runtime=600ms", "runtime=800ms");
    let mut limit = change(300, "g1", GroupAction::Set);
    limit.limits = Some(Limits {
        read_bps: Some(1 << 20),
        ..Limits::default()
    });
    let (outcome, log) = run(&lone, "deadline", vec![limit]);
    outcome.expect("the run");
    let bytes = |from: Nanos, to: Nanos| -> u64 {
        log.events
            .iter()
            .filter_map(|(time, event)| match event {
                TraceEvent::Complete { request, .. } if (from..to).contains(time) => {
                    Some(u64::from(request.sectors) * 512)
                }
                _ => None,
            })
            .sum()
    };
    let before = bytes(0, 250 * MS);
    let after = bytes(500 * MS, Nanos::MAX);
    assert!(before > 4 << 20, "{before} bytes before the limit");
    assert!(
        after <= (1 << 20) * 5 / 10 + (1 << 20) / 10 + 4096,
        "{after} bytes from 500 ms on, under 1 MiB/s from 300 ms"
    );
}

/// Removing `g1` at 100 ms while both readers run in it is refused as `rmdir` would be: the
/// run stops early and its error names the line, the time and why. A group whose job ended
/// (`a`, in `g0` for 100 ms) is removed at 300 ms while the other job runs on.
#[test]
fn removing_a_group_a_job_still_runs_in_stops_the_run() {
    let short = READERS.replace("[a]\n", "[a]\ncgroup=g0\nruntime=100ms\n");
    let (outcome, log) = run(&short, "cfq", vec![change(300, "g0", GroupAction::Remove)]);
    let outcome = outcome.expect("g0 is empty by then");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
    let last = log.events.last().map_or(0, |(time, _)| *time);
    assert!(last >= 500 * MS, "b ran on to {} ms", last / MS);
    let (outcome, _) = run(READERS, "cfq", vec![change(100, "g1", GroupAction::Remove)]);
    let error = outcome.expect_err("refused").to_string();
    assert!(
        error.starts_with("job.fio:9: at 100 ms: cgroup 'g1' is busy: job 'a' still runs in it"),
        "{error}"
    );
}

/// An `exec` job is in its group until it ends (its runtime, 200 ms, as fio's exec job
/// polls for the whole runtime): `gx` is busy at 100 ms (the removal refused, naming the
/// job) and empty at 600 ms (the removal made, while the reader runs on).
#[test]
fn an_exec_jobs_group_is_busy_until_the_job_ends() {
    let job = READERS.replace(
        "[a]\n[b]\noffset=64m\n",
        "runtime=800ms\n[a]\n[x]\ncgroup=gx\nruntime=200ms\nioengine=exec\nprogram=sleep\narguments=0.05\ngrace_time=0\nstd_redirect=0\n",
    );
    let (early, _) = run(&job, "cfq", vec![change(100, "gx", GroupAction::Remove)]);
    let error = early.expect_err("refused").to_string();
    assert!(
        error.starts_with("job.fio:9: at 100 ms: cgroup 'gx' is busy: job 'x' still runs in it"),
        "{error}"
    );
    let (late, _) = run(&job, "cfq", vec![change(600, "gx", GroupAction::Remove)]);
    let late = late.expect("gx is empty by then");
    assert!(late.failed_jobs.is_empty(), "{:?}", late.io_errors);
}
