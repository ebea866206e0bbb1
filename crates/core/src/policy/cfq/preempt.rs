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

use super::service_tree::WorkloadType;
use super::{Cfq, QueueId};

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
        (sector.abs_diff(self.device.last_position) <= CLOSE_THRESHOLD)
            .then_some(PreemptReason::CloseToHead)
    }

    /// `queue` preempts the active queue: the active queue expires keeping its leftover slice,
    /// and `queue` goes to the front of its tree with a fresh slice.
    pub(super) fn preempt(&mut self, queue: QueueId, now: Nanos) {
        let Some(active) = self.active else {
            return;
        };
        let old_type = self.workload_type(active);
        self.expire_active(true, crate::trace::ServiceEnd::Preempted, now);
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

#[cfg(test)]
mod tests {
    use super::PreemptReason::*;
    use super::*;
    use crate::policy::cfq::testing::{
        cfq, cfq_with, finish, in_group, read, serve_alone, take, with_priority,
    };
    use crate::time::ms;
    use crate::{Direction, IoPriority, PriorityClass, ProcessId, Request, RequestId, Scheduler};

    /// Offer a request as `insert` would, and say whether (and why) it would preempt, without
    /// preempting.
    fn offer(cfq: &mut Cfq, request: Request, now: Nanos) -> Option<PreemptReason> {
        let queue = cfq.queue_for_request(&request, now);
        cfq.admit(queue, request, now)
    }

    fn priority(class: PriorityClass, level: u8) -> IoPriority {
        IoPriority::new(class, level).expect("level 0-7")
    }

    /// Process 1 active with its slice started at 1 ms (100 ms long) and a request still queued.
    fn busy_reader(class: PriorityClass) -> Cfq {
        let mut cfq = cfq(&[]);
        let level = priority(class, 4);
        cfq.insert(with_priority(read(1, 1, 0), level), 0);
        cfq.insert(with_priority(read(2, 1, 16), level), 0);
        let first = take(&mut cfq, 0);
        finish(&mut cfq, &first, ms(1));
        cfq
    }

    #[test]
    fn an_idle_class_queue_is_preempted_and_never_preempts() {
        let mut cfq = cfq(&[]);
        let idle = priority(PriorityClass::Idle, 7);
        cfq.insert(with_priority(read(1, 1, 0), idle), 0);
        take(&mut cfq, 0);
        assert_eq!(
            offer(&mut cfq, read(2, 2, 1 << 20), ms(1)),
            Some(ActiveIsIdleClass)
        );

        let mut cfq = busy_reader(PriorityClass::BestEffort);
        let late = with_priority(read(3, 2, 1 << 20), idle);
        assert_eq!(
            offer(&mut cfq, late, ms(500)),
            None,
            "even against a used slice"
        );
    }

    #[test]
    fn a_sync_request_preempts_async_writeback() {
        let mut cfq = cfq(&[]);
        cfq.insert(
            Request::new(RequestId(1), ProcessId(1), Direction::Write, 0, 8),
            0,
        );
        take(&mut cfq, 0);
        assert_eq!(
            offer(&mut cfq, read(2, 2, 1 << 20), ms(1)),
            Some(SyncOverAsync)
        );
    }

    #[test]
    fn a_used_slice_is_preempted() {
        let mut cfq = busy_reader(PriorityClass::BestEffort);
        assert_eq!(
            offer(&mut cfq, read(3, 2, 1 << 20), ms(50)),
            None,
            "slice running"
        );
        let mut cfq = busy_reader(PriorityClass::BestEffort);
        assert_eq!(
            offer(&mut cfq, read(3, 2, 1 << 20), ms(101)),
            Some(ActiveSliceUsed)
        );
    }

    #[test]
    fn real_time_preempts_best_effort() {
        let mut cfq = busy_reader(PriorityClass::BestEffort);
        let rt = with_priority(read(3, 2, 1 << 20), priority(PriorityClass::RealTime, 4));
        assert_eq!(offer(&mut cfq, rt, ms(2)), Some(RealTimeOverNonRealTime));
    }

    #[test]
    fn real_time_is_never_preempted_by_non_real_time() {
        // Not by a best-effort reader, even with the RT slice used up ...
        let mut cfq = busy_reader(PriorityClass::RealTime);
        assert_eq!(offer(&mut cfq, read(3, 2, 1 << 20), ms(500)), None);
        // ... nor by a sync read against an RT async queue.
        let mut cfq = super::super::testing::cfq(&[]);
        let rt_write = Request::new(RequestId(1), ProcessId(1), Direction::Write, 0, 8);
        cfq.insert(
            with_priority(rt_write, priority(PriorityClass::RealTime, 0)),
            0,
        );
        take(&mut cfq, 0);
        assert_eq!(offer(&mut cfq, read(2, 2, 1 << 20), ms(1)), None);
    }

    #[test]
    fn within_a_group_only_rules_need_the_same_group_or_an_ancestor() {
        let (mut cfq, ids) = cfq_with(&[], &[("a", 500), ("a/child", 500), ("b", 500)]);
        let (a, child, b) = (ids[0], ids[1], ids[2]);
        let start = |cfq: &mut Cfq| {
            cfq.insert(in_group(read(1, 1, 0), child), 0);
            cfq.insert(in_group(read(2, 1, 16), child), 0);
            let first = take(cfq, 0);
            finish(cfq, &first, ms(1));
        };
        start(&mut cfq);
        assert_eq!(
            offer(&mut cfq, in_group(read(3, 2, 1 << 20), b), ms(500)),
            None,
            "another group"
        );
        let (mut cfq, _) = cfq_with(&[], &[("a", 500), ("a/child", 500), ("b", 500)]);
        start(&mut cfq);
        let from_parent = in_group(read(3, 2, 1 << 20), a);
        assert_eq!(
            offer(&mut cfq, from_parent, ms(500)),
            Some(ActiveSliceUsed),
            "an ancestor"
        );
    }

    #[test]
    fn two_seeky_queues_share_a_noidle_tree() {
        let mut cfq = cfq(&[]);
        let far: Vec<u64> = (1..=6).map(|i| i << 21).collect();
        // Process 2 turns seeky, then its slice ends when its idle wait runs out.
        let now = serve_alone(&mut cfq, 2, &far, 0);
        cfq.dispatch(now + ms(20));
        // Process 1 turns seeky too, goes back on the round robin as sync-noidle, and is
        // served from that tree; it idles as the tree's last queue.
        let now = serve_alone(&mut cfq, 1, &far, now + ms(20));
        cfq.dispatch(now + ms(20));
        let now = serve_alone(&mut cfq, 1, &[7 << 21], now + ms(20));
        assert_eq!(cfq.serving.workload, WorkloadType::SyncNoIdle);
        assert!(cfq.idle.timer.is_some(), "service-tree idling");
        // Process 2, seeky, joins the same tree: two queues, the active one empty.
        assert_eq!(
            offer(&mut cfq, read(99, 2, 9 << 21), now),
            Some(SyncNoIdleTreeOfTwo)
        );
    }

    #[test]
    fn an_empty_queue_that_would_not_idle_is_preempted() {
        // No queue idling; the active queue waits for its request in flight (group_idle).
        let mut cfq = cfq(&[("slice_idle", "0")]);
        cfq.insert(read(1, 1, 0), 0);
        take(&mut cfq, 0);
        assert_eq!(cfq.dispatch(ms(1)), crate::Dispatch::Empty);
        assert_eq!(
            offer(&mut cfq, read(2, 2, 1 << 20), ms(1)),
            Some(ActiveShouldNotIdle)
        );
    }

    #[test]
    fn a_request_close_to_the_head_preempts_an_idling_queue() {
        let idling = || {
            let mut cfq = cfq(&[]);
            cfq.insert(read(1, 1, 1_000), 0);
            let first = take(&mut cfq, 0);
            finish(&mut cfq, &first, ms(1));
            assert!(cfq.idle.timer.is_some());
            cfq
        };
        let mut cfq = idling();
        assert_eq!(
            offer(&mut cfq, read(2, 2, 1_008 + 8_192), ms(2)),
            Some(CloseToHead)
        );
        let mut cfq = idling();
        assert_eq!(offer(&mut cfq, read(2, 2, 1_008 + 8_193), ms(2)), None);
    }
}
