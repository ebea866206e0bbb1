//! Groups (cgroups) and the device-wide group service tree.
//!
//! Each group with busy queues sits on one tree ordered by *vdisktime*; the leftmost is served
//! next. A group's share is its *vfraction*: its tasks' `leaf_weight` against the weights of its
//! active child groups, times its own weight against its active siblings', and so on up to the
//! root — computed in 12-bit fixed point when the group (re)joins the tree, as the kernel does.
//! When a queue's slice ends its group is charged `vdisktime += charge / vfraction` (kept in the
//! kernel's scale: `charge << 24 / vfraction`), where the charge is the slice time used, or in
//! IOPS mode the requests dispatched; an async queue in a group with no sync queues pays its whole
//! allotted slice. A group that becomes busy is placed after the last one, plus
//! `CFQ_IDLE_DELAY` (200 ms in time mode — 200 jiffies added to the scaled vdisktime, so about
//! 49 µs of service at a full share — and 200 units in IOPS mode): an intermittent group gets no
//! credit for having been idle. A group's slice is `target_latency × vfraction`.
//!
//! A weight changed at run time waits in `new_weight` and is taken when the group is next put
//! on the tree after leaving it (`cfq_update_group_weight`, called from
//! `cfq_group_service_tree_add` when the group becomes active, block/cfq-iosched.c, 3.x): a
//! group that stays busy keeps contributing its old weight to its parent's sum until it idles.
//!
//! Weights are clamped to CFQ's 10..=1000. The root group counts as weight and leaf weight
//! 1000 (twice the default); other groups' tasks have the default leaf weight 500.

use crate::trace::Traced;
use std::collections::{BTreeMap, BTreeSet};

use crate::{GroupId, GroupTree, Nanos, PriorityClass};

use super::idle::ThinkTime;
use super::service_tree::{ServiceTree, TreeIndex, WorkloadType};
use super::workload::SavedWorkload;
use super::{Cfq, QueueId};

/// vfraction's fixed point: 12 bits (`CFQ_SERVICE_SHIFT`).
pub(super) const VFRACTION_SHIFT: u32 = 12;
/// A vfraction of 1 (the whole device).
pub(super) const VFRACTION_ONE: u64 = 1 << VFRACTION_SHIFT;
/// Smallest weight CFQ accepts.
const WEIGHT_MIN: u32 = 10;
/// Largest weight CFQ accepts.
const WEIGHT_MAX: u32 = 1000;
/// The weight and leaf weight of the root group: twice the default.
const ROOT_WEIGHT: u64 = 1000;
/// The default weight of a group's own tasks against its child groups.
const LEAF_WEIGHT: u64 = 500;
/// `CFQ_IDLE_DELAY` (HZ/5) in time mode: 200 ms, added to the scaled vdisktime.
const TIME_MODE_GROUP_DELAY: u128 = 200_000_000;
/// `CFQ_IDLE_DELAY` in IOPS mode: 200, added to the scaled vdisktime.
const IOPS_MODE_GROUP_DELAY: u128 = 200;
/// The busy-queue average is an EWMA of divisor 4, rising fast and decaying slowly.
const HISTORY_DIVISOR: u64 = 4;

/// One group's CFQ state.
#[derive(Debug, Clone)]
pub(super) struct CfqGroup {
    /// The parent group, `None` for the root.
    pub(super) parent: Option<GroupId>,
    /// Its weight among its siblings.
    pub(super) weight: u64,
    /// Its own tasks' weight against its child groups.
    pub(super) leaf_weight: u64,
    /// A weight set at run time, taken at the group's next activation.
    pub(super) new_weight: Option<u64>,
    /// Activations below and at it: itself on the tree, plus its active children.
    pub(super) nr_active: u32,
    /// Sum of the weights competing at its level: its leaf weight if active, plus its active children's.
    pub(super) children_weight: u64,
    /// Its share of the device, 12-bit fixed point, while on the tree.
    pub(super) vfraction: u64,
    /// Its virtual disk time, in the kernel's scale.
    pub(super) vdisktime: u128,
    /// Its key on the group tree while on it.
    pub(super) tree_key: Option<(u128, u64)>,
    /// Its queues on the round robin.
    pub(super) nr_queues: usize,
    /// EWMA of busy queues per class (RT, BE), for slice scaling and workload slices.
    pub(super) busy_queues_avg: [u64; 3],
    /// Its service trees (see [`TreeIndex`]).
    pub(super) trees: [ServiceTree; TreeIndex::COUNT],
    /// The workload it was serving when its last slice ended, and what was left of it.
    pub(super) saved_workload: Option<SavedWorkload>,
    /// Its requests at the device.
    pub(super) dispatched: usize,
    /// Think time of all its processes together (for group idling).
    pub(super) think_time: ThinkTime,
    /// Its async queues by (class, level).
    pub(super) async_queues: BTreeMap<(usize, u8), QueueId>,
}

