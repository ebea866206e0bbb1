//! The limit layer around noop, with a fake clock: exact release times for byte and request
//! limits, bursts, hierarchy, priorities kept inside a limited group, and a proptest that
//! nothing is lost and no window exceeds its rate plus one burst.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::limit::{wrap, LimitLayer, Limits, Throttle};
use ioslice_core::policy::noop::Noop;
use ioslice_core::time::{ms, SECOND};
use ioslice_core::{
    Completion, Direction, Dispatch, GroupId, GroupTree, Inserted, IoPriority, Nanos,
    PriorityClass, ProcessId, Request, RequestId, Scheduler,
};
use proptest::prelude::*;

use common::{account, grouped_read, tunables};

/// 4 KiB requests at one per millisecond.
const FOUR_K_PER_MS: u64 = 4096 * 1000;

fn noop() -> Box<dyn Scheduler> {
    Box::new(Noop::new(&tunables("noop", Noop::TUNABLES, &[])))
}

/// A tree with these groups (created in order) and limits.
fn tree(groups: &[(&str, Limits)]) -> GroupTree {
    let mut tree = GroupTree::default();
    for (path, limits) in groups {
        let id = tree.ensure(path).expect("valid path");
        tree.set_limits(id, *limits);
    }
    tree
}

fn read_bps(rate: u64) -> Limits {
    Limits {
        read_bps: Some(rate),
        ..Limits::default()
    }
}

/// The layer around noop for these groups.
fn layer(groups: &[(&str, Limits)]) -> (LimitLayer, GroupTree) {
    let tree = tree(groups);
    (LimitLayer::new(noop(), &tree), tree)
}

fn be(level: u8) -> IoPriority {
    IoPriority::new(PriorityClass::BestEffort, level).expect("level")
}

fn rt(level: u8) -> IoPriority {
    IoPriority::new(PriorityClass::RealTime, level).expect("level")
}

/// Dispatch until nothing is left or `until` passes, completing every request at once (an
/// infinitely fast device); the clock jumps to each `WaitUntil`. Returns (time, request).
fn drive(policy: &mut dyn Scheduler, mut now: Nanos, until: Nanos) -> Vec<(Nanos, Request)> {
    let mut out = Vec::new();
    while now <= until {
        match policy.dispatch(now) {
            Dispatch::Request(request) => {
                let completion = Completion {
                    request: request.clone(),
                    dispatch_time: now,
                    error: None,
                };
                policy.complete(&completion, now);
                out.push((now, request));
            }
            Dispatch::WaitUntil(at) => {
                assert!(at > now, "asked to wait until {at} at {now}");
                now = at;
            }
            Dispatch::Empty => break,
        }
    }
    out
}

fn times(released: &[(Nanos, Request)]) -> Vec<Nanos> {
    released.iter().map(|(t, _)| *t).collect()
}

#[test]
fn a_byte_limit_releases_one_burst_at_once_then_one_request_per_quantum() {
    let (mut layer, groups) = layer(&[("g", read_bps(FOUR_K_PER_MS))]);
    let g = groups.find("g").expect("g");
    for id in 0..150 {
        assert_eq!(
            layer.insert(grouped_read(id, 1, g, be(4)), 0),
            Inserted::Queued
        );
    }
    assert_eq!((layer.queued(), layer.held()), (150, 150));
    let released = drive(&mut layer, 0, SECOND);
    // 100 ms of burst is 100 requests at the start; then one every millisecond, exactly.
    let expected: Vec<Nanos> = (0..150).map(|k| ms(k.max(99) - 99)).collect();
    assert_eq!(times(&released), expected);
    assert_eq!(layer.queued(), 0);
    assert_eq!(layer.name(), "noop");
}

