//! BFQ's behaviour: weighted shares of backlogged queues and groups over short windows, at
//! several device depths and hierarchy depths; classes; idling; strict guarantees; the
//! tunables and their errors; every request completed exactly once.

mod common;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use ioslice_core::policy::bfq::Bfq;
use ioslice_core::time::{ms, us};
use ioslice_core::{
    Completion, Direction, Dispatch, GroupId, GroupTree, Inserted, IoPriority, Nanos,
    PriorityClass, ProcessId, Request, RequestId, Scheduler, SchedulerContext,
};
use proptest::prelude::*;

/// One process: its group and priority, and how many requests it keeps outstanding.
#[derive(Debug, Clone, Copy)]
struct Stream {
    group: GroupId,
    priority: IoPriority,
    outstanding: usize,
}

/// A fake device: `depth` slots, each request done `service` after it was sent, in order.
struct Bench {
    policy: Bfq,
    now: Nanos,
    depth: usize,
    service: Nanos,
    streams: Vec<Stream>,
    /// Per stream: requests inserted and not completed, next sector.
    pending: Vec<usize>,
    position: Vec<u64>,
    in_flight: VecDeque<(Nanos, Request)>,
    next_id: u64,
    /// Every dispatch: stream, sectors.
    log: Vec<(usize, u64)>,
    completed: BTreeSet<u64>,
}

const REQUEST_SECTORS: u32 = 64;

impl Bench {
    fn new(
        settings: &[(&str, &str)],
        groups: GroupTree,
        streams: Vec<Stream>,
        depth: usize,
    ) -> Self {
        let tunables = common::tunables("bfq", Bfq::TUNABLES, settings);
        let context = SchedulerContext {
            groups,
            rotational: true,
            queue_depth: depth,
        };
        let policy = Bfq::new(&tunables, &context).expect("valid configuration");
        let count = streams.len();
        Self {
            policy,
            now: 0,
            depth,
            service: us(100),
            streams,
            pending: vec![0; count],
            // Far apart on disk, so each stream is sequential on its own.
            position: (0..count as u64).map(|i| i << 30).collect(),
            in_flight: VecDeque::new(),
            next_id: 0,
            log: Vec::new(),
            completed: BTreeSet::new(),
        }
    }

    fn refill(&mut self) {
        for index in 0..self.streams.len() {
            let stream = self.streams[index];
            while self.pending[index] < stream.outstanding {
                let request = Request {
                    group: stream.group,
                    priority: stream.priority,
                    submit_time: self.now,
                    ..Request::new(
                        RequestId(self.next_id),
                        ProcessId(index as u32 + 1),
                        Direction::Read,
                        self.position[index],
                        REQUEST_SECTORS,
                    )
                };
                self.next_id += 1;
                self.position[index] += u64::from(REQUEST_SECTORS) + 8; // no merging
                assert_eq!(self.policy.insert(request, self.now), Inserted::Queued);
                self.pending[index] += 1;
            }
        }
    }

    /// Run until `dispatches` requests went to the device.
    fn run(&mut self, dispatches: usize) {
        while self.log.len() < dispatches {
            self.refill();
            let mut wait = None;
            while self.in_flight.len() < self.depth {
                match self.policy.dispatch(self.now) {
                    Dispatch::Request(request) => {
                        let stream = request.process.0 as usize - 1;
                        self.log.push((stream, u64::from(request.sectors)));
                        let done =
                            self.now.max(self.in_flight.back().map_or(0, |r| r.0)) + self.service;
                        self.in_flight.push_back((done, request));
                    }
                    Dispatch::WaitUntil(t) => {
                        wait = Some(t);
                        break;
                    }
                    Dispatch::Empty => break,
                }
            }
            self.advance(wait);
        }
    }

    fn advance(&mut self, wait: Option<Nanos>) {
        let next_done = self.in_flight.front().map(|r| r.0);
        match (next_done, wait) {
            (Some(done), Some(t)) if t < done => self.now = t.max(self.now),
            (Some(_), _) => self.complete_next(),
            (None, Some(t)) => self.now = t.max(self.now),
            (None, None) => panic!("stalled at {} with requests queued", self.now),
        }
    }

