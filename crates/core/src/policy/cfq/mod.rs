//! Time-sliced **CFQ** (Completely Fair Queueing), version 3 with hierarchical groups, as in
//! Linux 4.2–4.4.
//!
//! Every process has its own *sync queue*; buffered writeback goes to *async queues* shared per
//! group, class and level. One queue at a time is *active* and owns the device for a *time
//! slice* whose length follows its I/O priority (`slice_sync` 100 ms at level 4, a fifth more or
//! less per level; `slice_async` 40 ms); with `low_latency` the slice shrinks so that all busy
//! queues of a group get a turn within `target_latency`. The slice starts at the queue's first
//! completion. Within its slice a queue dispatches in sector order (short backward seeks
//! penalised), looks at its FIFO once, and keeps only `quantum/2` requests in flight while others
//! wait. When a sync queue runs dry CFQ *idles* `slice_idle` for the process's next, probably
//! nearby, request — unless the process thinks too long, seeks, or has exited. Seeky queues share
//! one service tree and idle only as its last queue; `group_idle` idles on a group's last queue.
//! `group_isolation=0` (the 2.6.33–2.6.38 default; later kernels always isolate, as the default
//! `1` does) serves the seeky queues of every child group on the root group's sync-noidle tree,
//! so group weights hold for sequential I/O only (see `isolation.rs`).
//!
//! Queues wait on service trees ordered by `rb_key` (when they joined, plus an offset for lower
//! priority, minus slice left over from a preemption). Each group has RT and BE trees for each
//! workload type (async, sync-noidle, sync) and one IDLE tree: classes are served strictly, and
//! the workload types share the group's slice by their number of queues. Groups take turns on a
//! device-wide tree by *vdisktime*: on every slice expiry the group is charged the slice time used
//! — or, in *IOPS mode* (`slice_idle=0` on a queueing device), the requests dispatched — divided
//! by its hierarchical weight fraction *vfraction*. A new request may *preempt* the active queue
//! (sync over async, RT over BE, a close request while idling, ...), and sync queues whose
//! requests interleave on disk are *merged* as cooperators instead of idling on each.
//!
//! Source: Linux's `block/cfq-iosched.c` as of 4.2–4.4; the kernel's
//! `Documentation/block/cfq-iosched.txt`, `Documentation/block/ioprio.txt` and cgroup-v1
//! `blkio-controller.txt`; Jens Axboe's "Time sliced CFQ io scheduler" (LKML, December 2004)
//! and Vivek Goyal's "IOPS mode for group scheduling and new group_idle tunable"
//! (LKML, July 2010). This is our own code, written from those sources.
//!
//! Versions: the `version` tunable (default 4.4, `40400`) selects CFQ as an older release had
//! it, for the posts that measured those kernels. Before 2.6.33 (no groups, no workload types)
//! a separate engine runs (`legacy`): the December 2004 time-sliced patch on 2.6.10 (a queue
//! per process for all its requests, 83 ms slices with 4 ms idling, round robin), 2.6.28 (shared
//! async queues, one service tree, dispatch in batches onto the block layer's dispatch list,
//! `quantum` 4 only while other queues are busy) and 2.6.30 (one request per dispatch). From
//! 2.6.33 on this module's engine runs, with `group_isolation` defaulting to 0 before 2.6.39.
//! `version.rs` lists what each release changed and the source of each change.
//!
//! Units: tunables are milliseconds as in sysfs; inside, every time is an exact nanosecond count
//! where the kernel counted jiffies. `vfraction` is 12-bit fixed point like the kernel's, and
//! vdisktime is kept in the kernel's scale (the charge times 2^24, over vfraction).
//!
//! Timers: the idle timer is a [`Dispatch::WaitUntil`]. When CFQ holds requests back for an
//! in-flight cap (quantum, async behind sync, a queue waiting for its own requests) it answers
//! [`Dispatch::Empty`]: a completion is then always pending, and the driver asks again after it.

mod cooperator;
mod dispatch;
mod fifo;
mod group;
mod hw_tag;
mod idle;
mod isolation;
mod legacy;
mod preempt;
mod queue;
mod service_tree;
mod slice;
mod sort_list;
#[cfg(test)]
mod testing;
mod tracing;
mod version;
mod workload;

use crate::trace::Traced;
use foldhash::fast::FixedState;
use std::collections::HashMap;

