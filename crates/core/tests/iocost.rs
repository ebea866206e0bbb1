//! The iocost layer on its own, around noop, driven by a small closed-loop driver on a
//! device that takes a fixed time per request: groups share the model's budget by
//! `io.weight` when vrate is pinned; a group that uses little of its share donates the rest;
//! waits for request slots make vrate fall; every request is completed exactly once and
//! leaves with its own group.

use std::collections::{BTreeMap, BTreeSet};

use ioslice_core::iocost::hweight::WEIGHT_ONE;
use ioslice_core::iocost::settings::{ModelKeys, QosKeys};
use ioslice_core::iocost::{IocostLayer, IocostSettings};
use ioslice_core::{
    build_scheduler, Completion, Direction, Dispatch, GroupId, GroupTree, Nanos, ProcessId,
    Request, RequestId, Scheduler, SchedulerContext, TraceEvent,
};
use proptest::prelude::*;

const MS: Nanos = 1_000_000;

/// iocost over noop for groups weighted as given (`a`, `b`, ...), on a device of `depth`.
fn layer(weights: &[u32], depth: usize, settings: IocostSettings) -> (IocostLayer, Vec<GroupId>) {
    let mut groups = GroupTree::default();
    let ids: Vec<GroupId> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let id = groups
                .ensure(&((b'a' + i as u8) as char).to_string())
                .expect("group");
            groups.set_weight(id, w).expect("weight");
            id
        })
        .collect();
    let context = SchedulerContext {
        groups,
        rotational: false,
        queue_depth: depth,
    };
    let noop = build_scheduler(&"noop".parse().expect("spec"), &context).expect("noop");
    (IocostLayer::new(noop, &context, settings), ids)
}

/// A model of `iops` 4 KiB requests a second, sequential or random, with vrate pinned at 100%.
fn pinned(iops: u64) -> IocostSettings {
    IocostSettings {
        model: ModelKeys {
            rseqiops: Some(iops),
            rrandiops: Some(iops),
            ..ModelKeys::default()
        },
        qos: QosKeys {
            min_ppm: Some(1_000_000),
            max_ppm: Some(1_000_000),
            ..QosKeys::default()
        },
    }
}

/// A run: the layer, a device of `depth` taking `service` per request, and what completed.
struct Run {
    layer: IocostLayer,
    depth: usize,
    service: Nanos,
    now: Nanos,
    next_id: u64,
    in_device: Vec<(Nanos, Request)>,
    wake: Option<Nanos>,
    completed: BTreeSet<RequestId>,
    group_of: BTreeMap<RequestId, GroupId>,
    per_group: BTreeMap<GroupId, u64>,
    submitted: u64,
}

impl Run {
    fn new(layer: IocostLayer, depth: usize, service: Nanos) -> Run {
        Run {
            layer,
            depth,
            service,
            now: 0,
            next_id: 0,
            in_device: Vec::new(),
            wake: None,
            completed: BTreeSet::new(),
            group_of: BTreeMap::new(),
            per_group: BTreeMap::new(),
            submitted: 0,
        }
    }

    /// A 4 KiB read of `group` far from its last one (a random read).
    fn submit(&mut self, group: GroupId) {
        let id = self.next_id;
        self.next_id += 1;
        let request = Request {
            group,
            submit_time: self.now,
            ..Request::new(
                RequestId(id),
                ProcessId(group.0),
                Direction::Read,
                (id * 7_919 % 1_000) << 16,
                8,
            )
        };
        self.insert(request);
    }

    fn insert(&mut self, request: Request) {
        self.submitted += 1;
        self.group_of.insert(request.id, request.group);
        self.layer.insert(request, self.now);
    }

    fn fill(&mut self) {
        self.wake = None;
        while self.in_device.len() < self.depth {
            match self.layer.dispatch(self.now) {
                Dispatch::Request(request) => {
                    assert_eq!(
                        Some(&request.group),
                        self.group_of.get(&request.id),
                        "a request leaves with its own group"
                    );
                    self.in_device.push((self.now + self.service, request));
                }
                Dispatch::WaitUntil(at) => {
                    assert!(at > self.now);
                    self.wake = Some(at);
                    break;
                }
                Dispatch::Empty => break,
            }
        }
    }