    fn complete_next(&mut self) {
        let (done, request) = self.in_flight.pop_front().expect("in flight");
        self.now = self.now.max(done);
        for id in request.ids() {
            assert!(self.completed.insert(id.0), "{id:?} completed twice");
        }
        let stream = request.process.0 as usize - 1;
        self.pending[stream] -= 1 + request.merged.len();
        let completion = Completion {
            request,
            dispatch_time: done - self.service,
            error: None,
        };
        self.policy.complete(&completion, self.now);
    }

    /// The largest relative error of any stream's share against `expected`, over every window
    /// of `window` consecutive dispatched sectors (after `skip` sectors of warm-up).
    fn worst_share_error(&self, bucket: &[usize], expected: &[f64], window: u64, skip: u64) -> f64 {
        let mut sectors: Vec<u64> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        let mut seen = 0;
        for &(stream, s) in &self.log {
            seen += s;
            if seen > skip {
                sectors.push(s);
                owner.push(bucket[stream]);
            }
        }
        let per_window = (window / u64::from(REQUEST_SECTORS)) as usize;
        let mut worst: f64 = 0.0;
        let mut start = 0;
        while start + per_window <= owner.len() {
            let mut got = vec![0u64; expected.len()];
            for i in start..start + per_window {
                got[owner[i]] += sectors[i];
            }
            let total: u64 = got.iter().sum();
            for (g, e) in got.iter().zip(expected) {
                let share = *g as f64 / total as f64;
                worst = worst.max((share - e).abs() / e);
            }
            start += per_window / 4;
        }
        worst
    }
}

fn be(level: u8) -> IoPriority {
    IoPriority::new(PriorityClass::BestEffort, level).expect("level")
}

fn stream(group: GroupId, priority: IoPriority, outstanding: usize) -> Stream {
    Stream {
        group,
        priority,
        outstanding,
    }
}

/// max_budget fixed so windows are a known number of budgets; no weight raising.
const FAIR: &[(&str, &str)] = &[("low_latency", "0"), ("max_budget", "1024")];
/// Entities whose shares are checked together: each stream's bucket, and each bucket's share.
struct Shares<'a> {
    bucket: &'a [usize],
    expected: &'a [f64],
    /// The window, in budgets of the entity with the smallest share.
    budgets_of_smallest: u64,
}

/// Run backlogged streams and check that, in every window in which the smallest share gets
/// `budgets_of_smallest` budgets, each bucket's share is within ±5% of its weight share.
fn check_shares(groups: GroupTree, streams: Vec<Stream>, shares: Shares, depth: usize) -> Bench {
    let mut bench = Bench::new(FAIR, groups, streams, depth);
    bench.run(40_000);
    let smallest = shares.expected.iter().copied().fold(f64::MAX, f64::min);
    let window = (1024.0 * shares.budgets_of_smallest as f64 / smallest) as u64;
    let worst = bench.worst_share_error(shares.bucket, shares.expected, window, 1024 * 20);
    assert!(
        worst <= 0.05,
        "a share strayed {:.1}% from its weight in windows of {window} sectors",
        worst * 100.0
    );
    bench
}

#[test]
fn queues_share_by_level_weight_at_device_depths_1_and_8() {
    // BE0, BE2, BE4, BE6: weights 80, 60, 40, 20.
    let expected = [0.4, 0.3, 0.2, 0.1];
    for depth in [1, 8] {
        let streams = [0, 2, 4, 6]
            .iter()
            .map(|&level| stream(GroupId::ROOT, be(level), 4))
            .collect();
        let shares = Shares {
            bucket: &[0, 1, 2, 3],
            expected: &expected,
            budgets_of_smallest: 4,
        };
        check_shares(GroupTree::default(), streams, shares, depth);
    }
}

