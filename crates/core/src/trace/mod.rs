//! Tracing: every decision a policy makes, as it makes it, one typed event each.
//!
//! The module owns the events ([`TraceEvent`] and the reasons they carry), the buffer a
//! policy records them in ([`TraceBuffer`]), the driver's end ([`Tracer`], [`TraceSink`])
//! and their stable renderings as text and JSON lines ([`render`]).
//!
//! # Who says what
//!
//! A policy says only *what* happened and *why*: it pushes events into its [`TraceBuffer`]
//! during `insert`, `dispatch`, `complete` and the other calls of the
//! [`Scheduler`] trait. It never reads a clock, so an event has no time.
//! The driver (the simulator or the engine) says *when*: after each call it drains the
//! policy's events ([`Scheduler::drain_trace`]) and hands
//! each to its [`TraceSink`] stamped with the time of the call, relative to the start of the
//! run. The driver also records what it alone sees: a request's arrival ([`TraceEvent::Insert`]),
//! its hand-over to the device ([`TraceEvent::Dispatch`]) and its completion
//! ([`TraceEvent::Complete`]). Durations inside events (an idle window, a slice) are
//! lengths, never instants, so only the driver's stamp is a time.
//!
//! # Cost when off
//!
//! A policy's buffer is off until the driver turns it on
//! ([`Scheduler::set_tracing`]): every place that records an
//! event then costs one predictable branch and builds nothing, and a driver without a sink
//! makes no extra call.
//!
//! # Order
//!
//! Events come out in the order the policy decided them; a driver's own event comes before
//! the policy's for an arrival and a completion (the policy reacts to them), and after them
//! for a dispatch (the policy's decisions led to it). In the simulator the trace is as
//! deterministic as the run: the same seed gives the same events at the same times.

mod buffer;
pub mod names;
pub mod render;
mod tee;

pub use buffer::{TraceBuffer, Traced};
pub use render::{render_json, render_text, TraceFormat, TraceNames};
pub use tee::Tee;

use crate::merge::MergeKind;
use crate::{
    Completion, Direction, GroupId, GroupTree, IoPriority, Nanos, PriorityClass, ProcessId,
    Request, RequestId, Scheduler,
};

/// The queue an event is about, as the per-process policies (cfq, bfq) see it: a process's
/// sync queue, or the async queue a group shares per priority. Rendered `p3:BE4` (process 3's
/// sync queue at best effort level 4) or `async:BE4`, with the group beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueRef {
    /// The process whose sync queue it is (the first one, for a queue shared by
    /// cooperating processes); `None` for an async queue.
    pub process: Option<ProcessId>,
    /// Its group.
    pub group: GroupId,
    /// Its I/O priority.
    pub priority: IoPriority,
}

/// What a request is, as insert, dispatch and completion events show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestInfo {
    /// Its id.
    pub id: RequestId,
    /// The issuing process.
    pub process: ProcessId,
    /// Its group.
    pub group: GroupId,
    /// The issuing process's priority.
    pub priority: IoPriority,
    /// Read, write or discard.
    pub direction: Direction,
    /// Synchronous or not.
    pub sync: bool,
    /// First sector.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u32,
}

impl RequestInfo {
    /// The trace's view of a request.
    pub fn of(request: &Request) -> Self {
        Self {
            id: request.id,
            process: request.process,
            group: request.group,
            priority: request.priority,
            direction: request.direction,
            sync: request.sync,
            sector: request.sector,
            sectors: request.sectors,
        }
    }
}

/// The class of a batch (deadline: a direction; anticipatory: sync or async).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchClass {
    /// Reads (deadline).
    Read,
    /// Writes (deadline).
    Write,
    /// Sync requests (anticipatory).
    Sync,
    /// Async requests (anticipatory).
    Async,
}

/// Where a new batch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchStart {
    /// At the head of the FIFO, whose deadline has passed.
    Expired,
    /// At the head of the FIFO, because nothing follows in sector order (or the class changed).
    FifoHead,
    /// Where the last batch of this class stopped, sweeping on in sector order.
    Sorted,
}

/// Why a queue's slice (cfq) or budget (bfq) ended. bfq's reasons are its own expiry
/// reasons (the kernel's `BFQQE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceEnd {
    /// cfq: the time slice ran out.
    SliceExpired,
    /// bfq: the queue held the device longer than `timeout_sync`.
    BudgetTimeout,
    /// bfq: its next request costs more than its budget has left; cfq: an async queue sent
    /// its request budget while others wait.
    BudgetExhausted,
    /// It ran out of requests and the policy chose not to idle for it.
    NoMoreRequests,
    /// Idling for its next request timed out (bfq's "too idle").
    IdleTimeout,
    /// Another queue took the device (a [`TraceEvent::Preempt`] comes first, saying who and why).
    Preempted,
    /// cfq: its process exited.
    ProcessExited,
    /// cfq: the device goes to a cooperating queue whose requests are close by.
    Cooperator,
    /// cfq: it kept its slice an idle period longer so its group stayed busy, and the group
    /// has requests again.
    WaitBusyDone,
    /// An IDLE-class queue gives the device back after each request while others wait.
    IdleClass,
}

