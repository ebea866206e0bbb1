//! Choosing the active queue and dispatching from it, slices, idling and preemption, for the
//! pre-group releases.
//!
//! * **2004** (`cfq_select_queue` and `__cfq_dispatch_requests` as in 2.6.13, which kept the
//!   patch's structure): the active queue keeps the device until its slice (set at its first
//!   dispatch) is over; when it runs dry with slice left it idles `slice_idle` (at most to the
//!   slice's end) for its process's next request; each dispatch call moves up to `quantum` of its
//!   requests onto the dispatch list. Queues take turns round robin.
//! * **2.6.28** (`cfq_dispatch_requests`, `cfq_select_queue`, `cfq_arm_slice_timer`,
//!   `cfq_should_preempt`): a dispatch round keeps choosing queues and moving requests until
//!   a cap stops it — a queue with `quantum` requests out stops it while other queues are busy,
//!   an async queue stops it while sync requests are out — so a lone async queue moves every
//!   request it holds. An empty queue keeps the device while its idle timer runs or while it
//!   has requests out and an idle window. The idle timer is armed at a sync completion that
//!   empties the active queue, unless any request is at the device, for `slice_idle` (2 ms for a
//!   seeky process). A new request preempts when the active slice is used, when it is sync and
//!   the active queue async, when it is RT and the active queue not, or when the active queue
//!   idles and the request lies within its process's mean seek of the head.
//! * **2.6.30**: one request per call, straight to the driver: a queue may have `quantum`
//!   requests out while others are busy and 4 × `quantum` alone; an async queue's request
//!   budget counts over its slice.

use crate::merge::SlotKey;
use crate::trace::{PreemptReason, ServiceEnd};
use crate::{Nanos, Request};

use super::super::slice::prio_slice;
use super::queue::QueueId;
use super::{Era, LegacyCfq};

/// Where an IDLE-class queue joins the tree: 200 ms after the last queue (`CFQ_IDLE_DELAY`).
const IDLE_DELAY: i64 = 200_000_000;
/// The idle wait of a seeky process (`CFQ_MIN_TT`, 2 ms).
const SEEKY_IDLE: Nanos = 2_000_000;

impl LegacyCfq {
    /// A queue's full slice: `slice_sync` or `slice_async` scaled by its level.
    pub(super) fn slice_length(&self, queue: QueueId) -> Nanos {
        let q = &self.queues[queue];
        let base = if q.sync {
            self.config.slice_sync
        } else {
            self.config.slice_async
        };
        prio_slice(base, q.level)
    }

    /// Whether the slice has started and is over (the 2004 patch: strictly after its end).
    fn slice_used(&self, queue: QueueId, now: Nanos) -> bool {
        let q = &self.queues[queue];
        if q.slice_new {
            return false;
        }
        match self.era {
            Era::TimeSliced2004 => now > q.slice_end,
            _ => now >= q.slice_end,
        }
    }

    /// An async queue's request budget per slice: `2 × slice_async_rq × (8 − level)`.
    fn request_budget(&self, queue: QueueId) -> u64 {
        let level = u64::from(self.queues[queue].level.min(7));
        2 * self.config.slice_async_rq * (8 - level)
    }

    /// A queue with requests joins the tree (`cfq_add_cfqq_rr`).
    pub(super) fn add_to_tree(&mut self, queue: QueueId, now: Nanos) {
        self.queues[queue].on_rr = true;
        self.busy_queues += 1;
        if self.queues[queue].is_real_time() {
            self.busy_rt_queues += 1;
        }
        self.place_on_tree(queue, false, now);
    }

    /// An emptied queue leaves the tree (`cfq_del_cfqq_rr`).
    pub(super) fn remove_from_tree(&mut self, queue: QueueId) {
        let q = &mut self.queues[queue];
        q.on_rr = false;
        if let Some((rank, key, seq)) = q.tree_key.take() {
            self.tree.remove(&(rank, key, seq, queue));
        }
        self.busy_queues = self.busy_queues.saturating_sub(1);
        if self.queues[queue].is_real_time() {
            self.busy_rt_queues = self.busy_rt_queues.saturating_sub(1);
        }
    }

    /// Put a queue on the tree at the key it earns now (`cfq_service_tree_add`); the 2004
    /// round robin puts it at the tail.
    fn place_on_tree(&mut self, queue: QueueId, front: bool, now: Nanos) {
        let key = self.tree_key(queue, front, now);
        let rank = self.queues[queue].class_rank();
        if let Some((old_rank, old_key, seq)) = self.queues[queue].tree_key {
            if old_key == key && self.era != Era::TimeSliced2004 {
                return;
            }
            self.tree.remove(&(old_rank, old_key, seq, queue));
        }
        let seq = self.next_sequence();
        self.tree.insert((rank, key, seq, queue));
        self.queues[queue].tree_key = Some((rank, key, seq));
    }

