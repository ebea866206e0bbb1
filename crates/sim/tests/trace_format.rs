//! The trace of a simulated run as a whole: the same seed gives the same bytes, tracing
//! changes no decision, every JSON line is an object with the documented keys, every
//! request's life is complete (inserted, then merged or dispatched, then completed once), idle
//! windows open and close in pairs, and a set of small scenarios shows every kind of event.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::limit::Limits;
use ioslice_core::trace::{TraceFormat, TraceLog};
use ioslice_core::{RequestId, TraceEvent};
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::output::{render, OutputFormat};
use ioslice_sim::simulation::{run, run_traced, SimConfig};
use serde_json::Value;

/// Run `job` under `sched` on `device` with `seed` (group `g` limited to 1 MiB/s of reads
/// when `limited`) and keep its trace.
fn trace(job: &str, sched: &str, device: &str, seed: u64, limited: bool) -> TraceLog {
    common::trace(job, sched, device, seed, limited.then_some(1 << 20))
}

/// Scenarios that between them show every kind of event: (job, schedulers, device, limited).
const SCENARIOS: &[(&str, &[&str], &str, bool)] = &[
    // Three readers of interleaved zones of one file: merges, and queue merging.
    (
        "[global]\nfilename=/dev/sdb\nioengine=psync\ndirect=1\nrw=read\nbs=16k\nzonemode=strided\nzonesize=16k\nzoneskip=32k\nsize=1g\nruntime=1\ntime_based\n[reader]\nnumjobs=3\noffset_increment=16k\n",
        &["bfq", "cfq", "noop"],
        "sim:sata-7200",
        false,
    ),
    // A reader that submits four sequential requests at once: on the single queue they meet
    // in the elevator and merge.
    (
        "[global]\nioengine=libaio\niodepth=4\ndirect=1\nrw=read\nbs=16k\nsize=1g\nruntime=0.1\ntime_based\n[reader]\n",
        &["noop", "deadline"],
        "sim:sata-7200",
        false,
    ),
    // A seeky heavy reader that thinks 1 ms between requests and a sequential light one:
    // injection while bfq idles for the seeky one.
    (
        "[global]\nioengine=psync\ndirect=1\nruntime=0.3\ntime_based\nbs=4k\nsize=1g\n[seeky]\nrw=randread\nprio=0\nthinktime=1000\n[seq]\nrw=read\nprio=7\noffset=100g\n",
        &["bfq:low_latency=0,parallel=0", "anticipatory", "deadline"],
        "sim:sata-7200",
        false,
    ),
    // An RT and a BE reader sharing a limited group: holds, releases, outranked processes,
    // preemption.
    (
        "[global]\nrw=read\nbs=64k\nsize=1m\ndirect=1\nioengine=psync\ncgroup=g\n[be]\n[rt]\noffset=100g\nprioclass=1\n",
        &["anticipatory", "cfq", "bfq:parallel=0"],
        "sim:sata-7200",
        true,
    ),
    // Two weighted groups of random readers on flash: bfq lingers, cfq charges groups (and,
    // without group isolation, serves the seeky queues in the root group).
    (
        "[global]\nioengine=psync\ndirect=1\nruntime=0.05\ntime_based\nbs=4k\nsize=1g\nrw=randread\n[a]\ncgroup=a\ncgroup_weight=100\n[b]\ncgroup=b\ncgroup_weight=300\n",
        &["bfq", "cfq", "cfq:group_isolation=0"],
        "sim:ssd",
        false,
    ),
    // Random reads 32 deep with a 1 ms deadline: expired FIFO heads.
    (
        "[reader]\nrw=randread\nbs=4k\nsize=64m\nnumber_ios=200\ndirect=1\nioengine=libaio\niodepth=32\n",
        &["deadline:read_expire=1", "anticipatory:read_expire=1"],
        "sim:sata-7200",
        false,
    ),
];

/// Every scenario's trace, labelled.
fn all_traces() -> Vec<(String, TraceLog)> {
    let mut traces = Vec::new();
    for (job, schedulers, device, limited) in SCENARIOS {
        for sched in *schedulers {
            let label = format!("{sched} on {device}: {}", job.lines().last().unwrap_or(""));
            traces.push((label, trace(job, sched, device, 1, *limited)));
        }
    }
    traces
}

