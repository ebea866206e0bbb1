//! A request arrives (the kernel's `bfq_insert_request`, `bfq_add_request` and
//! `bfq_bfqq_handle_idle_busy_switch`): find or create its queue, learn from it (think time,
//! seekiness, waker), merge it or queue it, and — if its queue was idle — decide on weight
//! raising, give the queue a budget (keeping the one it had if it comes back quickly after
//! running dry: *hole recovery*), put it on the scheduling engine, and maybe preempt the queue in
//! service.

use crate::trace::Traced;
use crate::trace::{IdleEnd, PreemptReason, RaiseEnd};
use crate::{GroupId, Inserted, Nanos, PriorityClass, ProcessId, Request, TraceEvent};

use super::queue::{Expiration, Queue, QueueId, QueueKind};
use super::tracing::raise_kind;
use super::weight_raising::{Deserves, MIN_IDLE_TIME};
use super::wf2q::Owner;
use super::Bfq;

/// Arrivals within this many slice_idle of the queue's last completion count as "in time".
const IN_TIME_SLICES: u64 = 3;
/// The I/O intensity window halves once it is longer than this.
const INTENSITY_WINDOW: Nanos = crate::time::ms(200);
/// Waker detection: a request within this long of another queue's completion.
const WAKER_GAP: Nanos = crate::time::ms(4);
/// Waker detection: sightings needed, within 128 × slice_idle.
const WAKER_SIGHTINGS: u32 = 3;
/// The weight of the default priority (BE4): only such queues are weight raised.
const DEFAULT_WEIGHT: u64 = 40;
/// A request this small arriving while BFQ idles may be followed by more: keep idling.
const SMALL_REQUEST: u32 = 32;

impl Bfq {
    pub(super) fn arrive(&mut self, request: Request, now: Nanos) -> Inserted {
        let mut id = self.queue_for(&request, now);
        // Parallel service has no queue in service to merge into: no early queue merging.
        if request.sync && !self.parallel.on {
            id = self.cooperate(id, &request, now);
        }
        let queue = self.queue_mut(id);
        queue.outstanding += 1;
        queue.depth = queue.depth.max(queue.outstanding);
        let request_id = request.id;
        let request = match self
            .store
            .merge(self.queues[id].as_mut().expect("live queue"), request)
        {
            Ok(merged) => {
                self.trace.emit(|| TraceEvent::Merge {
                    request: request_id,
                    into: merged.into,
                    position: merged.position,
                });
                if let Some((into, absorbed)) = merged.coalesced {
                    self.trace.push(TraceEvent::Coalesce { into, absorbed });
                }
                return Inserted::Merged(merged.carrier);
            }
            Err(request) => request,
        };
        self.learn_from_arrival(id, &request, now);
        let (request_id, group, sync) = (request.id, request.group, request.sync);
        let due = now.saturating_add(self.fifo_expire(sync));
        let queue = self.queues[id].as_mut().expect("live queue");
        let slot = self.store.add(queue, request, due);
        let next = self.config.seek.choose_slot(
            &self.store.slab,
            self.last_position,
            queue.next_request,
            Some(slot),
        );
        queue.next_request = next;
        let lone = sync && queue.outstanding <= 1;
        self.queued += 1;
        self.busy.group_pending(group, true);
        if lone {
            self.measure_on_arrival(id, request_id, now);
        }
        if !self.queue(id).busy {
            self.becomes_busy(id, now);
        } else if self.in_service == Some(id) && self.idle.is_idling() {
            self.arrived_while_idling(id, now);
        }
        Inserted::Queued
    }