#[test]
fn a_request_limit_counts_requests_whatever_their_size_and_spares_the_other_direction() {
    let limits = Limits {
        read_iops: Some(10),
        ..Limits::default()
    };
    let (mut layer, groups) = layer(&[("g", limits)]);
    let g = groups.find("g").expect("g");
    for id in 0..5 {
        let big = Request {
            sectors: 8 << id,
            ..grouped_read(id, 1, g, be(4))
        };
        layer.insert(big, 0);
    }
    let write = Request {
        direction: Direction::Write,
        ..grouped_read(99, 2, g, be(4))
    };
    layer.insert(write, 0);
    let released = drive(&mut layer, 0, SECOND);
    let reads: Vec<Nanos> = released
        .iter()
        .filter(|(_, r)| r.direction == Direction::Read)
        .map(|(t, _)| *t)
        .collect();
    // 100 ms of 10 IOPS is one request: one at once, then one per 100 ms.
    assert_eq!(reads, vec![0, ms(100), ms(200), ms(300), ms(400)]);
    assert_eq!(released[0].1.id, RequestId(99), "writes are not limited");
}

#[test]
fn burst_sets_how_much_may_leave_at_once() {
    for (burst, at_once) in [(ms(500), 500), (ms(10), 10), (0, 1)] {
        let limits = Limits {
            burst: Some(burst),
            ..read_bps(FOUR_K_PER_MS)
        };
        let (mut layer, groups) = layer(&[("g", limits)]);
        let g = groups.find("g").expect("g");
        for id in 0..600 {
            layer.insert(grouped_read(id, 1, g, be(4)), 0);
        }
        let released = drive(&mut layer, 0, 10 * SECOND);
        let t = times(&released);
        assert_eq!(t.iter().filter(|&&t| t == 0).count(), at_once, "{burst}");
        assert_eq!(t[at_once], ms(1), "{burst}");
        assert_eq!(t[599], ms(600 - at_once as u64), "{burst}");
    }
}

#[test]
fn a_request_larger_than_the_bucket_passes_when_the_bucket_is_full() {
    // 40 KiB/s with 100 ms of burst: a 4 KiB bucket, and a 64 KiB request.
    let (mut layer, groups) = layer(&[("g", read_bps(40_960))]);
    let g = groups.find("g").expect("g");
    let big = Request {
        sectors: 128,
        ..grouped_read(1, 1, g, be(4))
    };
    layer.insert(big, 0);
    layer.insert(grouped_read(2, 1, g, be(4)), 0);
    // The big one leaves at once and leaves 60 KiB of debt: 1.5 s to repay, plus 100 ms
    // to refill the 4 KiB the next request needs.
    assert_eq!(times(&drive(&mut layer, 0, 10 * SECOND)), vec![0, ms(1600)]);
}

#[test]
fn a_child_never_exceeds_its_parent() {
    let (mut layer, groups) = layer(&[
        ("p", read_bps(FOUR_K_PER_MS)),
        ("p/c", read_bps(10 * FOUR_K_PER_MS)),
    ]);
    let c = groups.find("p/c").expect("p/c");
    for id in 0..200 {
        layer.insert(grouped_read(id, 1, c, be(4)), 0);
    }
    let expected: Vec<Nanos> = (0..200).map(|k| ms(k.max(99) - 99)).collect();
    assert_eq!(times(&drive(&mut layer, 0, SECOND)), expected);
}

#[test]
fn a_child_below_its_parent_keeps_its_own_rate() {
    let (mut layer, groups) = layer(&[
        ("p", read_bps(10 * FOUR_K_PER_MS)),
        ("p/c", read_bps(FOUR_K_PER_MS)),
    ]);
    let c = groups.find("p/c").expect("p/c");
    for id in 0..200 {
        layer.insert(grouped_read(id, 1, c, be(4)), 0);
    }
    let expected: Vec<Nanos> = (0..200).map(|k| ms(k.max(99) - 99)).collect();
    assert_eq!(times(&drive(&mut layer, 0, SECOND)), expected);
}

