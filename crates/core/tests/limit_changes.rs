//! The limit layer around noop, its limits changed while requests are held
//! (`Scheduler::update_group`): a tightened limit starts a fresh budget at the new rate from
//! the change on (blk-throttle's `tg_conf_updated` restarts the slice), a lifted one lets
//! every held request into the policy at once; each request leaves exactly once.

mod common;

use std::collections::BTreeSet;

use ioslice_core::limit::{LimitLayer, Limits};
use ioslice_core::policy::noop::Noop;
use ioslice_core::time::{ms, SECOND};
use ioslice_core::{
    Completion, Dispatch, GroupId, GroupTree, IoPriority, Nanos, Request, Scheduler,
};

use common::{grouped_read, tunables};

/// 4 KiB requests at one per millisecond.
const FOUR_K_PER_MS: u64 = 4096 * 1000;

fn read_bps(rate: u64) -> Limits {
    Limits {
        read_bps: Some(rate),
        ..Limits::default()
    }
}

/// The layer around noop with group `g` limited to `limits`, `count` reads of it held at 0.
fn held(limits: Limits, count: u64) -> (LimitLayer, GroupTree, GroupId) {
    let mut tree = GroupTree::default();
    let g = tree.ensure("g").expect("valid path");
    tree.set_limits(g, limits);
    let noop = Box::new(Noop::new(&tunables("noop", Noop::TUNABLES, &[])));
    let mut layer = LimitLayer::new(noop, &tree);
    for id in 0..count {
        layer.insert(grouped_read(id, 1, g, IoPriority::default()), 0);
    }
    (layer, tree, g)
}

/// Dispatch until nothing is left or `until` passes, completing each request at once; the
/// clock jumps to each `WaitUntil`. Returns (time, request).
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
            Dispatch::WaitUntil(at) => now = at,
            Dispatch::Empty => break,
        }
    }
    out
}

fn each_once(released: &[(Nanos, Request)], count: u64) {
    let ids: BTreeSet<u64> = released.iter().map(|(_, r)| r.id.0).collect();
    assert_eq!(
        released.len() as u64,
        count,
        "released more than once or lost"
    );
    assert_eq!(
        ids,
        (0..count).collect(),
        "every request leaves exactly once"
    );
}

#[test]
fn a_tightened_limit_starts_a_fresh_budget_at_the_new_rate() {
    let (mut layer, mut tree, g) = held(read_bps(FOUR_K_PER_MS), 300);
    // 100 ms of burst at once, then one a millisecond: 150 by 50 ms.
    let mut released = drive(&mut layer, 0, ms(50));
    assert_eq!(released.len(), 150);
    // One 4 KiB request per 10 ms from 50 ms on: a full 100 ms bucket (10) at once, then
    // one every 10 ms.
    tree.set_limits(g, read_bps(FOUR_K_PER_MS / 10));
    layer
        .update_group(g, tree.get(g), ms(50))
        .expect("noop takes any settings");
    let after = drive(&mut layer, ms(50), 10 * SECOND);
    let expected: Vec<Nanos> = (0..150).map(|j| ms(50 + 10 * (j.max(9) - 9))).collect();
    assert_eq!(after.iter().map(|(t, _)| *t).collect::<Vec<_>>(), expected);
    released.extend(after);
    each_once(&released, 300);
}

#[test]
fn a_lifted_limit_lets_every_held_request_into_the_policy_in_arrival_order() {
    let (mut layer, mut tree, g) = held(read_bps(FOUR_K_PER_MS), 300);
    let mut released = drive(&mut layer, 0, ms(50));
    assert_eq!(layer.held(), 150);
    tree.set_limits(g, Limits::default());
    layer
        .update_group(g, tree.get(g), ms(50))
        .expect("noop takes any settings");
    assert_eq!((layer.held(), layer.queued()), (0, 150));
    let after = drive(&mut layer, ms(50), 10 * SECOND);
    assert!(after.iter().all(|(t, _)| *t == ms(50)));
    let ids: Vec<u64> = after.iter().map(|(_, r)| r.id.0).collect();
    assert_eq!(ids, (150..300).collect::<Vec<_>>());
    released.extend(after);
    each_once(&released, 300);
}

#[test]
fn a_limit_on_a_group_that_had_none_holds_its_next_requests() {
    let mut tree = GroupTree::default();
    let g = tree.ensure("g").expect("valid path");
    let noop = Box::new(Noop::new(&tunables("noop", Noop::TUNABLES, &[])));
    let mut layer = LimitLayer::new(noop, &tree);
    tree.set_limits(
        g,
        Limits {
            read_iops: Some(10),
            ..Limits::default()
        },
    );
    layer
        .update_group(g, tree.get(g), 0)
        .expect("noop takes any settings");
    for id in 0..3 {
        layer.insert(grouped_read(id, 1, g, IoPriority::default()), 0);
    }
    assert_eq!(layer.held(), 3);
    let released = drive(&mut layer, 0, SECOND);
    let times: Vec<Nanos> = released.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![0, ms(100), ms(200)]);
    each_once(&released, 3);
}
