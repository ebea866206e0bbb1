//! I/O injection: while BFQ idles for the queue in service (or waits for its in-flight
//! requests), requests of other queues fill the device's idle time. First the same process's
//! async requests, then the queue's *waker* (the queue whose completions its requests follow),
//! then a queue it wakes, then — unless idling for it boosts throughput, where a stream is best
//! served alone — any busy queue with budget left, the last only while fewer requests are in
//! flight than the in-service queue's *injection limit*. On flash only one large (≥ 64 sectors)
//! injected request may be in flight at a time.
//!
//! The limit adapts so that injection never makes the idled-for queue's requests take 1.5×
//! longer than without. A queue's first request after it ran dry (sent by a process with no
//! other request outstanding, while the queue is in service) is measured from its arrival to
//! its completion. Measured with the device empty and nothing injected, the time is the
//! *baseline*; measured after injection, it moves the limit down by one when it reaches 1.5×
//! the baseline, else up by one. A queue starts with a limit of 0 and no baseline, so nothing
//! is injected for it until a baseline exists — except after idling a whole `slice_idle` for
//! it, when one request may go. Every second the baseline is forgotten and the limit starts
//! again from 0 (1 for a queue with a long think time, which absorbs an injected request).
//! Measurements start at most every 10 ms after the limit last went down.
//!
//! Source: Linux's `block/bfq-iosched.c` (≥ 5.2): `bfq_select_queue` and
//! `bfq_choose_bfqq_for_injection` (what is injected), `bfq_update_inject_limit` (the limit)
//! and `bfq_check_waker` (wakers); and the kernel's behaviour on sequential readers in weighted
//! groups (`docs/fidelity.md`). Our own code.

use crate::time::{ms, SECOND};
use crate::trace::Traced;
use crate::{Nanos, Request, RequestId, TraceEvent};

use super::queue::QueueId;
use super::Bfq;

/// What injection measures and remembers.
#[derive(Debug, Clone, Default)]
pub(super) struct InjectionState {
    /// A request was injected since the measurement of the in-service queue's total service
    /// time started.
    pub(super) injected_since_measure: bool,
    /// Most requests seen at the device at once (the injection limit's ceiling).
    pub(super) max_in_flight_seen: usize,
}

/// An injected request this large counts as large on flash (`BFQQ_SECT_THR_NONROT`).
const LARGE_ON_FLASH: u32 = 64;
/// How often a queue's baseline is forgotten and its limit starts over.
const LIMIT_RESET: Nanos = SECOND;
/// How long after the limit went down before the next measurement may start.
const MEASURE_AFTER_DECREASE: Nanos = ms(10);

impl Bfq {
    /// A request of another queue to send while holding the device for `in_service`.
    pub(super) fn inject(&mut self, in_service: QueueId, now: Nanos) -> Option<Request> {
        let chosen = self
            .same_process_async(in_service)
            .or_else(|| self.waker_with_work(in_service))
            .or_else(|| self.woken_with_work(in_service))
            .or_else(|| self.any_injectable(in_service, now))?;
        let slot = self.queue(chosen).next_request?;
        let request = self.serve(chosen, slot, now, true);
        self.injection.injected_since_measure = true;
        self.emit(|bfq| TraceEvent::Inject {
            request: request.id,
            queue: bfq.queue_ref(chosen),
            holder: bfq.queue_ref(in_service),
        });
        Some(request)
    }

    /// Whether a queue has a next request within its budget.
    fn fits_budget(&self, id: QueueId) -> bool {
        let queue = self.queue(id);
        let Some(slot) = queue.next_request else {
            return false;
        };
        let entity = self.engine.get(queue.entity);
        self.cost(id, self.store.slab.get(slot)) <= entity.budget.saturating_sub(entity.service)
    }

    /// The group's async queue for the in-service queue's priority, if its next request comes
    /// from the same process.
    fn same_process_async(&self, in_service: QueueId) -> Option<QueueId> {
        let queue = self.queue(in_service);
        let process = queue.process?;
        let level = super::arrival::async_key_level(queue.class, queue.level);
        let key = (queue.group, queue.class_index(), level);
        let async_queue = *self.async_queues.get(&key)?;
        let next = self.queue(async_queue).next_request?;
        (self.store.slab.get(next).process == process && self.fits_budget(async_queue))
            .then_some(async_queue)
    }

    fn waker_with_work(&self, in_service: QueueId) -> Option<QueueId> {
        let waker = self.queue(in_service).waker?;
        let live = self.queues.get(waker).is_some_and(Option::is_some);
        (live && waker != in_service && self.fits_budget(waker)).then_some(waker)
    }

