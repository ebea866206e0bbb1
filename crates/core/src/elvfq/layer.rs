//! The elv-fq layer: a [`Scheduler`] over one elevator per group that gives the groups time
//! slices by hierarchical B-WF2Q+, charged in disk time, and idles for a group that is likely
//! to send more (see the [module doc](super)).

use std::collections::BTreeMap;

use super::regroup::regroup;
use super::think::ThinkTime;
use super::ElvFqSettings;
use crate::policy::bfq::wf2q::{EntityId, Owner, Wf2q};
use crate::trace::{ChargeUnit, IdleEnd, IdleKind, QueueRef, TraceBuffer, Workload};
use crate::tunable::TunableError;
use crate::{
    Completion, Dispatch, Group, GroupId, GroupTree, Inserted, IoPriority, Nanos, PriorityClass,
    ProcessId, Request, RequestId, Scheduler, TraceEvent,
};

/// The service tree class every group's entities are on: groups have no classes.
const GROUP_CLASS: usize = 1;

/// One group: its elevator and what the layer knows of it.
struct Slot {
    elevator: Box<dyn Scheduler>,
    /// Its io queue's entity in the B-WF2Q+ tree.
    queue: EntityId,
    weight: u32,
    /// Dispatched and not yet completed.
    in_flight: usize,
    /// When its last request at the device completed, if nothing of it is queued or in flight
    /// since: the start of the gap its think time measures.
    drained_at: Option<Nanos>,
    think: ThinkTime,
    /// Whether its last request was sync.
    last_sync: bool,
    /// The process and priority of its last request: whom an idle window waits for.
    last_process: Option<(ProcessId, IoPriority)>,
}

impl Slot {
    /// A group's slot with nothing queued, in flight or learnt yet.
    fn new(elevator: Box<dyn Scheduler>, queue: EntityId, weight: u32) -> Self {
        Slot {
            elevator,
            queue,
            weight,
            in_flight: 0,
            drained_at: None,
            think: ThinkTime::default(),
            last_sync: true,
            last_process: None,
        }
    }
}

/// The group being served.
#[derive(Debug, Clone, Copy)]
struct Active {
    group: usize,
    start: Nanos,
    slice: Nanos,
    /// The group idle window running, until when.
    idle_until: Option<Nanos>,
    /// Its time is up; it keeps the device until its requests at the device complete.
    draining: bool,
}

/// What serving the active group came to.
enum Step {
    /// The answer to give the driver.
    Answer(Dispatch),
    /// Its slice ended: choose again.
    Expired,
}

/// Builds the elevator of a group added while the run goes on.
pub type ElevatorFactory = Box<dyn Fn() -> Result<Box<dyn Scheduler>, TunableError> + Send>;

/// One elevator per group under hierarchical B-WF2Q+ (see the [module doc](super)).
pub struct ElvFq {
    settings: ElvFqSettings,
    /// How a group added later gets its elevator; without it, it is served as the root.
    factory: Option<ElevatorFactory>,
    slots: Vec<Slot>,
    wf2q: Wf2q,
    /// Each group's entity in the tree, by group index.
    group_entity: Vec<EntityId>,
    root: EntityId,
    active: Option<Active>,
    /// Dispatched requests not yet completed, by id, with their group's index.
    dispatched: BTreeMap<RequestId, usize>,
    trace: TraceBuffer,
}

impl std::fmt::Debug for ElvFq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElvFq")
            .field("elevator", &self.name())
            .field("settings", &self.settings)
            .field("active", &self.active)
            .field("in_flight", &self.dispatched.len())
            .finish_non_exhaustive()
    }
}