use crate::merge::{RequestSlab, SlotKey};
use crate::scheduler::SchedulerContext;
use crate::sector_order::SeekCost;
use crate::time::ms;
use crate::trace::{ServiceEnd, TraceBuffer};
use crate::tunable::{TunableDef, Tunables};
use crate::{
    Completion, Dispatch, Group, GroupId, GroupTree, Inserted, Nanos, ProcessId, Request,
    Scheduler, TraceEvent,
};

use dispatch::AtDevice;
use group::{CfqGroup, GroupServiceTree};
use hw_tag::HwTag;
use idle::{IdleWindow, ThinkTime};
use legacy::LegacyCfq;
use preempt::PreemptReason;
use queue::{Queues, SlotInfo};
use workload::Serving;

/// Largest value of the kernel's `int` tunables.
const INT_MAX: i64 = i32::MAX as i64;

/// A queue's index in [`Queues`]: how every part of CFQ names a queue.
type QueueId = usize;

/// The tunables in the units the algorithm uses (nanoseconds, sectors).
#[derive(Debug, Clone)]
struct Config {
    /// Base of the per-queue in-flight cap.
    quantum: usize,
    /// How long a sync request may wait before its queue's FIFO serves it.
    fifo_expire_sync: Nanos,
    /// How long an async request may wait before its queue's FIFO serves it.
    fifo_expire_async: Nanos,
    /// The sector-distance choice (back_seek_max in sectors, back_seek_penalty).
    seek: SeekCost,
    /// Base slice of a sync queue (level 4).
    slice_sync: Nanos,
    /// Base slice of an async queue (level 4).
    slice_async: Nanos,
    /// Base of an async queue's request budget per slice.
    slice_async_rq: u64,
    /// How long an emptied sync queue waits for its next request (0: never).
    slice_idle: Nanos,
    /// How long a group's last queue waits when queue idling is off (0: never).
    group_idle: Nanos,
    /// Seeky (sync-noidle) queues stay in their groups instead of moving to the root group.
    group_isolation: bool,
    /// Scale slices so every busy queue gets a turn within `target_latency`.
    low_latency: bool,
    /// The latency `low_latency` aims for, and the base of every group's slice.
    target_latency: Nanos,
}

impl Config {
    fn new(tunables: &Tunables, context: &SchedulerContext) -> Self {
        // Since Linux 4.2 a non-rotational device gets slice_idle=0 (so IOPS mode on a queueing
        // SSD) unless the user sets it.
        let slice_idle = if context.rotational || tunables.is_set("slice_idle") {
            ms(tunables.get_u64("slice_idle"))
        } else {
            0
        };
        Self {
            quantum: usize::try_from(tunables.get_u64("quantum")).unwrap_or(usize::MAX),
            fifo_expire_sync: ms(tunables.get_u64("fifo_expire_sync")),
            fifo_expire_async: ms(tunables.get_u64("fifo_expire_async")),
            seek: SeekCost {
                back_seek_max: tunables.get_u64("back_seek_max").saturating_mul(2),
                back_seek_penalty: tunables.get_u64("back_seek_penalty"),
            },
            slice_sync: ms(tunables.get_u64("slice_sync")),
            slice_async: ms(tunables.get_u64("slice_async")),
            slice_async_rq: tunables.get_u64("slice_async_rq"),
            slice_idle,
            group_idle: ms(tunables.get_u64("group_idle")),
            group_isolation: if tunables.is_set("group_isolation") {
                tunables.get_bool("group_isolation")
            } else {
                version::default_for(tunables.get("version"), "group_isolation")
                    .map_or_else(|| tunables.get_bool("group_isolation"), |value| value != 0)
            },
            low_latency: tunables.get_bool("low_latency"),
            target_latency: ms(tunables.get_u64("target_latency")),
        }
    }

    fn fifo_expire(&self, sync: bool) -> Nanos {
        if sync {
            self.fifo_expire_sync
        } else {
            self.fifo_expire_async
        }
    }
}

/// What CFQ knows of a process (the kernel's per-process I/O context).
#[derive(Debug, Clone)]
struct ProcessState {
    /// The process's sync queue, possibly shared with cooperating processes.
    sync_queue: Option<QueueId>,
    /// Time between a sync completion and the process's next request.
    think_time: ThinkTime,
    /// The process has finished: never idle for it.
    exited: bool,
}

impl ProcessState {
    fn new(now: Nanos) -> Self {
        Self {
            sync_queue: None,
            think_time: ThinkTime::starting_at(now),
            exited: false,
        }
    }
}