    /// The process's sync queue, or the group's async queue for the request's priority;
    /// created on first use. A process whose request names another group than its sync
    /// queue's was moved (its pid written to another cgroup's `cgroup.procs`): as the
    /// kernel's `__bfq_bic_change_cgroup` does (block/bfq-cgroup.c, 6.x), a queue of its own
    /// moves with it, state and queued requests ([`Bfq::move_queue`]); a queue it shares with
    /// merged cooperators stays, and its next request creates one in the new group.
    fn queue_for(&mut self, request: &Request, now: Nanos) -> QueueId {
        let group = self.known_group(request.group);
        if request.sync {
            if let Some(&id) = self.sync_queues.get(&request.process) {
                if self.queue(id).group == group {
                    return self.split_if_seeky(id, request, now);
                }
                let queue = self.queue(id);
                if queue.processes <= 1 && !queue.coop && queue.merged_into.is_none() {
                    self.move_queue(id, group, now);
                    return self.split_if_seeky(id, request, now);
                }
                // Shared with cooperators: the process lets go of it, and gets a new one here.
                self.exited(request.process, now);
            }
            let id = self.create_queue(Some(request.process), true, group, request, now);
            self.sync_queues.insert(request.process, id);
            if !self.parallel.on {
                self.stable_merge_on_creation(id, group, now);
            }
            let in_burst = self.burst.created(id, group, now);
            for member in in_burst {
                if let Some(Some(queue)) = self.queues.get_mut(member) {
                    queue.in_large_burst = true;
                }
            }
            return id;
        }
        let key = (group, request.priority.class.index(), async_level(request));
        if let Some(&id) = self.async_queues.get(&key) {
            return id;
        }
        let id = self.create_queue(None, false, group, request, now);
        self.async_queues.insert(key, id);
        id
    }

    /// Move a queue of one process to `group` (`bfq_bfqq_move`): ended if in service (as
    /// preempted), off its old group's trees, and back on the new group's with its budget if
    /// it has work, keeping its budget memory, think time, seekiness and weight raising.
    fn move_queue(&mut self, id: QueueId, group: GroupId, now: Nanos) {
        if self.in_service == Some(id) {
            self.expire(id, Expiration::Preempted, now);
        }
        self.forget_lingering(id);
        let entity = self.queue(id).entity;
        self.engine
            .move_to(entity, self.group_entities[group.index()]);
        self.queue_mut(id).group = group;
        if self.queue(id).busy {
            let (budget, _) = self.activation_budget(id, false);
            self.engine.activate(entity, budget, None);
        }
    }

    /// The request's group if BFQ knows it, else the root.
    pub(super) fn known_group(&self, group: GroupId) -> GroupId {
        if group.index() < self.group_entities.len() {
            group
        } else {
            GroupId::ROOT
        }
    }

    pub(super) fn create_queue(
        &mut self,
        process: Option<ProcessId>,
        sync: bool,
        group: GroupId,
        request: &Request,
        now: Nanos,
    ) -> QueueId {
        let id = self.free_queues.pop().unwrap_or(self.queues.len());
        let kind = QueueKind {
            process,
            sync,
            group,
            priority: request.priority,
        };
        let parent = self.group_entities[group.index()];
        let weight = super::queue::weight_of(request.priority);
        let entity = self.engine.add(
            Owner::Queue(id),
            Some(parent),
            request.priority.class.index(),
            weight,
        );
        // A new queue starts with two thirds of the largest budget.
        let queue = Queue::new(kind, entity, self.budgets.max * 2 / 3, now);
        if id == self.queues.len() {
            self.queues.push(Some(queue));
        } else {
            self.queues[id] = Some(queue);
        }
        id
    }

    /// Think time, seek history and waker detection, from a sync request's arrival.
    fn learn_from_arrival(&mut self, id: QueueId, request: &Request, now: Nanos) {
        let slice_idle = self.config.slice_idle;
        let rotational = self.rotational;
        let waker = self.waker_candidate(id, now);
        let queue = self.queue_mut(id);
        if !queue.sync {
            return;
        }
        let idle = queue.dispatched == 0 && !queue.busy;
        if idle && now > queue.created {
            let gap = now.saturating_sub(queue.last_completion);
            queue.think_time.add(gap, 2 * slice_idle);
            queue.idle_total += gap;
        }
        update_io_intensity(queue, now);
        let distance = request.sector.abs_diff(queue.last_position);
        queue.seek.add(distance, request.sectors, rotational);
        queue.last_position = request.end_sector();
        let Some(waker) = waker else {
            return;
        };
        if let Some(previous) = note_waker(queue, waker, now, 128 * slice_idle) {
            self.change_waker(previous, waker);
        }
    }

