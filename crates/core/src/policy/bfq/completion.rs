//! A request completes (the kernel's `bfq_completed_request`): the device-wide estimators
//! learn (peak rate, command queueing), the queue's injection limit adapts, and the queue in
//! service either starts idling, times out, or ends its turn for lack of requests.

use crate::{Completion, Nanos};

use super::idling::IdleInputs;
use super::queue::{Expiration, QueueId};
use super::Bfq;

/// Requests below which the queue in service cannot fill the device (hw_tag sampling).
const SHALLOW: usize = 3;

impl Bfq {
    pub(super) fn completed(&mut self, completion: &Completion, now: Nanos) {
        let request = &completion.request;
        let Some(info) = self.in_flight.remove(request.id.0) else {
            return;
        };
        let id = info.queue;
        let group = self.known_group(request.group);
        self.busy.group_pending(group, false);
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
        self.measured_completed(id, request.id, now);
        self.soft_rt_after_last_completion(id, now);
        if self.parallel.on {
            self.parallel
                .service_time
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
            if dispatched == 0 && !self.idle.is_idling() {
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
}
