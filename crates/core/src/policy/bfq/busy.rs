//! What BFQ counts about the busy queues to tell a symmetric scenario from an asymmetric one
//! (the kernel's `bfq_data` fields `busy_queues[]`, `wr_busy_queues`, `queue_weights_tree`
//! and `num_groups_with_pending_reqs`): busy queues per class, how many are weight raised,
//! how many have each weight, and the groups with requests queued or in flight. Idling,
//! injection, the async charge factor and parallel service's lingering all ask it whether
//! the scenario is asymmetric for a queue.
//!
//! Source: Linux's `block/bfq-iosched.c` (`bfq_asymmetric_scenario`,
//! `bfq_weights_tree_add`/`__bfq_weights_tree_remove`) and `bfq-wf2q.c`
//! (`bfq_add_bfqq_busy`, `bfq_del_bfqq_busy`), 5.x–6.x. Our own code.

use std::collections::BTreeMap;

use crate::GroupId;

use super::wf2q::CLASSES;

/// The busy-queue counts.
#[derive(Debug, Clone)]
pub(super) struct BusyCounts {
    /// Busy queues per class.
    per_class: [usize; CLASSES],
    /// Busy weight-raised queues.
    raised: usize,
    /// Busy queues per weight (for the asymmetry test).
    weights: BTreeMap<u64, usize>,
    /// Requests queued or in flight per group.
    group_pending: Vec<usize>,
    /// Groups other than the root with requests queued or in flight.
    groups_with_pending: usize,
}

impl BusyCounts {
    /// No queue busy, in a hierarchy of `groups` groups.
    pub(super) fn new(groups: usize) -> Self {
        Self {
            per_class: [0; CLASSES],
            raised: 0,
            weights: BTreeMap::new(),
            group_pending: vec![0; groups],
            groups_with_pending: 0,
        }
    }

    /// A group was added: it has nothing pending.
    pub(super) fn add_group(&mut self) {
        self.group_pending.push(0);
    }

    /// Busy queues.
    #[inline]
    pub(super) fn queues(&self) -> usize {
        self.per_class.iter().sum()
    }

    /// Busy weight-raised queues.
    #[inline]
    pub(super) fn raised(&self) -> usize {
        self.raised
    }

    /// The scenario is asymmetric for a queue of this weight: busy queues of several weights
    /// (unless it has the smallest), several classes busy, or a group other than the root
    /// with pending requests.
    #[inline]
    pub(super) fn asymmetric(&self, weight: u64) -> bool {
        let smallest = self.weights.keys().next().is_some_and(|&w| w == weight);
        let varied = !smallest && self.weights.len() > 1;
        let classes = self.per_class.iter().filter(|&&n| n > 0).count();
        varied || classes > 1 || self.groups_with_pending > 0
    }

    /// A queue of this class, weight and raising became busy.
    pub(super) fn add(&mut self, class: usize, weight: u64, raised: bool) {
        self.per_class[class] += 1;
        *self.weights.entry(weight).or_insert(0) += 1;
        self.raised += usize::from(raised);
    }

    /// A queue of this class, weight and raising is no longer busy.
    pub(super) fn remove(&mut self, class: usize, weight: u64, raised: bool) {
        self.per_class[class] = self.per_class[class].saturating_sub(1);
        self.forget_weight(weight);
        self.raised = self.raised.saturating_sub(usize::from(raised));
    }

    /// A busy queue's weight or raising changed.
    pub(super) fn reweigh(&mut self, old: (u64, bool), new: (u64, bool)) {
        self.forget_weight(old.0);
        *self.weights.entry(new.0).or_insert(0) += 1;
        self.raised = self.raised + usize::from(new.1) - usize::from(old.1);
    }

    fn forget_weight(&mut self, weight: u64) {
        if let Some(count) = self.weights.get_mut(&weight) {
            *count -= 1;
            if *count == 0 {
                self.weights.remove(&weight);
            }
        }
    }

    /// A request of the group arrived (`up`) or completed.
    #[inline]
    pub(super) fn group_pending(&mut self, group: GroupId, up: bool) {
        let Some(count) = self.group_pending.get_mut(group.index()) else {
            return;
        };
        let before = *count;
        *count = if up {
            before + 1
        } else {
            before.saturating_sub(1)
        };
        if group != GroupId::ROOT {
            match (before, *count) {
                (0, 1) => self.groups_with_pending += 1,
                (1, 0) => self.groups_with_pending = self.groups_with_pending.saturating_sub(1),
                _ => {}
            }
        }
    }
}
