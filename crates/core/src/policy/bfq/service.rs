//! Serving (the kernel's `bfq_dispatch_request`, `bfq_select_queue`, `bfq_bfqq_expire`): keep
//! the queue in service while it has budget, time and requests; idle for it when that pays
//! (injecting others' requests meanwhile); otherwise expire it — update its budget from how
//! its turn ended, charge time instead of sectors if it was slow — and let B-WF2Q+ choose the
//! next queue.

use crate::merge::SlotKey;
use crate::trace::IdleEnd;
use crate::trace::Traced;
use crate::{Dispatch, Nanos, Request, TraceEvent};

use super::budget::{self, TurnEnd, TurnLength};
use super::queue::{Expiration, QueueId};
use super::tracing::TraceIdle;
use super::wf2q::CLASSES;
use super::{Bfq, InFlight};

/// What the queue in service can do now.
enum Next {
    /// Serve this request.
    Serve(SlotKey),
    /// Hold the device for it (idling, or waiting for its in-flight requests) until then;
    /// `None`: until a completion.
    Hold(Option<Nanos>),
    /// Its turn is over.
    Expire(Expiration),
}

impl Bfq {
    pub(super) fn dispatch_request(&mut self, now: Nanos) -> Dispatch {
        if self.config.strict_guarantees && !self.in_flight.is_empty() {
            return Dispatch::Empty;
        }
        if self.parallel.on {
            return self.dispatch_parallel(now);
        }
        loop {
            let id = match self.in_service {
                Some(id) => id,
                None => match self.start_next_queue(now) {
                    Some(id) => id,
                    None => return Dispatch::Empty,
                },
            };
            match self.next_step(id, now) {
                Next::Serve(slot) => return Dispatch::Request(self.serve(id, slot, now, false)),
                Next::Hold(until) => {
                    if let Some(request) = self.inject(id, now) {
                        return Dispatch::Request(request);
                    }
                    return until.map_or(Dispatch::Empty, Dispatch::WaitUntil);
                }
                Next::Expire(reason) => self.expire(id, reason, now),
            }
        }
    }

    /// Let B-WF2Q+ choose the next queue and start its turn.
    fn start_next_queue(&mut self, now: Nanos) -> Option<QueueId> {
        let id = self.engine.select(self.root, now)?;
        self.in_service = Some(id);
        self.idle.stop();
        self.budgets.assigned = (self.budgets.assigned * 7 + 256) / 8;
        let timeout = self.config.timeout_sync;
        let queue = self.queue_mut(id);
        queue.fifo_checked = false;
        queue.slot_start = now;
        // Interactive raising stretches the timeout by the coefficient; soft real-time does not.
        let stretch = if queue.raising.is_soft_rt() {
            1
        } else {
            queue.raising.coefficient
        };
        queue.budget_timeout = Some(now.saturating_add(timeout.saturating_mul(stretch)));
        self.emit(|bfq| {
            let queue = bfq.queue(id);
            TraceEvent::BudgetStart {
                queue: bfq.queue_ref(id),
                budget: bfq.engine.get(queue.entity).budget,
                timeout: timeout.saturating_mul(stretch),
                raising: queue.raising.coefficient,
            }
        });
        Some(id)
    }

    fn next_step(&mut self, id: QueueId, now: Nanos) -> Next {
        self.update_raising(id, now);
        let queue = self.queue(id);
        let timed_out = queue.budget_timeout.is_some_and(|t| now >= t);
        if let Some(until) = self.idle.until() {
            if now < until && queue.next_request.is_some() {
                // A request arrived while idling and the driver asks to dispatch (the kernel's
                // unplug): stop idling and serve it.
                self.stop_idling(IdleEnd::RequestArrived);
                return self.next_step(id, now);
            }
            if now < until {
                return Next::Hold(Some(until));
            }
            self.stop_idling(IdleEnd::Timer);
            return Next::Expire(if timed_out {
                Expiration::BudgetTimeout
            } else {
                Expiration::TooIdle
            });
        }
        if timed_out {
            return Next::Expire(Expiration::BudgetTimeout);
        }
        match self.pick_request(id, now) {
            Some(slot) => {
                let left = self.budget_left(id);
                if self.cost(id, self.store.slab.get(slot)) > left {
                    Next::Expire(Expiration::BudgetExhausted)
                } else {
                    Next::Serve(slot)
                }
            }
            None => {
                let inputs = self.idle_inputs(id);
                if !inputs.better_to_idle() {
                    Next::Expire(Expiration::NoMoreRequests)
                } else if self.queue(id).dispatched > 0 {
                    // Wait for its requests to complete; idling starts then.
                    Next::Hold(None)
                } else {
                    self.start_idling(inputs.idle_time(), now);
                    Next::Hold(self.idle.until())
                }
            }
        }
    }