/// The keys of each event after `time_ns` and `event`, as `ioslice_core::trace::render`
/// documents them, separated by spaces.
fn documented_keys() -> BTreeMap<&'static str, String> {
    let request = "rq process group prio dir sync sector sectors";
    let table: &[(&str, String)] = &[
        ("insert", request.to_string()),
        ("merge", "rq into position".into()),
        ("coalesce", "into absorbed".into()),
        ("dispatch", format!("{request} merged")),
        (
            "complete",
            format!("{request} merged latency_ns service_ns error"),
        ),
        ("fifo_expired", "rq late_ns".into()),
        ("batch_start", "class start starved".into()),
        ("inject", "rq queue group holder holder_group".into()),
        ("slice_start", "queue group".into()),
        ("slice_timer", "queue group length_ns".into()),
        ("slice_end", "queue group reason dispatched".into()),
        (
            "budget_start",
            "queue group budget timeout_ns raising".into(),
        ),
        (
            "budget_end",
            "queue group reason service budget charged next_budget".into(),
        ),
        ("preempt", "queue group by by_group reason".into()),
        ("idle_start", "queue group kind window_ns".into()),
        ("idle_end", "queue group kind reason".into()),
        (
            "raise_start",
            "queue group kind coefficient duration_ns".into(),
        ),
        ("raise_end", "queue group kind reason".into()),
        (
            "group_start",
            "group class workload slice_ns resumed".into(),
        ),
        ("group_end", "group charge unit".into()),
        ("group_move", "queue group to".into()),
        ("hold", "rq process group dir bytes wait_ns".into()),
        ("release", "rq process group dir waited_ns".into()),
        ("outranked", "process outranked".into()),
        (
            "queue_merge",
            "process from from_group into into_group".into(),
        ),
        ("queue_split", "process from from_group".into()),
    ];
    table.iter().cloned().collect()
}

#[test]
fn the_same_seed_gives_the_same_trace_bytes() {
    let (job, schedulers, device, limited) = SCENARIOS[2];
    for sched in schedulers {
        let first = trace(job, sched, device, 7, limited);
        let second = trace(job, sched, device, 7, limited);
        for format in [TraceFormat::Text, TraceFormat::Json] {
            let (a, b) = (first.render(format), second.render(format));
            assert!(!a.is_empty());
            assert!(a == b, "{sched}: two runs with seed 7 differ ({format:?})");
        }
    }
    // Another seed starts the disk elsewhere: other times.
    let (job, _, device, limited) = SCENARIOS[1];
    let seeds = [1, 2].map(|seed| trace(job, "cfq", device, seed, limited));
    assert_ne!(
        seeds[0].render(TraceFormat::Text),
        seeds[1].render(TraceFormat::Text)
    );
}

#[test]
fn a_traced_run_reports_what_an_untraced_one_does() {
    for (job, schedulers, device, limited) in SCENARIOS {
        for sched in *schedulers {
            let job_file = parse_str(job, "trace.fio", &ParseOptions::default()).expect("job");
            let mut config = SimConfig::new(
                1,
                sched.parse().expect("sched"),
                device.parse().expect("device"),
            );
            if *limited {
                let limits = Limits {
                    read_bps: Some(1 << 20),
                    ..Limits::default()
                };
                config.run.group_limits = vec![("g".to_string(), limits)];
            }
            let plain = run(&job_file, &config).expect("runs");
            let traced = run_traced(&job_file, &config, &mut TraceLog::default()).expect("runs");
            assert_eq!(
                render(&plain.report, OutputFormat::Json),
                render(&traced.report, OutputFormat::Json),
                "{sched} on {device}"
            );
            assert_eq!(plain.elapsed, traced.elapsed, "{sched} on {device}");
        }
    }
}

