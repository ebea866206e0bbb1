//! The elv-fq layer driven by a fake clock: a device of depth one that serves every request
//! in exactly 1 ms, greedy processes with every request queued at the start, and paced
//! processes that send their next request a think time after the previous one completes.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::ElvFqSettings;
use crate::time::ms;
use crate::trace::{IdleKind, TraceEvent};
use crate::{
    build_scheduler, Completion, Controller, Direction, Dispatch, GroupId, GroupTree, Nanos,
    ProcessId, Request, RequestId, Scheduler, SchedulerContext,
};

/// How long the fake device takes for any request.
const SERVICE: Nanos = ms(1);

/// A process of the fake run.
#[derive(Debug, Clone, Copy)]
struct Process {
    group: GroupId,
    /// `None`: every request queued at time 0; `Some(t)`: one at a time, the next `t` after
    /// the previous completes.
    think: Option<Nanos>,
    requests: u64,
}

/// What a run dispatched and completed.
#[derive(Debug, Default)]
struct Run {
    /// The group of each dispatched request, in order.
    groups: Vec<GroupId>,
    dispatched: Vec<RequestId>,
    completed: Vec<RequestId>,
    inserted: BTreeSet<RequestId>,
    events: Vec<TraceEvent>,
}

fn tree(groups: &[(&str, u32)], settings: ElvFqSettings) -> GroupTree {
    let mut tree = GroupTree::default();
    for &(path, weight) in groups {
        let id = tree.ensure(path).expect("valid path");
        tree.set_weight(id, weight).expect("valid weight");
    }
    tree.set_controller(Controller::ElvFq(settings));
    tree
}

fn layer(sched: &str, groups: &GroupTree) -> Box<dyn Scheduler> {
    let context = SchedulerContext {
        groups: groups.clone(),
        rotational: true,
        queue_depth: 1,
    };
    build_scheduler(&sched.parse().expect("spec"), &context).expect("builds")
}

fn request(id: u64, process: usize, spec: &Process, now: Nanos, index: u64) -> Request {
    Request {
        group: spec.group,
        submit_time: now,
        ..Request::new(
            RequestId(id),
            ProcessId(process as u32 + 1),
            Direction::Read,
            ((process as u64) << 30) | (index * 16),
            8,
        )
    }
}

/// Drive `policy` until every request completed or `until`. Requests are 8 sectors with
/// gaps between them, so that no elevator merges them.
fn run(policy: &mut dyn Scheduler, processes: &[Process], until: Nanos) -> Run {
    policy.set_tracing(true);
    let mut out = Run::default();
    let mut next_id = 1;
    let mut sent = vec![0u64; processes.len()];
    let mut owner: BTreeMap<RequestId, usize> = BTreeMap::new();
    // Paced processes' next arrival times.
    let mut arrivals: BTreeMap<usize, Nanos> = BTreeMap::new();
    for (p, spec) in processes.iter().enumerate() {
        match spec.think {
            None => {
                for _ in 0..spec.requests {
                    let r = request(next_id, p, spec, 0, sent[p]);
                    out.inserted.insert(r.id);
                    owner.insert(r.id, p);
                    policy.insert(r, 0);
                    next_id += 1;
                    sent[p] += 1;
                }
            }
            Some(_) => {
                arrivals.insert(p, 0);
            }
        }
    }
    let mut now: Nanos = 0;
    let mut busy: Option<(Request, Nanos)> = None;
    let mut wake: Option<Nanos> = None;
    while now <= until {
        for (&p, &at) in arrivals.clone().iter() {
            if at <= now {
                arrivals.remove(&p);
                let spec = &processes[p];
                let r = request(next_id, p, spec, now, sent[p]);
                out.inserted.insert(r.id);
                owner.insert(r.id, p);
                policy.insert(r, now);
                next_id += 1;
                sent[p] += 1;
            }
        }
        if let Some((r, done)) = busy.clone() {
            if done <= now {
                busy = None;
                out.completed.extend(r.ids());
                let p = owner[&r.id];
                policy.complete(
                    &Completion {
                        request: r,
                        dispatch_time: done - SERVICE,
                        error: None,
                    },
                    now,
                );
                if let Some(think) = processes[p].think {
                    if sent[p] < processes[p].requests {
                        arrivals.insert(p, now + think);
                    } else {
                        policy.process_exited(ProcessId(p as u32 + 1), now);
                    }
                }
            }
        }
        if busy.is_none() {
            match policy.dispatch(now) {
                Dispatch::Request(r) => {
                    out.groups.push(r.group);
                    out.dispatched.extend(r.ids());
                    busy = Some((r, now + SERVICE));
                    wake = None;
                }
                Dispatch::WaitUntil(at) => {
                    assert!(at > now, "WaitUntil({at}) at {now}");
                    wake = Some(at);
                }
                Dispatch::Empty => wake = None,
            }
        }
        policy.drain_trace(&mut out.events);
        let next = [
            busy.as_ref().map(|(_, done)| *done),
            wake,
            arrivals.values().min().copied(),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some(next) => now = next.max(now),
            None => break,
        }
    }
    out
}

