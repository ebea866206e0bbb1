//! The limit layer: a [`Scheduler`] around another that holds limited groups' requests and
//! releases them into it in priority order as the groups' token buckets allow, and tells it
//! which processes it must not idle for so that it keeps that order. Traced, it records each
//! hold, release and change of who is outranked, with the wrapped policy's own events in
//! between in the order they happened.

use std::collections::{BTreeMap, BTreeSet};

use super::bucket::TokenBucket;
use super::fair::{Lane, VirtualClock};
use super::slice::ThrottleSlice;
use super::Throttle;
use crate::trace::TraceBuffer;
use crate::tunable::TunableError;
use crate::{
    Completion, Direction, Dispatch, Group, GroupId, GroupTree, Inserted, Nanos, ProcessId,
    Request, RequestId, Scheduler, TraceEvent,
};

mod change;
mod rounds;

const DIRECTIONS: [Direction; 2] = [Direction::Read, Direction::Write];

/// What a bucket counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counts {
    Bytes,
    Requests,
}

/// A limit's meter: a token bucket (limits held in the controller), or blk-throttle's slice
/// (`throttle=above`), which counts bytes and requests at once.
#[derive(Debug, Clone)]
enum Bucket {
    Tokens { counts: Counts, tokens: TokenBucket },
    Slice(ThrottleSlice),
}

impl Bucket {
    /// When a request of `bytes` may pass, `now` or later.
    fn ready_at(&self, bytes: u64, now: Nanos) -> Nanos {
        match self {
            Bucket::Tokens { counts, tokens } => tokens.ready_at(cost(*counts, bytes), now),
            Bucket::Slice(slice) => slice.ready_at(bytes, now),
        }
    }

    /// Charge a request of `bytes` that passes at `now`.
    fn charge(&mut self, bytes: u64, now: Nanos) {
        match self {
            Bucket::Tokens { counts, tokens } => tokens.charge(cost(*counts, bytes), now),
            Bucket::Slice(slice) => slice.charge(bytes, now),
        }
    }

    /// A slice's evaluation of the request of `bytes` at the head of its queue (see
    /// [`ThrottleSlice::evaluate`]); a token bucket has nothing to do.
    fn evaluate(&mut self, bytes: u64, queue_empty: bool, now: Nanos) {
        if let Bucket::Slice(slice) = self {
            slice.evaluate(bytes, queue_empty, now);
        }
    }
}

/// What a request of `bytes` costs in a token bucket's tokens.
fn cost(counts: Counts, bytes: u64) -> u64 {
    match counts {
        Counts::Bytes => bytes,
        Counts::Requests => 1,
    }
}

/// What the layer knows of a group, fixed when it is built.
#[derive(Debug, Clone, Default)]
struct GroupInfo {
    parent: Option<usize>,
    weight: u32,
    children: Vec<usize>,
    /// Per direction, the buckets a request of this group passes: its own, then its ancestors'.
    path: [Vec<usize>; 2],
    /// Per direction, how many of `path` are its own.
    own: [usize; 2],
    /// Per direction, the top of the limited subtree the group is in (itself, or its highest
    /// limited ancestor below an unlimited one); `None` when the group is not limited.
    top: [Option<usize>; 2],
    /// Per direction, where its held requests wait: its own limit's throttle if it has a
    /// limit in that direction, else the nearest limited ancestor's.
    throttle: [Throttle; 2],
}

impl GroupInfo {
    fn limited(&self, direction: usize) -> bool {
        !self.path[direction].is_empty()
    }
}

/// One group's state in one direction.
#[derive(Debug, Clone, Default)]
struct Node {
    /// The group's own held requests.
    lane: Lane,
    /// Requests held in the group and below it.
    held: usize,
    /// Fair queueing among the group's own lane and its children.
    clock: VirtualClock,
    /// The own lane's finish tag on `clock`.
    own_finish: u128,
    /// This group's finish tag on its parent's clock.
    finish: u128,
}

/// A request the layer released that waits in the policy, not yet dispatched.
#[derive(Debug, Clone, Copy)]
struct Released {
    direction: usize,
    /// The top of its limited subtree.
    top: usize,
    process: ProcessId,
}

