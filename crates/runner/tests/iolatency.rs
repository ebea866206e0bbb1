//! io.latency on a real run (`ioslice run --device FILE --cgroup NAME:latency=…`): the layer
//! runs in front of the engine as it does in the simulator. A target no real request can
//! meet (1 us) makes every window of the protected reader miss, so the greedy group's depth
//! is cut within the run, and every request still completes exactly once. Times are real,
//! so the test counts events, not their times.

use std::collections::BTreeMap;
use std::sync::PoisonError;

use ioslice_core::limit::Limits;
use ioslice_core::time::us;
use ioslice_core::{TraceEvent, TraceSink};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run_traced, RunConfig};

mod common;
use common::Shared;

/// A reader one request at a time and a greedy one 16 at a time, in groups of their own,
/// for 1.2 s: windows are 100 ms and scale events 500 ms apart, so two fit.
const JOB: &str = "\
[global]
ioengine=libaio
rw=randread
bs=4k
size=32m
runtime=1200ms
time_based
[protected]
cgroup=protected
iodepth=1
[greedy]
cgroup=greedy
iodepth=16
offset=64m
";

#[test]
fn a_missed_target_cuts_the_siblings_depth_on_a_real_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).expect("data file");
    file.set_len(128 << 20).expect("a sparse 128 MiB file");
    let job_file = parse_str(JOB, "iolatency.fio", &ParseOptions::default()).expect("job parses");
    let mut config = RunConfig::new(1, "none".parse().expect("scheduler"), path);
    let limits = Limits {
        latency: Some(us(1)),
        ..Limits::default()
    };
    config.run.group_limits = vec![("protected".to_string(), limits)];
    let sink = Shared::default();
    let make = |_: Option<&str>| -> Box<dyn TraceSink + Send> { Box::new(sink.clone()) };
    let outcome = run_traced(&job_file, &config, Some(&make)).expect("run");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
    let log = sink
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let greedy = log.groups.find("greedy").expect("greedy group");
    let depths: Vec<Option<u32>> = log
        .events
        .iter()
        .filter_map(|(_, event)| match event {
            TraceEvent::LatencyDepth { group, depth, .. } if *group == greedy => Some(*depth),
            _ => None,
        })
        .collect();
    // Halved from `nr_requests` (twice the file's queue depth, at most 256), then again.
    assert!(
        depths.len() >= 2 && depths[0].is_some_and(|d| d <= 128 && depths[1] == Some(d / 2)),
        "{depths:?}"
    );
    assert!(log.count("latency_scale") >= 2);
    // Every request inserted once and completed once.
    let mut lives: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
    for (_, event) in &log.events {
        match event {
            TraceEvent::Insert { request } => lives.entry(request.id.0).or_default().0 += 1,
            TraceEvent::Complete { request, .. } => lives.entry(request.id.0).or_default().1 += 1,
            _ => {}
        }
    }
    assert!(lives.len() > 100);
    assert!(
        lives.values().all(|&life| life == (1, 1)),
        "each request inserted and completed once"
    );
}