impl ElvFq {
    /// The layer over `elevators`, one per group of `groups` in id order (the root's first),
    /// each built to see only the root group. Groups past the last elevator are served as
    /// the root group. Panics if `elevators` is empty (a programming error).
    pub fn new(
        elevators: Vec<Box<dyn Scheduler>>,
        groups: &GroupTree,
        settings: ElvFqSettings,
    ) -> Self {
        assert!(!elevators.is_empty(), "elv-fq needs an elevator per group");
        let mut layer = Self {
            settings,
            factory: None,
            slots: Vec::with_capacity(elevators.len()),
            wf2q: Wf2q::default(),
            root: EntityId::default(),
            group_entity: Vec::with_capacity(groups.len()),
            active: None,
            dispatched: BTreeMap::new(),
            trace: TraceBuffer::default(),
        };
        let mut elevators = elevators.into_iter();
        for (id, group) in groups.iter() {
            layer.push_group(id, group, elevators.next());
        }
        layer.root = layer.group_entity[0];
        layer
    }

    /// The entity of group `id` (the next one) under its parent's and, with an `elevator`,
    /// the group's io queue entity and slot.
    fn push_group(&mut self, id: GroupId, group: &Group, elevator: Option<Box<dyn Scheduler>>) {
        let weight = group.weight.max(1);
        let parent = group.parent.map(|p| self.group_entity[p.index()]);
        let entity = self.wf2q.add(
            Owner::Group(id.index()),
            parent,
            GROUP_CLASS,
            u64::from(weight),
        );
        self.group_entity.push(entity);
        let Some(elevator) = elevator else {
            return;
        };
        let queue = self.wf2q.add(
            Owner::Queue(id.index()),
            Some(entity),
            GROUP_CLASS,
            u64::from(weight),
        );
        self.slots.push(Slot::new(elevator, queue, weight));
    }

    /// The layer, able to give a group added while the run goes on an elevator of its own,
    /// made by `factory`.
    pub fn with_factory(mut self, factory: ElevatorFactory) -> Self {
        self.factory = Some(factory);
        self
    }

    /// Entities for the groups of `groups` the layer lacks, and an elevator for each when
    /// every group so far has one and the layer can make them.
    fn grow(&mut self, groups: &GroupTree) -> Result<(), TunableError> {
        for (id, group) in groups.iter().skip(self.group_entity.len()) {
            let elevator = match &self.factory {
                Some(factory) if self.slots.len() == id.index() => {
                    let mut elevator = factory()?;
                    elevator.set_tracing(self.trace.is_enabled());
                    Some(elevator)
                }
                _ => None,
            };
            self.push_group(id, group, elevator);
        }
        Ok(())
    }

    /// Record what the elevator of `slot` recorded, its queues put back in the group.
    fn pull(&mut self, slot: usize) {
        if !self.trace.is_enabled() {
            return;
        }
        let mut events = Vec::new();
        self.slots[slot].elevator.drain_trace(&mut events);
        let group = GroupId(slot as u32);
        for event in events {
            if let Some(event) = regroup(event, group) {
                self.trace.push(event);
            }
        }
    }

    /// The slot a group's requests go to: its own, or the root's for a group without one.
    fn slot_of(&self, group: GroupId) -> usize {
        let index = group.index();
        if index < self.slots.len() {
            index
        } else {
            0
        }
    }

    /// The slice a group gets, by the sync-ness of its last request.
    fn slice_for(&self, slot: usize) -> Nanos {
        if self.slots[slot].last_sync {
            self.settings.slice_sync
        } else {
            self.settings.slice_async
        }
    }

    /// Whether a group other than `slot` has requests queued.
    fn others_waiting(&self, slot: usize) -> bool {
        self.slots
            .iter()
            .enumerate()
            .any(|(i, s)| i != slot && s.elevator.queued() > 0)
    }

    /// Whether an empty group is worth waiting for: idling is on, its last request was sync
    /// and its think time is within the window.
    fn worth_idling(&self, slot: usize) -> bool {
        let s = &self.slots[slot];
        self.settings.group_idle > 0
            && s.last_sync
            && s.think.worth_waiting(self.settings.group_idle)
    }

