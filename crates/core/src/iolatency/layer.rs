//! The io.latency layer: a [`Scheduler`] around another that times each protected group's
//! completions over its windows, moves the parents' scale cookies, and holds the requests
//! of groups over their depth until completions make room (see the [module doc](super)).
//! Traced, it records each scale event and each change of a group's depth.

use std::collections::{BTreeMap, VecDeque};

use super::scale::{
    cookie_step, depth_step, window_of, DEFAULT_COOKIE, FORGET_SCALE_GROUP, MIN_ADJUST,
    MIN_GOOD_SAMPLES, TIMER,
};
use super::stat::LatencyStat;
use crate::trace::TraceBuffer;
use crate::tunable::TunableError;
use crate::{
    Completion, Dispatch, Group, GroupId, GroupTree, Inserted, Nanos, Request, RequestId,
    Scheduler, SchedulerContext, TraceEvent,
};

/// What a parent keeps for its children (`child_latency_info`).
#[derive(Debug, Clone)]
struct Children {
    cookie: u32,
    /// The last scale event; `None` before the first.
    last_scale: Option<Nanos>,
    /// The target of the scale group; 0 when none was set since the scaling was cleared.
    scale_target: Nanos,
    /// The child that last lowered the cookie, while it is remembered.
    scale_group: Option<usize>,
    /// Requests its protected children counted in their added-up windows.
    samples: u64,
}

impl Default for Children {
    fn default() -> Self {
        Self {
            cookie: DEFAULT_COOKIE,
            last_scale: None,
            scale_target: 0,
            scale_group: None,
            samples: 0,
        }
    }
}

/// One group's state.
#[derive(Debug, Clone, Default)]
struct Node {
    parent: Option<usize>,
    /// Its latency target; `None`: not protected.
    target: Option<Nanos>,
    /// When its current window began; `None` until its first request.
    window_start: Option<Nanos>,
    /// This window's latencies.
    window: LatencyStat,
    /// Windows added up since the last scale event.
    pending: LatencyStat,
    /// Requests in `pending`, as its parent counts them.
    samples: u64,
    /// The parent's cookie as this group last saw it.
    cookie: u32,
    /// How many of its requests (and its descendants') may be in flight; `None`: any.
    depth: Option<u32>,
    /// Its requests and its descendants' past this layer and not completed.
    in_flight: u32,
    /// Its own requests waiting for room, in arrival order.
    held: VecDeque<Request>,
    children: Children,
}

impl Node {
    /// A group's node with no target, nothing measured and nothing in flight.
    fn of(group: &Group) -> Self {
        Node {
            parent: group.parent.map(GroupId::index),
            cookie: DEFAULT_COOKIE,
            ..Node::default()
        }
    }
}

/// A request past the layer: its group and when it was submitted.
#[derive(Debug, Clone, Copy)]
struct Flight {
    group: usize,
    submitted: Nanos,
}

/// A policy with io.latency around it (see the [module doc](super)).
pub struct IolatencyLayer {
    inner: Box<dyn Scheduler>,
    rotational: bool,
    nr_requests: u32,
    nodes: Vec<Node>,
    held: usize,
    in_flight: BTreeMap<RequestId, Flight>,
    /// When the timer fires next, if armed.
    timer: Option<Nanos>,
    trace: TraceBuffer,
}

impl std::fmt::Debug for IolatencyLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IolatencyLayer")
            .field("inner", &self.inner.name())
            .field("rotational", &self.rotational)
            .field("nr_requests", &self.nr_requests)
            .field("held", &self.held)
            .field("in_flight", &self.in_flight.len())
            .finish_non_exhaustive()
    }
}

impl IolatencyLayer {
    /// io.latency above `inner`, with the targets of `context`'s groups, judged as the
    /// device's kind calls for, scaling depths in steps of its `nr_requests`.
    pub fn new(inner: Box<dyn Scheduler>, context: &SchedulerContext) -> Self {
        let nodes = context
            .groups
            .iter()
            .map(|(_, group)| Node {
                target: group.limits.latency.filter(|&t| t > 0),
                ..Node::of(group)
            })
            .collect();
        Self {
            inner,
            rotational: context.rotational,
            nr_requests: super::nr_requests(context.queue_depth),
            nodes,
            held: 0,
            in_flight: BTreeMap::new(),
            timer: None,
            trace: TraceBuffer::default(),
        }
    }

    /// How many requests of `group` and below may be in flight; `None`: any.
    pub fn depth(&self, group: GroupId) -> Option<u32> {
        self.nodes.get(group.index()).and_then(|node| node.depth)
    }

    /// The scale cookie `group` keeps for its children.
    pub fn cookie(&self, group: GroupId) -> u32 {
        self.nodes
            .get(group.index())
            .map_or(DEFAULT_COOKIE, |node| node.children.cookie)
    }