impl CfqGroup {
    fn new(parent: Option<GroupId>, weight: u64, leaf_weight: u64) -> Self {
        Self {
            parent,
            weight,
            leaf_weight,
            new_weight: None,
            nr_active: 0,
            children_weight: 0,
            vfraction: 0,
            vdisktime: 0,
            tree_key: None,
            nr_queues: 0,
            busy_queues_avg: [0; 3],
            trees: Default::default(),
            saved_workload: None,
            dispatched: 0,
            think_time: ThinkTime::default(),
            async_queues: BTreeMap::new(),
        }
    }
}

/// CFQ's state for every group of the run, in id order.
pub(super) fn build_groups(tree: &GroupTree) -> Vec<CfqGroup> {
    tree.iter()
        .map(|(id, group)| cfq_group(id, group))
        .collect()
}

/// CFQ's state for the groups of `tree` up to `group` that `groups` lacks: added while the
/// run goes on.
pub(super) fn grow_groups(groups: &mut Vec<CfqGroup>, group: GroupId, tree: &GroupTree) {
    while groups.len() <= group.index() {
        let id = GroupId(groups.len() as u32);
        groups.push(cfq_group(id, tree.get(id)));
    }
}

fn cfq_group(id: GroupId, group: &crate::Group) -> CfqGroup {
    if id == GroupId::ROOT {
        CfqGroup::new(None, ROOT_WEIGHT, ROOT_WEIGHT)
    } else {
        CfqGroup::new(group.parent, cfq_weight(group.weight), LEAF_WEIGHT)
    }
}

/// A group weight as CFQ uses it: clamped to 10..=1000.
pub(super) fn cfq_weight(weight: u32) -> u64 {
    u64::from(weight.clamp(WEIGHT_MIN, WEIGHT_MAX))
}

/// The device-wide tree of busy groups, by vdisktime.
#[derive(Debug, Clone, Default)]
pub(super) struct GroupServiceTree {
    groups: BTreeSet<(u128, u64, GroupId)>,
    /// The smallest vdisktime served so far (never decreases).
    pub(super) min_vdisktime: u128,
}

impl GroupServiceTree {
    /// The leftmost group, which is served next; the minimum vdisktime follows it.
    pub(super) fn first(&mut self) -> Option<GroupId> {
        let &(vdisktime, _, group) = self.groups.first()?;
        self.min_vdisktime = self.min_vdisktime.max(vdisktime);
        Some(group)
    }

    /// The largest vdisktime on the tree.
    fn last_vdisktime(&self) -> Option<u128> {
        self.groups.last().map(|&(vdisktime, _, _)| vdisktime)
    }
}

/// `charge << 24 / vfraction`: the vdisktime a charge costs at this share.
pub(super) fn scale_charge(charge: u64, vfraction: u64) -> u128 {
    (u128::from(charge) << (2 * VFRACTION_SHIFT)) / u128::from(vfraction.max(1))
}

