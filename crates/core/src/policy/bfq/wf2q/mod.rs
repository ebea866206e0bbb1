//! B-WF2Q+, the scheduling engine under BFQ: which entity (a queue, or a group holding queues
//! and groups) gets the device next, at every level of the group hierarchy.
//!
//! Each group has one *service tree* per class (RT, BE, IDLE). A tree has a *virtual time* V that
//! advances by `service / wsum` with every sector served under it, where `wsum` is the sum of the
//! weights of its active and idle entities. An entity that becomes active with budget B and weight
//! w gets a virtual start time S (V if it is new, `max(V, F)` if it comes back from the idle tree)
//! and a virtual finish time `F = S + B/w`. The entity served next is, among the *eligible* ones
//! (S ≤ V), the one that finishes first; if none is eligible V jumps to the smallest S. When its
//! service ends, an entity that still has work moves to `S + served/w` and gets a new finish from
//! its new budget; one without work keeps `F = S + served/w` on the *idle tree* until V passes it,
//! so a process that pauses briefly cannot come back earlier than its fair share allows.
//!
//! Eligibility is kept with two ordered sets per tree: entities not yet eligible wait ordered by
//! S, eligible ones are ordered by F. V only grows, so an entity moves from the first set to the
//! second at most once per activation: selection is O(log N) amortised (the kernel gets the same
//! bound from an rb-tree augmented with the subtree's minimum start). The sets are sorted
//! vectors ([`SortedSet`]): they hold one entry per busy entity of the group and class, few
//! enough that a binary search and a shift cost less than a B-tree's node walk, for the same
//! order and so the same choices (an update then shifts up to N entries instead).
//!
//! Classes are strict (RT before BE before IDLE), except that the IDLE tree is served once if it
//! has waited more than 200 ms (`BFQ_CL_IDLE_TIMEOUT`). Timestamps are fixed point:
//! `delta(service, w) = (service << 22) / w`.
//!
//! Source: Linux's `block/bfq-wf2q.c` (`bfq_calc_finish`, `__bfq_activate_entity`,
//! `bfq_first_active_entity`, `bfq_lookup_next_entity`), and Bennett and Zhang, "WF2Q:
//! Worst-case Fair Weighted Fair Queueing" (INFOCOM 1996) and "Hierarchical packet fair
//! queueing algorithms" (SIGCOMM 1996) for WF2Q+. Our own code.

use crate::sorted_set::SortedSet;

use crate::time::ms;
use crate::Nanos;

/// An entity's index in the [`Wf2q`] arena.
pub(crate) type EntityId = usize;

/// Fixed-point shift of virtual times.
const SERVICE_SHIFT: u32 = 22;

/// How long the IDLE class may wait while others are served (`BFQ_CL_IDLE_TIMEOUT`).
pub(crate) const IDLE_CLASS_TIMEOUT: Nanos = ms(200);

/// Number of classes, and so of service trees per group.
pub(crate) const CLASSES: usize = 3;

/// The virtual time `service` costs an entity of weight `weight`.
pub(crate) fn delta(service: u64, weight: u64) -> u64 {
    (service << SERVICE_SHIFT) / weight.max(1)
}

/// Where an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Not on any tree: no work, and its finish time has been passed or forgotten.
    Off,
    /// On its tree's active sets, waiting to be served.
    Active,
    /// On its tree's idle set: no work, but its finish time is still ahead of V.
    Idle,
    /// Being served (out of the sets, still counted in `wsum`).
    InService,
    /// No work, but expected back soon (parallel service, `parallel.rs`): on its tree's
    /// lingering set, still counted in `wsum`, so that V does not run ahead while it is away
    /// and the entities behind it in virtual time wait for it.
    Lingering,
}

/// What [`Wf2q::select_parallel`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Selection {
    /// Serve this queue (its owner index); its entities are in service.
    Queue(usize),
    /// Entities wait, but lingering ones come first in virtual time: wait for them.
    Hold,
    /// No entity has work.
    Empty,
}