    /// Runs to the next event; returns the groups whose requests completed.
    fn step(&mut self) -> Vec<GroupId> {
        self.fill();
        let next_done = self.in_device.iter().map(|(at, _)| *at).min();
        let Some(at) = [next_done, self.wake].into_iter().flatten().min() else {
            return Vec::new();
        };
        self.now = at;
        let (done, left): (Vec<_>, Vec<_>) = std::mem::take(&mut self.in_device)
            .into_iter()
            .partition(|(at, _)| *at <= self.now);
        self.in_device = left;
        let mut groups = Vec::new();
        for (_, request) in done {
            for id in request.ids() {
                assert!(self.completed.insert(id), "{id:?} completed twice");
            }
            *self.per_group.entry(request.group).or_default() += 1;
            groups.push(request.group);
            let completion = Completion {
                dispatch_time: self.now - self.service,
                request,
                error: None,
            };
            self.layer.complete(&completion, self.now);
        }
        groups
    }

    /// Every group of `closed` keeps `each` requests outstanding until `end`.
    fn closed_loop(&mut self, closed: &[GroupId], each: usize, end: Nanos) {
        for &g in closed {
            for _ in 0..each {
                self.submit(g);
            }
        }
        while self.now < end {
            for g in self.step() {
                if closed.contains(&g) {
                    self.submit(g);
                }
            }
        }
    }

    fn drain(&mut self) {
        while self.completed.len() < self.submitted as usize {
            self.step();
        }
        assert_eq!(self.layer.queued(), 0);
        assert_eq!(self.layer.in_flight(), 0);
    }
}

#[test]
fn weighted_groups_share_the_models_budget_by_io_weight() {
    // 50000 IOPS of budget on a device that could do 160000: a (200) and b (100) are held to
    // two thirds and one third of the budget.
    let (layer, ids) = layer(&[200, 100], 8, pinned(50_000));
    let mut run = Run::new(layer, 8, 50_000);
    run.closed_loop(&ids, 16, 1_000 * MS);
    let (a, b) = (run.per_group[&ids[0]], run.per_group[&ids[1]]);
    let ratio = a as f64 / b as f64;
    assert!((1.95..=2.05).contains(&ratio), "a/b {ratio:.3}");
    // What the budget allows in a second, plus the half period of margin each may start with.
    assert!(a + b <= 50_000 + 1_300, "{}", a + b);
    assert!(a + b >= 49_000, "{}", a + b);
    assert_eq!((a, b), (33_330, 16_665));
    run.drain();
}

#[test]
fn a_group_using_little_of_its_share_donates_the_rest() {
    let (layer, ids) = layer(&[100, 100], 8, pinned(50_000));
    let (a, b) = (ids[0], ids[1]);
    let mut run = Run::new(layer, 8, 50_000);
    for _ in 0..16 {
        run.submit(a);
    }
    // b asks one request a millisecond, 2% of the budget; a keeps 16 outstanding.
    let mut next_b = 0;
    while run.now < 1_000 * MS {
        if run.now >= next_b {
            run.submit(b);
            next_b += MS;
        }
        for g in run.step() {
            if g == a {
                run.submit(a);
            }
        }
    }
    let (active, inuse) = run.layer.hweights(b).expect("b");
    assert_eq!(active, WEIGHT_ONE / 2);
    assert!(inuse < WEIGHT_ONE / 10, "b's hweight_inuse {inuse}");
    let (_, a_inuse) = run.layer.hweights(a).expect("a");
    assert!(a_inuse > WEIGHT_ONE * 9 / 10, "a's hweight_inuse {a_inuse}");
    // a gets far more than the half its weight gives it: what b leaves, less b's margin.
    let served = run.per_group[&a];
    assert!(served > 44_000, "a served {served}");
    run.drain();
}