/// A process whose requests the layer has held, as its last one showed it.
#[derive(Debug, Clone, Copy)]
struct Member {
    group: usize,
    direction: usize,
    /// The size of its last request: what its next one is taken to need from the buckets.
    bytes: u64,
}

/// A policy with per-group limits around it (see the [module doc](super)).
pub struct LimitLayer {
    inner: Box<dyn Scheduler>,
    groups: Vec<GroupInfo>,
    buckets: Vec<Bucket>,
    /// Per direction, per group.
    nodes: [Vec<Node>; 2],
    /// Per direction, the limited groups whose parent is not limited in that direction:
    /// the roots of the subtrees that share buckets.
    tops: [Vec<usize>; 2],
    held: usize,
    /// When the next held request may leave; `None` when a request came in since it was
    /// worked out.
    next_release: Option<Nanos>,
    /// Released requests queued in the policy, by id (a merged request is dispatched as
    /// part of its carrier, which carries its id).
    in_policy: BTreeMap<RequestId, Released>,
    /// Per direction and top of a limited subtree, how many of `in_policy` are there.
    in_policy_per_top: [Vec<usize>; 2],
    /// Per process and direction, how many of `in_policy` are its own.
    in_policy_per_process: BTreeMap<(ProcessId, usize), usize>,
    /// Processes of limited groups, by the last request the layer held of each.
    members: BTreeMap<ProcessId, Member>,
    /// The members the policy has been told are outranked.
    outranked: BTreeSet<ProcessId>,
    /// Holds, releases and the policy's events, in order, when tracing is on.
    trace: TraceBuffer,
    /// The groups with their limits and weights as they now are (changed at run time by
    /// [`Scheduler::update_group`]).
    tree: GroupTree,
}

impl std::fmt::Debug for LimitLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LimitLayer")
            .field("inner", &self.inner.name())
            .field("held", &self.held)
            .field("next_release", &self.next_release)
            .finish_non_exhaustive()
    }
}

impl LimitLayer {
    /// The layer around `inner`, with the limits and weights of `groups`.
    pub fn new(inner: Box<dyn Scheduler>, groups: &GroupTree) -> Self {
        let (infos, buckets, tops) = structure(groups);
        let nodes = [0, 1].map(|d| {
            infos
                .iter()
                .map(|info| Node {
                    lane: change::lane_for(info.throttle[d]),
                    ..Node::default()
                })
                .collect()
        });
        Self {
            inner,
            nodes,
            in_policy_per_top: [0, 1].map(|_| vec![0; infos.len()]),
            groups: infos,
            buckets,
            tops,
            held: 0,
            next_release: None,
            in_policy: BTreeMap::new(),
            in_policy_per_process: BTreeMap::new(),
            members: BTreeMap::new(),
            outranked: BTreeSet::new(),
            trace: TraceBuffer::default(),
            tree: groups.clone(),
        }
    }