/// What one level of the search for a queue found.
#[derive(Debug, Clone, Copy)]
enum Found {
    /// This queue entity.
    Queue(EntityId),
    /// This group holds: its candidates wait for lingering entities.
    Held(EntityId),
    /// Nothing with work.
    Empty,
}

/// What an entity stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A queue, by its id in the policy.
    Queue(usize),
    /// A group, by its index in the policy's group list.
    Group(usize),
}

/// One schedulable entity.
#[derive(Debug, Clone)]
pub(crate) struct Entity {
    /// The queue or group.
    pub(crate) owner: Owner,
    /// The group entity whose trees hold it; `None` only for the root group.
    pub(crate) parent: Option<EntityId>,
    /// Its class: 0 RT, 1 BE, 2 IDLE.
    pub(crate) class: usize,
    /// The weight it is scheduled with while on a tree.
    pub(crate) weight: u64,
    /// The weight it takes at its next activation (weight raising changes it lazily).
    pub(crate) new_weight: u64,
    /// The service it may receive in its next turn, in sectors.
    pub(crate) budget: u64,
    /// The service received since it was last put in service.
    pub(crate) service: u64,
    /// Virtual start time.
    pub(crate) start: u64,
    /// Virtual finish time.
    pub(crate) finish: u64,
    /// Where it is.
    pub(crate) place: Place,
    /// A group's own trees.
    pub(crate) sched: Option<Box<SchedData>>,
    /// Turns it may still be served ahead of V (parallel service's lead, [`Wf2q::lead`]).
    lead_left: u32,
}

/// A group's scheduling state: its trees and the child in service.
#[derive(Debug, Clone, Default)]
pub(crate) struct SchedData {
    /// One tree per class.
    pub(crate) trees: [ServiceTree; CLASSES],
    /// The child being served.
    pub(crate) in_service: Option<EntityId>,
    /// When the IDLE class was last served here.
    pub(crate) idle_class_served: Nanos,
}

/// The entities of one class under one group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServiceTree {
    /// Eligible active entities by finish time.
    eligible: SortedSet<(u64, EntityId)>,
    /// Not-yet-eligible active entities by start time.
    waiting: SortedSet<(u64, EntityId)>,
    /// Idle entities by finish time.
    idle: SortedSet<(u64, EntityId)>,
    /// Lingering entities by finish time.
    lingering: SortedSet<(u64, EntityId)>,
    /// Virtual time.
    pub(crate) vtime: u64,
    /// Sum of the weights of its active, in-service, idle and lingering entities.
    pub(crate) wsum: u64,
}

impl ServiceTree {
    /// Whether an entity waits here to be served.
    pub(crate) fn has_active(&self) -> bool {
        !self.eligible.is_empty() || !self.waiting.is_empty()
    }

    /// An entity joins the active sets: eligible if V has reached its start, or if it may be
    /// served `ahead` of V.
    fn insert_active(&mut self, id: EntityId, start: u64, finish: u64, ahead: bool) {
        if start <= self.vtime || ahead {
            self.eligible.insert((finish, id));
        } else {
            self.waiting.insert((start, id));
        }
    }

    fn remove_active(&mut self, id: EntityId, start: u64, finish: u64) {
        if !self.eligible.remove(&(finish, id)) {
            self.waiting.remove(&(start, id));
        }
    }

    /// Move entities whose start V has reached to the eligible set.
    fn promote(&mut self, finish_of: impl Fn(EntityId) -> u64) {
        while let Some(&(start, id)) = self.waiting.first() {
            if start > self.vtime {
                break;
            }
            self.waiting.pop_first();
            self.eligible.insert((finish_of(id), id));
        }
    }

    /// The eligible entity that finishes first, jumping V to the first start if none is.
    fn first_eligible(&mut self, finish_of: impl Fn(EntityId) -> u64 + Copy) -> Option<EntityId> {
        if self.eligible.is_empty() {
            let &(start, _) = self.waiting.first()?;
            self.jump_to(start, finish_of);
        }
        self.eligible.first().map(|&(_, id)| id)
    }

