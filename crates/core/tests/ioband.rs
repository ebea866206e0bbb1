//! The dm-ioband layer on its own, around a FIFO policy that records what it is handed:
//! below `io_throttle` requests pass whatever their tokens; past it a group's requests wait
//! for its tokens in arrival order and reach the policy from dm-ioband's worker; dispatch
//! gives every request back its own process, priority and group; groups share requests by
//! weight; nothing is lost or completed twice.

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use ioslice_core::ioband::{IobandLayer, IobandSettings, TokenPolicy, WORKER};
use ioslice_core::{
    Completion, Dispatch, GroupId, GroupTree, Inserted, IoPriority, Nanos, PriorityClass,
    ProcessId, Request, RequestId, Scheduler,
};
use proptest::prelude::*;

use common::grouped_read;

/// What the FIFO policy below was handed, in order: (request, process, priority, group).
type Seen = Arc<Mutex<Vec<(RequestId, ProcessId, IoPriority, GroupId)>>>;

/// A FIFO policy that records every request it is handed.
struct Recorder {
    queue: VecDeque<Request>,
    seen: Seen,
}

impl Scheduler for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }

    fn insert(&mut self, request: Request, _now: Nanos) -> Inserted {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.push((request.id, request.process, request.priority, request.group));
        self.queue.push_back(request);
        Inserted::Queued
    }

    fn dispatch(&mut self, _now: Nanos) -> Dispatch {
        self.queue
            .pop_front()
            .map_or(Dispatch::Empty, Dispatch::Request)
    }

    fn complete(&mut self, _completion: &Completion, _now: Nanos) {}

    fn queued(&self) -> usize {
        self.queue.len()
    }
}

/// Groups `a` (weight 200) and `b` (weight 100), and the layer around a recorder.
fn layer(settings: IobandSettings) -> (IobandLayer, Seen, GroupId, GroupId) {
    let mut groups = GroupTree::default();
    let a = groups.ensure("a").expect("a");
    let b = groups.ensure("b").expect("b");
    groups.set_weight(a, 200).expect("weight");
    groups.set_weight(b, 100).expect("weight");
    let seen = Seen::default();
    let inner = Recorder {
        queue: VecDeque::new(),
        seen: Arc::clone(&seen),
    };
    (
        IobandLayer::new(Box::new(inner), &groups, settings),
        seen,
        a,
        b,
    )
}

fn rt() -> IoPriority {
    IoPriority::new(PriorityClass::RealTime, 0).expect("level")
}

fn complete(layer: &mut IobandLayer, request: Request, now: Nanos) {
    let completion = Completion {
        request,
        dispatch_time: now,
        error: None,
    };
    layer.complete(&completion, now);
}

#[test]
fn below_io_throttle_requests_pass_whatever_their_tokens() {
    let (mut layer, seen, a, _) = layer(IobandSettings {
        io_throttle: 4,
        ..IobandSettings::default()
    });
    // a's share of the 256-token bucket among the root (100), a (200) and b (100): 129.
    // With one request in progress at a time, a's 300 requests all pass at once.
    for id in 0..300 {
        layer.insert(grouped_read(id, 1, a, rt()), 0);
        assert_eq!(layer.held(), 0);
        let Dispatch::Request(request) = layer.dispatch(0) else {
            panic!("request {id} was not passed on");
        };
        complete(&mut layer, request, 0);
    }
    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(seen.iter().all(|&(_, process, priority, group)| {
        process == ProcessId(1) && priority == rt() && group == GroupId::ROOT
    }));
}

