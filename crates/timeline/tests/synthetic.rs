//! The recorder on hand-written event sequences: each policy's events land on the lane and
//! as the mark they should, with exact spans and labels.

use ioslice_core::trace::{
    BatchClass, BatchStart, ChargeUnit, IdleEnd, IdleKind, PreemptReason, QueueRef, RaiseEnd,
    RaiseKind, ServiceEnd, TraceEvent, Workload,
};
use ioslice_core::{
    Direction, GroupId, GroupTree, IoPriority, Nanos, PriorityClass, ProcessId, RequestId,
    TraceSink,
};
use ioslice_timeline::{LaneKind, Mark, Timeline, TimelineRecorder};

mod common;
use common::{complete, dispatch, MS};

fn queue(process: u32) -> QueueRef {
    QueueRef {
        process: Some(ProcessId(process)),
        group: GroupId::ROOT,
        priority: IoPriority::default(),
    }
}

fn record(names: &[&str], events: &[(Nanos, TraceEvent)]) -> Timeline {
    record_in(&GroupTree::default(), names, events)
}

fn record_in(groups: &GroupTree, names: &[&str], events: &[(Nanos, TraceEvent)]) -> Timeline {
    let mut recorder = TimelineRecorder::new(names.iter().map(|name| name.to_string()).collect());
    recorder.start(groups);
    for (time, event) in events {
        recorder.record(*time, event);
    }
    recorder.finish()
}

/// The marks of a lane as (start, end, kind, label).
fn marks_of(timeline: &Timeline, lane: &str) -> Vec<(Nanos, Nanos, String, String)> {
    let index = timeline.lane_named(lane).expect("the lane exists");
    timeline
        .marks_on(index)
        .map(|mark: &Mark| (mark.start, mark.end, mark.kind.clone(), mark.label.clone()))
        .collect()
}

fn span(start: Nanos, end: Nanos, kind: &str, label: &str) -> (Nanos, Nanos, String, String) {
    (start, end, kind.to_string(), label.to_string())
}

#[test]
fn requests_back_to_back_are_one_span_with_their_count() {
    let timeline = record(
        &["a", "b"],
        &[
            (0, dispatch(1, 1)),
            (4 * MS, complete(1, 1)),
            (4 * MS + 20_000, dispatch(2, 1)),
            (8 * MS, complete(2, 1)),
            (8 * MS, dispatch(3, 2)),
            (12 * MS, complete(3, 2)),
            (12 * MS, dispatch(4, 1)),
            (16 * MS, complete(4, 1)),
        ],
    );
    assert_eq!(timeline.duration, 16 * MS);
    assert_eq!(
        marks_of(&timeline, "a"),
        vec![
            span(
                0,
                8 * MS,
                "service",
                "2 requests over 8.00 ms from 0.000000 s, covering 99% of it (merged across \
                 gaps below 250 µs): read 2"
            ),
            span(
                12 * MS,
                16 * MS,
                "service",
                "request 4 of p1: read of 8 sectors at sector 32, 4.00 ms at the device"
            ),
        ]
    );
    assert_eq!(
        marks_of(&timeline, "b"),
        vec![span(
            8 * MS,
            12 * MS,
            "service",
            "request 3 of p2: read of 8 sectors at sector 24, 4.00 ms at the device"
        )]
    );
    let merged = &timeline.marks[0];
    assert_eq!((merged.count, merged.coverage), (2, 997));
}

#[test]
fn overlapping_requests_of_a_lane_are_one_busy_period() {
    let timeline = record(
        &["a"],
        &[
            (0, dispatch(1, 1)),
            (MS, dispatch(2, 1)),
            (3 * MS, complete(1, 1)),
            (5 * MS, complete(2, 1)),
        ],
    );
    assert_eq!(
        marks_of(&timeline, "a"),
        vec![span(
            0,
            5 * MS,
            "service",
            "2 requests over 5.00 ms from 0.000000 s, back to back: read 2"
        )]
    );
}