/// Why a queue takes the device from the one in service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptReason {
    /// cfq: the active queue is IDLE class.
    IdleClass,
    /// cfq: a sync request against an async active queue.
    SyncOverAsync,
    /// cfq: the active queue's slice is used up.
    SliceUsed,
    /// cfq: a real-time queue against a non-real-time one.
    RealTime,
    /// cfq: both sync-noidle, the active queue empty on a tree of two.
    SyncNoIdle,
    /// cfq: the active queue is empty and would not idle.
    ShouldNotIdle,
    /// cfq: the active queue idles and the request is close to the head.
    CloseToHead,
    /// bfq: the queue comes back right after running dry with budget left (hole recovery)
    /// and is raised at least as much.
    HoleRecovery,
    /// bfq: a higher class, or a higher weight (of the queue, or of its group).
    HigherClassOrWeight,
    /// bfq: the queue in service is idled for although that no longer pays.
    IdlingInVain,
}

/// What kind of wait an idle window is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleKind {
    /// Idling for the queue's next request (cfq `slice_idle`, bfq).
    Queue,
    /// cfq `group_idle`: idling on a group's last queue.
    Group,
    /// Anticipatory scheduling: waiting for the process's next nearby request.
    Anticipation,
    /// bfq parallel service: a queue that ran dry stays in the sum of weights and lighter
    /// queues wait for it.
    Linger,
}

/// Why an idle window ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleEnd {
    /// The queue (or process) waited for sent a request.
    RequestArrived,
    /// The window ran out.
    Timer,
    /// Another queue took the device.
    Preempted,
    /// The queue's slice or budget ended for another reason.
    ServiceEnded,
    /// The process exited.
    ProcessExited,
    /// anticipatory: another process's request close to the head is as good.
    CloseRequest,
    /// anticipatory: the process has other requests queued or at the device.
    OtherRequests,
    /// anticipatory: the process thinks longer than `antic_expire`.
    ThinkTime,
    /// anticipatory: processes like it tend to exit rather than send more.
    ExitLikely,
    /// anticipatory: a layer around the policy (the limit layer) ranks another request first.
    Outranked,
    /// bfq parallel service: nothing at the device and no window running, so nobody is
    /// waited for.
    Released,
}

/// Which weight raising.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseKind {
    /// An application starting: a queue busy again after a long idle time.
    Interactive,
    /// A queue whose requests arrive periodically after idle gaps.
    SoftRealTime,
}

/// Why weight raising ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseEnd {
    /// Its time is up.
    Expired,
    /// An interactive queue received more than its service allowance.
    TooMuchService,
    /// The queue belongs to a large burst of queue creations.
    LargeBurst,
    /// Its raising went to the queue it was merged into.
    HandedOver,
}

/// A cfq workload type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Async queues.
    Async,
    /// Seeky sync queues, idled for only as the last of their tree.
    SyncNoIdle,
    /// Sync queues that idle.
    Sync,
}

/// What a group's charge is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeUnit {
    /// Nanoseconds of device time.
    Time,
    /// Requests dispatched (cfq's IOPS mode).
    Requests,
}