    /// Nothing is eligible: V jumps to `start` (never back), and whoever it reaches becomes
    /// eligible.
    fn jump_to(&mut self, start: u64, finish_of: impl Fn(EntityId) -> u64) {
        self.vtime = self.vtime.max(start);
        self.promote(finish_of);
    }

    /// V advances by `by`, but not past the finish of the first lingering entity: an entity
    /// expected back keeps the service it is owed, and the others wait for it in virtual time
    /// rather than running ahead (`parallel.rs`). V never goes back.
    fn advance(&mut self, by: u64) {
        let advanced = self.vtime + by;
        self.vtime = match self.lingering.first() {
            Some(&(finish, _)) => advanced.min(finish.max(self.vtime)),
            None => advanced,
        };
    }

    /// Whether an entity lingers here.
    fn has_lingering(&self) -> bool {
        !self.lingering.is_empty()
    }

    /// The entity that would be served next, without moving V.
    fn peek(&self) -> Option<EntityId> {
        self.eligible
            .first()
            .or_else(|| self.waiting.first())
            .map(|&(_, id)| id)
    }
}

/// The hierarchy of entities.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wf2q {
    entities: Vec<Entity>,
    free: Vec<EntityId>,
    /// How many turns in a row an entity may be served ahead of V once it was served on time
    /// (parallel service; 0, the kernel's rule, otherwise).
    lead: u32,
}

impl Wf2q {
    /// Let a queue served on time, if [`Wf2q::select_parallel`]'s caller allows it, take up to
    /// `turns` more turns ahead of V before it waits, and its ancestors served on time with it
    /// (parallel service's lead, `parallel.rs`).
    pub(crate) fn set_lead(&mut self, turns: u32) {
        self.lead = turns;
    }

    /// Add an entity (not yet on any tree); groups get trees of their own.
    pub(crate) fn add(
        &mut self,
        owner: Owner,
        parent: Option<EntityId>,
        class: usize,
        weight: u64,
    ) -> EntityId {
        let entity = Entity {
            owner,
            parent,
            class,
            weight,
            new_weight: weight,
            budget: 0,
            service: 0,
            start: 0,
            finish: 0,
            place: Place::Off,
            sched: matches!(owner, Owner::Group(_)).then(Box::default),
            lead_left: 0,
        };
        match self.free.pop() {
            Some(id) => {
                self.entities[id] = entity;
                id
            }
            None => {
                self.entities.push(entity);
                self.entities.len() - 1
            }
        }
    }

    /// Forget an entity that is off every tree; its id may be reused.
    pub(crate) fn remove(&mut self, id: EntityId) {
        if self.entities[id].place == Place::Lingering {
            self.stop_lingering(id);
        }
        if self.entities[id].place == Place::Idle {
            self.forget_idle(id);
        }
        debug_assert_eq!(self.entities[id].place, Place::Off);
        self.free.push(id);
    }

    /// An entity.
    pub(crate) fn get(&self, id: EntityId) -> &Entity {
        &self.entities[id]
    }

    /// An entity, mutably (weights and budgets; the place is the engine's business).
    pub(crate) fn get_mut(&mut self, id: EntityId) -> &mut Entity {
        &mut self.entities[id]
    }

    fn tree(&mut self, id: EntityId) -> Option<&mut ServiceTree> {
        let parent = self.entities[id].parent?;
        let class = self.entities[id].class;
        let sched = self.entities[parent].sched.as_mut()?;
        Some(&mut sched.trees[class])
    }

    fn sched(&self, id: EntityId) -> &SchedData {
        self.entities[id]
            .sched
            .as_deref()
            .expect("only groups are parents")
    }

    fn sched_mut(&mut self, id: EntityId) -> &mut SchedData {
        self.entities[id]
            .sched
            .as_deref_mut()
            .expect("only groups are parents")
    }

    /// The virtual time of the tree an entity is on.
    pub(crate) fn vtime_of(&self, id: EntityId) -> u64 {
        let entity = &self.entities[id];
        entity
            .parent
            .map_or(0, |parent| self.sched(parent).trees[entity.class].vtime)
    }