    /// A queue the in-service queue wakes: it cannot run ahead of the queue it waits for.
    fn woken_with_work(&self, in_service: QueueId) -> Option<QueueId> {
        if self.queue(in_service).woken == 0 {
            return None;
        }
        (0..self.queues.len()).find(|&id| {
            id != in_service
                && self.queues[id]
                    .as_ref()
                    .is_some_and(|q| q.waker == Some(in_service) && q.busy)
                && self.fits_budget(id)
        })
    }

    /// The most recently activated busy queue with budget left, within the injection limit — unless idling for the
    /// queue in service boosts throughput (a sequential stream is best served alone), or it is
    /// a raised queue with a short think time, the only one raised (its latency comes first).
    fn any_injectable(&self, in_service: QueueId, now: Nanos) -> Option<QueueId> {
        let queue = self.queue(in_service);
        let mut limit = queue.inject_limit;
        let idled_a_while = self.idle.is_idling()
            && now >= self.idle.started().saturating_add(self.config.slice_idle);
        if limit == 0 && queue.last_service_time == 0 && idled_a_while {
            limit = 1;
        }
        if self.in_flight.len() >= limit {
            return None;
        }
        let raised_alone = queue.raising.coefficient > 1
            && self.busy.raised() <= 1
            && self.short_think_time(in_service);
        if raised_alone
            || self
                .idle_inputs(in_service)
                .boosts_throughput_without_issues()
        {
            return None;
        }
        let always = queue.raising.coefficient == 1 || !self.short_think_time(in_service);
        (0..self.queues.len())
            .filter(|&id| id != in_service)
            .filter(|&id| {
                self.queues[id]
                    .as_ref()
                    .is_some_and(|q| q.busy && !q.is_empty())
            })
            .filter(|&id| always || self.queue(id).raising.coefficient > 1)
            .filter(|&id| self.fits_budget(id))
            .filter(|&id| !self.too_large_for_flash(id))
            // The most recently activated first, as the kernel walks its busy list; walking
            // by index would always favour the oldest queues.
            .max_by_key(|&id| self.queue(id).activation)
    }

    fn too_large_for_flash(&self, id: QueueId) -> bool {
        if self.rotational || self.in_flight.is_empty() {
            return false;
        }
        self.queue(id)
            .next_request
            .is_some_and(|slot| self.store.slab.get(slot).sectors >= LARGE_ON_FLASH)
    }

    /// A request of a process with no other request outstanding arrives in queue `id`: the
    /// limit starts over if a second has passed, and if `id` is in service the request's total
    /// service time is measured — with the device empty (a baseline, unless injection follows),
    /// or after injection with requests still at the device.
    pub(super) fn measure_on_arrival(&mut self, id: QueueId, request: RequestId, now: Nanos) {
        let short = self.short_think_time(id);
        let device_empty = self.in_flight.is_empty();
        let injected = self.injection.injected_since_measure;
        let in_service = self.in_service == Some(id);
        let queue = self.queue_mut(id);
        if now >= queue.inject_limit_changed.saturating_add(LIMIT_RESET) {
            queue.last_service_time = 0;
            queue.measured_request = None;
            queue.inject_limit = usize::from(!short);
            queue.inject_limit_changed = now;
        }
        let worth_measuring = device_empty || (queue.last_service_time > 0 && injected);
        let may_measure = now
            >= queue
                .inject_limit_changed
                .saturating_add(MEASURE_AFTER_DECREASE);
        if in_service && worth_measuring && may_measure {
            queue.measured_request = Some((request, now));
            if device_empty {
                self.injection.injected_since_measure = false;
            }
        }
    }

    /// A request of queue `id` completed (and left the device): if it was the one measured,
    /// adapt the limit and the baseline.
    pub(super) fn measured_completed(&mut self, id: QueueId, completed: RequestId, now: Nanos) {
        let device_empty = self.in_flight.is_empty();
        let injected = self.injection.injected_since_measure;
        let ceiling = self.injection.max_in_flight_seen;
        let queue = self.queue_mut(id);
        let Some((measured, arrival)) = queue.measured_request else {
            return;
        };
        if measured != completed {
            return;
        }
        queue.measured_request = None;
        let total = now.saturating_sub(arrival);
        let baseline = queue.last_service_time;
        if baseline > 0 && injected {
            let threshold = baseline * 3 / 2;
            if total >= threshold && queue.inject_limit > 0 {
                queue.inject_limit -= 1;
                queue.inject_limit_changed = now;
            } else if total < threshold && queue.inject_limit <= ceiling {
                queue.inject_limit += 1;
            }
        }
        if (baseline == 0 && device_empty) || total < baseline {
            if baseline == 0 {
                // A first baseline: injection may start.
                queue.inject_limit = queue.inject_limit.max(1);
            }
            queue.last_service_time = total;
        } else if !injected && device_empty {
            queue.last_service_time = total;
        }
        self.injection.injected_since_measure = false;
    }
}