    /// Requests held, not yet let into the policy.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Requests let into the policy and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// `group` and its ancestors below the root: the levels a request of it passes.
    fn path(&self, group: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(group), |&g| self.nodes[g].parent)
            .take_while(|&g| self.nodes[g].parent.is_some())
    }

    /// Fire the timer if it came due by `now`, at the time it was due.
    fn run_timer(&mut self, now: Nanos) {
        let Some(at) = self.timer.filter(|&at| at <= now) else {
            return;
        };
        self.timer = None;
        for parent in 0..self.nodes.len() {
            let children = &self.nodes[parent].children;
            if children.cookie >= DEFAULT_COOKIE || children.last_scale.is_some_and(|t| t >= at) {
                continue;
            }
            match children.scale_group {
                None => self.scale(parent, None, true, at),
                Some(_) => {
                    let last = children.last_scale.unwrap_or(0);
                    if at.saturating_sub(last) >= FORGET_SCALE_GROUP {
                        self.nodes[parent].children.scale_group = None;
                    }
                }
            }
        }
    }

    /// Move `parent`'s cookie a step, for `by` (the group whose window decided it; `None`
    /// for the timer).
    fn scale(&mut self, parent: usize, by: Option<usize>, up: bool, now: Nanos) {
        let children = &mut self.nodes[parent].children;
        children.cookie = cookie_step(children.cookie, self.nr_requests, up);
        if by.is_some() {
            children.last_scale = Some(now);
        }
        let cookie = children.cookie;
        self.trace.emit(|| TraceEvent::LatencyScale {
            parent: group_id(parent),
            by: by.map(group_id),
            up,
            cookie,
        });
    }

    /// Whether `group` saw its parent's cookie move since it last looked, and its depth
    /// follows: down unless its own target is as tight as the scale group's or it did
    /// little of the sampled I/O, up, or unlimited back at the default.
    fn follow_cookie(&mut self, group: usize) {
        let Some(parent) = self.nodes[group].parent else {
            return;
        };
        let children = &self.nodes[parent].children;
        let (current, seen) = (children.cookie, self.nodes[group].cookie);
        if current == seen {
            return;
        }
        let up = current > seen;
        let (scale_target, sampled) = (children.scale_target, children.samples);
        let node = &mut self.nodes[group];
        node.cookie = current;
        if let (false, Some(target)) = (up, node.target) {
            if scale_target == 0 || target <= scale_target {
                return;
            }
            if node.samples <= (sampled * 5 / 100).max(1) {
                return;
            }
        }
        if node.depth == Some(1) && !up {
            return;
        }
        let from = node.depth;
        node.depth = if current == DEFAULT_COOKIE {
            None
        } else {
            depth_step(node.depth, self.nr_requests, up)
        };
        let depth = node.depth;
        if depth != from {
            self.trace.emit(|| TraceEvent::LatencyDepth {
                group: group_id(group),
                from,
                depth,
            });
        }
    }

    /// Whether a request of `group` may go in now: every level has room.
    fn has_room(&self, group: usize) -> bool {
        self.path(group).all(|g| {
            let node = &self.nodes[g];
            node.depth.is_none_or(|depth| node.in_flight < depth)
        })
    }

    /// Let `request` into the policy, counting it in flight at every level.
    fn let_in(&mut self, request: Request, group: usize, now: Nanos) -> Inserted {
        let levels: Vec<usize> = self.path(group).collect();
        for g in levels {
            self.nodes[g].in_flight += 1;
        }
        let flight = Flight {
            group,
            submitted: request.submit_time,
        };
        self.in_flight.insert(request.id, flight);
        let inserted = self.inner.insert(request, now);
        self.trace.pull(self.inner.as_mut());
        inserted
    }

    /// Let held requests in, group by group in the tree's order, while they have room.
    fn release(&mut self, now: Nanos) {
        if self.held == 0 {
            return;
        }
        for group in 0..self.nodes.len() {
            while !self.nodes[group].held.is_empty() && self.has_room(group) {
                let Some(request) = self.nodes[group].held.pop_front() else {
                    break;
                };
                self.held -= 1;
                self.trace.emit(|| TraceEvent::Release {
                    request: request.id,
                    process: request.process,
                    group: request.group,
                    direction: request.direction,
                    waited: now.saturating_sub(request.submit_time),
                });
                self.let_in(request, group, now);
            }
        }
    }

    /// A request of `flight` completed at `now`: out of flight at every level, timed at
    /// every protected level, and a level's window judged when it has run its length.
    fn finish(&mut self, flight: Flight, now: Nanos) {
        let levels: Vec<usize> = self.path(flight.group).collect();
        for g in levels {
            let node = &mut self.nodes[g];
            node.in_flight = node.in_flight.saturating_sub(1);
            let Some(target) = node.target else {
                continue;
            };
            if now > flight.submitted {
                node.window.record(now - flight.submitted, target);
            }
            let start = *node.window_start.get_or_insert(now);
            if now > start && now - start >= window_of(target) {
                node.window_start = Some(now);
                self.judge(g, target, now);
            }
        }
    }

    /// The end of a window of protected group `group` (`iolatency_check_latencies`).
    fn judge(&mut self, group: usize, target: Nanos, now: Nanos) {
        let Some(parent) = self.nodes[group].parent else {
            return;
        };
        let rotational = self.rotational;
        let node = &mut self.nodes[group];
        let window = std::mem::take(&mut node.window);
        if window.met(target, rotational) && self.nodes[parent].children.cookie == DEFAULT_COOKIE {
            return;
        }
        let node = &mut self.nodes[group];
        node.pending.add(&window);
        let (old, samples) = (node.samples, node.pending.total);
        node.samples = samples;
        let children = &mut self.nodes[parent].children;
        children.samples = children.samples.saturating_sub(old) + samples;
        if children
            .last_scale
            .is_some_and(|last| last >= now || now - last < MIN_ADJUST)
        {
            return;
        }
        let pending = self.nodes[group].pending;
        if pending.met(target, rotational) && window.met(target, rotational) {
            if pending.total < MIN_GOOD_SAMPLES {
                return;
            }
            if self.nodes[parent].children.scale_group == Some(group) {
                self.scale(parent, Some(group), true, now);
            }
        } else {
            let children = &mut self.nodes[parent].children;
            if children.scale_target == 0 || children.scale_target >= target {
                if children.scale_group.is_none() || children.scale_target > target {
                    children.scale_target = target;
                    children.scale_group = Some(group);
                }
                self.scale(parent, Some(group), false, now);
            }
        }
        self.nodes[group].pending = LatencyStat::default();
    }

    /// A new target for `group` (0 or none: unprotected), as writing `io.latency` sets it:
    /// its parent's scaling starts over (`iolatency_clear_scaling`).
    fn set_target(&mut self, group: usize, target: Option<Nanos>) {
        let target = target.filter(|&t| t > 0);
        if self.nodes[group].target == target {
            return;
        }
        self.nodes[group].target = target;
        if let Some(parent) = self.nodes[group].parent {
            let samples = self.nodes[parent].children.samples;
            self.nodes[parent].children = Children {
                samples,
                ..Children::default()
            };
        }
    }
}

