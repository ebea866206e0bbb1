//! The `Scheduler` trait every policy implements, and the context a policy is built with
//! ([`SchedulerContext`]): the interface between the policies and whoever builds and drives
//! them (the registry, the simulator, the engine).

use crate::tunable::TunableError;
use crate::{
    Completion, Group, GroupId, GroupTree, Nanos, ProcessId, Request, RequestId, TraceEvent,
};

/// What a policy is told about the world it runs in when it is built.
#[derive(Debug, Clone, Default)]
pub struct SchedulerContext {
    /// The groups of the run, with their weights.
    pub groups: GroupTree,
    /// Whether the device has moving heads.
    pub rotational: bool,
    /// Commands the device accepts at once.
    pub queue_depth: usize,
}

/// What `dispatch` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dispatch {
    /// Send this request to the device now.
    Request(Request),
    /// Requests are queued but the policy holds them back (idling, anticipation, a limit)
    /// until this time; ask again then, or earlier if something is inserted or completes.
    WaitUntil(Nanos),
    /// Nothing queued.
    Empty,
}

/// What `insert` did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// Queued as a request of its own.
    Queued,
    /// Merged into the queued request with this id; it completes with that request.
    Merged(RequestId),
}

/// An I/O scheduling policy: a pure state machine driven by `insert`, `dispatch` and `complete`.
///
/// The driver calls `dispatch` whenever the device has a free slot, again when a
/// [`Dispatch::WaitUntil`] time comes, and after every `insert` and `complete`.
/// A policy never reads a clock: `now` is the only time it knows, and it never goes backwards.
pub trait Scheduler: Send {
    /// The policy's name as `--sched` takes it.
    fn name(&self) -> &'static str;

    /// A request arrives from a process. The policy may merge it into a queued request.
    fn insert(&mut self, request: Request, now: Nanos) -> Inserted;

    /// The device has a free slot: hand over a request, say when to ask again, or say there is nothing.
    fn dispatch(&mut self, now: Nanos) -> Dispatch;

    /// The device finished a request this policy dispatched.
    fn complete(&mut self, completion: &Completion, now: Nanos);

    /// Requests inserted and not yet dispatched (merged requests count once).
    fn queued(&self) -> usize;

    /// A process has finished and will submit nothing more. Policies that wait for a
    /// process's next request (anticipation, idling) stop waiting for it; the default
    /// ignores the news.
    fn process_exited(&mut self, _process: ProcessId, _now: Nanos) {}

    /// A layer around the policy that decides the order of some processes' requests (the
    /// limit layer) says whether `process` is *outranked*: a request queued in the policy
    /// must leave before `process`'s next one, which that layer will hold back. A policy
    /// that keeps the device idle waiting for a process's next request (anticipation) must
    /// not wait for an outranked process, or it would serve the requests in its own order
    /// instead of the layer's. `false` lifts it. The default ignores the news, as a policy
    /// that never idles may.
    fn set_outranked(&mut self, _process: ProcessId, _outranked: bool, _now: Nanos) {}

    /// Whether two queued-or-incoming requests may be merged; policies with per-queue
    /// state narrow this (the default allows same process, direction, sync-ness, group, priority).
    fn allow_merge(&self, queued: &Request, incoming: &Request) -> bool {
        queued.mergeable_with(incoming)
    }

    /// The weight this policy gives a group against its sibling groups, as it uses it: its
    /// own default for a group whose weight was not set (CFQ's 500, BFQ's 100), clamped to
    /// its own range. `None` for the root, which has no siblings, for a group the policy
    /// was not built with, and for every group of a policy that does not weigh groups (the
    /// default: noop, deadline and anticipatory share the device among requests, not groups).
    fn group_weight(&self, _group: GroupId) -> Option<u32> {
        None
    }

    /// A group's weight or limits were changed while requests are in flight, as writing the
    /// cgroup files (`blkio.weight`, `io.bfq.weight`, `io.max`) changes them: `settings` is
    /// the group as it now is ([`Group`]: its weight, whether it was set, its limits), `now`
    /// the driver's time. Each policy applies the change as its kernel counterpart does: BFQ
    /// and elv-fq at the group entity's next activation, CFQ when the group is next put on the
    /// group service tree, dm-ioband at once, the limit layer from the next request's budget.
    /// A weight the policy does not accept is refused and changes nothing. The default, for
    /// a policy that neither weighs nor limits groups, ignores the change.
    fn update_group(
        &mut self,
        _group: GroupId,
        _settings: &Group,
        _now: Nanos,
    ) -> Result<(), TunableError> {
        Ok(())
    }