/// Runs of consecutive dispatches of one group, as (group, count).
fn runs(groups: &[GroupId]) -> Vec<(u32, usize)> {
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for g in groups {
        match runs.last_mut() {
            Some((last, n)) if *last == g.0 => *n += 1,
            _ => runs.push((g.0, 1)),
        }
    }
    runs
}

fn greedy(group: u32, requests: u64) -> Process {
    Process {
        group: GroupId(group),
        think: None,
        requests,
    }
}

/// Weights 200 and 100, both always busy: B-WF2Q+ over slices of 100 ms (100 requests here)
/// charged in time gives the order a b a a b a a b …, exactly.
#[test]
fn weights_share_slices_in_b_wf2q_order() {
    let groups = tree(&[("a", 200), ("b", 100)], ElvFqSettings::default());
    for sched in ["noop", "deadline", "anticipatory", "cfq"] {
        let mut policy = layer(sched, &groups);
        let out = run(
            policy.as_mut(),
            &[greedy(1, 2000), greedy(2, 2000)],
            ms(900) - 1,
        );
        assert_eq!(
            runs(&out.groups),
            vec![
                (1, 100),
                (2, 100),
                (1, 200),
                (2, 100),
                (1, 200),
                (2, 100),
                (1, 100)
            ],
            "{sched}"
        );
        assert_eq!(policy.group_weight(GroupId(1)), Some(200));
        assert_eq!(policy.group_weight(GroupId::ROOT), None);
    }
}

/// Nested groups: a (100) holds x (100) and y (300), beside b (100). Over 16 s, b gets half
/// the time, x an eighth and y three eighths, to within one slice each.
#[test]
fn hierarchical_weights() {
    let groups = tree(
        &[("a", 100), ("a/x", 100), ("a/y", 300), ("b", 100)],
        ElvFqSettings::default(),
    );
    let mut policy = layer("noop", &groups);
    let (x, y, b) = (2, 3, 4);
    let out = run(
        policy.as_mut(),
        &[greedy(x, 20_000), greedy(y, 20_000), greedy(b, 20_000)],
        ms(16_000) - 1,
    );
    let count = |g: u32| out.groups.iter().filter(|id| id.0 == g).count() as i64;
    let total = out.groups.len() as i64;
    assert_eq!(total, 16_000);
    for (g, expected) in [(x, total / 8), (y, 3 * total / 8), (b, total / 2)] {
        assert!(
            (count(g) - expected).abs() <= 100,
            "group {g}: {} against {expected}",
            count(g)
        );
    }
}

