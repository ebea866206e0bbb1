//! Time-sliced CFQ against its public API, with a fake clock: time is a `u64` we pass in, and
//! a small fake device (one request at a time unless told otherwise) completes requests after a
//! fixed service time.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::policy::cfq::Cfq;
use ioslice_core::scheduler::SchedulerContext;
use ioslice_core::time::{ms, us};
use ioslice_core::tunable::Tunables;
use ioslice_core::{
    Completion, Direction, Dispatch, GroupId, GroupTree, IoPriority, Nanos, PriorityClass,
    ProcessId, Request, RequestId, Scheduler,
};
use proptest::prelude::*;

use common::tunables;

/// A CFQ with these settings on a device of this kind, with these groups (path, weight).
fn cfq_on(
    settings: &[(&str, &str)],
    rotational: bool,
    queue_depth: usize,
    groups: &[(&str, u32)],
) -> (Cfq, Vec<GroupId>) {
    let mut tree = GroupTree::default();
    let ids = groups
        .iter()
        .map(|&(path, weight)| {
            let id = tree.ensure(path).expect("valid path");
            tree.set_weight(id, weight).expect("valid weight");
            id
        })
        .collect();
    let tunables = tunables("cfq", Cfq::TUNABLES, settings);
    let context = SchedulerContext {
        groups: tree,
        rotational,
        queue_depth,
    };
    (Cfq::new(&tunables, &context), ids)
}

/// A CFQ with these settings on a rotational disk without command queueing.
fn cfq(settings: &[(&str, &str)]) -> Cfq {
    cfq_on(settings, true, 1, &[]).0
}

/// A sync 4 KiB read.
fn read(id: u64, process: u32, sector: u64) -> Request {
    Request::new(
        RequestId(id),
        ProcessId(process),
        Direction::Read,
        sector,
        8,
    )
}

/// An async (buffered) 4 KiB write.
fn async_write(id: u64, process: u32, sector: u64) -> Request {
    Request::new(
        RequestId(id),
        ProcessId(process),
        Direction::Write,
        sector,
        8,
    )
}

fn priority(class: PriorityClass, level: u8) -> IoPriority {
    IoPriority::new(class, level).expect("level 0-7")
}

/// Dispatch one request, which must come.
fn next(cfq: &mut Cfq, now: Nanos) -> Request {
    match cfq.dispatch(now) {
        Dispatch::Request(request) => request,
        other => panic!("expected a request at {now}, got {other:?}"),
    }
}

fn finish(cfq: &mut Cfq, request: &Request, now: Nanos) {
    let completion = Completion {
        request: request.clone(),
        dispatch_time: 0,
        error: None,
    };
    cfq.complete(&completion, now);
}

/// What a fake process does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    /// Sync reads in sector order.
    Sequential,
    /// Sync reads far apart.
    Seeky,
    /// Buffered writes in sector order.
    Writeback,
    /// Sync reads of every other 4 KiB piece of one region (process 1 the even, 2 the odd).
    Interleaved,
}

/// A process of the fake workload: keeps one request outstanding, issuing the next `think`
/// after the last completes.
#[derive(Debug, Clone)]
struct FakeProcess {
    group: GroupId,
    priority: IoPriority,
    pattern: Pattern,
    think: Nanos,
    next_sector: u64,
}

/// A fake device and workload driving a CFQ with a fake clock.
struct Bench {
    cfq: Cfq,
    now: Nanos,
    service: Nanos,
    depth: usize,
    processes: BTreeMap<u32, FakeProcess>,
    in_flight: Vec<(Nanos, Request)>,
    issues: Vec<(Nanos, u32)>,
    next_id: u64,
    /// Every dispatch: when, and the process.
    dispatched: Vec<(Nanos, u32)>,
    /// Every `WaitUntil` answered with nothing in flight: when, and until when.
    idle_waits: Vec<(Nanos, Nanos)>,
}

impl Bench {
    fn new(cfq: Cfq, service: Nanos, depth: usize) -> Self {
        Self {
            cfq,
            now: 0,
            service,
            depth,
            processes: BTreeMap::new(),
            in_flight: Vec::new(),
            issues: Vec::new(),
            next_id: 1,
            dispatched: Vec::new(),
            idle_waits: Vec::new(),
        }
    }