    /// The queue's next request; once per turn an expired FIFO head takes its place.
    pub(super) fn pick_request(&mut self, id: QueueId, now: Nanos) -> Option<SlotKey> {
        let queue = self.queue(id);
        let next = queue.next_request?;
        if queue.fifo_checked {
            return Some(next);
        }
        let expired = self.store.expired_head(queue, now);
        self.queue_mut(id).fifo_checked = true;
        if let Some(head) = expired {
            self.queue_mut(id).next_request = Some(head);
            self.emit(|bfq| TraceEvent::FifoExpired {
                request: bfq.store.slab.get(head).id,
                late: bfq
                    .queue(id)
                    .fifo
                    .front()
                    .map_or(0, |&(due, _, _)| now.saturating_sub(due)),
            });
            return Some(head);
        }
        Some(next)
    }

    fn budget_left(&self, id: QueueId) -> u64 {
        let entity = self.engine.get(self.queue(id).entity);
        entity.budget.saturating_sub(entity.service)
    }

    /// Send a queued request to the device and charge its queue.
    pub(super) fn serve(
        &mut self,
        id: QueueId,
        slot: SlotKey,
        now: Nanos,
        injected: bool,
    ) -> Request {
        let cost = self.cost(id, self.store.slab.get(slot));
        let queue = self.queues[id].as_mut().expect("live queue");
        let next = self.store.next_after(queue, &self.config.seek, slot);
        let next = if queue.next_request == Some(slot) {
            next
        } else {
            queue.next_request
        };
        let request = self.store.remove(queue, slot);
        queue.next_request = next;
        queue.dispatched += 1;
        queue.served = true;
        queue.service_since_busy += cost;
        if queue.raising.coefficient > 1 {
            queue.raising.service += cost;
        }
        let entity = queue.entity;
        self.engine.charge(entity, cost);
        self.queued -= 1;
        self.last_position = request.end_sector();
        if !injected && self.in_service == Some(id) {
            self.in_service_last_position = self.last_position;
        }
        let before = self.in_flight.len();
        if self
            .peak
            .dispatched(request.sector, u64::from(request.sectors), before, now)
        {
            self.update_max_budget();
        }
        self.in_flight.insert(request.id.0, InFlight { queue: id });
        self.injection.max_in_flight_seen =
            self.injection.max_in_flight_seen.max(self.in_flight.len());
        if self.queue(id).is_empty() && self.in_service != Some(id) {
            self.leave_engine(id);
        }
        if self.in_service == Some(id)
            && !self.parallel.on
            && self.queue(id).class_index() == CLASSES - 1
            && self.busy_queues() > 1
        {
            // An IDLE-class queue gives the device back after every request when others wait.
            self.expire(id, Expiration::BudgetExhausted, now);
        }
        request
    }

    /// In auto mode, `max_budget` follows the peak rate once enough budgets were assigned.
    pub(super) fn update_max_budget(&mut self) {
        if self.config.max_budget.is_none() && self.budgets.assigned >= budget::MIN_BUDGETS_FOR_AUTO
        {
            self.budgets.max = self.peak.max_budget(self.config.timeout_sync).max(1);
        }
    }

    /// A queue emptied while not in service (its last request was injected): off the engine.
    fn leave_engine(&mut self, id: QueueId) {
        let entity = self.queue(id).entity;
        self.engine.deactivate(entity);
        self.mark_busy(id, false);
    }

    /// End the turn of the queue in service (`bfq_bfqq_expire`).
    pub(super) fn expire(&mut self, id: QueueId, reason: Expiration, now: Nanos) {
        let entity_id = self.queue(id).entity;
        let (service, budget) = {
            let entity = self.engine.get(entity_id);
            (entity.service, entity.budget)
        };
        let charge = self.turn_charge(id, reason, service, budget, now);
        if charge > service {
            self.engine.charge(entity_id, charge - service);
        }
        if reason == Expiration::TooIdle && service <= 2 * budget / 10 {
            self.queue_mut(id).io_bound = false;
        }
        let next_budget = self.feedback(id, reason, service);
        let idle_end = if reason == Expiration::Preempted {
            IdleEnd::Preempted
        } else {
            IdleEnd::ServiceEnded
        };
        self.stop_idling(idle_end);
        self.emit(|bfq| TraceEvent::BudgetEnd {
            queue: bfq.queue_ref(id),
            reason: reason.into(),
            service,
            budget,
            charged: charge.max(service),
            next_budget,
        });
        let empty = self.queue(id).is_empty();
        // Preempted while BFQ would idle for it to keep the service guarantees: it stays on
        // its tree, empty, so that it is served before queues behind it when its request comes.
        let keep_busy = empty
            && reason == Expiration::Preempted
            && self.idle_inputs(id).needed_for_guarantees();
        let has_work = !empty || keep_busy;
        if empty {
            let recoverable = !keep_busy
                && !matches!(
                    reason,
                    Expiration::BudgetTimeout | Expiration::BudgetExhausted
                );
            // A slow queue charged for its time has nothing left to recover.
            let left = budget.saturating_sub(charge.max(service));
            self.ran_dry(id, recoverable.then_some(left), now);
        }
        let weight = self.queue(id).weight();
        self.engine.get_mut(entity_id).new_weight = weight;
        self.engine.expire(entity_id, has_work, next_budget, false);
        if !has_work {
            self.mark_busy(id, false);
        }
        self.in_service = None;
        self.idle.stop();
        self.release_if_unused(id);
    }

