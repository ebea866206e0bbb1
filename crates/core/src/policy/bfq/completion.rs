//! A request completes (the kernel's `bfq_completed_request`): the device-wide estimators
//! learn (peak rate, command queueing), the queue's injection limit adapts, and the queue in
//! service either starts idling, times out, or ends its turn for lack of requests.

use crate::time::SECOND;
use crate::{Completion, Nanos};

use super::idling::IdleInputs;
use super::queue::{Expiration, QueueId};
use super::Bfq;

/// How often a queue's injection limit starts over.
const INJECT_LIMIT_RESET: Nanos = SECOND;
/// Requests below which the queue in service cannot fill the device (hw_tag sampling).
const SHALLOW: usize = 3;

impl Bfq {
    pub(super) fn completed(&mut self, completion: &Completion, now: Nanos) {
        let request = &completion.request;
        let Some(info) = self.in_flight.remove(request.id.0) else {
            return;
        };
        let id = info.queue;
        self.injected_in_flight -= usize::from(info.injected);
        let group = self.known_group(request.group);
        self.group_pending_add(group, false);
        let queue = self.queue_mut(id);
        queue.dispatched = queue.dispatched.saturating_sub(1);
        queue.outstanding = queue.outstanding.saturating_sub(request.ids().count());
        queue.last_completion = now;
        if self.peak.completed(now) {
            self.update_max_budget();
        }
        self.sample_hw_tag();
        self.last_completion = now;
        self.last_completed_queue = Some(id);
        self.update_inject_limit(id, request.id, now);
        self.soft_rt_after_last_completion(id, now);
        if self.parallel {
            self.service_time
                .add(now.saturating_sub(completion.dispatch_time));
            self.lingering_completed(id, now);
        }
        if self.in_service == Some(id) {
            self.in_service_completed(id, now);
        }
        self.release_if_unused(id);
    }

    fn sample_hw_tag(&mut self) {
        let in_driver = self.in_flight.len() + 1;
        let shallow = self.in_service.is_some_and(|id| {
            let queue = self.queue(id);
            self.short_think_time(id)
                && queue.dispatched + queue.queued() < SHALLOW
                && in_driver < SHALLOW
        });
        self.hw_tag.sample(in_driver, self.queued, shallow);
    }

    /// The in-service queue's request completed: idle for it if it is empty and idling pays,
    /// else end its turn if its time is up or it has nothing left.
    fn in_service_completed(&mut self, id: QueueId, now: Nanos) {
        let queue = self.queue(id);
        let empty = queue.is_empty();
        let dispatched = queue.dispatched;
        let timed_out = queue.budget_timeout.is_some_and(|t| now >= t);
        let inputs = empty.then(|| self.idle_inputs(id));
        if let Some(inputs) = inputs.filter(IdleInputs::better_to_idle) {
            if dispatched == 0 && self.idle_until.is_none() {
                self.start_idling(inputs.idle_time(), now);
            }
        } else if timed_out {
            self.expire(id, Expiration::BudgetTimeout, now);
        } else if empty {
            self.expire(id, Expiration::NoMoreRequests, now);
        }
    }

    /// A queue that ran dry while requests were in flight learns its soft real-time start at
    /// its last completion.
    fn soft_rt_after_last_completion(&mut self, id: QueueId, now: Nanos) {
        let slice_idle = self.config.slice_idle;
        if !self.config.low_latency {
            return;
        }
        let queue = self.queue_mut(id);
        if queue.dispatched == 0 && queue.is_empty() {
            let service = queue.service_since_busy;
            queue.raising.last_completion(service, slice_idle, now);
        }
    }

    /// Adapt the queue's injection limit from the total service time of the first request it
    /// received after running dry: with injection it must stay under 1.5× the time measured
    /// without; the limit starts over every second.
    fn update_inject_limit(&mut self, id: QueueId, completed: crate::RequestId, now: Nanos) {
        let short = self.short_think_time(id);
        let injected_now = self.injected_in_flight > 0;
        let in_driver_alone = self.in_flight.is_empty();
        let ceiling = self.max_in_flight_seen;
        let queue = self.queue_mut(id);
        if now
            >= queue
                .inject_limit_changed
                .saturating_add(INJECT_LIMIT_RESET)
        {
            queue.last_service_time = 0;
            queue.inject_limit = usize::from(!short);
            queue.inject_limit_changed = now;
        }
        let Some((measured, arrival)) = queue.measured_request else {
            return;
        };
        if measured != completed {
            return;
        }
        queue.measured_request = None;
        let total = now.saturating_sub(arrival);
        if queue.last_service_time > 0 && injected_now {
            let threshold = queue.last_service_time * 3 / 2;
            if total >= threshold && queue.inject_limit > 0 {
                queue.inject_limit -= 1;
                queue.inject_limit_changed = now;
            } else if total < threshold && queue.inject_limit <= ceiling {
                queue.inject_limit += 1;
            }
        }
        if (queue.last_service_time == 0 && in_driver_alone) || total < queue.last_service_time {
            if queue.last_service_time == 0 {
                queue.inject_limit = queue.inject_limit.max(1);
            }
            queue.last_service_time = total;
        } else if !injected_now && in_driver_alone {
            queue.last_service_time = total;
        }
    }
}