#[test]
fn siblings_under_a_limited_parent_share_it_by_weight() {
    let mut groups = tree(&[("p", read_bps(FOUR_K_PER_MS))]);
    let a = groups.ensure("p/a").expect("p/a");
    let b = groups.ensure("p/b").expect("p/b");
    groups.set_weight(a, 100).expect("weight");
    groups.set_weight(b, 300).expect("weight");
    let mut layer = LimitLayer::new(noop(), &groups);
    for id in 0..1000 {
        layer.insert(grouped_read(2 * id, 1, a, be(4)), 0);
        layer.insert(grouped_read(2 * id + 1, 2, b, be(4)), 0);
    }
    let released = drive(&mut layer, 0, SECOND);
    let from_a = released.iter().filter(|(_, r)| r.group == a).count();
    assert_eq!(released.len(), 1100, "100 at once, then 1 per ms for 1 s");
    assert_eq!((from_a, 1100 - from_a), (275, 825));
}

#[test]
fn rt_leaves_before_be7_in_one_limited_group() {
    let (mut layer, groups) = layer(&[("g", read_bps(FOUR_K_PER_MS))]);
    let g = groups.find("g").expect("g");
    // The BE7 reader queued first; arrival order would serve it first.
    for id in 0..300 {
        layer.insert(grouped_read(id, 1, g, be(7)), 0);
    }
    for id in 300..600 {
        layer.insert(grouped_read(id, 2, g, rt(0)), 0);
    }
    let released = drive(&mut layer, 0, 10 * SECOND);
    let order: Vec<u32> = released.iter().map(|(_, r)| r.process.0).collect();
    assert_eq!(order[..300], [2; 300], "every RT request first");
    assert_eq!(order[300..], [1; 300]);
}

/// The layer around noop with group `g` limited to `rate` bytes a second above the
/// elevator (`throttle=above`), and `g`.
fn above_the_elevator(rate: u64) -> (LimitLayer, GroupId) {
    let above = Limits {
        throttle: Throttle::Above,
        ..read_bps(rate)
    };
    let (layer, groups) = layer(&[("g", above)]);
    (layer, groups.find("g").expect("g"))
}

#[test]
fn above_the_elevator_a_group_s_requests_leave_in_arrival_order_whatever_their_class() {
    let (mut layer, g) = above_the_elevator(FOUR_K_PER_MS);
    // BE7 first, then RT0: under the default throttle RT0 would all leave first.
    for id in 0..300 {
        layer.insert(grouped_read(id, 1, g, be(7)), 0);
    }
    for id in 300..600 {
        layer.insert(grouped_read(id, 2, g, rt(0)), 0);
    }
    let released = drive(&mut layer, 0, 10 * SECOND);
    let order: Vec<u64> = released.iter().map(|(_, r)| r.id.0).collect();
    assert_eq!(order, (0..600).collect::<Vec<_>>());
    // blk-throttle's slices: a slice's worth (100 ms of 4 KiB a millisecond: 100 requests)
    // at once, and nothing in between. The 101st waits for its missing bytes (under a
    // jiffy's worth, which counts as one jiffy of 4 ms) plus the rest of the slice: 104 ms,
    // and the slices keep that phase.
    let by_150ms: Vec<Nanos> = released
        .iter()
        .map(|(at, _)| *at)
        .filter(|at| *at <= ms(150))
        .collect();
    assert_eq!(by_150ms.len(), 200);
    assert!(by_150ms[..100].iter().all(|&at| at == 0));
    assert!(by_150ms[100..].iter().all(|&at| at == ms(104)));
}

#[test]
fn above_the_elevator_be0_and_be7_alternate_and_nobody_is_outranked() {
    let (mut layer, g) = above_the_elevator(FOUR_K_PER_MS);
    for id in 0..2000 {
        layer.insert(grouped_read(2 * id, 1, g, be(7)), 0);
        layer.insert(grouped_read(2 * id + 1, 2, g, be(0)), 0);
    }
    // One slice's 100 requests at 0, 104 ms, 204 ms, … 1604 ms.
    let released = drive(&mut layer, 0, ms(1700));
    assert_eq!(released.len(), 1700);
    let be0 = released.iter().filter(|(_, r)| r.process.0 == 2).count();
    assert_eq!((be0, 1700 - be0), (850, 850));
    assert_eq!(layer.outranked().count(), 0);
}