    /// The service to charge for the turn: time-based for slow queues (see [`budget`]).
    fn turn_charge(
        &self,
        id: QueueId,
        reason: Expiration,
        service: u64,
        budget: u64,
        now: Nanos,
    ) -> u64 {
        let queue = self.queue(id);
        let end = if reason == Expiration::TooIdle {
            self.idle.started()
        } else {
            now
        };
        let elapsed = end.saturating_sub(queue.slot_start);
        let elapsed = if elapsed < crate::time::ms(1) {
            if self.rotational {
                self.config.slice_idle
            } else {
                super::idling::MIN_THINK_TIME
            }
        } else {
            elapsed
        };
        TurnLength {
            elapsed,
            service,
            budget,
            reason,
            seeky: queue.seek.seeky(),
            sync: queue.sync,
            raised: queue.raising.coefficient > 1,
        }
        .charge(self.budgets.max, self.config.timeout_sync)
    }

    /// The queue's next budget from how its turn ended.
    fn feedback(&mut self, id: QueueId, reason: Expiration, service: u64) -> u64 {
        let max_budget = self.budgets.max;
        let in_flight = self.queue(id).dispatched;
        let next_cost = self.next_cost(id);
        let queue = self.queue_mut(id);
        let memory = if !queue.sync {
            max_budget
        } else if queue.raising.coefficient > 1 {
            2 * budget::min_budget(max_budget)
        } else {
            budget::next_budget(
                TurnEnd {
                    reason,
                    last_budget: queue.max_budget,
                    service,
                    in_flight,
                },
                max_budget,
            )
        };
        queue.max_budget = memory;
        memory.max(next_cost)
    }

    /// The queue ended its turn empty: remember the budget left for hole recovery if its turn
    /// was cut short rather than used up (`recoverable`: the kernel's `non_blocking_wait_rq`),
    /// and when its next request may count as soft real-time.
    pub(super) fn ran_dry(&mut self, id: QueueId, recoverable: Option<u64>, now: Nanos) {
        let slice_idle = self.config.slice_idle;
        let low_latency = self.config.low_latency;
        let queue = self.queue_mut(id);
        queue.emptied = recoverable;
        if low_latency {
            let (service, in_flight) = (queue.service_since_busy, queue.dispatched);
            queue.raising.ran_dry(service, in_flight, slice_idle, now);
        }
    }

    /// Weight raising may end at a dispatch; a changed weight applies at the next activation.
    #[inline]
    pub(super) fn update_raising(&mut self, id: QueueId, now: Nanos) {
        // Not raised: nothing can end.
        if self.queue(id).raising.coefficient > 1 {
            self.update_raised(id, now);
        }
    }

    /// [`Bfq::update_raising`] for a raised queue.
    fn update_raised(&mut self, id: QueueId, now: Nanos) {
        let queue = self.queue(id);
        let (old_weight, was_raised, in_burst) = (
            queue.weight(),
            queue.raising.coefficient > 1,
            queue.in_large_burst,
        );
        let before = queue.raising.coefficient;
        let Some(reason) = self.queue_mut(id).raising.update(in_burst, now) else {
            return;
        };
        self.emit(|bfq| TraceEvent::RaiseEnd {
            queue: bfq.queue_ref(id),
            kind: super::tracing::raise_kind(before),
            reason,
        });
        if self.queue(id).raising.coefficient > 1 {
            // A soft real-time period fell back to the interactive one it interrupted.
            self.trace_raise_start(id, now);
        }
        let weight = self.queue(id).weight();
        let entity = self.queue(id).entity;
        self.engine.get_mut(entity).new_weight = weight;
        self.reweigh_busy(id, old_weight, was_raised);
    }

    /// Idle for the queue in service, for `idle` (its [`IdleInputs::idle_time`]): it just
    /// ran dry and idling pays.
    ///
    /// [`IdleInputs::idle_time`]: super::idling::IdleInputs::idle_time
    pub(super) fn start_idling(&mut self, idle: Nanos, now: Nanos) {
        self.idle.start(now, idle);
        if self.trace.is_enabled() {
            self.trace_idle(TraceIdle::Start(idle));
        }
    }
}