    /// A group was added while requests are in flight, as `mkdir` makes a cgroup: `groups`
    /// is the tree as it now is, `group` its newest member (its parent known to the policy
    /// already), with the weight and limits it starts with. Requests of the group may follow
    /// at once. A policy that keeps state per group makes room for it: BFQ and elv-fq give it
    /// an entity under its parent's, CFQ a group ready for the group service tree, the limit
    /// layer and io.latency their per-group nodes, iocost and dm-ioband a share by its
    /// weight. A weight the policy does not accept is refused, and the driver then removes
    /// the group again. The default, for a policy that keeps nothing per group, takes it.
    fn add_group(
        &mut self,
        _group: GroupId,
        _groups: &GroupTree,
        _now: Nanos,
    ) -> Result<(), TunableError> {
        Ok(())
    }

    /// A group was removed, as `rmdir` removes a cgroup: the driver has checked that it has
    /// no child groups, no process that submits in it and no request queued or in flight.
    /// `groups` is the tree as it now is. Nothing of the group is queued, so it competes
    /// for nothing; a policy drops what would make it count (iocost's and dm-ioband's
    /// shares are recomputed without it, io.latency stops scaling its siblings for its
    /// target). Its id is never used again. The default ignores the news.
    fn remove_group(&mut self, _group: GroupId, _groups: &GroupTree, _now: Nanos) {}

    /// Turn recording of this policy's decisions on or off ([`crate::trace`]). Off, which
    /// is how a policy starts, recording costs one branch per decision and builds nothing.
    /// The default, for a policy that traces nothing, ignores it.
    fn set_tracing(&mut self, _on: bool) {}

    /// Move the events recorded since the last call to the end of `out`, in the order they
    /// happened. The driver calls it after each call to the policy and stamps them with that
    /// call's time. The default records nothing.
    fn drain_trace(&mut self, _out: &mut Vec<TraceEvent>) {}
}

/// The [`Scheduler`] methods that a controller layer above a policy passes straight down:
/// a process's exit, its being outranked, and whether two requests may merge. The layer's
/// struct holds the policy in a field `inner` and its trace in a field `trace` that
/// [`pull`](crate::trace::TraceBuffer::pull)s what the policy recorded.
macro_rules! pass_to_inner {
    () => {
        fn process_exited(&mut self, process: $crate::ProcessId, now: $crate::Nanos) {
            self.inner.process_exited(process, now);
            self.trace.pull(self.inner.as_mut());
        }

        fn set_outranked(
            &mut self,
            process: $crate::ProcessId,
            outranked: bool,
            now: $crate::Nanos,
        ) {
            self.inner.set_outranked(process, outranked, now);
            self.trace.pull(self.inner.as_mut());
        }

        fn allow_merge(&self, queued: &$crate::Request, incoming: &$crate::Request) -> bool {
            self.inner.allow_merge(queued, incoming)
        }
    };
}
pub(crate) use pass_to_inner;

/// [`Scheduler::add_group`] and [`Scheduler::remove_group`] for a controller layer above a
/// policy: the policy below is told first (a group it refuses is not added), its trace
/// pulled, then the layer's own `group_added(group, groups, now)` and
/// `group_removed(group, groups, now)` take the change. The struct holds the policy in
/// `inner` and its trace in `trace`, as for [`pass_to_inner`].
macro_rules! groups_pass_to_inner {
    () => {
        fn add_group(
            &mut self,
            group: $crate::GroupId,
            groups: &$crate::GroupTree,
            now: $crate::Nanos,
        ) -> Result<(), $crate::TunableError> {
            self.inner.add_group(group, groups, now)?;
            self.trace.pull(self.inner.as_mut());
            self.group_added(group, groups, now);
            Ok(())
        }

        fn remove_group(
            &mut self,
            group: $crate::GroupId,
            groups: &$crate::GroupTree,
            now: $crate::Nanos,
        ) {
            self.inner.remove_group(group, groups, now);
            self.trace.pull(self.inner.as_mut());
            self.group_removed(group, groups, now);
        }
    };
}
pub(crate) use groups_pass_to_inner;