/// The time-sliced CFQ policy.
#[derive(Debug, Clone)]
pub struct Cfq {
    config: Config,
    /// Whether the device seeks (seekiness and idling decisions differ on flash).
    rotational: bool,
    /// Queued requests of every queue.
    slab: RequestSlab,
    /// Per slab slot: its queue and FIFO place.
    slots: Vec<SlotInfo>,
    /// Every queue, sync and async.
    queues: Queues,
    /// Every process seen, by id (looked up, never walked, so a hash keeps no order).
    processes: HashMap<ProcessId, ProcessState, FixedState>,
    /// Per group (indexed by [`crate::GroupId::index`]): weights, service trees, vdisktime.
    groups: Vec<CfqGroup>,
    /// The device-wide tree of groups with busy queues, by vdisktime.
    group_tree: GroupServiceTree,
    /// The group, class and workload type being served, and until when.
    serving: Serving,
    /// The queue owning the current slice.
    active: Option<QueueId>,
    /// The process whose request the active queue dispatched first in this slice.
    active_process: Option<ProcessId>,
    /// The idle window: when its timer fires, what it waits for, whether the trace shows it.
    idle: IdleWindow,
    /// Queues on a service tree (with requests, or active).
    busy_queues: usize,
    /// Sync queues among them.
    busy_sync_queues: usize,
    /// What is at the device, whose it is, and where the head will be.
    device: AtDevice,
    /// Whether the device queues commands (NCQ), as observed.
    hw_tag: HwTag,
    /// Source of tie-breaking insertion numbers.
    sequence: u64,
    /// Slices, idling, preemptions and group choices, when tracing is on.
    trace: TraceBuffer,
    /// The pre-group CFQ that runs instead, when `version` selects a release before 2.6.33.
    legacy: Option<Box<LegacyCfq>>,
}