/// blk-throttle's rounds: a group sends at most 6 reads and 2 writes a round, and rounds
/// repeat while its requests may go.
#[test]
fn above_the_elevator_a_round_takes_six_reads_then_two_writes() {
    let above = Limits {
        read_bps: Some(FOUR_K_PER_MS),
        write_bps: Some(FOUR_K_PER_MS),
        throttle: Throttle::Above,
        ..Limits::default()
    };
    let (mut layer, groups) = layer(&[("g", above)]);
    let g = groups.find("g").expect("g");
    for id in 0..10 {
        layer.insert(grouped_read(id, 1, g, be(4)), 0);
        let write = Request {
            direction: Direction::Write,
            ..grouped_read(100 + id, 2, g, be(4))
        };
        layer.insert(write, 0);
    }
    let released = drive(&mut layer, 0, 0);
    let order: Vec<u64> = released.iter().map(|(_, r)| r.id.0).collect();
    let expected: Vec<u64> = (0..6)
        .chain(100..102)
        .chain(6..10)
        .chain(102..104)
        .chain(104..110)
        .collect();
    assert_eq!(order, expected);
}

/// A request limit: 40 a second allows 4 in a 100 ms slice; the 5th waits for the next
/// slice, and a request near the end of a slice waits at least HZ / 40 + 1 jiffies.
#[test]
fn above_the_elevator_a_request_limit_goes_by_slices() {
    let above = Limits {
        read_iops: Some(40),
        throttle: Throttle::Above,
        ..Limits::default()
    };
    let (mut layer, groups) = layer(&[("g", above)]);
    let g = groups.find("g").expect("g");
    for id in 0..9 {
        layer.insert(grouped_read(id, 1, g, be(4)), 0);
    }
    let released = drive(&mut layer, 0, SECOND);
    assert_eq!(
        times(&released),
        [0, 0, 0, 0, ms(100), ms(100), ms(100), ms(100), ms(200)]
    );
}

#[test]
fn be0_gets_eight_times_what_be7_gets() {
    let (mut layer, groups) = layer(&[("g", read_bps(FOUR_K_PER_MS))]);
    let g = groups.find("g").expect("g");
    for id in 0..2000 {
        layer.insert(grouped_read(2 * id, 1, g, be(7)), 0);
        layer.insert(grouped_read(2 * id + 1, 2, g, be(0)), 0);
    }
    let released = drive(&mut layer, 0, ms(1700));
    assert_eq!(released.len(), 1800);
    let be0 = released.iter().filter(|(_, r)| r.process.0 == 2).count();
    assert_eq!((be0, 1800 - be0), (1600, 200));
}

#[test]
fn unlimited_groups_and_the_root_pass_straight_through() {
    let (mut layer, groups) = layer(&[("g", read_bps(40_960)), ("u", Limits::default())]);
    let (g, u) = (groups.find("g").expect("g"), groups.find("u").expect("u"));
    for id in 0..10 {
        layer.insert(grouped_read(id, 1, g, rt(0)), 0);
    }
    layer.insert(grouped_read(10, 2, u, be(7)), 0);
    layer.insert(grouped_read(11, 3, GroupId::ROOT, be(7)), 0);
    assert_eq!(layer.held(), 10);
    let released = drive(&mut layer, 0, 0);
    let ids: Vec<u64> = released.iter().map(|(_, r)| r.id.0).collect();
    assert_eq!(
        ids,
        vec![10, 11, 0],
        "only one 4 KiB request fits g's bucket"
    );
}

#[test]
fn wrap_leaves_an_unlimited_run_alone_and_names_the_policy() {
    let plain = wrap(noop(), &tree(&[("g", Limits::default())]));
    assert_eq!(plain.name(), "noop");
    let limited_tree = tree(&[("g", read_bps(40_960))]);
    let g = limited_tree.find("g").expect("g");
    let mut limited = wrap(noop(), &limited_tree);
    limited.insert(grouped_read(1, 1, g, be(4)), 0);
    limited.insert(grouped_read(2, 1, g, be(4)), 0);
    assert!(matches!(limited.dispatch(0), Dispatch::Request(_)));
    assert_eq!(limited.dispatch(0), Dispatch::WaitUntil(ms(100)));
    assert_eq!(limited.queued(), 1);
}

