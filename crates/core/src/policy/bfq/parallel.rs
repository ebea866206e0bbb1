//! Parallel service on non-rotational devices: ioslice's answer to BFQ's idling on devices that
//! answer in microseconds. Not in the kernel; `parallel=0` restores the kernel's behaviour.
//!
//! The kernel serves one queue at a time and, to keep weights when that queue runs dry, idles
//! the device for it (`slice_idle`, 8 ms). A process that keeps one request in flight then has
//! the device to itself and the device holds one request: on a loop device or an NVMe drive
//! the total falls to one process's rate. Without idling (`slice_idle=0`) every process is
//! served as soon as it asks, and closed-loop processes get equal rates whatever their weights.
//!
//! Here every dispatch is one turn of B-WF2Q+ (`wf2q.rs`) at the granularity of one request:
//! the eligible queue that finishes first in virtual time gets one request sent, is charged its
//! sectors, and goes back on its tree with the next request's cost as its budget. Several
//! queues therefore have requests at the device at once, in virtual-time order. Weights are
//! kept by *lingering* instead of idling: a queue that runs dry while it has requests at the
//! device, or within a window of its last completion scaled to its measured think time (twice
//! the mean, at least [`LINGER_FLOOR`], at most `slice_idle`), stays on its tree, in the sum
//! of weights. When nothing is eligible and a lingering queue would come before every waiting
//! one in virtual time, the waiting queues are held back instead of virtual time jumping to
//! them: the lighter queues wait for the heavier ones while the device keeps serving whatever
//! the heavier ones sent. A heavy queue limited by its own round trip then sets the pace, and
//! each other queue gets its weight's share of that pace.
//!
//! Lingering applies where idling would, for fairness: sync queues of live processes, not the
//! IDLE class, in an asymmetric scenario (different weights, classes, or groups with
//! requests), with `slice_idle` above zero — and only for a process whose mean think time is
//! at most [`LINGER_THINK_FACTOR`] times the device's mean service time. One that thinks
//! longer cannot use the device's time it is owed anyway: holding others back for it would
//! leave the device idle without serving it faster (the kernel's injection finds the same
//! room by measurement). Budgets, injection and early queue merging do not apply; weight
//! raising does.
//!
//! A process that keeps one request in flight (a psync reader: it never had two outstanding)
//! and is served on time (its start reached by V) gets a *lead* of `parallel_lead` turns, 8 by
//! default: its next turns are served at once even though their starts are ahead of V, and
//! only then does it wait for V. It is still charged every sector, so in the long run its
//! share is unchanged, but a light reader is held once per 9 requests instead of on every
//! one: on a real machine a held request costs its thread a sleep and a wake-up, and the
//! thread that releases it a system call on its behalf. A process with several requests in
//! flight gets no lead: its thread does not sleep on one held request, and on the loop device
//! a lead cost such readers a sixth of their throughput. What the lead buys is measured in
//! `docs/bfq-fast-devices.md`.

use std::collections::BTreeMap;

use crate::trace::Traced;
use crate::trace::{IdleEnd, IdleKind};
use crate::{Dispatch, Nanos, TraceEvent};

use super::idling::MIN_THINK_TIME;
use super::queue::QueueId;
use super::wf2q::{Selection, CLASSES};
use super::Bfq;

/// The shortest window a lingering queue is waited for after its last completion.
pub(super) const LINGER_FLOOR: Nanos = crate::time::us(50);
/// A process thinking longer than this many device service times is not lingered for.
pub(super) const LINGER_THINK_FACTOR: u64 = 2;

/// What parallel service keeps: whether it is on, the queues it lingers for, and the device's
/// service time.
#[derive(Debug, Clone)]
pub(super) struct Parallel {
    /// On (a non-rotational device, `parallel=1`, and not `strict_guarantees`).
    pub(super) on: bool,
    /// The queues expected back, with when BFQ stops waiting for each (`None` while it has
    /// requests at the device).
    pub(super) lingering: BTreeMap<QueueId, Option<Nanos>>,
    /// The device's mean service time (whom to linger for).
    pub(super) service_time: ServiceTime,
}

impl Parallel {
    /// Parallel service, on or off, lingering for nobody yet.
    pub(super) fn new(on: bool) -> Self {
        Self {
            on,
            lingering: BTreeMap::new(),
            service_time: ServiceTime::default(),
        }
    }
}

/// The device's mean service time (dispatch to completion), a moving average weighing the
/// newest sample ⅛.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ServiceTime {
    mean: Nanos,
    sampled: bool,
}

impl ServiceTime {
    /// Add one request's service time.
    pub(super) fn add(&mut self, service: Nanos) {
        self.mean = if self.sampled {
            (7 * self.mean + service) / 8
        } else {
            service
        };
        self.sampled = true;
    }
}