impl IolatencyLayer {
    /// A new group gets a node, and a latency target it starts with starts its parent's
    /// scaling over, as a target written does.
    fn group_added(&mut self, group: GroupId, groups: &GroupTree, _now: Nanos) {
        while self.nodes.len() <= group.index() {
            let id = group_id(self.nodes.len());
            self.nodes.push(Node::of(groups.get(id)));
            self.set_target(id.index(), groups.get(id).limits.latency);
        }
    }

    /// A removed group's target no longer holds its siblings back.
    fn group_removed(&mut self, group: GroupId, _groups: &GroupTree, _now: Nanos) {
        if group.index() < self.nodes.len() {
            self.set_target(group.index(), None);
        }
    }
}

fn group_id(index: usize) -> GroupId {
    GroupId(u32::try_from(index).unwrap_or(u32::MAX))
}

impl Scheduler for IolatencyLayer {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.run_timer(now);
        // A group the tree does not know is served as the root's: nothing throttles it.
        let index = request.group.index();
        let group = if index < self.nodes.len() { index } else { 0 };
        let levels: Vec<usize> = self.path(group).collect();
        for &g in &levels {
            self.follow_cookie(g);
            self.nodes[g].window_start.get_or_insert(now);
        }
        if self.timer.is_none() {
            self.timer = Some(now.saturating_add(TIMER));
        }
        if self.nodes[group].held.is_empty() && self.has_room(group) {
            return self.let_in(request, group, now);
        }
        self.trace.emit(|| TraceEvent::Hold {
            request: request.id,
            process: request.process,
            group: request.group,
            direction: request.direction,
            bytes: request.bytes(),
            wait: 0,
        });
        self.nodes[group].held.push_back(request);
        self.held += 1;
        Inserted::Queued
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.run_timer(now);
        self.release(now);
        let answer = self.inner.dispatch(now);
        self.trace.pull(self.inner.as_mut());
        answer
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.run_timer(now);
        for id in completion.request.ids() {
            if let Some(flight) = self.in_flight.remove(&id) {
                self.finish(flight, now);
            }
        }
        self.inner.complete(completion, now);
        self.trace.pull(self.inner.as_mut());
        self.release(now);
    }

    fn queued(&self) -> usize {
        self.held + self.inner.queued()
    }

    crate::scheduler::pass_to_inner!();

    fn group_weight(&self, group: GroupId) -> Option<u32> {
        self.inner.group_weight(group)
    }

    /// The policy takes the weight and limits as it does; the layer takes the latency
    /// target, which starts the parent's scaling over when it changes.
    fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        now: Nanos,
    ) -> Result<(), TunableError> {
        self.inner.update_group(group, settings, now)?;
        self.trace.pull(self.inner.as_mut());
        if group.index() < self.nodes.len() {
            self.set_target(group.index(), settings.limits.latency);
        }
        Ok(())
    }

    crate::scheduler::groups_pass_to_inner!();

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
        self.inner.set_tracing(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}
