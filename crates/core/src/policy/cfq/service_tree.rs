//! Service trees: the queues of a group waiting for a slice, one tree per class and workload
//! type (RT and BE × async, sync-noidle, sync; one IDLE tree), each ordered by `rb_key`, the
//! leftmost served first.
//!
//! A queue (re)joining a tree gets `rb_key = now + (queues in group − 1) × (prio_slice(sync, 0) −
//! its own slice) − slice_resid`: lower priorities land further back, and a queue cut short by a
//! preemption is credited what it had left (or debited its overrun). A preempting queue goes in
//! front (`first − 1 s`); IDLE-class queues go 200 ms behind the last one. Equal keys keep
//! arrival order.

use std::collections::BTreeSet;

use crate::{Nanos, PriorityClass};

use super::idle::ThinkTime;
use super::slice::prio_slice;
use super::{Cfq, QueueId};

/// How far behind the last queue an IDLE-class queue joins (`CFQ_IDLE_DELAY`, HZ/5).
const IDLE_DELAY: i64 = 200_000_000;
/// How far ahead of the first queue a preempting queue joins (HZ).
const PREEMPT_AHEAD: i64 = 1_000_000_000;

/// The kind of work a queue does, which decides its tree within a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(super) enum WorkloadType {
    /// Async writeback.
    #[default]
    Async,
    /// Sync queues CFQ does not idle for (seeky, or thinking too long).
    SyncNoIdle,
    /// Sync queues with an idle window.
    Sync,
}

impl WorkloadType {
    /// Every type, in the kernel's order.
    pub(super) const ALL: [WorkloadType; 3] = [Self::Async, Self::SyncNoIdle, Self::Sync];
}

/// One of a group's seven service trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TreeIndex(usize);

impl TreeIndex {
    /// Trees per group.
    pub(super) const COUNT: usize = 7;

    /// The tree of a class and workload type (the IDLE class has one tree for every type).
    pub(super) fn of(class: PriorityClass, workload: WorkloadType) -> Self {
        match class {
            PriorityClass::RealTime => Self(workload as usize),
            PriorityClass::BestEffort => Self(3 + workload as usize),
            PriorityClass::Idle => Self(6),
        }
    }

    /// Index into a group's array of trees.
    pub(super) fn index(self) -> usize {
        self.0
    }
}

/// Where a queue sits: its tree, key and insertion number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TreePosition {
    /// The tree.
    pub(super) tree: TreeIndex,
    /// Its `rb_key`.
    pub(super) key: i64,
    /// Insertion order among equal keys.
    pub(super) seq: u64,
}

/// One service tree.
#[derive(Debug, Clone, Default)]
pub(super) struct ServiceTree {
    queues: BTreeSet<(i64, u64, QueueId)>,
    /// Think time of the tree's processes together (for service-tree idling).
    pub(super) think_time: ThinkTime,
}

impl ServiceTree {
    /// Queues on the tree.
    pub(super) fn count(&self) -> usize {
        self.queues.len()
    }

    /// The leftmost queue and its key.
    pub(super) fn first(&self) -> Option<(i64, QueueId)> {
        self.queues.first().map(|&(key, _, queue)| (key, queue))
    }

    /// The rightmost queue and its key.
    fn last(&self) -> Option<(i64, QueueId)> {
        self.queues.last().map(|&(key, _, queue)| (key, queue))
    }

    fn insert(&mut self, position: TreePosition, queue: QueueId) {
        self.queues.insert((position.key, position.seq, queue));
    }

    pub(super) fn remove(&mut self, position: TreePosition, queue: QueueId) {
        self.queues.remove(&(position.key, position.seq, queue));
    }
}

/// A time as a signed key.
fn signed(now: Nanos) -> i64 {
    i64::try_from(now).unwrap_or(i64::MAX)
}

impl Cfq {
    /// The workload type a queue belongs to now.
    pub(super) fn workload_type(&self, queue: QueueId) -> WorkloadType {
        let q = &self.queues[queue];
        match (q.sync, q.idle_window) {
            (false, _) => WorkloadType::Async,
            (true, false) => WorkloadType::SyncNoIdle,
            (true, true) => WorkloadType::Sync,
        }
    }