#[test]
fn every_json_line_is_an_object_with_the_documented_keys() {
    let documented = documented_keys();
    let mut seen = BTreeSet::new();
    for (label, log) in all_traces() {
        let json = log.render(TraceFormat::Json);
        let text = log.render(TraceFormat::Text);
        assert_eq!(json.lines().count(), log.events.len(), "{label}");
        assert_eq!(text.lines().count(), log.events.len(), "{label}");
        let mut last_time = 0;
        for (line, (time, event)) in json.lines().zip(&log.events) {
            let value: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{label}: {e} in {line}"));
            let object = value
                .as_object()
                .unwrap_or_else(|| panic!("{label}: not an object: {line}"));
            let keys: Vec<&str> = object.keys().map(String::as_str).collect();
            let name = object["event"].as_str().expect("event is a string");
            assert_eq!(name, event.name(), "{label}");
            let expected = format!("time_ns event {}", documented[name]);
            assert_eq!(keys.join(" "), expected, "{label}: {line}");
            assert_eq!(object["time_ns"].as_u64(), Some(*time), "{label}: {line}");
            assert!(*time >= last_time, "{label}: time goes back at {line}");
            last_time = *time;
            seen.insert(name.to_string());
        }
    }
    let missing: Vec<&&str> = documented
        .keys()
        .filter(|name| !seen.contains(**name) && **name != "coalesce" && **name != "queue_split")
        .collect();
    assert!(missing.is_empty(), "kinds no scenario showed: {missing:?}");
}

#[test]
fn every_request_is_inserted_then_merged_or_dispatched_then_completed_once() {
    for (label, log) in all_traces() {
        let mut inserted = BTreeSet::new();
        let mut merged = BTreeSet::new();
        let mut dispatched = BTreeMap::new();
        let mut completed = BTreeSet::new();
        let mut held = BTreeSet::new();
        for (_, event) in &log.events {
            match event {
                TraceEvent::Insert { request } => assert!(inserted.insert(request.id), "{label}"),
                TraceEvent::Merge { request, into, .. } => {
                    assert!(
                        inserted.contains(request) && inserted.contains(into),
                        "{label}"
                    );
                    assert!(merged.insert(*request), "{label}");
                }
                TraceEvent::Hold { request, .. } => assert!(held.insert(*request), "{label}"),
                TraceEvent::Release { request, .. } => {
                    assert!(held.remove(request), "{label}: released unheld {request:?}")
                }
                TraceEvent::Dispatch { request, merged: n } => {
                    assert!(!merged.contains(&request.id), "{label}");
                    assert!(!held.contains(&request.id), "{label}: held yet dispatched");
                    assert!(dispatched.insert(request.id, *n).is_none(), "{label}");
                }
                TraceEvent::Complete {
                    request, merged: n, ..
                } => {
                    assert_eq!(dispatched.get(&request.id), Some(n), "{label}");
                    assert!(completed.insert(request.id), "{label}");
                }
                _ => {}
            }
        }
        let carried: u32 = dispatched.values().sum();
        assert_eq!(carried as usize, merged.len(), "{label}");
        let ids: BTreeSet<RequestId> = dispatched.keys().chain(&merged).copied().collect();
        assert_eq!(ids, inserted, "{label}");
        assert_eq!(completed.len(), dispatched.len(), "{label}");
    }
}

#[test]
fn idle_windows_budgets_and_slices_open_and_close_in_pairs() {
    for (label, log) in all_traces() {
        let mut idle: BTreeMap<String, usize> = BTreeMap::new();
        let mut service: Option<String> = None;
        for (_, event) in &log.events {
            match event {
                TraceEvent::IdleStart { queue, kind, .. } => {
                    let key = format!("{queue:?} {kind:?}");
                    let open = idle.entry(key).or_default();
                    assert_eq!(*open, 0, "{label}: {event:?} while open");
                    *open += 1;
                }
                TraceEvent::IdleEnd { queue, kind, .. } => {
                    let key = format!("{queue:?} {kind:?}");
                    let open = idle.entry(key).or_default();
                    assert_eq!(*open, 1, "{label}: {event:?} while none is open");
                    *open -= 1;
                }
                TraceEvent::SliceStart { queue } | TraceEvent::BudgetStart { queue, .. } => {
                    assert!(service.is_none(), "{label}: {event:?} during {service:?}");
                    service = Some(format!("{queue:?}"));
                }
                TraceEvent::SliceEnd { queue, .. } | TraceEvent::BudgetEnd { queue, .. } => {
                    assert_eq!(service.take(), Some(format!("{queue:?}")), "{label}");
                }
                _ => {}
            }
        }
    }
}