impl Cfq {
    /// The tunables, with the kernel's names, units and defaults (`slice_idle` becomes 0 on a
    /// non-rotational device unless set).
    pub const TUNABLES: &'static [TunableDef] = &[
        tunable(
            "quantum",
            8,
            1,
            "requests",
            "in-flight cap base: quantum/2 per queue, up to quantum early in a slice",
        ),
        tunable(
            "fifo_expire_sync",
            125,
            1,
            "ms",
            "age at which a sync request is served from its queue's FIFO",
        ),
        tunable(
            "fifo_expire_async",
            250,
            1,
            "ms",
            "age at which an async request is served from its queue's FIFO",
        ),
        tunable(
            "back_seek_max",
            16_384,
            0,
            "KiB",
            "longest backward seek preferred to a forward one",
        ),
        tunable(
            "back_seek_penalty",
            2,
            1,
            "factor",
            "cost multiplier of a backward seek",
        ),
        tunable(
            "slice_sync",
            100,
            1,
            "ms",
            "time slice of a sync queue at level 4 (a fifth more or less per level)",
        ),
        tunable(
            "slice_async",
            40,
            1,
            "ms",
            "time slice of an async queue at level 4",
        ),
        tunable(
            "slice_async_rq",
            2,
            1,
            "requests",
            "async budget base: 2 x slice_async_rq x (8 - level) requests per slice",
        ),
        tunable(
            "slice_idle",
            8,
            0,
            "ms",
            "idle wait for an emptied sync queue's next request (0: IOPS mode on queueing devices)",
        ),
        tunable(
            "group_idle",
            8,
            0,
            "ms",
            "idle wait on a group's last queue when queue idling is off",
        ),
        TunableDef {
            name: "group_isolation",
            default: 1,
            min: 0,
            max: 1,
            unit: "bool",
            help:
                "keep seeky queues in their groups (0, as 2.6.33-2.6.38: served in the root group)",
        },
        TunableDef {
            name: "low_latency",
            default: 1,
            min: 0,
            max: 1,
            unit: "bool",
            help: "shrink slices so every busy queue is served within target_latency",
        },
        tunable(
            "target_latency",
            300,
            1,
            "ms",
            "latency aimed for by low_latency; base of each group's slice",
        ),
        TunableDef {
            name: "version",
            default: version::V4_4,
            min: version::V2_6_10,
            max: version::V4_4,
            unit: "kernel",
            help: "CFQ as this release had it: 2.6.10 (the 2004 time-sliced patch: one queue per \
                   process for all its I/O, equal slices with idling, round robin, no preemption), \
                   2.6.28 (shared async queues, one service tree, batches onto the dispatch list, \
                   quantum caps a queue only while others are busy, no low_latency), 2.6.30 (one \
                   request per dispatch), 2.6.33-2.6.38 (4.4's engine, group_isolation default 0), \
                   else 4.4; unset tunables take the release's defaults (2.6.10: slice_sync 83, \
                   slice_idle 4; before 2.6.33: quantum 4)",
        },
    ];

    /// A CFQ policy with these tunables (resolved against [`Self::TUNABLES`]) for this device and groups.
    pub fn new(tunables: &Tunables, context: &SchedulerContext) -> Self {
        let groups = group::build_groups(&context.groups);
        Self {
            config: Config::new(tunables, context),
            rotational: context.rotational,
            slab: RequestSlab::default(),
            slots: Vec::new(),
            queues: Queues::default(),
            processes: HashMap::default(),
            groups,
            group_tree: GroupServiceTree::default(),
            serving: Serving::default(),
            active: None,
            active_process: None,
            idle: IdleWindow::default(),
            busy_queues: 0,
            busy_sync_queues: 0,
            device: AtDevice::default(),
            hw_tag: HwTag::default(),
            sequence: 0,
            trace: TraceBuffer::default(),
            legacy: legacy_for(tunables, context),
        }
    }

    /// IOPS mode: groups are charged requests instead of time (`slice_idle=0` and the device
    /// queues commands, or has not yet shown that it does not).
    fn iops_mode(&self) -> bool {
        self.config.slice_idle == 0 && self.hw_tag.present()
    }

    /// A fresh number for ordering equal keys by insertion.
    fn next_sequence(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    /// Remember which queue and FIFO place a slab slot holds.
    fn set_slot(&mut self, slot: SlotKey, info: SlotInfo) {
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, info);
        }
        self.slots[slot] = info;
    }

    /// A request joins its queue (the kernel's `cfq_insert_request` and `cfq_rq_enqueued`),
    /// and preempts the active queue if a rule says so.
    fn enqueue(&mut self, queue: QueueId, request: Request, now: Nanos) {
        if let Some(reason) = self.admit(queue, request, now) {
            if let Some(active) = self.active {
                self.emit(|cfq| TraceEvent::Preempt {
                    queue: cfq.queue_ref(active),
                    by: cfq.queue_ref(queue),
                    reason: reason.into(),
                });
            }
            self.preempt(queue, now);
        }
    }

    /// Put a request on its queue; the queue's history learns from it. A request for the
    /// active queue may end its idle wait; one for another queue may preempt it: the reason is
    /// returned.
    fn admit(&mut self, queue: QueueId, request: Request, now: Nanos) -> Option<PreemptReason> {
        let (process, sync, sector, sectors) = (
            request.process,
            request.sync,
            request.sector,
            request.sectors,
        );
        let bytes = request.bytes();
        self.add_request(queue, request, now);
        self.update_think_times(queue, process, now);
        self.queues[queue]
            .seek
            .record(sector, sectors, self.rotational);
        self.update_idle_window(queue, process);
        if self.active == Some(queue) {
            self.request_for_active_queue(queue, bytes);
            None
        } else {
            self.preempt_reason(queue, sync, sector, now)
        }
    }

    /// The device finished a request (the kernel's `cfq_completed_request`).
    fn completed(&mut self, request: &Request, now: Nanos) {
        let Some((queue, group)) = self.device.owner(request.id) else {
            return;
        };
        // The hardware-queueing sample counts this request as still at the device.
        self.sample_hw_tag();
        let sync = self.queues[queue].sync;
        let group = group.index();
        self.device.complete(request.id, sync);
        self.queues[queue].dispatched = self.queues[queue].dispatched.saturating_sub(1);
        self.groups[group].dispatched = self.groups[group].dispatched.saturating_sub(1);
        if request.sync {
            self.sync_request_completed(queue, request, now);
        }
        self.groups[group].think_time.last_end = now;
        if self.active == Some(queue) {
            self.active_queue_completed(queue, sync, now);
        }
        self.release_if_unused(queue);
    }

    /// A process finished (the kernel's `cfq_exit_icq`): its sync queue loses the process, and
    /// stops its slice if it was active.
    fn exit_process(&mut self, process: ProcessId, now: Nanos) {
        let Some(state) = self.processes.get_mut(&process) else {
            return;
        };
        state.exited = true;
        let Some(queue) = state.sync_queue.take() else {
            return;
        };
        if self.active == Some(queue) {
            self.expire_active(false, ServiceEnd::ProcessExited, now);
        }
        let refs = &mut self.queues[queue].process_refs;
        *refs = refs.saturating_sub(1);
        self.release_if_unused(queue);
    }
}