    /// A queue's waker became `waker` (it was `previous`): keep the wakers' counts of the
    /// queues they wake.
    pub(super) fn change_waker(&mut self, previous: Option<QueueId>, waker: QueueId) {
        if previous == Some(waker) {
            return;
        }
        if let Some(Some(old)) = previous.and_then(|old| self.queues.get_mut(old)) {
            old.woken = old.woken.saturating_sub(1);
        }
        if let Some(Some(new)) = self.queues.get_mut(waker) {
            new.woken += 1;
        }
    }

    /// The queue whose completion just preceded this idle queue's request, if the request came
    /// within 200 µs of it and the queue has a long think time.
    fn waker_candidate(&self, id: QueueId, now: Nanos) -> Option<QueueId> {
        let queue = self.queue(id);
        let idle = queue.dispatched == 0 && !queue.busy;
        let last = self.last_completed_queue?;
        let quick = now < self.last_completion.saturating_add(WAKER_GAP);
        (idle && quick && last != id && !self.short_think_time(id)).then_some(last)
    }

    /// A request for the queue in service arrived while BFQ idled for it: stop idling, unless
    /// it is small and idling boosts throughput (more may follow).
    fn arrived_while_idling(&mut self, id: QueueId, now: Nanos) {
        let queue = self.queue(id);
        let small = queue.queued() == 1
            && queue
                .next_request
                .is_some_and(|slot| self.store.slab.get(slot).sectors < SMALL_REQUEST);
        let timed_out = queue.budget_timeout.is_some_and(|t| now >= t);
        if small && !timed_out && self.idle_inputs(id).boosts_throughput_without_issues() {
            return;
        }
        self.stop_idling(IdleEnd::RequestArrived);
        if timed_out {
            self.expire(id, Expiration::BudgetTimeout, now);
        }
    }

    /// An idle queue gets a request (`bfq_bfqq_handle_idle_busy_switch`).
    fn becomes_busy(&mut self, id: QueueId, now: Nanos) {
        let slice_idle = self.config.slice_idle;
        let queue = self.queue(id);
        let in_time = now
            <= queue
                .last_completion
                .saturating_add(IN_TIME_SLICES * slice_idle);
        let idle_long = queue.dispatched == 0
            && queue
                .budget_timeout
                .is_none_or(|t| now >= t.saturating_add(MIN_IDLE_TIME));
        let in_burst = queue.in_large_burst;
        let raise_started = self.raise_on_busy(id, idle_long, in_burst, now);
        let (budget, back_shift) = if self.parallel.on {
            // One request per turn; a lingering queue keeps its timestamps (`wf2q.rs`).
            if self.trace.is_enabled() && self.parallel.lingering.contains_key(&id) {
                self.trace_linger_end(id, IdleEnd::RequestArrived);
            }
            self.forget_lingering(id);
            (self.next_cost(id), None)
        } else {
            let (budget, back_shift) = self.activation_budget(id, in_time);
            // A raising period starts with a budget close to the queue's backlog, for latency.
            let cap = if raise_started {
                2 * super::budget::min_budget(self.budgets.max)
            } else {
                u64::MAX
            };
            (budget.min(cap), back_shift)
        };
        let wants_to_preempt = back_shift.is_some();
        let queue = self.queue(id);
        let (entity, weight) = (queue.entity, queue.weight());
        self.engine.get_mut(entity).new_weight = weight;
        self.engine.activate(entity, budget, back_shift);
        self.mark_busy(id, true);
        self.activations += 1;
        let activation = self.activations;
        let queue = self.queue_mut(id);
        queue.service_since_busy = 0;
        queue.activation = activation;
        self.maybe_preempt(id, wants_to_preempt, now);
    }