    /// The processes the policy was last told are outranked: a request of their limited
    /// subtree, released before their next one, waits in the policy (see the module doc).
    pub fn outranked(&self) -> impl Iterator<Item = ProcessId> + '_ {
        self.outranked.iter().copied()
    }

    /// Requests held in the layer, not yet released into the policy.
    pub fn held(&self) -> usize {
        self.held
    }

    /// The group (as an index) whose requests in `direction` wait here, if they do.
    fn holds(&self, request: &Request) -> Option<usize> {
        let group = request.group.index();
        let info = self.groups.get(group)?;
        info.limited(request.direction.index()).then_some(group)
    }

    fn hold(&mut self, direction: usize, group: usize, request: Request, now: Nanos) {
        self.evaluate_arrival(direction, group, request.bytes(), now);
        if self.trace.is_enabled() {
            let event = TraceEvent::Hold {
                request: request.id,
                process: request.process,
                group: request.group,
                direction: request.direction,
                bytes: request.bytes(),
                wait: self
                    .ready_at(direction, group, request.bytes(), now)
                    .saturating_sub(now),
            };
            self.trace.push(event);
        }
        let member = Member {
            group,
            direction,
            bytes: request.bytes(),
        };
        self.members.insert(request.process, member);
        self.nodes[direction][group].lane.push(request);
        let mut current = Some(group);
        while let Some(g) = current.filter(|&g| self.groups[g].limited(direction)) {
            self.nodes[direction][g].held += 1;
            current = self.groups[g].parent;
        }
        self.held += 1;
        self.next_release = None;
    }

    /// The earliest time, `now` or later, at which every bucket on the path lets a request
    /// of `bytes` by.
    fn ready_at(&self, direction: usize, group: usize, bytes: u64, now: Nanos) -> Nanos {
        self.groups[group].path[direction]
            .iter()
            .map(|&b| self.buckets[b].ready_at(bytes, now))
            .max()
            .unwrap_or(now)
    }

    /// The group below `group` (itself included) whose next held request leaves now, chosen
    /// by fair queueing among the group's own lane and its children; `None` if none may.
    fn pick(&self, direction: usize, group: usize, now: Nanos) -> Option<usize> {
        let node = &self.nodes[direction][group];
        let own = node
            .lane
            .head()
            .filter(|r| self.ready_at(direction, group, r.bytes(), now) <= now)
            .map(|_| (node.clock.start(node.own_finish), 0, group));
        let children = self.groups[group]
            .children
            .iter()
            .enumerate()
            .filter(|&(_, &child)| self.nodes[direction][child].held > 0)
            .filter_map(|(order, &child)| {
                let leaf = self.pick(direction, child, now)?;
                let start = node.clock.start(self.nodes[direction][child].finish);
                Some((start, order + 1, leaf))
            });
        own.into_iter()
            .chain(children)
            .min()
            .map(|(_, _, leaf)| leaf)
    }

    /// Take the next held request of `group`, charge it to every bucket on its path, and
    /// advance the virtual times from the group up to the top of its subtree.
    fn take(&mut self, direction: usize, group: usize, now: Nanos) -> Option<Request> {
        let request = self.nodes[direction][group].lane.pop()?;
        for &b in &self.groups[group].path[direction] {
            self.buckets[b].charge(request.bytes(), now);
        }
        let bytes = request.bytes();
        let node = &mut self.nodes[direction][group];
        node.own_finish = node
            .clock
            .serve(node.own_finish, bytes, self.groups[group].weight);
        node.held -= 1;
        let mut child = group;
        while let Some(parent) = self.groups[child]
            .parent
            .filter(|&p| self.groups[p].limited(direction))
        {
            let finish = self.nodes[direction][child].finish;
            let weight = self.groups[child].weight;
            let node = &mut self.nodes[direction][parent];
            node.held -= 1;
            let finish = node.clock.serve(finish, bytes, weight);
            self.nodes[direction][child].finish = finish;
            child = parent;
        }
        self.held -= 1;
        Some(request)
    }

    /// Release into the policy every held request whose buckets allow it at `now`.
    fn release(&mut self, now: Nanos) {
        if self.held == 0 || self.next_release.is_some_and(|t| now < t) {
            return;
        }
        for direction in 0..2 {
            for i in 0..self.tops[direction].len() {
                let top = self.tops[direction][i];
                if self.groups[top].throttle[direction] == Throttle::Above {
                    continue;
                }
                while self.nodes[direction][top].held > 0 {
                    let Some(group) = self.pick(direction, top, now) else {
                        break;
                    };
                    let Some(request) = self.take(direction, group, now) else {
                        break;
                    };
                    self.insert_released(request, direction, top, now);
                }
            }
        }
        self.release_above(now);
        self.next_release = Some(self.earliest_release(now));
    }

    /// Hand a released request to the policy and count it as waiting there. The policy
    /// learns first who it now outranks, so that it stops idling for them as it queues it.
    fn insert_released(&mut self, request: Request, direction: usize, top: usize, now: Nanos) {
        let id = request.id;
        self.trace.emit(|| TraceEvent::Release {
            request: id,
            process: request.process,
            group: request.group,
            direction: request.direction,
            waited: now.saturating_sub(request.submit_time),
        });
        let released = Released {
            direction,
            top,
            process: request.process,
        };
        self.track(id, released);
        self.tell_outranked(now);
        let inserted = self.inner.insert(request, now);
        self.trace.pull(self.inner.as_mut());
        if let Inserted::Merged(_) = inserted {
            // It leaves with a request of the same process and group, counted already.
            self.untrack(id);
        }
    }

    fn track(&mut self, id: RequestId, released: Released) {
        self.in_policy.insert(id, released);
        self.in_policy_per_top[released.direction][released.top] += 1;
        *self
            .in_policy_per_process
            .entry((released.process, released.direction))
            .or_default() += 1;
    }

    fn untrack(&mut self, id: RequestId) {
        let Some(released) = self.in_policy.remove(&id) else {
            return;
        };
        self.in_policy_per_top[released.direction][released.top] -= 1;
        let key = (released.process, released.direction);
        if let Some(count) = self.in_policy_per_process.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                self.in_policy_per_process.remove(&key);
            }
        }
    }

    /// Whether `member`'s next request ranks behind a request already queued in the policy:
    /// another process of its limited subtree has a released request waiting there, and
    /// the buckets would hold `member`'s next request back at `now`. The layer released
    /// that request first, so it must leave first; a policy idling for `member` would
    /// instead let `member`'s next request overtake it once the layer releases it.
    ///
    /// While the buckets would let the member's next request straight through, the limit
    /// does not bind and the policy orders requests as it would without it: it may idle.
    ///
    /// A throttle above the elevator (either kind) tells the policy nothing: it does not know
    /// the order.
    fn outranks(&self, process: ProcessId, member: &Member, now: Nanos) -> bool {
        let info = &self.groups[member.group];
        if info.throttle[member.direction] != Throttle::Priority {
            return false;
        }
        let Some(top) = info.top[member.direction] else {
            return false;
        };
        let waiting = self.in_policy_per_top[member.direction][top];
        let own = self
            .in_policy_per_process
            .get(&(process, member.direction))
            .copied()
            .unwrap_or(0);
        waiting > own && self.ready_at(member.direction, member.group, member.bytes, now) > now
    }

    /// Bring the policy's view of who is outranked up to date at `now`.
    fn tell_outranked(&mut self, now: Nanos) {
        if self.members.is_empty() {
            return;
        }
        let changes: Vec<(ProcessId, bool)> = self
            .members
            .iter()
            .map(|(&process, member)| (process, self.outranks(process, member, now)))
            .filter(|&(process, outranked)| outranked != self.outranked.contains(&process))
            .collect();
        for (process, outranked) in changes {
            if outranked {
                self.outranked.insert(process);
            } else {
                self.outranked.remove(&process);
            }
            self.trace
                .emit(|| TraceEvent::Outranked { process, outranked });
            self.inner.set_outranked(process, outranked, now);
            self.trace.pull(self.inner.as_mut());
        }
    }

    /// When the first of the held requests that lead their lanes may leave.
    fn earliest_release(&self, now: Nanos) -> Nanos {
        (0..2)
            .flat_map(|d| (0..self.groups.len()).map(move |g| (d, g)))
            .filter_map(|(d, g)| {
                let head = self.nodes[d][g].lane.head()?;
                Some(self.ready_at(d, g, head.bytes(), now))
            })
            .min()
            .unwrap_or(Nanos::MAX)
    }
}

