//! Preemption: a request arriving for a queue other than the active one may end the active
//! queue's slice at once (the kernel's `cfq_should_preempt` and `cfq_preempt_queue`).
//!
//! The rules, in the order they are tried, for a new request in queue N while A is active:
//! an IDLE-class N never preempts, and an IDLE-class A is always preempted; a real-time A is
//! never preempted by a non-RT N; a sync request preempts an async A (unless A must dispatch).
//! From there on N's group must be A's group or an ancestor of it: N preempts when A's slice is
//! used up; when N is RT and A is not; when both are sync-noidle, that workload is being served,
//! A is empty and the tree holds just the two; when A is empty and would not idle; and when A is
//! idling for its next request and the new request lies within 8192 sectors of the head. (The
//! kernel also lets a metadata request preempt a queue with none; requests here carry no
//! metadata flag.)
//!
//! The preempted queue is expired as timed out, so it keeps what was left of its slice as
//! credit on its tree; N goes to the front of its tree with a fresh slice.

use crate::Nanos;

use super::queue::QueueId;
use super::service_tree::WorkloadType;
use super::Cfq;

/// A new request this close to the head (in sectors) is as good as the idling queue's own
/// (`CFQQ_CLOSE_THR`).
pub(super) const CLOSE_THRESHOLD: u64 = 8 * 1024;

/// Why a new request preempts the active queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PreemptReason {
    /// The active queue is IDLE class.
    ActiveIsIdleClass,
    /// A sync request against an async active queue.
    SyncOverAsync,
    /// The active queue's slice is used up.
    ActiveSliceUsed,
    /// A real-time queue against a non-RT active queue.
    RealTimeOverNonRealTime,
    /// Both sync-noidle, the active one empty on a tree of two.
    SyncNoIdleTreeOfTwo,
    /// The active queue is empty and would not idle.
    ActiveShouldNotIdle,
    /// The active queue idles and the request is close to the head.
    CloseToHead,
}

impl Cfq {
    /// Why a new request for `queue` (sync or not, at `sector`) preempts the active queue, if it does.
    pub(super) fn preempt_reason(
        &self,
        queue: QueueId,
        sync: bool,
        sector: u64,
        now: Nanos,
    ) -> Option<PreemptReason> {
        let active = self.active?;
        let (new, current) = (&self.queues[queue], &self.queues[active]);
        if new.is_idle_class() {
            return None;
        }
        if current.is_idle_class() {
            return Some(PreemptReason::ActiveIsIdleClass);
        }
        if current.is_real_time() && !new.is_real_time() {
            return None;
        }
        if sync && !current.sync && !current.must_dispatch {
            return Some(PreemptReason::SyncOverAsync);
        }
        if !self.is_ancestor_or_self(new.group, current.group) {
            return None;
        }
        if self.slice_used(active, now) {
            return Some(PreemptReason::ActiveSliceUsed);
        }
        if new.is_real_time() && !current.is_real_time() {
            return Some(PreemptReason::RealTimeOverNonRealTime);
        }
        self.same_class_reason(queue, active, sector)
    }

    /// The rules between queues of the same class and group.
    fn same_class_reason(
        &self,
        queue: QueueId,
        active: QueueId,
        sector: u64,
    ) -> Option<PreemptReason> {
        let current = &self.queues[active];
        let both_noidle = self.serving.workload == WorkloadType::SyncNoIdle
            && self.workload_type(queue) == WorkloadType::SyncNoIdle;
        if both_noidle && self.tree_of(queue).count() == 2 && current.is_empty() {
            return Some(PreemptReason::SyncNoIdleTreeOfTwo);
        }
        if current.is_empty() && !self.should_idle(active) {
            return Some(PreemptReason::ActiveShouldNotIdle);
        }
        if self.active_process.is_none() || !current.wait_request {
            return None;
        }
        (sector.abs_diff(self.last_position) <= CLOSE_THRESHOLD)
            .then_some(PreemptReason::CloseToHead)
    }

    /// `queue` preempts the active queue: the active queue expires keeping its leftover slice,
    /// and `queue` goes to the front of its tree with a fresh slice.
    pub(super) fn preempt(&mut self, queue: QueueId, now: Nanos) {
        let Some(active) = self.active else {
            return;
        };
        let old_type = self.workload_type(active);
        self.expire_active(true, now);
        if old_type != self.workload_type(queue) {
            // Otherwise the saved workload would be resumed and the preemption not happen.
            let group = self.queues[queue].group.index();
            self.groups[group].saved_workload = None;
        }
        self.service_tree_add(queue, true, now);
        let q = &mut self.queues[queue];
        q.slice.end = 0;
        q.slice.new = true;
    }
}