    /// An entity gets work: it joins its tree with this budget, and its ancestors join theirs.
    /// An entity already active or in service keeps its place (its budget counts next turn).
    ///
    /// `back_shift`: the entity recovers from a hole (it ran dry moments ago) and keeps its old
    /// timestamps: if V passed its old finish, it starts there, and both timestamps move up
    /// `1/back_shift` of the way needed for its finish to reach V.
    pub(crate) fn activate(&mut self, id: EntityId, budget: u64, back_shift: Option<u64>) {
        self.entities[id].budget = budget;
        let mut current = id;
        let mut shift = back_shift;
        loop {
            if matches!(
                self.entities[current].place,
                Place::Active | Place::InService
            ) {
                return;
            }
            self.enqueue(current, false, shift.take());
            match self.entities[current].parent {
                Some(parent) if self.entities[parent].parent.is_some() => {
                    self.entities[parent].budget = self.next_budget(parent);
                    current = parent;
                }
                _ => return,
            }
        }
    }

    /// Put an off or idle entity on its tree's active sets with fresh timestamps, or (`requeue`)
    /// an entity leaving service, whose start already moved past its service.
    fn enqueue(&mut self, id: EntityId, requeue: bool, back_shift: Option<u64>) {
        let place = self.entities[id].place;
        let vtime = self.vtime_of(id);
        let old_finish = self.entities[id].finish;
        let kept_finish = matches!(place, Place::Idle | Place::Lingering);
        if place == Place::Idle {
            self.forget_idle(id);
            self.count_weight(id, true);
        } else if place == Place::Lingering {
            // Still counted in wsum: only its set changes.
            if let Some(tree) = self.tree(id) {
                tree.lingering.remove(&(old_finish, id));
            }
        } else if !requeue {
            self.count_weight(id, true);
        }
        let back_shift = back_shift.filter(|_| !requeue && old_finish < vtime);
        if !requeue {
            self.entities[id].start = match back_shift {
                Some(_) => old_finish,
                None => vtime.max(if kept_finish { old_finish } else { 0 }),
            };
        }
        self.apply_new_weight(id);
        let entity = &mut self.entities[id];
        entity.finish = entity.start + delta(entity.budget, entity.weight);
        if let Some(divisor) = back_shift.filter(|_| entity.finish < vtime) {
            // Recovering a hole keeps the old timestamps, pushed up just enough that the finish
            // reaches V (a raised queue only 1/coefficient of the way), so that queues often
            // briefly idle cannot drift far behind V and monopolise the device.
            let push = (vtime - entity.finish) / divisor.max(1);
            entity.start += push;
            entity.finish += push;
        }
        entity.place = Place::Active;
        let ahead = entity.start > vtime && entity.lead_left > 0;
        if ahead {
            entity.lead_left -= 1;
        }
        let (start, finish) = (entity.start, entity.finish);
        if let Some(tree) = self.tree(id) {
            tree.insert_active(id, start, finish, ahead);
        }
    }

    fn count_weight(&mut self, id: EntityId, add: bool) {
        let weight = self.entities[id].weight;
        if let Some(tree) = self.tree(id) {
            if add {
                tree.wsum += weight;
            } else {
                tree.wsum = tree.wsum.saturating_sub(weight);
            }
        }
    }

    fn apply_new_weight(&mut self, id: EntityId) {
        let (old, new) = (self.entities[id].weight, self.entities[id].new_weight);
        if old != new {
            if let Some(tree) = self.tree(id) {
                tree.wsum = tree.wsum.saturating_sub(old) + new;
            }
            self.entities[id].weight = new;
        }
    }

    fn forget_idle(&mut self, id: EntityId) {
        let finish = self.entities[id].finish;
        if let Some(tree) = self.tree(id) {
            tree.idle.remove(&(finish, id));
        }
        self.count_weight(id, false);
        self.entities[id].place = Place::Off;
    }

    /// The budget a group asks for: that of the child it would serve next.
    fn next_budget(&self, group: EntityId) -> u64 {
        let sched = self.sched(group);
        sched
            .trees
            .iter()
            .find_map(ServiceTree::peek)
            .map_or(0, |child| self.entities[child].budget)
    }