#[test]
fn past_io_throttle_held_requests_reach_the_policy_from_the_worker_in_arrival_order() {
    let (mut layer, seen, a, _) = layer(IobandSettings::default());
    // 400 requests at once from two processes of a: the first 129 (a's tokens) pass from
    // their own processes; the rest wait, and with no other group waiting a new epoch gives
    // a its tokens again as the device takes them.
    for id in 0..400 {
        let process = 1 + (id % 2) as u32;
        layer.insert(grouped_read(id, process, a, rt()), 0);
    }
    assert_eq!(layer.in_progress(), 128, "io_limit");
    let mut dispatched = Vec::new();
    while let Dispatch::Request(request) = layer.dispatch(0) {
        dispatched.push(request.clone());
        complete(&mut layer, request, 0);
    }
    assert_eq!(dispatched.len(), 400);
    let order: Vec<u64> = dispatched.iter().map(|r| r.id.0).collect();
    assert_eq!(order, (0..400).collect::<Vec<_>>(), "arrival order");
    // Dispatch gives each its own process, priority and group back.
    assert!(dispatched
        .iter()
        .all(|r| r.process.0 == 1 + (r.id.0 % 2) as u32 && r.priority == rt() && r.group == a));
    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    let from_worker = seen.iter().filter(|s| s.1 == WORKER).count();
    assert_eq!(
        seen.len() - from_worker,
        128,
        "passed straight on, up to io_limit"
    );
    assert!(seen
        .iter()
        .filter(|s| s.1 == WORKER)
        .all(|s| s.2 == IoPriority::default()));
}

/// With `count` requests of each group waiting, keep `depth` requests at the device,
/// completing the oldest each step; the groups' shares of the first `count` completions.
fn shares(policy: TokenPolicy, depth: usize, count: usize) -> (usize, usize) {
    let (mut layer, _, a, b) = layer(IobandSettings {
        policy,
        ..IobandSettings::default()
    });
    for id in 0..count as u64 {
        layer.insert(grouped_read(2 * id, 1, a, IoPriority::default()), 0);
        layer.insert(grouped_read(2 * id + 1, 2, b, IoPriority::default()), 0);
    }
    let mut in_progress = VecDeque::new();
    let mut per_group = BTreeMap::new();
    for step in 0..count as u64 {
        while in_progress.len() < depth {
            let Dispatch::Request(request) = layer.dispatch(step) else {
                break;
            };
            *per_group.entry(request.group).or_insert(0) += 1;
            in_progress.push_back(request);
        }
        if let Some(request) = in_progress.pop_front() {
            complete(&mut layer, request, step);
        }
    }
    (per_group[&a], per_group[&b])
}

#[test]
fn busy_groups_share_requests_by_weight() {
    for policy in [TokenPolicy::Weight, TokenPolicy::WeightIosize] {
        let (a, b) = shares(policy, 8, 30_000);
        let ratio = a as f64 / b as f64;
        assert!(
            (1.95..=2.05).contains(&ratio),
            "{policy:?}: {a} against {b}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_request_is_dispatched_once_and_comes_back_as_it_went_in(
        steps in prop::collection::vec((0u8..3, 1u32..5, 0u8..3), 1..400),
        io_throttle in 1usize..8,
        io_limit in 8usize..64,
    ) {
        let (mut layer, _, a, b) = layer(IobandSettings {
            io_throttle,
            io_limit,
            ..IobandSettings::default()
        });
        let groups = [GroupId::ROOT, a, b];
        let mut inserted = BTreeMap::new();
        let mut in_progress = VecDeque::new();
        let mut done = BTreeMap::new();
        for (id, &(action, process, group)) in steps.iter().enumerate() {
            let now = id as Nanos;
            match action {
                0 | 1 => {
                    let request = grouped_read(id as u64, process, groups[usize::from(group)], rt());
                    inserted.insert(request.id, request.clone());
                    layer.insert(request, now);
                }
                _ => {
                    if let Some(request) = in_progress.pop_front() {
                        complete(&mut layer, request, now);
                    }
                }
            }
            while let Dispatch::Request(request) = layer.dispatch(now) {
                prop_assert!(done.insert(request.id, request.clone()).is_none(), "twice");
                in_progress.push_back(request);
            }
        }
        // Drain.
        let mut now = steps.len() as Nanos;
        loop {
            while let Dispatch::Request(request) = layer.dispatch(now) {
                prop_assert!(done.insert(request.id, request.clone()).is_none(), "twice");
                in_progress.push_back(request);
            }
            let Some(request) = in_progress.pop_front() else { break };
            complete(&mut layer, request, now);
            now += 1;
        }
        prop_assert_eq!(layer.held(), 0);
        prop_assert_eq!(layer.in_progress(), 0);
        prop_assert_eq!(done, inserted);
    }
}