    /// The queue an idle window names: the group's last process, at its priority.
    fn queue_ref(&self, slot: usize) -> QueueRef {
        let (process, priority) = self.slots[slot].last_process.unzip();
        QueueRef {
            process,
            group: GroupId(slot as u32),
            priority: priority.unwrap_or_default(),
        }
    }

    /// Start a slice for the group B-WF2Q+ chooses; `false` if no group has work.
    fn begin(&mut self, now: Nanos) -> bool {
        let Some(group) = self.wf2q.select(self.root, now) else {
            return false;
        };
        let slot = if group < self.slots.len() { group } else { 0 };
        let slice = self.slice_for(slot);
        self.active = Some(Active {
            group: slot,
            start: now,
            slice,
            idle_until: None,
            draining: false,
        });
        let sync = self.slots[slot].last_sync;
        self.trace.emit(|| TraceEvent::GroupStart {
            group: GroupId(slot as u32),
            class: PriorityClass::BestEffort,
            workload: if sync {
                Workload::Sync
            } else {
                Workload::Async
            },
            slice,
            resumed: false,
        });
        true
    }

    /// End the active group's slice at `at`: charge it the disk time it held, in
    /// microseconds, and put it back on its tree (with work) or off it.
    fn end_slice(&mut self, at: Nanos) {
        let Some(active) = self.active.take() else {
            return;
        };
        if let Some(until) = active.idle_until {
            let queue = self.queue_ref(active.group);
            let reason = if at >= until {
                IdleEnd::Timer
            } else {
                IdleEnd::ServiceEnded
            };
            self.trace.emit(|| TraceEvent::IdleEnd {
                queue,
                kind: IdleKind::Group,
                reason,
            });
        }
        let used = at.saturating_sub(active.start);
        let micros = (used / 1_000).max(1);
        let slot = &self.slots[active.group];
        let (queue, has_work) = (slot.queue, slot.elevator.queued() > 0);
        let budget = self.slice_for(active.group) / 1_000;
        self.wf2q.charge(queue, micros);
        self.wf2q.expire(queue, has_work, budget.max(1), false);
        self.trace.emit(|| TraceEvent::GroupEnd {
            group: GroupId(active.group as u32),
            charge: used,
            unit: ChargeUnit::Time,
        });
    }

    /// What to answer while requests wait but none may go now: wait until `until`, or
    /// nothing if nothing waits (a completion or an arrival will call again).
    fn hold(&self, until: Nanos, now: Nanos) -> Dispatch {
        if self.queued() == 0 {
            Dispatch::Empty
        } else {
            Dispatch::WaitUntil(until.max(now + 1))
        }
    }

    /// Serve the active group at `now`.
    fn serve(&mut self, active: Active, now: Nanos) -> Step {
        let g = active.group;
        let slice_end = active.start.saturating_add(active.slice);
        if let Some(until) = active.idle_until {
            if self.slots[g].elevator.queued() == 0 {
                if now < until {
                    return Step::Answer(self.hold(until, now));
                }
                self.end_slice(until);
                return Step::Expired;
            }
        }
        if active.draining || now >= slice_end {
            if !active.draining && !self.others_waiting(g) {
                // Alone: a fresh slice, charged as the old one ends.
                self.end_slice(now);
                return Step::Expired;
            }
            return self.slice_over(now);
        }
        let answer = self.slots[g].elevator.dispatch(now);
        self.pull(g);
        match answer {
            Dispatch::Request(mut request) => {
                self.slots[g].in_flight += 1;
                self.slots[g].drained_at = None;
                self.dispatched.insert(request.id, g);
                request.group = GroupId(g as u32);
                Step::Answer(Dispatch::Request(request))
            }
            Dispatch::WaitUntil(at) => {
                let until = if self.others_waiting(g) {
                    at.min(slice_end)
                } else {
                    at
                };
                Step::Answer(Dispatch::WaitUntil(until.max(now + 1)))
            }
            Dispatch::Empty => self.ran_dry(active, slice_end, now),
        }
    }