    /// Choose the queue to serve: at each level from the root down, the first class with work
    /// (the IDLE class first if it waited too long), and in it the eligible entity that
    /// finishes first. Returns the queue's owner index. The chosen entities go in service.
    pub(crate) fn select(&mut self, root: EntityId, now: Nanos) -> Option<usize> {
        let mut group = root;
        loop {
            let class = self.class_to_serve(group, now)?;
            let mut taken = self.entities[group]
                .sched
                .take()
                .expect("only groups are parents");
            let entities = &self.entities;
            let chosen = taken.trees[class].first_eligible(|id| entities[id].finish);
            self.entities[group].sched = Some(taken);
            let chosen = chosen?;
            match self.entities[chosen].owner {
                Owner::Queue(queue) => {
                    self.take_into_service(chosen, now, 0);
                    return Some(queue);
                }
                Owner::Group(_) => group = chosen,
            }
        }
    }

    /// Parallel service (`parallel.rs`): choose the queue to serve as [`Wf2q::select`] does,
    /// except that a tree whose first lingering entity finishes before every waiting entity
    /// starts does not jump V to serve them: it *holds*, and so does a group whose every
    /// candidate holds, so that the next best group is tried instead. The chosen entities go
    /// in service.
    ///
    /// `may_lead` says whether the chosen queue, if served on time, gets the lead
    /// ([`Wf2q::set_lead`]); its ancestors served on time get it with it.
    pub(crate) fn select_parallel(
        &mut self,
        root: EntityId,
        now: Nanos,
        may_lead: impl Fn(usize) -> bool,
    ) -> Selection {
        let mut held: Vec<EntityId> = Vec::new();
        loop {
            match self.find_unheld(root, now, &held) {
                Found::Queue(leaf) => {
                    let Owner::Queue(queue) = self.entities[leaf].owner else {
                        return Selection::Empty;
                    };
                    let lead = if may_lead(queue) { self.lead } else { 0 };
                    self.take_into_service(leaf, now, lead);
                    return Selection::Queue(queue);
                }
                Found::Held(group) if group == root => return Selection::Hold,
                Found::Held(group) => held.push(group),
                Found::Empty => {
                    return if held.is_empty() {
                        Selection::Empty
                    } else {
                        Selection::Hold
                    }
                }
            }
        }
    }

    /// The queue entity to serve under `group`, skipping the `held` groups; or the group that
    /// holds, if one does.
    fn find_unheld(&mut self, group: EntityId, now: Nanos, held: &[EntityId]) -> Found {
        let Some(class) = self.class_to_serve(group, now) else {
            return Found::Empty;
        };
        loop {
            let tree = &self.sched(group).trees[class];
            let candidate = tree
                .eligible
                .iter()
                .map(|&(_, id)| id)
                .find(|id| !held.contains(id));
            if let Some(child) = candidate {
                return match self.entities[child].owner {
                    Owner::Queue(_) => Found::Queue(child),
                    Owner::Group(_) => match self.find_unheld(child, now, held) {
                        Found::Empty => Found::Held(child),
                        found => found,
                    },
                };
            }
            let first_waiting = tree
                .waiting
                .iter()
                .find(|(_, id)| !held.contains(id))
                .map(|&(start, _)| start);
            let first_lingering = tree.lingering.first().map(|&(finish, _)| finish);
            let Some(start) = first_waiting else {
                let any_held = tree.eligible.iter().any(|(_, id)| held.contains(id))
                    || tree.waiting.iter().any(|(_, id)| held.contains(id));
                return if any_held {
                    Found::Held(group)
                } else {
                    Found::Empty
                };
            };
            if first_lingering.is_some_and(|finish| finish < start) {
                return Found::Held(group);
            }
            let mut taken = self.entities[group]
                .sched
                .take()
                .expect("only groups are parents");
            let entities = &self.entities;
            taken.trees[class].jump_to(start, |id| entities[id].finish);
            self.entities[group].sched = Some(taken);
        }
    }

