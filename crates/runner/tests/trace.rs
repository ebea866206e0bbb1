//! A real run traced: the engine records the same kinds of events as the simulator — every
//! request's insert, dispatch and completion, and the policy's slices, budgets, idling and
//! limits — on the real clock. Times are real, so the tests count events and check their
//! order, not their bytes.

use std::sync::PoisonError;

use ioslice_core::limit::Limits;
use ioslice_core::trace::TraceLog;
use ioslice_core::{Nanos, TraceEvent, TraceSink};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run_traced, RunConfig};

mod common;
use common::Shared;

/// Two readers of 64 reads of 4 KiB each, one at a time, in group `g`, far enough apart
/// (64 MiB) that bfq does not merge their queues as cooperators.
const JOB: &str = "\
[global]
ioengine=psync
rw=read
bs=4k
size=256k
cgroup=g
[a]
[b]
offset=64m
";

/// Run [`JOB`] for real on a temporary file under `sched`, with group `g` limited to
/// `rbps` if given, and return its trace.
fn traced_run(sched: &str, rbps: Option<u64>) -> TraceLog {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).expect("data file");
    file.set_len(128 << 20).expect("a sparse 128 MiB file");
    let job_file = parse_str(JOB, "trace.fio", &ParseOptions::default()).expect("job parses");
    let group_limits = rbps
        .map(|rate| {
            let limits = Limits {
                read_bps: Some(rate),
                ..Limits::default()
            };
            vec![("g".to_string(), limits)]
        })
        .unwrap_or_default();
    let mut config = RunConfig::new(1, sched.parse().expect("scheduler"), path);
    config.run.group_limits = group_limits;
    let sink = Shared::default();
    let make = |label: Option<&str>| -> Box<dyn TraceSink + Send> {
        assert_eq!(label, None, "one file, one engine, no label");
        Box::new(sink.clone())
    };
    let outcome = run_traced(&job_file, &config, Some(&make)).expect("run");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
    let log = sink
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    log
}

/// Every request inserted once, dispatched (or merged) once and completed once, in that
/// order, at times that never go back.
fn assert_complete_lives(sched: &str, log: &TraceLog) {
    let reads = 128;
    assert_eq!(log.count("insert"), reads, "{sched}");
    assert_eq!(log.count("dispatch") + log.count("merge"), reads, "{sched}");
    assert_eq!(log.count("complete"), log.count("dispatch"), "{sched}");
    let mut last = 0;
    for (time, event) in &log.events {
        assert!(*time >= last, "{sched}: {event:?} at {time} after {last}");
        last = *time;
    }
    let position = |name: &str, id: u64| {
        log.events.iter().position(|(_, event)| match event {
            TraceEvent::Insert { request } | TraceEvent::Dispatch { request, .. } => {
                event.name() == name && request.id.0 == id
            }
            TraceEvent::Complete { request, .. } => name == "complete" && request.id.0 == id,
            _ => false,
        })
    };
    for id in 0..reads as u64 {
        let (insert, dispatch, complete) = (
            position("insert", id),
            position("dispatch", id),
            position("complete", id),
        );
        assert!(insert.is_some(), "{sched}: request {id} never inserted");
        if dispatch.is_some() {
            assert!(
                insert < dispatch && dispatch < complete,
                "{sched}: request {id}"
            );
        }
    }
}

#[test]
fn a_real_run_under_cfq_traces_slices_and_idling() {
    let log = traced_run("cfq:slice_idle=8", None);
    assert_complete_lives("cfq", &log);
    for kind in ["group_start", "slice_start", "slice_end", "group_end"] {
        assert!(log.count(kind) >= 1, "cfq: no {kind}");
    }
    assert_eq!(log.count("slice_start"), log.count("slice_end"));
    // Each sequential reader is idled for between its reads.
    assert!(log.count("idle_start") >= 64, "{}", log.count("idle_start"));
    assert_eq!(log.count("idle_start"), log.count("idle_end"));
}

#[test]
fn a_real_run_under_bfq_traces_budgets() {
    let log = traced_run("bfq:parallel=0,low_latency=0", None);
    assert_complete_lives("bfq", &log);
    // The first reader's queue gets a budget; the second's is served in a budget of its own,
    // or injected while bfq idles for the first.
    assert!(log.count("budget_start") >= 1);
    assert!(log.count("budget_start") >= 2 || log.count("inject") >= 1);
    let open = log.count("budget_start") - log.count("budget_end");
    assert!(open <= 1, "at most the last budget is still open: {open}");
    assert_eq!(log.count("idle_start"), log.count("idle_end"));
}

#[test]
fn a_real_run_with_a_limited_group_traces_holds_and_releases() {
    // 512 KiB at 2 MiB/s: a burst of 200 KiB at once, then a 4 KiB read every 2 ms.
    let log = traced_run("deadline", Some(2 << 20));
    assert_complete_lives("deadline", &log);
    assert_eq!(log.count("hold"), 128);
    assert_eq!(log.count("release"), 128);
    let waited: Vec<Nanos> = log
        .named("release")
        .map(|event| match event {
            TraceEvent::Release { waited, .. } => *waited,
            _ => unreachable!(),
        })
        .collect();
    let limited = waited.iter().filter(|&&w| w > 1_000_000).count();
    assert!(limited >= 10, "reads wait for the limit: {waited:?}");
}