impl Cfq {
    /// Put a group on the group tree and work out its vfraction, activating its ancestors
    /// (the kernel's `cfq_group_service_tree_add`).
    fn activate_group(&mut self, group: GroupId) {
        let mut position = group.index();
        let own = &mut self.groups[position];
        let mut propagate = own.nr_active == 0;
        own.nr_active += 1;
        own.children_weight += own.leaf_weight;
        let mut vfraction = u128::from(VFRACTION_ONE) * u128::from(own.leaf_weight)
            / u128::from(own.children_weight);
        while let Some(parent) = self.groups[position].parent.map(GroupId::index) {
            if propagate {
                // Newly active at this level: a weight set meanwhile applies now.
                if let Some(new_weight) = self.groups[position].new_weight.take() {
                    self.groups[position].weight = new_weight;
                }
            }
            let weight = self.groups[position].weight;
            let parent_group = &mut self.groups[parent];
            if propagate {
                propagate = parent_group.nr_active == 0;
                parent_group.nr_active += 1;
                parent_group.children_weight += weight;
            }
            vfraction = vfraction * u128::from(weight) / u128::from(parent_group.children_weight);
            position = parent;
        }
        let seq = self.next_sequence();
        let g = &mut self.groups[group.index()];
        g.vfraction = u64::try_from(vfraction).unwrap_or(VFRACTION_ONE).max(1);
        g.tree_key = Some((g.vdisktime, seq));
        self.group_tree.groups.insert((g.vdisktime, seq, group));
    }

    /// Take a group off the group tree, deactivating ancestors left with nothing active
    /// (the kernel's `cfq_group_service_tree_del`).
    fn deactivate_group(&mut self, group: GroupId) {
        let mut position = group.index();
        let own = &mut self.groups[position];
        own.nr_active = own.nr_active.saturating_sub(1);
        own.children_weight = own.children_weight.saturating_sub(own.leaf_weight);
        let mut propagate = own.nr_active == 0;
        while propagate {
            self.groups[position].vfraction = 0;
            let Some(parent) = self.groups[position].parent.map(GroupId::index) else {
                break;
            };
            let weight = self.groups[position].weight;
            let parent_group = &mut self.groups[parent];
            parent_group.nr_active = parent_group.nr_active.saturating_sub(1);
            parent_group.children_weight = parent_group.children_weight.saturating_sub(weight);
            propagate = parent_group.nr_active == 0;
            position = parent;
        }
        if let Some((vdisktime, seq)) = self.groups[group.index()].tree_key.take() {
            self.group_tree.groups.remove(&(vdisktime, seq, group));
        }
    }

    /// How far behind the last group a newly busy group is placed.
    fn group_delay(&self) -> u128 {
        if self.iops_mode() {
            IOPS_MODE_GROUP_DELAY
        } else {
            TIME_MODE_GROUP_DELAY
        }
    }

    /// A queue of the group joined the round robin: the group becomes busy if it was not,
    /// placed after the last busy group (the kernel's `cfq_group_notify_queue_add`).
    pub(super) fn notify_queue_add(&mut self, group: GroupId) {
        let g = group.index();
        self.groups[g].nr_queues += 1;
        if self.groups[g].tree_key.is_some() {
            return;
        }
        self.groups[g].vdisktime = match self.group_tree.last_vdisktime() {
            Some(last) => last + self.group_delay(),
            None => self.group_tree.min_vdisktime,
        };
        self.activate_group(group);
    }

    /// A queue of the group left the round robin; the group leaves the tree with its last queue.
    pub(super) fn notify_queue_del(&mut self, group: GroupId) {
        let g = group.index();
        self.groups[g].nr_queues = self.groups[g].nr_queues.saturating_sub(1);
        if self.groups[g].nr_queues > 0 {
            return;
        }
        self.deactivate_group(group);
        self.groups[g].saved_workload = None;
    }

    /// What the active queue's slice costs its group: slice time, requests in IOPS mode, or
    /// an async queue's whole slice when the group has no sync queue.
    fn group_charge(&self, queue: QueueId, now: Nanos) -> u64 {
        let q = &self.queues[queue];
        let group = &self.groups[q.group.index()];
        let idle_tree = TreeIndex::of(PriorityClass::Idle, WorkloadType::Async);
        let sync_queues = group
            .nr_queues
            .saturating_sub(self.busy_async_queues(q.group))
            .saturating_sub(group.trees[idle_tree.index()].count());
        if self.iops_mode() {
            q.slice.dispatched
        } else if !q.sync && sync_queues == 0 {
            q.slice.allocated
        } else {
            self.slice_charge(queue, now)
        }
    }