    /// Start, renew or end weight raising as the queue becomes busy; whether a period started.
    fn raise_on_busy(&mut self, id: QueueId, idle_long: bool, in_burst: bool, now: Nanos) -> bool {
        let low_latency = self.config.low_latency;
        let duration = self.peak.raising_duration();
        let queue = self.queue_mut(id);
        if !low_latency || !queue.sync {
            queue.raising.last_busy = now;
            return false;
        }
        let before = queue.raising.coefficient;
        // Merged queues are kept out of raising: they serve cooperating processes, which
        // are seldom interactive or soft real-time.
        let default_weight = queue.orig_weight == DEFAULT_WEIGHT && (!queue.coop || queue.stable);
        let soft_rt = default_weight
            && !queue.seek.totally_seeky()
            && !in_burst
            && queue.dispatched == 0
            && now >= queue.raising.soft_rt_next_start;
        let deserves = if default_weight && !in_burst && idle_long {
            Deserves::Interactive
        } else if soft_rt {
            Deserves::SoftRealTime
        } else {
            Deserves::Nothing
        };
        queue.raising.on_busy(deserves, in_burst, duration, now);
        let after = queue.raising.coefficient;
        // A period renewed as it runs is not a new start.
        if after != before && after > 1 {
            self.trace_raise_start(id, now);
        } else if after != before {
            self.emit(|bfq| TraceEvent::RaiseEnd {
                queue: bfq.queue_ref(id),
                kind: raise_kind(before),
                reason: RaiseEnd::LargeBurst,
            });
        }
        before == 1 && after > 1
    }

    /// The budget a queue becomes busy with: if its last turn was cut short moments ago, what
    /// it had left of that turn's budget, at most its budget memory (then its old timestamps
    /// are kept too, see [`super::wf2q::Wf2q::activate`]); else its budget memory, never
    /// below its next request's cost.
    fn activation_budget(&mut self, id: QueueId, in_time: bool) -> (u64, Option<u64>) {
        let next = self.next_cost(id);
        let queue = self.queue_mut(id);
        match queue.emptied.take() {
            Some(left) if in_time && left > 0 => {
                (left.min(queue.max_budget), Some(queue.raising.coefficient))
            }
            _ => (queue.max_budget.max(next), None),
        }
    }

    /// Count a queue as busy or not busy.
    pub(super) fn mark_busy(&mut self, id: QueueId, busy: bool) {
        let queue = self.queue_mut(id);
        if queue.busy == busy {
            return;
        }
        queue.busy = busy;
        let (class, weight, raised) = (
            queue.class_index(),
            queue.weight(),
            queue.raising.coefficient > 1,
        );
        if busy {
            self.busy.add(class, weight, raised);
        } else {
            self.busy.remove(class, weight, raised);
        }
    }

    /// A busy queue's weight or raising changes: keep the busy counts right.
    pub(super) fn reweigh_busy(&mut self, id: QueueId, old_weight: u64, was_raised: bool) {
        let queue = self.queue(id);
        if !queue.busy {
            return;
        }
        let now = (queue.weight(), queue.raising.coefficient > 1);
        self.busy.reweigh((old_weight, was_raised), now);
    }

    /// The newly busy queue takes the device from the queue in service if it recovers from a
    /// hole and is raised at least as much, or has a higher class or weight, or if BFQ idles for
    /// the queue in service although that no longer pays.
    fn maybe_preempt(&mut self, id: QueueId, wants_to_preempt: bool, now: Nanos) {
        let Some(current) = self.in_service.filter(|&c| c != id) else {
            return;
        };
        let raised_enough =
            self.queue(id).raising.coefficient >= self.queue(current).raising.coefficient;
        let idling_in_vain = !self.better_to_idle(current);
        let reason = if wants_to_preempt && raised_enough {
            PreemptReason::HoleRecovery
        } else if self.higher_class_or_weight(id, current) {
            PreemptReason::HigherClassOrWeight
        } else if idling_in_vain {
            PreemptReason::IdlingInVain
        } else {
            return;
        };
        self.emit(|bfq| TraceEvent::Preempt {
            queue: bfq.queue_ref(current),
            by: bfq.queue_ref(id),
            reason,
        });
        self.expire(current, Expiration::Preempted, now);
    }