/// The pre-group engine, if `version` selects a release before 2.6.33.
fn legacy_for(tunables: &Tunables, context: &SchedulerContext) -> Option<Box<LegacyCfq>> {
    let version = tunables.get("version");
    version::Era::of(version)
        .legacy()
        .then(|| Box::new(LegacyCfq::new(tunables, version, context.rotational)))
}

/// One tunable definition (every CFQ tunable is an `int` with the kernel's upper bound).
const fn tunable(
    name: &'static str,
    default: i64,
    min: i64,
    unit: &'static str,
    help: &'static str,
) -> TunableDef {
    TunableDef {
        name,
        default,
        min,
        max: INT_MAX,
        unit,
        help,
    }
}

impl Scheduler for Cfq {
    fn name(&self) -> &'static str {
        "cfq"
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        if let Some(legacy) = &mut self.legacy {
            return legacy.insert(request, now);
        }
        self.fire_idle_timer(now);
        let request = match self.merge_into_queued(request) {
            Ok(carrier) => return Inserted::Merged(carrier),
            Err(request) => request,
        };
        let queue = self.queue_for_request(&request, now);
        self.enqueue(queue, request, now);
        Inserted::Queued
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        if let Some(legacy) = &mut self.legacy {
            return legacy.dispatch(now);
        }
        self.fire_idle_timer(now);
        match self.dispatch_one(now) {
            Some(request) => Dispatch::Request(request),
            None => match self.idle.timer {
                Some(deadline) => Dispatch::WaitUntil(deadline),
                None => Dispatch::Empty,
            },
        }
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        if let Some(legacy) = &mut self.legacy {
            return legacy.complete(completion, now);
        }
        self.fire_idle_timer(now);
        self.completed(&completion.request, now);
    }

    fn queued(&self) -> usize {
        match &self.legacy {
            Some(legacy) => legacy.queued(),
            None => self.slab.len(),
        }
    }

    fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        if let Some(legacy) = &mut self.legacy {
            return legacy.process_exited(process, now);
        }
        self.fire_idle_timer(now);
        self.exit_process(process, now);
    }

    fn set_tracing(&mut self, on: bool) {
        if let Some(legacy) = &mut self.legacy {
            legacy.set_tracing(on);
        }
        self.trace.set_enabled(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        if let Some(legacy) = &mut self.legacy {
            legacy.drain_trace(out);
        }
        self.trace.drain_into(out);
    }

    /// Requests merge only within one queue (the kernel's `cfq_allow_merge`): a process's
    /// sync requests (with its cooperators' once merged), or a group's async requests of one
    /// priority, whichever process issued them.
    fn allow_merge(&self, queued: &Request, incoming: &Request) -> bool {
        if let Some(legacy) = &self.legacy {
            return legacy.allow_merge(queued, incoming);
        }
        let queue = self.current_queue(queued);
        queued.direction == incoming.direction
            && queued.sync == incoming.sync
            && queue.is_some()
            && queue == self.current_queue(incoming)
    }

    /// The group's weight clamped to CFQ's 10..=1000 (500 when not set); the root, whose
    /// tasks count as weight 1000 against its child groups, has no siblings and no answer.
    fn group_weight(&self, group: GroupId) -> Option<u32> {
        if group == GroupId::ROOT || self.legacy.is_some() {
            return None;
        }
        let weight = self.groups.get(group.index())?.weight;
        u32::try_from(weight).ok()
    }

    /// The weight, clamped to 10..=1000, is taken when the group is next put on the group
    /// service tree (see the `group` module). CFQ limits nothing: limits are ignored. The 2.6.10
    /// time-sliced engine has no groups and ignores the change.
    fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        _now: Nanos,
    ) -> Result<(), crate::tunable::TunableError> {
        if group == GroupId::ROOT || self.legacy.is_some() {
            return Ok(());
        }
        if let Some(state) = self.groups.get_mut(group.index()) {
            state.new_weight = Some(group::cfq_weight(settings.weight));
        }
        Ok(())
    }

    /// A group ready for the group service tree, off it until a queue of the group joins
    /// the round robin, as `cfq_pd_init` makes a `cfq_group` when a cgroup is created
    /// (block/cfq-iosched.c, 4.x). The 2.6.10 engine has no groups and ignores it.
    fn add_group(
        &mut self,
        group: GroupId,
        groups: &GroupTree,
        _now: Nanos,
    ) -> Result<(), crate::tunable::TunableError> {
        if self.legacy.is_none() {
            group::grow_groups(&mut self.groups, group, groups);
        }
        Ok(())
    }
}