/// A paced reader (1 ms of think time after each request) in group a against a greedy group
/// b of equal weight: the layer idles for a, which keeps its slices (runs of 50 requests, one
/// every 2 ms); with `group_idle=0` a loses its slice after every request.
#[test]
fn group_idling_keeps_a_paced_readers_slice() {
    let paced = Process {
        group: GroupId(1),
        think: Some(ms(1)),
        requests: 400,
    };
    let idling = tree(&[("a", 500), ("b", 500)], ElvFqSettings::default());
    let mut policy = layer("noop", &idling);
    let out = run(policy.as_mut(), &[paced, greedy(2, 4000)], ms(600) - 1);
    assert_eq!(
        runs(&out.groups)[..4],
        [(1, 50), (2, 100), (1, 50), (2, 100)]
    );
    let idle_starts = out
        .events
        .iter()
        .filter(|e| {
            matches!(
                e,
                TraceEvent::IdleStart {
                    kind: IdleKind::Group,
                    ..
                }
            )
        })
        .count();
    assert!(idle_starts >= 100, "{idle_starts}");

    let no_idling = tree(
        &[("a", 500), ("b", 500)],
        ElvFqSettings {
            group_idle: 0,
            ..ElvFqSettings::default()
        },
    );
    let mut policy = layer("noop", &no_idling);
    let out = run(policy.as_mut(), &[paced, greedy(2, 4000)], ms(600) - 1);
    let a = out.groups.iter().filter(|g| g.0 == 1).count();
    assert!(a < 20, "a got {a} requests without idling");
}

/// A group whose think time outgrows the window is no longer idled for.
#[test]
fn slow_group_is_not_idled_for() {
    let slow = Process {
        group: GroupId(1),
        think: Some(ms(30)),
        requests: 100,
    };
    let groups = tree(&[("a", 500), ("b", 500)], ElvFqSettings::default());
    let mut policy = layer("noop", &groups);
    let out = run(policy.as_mut(), &[slow, greedy(2, 4000)], ms(2000));
    let idle_starts = out
        .events
        .iter()
        .filter(|e| matches!(e, TraceEvent::IdleStart { .. }))
        .count();
    // The first windows, until the think time's mean is known (three samples).
    assert_eq!(idle_starts, 3);
}

fn check_exactly_once(out: &Run, policy: &dyn Scheduler) {
    let dispatched: BTreeSet<RequestId> = out.dispatched.iter().copied().collect();
    assert_eq!(dispatched.len(), out.dispatched.len(), "a request twice");
    let completed: BTreeSet<RequestId> = out.completed.iter().copied().collect();
    assert_eq!(completed.len(), out.completed.len(), "completed twice");
    assert_eq!(dispatched, out.inserted, "not every request dispatched");
    assert_eq!(completed, out.inserted, "not every request completed");
    assert_eq!(policy.queued(), 0);
}

#[test]
fn every_request_completes_exactly_once() {
    let groups = tree(
        &[("a", 300), ("a/x", 200), ("b", 100)],
        ElvFqSettings::default(),
    );
    for sched in ["noop", "deadline", "anticipatory", "cfq", "bfq"] {
        let mut policy = layer(sched, &groups);
        let processes = [
            greedy(0, 50),
            greedy(2, 300),
            Process {
                group: GroupId(3),
                think: Some(ms(2)),
                requests: 120,
            },
            greedy(1, 200),
        ];
        let out = run(policy.as_mut(), &processes, ms(60_000));
        check_exactly_once(&out, policy.as_ref());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any weights, any mix of greedy and paced processes in any groups, any tunables: every
    /// request is dispatched and completed exactly once and nothing is left queued.
    #[test]
    fn exactly_once_for_any_mix(
        weights in proptest::collection::vec(1u32..=1000, 1..4),
        procs in proptest::collection::vec((0usize..4, proptest::option::of(0u64..20), 1u64..60), 1..6),
        idle in 0u64..12,
        fairness in any::<bool>(),
    ) {
        let names = ["a", "a/b", "c", "c/d"];
        let spec: Vec<(&str, u32)> = weights.iter().enumerate().map(|(i, &w)| (names[i], w)).collect();
        let settings = ElvFqSettings { group_idle: ms(idle), fairness, ..ElvFqSettings::default() };
        let groups = tree(&spec, settings);
        let processes: Vec<Process> = procs
            .iter()
            .map(|&(g, think, requests)| Process {
                group: GroupId((g % groups.len()) as u32),
                think: think.map(ms),
                requests,
            })
            .collect();
        let mut policy = layer("noop", &groups);
        let out = run(policy.as_mut(), &processes, ms(100_000));
        check_exactly_once(&out, policy.as_ref());
    }
}