/// One traced event. Every variant's fields are listed, with their rendered names, in
/// [`render`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceEvent {
    /// A request arrives (driver).
    Insert {
        /// The request.
        request: RequestInfo,
    },
    /// A request merges into a queued one.
    Merge {
        /// The arriving request.
        request: RequestId,
        /// The queued request it joins.
        into: RequestId,
        /// Back: appended after it; front: put before it.
        position: MergeKind,
    },
    /// After a merge two queued requests touch and become one.
    Coalesce {
        /// The request that carries both.
        into: RequestId,
        /// The request absorbed.
        absorbed: RequestId,
    },
    /// A request goes to the device (driver).
    Dispatch {
        /// The request.
        request: RequestInfo,
        /// Requests merged into it.
        merged: u32,
    },
    /// The device finished a request (driver).
    Complete {
        /// The request.
        request: RequestInfo,
        /// Requests merged into it.
        merged: u32,
        /// From its submission to now.
        latency: Nanos,
        /// From its dispatch to now.
        service: Nanos,
        /// The errno the device returned, if any.
        error: Option<i32>,
    },
    /// A FIFO's head is past its deadline and is served before the sector order.
    FifoExpired {
        /// The request served.
        request: RequestId,
        /// How long past its deadline it is.
        late: Nanos,
    },
    /// deadline and anticipatory: a batch starts.
    BatchStart {
        /// What the batch serves.
        class: BatchClass,
        /// Where it starts.
        start: BatchStart,
        /// deadline: a write batch forced because reads were preferred `writes_starved` times.
        starved: bool,
    },
    /// bfq: while the device is held for one queue, another queue's request is sent.
    Inject {
        /// The request sent.
        request: RequestId,
        /// Its queue.
        queue: QueueRef,
        /// The queue the device is held for.
        holder: QueueRef,
    },
    /// cfq: a queue becomes active (its slice runs from its first completion).
    SliceStart {
        /// The queue.
        queue: QueueRef,
    },
    /// cfq: the active queue's first request completed; its slice runs from now.
    SliceTimer {
        /// The queue.
        queue: QueueRef,
        /// The slice.
        length: Nanos,
    },
    /// cfq: the active queue's slice ends.
    SliceEnd {
        /// The queue.
        queue: QueueRef,
        /// Why.
        reason: ServiceEnd,
        /// Requests it dispatched in the slice.
        dispatched: u64,
    },
    /// bfq: a queue is chosen by B-WF2Q+ and gets the device with a budget.
    BudgetStart {
        /// The queue.
        queue: QueueRef,
        /// Its budget, in sectors.
        budget: u64,
        /// Its budget timeout.
        timeout: Nanos,
        /// Its weight-raising coefficient (1: not raised).
        raising: u64,
    },
    /// bfq: the queue in service expires.
    BudgetEnd {
        /// The queue.
        queue: QueueRef,
        /// Why (bfq's expiry reason).
        reason: ServiceEnd,
        /// Service received, in sectors.
        service: u64,
        /// Its budget.
        budget: u64,
        /// What it is charged (more than its service when charged for time).
        charged: u64,
        /// Its next budget.
        next_budget: u64,
    },
    /// A queue takes the device from the one in service.
    Preempt {
        /// The queue preempted.
        queue: QueueRef,
        /// The queue that preempts.
        by: QueueRef,
        /// Why.
        reason: PreemptReason,
    },
    /// The device is kept idle (or, lingering, lighter queues are held) for a queue's next request.
    IdleStart {
        /// The queue waited for (anticipatory: the process's requests).
        queue: QueueRef,
        /// What kind of wait.
        kind: IdleKind,
        /// How long at most (anticipatory: from the awaited request's completion; a
        /// lingering queue with requests at the device: until their completion, 0 here).
        window: Nanos,
    },
    /// An idle window ends.
    IdleEnd {
        /// The queue waited for.
        queue: QueueRef,
        /// What kind of wait.
        kind: IdleKind,
        /// Why it ended.
        reason: IdleEnd,
    },
    /// bfq: a queue's weight is raised.
    RaiseStart {
        /// The queue.
        queue: QueueRef,
        /// Which raising.
        kind: RaiseKind,
        /// Its weight is multiplied by this.
        coefficient: u64,
        /// For how long.
        duration: Nanos,
    },
    /// bfq: a queue's weight raising ends.
    RaiseEnd {
        /// The queue.
        queue: QueueRef,
        /// Which raising.
        kind: RaiseKind,
        /// Why.
        reason: RaiseEnd,
    },
    /// cfq: a group is chosen (least vdisktime) and a class and workload within it.
    GroupStart {
        /// The group.
        group: GroupId,
        /// The class served.
        class: PriorityClass,
        /// The workload type served.
        workload: Workload,
        /// What is left of the workload slice.
        slice: Nanos,
        /// It resumes a workload slice it had left over.
        resumed: bool,
    },
    /// cfq: the active queue's group is charged for its slice.
    GroupEnd {
        /// The group.
        group: GroupId,
        /// The charge before scaling by the group's share.
        charge: u64,
        /// What the charge counts.
        unit: ChargeUnit,
    },
    /// cfq with `group_isolation=0`: a seeky queue of a child group moves to the root group's
    /// sync-noidle tree, or a moved queue that idles again returns to its own group.
    GroupMove {
        /// The queue, in the group it leaves.
        queue: QueueRef,
        /// The group it joins.
        to: GroupId,
    },
    /// The limit layer holds a request of a limited group.
    Hold {
        /// The request.
        request: RequestId,
        /// Its process.
        process: ProcessId,
        /// The group whose limit holds it.
        group: GroupId,
        /// Its direction (limits are per direction).
        direction: Direction,
        /// Its size.
        bytes: u64,
        /// How long until the buckets would let it by, were it first in line.
        wait: Nanos,
    },
    /// The limit layer releases a held request into the policy.
    Release {
        /// The request.
        request: RequestId,
        /// Its process.
        process: ProcessId,
        /// Its group.
        group: GroupId,
        /// Its direction.
        direction: Direction,
        /// How long since it was submitted.
        waited: Nanos,
    },
    /// The limit layer tells the policy a process is outranked (not to be waited for), or
    /// no longer.
    Outranked {
        /// The process.
        process: ProcessId,
        /// Outranked, or no longer.
        outranked: bool,
    },
    /// cfq, bfq: a process's sync queue is merged into a cooperating queue.
    QueueMerge {
        /// The process that moves.
        process: ProcessId,
        /// The queue it leaves.
        from: QueueRef,
        /// The shared queue.
        into: QueueRef,
    },
    /// cfq, bfq: a process leaves a shared queue that turned seeky, for a queue of its own.
    QueueSplit {
        /// The process.
        process: ProcessId,
        /// The shared queue.
        from: QueueRef,
    },
    /// kyber: its timer resizes a domain's tokens (`read`, `write`, `discard`).
    DomainDepth {
        /// The domain.
        domain: &'static str,
        /// Its tokens before.
        from: u32,
        /// Its tokens now.
        depth: u32,
        /// The total-latency p99 bucket (0 to 7, quarters of the target) it was scaled by.
        p99: u8,
        /// Whether some domain's I/O-latency p90 was past its target.
        congested: bool,
    },
    /// io.latency: a parent's scale cookie moves a step, for a protected child's window
    /// (down: missed, up: met again) or for the timer.
    LatencyScale {
        /// The parent.
        parent: GroupId,
        /// The protected child whose window moved it; `None` for the timer.
        by: Option<GroupId>,
        /// Up (less throttling) or down.
        up: bool,
        /// The cookie now.
        cookie: u32,
    },
    /// iocost: the period timer moves the device's vrate (the kernel's
    /// `iocost_ioc_vrate_adj` tracepoint), with what it judged the period by.
    VrateAdjust {
        /// vrate before, ppm of the cost model's speed.
        from_ppm: u64,
        /// vrate now.
        vrate_ppm: u64,
        /// The busy level after the period (positive: saturated for that many periods).
        busy_level: i32,
        /// Reads that missed `rlat`, ppm of the period's reads.
        read_missed_ppm: u64,
        /// Writes that missed `wlat`, ppm of the period's writes.
        write_missed_ppm: u64,
        /// Share of the period requests waited for a request slot, percent.
        rq_wait_pct: u64,
        /// Groups short of budget with requests waiting.
        shortages: u32,
        /// Groups with a request in flight since before the period began.
        lagging: u32,
    },
    /// io.latency: a group's depth follows its parent's cookie.
    LatencyDepth {
        /// The group.
        group: GroupId,
        /// Its depth before; `None`: unlimited.
        from: Option<u32>,
        /// Its depth now; `None`: unlimited.
        depth: Option<u32>,
    },
}