    /// Put a queue entity and its ancestors in service: each leaves its tree's active sets and
    /// becomes its parent's child in service. Each one served on time gets `lead` turns ahead
    /// of V.
    fn take_into_service(&mut self, leaf: EntityId, now: Nanos, lead: u32) {
        let mut current = leaf;
        while let Some(parent) = self.entities[current].parent {
            let (start, finish, class) = {
                let entity = &self.entities[current];
                (entity.start, entity.finish, entity.class)
            };
            let on_time = match self.tree(current) {
                Some(tree) => {
                    tree.remove_active(current, start, finish);
                    start <= tree.vtime
                }
                None => false,
            };
            if on_time {
                self.entities[current].lead_left = lead;
            }
            let sched = self.sched_mut(parent);
            sched.in_service = Some(current);
            if class == CLASSES - 1 {
                sched.idle_class_served = now;
            }
            let entity = &mut self.entities[current];
            entity.place = Place::InService;
            entity.service = 0;
            current = parent;
        }
    }

    fn class_to_serve(&self, group: EntityId, now: Nanos) -> Option<usize> {
        let sched = self.sched(group);
        let idle = CLASSES - 1;
        if sched.trees[idle].has_active()
            && now >= sched.idle_class_served.saturating_add(IDLE_CLASS_TIMEOUT)
        {
            return Some(idle);
        }
        (0..CLASSES).find(|&class| sched.trees[class].has_active())
    }

    /// An entity received `sectors` of service: it and every ancestor count it, and each
    /// tree on the way advances its virtual time.
    pub(crate) fn charge(&mut self, id: EntityId, sectors: u64) {
        let mut current = id;
        loop {
            self.entities[current].service += sectors;
            let Some(parent) = self.entities[current].parent else {
                return;
            };
            let class = self.entities[current].class;
            // Move the parent's trees out (a pointer move) to read the entities beside them.
            let mut sched = self.entities[parent]
                .sched
                .take()
                .expect("only groups are parents");
            let tree = &mut sched.trees[class];
            tree.advance(delta(sectors, tree.wsum));
            let entities = &self.entities;
            tree.promote(|id| entities[id].finish);
            while let Some(&(finish, gone)) = tree.idle.first() {
                if finish > tree.vtime {
                    break;
                }
                tree.idle.pop_first();
                tree.wsum = tree.wsum.saturating_sub(self.entities[gone].weight);
                self.entities[gone].place = Place::Off;
            }
            self.entities[parent].sched = Some(sched);
            if self.entities[parent].parent.is_none() {
                return;
            }
            current = parent;
        }
    }

    /// The queue in service ends its turn. Each entity from it up to the root moves its start
    /// past the service it received; one with work left goes back on its tree with its next
    /// budget (`budget` for the queue, the next child's for a group), one without goes idle —
    /// or lingers: the queue if `linger` says it is expected back, a group while a child of it
    /// lingers.
    pub(crate) fn expire(&mut self, id: EntityId, has_work: bool, budget: u64, linger: bool) {
        self.entities[id].budget = budget;
        let mut current = id;
        let mut work = has_work;
        let mut lingers = linger;
        loop {
            let Some(parent) = self.entities[current].parent else {
                return;
            };
            if self.sched(parent).in_service == Some(current) {
                self.sched_mut(parent).in_service = None;
            }
            let entity = &mut self.entities[current];
            entity.start += delta(entity.service, entity.weight);
            entity.service = 0;
            if work {
                self.enqueue(current, true, None);
            } else {
                self.entities[current].finish = self.entities[current].start;
                if lingers {
                    self.linger(current);
                } else {
                    self.go_idle(current);
                }
            }
            if self.entities[parent].parent.is_none() {
                return;
            }
            work = self.sched(parent).trees.iter().any(ServiceTree::has_active);
            lingers = self
                .sched(parent)
                .trees
                .iter()
                .any(ServiceTree::has_lingering);
            if work {
                self.entities[parent].budget = self.next_budget(parent);
            }
            current = parent;
        }
    }