    /// Add a process that issues its first request now.
    fn process(&mut self, id: u32, pattern: Pattern, group: GroupId, priority: IoPriority) {
        let next_sector = match pattern {
            Pattern::Interleaved => u64::from(id % 2) * 8,
            _ => u64::from(id) << 30,
        };
        let process = FakeProcess {
            group,
            priority,
            pattern,
            think: 0,
            next_sector,
        };
        self.processes.insert(id, process);
        self.issues.push((self.now, id));
    }

    fn issue(&mut self, id: u32) {
        let process = self.processes.get_mut(&id).expect("known process");
        let sector = process.next_sector;
        process.next_sector += match process.pattern {
            Pattern::Sequential | Pattern::Writeback => 8,
            Pattern::Seeky => 1 << 22,
            Pattern::Interleaved => 16,
        };
        let base = match process.pattern {
            Pattern::Writeback => async_write(self.next_id, id, sector),
            _ => read(self.next_id, id, sector),
        };
        let request = Request {
            group: process.group,
            priority: process.priority,
            submit_time: self.now,
            ..base
        };
        self.next_id += 1;
        self.cfq.insert(request, self.now);
    }

    /// Run until `end`.
    fn run_until(&mut self, end: Nanos) {
        while self.now < end {
            let wake = self.dispatch_all();
            let next = [
                self.in_flight.iter().map(|&(done, _)| done).min(),
                self.issues.iter().map(|&(at, _)| at).min(),
                wake,
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(at) = next else {
                break;
            };
            self.now = at.max(self.now);
            self.complete_due();
            self.issue_due();
        }
    }

    /// Dispatch while the device has room; the wake-up time if CFQ waits.
    fn dispatch_all(&mut self) -> Option<Nanos> {
        while self.in_flight.len() < self.depth {
            match self.cfq.dispatch(self.now) {
                Dispatch::Request(request) => {
                    self.dispatched.push((self.now, request.process.0));
                    self.in_flight.push((self.now + self.service, request));
                }
                Dispatch::WaitUntil(at) => {
                    if self.in_flight.is_empty() {
                        self.idle_waits.push((self.now, at));
                    }
                    return Some(at.max(self.now + 1));
                }
                Dispatch::Empty => return None,
            }
        }
        None
    }

    fn complete_due(&mut self) {
        let now = self.now;
        let (due, rest): (Vec<_>, Vec<_>) =
            self.in_flight.drain(..).partition(|&(done, _)| done <= now);
        self.in_flight = rest;
        for (_, request) in due {
            finish(&mut self.cfq, &request, now);
            let think = self.processes[&request.process.0].think;
            self.issues.push((now + think, request.process.0));
        }
    }

    fn issue_due(&mut self) {
        let now = self.now;
        let (due, rest): (Vec<_>, Vec<_>) = self.issues.drain(..).partition(|&(at, _)| at <= now);
        self.issues = rest;
        for (_, id) in due {
            self.issue(id);
        }
    }

    /// Runs of consecutive dispatches by one process: (process, first dispatch, first dispatch
    /// of the next run).
    fn turns(&self) -> Vec<(u32, Nanos, Nanos)> {
        let mut turns: Vec<(u32, Nanos, Nanos)> = Vec::new();
        for &(at, process) in &self.dispatched {
            match turns.last_mut() {
                Some(turn) if turn.0 == process => {}
                _ => {
                    if let Some(turn) = turns.last_mut() {
                        turn.2 = at;
                    }
                    turns.push((process, at, at));
                }
            }
        }
        turns
    }

    /// Requests dispatched per process.
    fn served(&self) -> BTreeMap<u32, usize> {
        let mut served = BTreeMap::new();
        for &(_, process) in &self.dispatched {
            *served.entry(process).or_insert(0) += 1;
        }
        served
    }
}

fn best_effort() -> IoPriority {
    IoPriority::default()
}

#[test]
fn defaults_match_the_kernel() {
    let defaults: Vec<_> = Cfq::TUNABLES
        .iter()
        .map(|def| (def.name, def.default, def.unit))
        .collect();
    assert_eq!(
        defaults,
        vec![
            ("quantum", 8, "requests"),
            ("fifo_expire_sync", 125, "ms"),
            ("fifo_expire_async", 250, "ms"),
            ("back_seek_max", 16_384, "KiB"),
            ("back_seek_penalty", 2, "factor"),
            ("slice_sync", 100, "ms"),
            ("slice_async", 40, "ms"),
            ("slice_async_rq", 2, "requests"),
            ("slice_idle", 8, "ms"),
            ("group_idle", 8, "ms"),
            ("group_isolation", 1, "bool"),
            ("low_latency", 1, "bool"),
            ("target_latency", 300, "ms"),
            ("version", 40_400, "kernel"),
        ]
    );
    let cfq = cfq(&[]);
    assert_eq!(cfq.name(), "cfq");
    assert_eq!(cfq.queued(), 0);
}

#[test]
fn bad_tunable_values_are_rejected() {
    for (name, value) in [
        ("quantum", "0"),
        ("slice_sync", "0"),
        ("back_seek_penalty", "0"),
        ("low_latency", "2"),
        ("slice_idle", "-1"),
        ("read_expire", "500"),
    ] {
        let settings = [(name.to_string(), value.to_string())];
        let error = Tunables::resolve("cfq", Cfq::TUNABLES, &settings).expect_err("rejected");
        assert!(error.to_string().contains(name), "{error}");
    }
}

#[test]
fn a_lone_reader_idles_for_its_next_request() {
    let mut cfq = cfq(&[]);
    assert_eq!(cfq.dispatch(0), Dispatch::Empty);
    cfq.insert(read(1, 1, 0), 0);
    let first = next(&mut cfq, 0);
    finish(&mut cfq, &first, ms(1));
    assert_eq!(
        cfq.dispatch(ms(1)),
        Dispatch::WaitUntil(ms(9)),
        "slice_idle = 8 ms"
    );
    // The next request within the wait goes straight out.
    cfq.insert(read(2, 1, 8), ms(1) + us(20));
    assert_eq!(next(&mut cfq, ms(1) + us(20)).id, RequestId(2));
    assert_eq!(cfq.queued(), 0);
}

#[test]
fn an_exited_process_is_not_waited_for() {
    let mut cfq = cfq(&[]);
    cfq.insert(read(1, 1, 0), 0);
    let first = next(&mut cfq, 0);
    finish(&mut cfq, &first, ms(1));
    assert_eq!(cfq.dispatch(ms(1)), Dispatch::WaitUntil(ms(9)));
    cfq.process_exited(ProcessId(1), ms(2));
    assert_eq!(cfq.dispatch(ms(2)), Dispatch::Empty);
}

/// Slice lengths of the first turns: from each turn's first completion to the next turn.
fn slices(bench: &Bench, count: usize) -> Vec<Nanos> {
    bench
        .turns()
        .iter()
        .take(count)
        .map(|&(_, start, end)| end - start - bench.service)
        .collect()
}

#[test]
fn sync_slices_last_180_100_40_ms_by_level() {
    for (level, slice) in [(0, ms(180)), (4, ms(100)), (7, ms(40))] {
        let mut bench = Bench::new(cfq(&[]), ms(1), 1);
        bench.process(
            1,
            Pattern::Sequential,
            GroupId::ROOT,
            priority(PriorityClass::BestEffort, level),
        );
        bench.process(2, Pattern::Sequential, GroupId::ROOT, best_effort());
        bench.run_until(ms(400));
        assert_eq!(bench.turns()[0].0, 1);
        assert_eq!(slices(&bench, 1), vec![slice], "level {level}");
    }
}

#[test]
fn async_slices_last_72_40_16_ms_by_level() {
    for (level, slice) in [(0, ms(72)), (4, ms(40)), (7, ms(16))] {
        // A large request budget, so the slice's time runs out first.
        let mut bench = Bench::new(cfq(&[("slice_async_rq", "1000")]), ms(1), 1);
        // Async queues are shared per class and level: the other writer is at level 5.
        let other = priority(PriorityClass::BestEffort, 5);
        bench.process(
            1,
            Pattern::Writeback,
            GroupId::ROOT,
            priority(PriorityClass::BestEffort, level),
        );
        bench.process(2, Pattern::Writeback, GroupId::ROOT, other);
        bench.run_until(ms(400));
        assert_eq!(bench.turns()[0].0, 1);
        assert_eq!(slices(&bench, 1), vec![slice], "level {level}");
    }
}

#[test]
fn low_latency_shrinks_slices_to_fit_target_latency() {
    let eight_readers = |settings: &[(&str, &str)]| {
        let mut bench = Bench::new(cfq(settings), us(500), 1);
        for id in 1..=8 {
            bench.process(id, Pattern::Sequential, GroupId::ROOT, best_effort());
        }
        bench.run_until(ms(400));
        slices(&bench, 2)
    };
    // Eight queues would take 800 ms for a round of 100 ms slices; the busy-queue average
    // rises to 6, then 8: 300/600 and 300/800 of 100 ms.
    assert_eq!(eight_readers(&[]), vec![ms(50), 37_500_000]);
    assert_eq!(
        eight_readers(&[("low_latency", "0")]),
        vec![ms(100), ms(100)]
    );
}

#[test]
fn a_think_time_longer_than_slice_idle_stops_idling() {
    let mut bench = Bench::new(cfq(&[]), ms(1), 1);
    bench.process(1, Pattern::Sequential, GroupId::ROOT, best_effort());
    bench.processes.get_mut(&1).expect("added").think = ms(20);
    bench.run_until(ms(1_000));
    // Idle waits while the think times are unknown (three samples each for the process and
    // for the service tree it lands on once it has no idle window), none after.
    assert!(!bench.idle_waits.is_empty());
    assert!(
        bench.idle_waits.iter().all(|&(at, _)| at < ms(250)),
        "{:?}",
        bench.idle_waits
    );
}

#[test]
fn seeky_queues_do_not_idle_while_others_wait() {
    let mut bench = Bench::new(cfq(&[]), ms(5), 1);
    for id in 1..=2 {
        bench.process(id, Pattern::Seeky, GroupId::ROOT, best_effort());
        bench.processes.get_mut(&id).expect("added").think = us(100);
    }
    bench.run_until(ms(2_000));
    // Once both histories are seeky (after a few requests), nobody idles.
    let late_waits = bench
        .idle_waits
        .iter()
        .filter(|&&(at, _)| at > ms(500))
        .count();
    assert_eq!(late_waits, 0, "{:?}", bench.idle_waits);
    let served = bench.served();
    assert!(served[&1].abs_diff(served[&2]) <= 25, "{served:?}");
}

#[test]
fn the_last_queue_on_the_noidle_tree_idles() {
    let mut bench = Bench::new(cfq(&[]), ms(5), 1);
    bench.process(1, Pattern::Seeky, GroupId::ROOT, best_effort());
    bench.processes.get_mut(&1).expect("added").think = us(100);
    bench.run_until(ms(1_000));
    let late_waits: Vec<_> = bench
        .idle_waits
        .iter()
        .filter(|&&(at, _)| at > ms(500))
        .collect();
    assert!(!late_waits.is_empty());
    assert!(
        late_waits.iter().all(|&&(at, until)| until - at == ms(8)),
        "{late_waits:?}"
    );
}

#[test]
fn slice_idle_zero_never_idles_on_a_queue() {
    let mut bench = Bench::new(cfq(&[("slice_idle", "0")]), ms(1), 1);
    for id in 1..=2 {
        bench.process(id, Pattern::Sequential, GroupId::ROOT, best_effort());
        bench.processes.get_mut(&id).expect("added").think = us(100);
    }
    bench.run_until(ms(1_000));
    assert!(bench.idle_waits.is_empty(), "{:?}", bench.idle_waits);
    // Without idling, a reader that runs dry loses the disk: the readers alternate.
    let turns = bench.turns();
    assert!(
        turns.len() * 2 > bench.dispatched.len(),
        "{} turns",
        turns.len()
    );
}

#[test]
fn group_idle_keeps_a_groups_last_queue() {
    let run = |settings: &[(&str, &str)]| {
        let (cfq, ids) = cfq_on(settings, true, 1, &[("a", 500), ("b", 500)]);
        let mut bench = Bench::new(cfq, ms(1), 1);
        bench.process(1, Pattern::Sequential, ids[0], best_effort());
        bench.process(2, Pattern::Sequential, ids[1], best_effort());
        bench.processes.get_mut(&1).expect("added").think = ms(2);
        bench.processes.get_mut(&2).expect("added").think = ms(2);
        bench.run_until(ms(1_000));
        bench
    };
    // Queue idling off, group idling on: each group's last queue is waited for (8 ms at most),
    // so the groups take turns of many requests.
    let grouped = run(&[("slice_idle", "0")]);
    assert!(!grouped.idle_waits.is_empty());
    assert!(grouped
        .idle_waits
        .iter()
        .all(|&(at, until)| until - at == ms(8)));
    assert!(
        grouped.turns().len() < 50,
        "{} turns",
        grouped.turns().len()
    );
    // Both off: the other group is served whenever one is empty.
    let ungrouped = run(&[("slice_idle", "0"), ("group_idle", "0")]);
    assert!(ungrouped.idle_waits.is_empty());
    assert!(
        ungrouped.turns().len() > 300,
        "{} turns",
        ungrouped.turns().len()
    );
}

#[test]
fn an_async_queue_expires_after_its_request_budget() {
    let mut cfq = cfq(&[]);
    // Level 4: 2 × slice_async_rq × (8 − 4) = 16 requests; level 7 has a budget of 4.
    // Requests 8 sectors apart, so that none merge.
    for id in 0..40 {
        cfq.insert(async_write(id, 1, id * 16), 0);
        let low = Request {
            priority: priority(PriorityClass::BestEffort, 7),
            ..async_write(100 + id, 2, (1 << 30) + id * 16)
        };
        cfq.insert(low, 0);
    }
    let mut order = Vec::new();
    let mut now = 0;
    for _ in 0..24 {
        let request = next(&mut cfq, now);
        order.push(request.process.0);
        now += us(100);
        finish(&mut cfq, &request, now);
    }
    let expected: Vec<u32> = [vec![1; 16], vec![2; 4], vec![1; 4]].concat();
    assert_eq!(order, expected);
}

#[test]
fn fifo_expiry_overrides_sector_order_once_per_slice() {
    let mut cfq = cfq(&[]);
    cfq.insert(read(1, 1, 900_000), 0);
    cfq.insert(read(2, 1, 500_000), ms(1));
    cfq.insert(read(3, 1, 900_100), ms(2));
    cfq.insert(read(4, 1, 10), ms(3));
    // Without expiry the head (at sector 0) would take sector 10 first. At 200 ms request 1
    // is past fifo_expire_sync (125 ms) and goes first; then sector order again from there
    // (3, then wrapping to the lowest, 4), although request 2 has waited longest.
    let now = ms(200);
    let order: Vec<u64> = (0..4)
        .map(|_| {
            let request = next(&mut cfq, now);
            finish(&mut cfq, &request, now);
            request.id.0
        })
        .collect();
    assert_eq!(order, vec![1, 3, 4, 2]);
}

#[test]
fn without_expiry_a_queue_goes_in_sector_order() {
    let mut cfq = cfq(&[]);
    for (id, sector) in [(1, 900_000), (2, 500_000), (3, 900_100), (4, 10)] {
        cfq.insert(read(id, 1, sector), 0);
    }
    let order: Vec<u64> = (0..4)
        .map(|_| {
            let request = next(&mut cfq, ms(1));
            finish(&mut cfq, &request, ms(1));
            request.id.0
        })
        .collect();
    // From sector 0: 10; then forward 500 000, 900 000, 900 100.
    assert_eq!(order, vec![4, 2, 1, 3]);
}

#[test]
fn cooperating_readers_are_served_as_one_instead_of_idling() {
    let run = |pattern: Pattern| {
        let mut bench = Bench::new(cfq(&[]), us(200), 1);
        for id in 1..=2 {
            bench.process(id, pattern, GroupId::ROOT, best_effort());
            bench.processes.get_mut(&id).expect("added").think = us(20);
        }
        bench.run_until(ms(500));
        bench
    };
    // Two processes reading one region in alternate 4 KiB pieces: when one runs dry the
    // other's next request is at the head, so CFQ hands over instead of idling and merges the
    // two queues; from then on they go request by request.
    let interleaved = run(Pattern::Interleaved);
    assert!(
        interleaved.idle_waits.is_empty(),
        "{:?}",
        interleaved.idle_waits
    );
    assert!(interleaved.turns().len() * 10 > interleaved.dispatched.len() * 9);
    // The same readers in distant regions each get slices, idling between their requests.
    let apart = run(Pattern::Sequential);
    assert!(!apart.idle_waits.is_empty());
    assert!(apart.turns().len() < 10, "{} turns", apart.turns().len());
}

#[test]
fn merges_stay_within_a_queue() {
    let mut cfq = cfq(&[]);
    let rt = priority(PriorityClass::RealTime, 4);
    cfq.insert(read(1, 1, 0), 0);
    cfq.insert(async_write(2, 1, 1_000), 0);
    // Another process's sync read never joins process 1's queue ...
    assert_eq!(cfq.insert(read(3, 2, 8), 0), ioslice_core::Inserted::Queued);
    assert!(!cfq.allow_merge(&read(1, 1, 0), &read(3, 2, 8)));
    // ... but writeback of one group and priority shares one async queue, whoever issued it.
    assert!(cfq.allow_merge(&async_write(2, 1, 1_000), &async_write(4, 3, 1_008)));
    let merged = cfq.insert(async_write(4, 3, 1_008), 0);
    assert_eq!(merged, ioslice_core::Inserted::Merged(RequestId(2)));
    let other_priority = Request {
        priority: rt,
        ..async_write(5, 3, 1_016)
    };
    assert_eq!(
        cfq.insert(other_priority, 0),
        ioslice_core::Inserted::Queued
    );
}

#[test]
fn groups_share_by_weight_in_time_mode() {
    let (cfq, ids) = cfq_on(&[], true, 1, &[("a", 200), ("b", 800)]);
    let mut bench = Bench::new(cfq, ms(1), 1);
    bench.process(1, Pattern::Sequential, ids[0], best_effort());
    bench.process(2, Pattern::Sequential, ids[1], best_effort());
    bench.run_until(ms(20_000));
    let served = bench.served();
    let ratio = served[&2] as f64 / served[&1] as f64;
    assert!((3.8..4.2).contains(&ratio), "{served:?}: {ratio}");
}

#[test]
fn groups_share_by_weight_in_iops_mode() {
    // Queueing device, slice_idle=0: IOPS mode, group_idle keeps each group's turn.
    let (cfq, ids) = cfq_on(&[("slice_idle", "0")], true, 8, &[("a", 200), ("b", 800)]);
    let mut bench = Bench::new(cfq, ms(1), 8);
    for id in 1..=4 {
        bench.process(id, Pattern::Seeky, ids[0], best_effort());
        bench.process(10 + id, Pattern::Seeky, ids[1], best_effort());
    }
    bench.run_until(ms(20_000));
    let (mut a, mut b) = (0, 0);
    for (process, count) in bench.served() {
        if process < 10 {
            a += count;
        } else {
            b += count;
        }
    }
    let ratio = b as f64 / a as f64;
    assert!((3.6..4.4).contains(&ratio), "a {a}, b {b}: {ratio}");
}

#[test]
fn a_sync_read_preempts_buffered_writeback() {
    let mut cfq = cfq(&[]);
    for id in 0..20 {
        cfq.insert(async_write(id, 1, id * 8), 0);
    }
    let write = next(&mut cfq, 0);
    assert_eq!(write.direction, Direction::Write);
    finish(&mut cfq, &write, us(100));
    cfq.insert(read(100, 2, 1 << 30), us(100));
    assert_eq!(next(&mut cfq, us(100)).id, RequestId(100));
}

#[test]
fn real_time_preempts_best_effort_but_not_the_reverse() {
    let rt = priority(PriorityClass::RealTime, 4);
    let mut cfq = cfq(&[]);
    cfq.insert(read(1, 1, 0), 0);
    cfq.insert(read(2, 1, 16), 0);
    let first = next(&mut cfq, 0);
    finish(&mut cfq, &first, ms(1));
    cfq.insert(
        Request {
            priority: rt,
            ..read(3, 2, 1 << 30)
        },
        ms(1),
    );
    assert_eq!(next(&mut cfq, ms(1)).id, RequestId(3), "RT preempts");

    let mut cfq = self::cfq(&[]);
    cfq.insert(
        Request {
            priority: rt,
            ..read(1, 1, 0)
        },
        0,
    );
    cfq.insert(
        Request {
            priority: rt,
            ..read(2, 1, 16)
        },
        0,
    );
    let first = next(&mut cfq, 0);
    finish(&mut cfq, &first, ms(1));
    cfq.insert(read(3, 2, 1 << 30), ms(1));
    assert_eq!(next(&mut cfq, ms(1)).id, RequestId(2), "BE waits");
}

#[test]
fn the_idle_class_gets_the_disk_only_when_nobody_else_wants_it() {
    let idle = priority(PriorityClass::Idle, 7);
    let mut bench = Bench::new(cfq(&[]), ms(1), 4);
    bench.process(1, Pattern::Sequential, GroupId::ROOT, best_effort());
    bench.process(2, Pattern::Sequential, GroupId::ROOT, idle);
    bench.processes.get_mut(&1).expect("added").think = ms(50);
    bench.run_until(ms(2_000));
    // The IDLE reader gets the gaps, but never while the BE reader has a request.
    let served = bench.served();
    assert!(served[&2] > served[&1], "{served:?}");
    let mut cfq = cfq(&[]);
    cfq.insert(
        Request {
            priority: idle,
            ..read(1, 2, 0)
        },
        0,
    );
    cfq.insert(read(2, 1, 1 << 30), 0);
    assert_eq!(next(&mut cfq, 0).id, RequestId(2));
}

#[test]
fn quantum_caps_a_queue_unless_it_is_alone() {
    // Alone: no limit.
    let (mut cfq, _) = cfq_on(&[], true, 32, &[]);
    for id in 0..20 {
        cfq.insert(read(id, 1, id * 16), 0);
    }
    let alone = (0..20)
        .take_while(|_| matches!(cfq.dispatch(0), Dispatch::Request(_)))
        .count();
    assert_eq!(alone, 20);
    // With another busy queue: quantum/2 = 4 until the slice shows it can afford more.
    let (mut cfq, _) = cfq_on(&[], true, 32, &[]);
    for id in 0..20 {
        cfq.insert(read(id, 1, id * 16), 0);
        cfq.insert(read(100 + id, 2, (1 << 30) + id * 16), 0);
    }
    let capped = (0..20)
        .take_while(|_| matches!(cfq.dispatch(0), Dispatch::Request(_)))
        .count();
    assert_eq!(capped, 4);
}

#[test]
fn a_non_rotational_device_defaults_to_no_idling() {
    let (mut ssd, _) = cfq_on(&[], false, 32, &[]);
    ssd.insert(read(1, 1, 0), 0);
    let first = next(&mut ssd, 0);
    finish(&mut ssd, &first, us(100));
    assert_eq!(ssd.dispatch(us(100)), Dispatch::Empty);
}

/// One random operation on the policy.
#[derive(Debug, Clone)]
enum Op {
    Insert {
        process: u32,
        group: usize,
        class: usize,
        level: u8,
        sector: u64,
        sectors: u32,
        kind: usize,
    },
    Dispatch,
    Complete(usize),
    Advance(u64),
    Exit(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u32..6, 0usize..3, 0usize..3, 0u8..8, 0u64..64, 1u32..4, 0usize..3).prop_map(
            |(process, group, class, level, sector, sectors, kind)| Op::Insert {
                process,
                group,
                class,
                level,
                sector: sector * 8 + u64::from(process) * 1_000_000,
                sectors: sectors * 8,
                kind,
            }
        ),
        4 => Just(Op::Dispatch),
        3 => (0usize..8).prop_map(Op::Complete),
        2 => (1u64..20_000).prop_map(|us| Op::Advance(us * 1_000)),
        1 => (1u32..6).prop_map(Op::Exit),
    ]
}