#[test]
fn deadline_batches_and_expiries_land_on_the_device() {
    // Marks of one start sort by lane, then kind: the batch before the expiry.
    let timeline = record(
        &["a"],
        &[
            (
                0,
                TraceEvent::BatchStart {
                    class: BatchClass::Read,
                    start: BatchStart::FifoHead,
                    starved: false,
                },
            ),
            (0, dispatch(1, 1)),
            (5 * MS, complete(1, 1)),
            (
                5 * MS,
                TraceEvent::FifoExpired {
                    request: RequestId(9),
                    late: 2 * MS,
                },
            ),
            (
                5 * MS,
                TraceEvent::BatchStart {
                    class: BatchClass::Write,
                    start: BatchStart::Expired,
                    starved: true,
                },
            ),
            (5 * MS, dispatch(2, 1)),
            (9 * MS, complete(2, 1)),
        ],
    );
    assert_eq!(timeline.lanes[0].kind, LaneKind::Device);
    assert_eq!(
        marks_of(&timeline, "device"),
        vec![
            span(
                0,
                5 * MS,
                "batch",
                "read batch from the FIFO head: 1 request dispatched over 5.00 ms"
            ),
            span(
                5 * MS,
                9 * MS,
                "batch",
                "write batch from an expired FIFO head (forced: writes starved): 1 request \
                 dispatched over 4.00 ms"
            ),
            span(
                5 * MS,
                5 * MS,
                "fifo_expired",
                "FIFO expired: request 9 served 2.00 ms past its deadline"
            ),
        ]
    );
}

#[test]
fn anticipation_and_idle_windows_land_on_the_waited_for_queue() {
    let idle = |time, kind, window| {
        (
            time,
            TraceEvent::IdleStart {
                queue: queue(2),
                kind,
                window,
            },
        )
    };
    let end = |time, kind, reason| {
        (
            time,
            TraceEvent::IdleEnd {
                queue: queue(2),
                kind,
                reason,
            },
        )
    };
    let timeline = record(
        &["a", "b"],
        &[
            idle(0, IdleKind::Anticipation, 6 * MS),
            end(MS, IdleKind::Anticipation, IdleEnd::Timer),
            idle(10 * MS, IdleKind::Queue, 8 * MS),
            end(12 * MS, IdleKind::Queue, IdleEnd::RequestArrived),
            idle(20 * MS, IdleKind::Linger, 0),
            end(21 * MS, IdleKind::Linger, IdleEnd::Released),
        ],
    );
    assert!(marks_of(&timeline, "a").is_empty());
    assert_eq!(
        marks_of(&timeline, "b"),
        vec![
            span(
                0,
                MS,
                "anticipation",
                "anticipation for p2:BE4 (window 6.00 ms): 1.00 ms, ended timer"
            ),
            span(
                10 * MS,
                12 * MS,
                "idle",
                "idling for p2:BE4 (window 8.00 ms): 2.00 ms, ended request_arrived"
            ),
            span(
                20 * MS,
                21 * MS,
                "linger",
                "lingering for p2:BE4 (until its requests complete): 1.00 ms, ended released"
            ),
        ]
    );
}

#[test]
fn cfq_slices_and_group_turns() {
    let mut groups = GroupTree::default();
    let grp = groups.ensure("grp").expect("a valid path");
    let async_queue = QueueRef {
        process: None,
        group: grp,
        priority: IoPriority::default(),
    };
    let timeline = record_in(
        &groups,
        &["a"],
        &[
            (
                0,
                TraceEvent::GroupStart {
                    group: grp,
                    class: PriorityClass::BestEffort,
                    workload: Workload::Async,
                    slice: 300 * MS,
                    resumed: false,
                },
            ),
            (0, TraceEvent::SliceStart { queue: async_queue }),
            (
                5 * MS,
                TraceEvent::SliceTimer {
                    queue: async_queue,
                    length: 40 * MS,
                },
            ),
            (
                45 * MS,
                TraceEvent::SliceEnd {
                    queue: async_queue,
                    reason: ServiceEnd::SliceExpired,
                    dispatched: 12,
                },
            ),
            (
                45 * MS,
                TraceEvent::GroupEnd {
                    group: grp,
                    charge: 40 * MS,
                    unit: ChargeUnit::Time,
                },
            ),
        ],
    );
    let names: Vec<&str> = timeline
        .lanes
        .iter()
        .map(|lane| lane.name.as_str())
        .collect();
    assert_eq!(names, ["device", "/grp", "a", "async:BE4 /grp"]);
    assert_eq!(timeline.lanes[3].kind, LaneKind::Queue);
    assert_eq!(
        marks_of(&timeline, "async:BE4 /grp"),
        vec![span(
            0,
            45 * MS,
            "slice",
            "slice of async:BE4 (40.0 ms from its first completion at 0.005000 s): active \
             45.0 ms, 12 requests dispatched, ended slice_expired"
        )]
    );
    assert_eq!(
        marks_of(&timeline, "/grp"),
        vec![span(
            0,
            45 * MS,
            "group",
            "group /grp in service (BE async workload, 300 ms of its workload slice left): \
             45.0 ms, charged 40.0 ms"
        )]
    );
}