    /// Charge the active queue's group for its slice and remember its workload (the kernel's
    /// `cfq_group_served`).
    pub(super) fn group_served(&mut self, queue: QueueId, now: Nanos) {
        let group = self.queues[queue].group;
        let charge = self.group_charge(queue, now);
        self.emit(|cfq| crate::TraceEvent::GroupEnd {
            group,
            charge,
            unit: if cfq.iops_mode() {
                crate::trace::ChargeUnit::Requests
            } else {
                crate::trace::ChargeUnit::Time
            },
        });
        let vfraction = self.groups[group.index()].vfraction;
        let on_tree = self.groups[group.index()].tree_key.is_some();
        if on_tree {
            self.deactivate_group(group);
        }
        self.groups[group.index()].vdisktime += scale_charge(charge, vfraction);
        if on_tree {
            self.activate_group(group);
        }
        self.groups[group.index()].saved_workload = self.serving.remaining(now);
    }

    /// A group's slice: `target_latency × vfraction`.
    pub(super) fn group_slice(&self, group: GroupId) -> Nanos {
        let vfraction = self.groups[group.index()].vfraction;
        let slice = u128::from(self.config.target_latency) * u128::from(vfraction);
        u64::try_from(slice >> VFRACTION_SHIFT).unwrap_or(u64::MAX)
    }

    /// A group's queues of a class on the round robin.
    pub(super) fn busy_queues_in_class(&self, group: GroupId, class: PriorityClass) -> usize {
        let trees = &self.groups[group.index()].trees;
        match class {
            PriorityClass::Idle => trees[TreeIndex::of(class, WorkloadType::Async).index()].count(),
            _ => WorkloadType::ALL
                .iter()
                .map(|&workload| trees[TreeIndex::of(class, workload).index()].count())
                .sum(),
        }
    }

    /// A group's async queues on the round robin (RT and BE).
    pub(super) fn busy_async_queues(&self, group: GroupId) -> usize {
        let trees = &self.groups[group.index()].trees;
        [PriorityClass::RealTime, PriorityClass::BestEffort]
            .iter()
            .map(|&class| trees[TreeIndex::of(class, WorkloadType::Async).index()].count())
            .sum()
    }

    /// Update and return the group's average number of busy RT (or else BE) queues: it follows
    /// a rise at once and a fall slowly (the kernel's `cfq_group_get_avg_queues`).
    pub(super) fn average_busy_queues(&mut self, group: GroupId, real_time: bool) -> u64 {
        let class = if real_time {
            PriorityClass::RealTime
        } else {
            PriorityClass::BestEffort
        };
        let busy = u64::try_from(self.busy_queues_in_class(group, class)).unwrap_or(u64::MAX);
        let average = &mut self.groups[group.index()].busy_queues_avg[class.index()];
        let (low, high) = ((*average).min(busy), (*average).max(busy));
        let mult = HISTORY_DIVISOR - 1;
        *average = (mult * high + low + HISTORY_DIVISOR / 2) / HISTORY_DIVISOR;
        *average
    }