/// Checks every dispatched id was inserted and not yet dispatched.
fn take_ids(request: &Request, outstanding: &mut BTreeSet<u64>) {
    for id in request.ids() {
        assert!(
            outstanding.remove(&id.0),
            "id {} dispatched twice or never inserted",
            id.0
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_request_is_dispatched_exactly_once(
        ops in prop::collection::vec(op(), 1..300),
        rotational in any::<bool>(),
        depth in 1usize..6,
        settings in prop::sample::select(vec!["", "slice_idle=0", "slice_idle=0,group_idle=0", "low_latency=0,quantum=1"]),
    ) {
        let settings: Vec<(&str, &str)> = settings
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.split_once('=').expect("name=value"))
            .collect();
        let (mut cfq, groups) = cfq_on(&settings, rotational, depth, &[("a", 100), ("a/b", 900), ("c", 1000)]);
        let groups = [GroupId::ROOT, groups[1], groups[2]];
        let classes = [PriorityClass::RealTime, PriorityClass::BestEffort, PriorityClass::Idle];
        let mut now = 0;
        let mut next_id = 1;
        let mut outstanding = BTreeSet::new();
        let mut in_flight: Vec<Request> = Vec::new();
        let mut exited = BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert { process, group, class, level, sector, sectors, kind } => {
                    if exited.contains(&process) {
                        continue;
                    }
                    let direction = if kind == 0 { Direction::Read } else { Direction::Write };
                    let request = Request {
                        id: RequestId(next_id),
                        process: ProcessId(process),
                        group: groups[group],
                        priority: priority(classes[class], level),
                        direction,
                        sync: kind != 2,
                        sector,
                        sectors,
                        submit_time: now,
                        merged: Vec::new(),
                    };
                    outstanding.insert(next_id);
                    next_id += 1;
                    cfq.insert(request, now);
                }
                Op::Dispatch => {
                    if in_flight.len() < depth {
                        if let Dispatch::Request(request) = cfq.dispatch(now) {
                            take_ids(&request, &mut outstanding);
                            in_flight.push(request);
                        }
                    }
                }
                Op::Complete(index) => {
                    if !in_flight.is_empty() {
                        let request = in_flight.remove(index % in_flight.len());
                        finish(&mut cfq, &request, now);
                    }
                }
                Op::Advance(dt) => now += dt,
                Op::Exit(process) => {
                    if !in_flight.iter().any(|r| r.process.0 == process) && !exited.contains(&process) {
                        exited.insert(process);
                        cfq.process_exited(ProcessId(process), now);
                    }
                }
            }
            prop_assert_eq!(cfq.queued() == 0, outstanding.is_empty());
            prop_assert!(cfq.queued() <= outstanding.len());
        }
        // Drain: everything goes out, waiting only on CFQ's own timers or completions.
        for _ in 0..100_000 {
            if outstanding.is_empty() && in_flight.is_empty() {
                break;
            }
            match cfq.dispatch(now) {
                Dispatch::Request(request) if in_flight.len() < depth => {
                    take_ids(&request, &mut outstanding);
                    in_flight.push(request);
                }
                Dispatch::Request(request) => {
                    // The device is full: finish the oldest first, then send this one.
                    let oldest = in_flight.remove(0);
                    now += 1_000;
                    finish(&mut cfq, &oldest, now);
                    take_ids(&request, &mut outstanding);
                    in_flight.push(request);
                }
                Dispatch::WaitUntil(at) => {
                    prop_assert!(at > now, "a wake-up in the past");
                    now = at;
                }
                Dispatch::Empty => {
                    prop_assert!(!in_flight.is_empty(), "{} requests stuck", outstanding.len());
                    let oldest = in_flight.remove(0);
                    now += 1_000;
                    finish(&mut cfq, &oldest, now);
                }
            }
        }
        prop_assert!(outstanding.is_empty(), "{} never dispatched", outstanding.len());
        prop_assert!(in_flight.is_empty());
        prop_assert_eq!(cfq.queued(), 0);
    }
}

