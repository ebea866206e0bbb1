//! The trace of a simulated run shows each decision where the policy makes it: cfq's and
//! bfq's idling between a sequential reader's requests, a bfq budget used up, a real-time
//! reader preempting a best-effort one, a limited group's requests held and released, bfq's
//! weight raising of a new reader and its end, deadline's batch at an expired FIFO head and
//! anticipatory's waits. The simulator is deterministic, so expectations are exact.

mod common;

use ioslice_core::registry::SCHEDULERS;
use ioslice_core::trace::{
    BatchStart, IdleEnd, IdleKind, PreemptReason, RaiseEnd, RaiseKind, ServiceEnd, TraceFormat,
    TraceLog,
};
use ioslice_core::{PriorityClass, ProcessId, RequestId, TraceEvent};

/// Run `job` under `sched` on `device` with seed 1 (and group `g` limited to `rbps` bytes
/// per second, if given) and keep its trace.
fn trace(job: &str, sched: &str, device: &str, rbps: Option<u64>) -> TraceLog {
    common::trace(job, sched, device, 1, rbps)
}

/// One sequential reader, four 64 KiB reads, one at a time.
const ONE_READER: &str = "\
[reader]
rw=read
bs=64k
size=256k
direct=1
ioengine=psync
";

/// Text lines, each ending in a newline.
fn lines(lines: &[&str]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// The first read of [`ONE_READER`] and its completion, under any policy.
const READ: [&str; 2] = [
    "    0.000000000 dispatch     rq=1 process=1 group=/ prio=BE4 dir=R sync=true sector=0 sectors=128 merged=0",
    "    0.007828043 complete     rq=1 process=1 group=/ prio=BE4 dir=R sync=true sector=0 sectors=128 merged=0 latency_ns=7828043 service_ns=7828043 error=0",
];

#[test]
fn cfq_idles_between_a_sequential_readers_requests() {
    let log = trace(ONE_READER, "cfq", "sim:sata-7200", None);
    // The queue gets the device; its slice starts at its first completion; the device idles
    // from each completion until the reader's next read arrives 20 µs later (the host's
    // reaction time), which is dispatched at once.
    let head = lines(&[
        "    0.000000000 insert       rq=1 process=1 group=/ prio=BE4 dir=R sync=true sector=0 sectors=128",
        "    0.000000000 group_start  group=/ class=BE workload=sync slice_ns=300000000 resumed=false",
        "    0.000000000 slice_start  queue=p1:BE4 group=/",
        READ[0],
        READ[1],
        "    0.007828043 slice_timer  queue=p1:BE4 group=/ length_ns=100000000",
        "    0.007828043 idle_start   queue=p1:BE4 group=/ kind=queue window_ns=8000000",
        "    0.007848043 insert       rq=2 process=1 group=/ prio=BE4 dir=R sync=true sector=128 sectors=128",
        "    0.007848043 idle_end     queue=p1:BE4 group=/ kind=queue reason=request_arrived",
        "    0.007848043 dispatch     rq=2 process=1 group=/ prio=BE4 dir=R sync=true sector=128 sectors=128 merged=0",
    ]);
    let text = log.render(TraceFormat::Text);
    assert!(text.starts_with(&head), "{text}");
    // After the last read the process exits while the device idles for it.
    let tail = lines(&[
        "    0.008961198 idle_start   queue=p1:BE4 group=/ kind=queue window_ns=8000000",
        "    0.008981198 idle_end     queue=p1:BE4 group=/ kind=queue reason=process_exited",
        "    0.008981198 slice_end    queue=p1:BE4 group=/ reason=process_exited dispatched=4",
        "    0.008981198 group_end    group=/ charge=1153155 unit=ns",
    ]);
    assert!(text.ends_with(&tail), "{text}");
    assert_eq!(log.count("idle_start"), 4);
    assert_eq!(log.count("idle_end"), 4);
}

#[test]
fn bfq_idles_between_a_sequential_readers_requests() {
    let log = trace(ONE_READER, "bfq:low_latency=0", "sim:sata-7200", None);
    // B-WF2Q+ gives the queue the device with two thirds of the default largest budget; a
    // sequential reader on a disk is worth idling for.
    let head = lines(&[
        "    0.000000000 insert       rq=1 process=1 group=/ prio=BE4 dir=R sync=true sector=0 sectors=128",
        "    0.000000000 budget_start queue=p1:BE4 group=/ budget=10922 timeout_ns=125000000 raising=1",
        READ[0],
        READ[1],
        "    0.007828043 idle_start   queue=p1:BE4 group=/ kind=queue window_ns=8000000",
        "    0.007848043 insert       rq=2 process=1 group=/ prio=BE4 dir=R sync=true sector=128 sectors=128",
        "    0.007848043 idle_end     queue=p1:BE4 group=/ kind=queue reason=request_arrived",
    ]);
    let text = log.render(TraceFormat::Text);
    assert!(text.starts_with(&head), "{text}");
    let tail = lines(&[
        "    0.008961198 idle_start   queue=p1:BE4 group=/ kind=queue window_ns=8000000",
        "    0.008981198 idle_end     queue=p1:BE4 group=/ kind=queue reason=process_exited",
        "    0.008981198 budget_end   queue=p1:BE4 group=/ reason=no_more_requests service=512 budget=10922 charged=512 next_budget=512",
    ]);
    assert!(text.ends_with(&tail), "{text}");
}

#[test]
fn a_bfq_budget_used_up_ends_with_budget_exhausted() {
    let job = "\
[global]
rw=read
bs=64k
size=1m
direct=1
ioengine=psync
[a]
[b]
offset=50g
";
    let log = trace(
        job,
        "bfq:low_latency=0,max_budget=256",
        "sim:sata-7200",
        None,
    );
    let ends: Vec<(ServiceEnd, u64, u64)> = log
        .named("budget_end")
        .map(|event| match event {
            TraceEvent::BudgetEnd {
                reason,
                service,
                budget,
                ..
            } => (*reason, *service, *budget),
            _ => unreachable!(),
        })
        .collect();
    // Two 64 KiB reads fill a 256-sector budget: the next one does not fit.
    assert!(
        ends.contains(&(ServiceEnd::BudgetExhausted, 256, 256)),
        "{ends:?}"
    );
    let exhausted = ends
        .iter()
        .filter(|(reason, _, _)| *reason == ServiceEnd::BudgetExhausted)
        .count();
    // 1 MiB each: two first budgets of 170 sectors (2/3 of max_budget) and seven of 256 fill
    // up, and each reader's last 64 KiB ends its queue; a new queue is taken to be I/O-bound,
    // so neither is preempted while BFQ idles for it.
    assert_eq!(exhausted, 16, "{ends:?}");
    assert_eq!(ends.len(), 18, "{ends:?}");
    // Every budget that starts ends.
    assert_eq!(log.count("budget_start"), log.count("budget_end"));
}

/// A best-effort reader alone, then a real-time one 10 ms later.
const RT_AFTER_BE: &str = "\
[global]
rw=read
bs=64k
direct=1
ioengine=psync
[be]
size=4m
[rt]
prioclass=1
startdelay=10ms
size=256k
offset=50g
";

#[test]
fn a_real_time_reader_preempts_a_best_effort_one() {
    for (sched, reason) in [
        ("cfq", PreemptReason::RealTime),
        ("bfq:low_latency=0", PreemptReason::HigherClassOrWeight),
    ] {
        let log = trace(RT_AFTER_BE, sched, "sim:sata-7200", None);
        let position = log
            .events
            .iter()
            .position(|(_, event)| matches!(event, TraceEvent::Preempt { .. }))
            .unwrap_or_else(|| panic!("{sched}: no preemption"));
        let (time, event) = &log.events[position];
        assert_eq!(
            *time, 10_000_000,
            "{sched}: when the RT reader's first read arrives"
        );
        let TraceEvent::Preempt {
            queue,
            by,
            reason: why,
        } = event
        else {
            unreachable!()
        };
        assert_eq!(queue.process, Some(ProcessId(1)), "{sched}");
        assert_eq!(by.process, Some(ProcessId(2)), "{sched}");
        assert_eq!(by.priority.class, PriorityClass::RealTime, "{sched}");
        assert_eq!(*why, reason, "{sched}");
        // The preempted queue's slice or budget ends at once, saying so.
        let end = &log.events[position + 1].1;
        let ended = match end {
            TraceEvent::SliceEnd { reason, .. } | TraceEvent::BudgetEnd { reason, .. } => *reason,
            other => panic!("{sched}: {other:?} after the preemption"),
        };
        assert_eq!(ended, ServiceEnd::Preempted, "{sched}");
        assert_eq!(log.count("preempt"), 1, "{sched}");
    }
}

#[test]
fn a_limited_group_holds_each_request_and_releases_it_at_the_limits_pace() {
    let job = "\
[reader]
rw=read
bs=64k
size=512k
direct=1
ioengine=psync
cgroup=g
";
    for sched in SCHEDULERS.iter().map(|info| info.name) {
        let log = trace(job, sched, "sim:sata-7200", Some(1 << 20));
        let holds: Vec<(u64, RequestId, u64)> = log
            .events
            .iter()
            .filter_map(|(time, event)| match event {
                TraceEvent::Hold { request, wait, .. } => Some((*time, *request, *wait)),
                _ => None,
            })
            .collect();
        let releases: Vec<(u64, RequestId, u64)> = log
            .events
            .iter()
            .filter_map(|(time, event)| match event {
                TraceEvent::Release {
                    request, waited, ..
                } => Some((*time, *request, *waited)),
                _ => None,
            })
            .collect();
        assert_eq!(holds.len(), 8, "{sched}: every read is held");
        assert_eq!(releases.len(), 8, "{sched}");
        let times: Vec<u64> = releases.iter().map(|r| r.0).collect();
        // The first goes at once from the full bucket; the second when the bucket (100 ms of
        // 1 MiB/s) has refilled enough; then one 64 KiB read per 62.5 ms.
        let mut expected = vec![0, 25_000_000];
        expected.extend((1..=6).map(|k| 25_000_000 + k * 62_500_000));
        assert_eq!(times, expected, "{sched}");
        for ((held_at, held, wait), (released_at, released, waited)) in holds.iter().zip(&releases)
        {
            assert_eq!(held, released, "{sched}: released in order");
            assert_eq!(
                held_at + wait,
                *released_at,
                "{sched}: the wait it was held for"
            );
            assert_eq!(wait, waited, "{sched}");
        }
    }
}

#[test]
fn bfq_raises_a_new_reader_until_its_service_allowance_is_spent() {
    let job = "\
[reader]
rw=read
bs=128k
size=80m
direct=1
ioengine=psync
";
    let log = trace(job, "bfq", "sim:sata-7200", None);
    let raising: Vec<&TraceEvent> = log
        .events
        .iter()
        .map(|(_, event)| event)
        .filter(|event| matches!(event.name(), "raise_start" | "raise_end"))
        .collect();
    assert_eq!(raising.len(), 2, "{raising:?}");
    assert!(
        matches!(
            raising[0],
            TraceEvent::RaiseStart {
                kind: RaiseKind::Interactive,
                coefficient: 30,
                ..
            }
        ),
        "{raising:?}"
    );
    assert!(
        matches!(
            raising[1],
            TraceEvent::RaiseEnd {
                kind: RaiseKind::Interactive,
                reason: RaiseEnd::TooMuchService,
                ..
            }
        ),
        "{raising:?}"
    );
    // The raising starts with the queue's first request, and ends once it has received more
    // than 120 000 sectors: after its 469th read of 256 sectors.
    let first = log
        .events
        .iter()
        .position(|(_, e)| e.name() == "raise_start");
    let end = log.events.iter().position(|(_, e)| e.name() == "raise_end");
    let dispatched_before = |position: usize| {
        log.events[..position]
            .iter()
            .filter(|(_, e)| e.name() == "dispatch")
            .count()
    };
    assert_eq!(first.map(dispatched_before), Some(0));
    assert_eq!(end.map(dispatched_before), Some(469));
    let plain = trace(job, "bfq:low_latency=0", "sim:sata-7200", None);
    assert_eq!(plain.count("raise_start") + plain.count("raise_end"), 0);
}

#[test]
fn deadline_starts_a_batch_at_an_expired_fifo_head() {
    let job = "\
[reader]
rw=randread
bs=4k
size=64m
number_ios=200
direct=1
ioengine=libaio
iodepth=32
";
    let log = trace(job, "deadline:read_expire=1", "sim:sata-7200", None);
    let mut expired = 0;
    for (index, (time, event)) in log.events.iter().enumerate() {
        let TraceEvent::FifoExpired { request, .. } = event else {
            continue;
        };
        expired += 1;
        // The expired head starts a batch and goes to the device next, at the same time.
        let (start_time, start) = &log.events[index + 1];
        assert_eq!(start_time, time);
        assert!(matches!(
            start,
            TraceEvent::BatchStart {
                start: BatchStart::Expired,
                ..
            }
        ));
        let (_, dispatch) = &log.events[index + 2];
        assert!(
            matches!(dispatch, TraceEvent::Dispatch { request: rq, .. } if rq.id == *request),
            "{dispatch:?}"
        );
    }
    assert_eq!(expired, 80);
    // With the default 500 ms deadline, nothing expires.
    let relaxed = trace(job, "deadline", "sim:sata-7200", None);
    assert_eq!(relaxed.count("fifo_expired"), 0);
}

#[test]
fn anticipatory_waits_for_a_sequential_reader_and_not_with_antic_expire_0() {
    let job = "\
[global]
rw=read
bs=64k
size=16m
direct=1
ioengine=psync
[r1]
[r2]
offset=100g
";
    let log = trace(job, "anticipatory", "sim:sata-7200", None);
    let mut reasons = std::collections::BTreeMap::new();
    for event in log.named("idle_end") {
        let TraceEvent::IdleEnd { kind, reason, .. } = event else {
            unreachable!()
        };
        assert_eq!(*kind, IdleKind::Anticipation);
        *reasons.entry(format!("{reason:?}")).or_insert(0) += 1;
    }
    assert_eq!(log.count("idle_start"), 256);
    assert_eq!(
        reasons,
        [
            (format!("{:?}", IdleEnd::RequestArrived), 255),
            (format!("{:?}", IdleEnd::Timer), 1)
        ]
        .into_iter()
        .collect()
    );
    let off = trace(job, "anticipatory:antic_expire=0", "sim:sata-7200", None);
    assert_eq!(off.count("idle_start") + off.count("idle_end"), 0);
}