    /// The key a queue earns: 2004, join order; 2.6.28, `now + offset + resid` (0 to go
    /// first), the IDLE class 200 ms behind the last queue.
    fn tree_key(&mut self, queue: QueueId, front: bool, now: Nanos) -> i64 {
        let now = i64::try_from(now).unwrap_or(i64::MAX);
        if front {
            return i64::MIN;
        }
        if self.era == Era::TimeSliced2004 {
            return now;
        }
        if self.queues[queue].is_idle_class() {
            let last = self.tree.iter().next_back().filter(|e| e.3 != queue);
            return IDLE_DELAY.saturating_add(last.map_or(now, |e| e.1));
        }
        let others = i64::try_from(self.busy_queues).unwrap_or(i64::MAX) - 1;
        let top = i64::try_from(prio_slice(self.config.slice_sync, 0)).unwrap_or(i64::MAX);
        let own = i64::try_from(self.slice_length(queue)).unwrap_or(i64::MAX);
        let resid = std::mem::take(&mut self.queues[queue].slice_resid);
        now.saturating_add(others.saturating_mul(top - own))
            .saturating_add(resid)
    }

    /// Make the first queue on the tree active (`cfq_set_active_queue`).
    fn activate_next(&mut self) -> Option<QueueId> {
        let &(_, _, _, queue) = self.tree.first()?;
        let q = &mut self.queues[queue];
        q.slice_new = true;
        q.slice_end = 0;
        q.slice_dispatched = 0;
        q.fifo_checked = false;
        q.wait_request = false;
        q.must_dispatch = false;
        self.active = Some(queue);
        self.active_process = None;
        self.trace_slice_start(queue);
        Some(queue)
    }

    /// End the active slice (`__cfq_slice_expired`). `timed_out` (2.6.28, a preemption or a
    /// slice ended at a completion) keeps what was left of a started slice for the next key.
    pub(super) fn expire(&mut self, timed_out: bool, reason: ServiceEnd, now: Nanos) {
        let Some(queue) = self.active else {
            return;
        };
        self.trace_slice_end(queue, reason);
        self.active = None;
        self.active_process = None;
        let q = &mut self.queues[queue];
        if q.wait_request {
            self.idle_timer = None;
        }
        q.wait_request = false;
        q.must_dispatch = false;
        if timed_out && !q.slice_new && self.era != Era::TimeSliced2004 {
            let end = i128::from(q.slice_end) - i128::from(now);
            q.slice_resid = i64::try_from(end).unwrap_or(0);
        }
        if self.queues[queue].on_rr {
            self.place_on_tree(queue, false, now);
        }
    }

    /// The queue to dispatch from (`cfq_select_queue`); `None` while waiting or idle.
    fn select_queue(&mut self, now: Nanos) -> Option<QueueId> {
        if let Some(queue) = self.active {
            match self.era {
                Era::TimeSliced2004 => {
                    let q = &self.queues[queue];
                    if q.must_dispatch || !self.slice_used(queue, now) {
                        if !q.is_empty() {
                            return Some(queue);
                        }
                        if !q.slice_new && now < q.slice_end && self.arm_idle_2004(queue, now) {
                            return None;
                        }
                    }
                }
                _ => {
                    let q = &self.queues[queue];
                    if !self.slice_used(queue, now) {
                        if !q.is_real_time() && self.busy_rt_queues > 0 {
                            self.expire(true, ServiceEnd::Preempted, now);
                            return self.activate_next();
                        }
                        if !q.is_empty() {
                            return Some(queue);
                        }
                        if self.idle_timer.is_some() || (q.dispatched > 0 && q.idle_window) {
                            return None;
                        }
                    }
                }
            }
            let reason = if self.slice_used(queue, now) {
                ServiceEnd::SliceExpired
            } else {
                ServiceEnd::NoMoreRequests
            };
            self.expire(false, reason, now);
        }
        self.activate_next()
    }

    /// 2004: arm the idle timer for an emptied active queue, at most to its slice's end;
    /// whether it runs.
    fn arm_idle_2004(&mut self, queue: QueueId, now: Nanos) -> bool {
        if self.idle_timer.is_some() {
            return true;
        }
        let exited = self
            .active_process
            .and_then(|p| self.processes.get(&p))
            .is_some_and(|state| state.exited);
        let q = &self.queues[queue];
        if self.config.slice_idle == 0 || !q.idle_window || exited {
            return false;
        }
        let wait = self
            .config
            .slice_idle
            .min(q.slice_end.saturating_sub(now).saturating_sub(1));
        self.queues[queue].wait_request = true;
        self.idle_timer = Some(now.saturating_add(wait));
        true
    }

