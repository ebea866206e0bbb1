//! Dispatch: keep serving the active queue while its slice lasts and it has requests, wait for
//! it while idling is worth it, else expire it and start the next slice; then hand over one
//! request within the in-flight caps.
//!
//! The caps (the kernel's `cfq_may_dispatch`): a queue may have `max(quantum/2, 1)` requests in
//! flight; past that only if its slice will not run out first, and then up to `quantum`, or
//! without limit when it is the only busy queue (or the only busy sync queue). An IDLE-class
//! queue has one request in flight at most. A sync queue that idles waits for async requests in
//! flight to drain; an async queue waits while sync requests are in flight, and with
//! `low_latency` its depth ramps up by one per `slice_sync` since a sync request last waited too
//! long. The FIFO is looked at once per slice: an expired request goes first, whatever the caps.
//! An async queue ends its slice after its request budget, an IDLE-class queue after each
//! request, when other queues are busy. A sync queue that has just sent its last queued
//! request is judged again at once, as the kernel's driver asks again at once: if it would not
//! wait, the next queue becomes active while the device is still busy.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::merge::SlotKey;
use crate::trace::ServiceEnd;
use crate::trace::Traced;
use crate::{GroupId, Nanos, Request, RequestId, TraceEvent};

use super::{Cfq, QueueId};

/// What is at the device: how many requests, of which kind, whose, and where the head will
/// be once they are done.
#[derive(Debug, Clone, Default)]
pub(super) struct AtDevice {
    /// Requests at the device.
    pub(super) in_driver: usize,
    /// Requests at the device by queue kind: `[async, sync]`.
    pub(super) in_flight: [usize; 2],
    /// The queue and group each request at the device was dispatched from (looked up by id at
    /// completion, never walked, so a hash keeps no order).
    pub(super) owners: HashMap<RequestId, (QueueId, GroupId), FixedState>,
    /// End sector of the last dispatched request: where the head will be.
    pub(super) last_position: u64,
    /// Last completion of a sync request that had waited longer than `fifo_expire_sync`.
    pub(super) last_delayed_sync: Option<Nanos>,
}

impl AtDevice {
    /// `request`, from `queue` of `group`, goes to the device.
    fn issue(&mut self, request: &Request, queue: QueueId, group: GroupId, sync: bool) {
        self.in_flight[usize::from(sync)] += 1;
        self.in_driver += 1;
        self.owners.insert(request.id, (queue, group));
        self.last_position = request.end_sector();
    }

    /// The queue and group the request with this id was dispatched from, if it is at the
    /// device.
    pub(super) fn owner(&self, id: RequestId) -> Option<(QueueId, GroupId)> {
        self.owners.get(&id).copied()
    }

    /// The request with this id, from a queue of kind `sync`, is done.
    pub(super) fn complete(&mut self, id: RequestId, sync: bool) {
        self.owners.remove(&id);
        self.in_driver = self.in_driver.saturating_sub(1);
        self.in_flight[usize::from(sync)] = self.in_flight[usize::from(sync)].saturating_sub(1);
    }
}

/// What to do with the active queue.
enum Verdict {
    /// Dispatch from it.
    Keep,
    /// Dispatch nothing now: wait for its next request or its requests in flight.
    Wait,
    /// End its slice, for this reason, and choose the next queue.
    Expire(ServiceEnd),
    /// End its slice and give the next one to this cooperating queue.
    HandOver(QueueId),
}

impl Cfq {
    /// Dispatch one request, if CFQ wants to now.
    pub(super) fn dispatch_one(&mut self, now: Nanos) -> Option<Request> {
        if self.busy_queues == 0 {
            return None;
        }
        let queue = self.select_queue(now)?;
        let request = self.dispatch_from(queue, now)?;
        let q = &mut self.queues[queue];
        q.slice.dispatched += 1;
        q.must_dispatch = false;
        let budget_spent = !q.sync && q.slice.dispatched >= self.async_request_budget(queue);
        if self.busy_queues > 1 && (budget_spent || self.queues[queue].is_idle_class()) {
            let reason = if budget_spent {
                ServiceEnd::BudgetExhausted
            } else {
                ServiceEnd::IdleClass
            };
            self.expire_active(false, reason, now);
        } else {
            self.choose_again_if_spent(queue, now);
        }
        Some(request)
    }

