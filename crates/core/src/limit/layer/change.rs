//! Limits and weights changed while requests are in flight, as writing `io.max` does.
//!
//! blk-throttle's `tg_conf_updated` (block/blk-throttle.c, 4.x–6.x) restarts the group's slice
//! when its limits are written: what the group dispatched under the old limit is forgotten
//! and the new rate governs from the next request on. Here the changed group's buckets are
//! built afresh for the new rates (full, as a new slice starts with nothing dispatched) and
//! every other group's buckets keep their content. A request already released into the
//! policy stays there; the requests still held leave as the new buckets allow. A weight
//! changed at the same time shares a limited ancestor among its children from the next
//! request the layer releases.
//!
//! When the change makes a group limited or unlimited, or moves where its held requests
//! wait, the held requests are taken out and inserted again in arrival (id) order: those of
//! groups no longer limited go straight into the policy.

use super::{structure, LimitLayer, Node, Throttle};
use crate::limit::Lane;
use crate::{Group, GroupId, GroupTree, Nanos, Request, Scheduler};

impl LimitLayer {
    /// Take `settings` (the group's limits and weight as they now are) for `group` at `now`.
    pub(super) fn change_group(&mut self, group: GroupId, settings: &Group, now: Nanos) {
        let index = group.index();
        if index >= self.tree.len() {
            return;
        }
        let limits_changed = self.tree.get(group).limits != settings.limits;
        self.tree.set_limits(group, settings.limits);
        if settings.weight_set {
            // The driver checked the weight against the tree's range; a refused one keeps the old.
            let _ = self.tree.set_weight(group, settings.weight);
        }
        self.reshape(limits_changed.then_some(index), now);
    }

    /// A group was added: it gets buckets for the limits it starts with, full, and takes
    /// its weight among its siblings.
    pub(super) fn group_added(&mut self, _group: GroupId, groups: &GroupTree, now: Nanos) {
        self.regroup(groups, now);
    }

    /// A group was removed: it holds nothing here, and its siblings under a limited parent
    /// share without it.
    pub(super) fn group_removed(&mut self, _group: GroupId, groups: &GroupTree, now: Nanos) {
        self.regroup(groups, now);
    }

    /// Take `groups`, which has a group the layer does not know yet or one fewer, as the
    /// tree from now on: a new group's buckets start full and its nodes hold nothing; a
    /// removed one holds nothing and keeps its slot.
    fn regroup(&mut self, groups: &GroupTree, now: Nanos) {
        self.tree = groups.clone();
        for d in 0..2 {
            while self.nodes[d].len() < self.tree.len() {
                self.nodes[d].push(Node::default());
                self.in_policy_per_top[d].push(0);
            }
        }
        self.reshape(None, now);
    }

    /// Rebuild the layer's shape from its tree: every group's buckets keep their content
    /// unless the group is `fresh` or its own buckets changed in number.
    fn reshape(&mut self, fresh: Option<usize>, now: Nanos) {
        let (infos, mut buckets, tops) = structure(&self.tree);
        for (g, info) in infos.iter().enumerate() {
            if Some(g) == fresh {
                continue;
            }
            let Some(old) = self.groups.get(g) else {
                continue;
            };
            for d in 0..2 {
                if old.own[d] != info.own[d] {
                    continue;
                }
                for k in 0..info.own[d] {
                    buckets[info.path[d][k]] = self.buckets[old.path[d][k]].clone();
                }
            }
        }
        let reshaped = infos.iter().zip(&self.groups).any(|(new, old)| {
            new.top != old.top || new.throttle != old.throttle || new.path != old.path
        });
        for (g, info) in infos.iter().enumerate().skip(self.groups.len()) {
            for d in 0..2 {
                self.nodes[d][g].lane = lane_for(info.throttle[d]);
            }
        }
        self.groups = infos;
        self.buckets = buckets;
        self.tops = tops;
        self.next_release = None;
        if reshaped {
            self.hold_again(now);
        }
    }

    /// Take every held request out and insert it again, in arrival order, under the
    /// layer's new shape.
    fn hold_again(&mut self, now: Nanos) {
        let mut held: Vec<Request> = Vec::with_capacity(self.held);
        for d in 0..2 {
            for g in 0..self.groups.len() {
                let node = &mut self.nodes[d][g];
                while let Some(request) = node.lane.pop() {
                    held.push(request);
                }
                node.held = 0;
                node.lane = lane_for(self.groups[g].throttle[d]);
            }
        }
        self.held = 0;
        held.sort_by_key(|request| request.id);
        for request in held {
            self.insert(request, now);
        }
    }
}

/// The lane a group's held requests wait in under `throttle`.
pub(super) fn lane_for(throttle: Throttle) -> Lane {
    match throttle {
        Throttle::Priority => Lane::default(),
        Throttle::Above | Throttle::IoThrottle => Lane::in_arrival_order(),
    }
}