/// What the layer knows of each group, the buckets their limits call for, and per direction
/// the tops of the limited subtrees.
type Structure = (Vec<GroupInfo>, Vec<Bucket>, [Vec<usize>; 2]);

fn structure(groups: &GroupTree) -> Structure {
    let mut infos: Vec<GroupInfo> = vec![GroupInfo::default(); groups.len()];
    let mut buckets = Vec::new();
    for (id, group) in groups.iter() {
        let index = id.index();
        let parent = group.parent.map(|p| p.index());
        for direction in DIRECTIONS {
            let mut path = own_buckets(&group.limits, direction, &mut buckets);
            infos[index].own[direction.index()] = path.len();
            if let Some(parent) = parent {
                path.extend(infos[parent].path[direction.index()].iter().copied());
            }
            infos[index].path[direction.index()] = path;
        }
        for (d, direction) in DIRECTIONS.into_iter().enumerate() {
            let limited = infos[index].limited(d);
            let inherited = parent.and_then(|p| infos[p].top[d]);
            infos[index].top[d] = limited.then(|| inherited.unwrap_or(index));
            let own =
                group.limits.bps(direction).is_some() || group.limits.iops(direction).is_some();
            infos[index].throttle[d] = match parent {
                Some(p) if !own => infos[p].throttle[d],
                _ => group.limits.throttle,
            };
        }
        infos[index].parent = parent;
        infos[index].weight = group.weight;
        if let Some(parent) = parent {
            infos[parent].children.push(index);
        }
    }
    let tops = [0, 1].map(|d| {
        (0..infos.len())
            .filter(|&g| infos[g].limited(d))
            .filter(|&g| infos[g].parent.is_none_or(|p| !infos[p].limited(d)))
            .collect()
    });
    (infos, buckets, tops)
}

