//! Policies driven directly with a fake clock: a policy records nothing until tracing is on,
//! merges name the request merged into and the end it grew at, and the limit layer's holds and
//! releases come in order with the wrapped policy's own events.

use ioslice_core::limit::Limits;
use ioslice_core::merge::MergeKind;
use ioslice_core::registry::SCHEDULERS;
use ioslice_core::trace::{TraceBuffer, TraceFormat, TraceLog, Tracer};
use ioslice_core::{
    build_scheduler, Completion, Direction, Dispatch, GroupTree, ProcessId, Request, RequestId,
    SchedSpec, Scheduler, SchedulerContext, TraceEvent,
};

fn policy(spec: &str, groups: GroupTree) -> Box<dyn Scheduler> {
    let spec: SchedSpec = spec.parse().expect("spec");
    let context = SchedulerContext {
        groups,
        rotational: true,
        queue_depth: 1,
    };
    build_scheduler(&spec, &context).expect("policy")
}

fn read(id: u64, process: u32, sector: u64) -> Request {
    Request::new(
        RequestId(id),
        ProcessId(process),
        Direction::Read,
        sector,
        8,
    )
}

/// Two readers, eight reads each, served one at a time, 1 ms each; a policy's wait is waited
/// out while it holds requests. Starts at `start` with request ids after `start`; returns the
/// requests served and the time at the end.
fn serve(policy: &mut dyn Scheduler, start: u64) -> (usize, u64) {
    let mut now = start;
    let mut id = start;
    let mut served = 0;
    for step in 0..8u64 {
        for process in [1, 2] {
            id += 1;
            let sector = u64::from(process) * (1 << 30) + step * 8;
            policy.insert(
                Request {
                    submit_time: now,
                    ..read(id, process, sector)
                },
                now,
            );
        }
        loop {
            match policy.dispatch(now) {
                Dispatch::Request(request) => {
                    now += 1_000_000;
                    served += request.ids().count();
                    let done = Completion {
                        request,
                        dispatch_time: now - 1_000_000,
                        error: None,
                    };
                    policy.complete(&done, now);
                }
                Dispatch::WaitUntil(at) if policy.queued() > 0 => now = at.max(now + 1),
                _ => break,
            }
        }
        now += 20_000;
    }
    (served, now)
}

#[test]
fn a_policy_records_nothing_until_tracing_is_on() {
    for name in SCHEDULERS.iter().map(|info| info.name) {
        let mut off = policy(name, GroupTree::default());
        assert_eq!(serve(off.as_mut(), 0).0, 16, "{name}");
        let mut events = Vec::new();
        off.drain_trace(&mut events);
        assert!(events.is_empty(), "{name}: {events:?}");

        let mut on = policy(name, GroupTree::default());
        on.set_tracing(true);
        let (_, end) = serve(on.as_mut(), 0);
        on.drain_trace(&mut events);
        if !["noop", "kyber"].contains(&name) {
            // noop decides nothing but merges, and these reads do not merge; kyber's one
            // decision of its own, resizing a domain, waits 100 ms after a completion, and
            // these 16 reads take 16 ms.
            assert!(!events.is_empty(), "{name}");
        }
        // Drained events are gone; turned off, it records nothing more.
        let mut again = Vec::new();
        on.drain_trace(&mut again);
        assert!(again.is_empty(), "{name}");
        on.set_tracing(false);
        serve(on.as_mut(), end + 1_000_000_000);
        on.drain_trace(&mut again);
        assert!(again.is_empty(), "{name}");
    }
}

#[test]
fn merges_name_the_request_merged_into_and_coalesces_the_one_absorbed() {
    for name in SCHEDULERS.iter().map(|info| info.name) {
        let mut policy = policy(name, GroupTree::default());
        policy.set_tracing(true);
        policy.insert(read(1, 7, 0), 0);
        policy.insert(read(2, 7, 16), 0);
        // Fills the gap: appended to 1, which then touches 2 and absorbs it.
        policy.insert(read(3, 7, 8), 0);
        // Put in front of 1.
        policy.insert(read(4, 7, 1000), 0);
        policy.insert(read(5, 7, 992), 0);
        let mut events = Vec::new();
        policy.drain_trace(&mut events);
        let merging: Vec<TraceEvent> = events
            .into_iter()
            .filter(|event| matches!(event.name(), "merge" | "coalesce"))
            .collect();
        assert_eq!(
            merging,
            vec![
                TraceEvent::Merge {
                    request: RequestId(3),
                    into: RequestId(1),
                    position: MergeKind::Back,
                },
                TraceEvent::Coalesce {
                    into: RequestId(1),
                    absorbed: RequestId(2),
                },
                TraceEvent::Merge {
                    request: RequestId(5),
                    into: RequestId(4),
                    position: MergeKind::Front,
                },
            ],
            "{name}"
        );
    }
}

#[test]
fn the_limit_layer_records_holds_and_releases_among_the_policys_events() {
    let mut groups = GroupTree::default();
    let g = groups.ensure("g").expect("group");
    groups.set_limits(
        g,
        Limits {
            read_bps: Some(1 << 20),
            ..Limits::default()
        },
    );
    let mut layer = policy("deadline", groups.clone());
    let mut log = TraceLog::default();
    let mut tracer = Tracer::new(&mut log, 0, &groups, layer.as_mut());
    for (id, sector) in [(1, 0), (2, 8)] {
        let request = Request {
            group: g,
            ..read(id, 1, sector)
        };
        tracer.record(0, &TraceEvent::insert(&request));
        layer.insert(request, 0);
        tracer.collect(0, layer.as_mut());
    }
    let Dispatch::Request(request) = layer.dispatch(0) else {
        panic!("the bucket starts full");
    };
    tracer.collect(0, layer.as_mut());
    tracer.record(0, &TraceEvent::dispatch(&request));
    drop(tracer);
    let text = log.render(TraceFormat::Text);
    let expected = [
        "    0.000000000 insert       rq=1 process=1 group=g prio=BE4 dir=R sync=true sector=0 sectors=8",
        "    0.000000000 hold         rq=1 process=1 group=g dir=R bytes=4096 wait_ns=0",
        "    0.000000000 insert       rq=2 process=1 group=g prio=BE4 dir=R sync=true sector=8 sectors=8",
        "    0.000000000 hold         rq=2 process=1 group=g dir=R bytes=4096 wait_ns=0",
        "    0.000000000 release      rq=1 process=1 group=g dir=R waited_ns=0",
        "    0.000000000 release      rq=2 process=1 group=g dir=R waited_ns=0",
        // Released into deadline, the second read joins the first there.
        "    0.000000000 merge        rq=2 into=1 position=back",
        "    0.000000000 batch_start  class=read start=fifo_head starved=false",
        "    0.000000000 dispatch     rq=1 process=1 group=g prio=BE4 dir=R sync=true sector=0 sectors=16 merged=1",
    ];
    let expected: String = expected.iter().map(|line| format!("{line}\n")).collect();
    assert_eq!(text, expected);
}

#[test]
fn an_off_buffer_builds_nothing() {
    let mut buffer = TraceBuffer::default();
    let mut built = false;
    buffer.emit(|| {
        built = true;
        TraceEvent::Outranked {
            process: ProcessId(1),
            outranked: true,
        }
    });
    assert!(!built);
    buffer.set_enabled(true);
    buffer.emit(|| TraceEvent::Outranked {
        process: ProcessId(1),
        outranked: true,
    });
    let mut out = Vec::new();
    buffer.drain_into(&mut out);
    assert_eq!(out.len(), 1);
}