#[test]
fn bfq_budgets_raising_injection_and_preemption() {
    let timeline = record(
        &["a", "b"],
        &[
            (
                0,
                TraceEvent::RaiseStart {
                    queue: queue(1),
                    kind: RaiseKind::Interactive,
                    coefficient: 30,
                    duration: 5_000 * MS,
                },
            ),
            (
                0,
                TraceEvent::BudgetStart {
                    queue: queue(1),
                    budget: 512,
                    timeout: 125 * MS,
                    raising: 30,
                },
            ),
            (
                2 * MS,
                TraceEvent::Inject {
                    request: RequestId(7),
                    queue: queue(2),
                    holder: queue(1),
                },
            ),
            (
                3 * MS,
                TraceEvent::Preempt {
                    queue: queue(1),
                    by: queue(2),
                    reason: PreemptReason::HigherClassOrWeight,
                },
            ),
            (
                3 * MS,
                TraceEvent::BudgetEnd {
                    queue: queue(1),
                    reason: ServiceEnd::Preempted,
                    service: 100,
                    budget: 512,
                    charged: 100,
                    next_budget: 512,
                },
            ),
            (
                4 * MS,
                TraceEvent::RaiseEnd {
                    queue: queue(1),
                    kind: RaiseKind::Interactive,
                    reason: RaiseEnd::TooMuchService,
                },
            ),
        ],
    );
    assert_eq!(
        marks_of(&timeline, "a"),
        vec![
            span(
                0,
                3 * MS,
                "budget",
                "budget of p1:BE4: 100 of 512 sectors served, charged 100, next budget 512 \
                 (timeout 125 ms, weight raised ×30): 3.00 ms in service, ended preempted"
            ),
            span(
                0,
                4 * MS,
                "raise",
                "weight of p1:BE4 raised ×30 (interactive, for up to 5.00 s): 4.00 ms, ended \
                 too_much_service"
            ),
            span(
                3 * MS,
                3 * MS,
                "preempt",
                "p1:BE4 preempted by p2:BE4: higher_class_or_weight"
            ),
        ]
    );
    assert_eq!(
        marks_of(&timeline, "b"),
        vec![
            span(
                2 * MS,
                2 * MS,
                "inject",
                "request 7 of p2:BE4 injected while the device is held for p1:BE4"
            ),
            span(
                3 * MS,
                3 * MS,
                "preempt",
                "p2:BE4 preempts p1:BE4: higher_class_or_weight"
            ),
        ]
    );
}

#[test]
fn holds_span_while_any_request_of_the_process_is_held() {
    let mut groups = GroupTree::default();
    let slow = groups.ensure("slow").expect("a valid path");
    let hold = |id, time| {
        (
            time,
            TraceEvent::Hold {
                request: RequestId(id),
                process: ProcessId(1),
                group: slow,
                direction: Direction::Write,
                bytes: 4096,
                wait: MS,
            },
        )
    };
    let release = |id, time, waited| {
        (
            time,
            TraceEvent::Release {
                request: RequestId(id),
                process: ProcessId(1),
                group: slow,
                direction: Direction::Write,
                waited,
            },
        )
    };
    let timeline = record_in(
        &groups,
        &["w"],
        &[
            hold(1, 0),
            hold(2, MS),
            release(1, 2 * MS, 2 * MS),
            release(2, 5 * MS, 4 * MS),
            (
                6 * MS,
                TraceEvent::Outranked {
                    process: ProcessId(1),
                    outranked: true,
                },
            ),
            (
                7 * MS,
                TraceEvent::Outranked {
                    process: ProcessId(1),
                    outranked: false,
                },
            ),
        ],
    );
    assert_eq!(
        marks_of(&timeline, "w"),
        vec![
            span(
                0,
                5 * MS,
                "hold",
                "held by the limit of /slow: 2 requests (8192 bytes), the longest 4.00 ms \
                 since submission"
            ),
            span(
                6 * MS,
                7 * MS,
                "outranked",
                "outranked by the limit layer (not waited for) for 1.00 ms"
            ),
        ]
    );
}