    /// A sync active queue just sent its last queued request: choose again now, as the kernel
    /// does. Its driver asks for the next request at once (the dispatch list is not bounded by
    /// the device's depth), and `cfq_select_queue` then expires a queue that would neither idle
    /// nor wait for its requests in flight and makes the next one active while the device is
    /// still busy. A driver that asks only when the device has room must see the same choices:
    /// otherwise the spent queue stays active, each new request of another queue preempts it
    /// ("empty and should not idle") and jumps to the front of its tree, so with three or more
    /// seeky processes two take turns for ever; and the workload slice, saved at the expiry
    /// and resumed only at the next choice, would not run down in between.
    fn choose_again_if_spent(&mut self, queue: QueueId, now: Nanos) {
        let q = &self.queues[queue];
        if self.active == Some(queue) && q.sync && q.is_empty() {
            self.select_queue(now);
        }
    }

    /// The queue to dispatch from, starting a new slice if the active one is over (the
    /// kernel's `cfq_select_queue`); `None` while waiting.
    fn select_queue(&mut self, now: Nanos) -> Option<QueueId> {
        let mut cooperator = None;
        if let Some(active) = self.active {
            if self.slab.is_empty() {
                return None;
            }
            let reason = match self.judge_active(active, now) {
                Verdict::Keep => return Some(active),
                Verdict::Wait => return None,
                Verdict::Expire(reason) => reason,
                Verdict::HandOver(queue) => {
                    cooperator = Some(queue);
                    ServiceEnd::Cooperator
                }
            };
            self.expire_active(false, reason, now);
        }
        if cooperator.is_none() {
            self.choose_group(now);
        }
        let queue = cooperator.or_else(|| self.next_queue())?;
        self.set_active(queue, now);
        Some(queue)
    }

    /// Keep, wait for, or expire the active queue.
    fn judge_active(&mut self, queue: QueueId, now: Nanos) -> Verdict {
        let q = &self.queues[queue];
        if q.wait_busy && !q.is_empty() {
            // The group is backlogged again: wait_busy did its job.
            return Verdict::Expire(ServiceEnd::WaitBusyDone);
        }
        if self.slice_used(queue, now) && !q.must_dispatch {
            // A group's last queue, idling with requests in flight, keeps its group on the tree.
            let last_in_group = self.groups[q.group.index()].nr_queues == 1;
            if last_in_group && q.is_empty() && q.dispatched > 0 && self.should_idle(queue) {
                return Verdict::Wait;
            }
            return self.group_idle_verdict(queue, ServiceEnd::SliceExpired);
        }
        if !q.is_empty() {
            return Verdict::Keep;
        }
        if let Some(cooperator) = self.close_cooperator(queue) {
            if self.queues[queue].new_queue.is_none() {
                self.setup_merge(queue, cooperator);
            }
            return Verdict::HandOver(cooperator);
        }
        if self.idle.timer.is_some() {
            return Verdict::Wait;
        }
        self.stop_idling_for_fast_seeker(queue, now);
        if self.queues[queue].dispatched > 0 && self.should_idle(queue) {
            return Verdict::Wait;
        }
        self.group_idle_verdict(queue, ServiceEnd::NoMoreRequests)
    }

    /// With `group_idle`, the last queue of a group with requests in flight waits for them,
    /// unless the group's processes think too long; otherwise the slice ends for `reason`.
    fn group_idle_verdict(&self, queue: QueueId, reason: ServiceEnd) -> Verdict {
        let group = &self.groups[self.queues[queue].group.index()];
        let group_idle = self.config.group_idle;
        if group_idle > 0
            && group.nr_queues == 1
            && group.dispatched > 0
            && !group.think_time.exceeds(group_idle)
        {
            Verdict::Wait
        } else {
            Verdict::Expire(reason)
        }
    }

    /// Make a queue active and reset its slice (the kernel's `__cfq_set_active_queue`).
    fn set_active(&mut self, queue: QueueId, now: Nanos) {
        let q = &mut self.queues[queue];
        q.slice.start = None;
        q.slice.end = 0;
        q.slice.allocated = 0;
        q.slice.dispatched = 0;
        q.slice.dispatch_start = now;
        q.slice.new = true;
        q.wait_request = false;
        q.must_dispatch = false;
        q.fifo_checked = false;
        self.active = Some(queue);
        self.active_process = None;
        self.idle.timer = None;
        self.emit(|cfq| TraceEvent::SliceStart {
            queue: cfq.queue_ref(queue),
        });
    }