#[test]
fn groups_share_by_weight_whatever_their_number_of_queues() {
    let mut groups = GroupTree::default();
    let mut ids = Vec::new();
    for (name, weight) in [("a", 100), ("b", 200), ("c", 300)] {
        let id = groups.ensure(name).expect("name");
        groups.set_weight(id, weight).expect("weight");
        ids.push(id);
    }
    // a has three queues, b two, c one.
    let streams = vec![
        stream(ids[0], be(4), 4),
        stream(ids[0], be(4), 4),
        stream(ids[0], be(4), 4),
        stream(ids[1], be(4), 4),
        stream(ids[1], be(4), 4),
        stream(ids[2], be(4), 4),
    ];
    let shares = Shares {
        bucket: &[0, 0, 0, 1, 1, 2],
        expected: &[1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0],
        budgets_of_smallest: 8,
    };
    let bench = check_shares(groups, streams, shares, 4);
    // Inside each group its queues share equally.
    let mut totals = [0u64; 6];
    for &(stream, sectors) in &bench.log {
        totals[stream] += sectors;
    }
    for (first, second) in [(0, 1), (0, 2), (3, 4)] {
        let ratio = totals[first] as f64 / totals[second] as f64;
        assert!((ratio - 1.0).abs() <= 0.05, "{totals:?}");
    }
}

#[test]
fn nested_groups_share_hierarchically_three_levels_deep() {
    let mut groups = GroupTree::default();
    let weights = [
        ("a", 100),
        ("a/x", 300),
        ("a/x/deep", 100),
        ("a/y", 100),
        ("b", 100),
    ];
    let mut id = BTreeMap::new();
    for (path, weight) in weights {
        let g = groups.ensure(path).expect("path");
        groups.set_weight(g, weight).expect("weight");
        id.insert(path, g);
    }
    // a/x holds a queue of its own (weight 40) beside its child group deep (weight 100).
    let streams = vec![
        stream(id["a/x"], be(4), 4),
        stream(id["a/x/deep"], be(4), 4),
        stream(id["a/y"], be(4), 4),
        stream(id["b"], be(4), 4),
    ];
    let x = 0.5 * 0.75;
    let shares = Shares {
        bucket: &[0, 1, 2, 3],
        expected: &[x * 40.0 / 140.0, x * 100.0 / 140.0, 0.5 * 0.25, 0.5],
        // Each level of nesting adds up to a budget of lag: a longer window than flat.
        budgets_of_smallest: 24,
    };
    check_shares(groups, streams, shares, 1);
}

#[test]
fn real_time_is_served_before_best_effort_and_idle_only_when_both_are_idle() {
    let rt = IoPriority::new(PriorityClass::RealTime, 4).expect("level");
    let idle = IoPriority::new(PriorityClass::Idle, 7).expect("level");
    let streams = vec![
        stream(GroupId::ROOT, rt, 4),
        stream(GroupId::ROOT, be(0), 4),
    ];
    let mut bench = Bench::new(FAIR, GroupTree::default(), streams, 4);
    bench.run(2000);
    let best_effort = bench.log.iter().filter(|(s, _)| *s == 1).count();
    assert_eq!(best_effort, 0, "a backlogged RT queue keeps BE out");

    let streams = vec![
        stream(GroupId::ROOT, be(7), 4),
        stream(GroupId::ROOT, idle, 4),
    ];
    let mut bench = Bench::new(FAIR, GroupTree::default(), streams, 1);
    bench.run(10_000);
    let idle_served = bench.log.iter().filter(|(s, _)| *s == 1).count();
    // 10000 requests of 100 µs = 1 s: the IDLE class gets one request per 200 ms, no more.
    assert!(
        (4..=6).contains(&idle_served),
        "IDLE served {idle_served} times in 1 s"
    );
}

#[test]
fn a_lone_reader_is_idled_for_8_ms_or_20_ms_while_weight_raised() {
    for (settings, idle) in [(&[("low_latency", "0")][..], ms(8)), (&[][..], ms(20))] {
        let streams = vec![stream(GroupId::ROOT, be(4), 1)];
        let mut bench = Bench::new(settings, GroupTree::default(), streams, 1);
        bench.refill();
        let Dispatch::Request(request) = bench.policy.dispatch(0) else {
            panic!("a lone request goes out at once");
        };
        bench.in_flight.push_back((us(100), request));
        bench.complete_next();
        // Nothing queued: BFQ idles for the reader's next request (a new queue is raised).
        assert_eq!(
            bench.policy.dispatch(us(100)),
            Dispatch::WaitUntil(us(100) + idle)
        );
    }
}