/// A policy that holds everything until a fixed time, as an idling policy would.
struct HoldUntil {
    at: Nanos,
    queue: Vec<Request>,
}

impl Scheduler for HoldUntil {
    fn name(&self) -> &'static str {
        "hold"
    }
    fn insert(&mut self, request: Request, _now: Nanos) -> Inserted {
        self.queue.push(request);
        Inserted::Queued
    }
    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        match self.queue.pop() {
            None => Dispatch::Empty,
            Some(request) if now >= self.at => Dispatch::Request(request),
            Some(request) => {
                self.queue.push(request);
                Dispatch::WaitUntil(self.at)
            }
        }
    }
    fn complete(&mut self, _completion: &Completion, _now: Nanos) {}
    fn queued(&self) -> usize {
        self.queue.len()
    }
}

#[test]
fn the_earlier_of_the_policy_wait_and_the_next_release_is_asked_for() {
    let groups = tree(&[("g", read_bps(40_960))]);
    let g = groups.find("g").expect("g");
    for (hold, expected) in [(ms(30), ms(30)), (ms(500), ms(100))] {
        let inner = Box::new(HoldUntil {
            at: hold,
            queue: Vec::new(),
        });
        let mut layer = LimitLayer::new(inner, &groups);
        layer.insert(grouped_read(1, 1, g, be(4)), 0);
        layer.insert(grouped_read(2, 1, g, be(4)), 0);
        assert_eq!(layer.dispatch(0), Dispatch::WaitUntil(expected));
        assert_eq!(layer.queued(), 2);
    }
}

/// One request of a generated workload: arrival, group index, process, class, level, read?, sectors.
type Arrival = (Nanos, usize, u32, u32, u8, bool, u32);

fn arrival() -> impl Strategy<Value = Arrival> {
    (
        0..ms(300),
        0usize..4,
        1u32..5,
        1u32..4,
        0u8..8,
        any::<bool>(),
        prop::sample::select(vec![1u32, 8, 64, 256]),
    )
}

fn limits() -> impl Strategy<Value = Limits> {
    let rate = || prop::option::of(prop::sample::select(vec![1u64 << 20, 4 << 20, 16 << 20]));
    let iops = || prop::option::of(prop::sample::select(vec![200u64, 1000]));
    (
        rate(),
        rate(),
        iops(),
        iops(),
        prop::sample::select(vec![ms(50), ms(100)]),
        prop::sample::select(vec![
            Throttle::Priority,
            Throttle::Above,
            Throttle::IoThrottle,
        ]),
    )
        .prop_map(
            |(read_bps, write_bps, read_iops, write_iops, burst, throttle)| Limits {
                read_bps,
                write_bps,
                read_iops,
                write_iops,
                burst: Some(burst),
                throttle,
                latency: None,
            },
        )
}

/// Groups `a`, `a/b`, `c` and the root, with these limits on the first three.
fn generated_tree(limits: &[Limits]) -> (GroupTree, Vec<GroupId>) {
    let tree = tree(&[("a", limits[0]), ("a/b", limits[1]), ("c", limits[2])]);
    let ids = ["a", "a/b", "c"]
        .iter()
        .map(|p| tree.find(p).expect("made"))
        .chain([GroupId::ROOT])
        .collect();
    (tree, ids)
}

fn request_of(id: u64, a: &Arrival, groups: &[GroupId]) -> Request {
    let &(at, group, process, class, level, is_read, sectors) = a;
    let class = PriorityClass::from_number(class).expect("1..=3");
    Request {
        group: groups[group],
        priority: IoPriority::new(class, level).expect("level"),
        submit_time: at,
        ..Request::new(
            RequestId(id),
            ProcessId(process),
            if is_read {
                Direction::Read
            } else {
                Direction::Write
            },
            id * 4096,
            sectors,
        )
    }
}