    /// Whether `ancestor` is `group` or one of its ancestors.
    pub(super) fn is_ancestor_or_self(&self, ancestor: GroupId, group: GroupId) -> bool {
        let mut current = Some(group);
        while let Some(g) = current {
            if g == ancestor {
                return true;
            }
            current = self.groups[g.index()].parent;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::cfq::testing::{cfq_with, ClosedLoop};
    use crate::time::ms;

    /// Run two always-busy readers, one per group, 10 ms a request, and list the first
    /// `count` vdisktime changes as (group index, change).
    fn charges(settings: &[(&str, &str)], count: usize) -> Vec<(usize, i128)> {
        let (mut cfq, ids) = cfq_with(settings, &[("a", 200), ("b", 800)]);
        let mut driver = ClosedLoop::start(&mut cfq, &[(1, ids[0]), (2, ids[1])], ms(10));
        let vdisktimes = |cfq: &Cfq| {
            ids.iter()
                .map(|g| cfq.groups[g.index()].vdisktime)
                .collect::<Vec<_>>()
        };
        let mut last = vdisktimes(&cfq);
        let mut changes = Vec::new();
        while changes.len() < count && driver.now < ms(5_000) {
            driver.step(&mut cfq);
            let now = vdisktimes(&cfq);
            for (group, (&new, &old)) in now.iter().zip(&last).enumerate() {
                if new != old {
                    changes.push((group, new as i128 - old as i128));
                }
            }
            last = now;
        }
        changes
    }

    #[test]
    fn time_mode_charges_slice_time_over_vfraction() {
        let a_slice = u64::try_from(300_000_000u128 * 819 / 4096).unwrap();
        let scaled = |charge: u64, vfraction: u64| scale_charge(charge, vfraction) as i128;
        assert_eq!(
            charges(&[], 3),
            vec![
                // a joined alone (the whole device), and is charged its 100 ms slice;
                (0, scaled(ms(100), 4096)),
                // b has 800/1000 of the device;
                (1, scaled(ms(100), 3276)),
                // a now has 200/1000 (819/4096) and low_latency cut its slice to its group slice.
                (0, scaled(a_slice, 819)),
            ]
        );
    }

    #[test]
    fn iops_mode_charges_requests_dispatched_over_vfraction() {
        // slice_idle=0 with command queueing not ruled out: IOPS mode. 100 ms slices of 10 ms
        // requests: 11 dispatched (one before the slice started at the first completion).
        assert_eq!(
            charges(&[("slice_idle", "0")], 3),
            vec![
                (0, scale_charge(11, 4096) as i128),
                (1, scale_charge(11, 3276) as i128),
                // a's slice is now its 60 ms group slice: 7 requests at 200/1000.
                (0, scale_charge(7, 819) as i128),
            ]
        );
    }

    #[test]
    fn vfraction_is_weight_over_active_sibling_weights() {
        let (mut cfq, ids) = cfq_with(&[], &[("a", 200), ("b", 800)]);
        cfq.notify_queue_add(ids[0]);
        cfq.notify_queue_add(ids[1]);
        // a joined alone (4096 × 200/200), b against both (4096 × 800/1000 = 3276.8).
        assert_eq!(cfq.groups[ids[0].index()].vfraction, 4096);
        assert_eq!(cfq.groups[ids[1].index()].vfraction, 3276);
        // Re-joining recomputes against the siblings active now: 4096 × 200/1000 = 819.2.
        cfq.deactivate_group(ids[0]);
        cfq.activate_group(ids[0]);
        assert_eq!(cfq.groups[ids[0].index()].vfraction, 819);
        assert_eq!(cfq.group_slice(ids[0]), 300_000_000 * 819 / 4096);
    }

    #[test]
    fn nested_groups_compound_their_fractions() {
        let (mut cfq, ids) = cfq_with(&[], &[("p", 500), ("p/c", 1000), ("q", 500)]);
        cfq.notify_queue_add(ids[2]);
        cfq.notify_queue_add(ids[1]);
        // c: alone under p (1000/1000), p against q (500/1000): a half.
        assert_eq!(cfq.groups[ids[1].index()].vfraction, 2048);
        // p's own tasks (leaf weight 500) now compete with c (1000): a third of p's half.
        cfq.notify_queue_add(ids[0]);
        assert_eq!(
            cfq.groups[ids[0].index()].vfraction,
            4096 * 500 / 1500 * 500 / 1000
        );
    }

    #[test]
    fn new_groups_go_behind_the_last_one() {
        let (mut cfq, ids) = cfq_with(&[], &[("a", 500), ("b", 500)]);
        cfq.notify_queue_add(ids[0]);
        cfq.groups[ids[0].index()].vdisktime = 0;
        cfq.deactivate_group(ids[0]);
        cfq.groups[ids[0].index()].vdisktime = 5_000;
        cfq.activate_group(ids[0]);
        cfq.notify_queue_add(ids[1]);
        assert_eq!(
            cfq.groups[ids[1].index()].vdisktime,
            5_000 + u128::from(ms(200))
        );
    }

    #[test]
    fn charges_scale_by_the_inverse_of_vfraction() {
        // 100 ms at a fifth of the device (819/4096) costs five times as much as at the whole.
        assert_eq!(scale_charge(ms(100), 4096), u128::from(ms(100)) << 12);
        assert_eq!(
            scale_charge(ms(100), 819),
            (u128::from(ms(100)) << 24) / 819
        );
        assert_eq!(scale_charge(16, 3276), (16u128 << 24) / 3276);
    }
}