    /// The tree a queue belongs on now.
    pub(super) fn tree_index(&self, queue: QueueId) -> TreeIndex {
        TreeIndex::of(self.queues[queue].class, self.workload_type(queue))
    }

    /// The tree a queue is on, or would be on.
    pub(super) fn tree_of(&self, queue: QueueId) -> &ServiceTree {
        let q = &self.queues[queue];
        let tree = q
            .tree_position
            .map_or_else(|| self.tree_index(queue), |position| position.tree);
        &self.groups[q.group.index()].trees[tree.index()]
    }

    /// How far back a queue's priority places it: `(queues in group − 1) ×
    /// (prio_slice(sync, 0) − its slice)` (negative when the group has no other queue).
    fn slice_offset(&self, queue: QueueId) -> i64 {
        let group = self.queues[queue].group.index();
        let others = i128::try_from(self.groups[group].nr_queues).unwrap_or(i128::MAX) - 1;
        let top = i128::from(prio_slice(self.config.slice_sync, 0));
        let own = i128::from(self.prio_to_slice(queue));
        i64::try_from(others * (top - own)).unwrap_or(i64::MAX)
    }

    /// The key a queue gets on `tree` now.
    fn rb_key(&mut self, queue: QueueId, tree: TreeIndex, add_front: bool, now: Nanos) -> i64 {
        let group = self.queues[queue].group.index();
        let service_tree = &self.groups[group].trees[tree.index()];
        if self.queues[queue].is_idle_class() {
            let last = service_tree.last().filter(|&(_, last)| last != queue);
            IDLE_DELAY.saturating_add(last.map_or(signed(now), |(key, _)| key))
        } else if add_front {
            let first = service_tree.first().map_or(signed(now), |(key, _)| key);
            first.saturating_sub(PREEMPT_AHEAD)
        } else {
            let key = signed(now).saturating_add(self.slice_offset(queue));
            let resid = std::mem::take(&mut self.queues[queue].slice.resid);
            key.saturating_sub(resid)
        }
    }

    /// Put a queue on the tree its class and type say, in the group `group_isolation` says,
    /// at the key it earns now (the kernel's `cfq_service_tree_add`). A queue new to the
    /// trees, or to its group, makes its group busy.
    pub(super) fn service_tree_add(&mut self, queue: QueueId, add_front: bool, now: Nanos) {
        let moved = self.place_in_group(queue);
        let tree = self.tree_index(queue);
        let key = self.rb_key(queue, tree, add_front, now);
        let group = self.queues[queue].group;
        let old = self.queues[queue].tree_position;
        if let Some(old) = old {
            if old.key == key && old.tree == tree {
                return;
            }
            self.groups[group.index()].trees[old.tree.index()].remove(old, queue);
        }
        let position = TreePosition {
            tree,
            key,
            seq: self.next_sequence(),
        };
        self.groups[group.index()].trees[tree.index()].insert(position, queue);
        self.queues[queue].tree_position = Some(position);
        if moved || (old.is_none() && !add_front) {
            self.notify_queue_add(group);
        }
    }

    /// A queue with requests joins the round robin (the kernel's `cfq_add_cfqq_rr`).
    pub(super) fn add_to_round_robin(&mut self, queue: QueueId, now: Nanos) {
        self.queues[queue].on_rr = true;
        self.busy_queues += 1;
        if self.queues[queue].sync {
            self.busy_sync_queues += 1;
        }
        self.resort(queue, now);
    }

    /// A queue leaves the round robin (the kernel's `cfq_del_cfqq_rr`).
    pub(super) fn del_from_round_robin(&mut self, queue: QueueId) {
        let group = self.queues[queue].group;
        self.queues[queue].on_rr = false;
        if let Some(position) = self.queues[queue].tree_position.take() {
            self.groups[group.index()].trees[position.tree.index()].remove(position, queue);
        }
        self.notify_queue_del(group);
        self.busy_queues = self.busy_queues.saturating_sub(1);
        if self.queues[queue].sync {
            self.busy_sync_queues = self.busy_sync_queues.saturating_sub(1);
        }
    }

    /// Re-place a queue on the round robin after its slice (the kernel's `cfq_resort_rr_list`).
    pub(super) fn resort(&mut self, queue: QueueId, now: Nanos) {
        if self.queues[queue].on_rr {
            self.service_tree_add(queue, false, now);
        }
    }
}
