//! I/O injection: while BFQ idles for the queue in service (or waits for its in-flight
//! requests), requests of other queues fill the device's idle time. First the same process's
//! async requests, then the queue's *waker* (the queue whose completions its requests follow),
//! then a queue it wakes, then — unless idling for it boosts throughput, where a stream is best
//! served alone — any busy queue with budget left, the last only while fewer requests are in flight than
//! the in-service queue's *injection limit*, which [`super::completion`] adapts so that injection
//! never makes the idled-for queue's requests take 1.5× longer. On flash only one large
//! (≥ 64 sectors) injected request may be in flight at a time.
//!
//! Source: `reference/kernel-schedulers.md` §2.5 ("I/O injection", Linux ≥ 5.2). Our own code.

use crate::{Nanos, Request, TraceEvent};

use super::queue::QueueId;
use super::Bfq;

/// An injected request this large counts as large on flash (`BFQQ_SECT_THR_NONROT`).
const LARGE_ON_FLASH: u32 = 64;

impl Bfq {
    /// A request of another queue to send while holding the device for `in_service`.
    pub(super) fn inject(&mut self, in_service: QueueId, now: Nanos) -> Option<Request> {
        let chosen = self
            .same_process_async(in_service)
            .or_else(|| self.waker_with_work(in_service))
            .or_else(|| self.woken_with_work(in_service))
            .or_else(|| self.any_injectable(in_service))?;
        let slot = self.queue(chosen).next_request?;
        let request = self.serve(chosen, slot, now, true);
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
    fn any_injectable(&self, in_service: QueueId) -> Option<QueueId> {
        let queue = self.queue(in_service);
        let mut limit = queue.inject_limit;
        if limit == 0 && queue.last_service_time == 0 && self.idle_until.is_some() {
            limit = 1;
        }
        if self.in_flight.len() >= limit {
            return None;
        }
        let raised_alone = queue.raising.coefficient > 1
            && self.raised_busy <= 1
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
}