    /// An entity without work that is expected back goes on its tree's lingering set; it
    /// keeps its weight in the tree's `wsum`.
    fn linger(&mut self, id: EntityId) {
        let finish = self.entities[id].finish;
        self.entities[id].place = Place::Lingering;
        if let Some(tree) = self.tree(id) {
            tree.lingering.insert((finish, id));
        }
    }

    /// Stop every lingering entity (see [`Wf2q::stop_lingering`]).
    pub(crate) fn stop_all_lingering(&mut self) {
        for id in 0..self.entities.len() {
            if self.entities[id].place == Place::Lingering {
                self.stop_lingering(id);
            }
        }
    }

    /// A lingering entity is no longer expected back: it goes idle (or off, if V has passed
    /// its finish), and so does each ancestor left with neither work nor a lingering child.
    pub(crate) fn stop_lingering(&mut self, id: EntityId) {
        let mut current = id;
        while self.entities[current].place == Place::Lingering {
            let finish = self.entities[current].finish;
            if let Some(tree) = self.tree(current) {
                tree.lingering.remove(&(finish, current));
            }
            // `go_idle` keeps the weight counted (idle) or removes it (off), as for an entity
            // leaving service.
            self.go_idle(current);
            let Some(parent) = self.entities[current].parent else {
                return;
            };
            let sched = self.sched(parent);
            let still_needed = sched.in_service.is_some()
                || sched
                    .trees
                    .iter()
                    .any(|tree| tree.has_active() || tree.has_lingering());
            if still_needed {
                return;
            }
            current = parent;
        }
    }

    /// An entity that is active but not in service has no more work (its queue was emptied by
    /// injection): it leaves its tree with a finish time from the service it actually got,
    /// and so do ancestors left without work.
    pub(crate) fn deactivate(&mut self, id: EntityId) {
        let mut current = id;
        loop {
            if self.entities[current].place != Place::Active {
                return;
            }
            let (start, finish) = (self.entities[current].start, self.entities[current].finish);
            if let Some(tree) = self.tree(current) {
                tree.remove_active(current, start, finish);
            }
            // Its finish is what it received, not the budget it was given.
            let entity = &mut self.entities[current];
            entity.finish = entity.start + delta(entity.service, entity.weight);
            entity.service = 0;
            entity.budget = 0;
            self.go_idle(current);
            match self.entities[current].parent {
                Some(parent)
                    if self.entities[parent].parent.is_some()
                        && !self.sched(parent).trees.iter().any(ServiceTree::has_active)
                        && self.sched(parent).in_service.is_none() =>
                {
                    current = parent
                }
                _ => return,
            }
        }
    }

    /// Put an entity that is not in service under the group entity `parent`, as the kernel's
    /// `bfq_bfqq_move` does (block/bfq-cgroup.c, 6.x): an active one leaves its tree (and
    /// ancestors left without work leave theirs), an idle or lingering one is forgotten, and
    /// it is off every tree under its new parent; activated there, it starts at that tree's
    /// virtual time.
    pub(crate) fn move_to(&mut self, id: EntityId, parent: EntityId) {
        debug_assert_ne!(self.entities[id].place, Place::InService);
        if self.entities[id].place == Place::Active {
            self.deactivate(id);
        }
        if self.entities[id].place == Place::Lingering {
            self.stop_lingering(id);
        }
        if self.entities[id].place == Place::Idle {
            self.forget_idle(id);
        }
        self.entities[id].parent = Some(parent);
    }

    /// Put an entity without work on the idle tree if its finish is ahead of V, else forget it.
    fn go_idle(&mut self, id: EntityId) {
        let finish = self.entities[id].finish;
        let vtime = self.vtime_of(id);
        if finish > vtime {
            self.entities[id].place = Place::Idle;
            if let Some(tree) = self.tree(id) {
                tree.idle.insert((finish, id));
            }
        } else {
            self.count_weight(id, false);
            self.entities[id].place = Place::Off;
        }
    }
}

#[cfg(test)]
mod tests;
