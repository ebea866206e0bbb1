//! What each pre-group release does differently, pinned with a fake clock.

use crate::policy::cfq::testing::{cfq, finish, read, take, with_priority};
use crate::policy::cfq::Cfq;
use crate::time::ms;
use crate::trace::{PreemptReason, ServiceEnd};
use crate::{
    Direction, Dispatch, IoPriority, PriorityClass, ProcessId, Request, RequestId, Scheduler,
    TraceEvent,
};

/// An async (writeback) write of 8 sectors by `process`.
fn write(id: u64, process: u32, sector: u64) -> Request {
    Request::new(
        RequestId(id),
        ProcessId(process),
        Direction::Write,
        sector,
        8,
    )
}

fn at_version(version: &str, settings: &[(&str, &str)]) -> Cfq {
    let mut all = vec![("version", version)];
    all.extend_from_slice(settings);
    cfq(&all)
}

/// The ids `dispatch` hands over at `now` until it has none.
fn drain(cfq: &mut Cfq, now: u64) -> Vec<u64> {
    std::iter::from_fn(|| match cfq.dispatch(now) {
        Dispatch::Request(request) => Some(request.id.0),
        _ => None,
    })
    .collect()
}

#[test]
fn the_2004_patch_keeps_a_process_reads_and_writes_in_one_queue() {
    let mut cfq = at_version("20610", &[]);
    cfq.insert(read(1, 1, 0), 0);
    cfq.insert(write(2, 1, 8), 0);
    cfq.insert(read(3, 2, 1 << 20), 0);
    let legacy = cfq.legacy.as_ref().expect("2.6.10 runs the legacy engine");
    assert_eq!(legacy.queues.len(), 2, "one queue per process");
    // Process 1's queue goes first and moves both its requests in one batch (quantum 4).
    assert_eq!(drain(&mut cfq, 0), vec![1, 2]);
}

#[test]
fn the_2004_slice_starts_at_the_first_dispatch_and_idles_4_ms() {
    let mut cfq = at_version("20610", &[]);
    cfq.insert(read(1, 1, 0), 0);
    cfq.insert(read(2, 2, 1 << 20), 0);
    let first = take(&mut cfq, 0);
    let slice_end = cfq.legacy.as_ref().map(|l| l.queues[0].slice_end);
    assert_eq!(slice_end, Some(ms(83)), "83 ms from the first dispatch");
    finish(&mut cfq, &first, ms(1));
    // Process 1 has nothing queued: the device waits 4 ms for it, though process 2 waits.
    assert_eq!(cfq.dispatch(ms(1)), Dispatch::WaitUntil(ms(5)));
    // Its next request within the wait is served at once.
    cfq.insert(read(3, 1, 8), ms(2));
    assert_eq!(take(&mut cfq, ms(2)).id, RequestId(3));
    // After the slice, process 2 has its turn even though process 1 has a request queued.
    cfq.insert(read(4, 1, 16), ms(3));
    assert_eq!(take(&mut cfq, ms(84)).id, RequestId(2));
}

#[test]
fn the_2004_patch_idles_for_writers_too() {
    let mut cfq = at_version("20610", &[]);
    cfq.insert(write(1, 1, 0), 0);
    cfq.insert(read(2, 2, 1 << 20), 0);
    let first = take(&mut cfq, 0);
    finish(&mut cfq, &first, ms(1));
    assert_eq!(cfq.dispatch(ms(1)), Dispatch::WaitUntil(ms(5)));
    // Nothing came: the reader gets the device when the wait ends.
    assert_eq!(take(&mut cfq, ms(5)).id, RequestId(2));
}

#[test]
fn in_2_6_28_a_lone_async_queue_empties_onto_the_dispatch_list() {
    let mut cfq = at_version("20628", &[]);
    for i in 0..10 {
        cfq.insert(write(i + 1, 9, i * 1_000), 0);
    }
    assert_eq!(take(&mut cfq, 0).id, RequestId(1));
    let legacy = cfq.legacy.as_ref().expect("legacy engine");
    assert_eq!(legacy.list.len(), 9, "all ten left CFQ at once");
    assert_eq!(cfq.queued(), 9, "the list's requests still count as held");
    // A reader's request preempts the async queue but waits behind the whole list.
    cfq.insert(read(100, 1, 500_000), ms(1));
    assert_eq!(
        drain(&mut cfq, ms(1)),
        vec![2, 3, 4, 5, 6, 7, 8, 9, 10, 100]
    );
}