    /// The active group's time is up and another group waits. With `fairness`, its requests
    /// at the device complete first. A group left with nothing queued is also waited for
    /// ("wait busy", the patches' V9): for its requests at the device, then for up to
    /// `group_idle` for its next one, if it is worth idling for; a group that ended its slice
    /// empty would leave the tree, and come back without what it was owed. Its next request
    /// ends the slice with the group still on its tree.
    fn slice_over(&mut self, now: Nanos) -> Step {
        let Some(active) = self.active else {
            return Step::Expired;
        };
        let g = active.group;
        let queued = self.slots[g].elevator.queued() > 0;
        let in_flight = self.slots[g].in_flight > 0;
        let busy = !queued && self.worth_idling(g);
        if in_flight && (self.settings.fairness || busy) {
            if let Some(a) = &mut self.active {
                a.draining = true;
            }
            return Step::Answer(self.hold(now + self.settings.slice_sync, now));
        }
        if busy {
            let drained = self.slots[g].drained_at.unwrap_or(now);
            let until = drained.saturating_add(self.settings.group_idle);
            if until > now {
                self.start_idling(g, until, now);
                return Step::Answer(self.hold(until, now));
            }
        }
        self.end_slice(now);
        Step::Expired
    }

    /// Keep the device idle for group `g`'s next request until `until`.
    fn start_idling(&mut self, g: usize, until: Nanos, now: Nanos) {
        let window = until - now;
        let queue = self.queue_ref(g);
        self.trace.emit(|| TraceEvent::IdleStart {
            queue,
            kind: IdleKind::Group,
            window,
        });
        if let Some(a) = &mut self.active {
            a.idle_until = Some(until);
        }
    }

    /// The active group's elevator has nothing to dispatch: wait for its requests at the
    /// device, then idle for its next request if it is worth it, else end its slice.
    fn ran_dry(&mut self, active: Active, slice_end: Nanos, now: Nanos) -> Step {
        let g = active.group;
        if self.slots[g].in_flight > 0 {
            // Its requests at the device come back first (an elevator may also hold queued
            // requests until they do, as cfq does beyond its dispatch quantum).
            return Step::Answer(self.hold(slice_end, now));
        }
        if self.slots[g].elevator.queued() > 0 {
            // Queued, nothing in flight, and held without a time: nothing to wait for.
            self.end_slice(now);
            return Step::Expired;
        }
        let drained = self.slots[g].drained_at.unwrap_or(now);
        let until = drained.saturating_add(self.settings.group_idle);
        if self.worth_idling(g) && until > now {
            self.start_idling(g, until, now);
            return Step::Answer(self.hold(until, now));
        }
        self.end_slice(now);
        Step::Expired
    }
}