/// The buckets a group's own limits in `direction` call for, added to `buckets`; their indices.
fn own_buckets(
    limits: &super::Limits,
    direction: Direction,
    buckets: &mut Vec<Bucket>,
) -> Vec<usize> {
    let burst = limits.burst_or_default();
    if limits.throttle == Throttle::Above {
        let (bps, iops) = (limits.bps(direction), limits.iops(direction));
        if bps.is_none() && iops.is_none() {
            return Vec::new();
        }
        buckets.push(Bucket::Slice(ThrottleSlice::new(bps, iops, burst)));
        return vec![buckets.len() - 1];
    }
    [
        (Counts::Bytes, limits.bps(direction)),
        (Counts::Requests, limits.iops(direction)),
    ]
    .into_iter()
    .filter_map(|(counts, rate)| {
        let tokens = TokenBucket::new(rate?, burst);
        buckets.push(Bucket::Tokens { counts, tokens });
        Some(buckets.len() - 1)
    })
    .collect()
}

impl Scheduler for LimitLayer {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        match self.holds(&request) {
            Some(group) => {
                self.hold(request.direction.index(), group, request, now);
                Inserted::Queued
            }
            None => {
                self.tell_outranked(now);
                let inserted = self.inner.insert(request, now);
                self.trace.pull(self.inner.as_mut());
                inserted
            }
        }
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.release(now);
        self.tell_outranked(now);
        let answer = self.inner.dispatch(now);
        self.trace.pull(self.inner.as_mut());
        if let Dispatch::Request(request) = &answer {
            if !self.in_policy.is_empty() {
                for id in request.ids() {
                    self.untrack(id);
                }
            }
        }
        let Some(next) = self.next_release.filter(|_| self.held > 0) else {
            return answer;
        };
        match answer {
            Dispatch::Request(request) => Dispatch::Request(request),
            Dispatch::WaitUntil(at) => Dispatch::WaitUntil(at.min(next)),
            Dispatch::Empty => Dispatch::WaitUntil(next),
        }
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.inner.complete(completion, now);
        self.trace.pull(self.inner.as_mut());
    }

    fn queued(&self) -> usize {
        self.held + self.inner.queued()
    }

    fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        for nodes in &mut self.nodes {
            for node in nodes.iter_mut() {
                node.lane.forget(process);
            }
        }
        // It sends nothing more: there is no next request of its to rank.
        self.members.remove(&process);
        if self.outranked.remove(&process) {
            self.trace.emit(|| TraceEvent::Outranked {
                process,
                outranked: false,
            });
            self.inner.set_outranked(process, false, now);
            self.trace.pull(self.inner.as_mut());
        }
        self.tell_outranked(now);
        self.inner.process_exited(process, now);
        self.trace.pull(self.inner.as_mut());
    }

    fn allow_merge(&self, queued: &Request, incoming: &Request) -> bool {
        self.inner.allow_merge(queued, incoming)
    }

    /// The wrapped policy's: the layer shares a limited ancestor among its children by the
    /// tree's weights, but the device's share is the policy's to decide.
    fn group_weight(&self, group: GroupId) -> Option<u32> {
        self.inner.group_weight(group)
    }

    /// The wrapped policy takes the weight as it does; the layer takes the limits (see
    /// `layer::change`). A weight the policy refuses changes nothing in either.
    fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        now: Nanos,
    ) -> Result<(), TunableError> {
        self.inner.update_group(group, settings, now)?;
        self.trace.pull(self.inner.as_mut());
        self.change_group(group, settings, now);
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
