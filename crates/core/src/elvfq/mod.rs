//! Elevator fair queuing (`--controller elv-fq`): the I/O controller of Vivek Goyal's "IO
//! scheduler based IO Controller" patches (V2, May 2009, on 2.6.30-rc4; seed 002), one
//! hierarchical tree of io groups in the common elevator layer, under which every elevator
//! (noop, deadline, anticipatory, cfq) schedules within a group.
//!
//! # What the patches did
//!
//! The patches moved fair queuing out of cfq into the elevator layer (`block/elevator-fq.c`),
//! shared by all elevators. Each cgroup is an *io group* with a weight; io groups form the
//! cgroup hierarchy; a group holds *io queues* (one per process under cfq, a single one per
//! group under noop, deadline and AS). The layer chooses the next io queue by B-WF2Q+, BFQ's
//! algorithm, at every level of the tree ("we already have the hierarchical tree of io queues
//! and groups in elevator layer and we run BFQ (WF2Q+) algorithm to select next queue", seed
//! 002), and the elevator picks requests from that queue as it always did. Fairness was in
//! disk time, not in the I/O done: the same post faults dm-ioband because "a seeky workload
//! will can use disk for much longer to get equivalent IO done", and the blkio controller that
//! grew out of this work says "we provide fairness in terms of disk time"
//! (`Documentation/cgroups/blkio-controller.txt`, 2.6.33). Max-bandwidth control was to come
//! into the same tree: "keep track of IO rate per queue/group and ... delay the dispatch of IO
//! from a queue if its group has crossed the specified max bw".
//!
//! The patch postings themselves were not found in the sources this project could reach
//! (stored kernel trees hold no `elevator-fq.c`). What is here is derived from BFQ's B-WF2Q+
//! (`block/bfq-wf2q.c`, reused: `policy/bfq/wf2q`), from cfq's group scheduling of
//! 2.6.33 (`block/cfq-iosched.c`: time slices charged to the group when they end, `slice_sync`
//! 100 ms, `slice_async` 40 ms, `slice_idle` 8 ms, think-time statistics deciding whether to
//! idle), and from the one piece of the postings found, the V9 patch that idles on a group:
//! "Idle on the group for a period of group_idle ... if a group is empty and about to be
//! deleted, we idle for the next request" (lkml, 2009-08-28). The tunables take cfq's names and
//! that one (`slice_sync`, `slice_async`, `group_idle`); `fairness` (wait for a group's
//! requests at the device before the next group's slice) is ioslice's name, not known to be
//! the patches'.
//!
//! # Here
//!
//! [`ElvFq`] holds one instance of the elevator per group of the tree (the root included):
//! the single io queue per group that noop, deadline and AS had, and for cfq (and bfq) a whole
//! instance per group, which schedules its processes' queues, classes and levels inside the
//! group as it would on a disk of its own. Each instance sees its requests as the root
//! group's, so it applies no group scheduling of its own; a request gets its group back when
//! it is dispatched.
//!
//! - **Which group.** Every group's io queue is an entity of a B-WF2Q+ tree shaped as the
//!   group tree: a group's entity holds its own io queue and its child groups, weighted by
//!   the tree's weights (`cgroup_weight`, `--cgroup NAME:weight=N`; 500 unless set; a group's
//!   own io queue weighs what the group does, against its children). The
//!   group whose queue finishes first in virtual time among the eligible ones gets a slice
//!   (`slice_sync`, or `slice_async` if its last request was async).
//! - **Charged in disk time.** When the slice ends, the group is charged the time from its
//!   start to its end, in microseconds, whatever it moved in that time.
//! - **Slice end.** A slice ends when its time is up and another group has requests waiting
//!   (alone, the group starts a fresh slice), or when the group's elevator runs dry and the
//!   group is not idled for. With `fairness=1` a group whose time is up keeps the device
//!   until its requests at the device complete, so that the next group's slice measures the
//!   next group's service alone (on a disk that queues commands, they would overlap). A group
//!   whose time is up with nothing queued is waited for, as the V9 patch's "wait busy" did:
//!   for its requests at the device and then for its next request (if it is worth idling
//!   for), which ends the slice with the group still on its tree; ended empty, it would have
//!   left the tree, and come back without what it was owed.
//! - **Group idling.** A group whose elevator ran dry while requests of its own are at the
//!   device keeps the slice until they complete; then, if its last request was sync and its
//!   processes' think time (cfq's decaying mean of the gap between the group's last
//!   completion and its next request) is within `group_idle`, the device waits up to
//!   `group_idle` after that completion for the group's next request rather than switching.
//!   Without it a sequential reader, which has one request at a time, would give up its
//!   slice after every request, and B-WF2Q+ would forget what it was owed each time.
//! - **Limits.** A group's `rbps`/`wbps`/`riops`/`wiops` are enforced by the limit layer
//!   around this one ([`crate::limit`]), which releases a limited group's requests in priority
//!   order (or in arrival order with `throttle=above` or `throttle=io-throttle`) and tells
//!   an idling elevator whom not to wait for; a limited group's think time grows with the
//!   limit, so the layer stops idling for it once it is throttled.
//!
//! Traced, the layer records each group's slice (`group_start`, `group_end` with the disk
//! time charged) and idle window (`idle_start`/`idle_end` of kind `group`); the elevators'
//! own events come in between, their queues in the group they belong to.
//!
//! Left out: preemption between groups (the patches let an RT queue of one group preempt
//! another group's slice), per-group statistics files, and moving a process between groups
//! while it runs.

mod layer;
mod regroup;
mod think;

#[cfg(test)]
mod tests;

pub use layer::ElvFq;

use crate::time::ms;
use crate::Nanos;

/// elv-fq's tunables, with the names of the patches' and cfq's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElvFqSettings {
    /// A group's slice when its last request was sync.
    pub slice_sync: Nanos,
    /// A group's slice when its last request was async.
    pub slice_async: Nanos,
    /// How long the device waits for an empty group's next request; 0 never waits.
    pub group_idle: Nanos,
    /// Whether a group whose slice is over keeps the device until its requests at the device
    /// complete, before another group is served.
    pub fairness: bool,
}

impl Default for ElvFqSettings {
    fn default() -> Self {
        Self {
            slice_sync: ms(100),
            slice_async: ms(40),
            group_idle: ms(8),
            fairness: true,
        }
    }
}