impl Scheduler for ElvFq {
    fn name(&self) -> &'static str {
        self.slots[0].elevator.name()
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        let g = self.slot_of(request.group);
        let idle_cap = self.settings.group_idle.saturating_mul(2);
        let slot = &mut self.slots[g];
        if let Some(drained) = slot.drained_at.take() {
            if slot.elevator.queued() == 0 {
                slot.think.record(now.saturating_sub(drained), idle_cap);
            }
        }
        slot.last_sync = request.sync;
        slot.last_process = Some((request.process, request.priority));
        let mut request = request;
        request.group = GroupId::ROOT;
        let inserted = slot.elevator.insert(request, now);
        let queue = slot.queue;
        self.pull(g);
        let serving = self.active.filter(|active| active.group == g);
        match serving {
            Some(active) if active.idle_until.is_some() => {
                if let Some(a) = &mut self.active {
                    a.idle_until = None;
                }
                let queue = self.queue_ref(g);
                self.trace.emit(|| TraceEvent::IdleEnd {
                    queue,
                    kind: IdleKind::Group,
                    reason: IdleEnd::RequestArrived,
                });
            }
            Some(_) => {}
            None => {
                let budget = (self.slice_for(g) / 1_000).max(1);
                self.wf2q.activate(queue, budget, None);
            }
        }
        inserted
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        // Each pass either answers or ends a slice; a group chosen again with nothing to
        // dispatch ends its slice at once, so the passes are bounded by the groups.
        for _ in 0..=2 * self.slots.len() + 2 {
            let Some(active) = self.active else {
                if self.begin(now) {
                    continue;
                }
                return self.hold(now + self.settings.slice_sync, now);
            };
            match self.serve(active, now) {
                Step::Answer(answer) => return answer,
                Step::Expired => continue,
            }
        }
        self.hold(now + self.settings.slice_sync, now)
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        let Some(g) = self.dispatched.remove(&completion.request.id) else {
            return;
        };
        let slot = &mut self.slots[g];
        slot.in_flight = slot.in_flight.saturating_sub(1);
        if slot.in_flight == 0 && slot.elevator.queued() == 0 {
            slot.drained_at = Some(now);
        }
        let mut inner = completion.clone();
        inner.request.group = GroupId::ROOT;
        slot.elevator.complete(&inner, now);
        self.pull(g);
    }

    fn queued(&self) -> usize {
        self.slots.iter().map(|s| s.elevator.queued()).sum()
    }

    fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        for g in 0..self.slots.len() {
            self.slots[g].elevator.process_exited(process, now);
            self.pull(g);
        }
        // An idle window waiting for the process that exited waits in vain.
        if let Some(active) = self.active {
            let waited_for = self.slots[active.group].last_process.map(|(p, _)| p);
            if active.idle_until.is_some() && waited_for == Some(process) {
                let queue = self.queue_ref(active.group);
                self.trace.emit(|| TraceEvent::IdleEnd {
                    queue,
                    kind: IdleKind::Group,
                    reason: IdleEnd::ProcessExited,
                });
                if let Some(a) = &mut self.active {
                    a.idle_until = None;
                }
                self.slots[active.group].drained_at = None;
                self.end_slice(now);
            }
        }
    }

    fn set_outranked(&mut self, process: ProcessId, outranked: bool, now: Nanos) {
        for g in 0..self.slots.len() {
            self.slots[g]
                .elevator
                .set_outranked(process, outranked, now);
            self.pull(g);
        }
    }

    fn allow_merge(&self, queued: &Request, incoming: &Request) -> bool {
        queued.group == incoming.group
            && self.slots[self.slot_of(queued.group)]
                .elevator
                .allow_merge(queued, incoming)
    }

    /// The new weight waits in the group's entities' `new_weight` and takes effect at their
    /// next activation or requeue, as in BFQ's B-WF2Q+ the layer is built on. Each group's
    /// elevator is told as well, as the group's root.
    fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        _now: Nanos,
    ) -> Result<(), TunableError> {
        let weight = settings.weight.max(1);
        if let Some(&entity) = self.group_entity.get(group.index()) {
            self.wf2q.get_mut(entity).new_weight = u64::from(weight);
        }
        if let Some(slot) = self.slots.get_mut(group.index()) {
            slot.weight = weight;
            let queue = slot.queue;
            self.wf2q.get_mut(queue).new_weight = u64::from(weight);
        }
        Ok(())
    }

    /// The group gets an entity under its parent's and, when the layer was built from a
    /// named policy, an elevator of its own (else it is served as the root group, as a group
    /// past the last elevator is).
    fn add_group(
        &mut self,
        _group: GroupId,
        groups: &GroupTree,
        _now: Nanos,
    ) -> Result<(), TunableError> {
        self.grow(groups)
    }

    /// The group's weight in the tree (its `cgroup_weight`, else the tree's default); `None`
    /// for the root, which has no siblings.
    fn group_weight(&self, group: GroupId) -> Option<u32> {
        if group == GroupId::ROOT {
            return None;
        }
        self.slots.get(group.index()).map(|slot| slot.weight)
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
        for slot in &mut self.slots {
            slot.elevator.set_tracing(on);
        }
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}