    /// A higher class, or a higher weight — compared between the queues if they share a group,
    /// else between their groups (`bfq_bfqq_higher_class_or_weight`).
    fn higher_class_or_weight(&self, id: QueueId, current: QueueId) -> bool {
        let (a, b) = (self.queue(id), self.queue(current));
        if a.class != b.class {
            return a.class_index() < b.class_index();
        }
        let weight_of = |queue: &Queue, other: &Queue| {
            if queue.group == other.group {
                queue.weight()
            } else {
                let entity = self.group_entities[queue.group.index()];
                self.engine.get(entity).weight
            }
        };
        weight_of(a, b) > weight_of(b, a)
    }

    pub(super) fn exited(&mut self, process: ProcessId, now: Nanos) {
        let Some(id) = self.sync_queues.remove(&process) else {
            return;
        };
        let queue = self.queue_mut(id);
        queue.processes = queue.processes.saturating_sub(1);
        if queue.processes == 0 {
            self.no_process_left(id, now);
        }
    }

    /// Free a sync queue whose process has exited once nothing refers to it.
    pub(super) fn release_if_unused(&mut self, id: QueueId) {
        let Some(Some(queue)) = self.queues.get(id) else {
            return;
        };
        if !queue.process_gone
            || !queue.is_empty()
            || queue.dispatched > 0
            || queue.busy
            || self.in_service == Some(id)
            || self.parallel.lingering.contains_key(&id)
        {
            return;
        }
        let (entity, process) = (queue.entity, queue.process);
        let (waker, woken) = (queue.waker, queue.woken);
        if let Some(process) = process {
            if self.sync_queues.get(&process) == Some(&id) {
                self.sync_queues.remove(&process);
            }
        }
        if let Some(Some(waker)) = waker.and_then(|waker| self.queues.get_mut(waker)) {
            waker.woken = waker.woken.saturating_sub(1);
        }
        if self.last_completed_queue == Some(id) {
            self.last_completed_queue = None;
        }
        if woken > 0 {
            // The queues it woke lose their waker: the id will be reused.
            for other in self.queues.iter_mut().flatten() {
                if other.waker == Some(id) {
                    other.waker = None;
                }
            }
        }
        self.engine.remove(entity);
        self.burst.forget(id);
        self.queues[id] = None;
        self.free_queues.push(id);
    }
}

/// The level of a group's async queue for a request (one queue for the IDLE class).
fn async_level(request: &Request) -> u8 {
    async_key_level(request.priority.class, request.priority.level)
}

/// The level in an async queue's key: the IDLE class has one queue.
pub(super) fn async_key_level(class: PriorityClass, level: u8) -> u8 {
    match class {
        PriorityClass::Idle => 0,
        _ => level,
    }
}

/// Count a waker sighting: the third within `window` of the first makes it the queue's waker.
/// Returns the queue's previous waker when it gets one.
fn note_waker(
    queue: &mut Queue,
    waker: QueueId,
    now: Nanos,
    window: Nanos,
) -> Option<Option<QueueId>> {
    match queue.waker_candidate {
        Some((candidate, count, since)) if candidate == waker && now <= since + window => {
            if count + 1 >= WAKER_SIGHTINGS {
                queue.waker_candidate = None;
                return Some(queue.waker.replace(waker));
            }
            queue.waker_candidate = Some((candidate, count + 1, since));
        }
        _ => queue.waker_candidate = Some((waker, 1, now)),
    }
    None
}

/// A queue idle (nothing queued or in flight) for less than a fifth of the time is
/// I/O-bound; the measure forgets the past by halving every 200 ms.
fn update_io_intensity(queue: &mut Queue, now: Nanos) {
    if now == queue.created {
        return;
    }
    let total = now.saturating_sub(queue.io_start);
    queue.io_bound = queue.idle_total.saturating_mul(5) <= total;
    if total > INTENSITY_WINDOW {
        queue.io_start = now - total / 2;
        queue.idle_total /= 2;
    }
}