#[test]
fn queue_merges_and_splits_are_instants() {
    let timeline = record(
        &["a", "b"],
        &[
            (
                MS,
                TraceEvent::QueueMerge {
                    process: ProcessId(2),
                    from: queue(2),
                    into: queue(1),
                },
            ),
            (
                2 * MS,
                TraceEvent::QueueSplit {
                    process: ProcessId(2),
                    from: queue(1),
                },
            ),
        ],
    );
    let merge = "p2 merged into p1:BE4 (from p2:BE4)";
    assert_eq!(
        marks_of(&timeline, "a"),
        vec![span(MS, MS, "queue_merge", merge)]
    );
    assert_eq!(
        marks_of(&timeline, "b"),
        vec![
            span(MS, MS, "queue_merge", merge),
            span(
                2 * MS,
                2 * MS,
                "queue_split",
                "p2 splits from the shared queue p1:BE4"
            ),
        ]
    );
}

#[test]
fn what_is_open_at_the_end_closes_at_the_last_event() {
    let timeline = record(
        &["a", "b"],
        &[
            (0, TraceEvent::SliceStart { queue: queue(1) }),
            (MS, dispatch(1, 1)),
            (
                2 * MS,
                TraceEvent::IdleStart {
                    queue: queue(1),
                    kind: IdleKind::Queue,
                    window: 8 * MS,
                },
            ),
            (3 * MS, dispatch(2, 1)),
            (
                3 * MS,
                TraceEvent::BudgetStart {
                    queue: queue(2),
                    budget: 512,
                    timeout: 125 * MS,
                    raising: 1,
                },
            ),
        ],
    );
    assert_eq!(timeline.duration, 3 * MS);
    assert_eq!(
        marks_of(&timeline, "b"),
        vec![span(
            3 * MS,
            3 * MS,
            "budget",
            "budget of p2:BE4, 512 sectors (timeout 125 ms): 0 ns in service, ended run_ended"
        )]
    );
    let marks = marks_of(&timeline, "a");
    assert_eq!(marks.len(), 3);
    assert_eq!(
        (marks[0].0, marks[0].1, marks[0].2.as_str()),
        (0, 3 * MS, "slice")
    );
    assert!(marks[0].3.ends_with("ended run_ended"), "{}", marks[0].3);
    assert_eq!(
        (marks[1].0, marks[1].1, marks[1].2.as_str()),
        (MS, 3 * MS, "service")
    );
    assert_eq!(
        (marks[2].0, marks[2].1, marks[2].2.as_str()),
        (2 * MS, 3 * MS, "idle")
    );
}

#[test]
fn lanes_are_named_and_ordered() {
    let timeline = record(
        &["reader"],
        &[
            (0, dispatch(1, 3)),
            (0, dispatch(2, 0)),
            (MS, complete(1, 3)),
            (MS, complete(2, 0)),
        ],
    );
    let names: Vec<&str> = timeline
        .lanes
        .iter()
        .map(|lane| lane.name.as_str())
        .collect();
    assert_eq!(names, ["device", "flusher", "reader", "process 3"]);
    assert_eq!(timeline.lanes[1].group.as_deref(), Some("/"));
    assert_eq!(timeline.lanes[2].group, None);
}