impl TraceEvent {
    /// A request's arrival.
    pub fn insert(request: &Request) -> Self {
        Self::Insert {
            request: RequestInfo::of(request),
        }
    }

    /// A request's hand-over to the device.
    pub fn dispatch(request: &Request) -> Self {
        Self::Dispatch {
            request: RequestInfo::of(request),
            merged: merged_count(request),
        }
    }

    /// A request's completion, seen at `now`.
    pub fn complete(completion: &Completion, now: Nanos) -> Self {
        let request = &completion.request;
        Self::Complete {
            request: RequestInfo::of(request),
            merged: merged_count(request),
            latency: now.saturating_sub(request.submit_time),
            service: now.saturating_sub(completion.dispatch_time),
            error: completion.error,
        }
    }

    /// The event's name, as both renderings print it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Insert { .. } => "insert",
            Self::Merge { .. } => "merge",
            Self::Coalesce { .. } => "coalesce",
            Self::Dispatch { .. } => "dispatch",
            Self::Complete { .. } => "complete",
            Self::FifoExpired { .. } => "fifo_expired",
            Self::BatchStart { .. } => "batch_start",
            Self::Inject { .. } => "inject",
            Self::SliceStart { .. } => "slice_start",
            Self::SliceTimer { .. } => "slice_timer",
            Self::SliceEnd { .. } => "slice_end",
            Self::BudgetStart { .. } => "budget_start",
            Self::BudgetEnd { .. } => "budget_end",
            Self::Preempt { .. } => "preempt",
            Self::IdleStart { .. } => "idle_start",
            Self::IdleEnd { .. } => "idle_end",
            Self::RaiseStart { .. } => "raise_start",
            Self::RaiseEnd { .. } => "raise_end",
            Self::GroupStart { .. } => "group_start",
            Self::GroupEnd { .. } => "group_end",
            Self::GroupMove { .. } => "group_move",
            Self::Hold { .. } => "hold",
            Self::Release { .. } => "release",
            Self::Outranked { .. } => "outranked",
            Self::QueueMerge { .. } => "queue_merge",
            Self::QueueSplit { .. } => "queue_split",
            Self::DomainDepth { .. } => "domain_depth",
            Self::LatencyScale { .. } => "latency_scale",
            Self::LatencyDepth { .. } => "latency_depth",
            Self::VrateAdjust { .. } => "vrate_adjust",
        }
    }
}