/// Seeky readers (and in one case a sequential reader too), each with one request outstanding
/// and a short think time, so that its next request comes just after CFQ has chosen the next
/// queue, on a device taking one request at a time. Every reader must get at least 60 % of an
/// equal share of the dispatches and never wait more than a second. They used to starve: the
/// spent seeky queue stayed active until its request completed, so each new request preempted
/// it and jumped the tree (two readers took turns for ever), and the workload slice, paused
/// between the expiry and the next choice, never ran out (the sequential reader never came
/// back).
#[test]
fn many_seeky_readers_are_all_served_in_turn() {
    for (seeky, sequential) in [(4_u32, false), (8, false), (6, true)] {
        let mut bench = Bench::new(cfq(&[]), ms(8), 1);
        let readers = seeky + u32::from(sequential);
        for id in 1..=readers {
            let pattern = if id > seeky {
                Pattern::Sequential
            } else {
                Pattern::Seeky
            };
            bench.process(id, pattern, GroupId::ROOT, best_effort());
            bench.processes.get_mut(&id).expect("added").think = us(20);
        }
        bench.run_until(ms(5_000));
        let case = format!("{seeky} seeky readers, sequential: {sequential}");
        let served = bench.served();
        let fair = served.values().sum::<usize>() / readers as usize;
        for id in 1..=readers {
            let count = served.get(&id).copied().unwrap_or(0);
            assert!(count * 10 >= fair * 6, "{case}, reader {id}: {served:?}");
        }
        let mut last: BTreeMap<u32, Nanos> = BTreeMap::new();
        for &(at, process) in &bench.dispatched {
            let previous = last.insert(process, at).unwrap_or(0);
            assert!(
                at - previous <= ms(1_000),
                "{case}: reader {process} waited from {previous} to {at}"
            );
        }
        for id in 1..=readers {
            let at = last.get(&id).copied().unwrap_or(0);
            assert!(
                at + ms(1_000) >= bench.now,
                "{case}: reader {id} last at {at}"
            );
        }
    }
}
