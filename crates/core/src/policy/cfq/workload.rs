//! Choosing what to serve: the group with the least vdisktime, then within it the class (RT
//! before BE before IDLE) and the workload type, each workload type getting a *workload slice*
//! of the group's slice in proportion to its number of queues.
//!
//! Within the chosen class the workload type whose first queue waited longest (lowest `rb_key`)
//! wins. Its slice is `group_slice × queues of the type / max(average busy queues of the class,
//! busy queues now)`; async workloads get at most `target_latency × busy async / all busy`,
//! scaled by `slice_async / slice_sync`; sync workloads get at least `2 × slice_idle`; every
//! workload slice is at least 2 ms. A group leaving service keeps what was left of its workload
//! slice and resumes it next time.

use crate::trace::Traced;
use crate::{GroupId, Nanos, PriorityClass, TraceEvent};

use super::service_tree::{TreeIndex, WorkloadType};
use super::slice::mul_div;
use super::{Cfq, QueueId};

/// The shortest workload slice (`CFQ_MIN_TT`, two jiffies).
const MIN_WORKLOAD_SLICE: Nanos = 2_000_000;
/// How long the IDLE class is served before looking again (one jiffy).
const IDLE_WORKLOAD_SLICE: Nanos = 1_000_000;

/// What is being served.
#[derive(Debug, Clone, Copy)]
pub(super) struct Serving {
    /// The group chosen last.
    pub(super) group: Option<GroupId>,
    /// The class being served.
    pub(super) class: PriorityClass,
    /// The workload type being served.
    pub(super) workload: WorkloadType,
    /// When the workload slice ends (`None`: it has).
    pub(super) expires: Option<Nanos>,
}

impl Default for Serving {
    /// Best effort async, expired: what the kernel's zeroed state means.
    fn default() -> Self {
        Self {
            group: None,
            class: PriorityClass::BestEffort,
            workload: WorkloadType::Async,
            expires: None,
        }
    }
}

impl Serving {
    /// Whether the workload slice is over.
    fn expired(&self, now: Nanos) -> bool {
        self.expires.is_none_or(|expires| now > expires)
    }

    /// The workload being served and what is left of its slice, if any.
    pub(super) fn remaining(&self, now: Nanos) -> Option<SavedWorkload> {
        let expires = self.expires.filter(|&expires| expires > now)?;
        Some(SavedWorkload {
            slice: expires - now,
            class: self.class,
            workload: self.workload,
        })
    }
}

/// A group's unfinished workload slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SavedWorkload {
    /// Time left.
    pub(super) slice: Nanos,
    /// Its class.
    pub(super) class: PriorityClass,
    /// Its workload type.
    pub(super) workload: WorkloadType,
}

impl Cfq {
    /// Serve the leftmost group next, resuming its saved workload (the kernel's `cfq_choose_cfqg`).
    pub(super) fn choose_group(&mut self, now: Nanos) {
        let Some(group) = self.group_tree.first() else {
            self.serving.group = None;
            return;
        };
        self.serving.group = Some(group);
        let saved = self.groups[group.index()].saved_workload;
        match saved {
            Some(saved) => {
                self.serving.expires = Some(now.saturating_add(saved.slice));
                self.serving.class = saved.class;
                self.serving.workload = saved.workload;
            }
            None => self.serving.expires = None,
        }
        self.choose_workload(group, now);
        self.emit(|cfq| TraceEvent::GroupStart {
            group,
            class: cfq.serving.class,
            workload: cfq.serving.workload.into(),
            slice: cfq.serving.expires.map_or(0, |at| at.saturating_sub(now)),
            resumed: saved.is_some_and(|saved| {
                (saved.class, saved.workload) == (cfq.serving.class, cfq.serving.workload)
            }),
        });
    }

    /// Choose the class, and unless the current workload of that class still has queues and
    /// time, a new workload type and its slice (the kernel's `choose_wl_class_and_type`).
    fn choose_workload(&mut self, group: GroupId, now: Nanos) {
        let original_class = self.serving.class;
        let class = [PriorityClass::RealTime, PriorityClass::BestEffort]
            .into_iter()
            .find(|&class| self.busy_queues_in_class(group, class) > 0);
        let Some(class) = class else {
            self.serving.class = PriorityClass::Idle;
            self.serving.expires = Some(now.saturating_add(IDLE_WORKLOAD_SLICE));
            return;
        };
        self.serving.class = class;
        if class == original_class {
            let tree = TreeIndex::of(class, self.serving.workload);
            let count = self.groups[group.index()].trees[tree.index()].count();
            if count > 0 && !self.serving.expired(now) {
                return;
            }
        }
        self.serving.workload = self.choose_workload_type(group, class);
        let slice = self.workload_slice(group, class, self.serving.workload);
        self.serving.expires = Some(now.saturating_add(slice));
    }

    /// The workload type of `class` whose first queue has the lowest `rb_key`.
    fn choose_workload_type(&self, group: GroupId, class: PriorityClass) -> WorkloadType {
        let trees = &self.groups[group.index()].trees;
        WorkloadType::ALL
            .iter()
            .filter_map(|&workload| {
                let first = trees[TreeIndex::of(class, workload).index()].first()?;
                Some((first.0, workload))
            })
            .min_by_key(|&(key, _)| key)
            .map_or(WorkloadType::SyncNoIdle, |(_, workload)| workload)
    }

    /// The workload slice of a type: its share of the group's slice by number of queues.
    fn workload_slice(
        &self,
        group: GroupId,
        class: PriorityClass,
        workload: WorkloadType,
    ) -> Nanos {
        let g = &self.groups[group.index()];
        let count = g.trees[TreeIndex::of(class, workload).index()].count() as u64;
        let busy = self.busy_queues_in_class(group, class) as u64;
        let divisor = g.busy_queues_avg[class.index()].max(busy);
        let mut slice = mul_div(self.group_slice(group), count, divisor);
        if workload == WorkloadType::Async {
            let busy_async = self.busy_async_queues(group) as u64;
            let share = mul_div(
                self.config.target_latency,
                busy_async,
                self.busy_queues as u64,
            );
            slice = mul_div(
                slice.min(share),
                self.config.slice_async,
                self.config.slice_sync,
            );
        } else {
            slice = slice.max(self.config.slice_idle.saturating_mul(2));
        }
        slice.max(MIN_WORKLOAD_SLICE)
    }

    /// The first queue of the workload being served (the kernel's `cfq_get_next_queue`).
    pub(super) fn next_queue(&self) -> Option<QueueId> {
        if self.slab.is_empty() {
            return None;
        }
        let group = self.serving.group?;
        let tree = TreeIndex::of(self.serving.class, self.serving.workload);
        self.groups[group.index()].trees[tree.index()]
            .first()
            .map(|(_, queue)| queue)
    }
}