    /// One dispatch call before 2.6.30: move requests onto the dispatch list.
    pub(super) fn dispatch_round(&mut self, now: Nanos) {
        if self.busy_queues == 0 {
            return;
        }
        if self.era == Era::TimeSliced2004 {
            if let Some(queue) = self.select_queue(now) {
                self.start_dispatch(queue);
                let moved = self.move_batch(queue, self.max_dispatch(queue), now);
                self.after_batch_2004(queue, moved, now);
            }
            return;
        }
        while let Some(queue) = self.select_queue(now) {
            let max = self.max_dispatch(queue);
            let q = &self.queues[queue];
            if q.dispatched >= max && self.busy_queues > 1 {
                break;
            }
            if self.sync_flight > 0 && !q.sync {
                break;
            }
            self.start_dispatch(queue);
            let moved = self.move_batch(queue, max, now);
            if moved == 0 {
                break;
            }
            let budget_spent = !self.queues[queue].sync && moved >= self.request_budget(queue);
            self.end_if_spent(queue, budget_spent, now);
        }
    }

    /// 2004: the slice starts at the first dispatch; an IDLE-class queue expires after it.
    fn after_batch_2004(&mut self, queue: QueueId, _moved: u64, now: Nanos) {
        if self.queues[queue].slice_new {
            self.start_slice(queue, now);
        }
        if self.queues[queue].is_idle_class() {
            self.expire(false, ServiceEnd::IdleClass, now);
        }
    }

    /// `quantum`, or 1 for the IDLE class.
    fn max_dispatch(&self, queue: QueueId) -> usize {
        if self.queues[queue].is_idle_class() {
            1
        } else {
            self.config.quantum.max(1)
        }
    }

    /// The active queue is about to dispatch: it stops waiting.
    fn start_dispatch(&mut self, queue: QueueId) {
        let q = &mut self.queues[queue];
        q.must_dispatch = false;
        q.wait_request = false;
        self.idle_timer = None;
    }

    /// Move up to `max` requests of the queue onto the dispatch list; how many moved.
    fn move_batch(&mut self, queue: QueueId, max: usize, now: Nanos) -> u64 {
        let mut moved = 0;
        while let Some(request) = self.take_next(queue, now) {
            self.list.insert_sorted(request);
            moved += 1;
            let q = &self.queues[queue];
            if q.is_empty()
                || moved >= max
                || (self.era != Era::TimeSliced2004 && !q.is_real_time() && self.busy_rt_queues > 0)
            {
                break;
            }
        }
        u64::try_from(moved).unwrap_or(u64::MAX)
    }

    /// 2.6.30: one request of the chosen queue straight to the driver, within the caps.
    pub(super) fn dispatch_single(&mut self, now: Nanos) -> Option<Request> {
        if self.busy_queues == 0 {
            return None;
        }
        let queue = self.select_queue(now)?;
        let max = self.max_dispatch(queue);
        let q = &self.queues[queue];
        if q.dispatched >= max && (self.busy_queues > 1 || q.dispatched >= 4 * max) {
            return None;
        }
        if self.sync_flight > 0 && !q.sync {
            return None;
        }
        self.start_dispatch(queue);
        let request = self.take_next(queue, now)?;
        let q = &self.queues[queue];
        let budget_spent = !q.sync && q.slice_dispatched >= self.request_budget(queue);
        self.end_if_spent(queue, budget_spent, now);
        Some(request)
    }

    /// While others are busy, an async queue's slice ends with its request budget, an
    /// IDLE-class queue's after each dispatch.
    fn end_if_spent(&mut self, queue: QueueId, budget_spent: bool, now: Nanos) {
        if self.busy_queues <= 1 {
            return;
        }
        if budget_spent {
            self.expire(false, ServiceEnd::BudgetExhausted, now);
        } else if self.queues[queue].is_idle_class() {
            self.expire(false, ServiceEnd::IdleClass, now);
        }
    }

    /// The queue's expired FIFO head (looked at once per slice) or its next request, taken
    /// out of CFQ (`cfq_dispatch_insert`).
    fn take_next(&mut self, queue: QueueId, now: Nanos) -> Option<Request> {
        let slot = self.check_fifo(queue, now).or(self.queues[queue].next)?;
        let request = self.remove_request(slot);
        let q = &mut self.queues[queue];
        q.dispatched += 1;
        q.slice_dispatched += 1;
        if q.sync && self.era != Era::TimeSliced2004 {
            self.sync_flight += 1;
        }
        self.owners.insert(request.id, queue);
        self.active_process.get_or_insert(request.process);
        Some(request)
    }