#[test]
fn same_events_same_timeline_and_bytes() {
    let events: Vec<(Nanos, TraceEvent)> = (0..2_000u64)
        .flat_map(|i| {
            let process = (i % 3) as u32 + 1;
            [
                (i * MS, dispatch(i, process)),
                (i * MS + MS / 2, complete(i, process)),
            ]
        })
        .collect();
    let first = record(&["a", "b", "c"], &events);
    let second = record(&["a", "b", "c"], &events);
    assert_eq!(first, second);
    let json = serde_json::to_string(&first).expect("a timeline serializes");
    let back: Timeline = serde_json::from_str(&json).expect("and deserializes");
    assert_eq!(back, first);
    assert_eq!(
        ioslice_timeline::render_html(&first, "t"),
        ioslice_timeline::render_html(&second, "t")
    );
}

/// Two processes taking turns of 10 ms, one 4 ms request at a time, for `turns` turns.
fn turns_of_two(recorder: &mut TimelineRecorder, turns: u64) {
    let mut id = 0;
    for turn in 0..turns {
        let process = 1 + (turn % 2) as u32;
        for step in 0..2 {
            id += 1;
            let at = turn * 10 * MS + step * 5 * MS;
            recorder.record(at, &dispatch(id, process));
            recorder.record(at + 4 * MS, &complete(id, process));
        }
    }
}

#[test]
fn a_finer_record_is_kept_where_the_overview_is_coarsened() {
    let names = vec!["a".to_string(), "b".to_string()];
    let mut coarse = TimelineRecorder::with_cap(names.clone(), 20).with_detail(10_000);
    turns_of_two(&mut coarse, 100);
    let timeline = coarse.finish();
    assert!(timeline.marks.len() <= 20);
    assert!(timeline.sampling.resolution > 0);
    let detail = timeline.detail.as_ref().expect("a finer record");
    assert_eq!(detail.sampling.resolution, 0, "not coarsened");
    // Every request apart: 5 ms apart with 1 ms gaps, over the 250 µs base resolution.
    assert_eq!(detail.marks.len(), 200);
    let requests: u64 = detail.marks.iter().map(|mark| mark.count).sum();
    assert_eq!(requests, 200);
    assert_eq!(
        (
            detail.marks[2].start,
            detail.marks[2].end,
            detail.marks[2].lane
        ),
        (10 * MS, 14 * MS, timeline.lane_named("b").expect("lane b"))
    );

    let mut roomy = TimelineRecorder::with_cap(names, 10_000).with_detail(10_000);
    turns_of_two(&mut roomy, 100);
    let timeline = roomy.finish();
    assert_eq!(timeline.sampling.resolution, 0);
    assert!(timeline.detail.is_none(), "the overview is the detail");
}

#[test]
fn controllers_steps_are_instants_on_the_device_and_the_group() {
    let mut groups = GroupTree::default();
    let greedy = groups.ensure("greedy").expect("a valid path");
    let protected = groups.ensure("protected").expect("a valid path");
    let timeline = record_in(
        &groups,
        &["a"],
        &[
            (
                MS,
                TraceEvent::VrateAdjust {
                    from_ppm: 1_000_000,
                    vrate_ppm: 990_000,
                    busy_level: 4,
                    read_missed_ppm: 60_000,
                    write_missed_ppm: 0,
                    rq_wait_pct: 2,
                    shortages: 0,
                    lagging: 1,
                },
            ),
            (
                2 * MS,
                TraceEvent::LatencyScale {
                    parent: GroupId::ROOT,
                    by: Some(protected),
                    up: false,
                    cookie: 99,
                },
            ),
            (
                2 * MS,
                TraceEvent::LatencyDepth {
                    group: greedy,
                    from: None,
                    depth: Some(16),
                },
            ),
        ],
    );
    assert_eq!(
        marks_of(&timeline, "device"),
        [
            span(
                MS,
                MS,
                "control",
                "iocost: vrate 100.0% → 99.0% (busy level 4: reads missing 6.0%, writes missing 0.0%, 2% waiting for a request slot; 0 groups short of budget, 1 lagging)"
            ),
            span(
                2 * MS,
                2 * MS,
                "control",
                "io.latency: scale down to cookie 99 (/protected missed its target)"
            ),
        ]
    );
    assert_eq!(
        marks_of(&timeline, "/greedy"),
        [span(
            2 * MS,
            2 * MS,
            "control",
            "io.latency: depth unlimited → 16"
        )]
    );
}