#[test]
fn strict_guarantees_keep_one_request_at_the_device() {
    let streams = vec![
        stream(GroupId::ROOT, be(4), 8),
        stream(GroupId::ROOT, be(4), 8),
    ];
    let mut bench = Bench::new(
        &[("strict_guarantees", "1")],
        GroupTree::default(),
        streams,
        8,
    );
    bench.refill();
    assert!(matches!(bench.policy.dispatch(0), Dispatch::Request(_)));
    assert_eq!(bench.policy.dispatch(0), Dispatch::Empty, "one at a time");
}

#[test]
fn tunables_keep_the_kernel_names_and_defaults_and_bad_ones_are_refused() {
    let defaults: BTreeMap<&str, i64> = Bfq::TUNABLES.iter().map(|d| (d.name, d.default)).collect();
    assert_eq!(defaults["slice_idle"], 8);
    assert_eq!(defaults["slice_idle_us"], 8000);
    assert_eq!(defaults["timeout_sync"], 125);
    assert_eq!(defaults["max_budget"], 0);
    assert_eq!(defaults["fifo_expire_sync"], 125);
    assert_eq!(defaults["fifo_expire_async"], 250);
    assert_eq!(defaults["back_seek_max"], 16_384);
    assert_eq!(defaults["back_seek_penalty"], 2);
    assert_eq!(defaults["low_latency"], 1);
    assert_eq!(defaults["strict_guarantees"], 0);

    let context = SchedulerContext::default();
    let conflicting = common::tunables(
        "bfq",
        Bfq::TUNABLES,
        &[("slice_idle", "8"), ("slice_idle_us", "2000")],
    );
    let message = Bfq::new(&conflicting, &context)
        .expect_err("conflict")
        .to_string();
    assert!(
        message.contains("slice_idle=8") && message.contains("slice_idle_us=2000"),
        "{message}"
    );
    let agreeing = common::tunables(
        "bfq",
        Bfq::TUNABLES,
        &[("slice_idle", "2"), ("slice_idle_us", "2000")],
    );
    assert!(Bfq::new(&agreeing, &context).is_ok());

    let mut groups = GroupTree::default();
    let heavy = groups.ensure("heavy").expect("name");
    groups.set_weight(heavy, 5000).expect("a cgroup v2 weight");
    let context = SchedulerContext {
        groups,
        ..SchedulerContext::default()
    };
    let message = Bfq::new(&common::tunables("bfq", Bfq::TUNABLES, &[]), &context)
        .expect_err("bfq takes 1..=1000")
        .to_string();
    assert!(
        message.contains("5000") && message.contains("'heavy'") && message.contains("1..=1000"),
        "{message}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Random mixes of classes, levels, groups and depths: every request is dispatched and
    /// completed exactly once and nothing stalls.
    #[test]
    fn every_request_completes_exactly_once(
        specs in prop::collection::vec((0u8..3, 0u8..8, 0usize..3, 1usize..6), 1..6),
        depth in 1usize..6,
        low_latency in any::<bool>(),
    ) {
        let mut groups = GroupTree::default();
        let ids = [GroupId::ROOT, groups.ensure("g").expect("g"), groups.ensure("g/h").expect("h")];
        let streams: Vec<Stream> = specs
            .iter()
            .map(|&(class, level, group, outstanding)| {
                let class = [PriorityClass::RealTime, PriorityClass::BestEffort, PriorityClass::Idle][class as usize];
                stream(ids[group], IoPriority::new(class, level).expect("level"), outstanding)
            })
            .collect();
        let settings: &[(&str, &str)] = if low_latency { &[] } else { &[("low_latency", "0")] };
        let mut bench = Bench::new(settings, groups, streams, depth);
        bench.run(600);
        // Stop refilling and drain everything.
        let mut guard = 0;
        while bench.policy.queued() > 0 || !bench.in_flight.is_empty() {
            let mut wait = None;
            while bench.in_flight.len() < bench.depth {
                match bench.policy.dispatch(bench.now) {
                    Dispatch::Request(request) => {
                        let done = bench.now + bench.service;
                        bench.in_flight.push_back((done, request));
                    }
                    Dispatch::WaitUntil(t) => { wait = Some(t); break; }
                    Dispatch::Empty => break,
                }
            }
            bench.advance(wait);
            guard += 1;
            prop_assert!(guard < 100_000, "drain did not finish");
        }
        prop_assert_eq!(bench.completed.len() as u64, bench.next_id);
    }
}