#[test]
fn in_2_6_28_quantum_caps_a_queue_only_while_others_are_busy() {
    let mut cfq = at_version("20628", &[]);
    for i in 0..6 {
        cfq.insert(read(i + 1, 1, i * 100), 0);
        cfq.insert(read(i + 11, 2, (1 << 20) + i * 100), 0);
    }
    // Process 1 moves quantum (4) requests; process 2 is busy, so the round stops.
    assert_eq!(drain(&mut cfq, 0), vec![1, 2, 3, 4]);
    // Alone, a queue moves everything: quantum 4 does not bound it.
    let mut alone = at_version("20628", &[]);
    for i in 0..6 {
        alone.insert(read(i + 1, 1, i * 100), 0);
    }
    assert_eq!(drain(&mut alone, 0), vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn in_2_6_28_async_waits_while_sync_requests_are_out() {
    let mut cfq = at_version("20628", &[]);
    cfq.insert(read(1, 1, 0), 0);
    let first = take(&mut cfq, 0);
    cfq.insert(write(2, 9, 1 << 20), ms(1));
    assert_eq!(cfq.dispatch(ms(1)), Dispatch::Empty, "the read is out");
    finish(&mut cfq, &first, ms(2));
    // The reader's queue idles 8 ms (a sequential reader, the device now empty)...
    assert_eq!(cfq.dispatch(ms(2)), Dispatch::WaitUntil(ms(10)));
    // ... then the write goes.
    assert_eq!(take(&mut cfq, ms(10)).id, RequestId(2));
}

#[test]
fn in_2_6_28_a_seeky_reader_on_a_queueing_device_gets_no_idle_window() {
    let mut cfq = at_version("20628", &[]);
    let mut now = 0;
    for i in 0..4u64 {
        cfq.insert(read(i + 1, 1, i * 1_000_000), now);
        let request = take(&mut cfq, now);
        now += ms(5);
        finish(&mut cfq, &request, now);
    }
    let legacy = cfq.legacy.as_ref().expect("legacy engine");
    assert!(
        !legacy.queues[0].idle_window,
        "seeky, NCQ assumed until shown otherwise"
    );
    assert_eq!(legacy.active, None, "expired as soon as it ran dry");
    assert_eq!(legacy.idle_timer, None);
}

#[test]
fn in_2_6_28_a_new_sync_queue_joins_behind_async_by_its_offset() {
    let mut cfq = at_version("20628", &[]);
    cfq.insert(write(1, 9, 0), 0);
    assert_eq!(drain(&mut cfq, 0), vec![1]);
    // No queue is active: nothing to preempt. The async queue joins at 1 ms; the reader,
    // second busy queue, at 1 ms + (180 - 100) ms.
    cfq.insert(write(2, 9, 1 << 20), ms(1));
    cfq.insert(read(3, 1, 5 << 20), ms(1));
    let keys: Vec<i64> = cfq
        .legacy
        .as_ref()
        .map(|l| l.tree.iter().map(|e| e.1).collect())
        .unwrap_or_default();
    assert_eq!(keys, vec![1_000_000, 81_000_000]);
}

#[test]
fn in_2_6_28_a_read_preempts_async_but_waits_behind_the_list() {
    let mut cfq = at_version("20628", &[]);
    let low = IoPriority::new(PriorityClass::BestEffort, 7).expect("level 7");
    for i in 0..6 {
        cfq.insert(write(i + 1, 9, i * 1_000), 0);
        cfq.insert(
            with_priority(write(i + 11, 8, (1 << 20) + i * 1_000), low),
            0,
        );
    }
    // Two async queues are busy: the first moves quantum (4) and the round stops.
    assert_eq!(take(&mut cfq, 0).id, RequestId(1));
    cfq.insert(read(100, 1, 5 << 20), ms(1));
    // The read goes next after the list; the writes left wait while it is out.
    assert_eq!(drain(&mut cfq, ms(1)), vec![2, 3, 4, 100]);
}

#[test]
fn in_2_6_30_one_request_goes_per_call_up_to_four_quanta_alone() {
    let mut cfq = at_version("20630", &[]);
    for i in 0..20 {
        cfq.insert(write(i + 1, 9, i * 1_000), 0);
    }
    let out = drain(&mut cfq, 0);
    assert_eq!(out.len(), 16, "4 x quantum (4) for a lone queue");
    let legacy = cfq.legacy.as_ref().expect("legacy engine");
    assert_eq!(legacy.list.len(), 0, "no dispatch list");
    assert_eq!(cfq.queued(), 4);
    // A read arriving now goes next: nothing of the async queue is waiting ahead of it.
    cfq.insert(read(100, 1, 1 << 30), ms(1));
    assert_eq!(drain(&mut cfq, ms(1)), vec![100]);
}

#[test]
fn the_default_version_runs_the_modern_engine() {
    assert!(cfq(&[]).legacy.is_none());
    assert!(at_version("20633", &[]).legacy.is_none());
    assert!(at_version("20632", &[]).legacy.is_some());
}

#[test]
fn the_trace_shows_the_async_slice_and_the_read_preempting_it() {
    let mut cfq = at_version("20628", &[]);
    cfq.set_tracing(true);
    let low = IoPriority::new(PriorityClass::BestEffort, 7).expect("level 7");
    for i in 0..6 {
        cfq.insert(write(i + 1, 9, i * 1_000), 0);
        cfq.insert(
            with_priority(write(i + 11, 8, (1 << 20) + i * 1_000), low),
            0,
        );
    }
    take(&mut cfq, 0);
    cfq.insert(read(100, 1, 5 << 20), ms(1));
    drain(&mut cfq, ms(1));
    let mut events = Vec::new();
    cfq.drain_trace(&mut events);
    let summary: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            TraceEvent::SliceStart { queue } => Some(format!("start {:?}", queue.process)),
            TraceEvent::SliceEnd { queue, reason, .. } => {
                Some(format!("end {:?} {reason:?}", queue.process))
            }
            TraceEvent::Preempt { by, reason, .. } => {
                Some(format!("preempt by {:?} {reason:?}", by.process))
            }
            _ => None,
        })
        .collect();
    let reader = Some(ProcessId(1));
    assert_eq!(
        summary,
        vec![
            "start None".to_string(),
            format!("preempt by {reader:?} {:?}", PreemptReason::SyncOverAsync),
            format!("end None {:?}", ServiceEnd::Preempted),
            format!("start {reader:?}"),
        ]
    );
}