#[test]
fn waiting_for_request_slots_makes_vrate_fall() {
    // The kernel's SSD defaults (8518 random reads a second at vrate 100%) on a device that
    // does 1000: with 32 requests outstanding and 2 request slots, requests wait for slots
    // most of every period and the device counts as saturated.
    let (layer, ids) = layer(&[100, 100], 1, IocostSettings::default());
    let mut run = Run::new(layer, 1, MS);
    run.closed_loop(&ids, 16, 3_000 * MS);
    let history = run.layer.vrate_history();
    assert_eq!(history.len(), 60, "3 s of 50 ms periods");
    // Busy levels 1 to 3 hold vrate; from 4 on it falls 1%, 2%, 4%, 8%, 16% a period.
    assert_eq!(
        &history[..5],
        &[1_000_000, 1_000_000, 1_000_000, 990_000, 980_100]
    );
    // It falls until the budget (8518 random reads a second at 100%) is under what the device
    // does, 1000 a second: then the groups wait for budget instead of slots, the device is
    // idle by the signals, and with groups short of budget vrate creeps back up.
    let lowest = history.iter().copied().min().unwrap_or(0);
    assert_eq!(lowest, 66_320);
    assert!(8_518 * lowest / 1_000_000 < 1_000);
    assert!(history.windows(2).take(55).all(|w| w[1] <= w[0]));
    assert_eq!(history[59], 66_984);
    assert!(run.layer.busy_level() < 0);
    run.drain();
}

#[test]
fn requests_in_flight_past_a_period_hold_vrate_on_an_idle_device() {
    // A device taking 80 ms a request under 50 ms periods: a request issued in one period
    // is still in flight when the next ends. The model budgets 10 requests a second, fewer
    // than the device's 12.5, so the groups wait for budget and the device looks idle with
    // groups short of budget; a lagging request keeps vrate where it is instead of speeding
    // it up (`nr_lagging`, 5.10 on), and only periods without one raise it.
    let mut settings = pinned(10);
    settings.qos.min_ppm = Some(10_000);
    settings.qos.max_ppm = Some(10_000_000);
    let (mut layer, ids) = layer(&[100, 100], 1, settings);
    layer.set_tracing(true);
    let mut run = Run::new(layer, 1, 80 * MS);
    run.closed_loop(&ids, 16, 20_000 * MS);
    let mut events = Vec::new();
    run.layer.drain_trace(&mut events);
    let steps: Vec<(u64, u64, i32, u32)> = events
        .iter()
        .filter_map(|event| match event {
            TraceEvent::VrateAdjust {
                from_ppm,
                vrate_ppm,
                busy_level,
                lagging,
                ..
            } => Some((*from_ppm, *vrate_ppm, *busy_level, *lagging)),
            _ => None,
        })
        .collect();
    let held = steps
        .iter()
        .filter(|(_, _, level, lagging)| *level < 0 && *lagging > 0)
        .count();
    assert!(held > 0, "no idle period with a lagging request: {steps:?}");
    for (from, to, level, lagging) in &steps {
        if *level < 0 && *lagging > 0 {
            assert_eq!(
                from, to,
                "vrate moved at level {level} with {lagging} lagging"
            );
        }
    }
    let raised = steps
        .iter()
        .filter(|(from, to, level, lagging)| *level < 0 && *lagging == 0 && to > from)
        .count();
    assert!(
        raised > 0,
        "vrate never rose between lagging periods: {steps:?}"
    );
    let history = run.layer.vrate_history();
    assert!(steps.iter().all(|(_, to, _, _)| history.contains(to)));
    run.drain();
}

/// One step of a random schedule.
#[derive(Debug, Clone)]
enum Op {
    Insert {
        group: usize,
        sector: u64,
        write: bool,
    },
    Step,
    Idle(Nanos),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3usize, 0..1_000_000u64, any::<bool>()).prop_map(|(group, sector, write)| Op::Insert {
            group,
            sector,
            write
        }),
        Just(Op::Step),
        (0..200 * MS).prop_map(Op::Idle),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_request_completes_exactly_once_with_its_group(
        ops in proptest::collection::vec(op(), 1..300),
        weights in proptest::collection::vec(1..=10_000u32, 2),
        depth in 1..8usize,
    ) {
        let (layer, ids) = layer(&weights, depth, IocostSettings::default());
        let mut run = Run::new(layer, depth, 100_000);
        let groups = [GroupId::ROOT, ids[0], ids[1]];
        for op in ops {
            match op {
                Op::Insert { group, sector, write } => {
                    let id = run.next_id;
                    run.next_id += 1;
                    let direction = if write { Direction::Write } else { Direction::Read };
                    let request = Request {
                        group: groups[group],
                        submit_time: run.now,
                        ..Request::new(RequestId(id), ProcessId(group as u32), direction, sector, 8)
                    };
                    run.insert(request);
                }
                Op::Step => {
                    run.step();
                }
                Op::Idle(ns) => run.now += ns,
            }
        }
        run.drain();
        prop_assert_eq!(run.completed.len() as u64, run.submitted);
    }
}