impl Bfq {
    /// One request of the queue B-WF2Q+ chooses, or a hold until the first lingering queue's
    /// window ends.
    pub(super) fn dispatch_parallel(&mut self, now: Nanos) -> Dispatch {
        self.end_lingering_windows(now);
        let mut released = false;
        loop {
            let queues = &self.queues;
            let one_at_a_time =
                |id: QueueId| queues[id].as_ref().is_some_and(|queue| queue.depth == 1);
            let id = match self.engine.select_parallel(self.root, now, one_at_a_time) {
                Selection::Queue(id) => id,
                Selection::Hold => {
                    if let Some(at) = self.first_linger_deadline() {
                        return Dispatch::WaitUntil(at);
                    }
                    if !self.in_flight.is_empty() || released {
                        // A completion starts a window or brings a queue back.
                        return Dispatch::Empty;
                    }
                    // Nothing at the device and no window running: nobody is on the way, so
                    // nobody is waited for. Never hold requests with an idle device and no timer.
                    self.stop_all_lingering();
                    released = true;
                    continue;
                }
                Selection::Empty => return Dispatch::Empty,
            };
            self.in_service = Some(id);
            self.update_raising(id, now);
            self.queue_mut(id).fifo_checked = false;
            let request = self
                .pick_request(id, now)
                .map(|slot| self.serve(id, slot, now, false));
            self.end_parallel_turn(id, now);
            if let Some(request) = request {
                return Dispatch::Request(request);
            }
        }
    }

    /// The queue's one-request turn ends: back on its tree with its next request's cost, or
    /// lingering, or idle.
    fn end_parallel_turn(&mut self, id: QueueId, now: Nanos) {
        let entity = self.queue(id).entity;
        let has_work = !self.queue(id).is_empty();
        let linger = !has_work && self.worth_lingering(id);
        if !has_work {
            self.ran_dry(id, None, now);
        }
        let next_budget = self.next_cost(id);
        let weight = self.queue(id).weight();
        self.engine.get_mut(entity).new_weight = weight;
        self.engine.expire(entity, has_work, next_budget, linger);
        if !has_work {
            self.mark_busy(id, false);
        }
        if linger {
            let deadline = self.linger_deadline(id, now);
            self.parallel.lingering.insert(id, deadline);
            self.emit(|bfq| TraceEvent::IdleStart {
                queue: bfq.queue_ref(id),
                kind: IdleKind::Linger,
                window: deadline.map_or(0, |at| at.saturating_sub(now)),
            });
        }
        self.in_service = None;
        self.release_if_unused(id);
    }

    /// Whether BFQ waits for this emptied queue's next request: where idling would serve
    /// fairness (see the module documentation).
    fn worth_lingering(&self, id: QueueId) -> bool {
        let queue = self.queue(id);
        let thinks_long = queue.think_time.valid()
            && self.parallel.service_time.sampled
            && queue.think_time.mean > LINGER_THINK_FACTOR * self.parallel.service_time.mean;
        self.config.slice_idle > 0
            && queue.sync
            && !queue.process_gone
            && queue.class_index() != CLASSES - 1
            && !thinks_long
            && self.asymmetric(id)
    }

    /// Until when a lingering queue is waited for: no limit while it has requests at the
    /// device (their completion sets one), else its window from now.
    fn linger_deadline(&self, id: QueueId, now: Nanos) -> Option<Nanos> {
        let queue = self.queue(id);
        if queue.dispatched > 0 {
            return None;
        }
        let slice_idle = self.config.slice_idle;
        let window = if queue.think_time.valid() {
            queue.think_time.mean.saturating_mul(2).max(LINGER_FLOOR)
        } else {
            MIN_THINK_TIME
        };
        Some(now.saturating_add(window.min(slice_idle)))
    }

    fn first_linger_deadline(&self) -> Option<Nanos> {
        self.parallel.lingering.values().flatten().min().copied()
    }

    /// A lingering queue's request completed: with none left at the device, its window starts.
    pub(super) fn lingering_completed(&mut self, id: QueueId, now: Nanos) {
        if self.parallel.lingering.get(&id) == Some(&None) && self.queue(id).dispatched == 0 {
            let deadline = self.linger_deadline(id, now);
            self.parallel.lingering.insert(id, deadline);
        }
    }

    /// A lingering queue got a request (its entity is activated by the caller) or its process
    /// exited: it no longer lingers.
    pub(super) fn forget_lingering(&mut self, id: QueueId) {
        self.parallel.lingering.remove(&id);
    }

    /// A lingering queue will not be waited for any more.
    pub(super) fn stop_lingering(&mut self, id: QueueId) {
        if self.parallel.lingering.remove(&id).is_some() {
            let entity = self.queue(id).entity;
            self.engine.stop_lingering(entity);
            self.release_if_unused(id);
        }
    }

    /// Stop waiting for every lingering queue, and release any entity the engine still keeps
    /// lingering.
    fn stop_all_lingering(&mut self) {
        let queues: Vec<QueueId> = self.parallel.lingering.keys().copied().collect();
        for id in queues {
            self.trace_linger_end(id, IdleEnd::Released);
            self.stop_lingering(id);
        }
        self.engine.stop_all_lingering();
    }

    /// Stop waiting for the queues whose windows have ended.
    fn end_lingering_windows(&mut self, now: Nanos) {
        if self.first_linger_deadline().is_none_or(|at| at > now) {
            return;
        }
        let ended: Vec<QueueId> = self
            .parallel
            .lingering
            .iter()
            .filter(|(_, deadline)| deadline.is_some_and(|at| at <= now))
            .map(|(&id, _)| id)
            .collect();
        for id in ended {
            self.trace_linger_end(id, IdleEnd::Timer);
            self.stop_lingering(id);
        }
    }
}