/// Feed the arrivals in time order and drain; every release time and request.
fn run_arrivals(layer: &mut LimitLayer, requests: &[Request]) -> Vec<(Nanos, Request)> {
    let mut pending: Vec<&Request> = requests.iter().collect();
    pending.sort_by_key(|r| (r.submit_time, r.id));
    let mut pending = pending.into_iter().peekable();
    let mut out = Vec::new();
    let mut now = 0;
    loop {
        while let Some(r) = pending.next_if(|r| r.submit_time <= now) {
            layer.insert(r.clone(), now);
        }
        let next_arrival = pending.peek().map(|r| r.submit_time);
        match layer.dispatch(now) {
            Dispatch::Request(request) => out.push((now, request)),
            Dispatch::WaitUntil(at) => now = next_arrival.map_or(at, |t| t.min(at)),
            Dispatch::Empty => match next_arrival {
                Some(t) => now = t,
                None => return out,
            },
        }
    }
}

/// Bytes (or requests) released by a subtree in a direction, over every window between two
/// releases, against rate × window + the larger of the bucket and one request; above the
/// elevator, against rate × window + two slices and one request (blk-throttle rounds the
/// time since its slice's start up to a whole slice, and trimming keeps one whole slice).
fn check_windows(
    released: &[(Nanos, u64)],
    rate: u64,
    limits: &Limits,
    largest: u64,
) -> Result<(), TestCaseError> {
    let burst = limits.burst_or_default();
    let slack = u128::from(rate) * u128::from(burst);
    let largest = u128::from(largest) * u128::from(SECOND);
    let slack = match limits.throttle {
        Throttle::Priority | Throttle::IoThrottle => slack.max(largest),
        Throttle::Above => 2 * slack + largest,
    };
    for (i, &(start, _)) in released.iter().enumerate() {
        let mut total = 0u128;
        for &(end, amount) in &released[i..] {
            total += u128::from(amount);
            let allowed = u128::from(rate) * u128::from(end - start) + slack;
            prop_assert!(
                total * u128::from(SECOND) <= allowed,
                "{total} released in [{start}, {end}] at {rate}/s"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn nothing_is_lost_and_no_window_exceeds_its_rate_plus_a_burst(
        arrivals in prop::collection::vec(arrival(), 1..120),
        limits in prop::collection::vec(limits(), 3),
    ) {
        let (groups, ids) = generated_tree(&limits);
        let requests: Vec<Request> = arrivals
            .iter()
            .enumerate()
            .map(|(i, a)| request_of(i as u64 + 1, a, &ids))
            .collect();
        let inserted: BTreeMap<u64, Request> = requests.iter().map(|r| (r.id.0, r.clone())).collect();
        let mut layer = LimitLayer::new(noop(), &groups);
        let released = run_arrivals(&mut layer, &requests);
        let mut seen = BTreeSet::new();
        for (_, request) in &released {
            account(request, &inserted, &mut seen)?;
        }
        prop_assert_eq!(seen.len(), requests.len());
        prop_assert_eq!(layer.queued(), 0);
        for (index, group) in ids.iter().take(3).enumerate() {
            let subtree: Vec<GroupId> = ids.iter().copied().filter(|&g| g != GroupId::ROOT && groups.ancestry(g).contains(group)).collect();
            let limit = limits[index];
            for direction in [Direction::Read, Direction::Write] {
                let mine: Vec<&Request> = requests.iter().filter(|r| r.direction == direction && subtree.contains(&r.group)).collect();
                let largest = mine.iter().map(|r| r.bytes()).max().unwrap_or(0);
                let times: BTreeMap<u64, Nanos> = released.iter().flat_map(|(t, r)| r.ids().map(move |id| (id.0, *t))).collect();
                let mut bytes: Vec<(Nanos, u64)> = mine.iter().map(|r| (times[&r.id.0], r.bytes())).collect();
                bytes.sort();
                if let Some(rate) = limit.bps(direction) {
                    check_windows(&bytes, rate, &limit, largest)?;
                }
                if let Some(rate) = limit.iops(direction) {
                    let ios: Vec<(Nanos, u64)> = bytes.iter().map(|&(t, _)| (t, 1)).collect();
                    check_windows(&ios, rate, &limit, 1)?;
                }
            }
        }
    }
}