fn merged_count(request: &Request) -> u32 {
    u32::try_from(request.merged.len()).unwrap_or(u32::MAX)
}

/// Where a driver sends a run's trace.
pub trait TraceSink {
    /// The run starts, or its groups changed (one was added or removed while it runs): its
    /// groups are now these (events name groups by their index in it).
    fn start(&mut self, _groups: &GroupTree) {}

    /// One event, `time` nanoseconds after the start of the run.
    fn record(&mut self, time: Nanos, event: &TraceEvent);
}

impl<T: TraceSink + ?Sized> TraceSink for &mut T {
    fn start(&mut self, groups: &GroupTree) {
        (**self).start(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        (**self).record(time, event);
    }
}

impl<T: TraceSink + ?Sized> TraceSink for Box<T> {
    fn start(&mut self, groups: &GroupTree) {
        (**self).start(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        (**self).record(time, event);
    }
}

/// A sink that keeps every event with its time (for tests and for rendering later).
#[derive(Debug, Clone, Default)]
pub struct TraceLog {
    /// The run's groups, from [`TraceSink::start`].
    pub groups: GroupTree,
    /// Every event in order, with its time.
    pub events: Vec<(Nanos, TraceEvent)>,
}

impl TraceSink for TraceLog {
    fn start(&mut self, groups: &GroupTree) {
        self.groups = groups.clone();
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        self.events.push((time, event.clone()));
    }
}

impl TraceLog {
    /// The events by name, in order.
    pub fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a TraceEvent> + 'a {
        self.events
            .iter()
            .map(|(_, event)| event)
            .filter(move |event| event.name() == name)
    }

    /// How many events have this name.
    pub fn count(&self, name: &str) -> usize {
        self.named(name).count()
    }

    /// Every event as a line of `format`, each ending in a newline.
    pub fn render(&self, format: TraceFormat) -> String {
        let names = TraceNames::of(&self.groups);
        let mut out = String::new();
        for (time, event) in &self.events {
            render::render(format, *time, event, &names, None, &mut out);
        }
        out
    }
}

/// A driver's end of the trace: it turns a policy's tracing on, records its own events, and
/// after each call to the policy hands the policy's events to the sink, stamped with the
/// call's time relative to `origin` (the start of the run).
#[derive(Debug)]
pub struct Tracer<S> {
    sink: S,
    origin: Nanos,
    scratch: Vec<TraceEvent>,
}

impl<S: TraceSink> Tracer<S> {
    /// A tracer for a run that starts at `origin` on the driver's clock, with these groups;
    /// turns `policy`'s tracing on.
    pub fn new(mut sink: S, origin: Nanos, groups: &GroupTree, policy: &mut dyn Scheduler) -> Self {
        sink.start(groups);
        policy.set_tracing(true);
        Self {
            sink,
            origin,
            scratch: Vec::new(),
        }
    }

    /// The run's groups changed (one was added or removed): the sink learns the new tree.
    pub fn groups_changed(&mut self, groups: &GroupTree) {
        self.sink.start(groups);
    }

    /// Record the driver's own event at `now`.
    pub fn record(&mut self, now: Nanos, event: &TraceEvent) {
        self.sink.record(now.saturating_sub(self.origin), event);
    }

    /// Hand what `policy` recorded in its last call, made at `now`, to the sink.
    pub fn collect(&mut self, now: Nanos, policy: &mut dyn Scheduler) {
        policy.drain_trace(&mut self.scratch);
        let time = now.saturating_sub(self.origin);
        for event in self.scratch.drain(..) {
            self.sink.record(time, &event);
        }
    }

    /// The sink back.
    pub fn into_sink(self) -> S {
        self.sink
    }
}