    /// The FIFO head if it is due, looked at once per slice.
    fn check_fifo(&mut self, queue: QueueId, now: Nanos) -> Option<SlotKey> {
        let q = &mut self.queues[queue];
        if q.fifo_checked {
            return None;
        }
        let &(due, _, slot) = q.fifo.first()?;
        if now < due {
            return None;
        }
        q.fifo_checked = true;
        Some(slot)
    }

    /// 2.6.28: the active queue completed a request: start its slice, end it if used, or
    /// idle if it ran dry.
    pub(super) fn active_completed(&mut self, queue: QueueId, sync: bool, now: Nanos) {
        if self.queues[queue].slice_new {
            self.start_slice(queue, now);
        }
        if self.slice_used(queue, now) {
            self.expire(true, ServiceEnd::SliceExpired, now);
        } else if self.queues[queue].is_idle_class() {
            self.expire(true, ServiceEnd::IdleClass, now);
        } else if sync && self.queues[queue].is_empty() {
            self.arm_idle_2628(queue, now);
        }
    }

    /// The slice starts now, full length.
    fn start_slice(&mut self, queue: QueueId, now: Nanos) {
        let slice = self.slice_length(queue);
        let q = &mut self.queues[queue];
        q.slice_new = false;
        q.slice_end = now.saturating_add(slice);
        self.trace_slice_timer(queue, slice);
    }

    /// 2.6.28's `cfq_arm_slice_timer`.
    fn arm_idle_2628(&mut self, queue: QueueId, now: Nanos) {
        if !self.rotational && self.hw_tag.present {
            return;
        }
        if self.config.slice_idle == 0 || !self.queues[queue].idle_window || self.in_device > 0 {
            return;
        }
        let Some(state) = self.active_process.and_then(|p| self.processes.get(&p)) else {
            return;
        };
        if state.exited {
            return;
        }
        let wait = if state.seek.seeky() {
            self.config.slice_idle.min(SEEKY_IDLE)
        } else {
            self.config.slice_idle
        };
        let q = &mut self.queues[queue];
        q.wait_request = true;
        q.must_dispatch = true;
        self.idle_timer = Some(now.saturating_add(wait));
    }

    /// Fire the idle timer if due (`cfq_idle_slice_timer`): the slice ends unless the queue
    /// has a request again, or no other queue wants the device.
    pub(super) fn fire_idle_timer(&mut self, now: Nanos) {
        if self.idle_timer.is_none_or(|deadline| now < deadline) {
            return;
        }
        self.idle_timer = None;
        let Some(queue) = self.active else {
            return;
        };
        self.queues[queue].wait_request = false;
        let reason = if self.slice_used(queue, now) {
            ServiceEnd::SliceExpired
        } else if self.busy_queues == 0 {
            return;
        } else if !self.queues[queue].is_empty() {
            self.queues[queue].must_dispatch = true;
            return;
        } else {
            ServiceEnd::IdleTimeout
        };
        self.expire(false, reason, now);
    }

    /// Whether a request arriving for `queue` preempts the active queue (2.6.28's
    /// `cfq_should_preempt`; the 2004 patch never preempts).
    pub(super) fn should_preempt(
        &self,
        queue: QueueId,
        sync: bool,
        sector: u64,
        now: Nanos,
    ) -> Option<PreemptReason> {
        if self.era == Era::TimeSliced2004 {
            return None;
        }
        let active = self.active?;
        let (new, current) = (&self.queues[queue], &self.queues[active]);
        if self.slice_used(active, now) {
            return Some(PreemptReason::SliceUsed);
        }
        if new.is_idle_class() {
            return None;
        }
        if current.is_idle_class() {
            return Some(PreemptReason::IdleClass);
        }
        if sync && !current.sync {
            return Some(PreemptReason::SyncOverAsync);
        }
        if new.is_real_time() && !current.is_real_time() {
            return Some(PreemptReason::RealTime);
        }
        if !current.wait_request {
            return None;
        }
        let close = self
            .active_process
            .and_then(|p| self.processes.get(&p))
            .is_some_and(|state| {
                state.seek.valid() && sector.abs_diff(self.last_position) <= state.seek.mean
            });
        close.then_some(PreemptReason::CloseToHead)
    }

    /// `queue` preempts: the active queue expires keeping its leftover slice, and `queue`
    /// goes to the front of the tree with a fresh slice (`cfq_preempt_queue`).
    pub(super) fn preempt(&mut self, queue: QueueId, now: Nanos) {
        self.expire(true, ServiceEnd::Preempted, now);
        self.place_on_tree(queue, true, now);
        let q = &mut self.queues[queue];
        q.slice_end = 0;
        q.slice_new = true;
    }
}