    /// Dispatch the active queue's expired FIFO head, or its next request, within the caps.
    fn dispatch_from(&mut self, queue: QueueId, now: Nanos) -> Option<Request> {
        let expired = self.check_fifo(queue, now);
        if expired.is_some() {
            self.queues[queue].must_dispatch = true;
        }
        if !self.may_dispatch(queue, now) {
            return None;
        }
        if let Some(slot) = expired {
            self.emit(|cfq| TraceEvent::FifoExpired {
                request: cfq.slab.get(slot).id,
                late: now.saturating_sub(cfq.slots[slot].fifo_time),
            });
        }
        let slot = expired.or(self.queues[queue].next_request)?;
        Some(self.dispatch_insert(queue, slot))
    }

    /// The FIFO head if it is due, looked at only once per slice.
    fn check_fifo(&mut self, queue: QueueId, now: Nanos) -> Option<SlotKey> {
        let q = &mut self.queues[queue];
        if q.fifo_checked {
            return None;
        }
        q.fifo_checked = true;
        let (due, slot) = self.fifo_first(queue)?;
        (now >= due).then_some(slot)
    }

    /// Whether the queue may put one more request in flight now.
    fn may_dispatch(&self, queue: QueueId, now: Nanos) -> bool {
        let q = &self.queues[queue];
        if q.must_dispatch {
            return true;
        }
        let [async_in_flight, sync_in_flight] = self.device.in_flight;
        if async_in_flight > 0 && self.should_idle(queue) {
            return false;
        }
        if sync_in_flight > 0 && !q.sync {
            return false;
        }
        let Some(mut max_dispatch) = self.depth_limit(queue, now) else {
            return false;
        };
        if !q.sync && self.config.low_latency {
            max_dispatch = max_dispatch.min(self.async_depth(queue, now));
        }
        q.dispatched < max_dispatch
    }

    /// The queue's in-flight limit by quantum; `None` when it must not go deeper at all.
    fn depth_limit(&self, queue: QueueId, now: Nanos) -> Option<usize> {
        let q = &self.queues[queue];
        let base = (self.config.quantum / 2).max(1);
        if q.is_idle_class() {
            return (q.dispatched < 1).then_some(1);
        }
        if q.dispatched < base {
            return Some(base);
        }
        let sole_sync = q.sync && self.busy_sync_queues == 1;
        if self.busy_queues > 1 && self.slice_used_soon(queue, now) && !sole_sync {
            return None;
        }
        if self.busy_queues == 1 || sole_sync {
            Some(usize::MAX)
        } else {
            Some(self.config.quantum)
        }
    }

    /// Async depth ramp: one more request in flight per `slice_sync` since a sync request last
    /// waited longer than `fifo_expire_sync`; at least one when none is in flight.
    fn async_depth(&self, queue: QueueId, now: Nanos) -> usize {
        // Before any delayed sync completion, as if the last was a second before the start.
        let since = match self.device.last_delayed_sync {
            Some(at) => now.saturating_sub(at),
            None => now.saturating_add(crate::time::SECOND),
        };
        let depth = usize::try_from(since / self.config.slice_sync.max(1)).unwrap_or(usize::MAX);
        if depth == 0 && self.queues[queue].dispatched == 0 {
            1
        } else {
            depth
        }
    }

    /// Send a request of the active queue to the device (the kernel's `cfq_dispatch_insert`
    /// and `cfq_activate_request`).
    fn dispatch_insert(&mut self, queue: QueueId, slot: SlotKey) -> Request {
        let next = self.find_next_request(queue, slot);
        self.set_next_request(queue, next);
        let request = self.remove_request(slot);
        let q = &mut self.queues[queue];
        q.dispatched += 1;
        let sync = q.sync;
        let group = q.group;
        self.groups[group.index()].dispatched += 1;
        self.device.issue(&request, queue, group, sync);
        self.active_process.get_or_insert(request.process);
        request
    }
}
