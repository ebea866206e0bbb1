//! The **anticipatory** elevator (AS, alias `as`).
//!
//! Requests are split into two classes, sync (reads and sync writes) and async (buffered
//! writeback); each class has a sort list by sector and a FIFO by deadline (`read_expire`
//! for sync, `write_expire` for async). Service alternates between batches of one class:
//! a sync batch lasts `read_batch_expire` while async requests compete, an async batch is
//! held to `write_batch_expire` by a self-tuning request budget, and a change of class
//! waits for everything at the device to complete. Within a batch
//! requests leave in one-way elevator order with short backward seeks allowed (up to 1 Mi
//! sectors, at twice the cost); a FIFO is looked at only during its class's batch and at
//! most once per expire interval, and a new batch starts at its FIFO head.
//!
//! On top of that, *anticipation*: when a sync request completes and the next request in
//! line belongs to someone else and lies far away, AS keeps the disk idle for up to
//! `antic_expire`, betting that the process which just completed will send a nearby
//! request within its usual think time — a sequential reader's next read arrives a few
//! microseconds later, and serving it saves two long seeks. Per-process think-time and
//! seek-distance statistics decide when the bet is good, and a list of rules breaks the
//! wait early (see [`AnticipationState`]). While waiting only one sync request is at the
//! device. `antic_expire=0` turns anticipation off: AS then behaves like deadline with
//! batches. Incoming requests merge with queued ones at either end (front merges are always
//! on) and requests a merge made contiguous coalesce, keeping the earlier deadline.
//!
//! AS knows no priorities. Under a group limit, the limit layer releases the group's
//! requests in priority order, and AS keeps that order because it does not wait for a
//! process the layer says is outranked ([`Scheduler::set_outranked`]): one whose next
//! request the layer would hold back behind a request already queued here. Without that
//! rule, AS would anticipate whichever of the group's readers it served last while the
//! other's released request waited here until its deadline, sharing the limit evenly
//! between an RT and a BE reader.
//!
//! `antic_expire` defaults to 6 ms: the kernel's `HZ/150` jiffies at HZ=1000 (integer
//! division, so 6 rather than 6.67). All times are kept in nanoseconds, so a think time of
//! 20 µs is 20 µs, not 0 jiffies.
//!
//! Where our model differs from the kernel's. A request "dispatched" by the kernel sits on a
//! dispatch list until the driver takes it; here dispatch hands it to the device at once,
//! so the rule "the anticipated process has requests dispatched" counts its requests at the
//! device other than the one anticipation waits for. The policy has no way to say "ask again
//! at the next completion", which is what the kernel does while a request it waits on is
//! still at the device; it answers [`Dispatch::WaitUntil`] a millisecond ahead instead, and
//! the completion asks earlier anyway.
//!
//! `version` (default 20632: Linux 2.6.32, AS's last release) selects an older release's
//! rules, back to 2.6.10; [`VersionBehaviour`] says what changed when. Linux 2.6.28 behaves
//! as 2.6.32.
//!
//! Source: Linux 2.6's `block/as-iosched.c` and the kernel's
//! `Documentation/block/as-iosched.txt`; Iyer & Druschel, "Anticipatory scheduling",
//! SOSP 2001. This is our own code, written from those sources.

mod anticipation;
mod batch;
mod class;
mod fifo;
mod process_stats;
mod queue;
mod version;
#[cfg(test)]
mod version_tests;

pub use anticipation::AnticipationState;
pub use version::{Anticipation as AnticipationRules, Behaviour as VersionBehaviour};

use anticipation::{Anticipation, BreakReason, Candidate};
use batch::Batches;
use class::Class;
use process_stats::{Statistics, ONE};
use queue::Queue;

use crate::merge::SlotKey;
use crate::scheduler::SchedulerContext;
use crate::time::ms;
use crate::trace::{BatchClass, BatchStart, IdleEnd, IdleKind, QueueRef, TraceBuffer};
use crate::tunable::{TunableDef, Tunables};
use crate::{
    Completion, Dispatch, GroupId, Inserted, IoPriority, Nanos, ProcessId, Request, Scheduler,
    TraceEvent,
};

/// Largest value of the kernel's `int` tunables.
const INT_MAX: i64 = i32::MAX as i64;

/// How far ahead to ask for another dispatch while waiting for a completion (the
/// anticipated request, or the old batch at a class change): the completion asks sooner.
const AWAIT_COMPLETION: Nanos = ms(1);

/// Fixed point one: sample weights and probabilities in [`ProcessEstimate`] and
/// [`Estimates`] are ×256.
pub const FIXED_POINT_ONE: u64 = ONE;

/// What AS has learned about one process (the kernel's per-process `as_io_context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessEstimate {
    /// Mean think time: from a sync completion to the process's next sync request.
    pub think_time: Nanos,
    /// Weight of the think-time samples, ×256 (0: none yet; approaches 256).
    pub think_time_samples: u64,
    /// Mean distance, in sectors, from the end of one sync request to the next's start.
    pub seek_distance: u64,
    /// Weight of the seek samples, ×256.
    pub seek_samples: u64,
    /// Requests queued in the scheduler.
    pub queued: usize,
    /// Requests at the device.
    pub in_flight: usize,
    /// Whether the process has exited.
    pub exited: bool,
}

/// What AS assumes about processes it has no history for (the kernel's `est_time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimates {
    /// Think time of a new process.
    pub new_think_time: Nanos,
    /// Seek distance of a new process, in sectors.
    pub new_seek_distance: u64,
    /// Probability ×256 that an anticipated process with no history exits or times out.
    pub exit_probability: u64,
    /// Probability ×256 that an exited anticipated process is not followed by a
    /// cooperating process's close request.
    pub exit_without_cooperation: u64,
}

/// The anticipatory elevator: sync/async batches, deadline FIFOs, and read anticipation.
#[derive(Debug, Clone)]
pub struct Anticipatory {
    /// Queued requests, per class on a sort list and a FIFO.
    queue: Queue,
    /// Which class is being served, and for how long.
    batch: Batches,
    /// Whether, and for whom, the disk is kept idle.
    anticipation: Anticipation,
    /// Per-process think time and seek distance.
    statistics: Statistics,
    /// Per class, where its last dispatched request ended: the elevator's head.
    head: [u64; 2],
    /// `read_expire` and `write_expire`: FIFO deadlines of the sync and async classes.
    fifo_expire: [Nanos; 2],
    /// Batches and anticipation, when tracing is on.
    trace: TraceBuffer,
    /// Tracing: the group and priority of the anticipated process's last sync request.
    anticipated: (GroupId, IoPriority),
    /// Tracing: a FIFO head chosen because it expired, and by how much.
    expired_pick: Option<(SlotKey, Nanos)>,
    /// What the `version` tunable selects.
    behaviour: VersionBehaviour,
}

/// What the dispatch logic settled on (a request may still wait for a class change).
enum Selection {
    /// Send this request.
    Request(SlotKey),
    /// Keep the disk idle for the anticipated process.
    Anticipate,
}

impl Anticipatory {
    /// The tunables, with the kernel's names, units (ms) and defaults (at HZ=1000).
    pub const TUNABLES: &'static [TunableDef] = &[
        TunableDef {
            name: "read_expire",
            default: 125,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "deadline of a sync request; also the spacing of sync FIFO checks",
        },
        TunableDef {
            name: "write_expire",
            default: 250,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "deadline of an async request; also the spacing of async FIFO checks",
        },
        TunableDef {
            name: "read_batch_expire",
            default: 500,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "length of a sync batch while async requests wait",
        },
        TunableDef {
            name: "write_batch_expire",
            default: 125,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "target length of an async batch (its request budget auto-tunes to it)",
        },
        TunableDef {
            name: "antic_expire",
            default: 6,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "longest wait for the anticipated process's next request (0: no anticipation)",
        },
        TunableDef {
            name: "version",
            default: version::NEWEST,
            min: version::OLDEST,
            max: version::NEWEST,
            unit: "kernel",
            help: "behave as this Linux release's AS (2.6.10 = 20610 … 2.6.32 = 20632)",
        },
    ];

    /// An anticipatory elevator with these tunables (resolved against [`Self::TUNABLES`]).
    /// AS assumes one disk head whatever the device; the context is not consulted.
    pub fn new(tunables: &Tunables, _context: &SchedulerContext) -> Self {
        let millis = |name| ms(tunables.get_u64(name));
        let fifo_expire = [millis("read_expire"), millis("write_expire")];
        let batch_expire = [millis("read_batch_expire"), millis("write_batch_expire")];
        let behaviour = VersionBehaviour::of(tunables.get_u64("version"));
        Self {
            queue: Queue::default(),
            batch: Batches::new(batch_expire, fifo_expire).with_behaviour(behaviour),
            anticipation: Anticipation::new(millis("antic_expire"))
                .with_rules(behaviour.anticipation),
            statistics: Statistics::default(),
            head: [0; 2],
            fifo_expire,
            trace: TraceBuffer::default(),
            anticipated: (GroupId::ROOT, IoPriority::default()),
            expired_pick: None,
            behaviour,
        }
    }

    /// What the `version` tunable selected.
    pub fn version_behaviour(&self) -> VersionBehaviour {
        self.behaviour
    }

    /// Where the anticipation state machine is.
    pub fn anticipation_state(&self) -> AnticipationState {
        self.anticipation.state
    }

    /// The process anticipation is about: the one whose sync request was dispatched last.
    pub fn anticipated_process(&self) -> Option<ProcessId> {
        self.anticipation.process
    }

    /// The current request budget of an async batch.
    pub fn write_batch_count(&self) -> u64 {
        self.batch.write_batch_count
    }

    /// Whether the current batch serves the sync class (else the async class).
    pub fn sync_batch(&self) -> bool {
        self.batch.class == Class::Sync
    }

    /// What AS has learned about a process, if it has a history.
    pub fn process_estimate(&self, process: ProcessId) -> Option<ProcessEstimate> {
        let stats = self.statistics.get(process)?;
        Some(ProcessEstimate {
            think_time: stats.think_time.mean,
            think_time_samples: stats.think_time.samples,
            seek_distance: stats.seek_distance.mean,
            seek_samples: stats.seek_distance.samples,
            queued: stats.queued,
            in_flight: stats.in_flight,
            exited: stats.exited,
        })
    }

    /// What AS assumes about processes with no history.
    pub fn estimates(&self) -> Estimates {
        Estimates {
            new_think_time: self.statistics.new_think_time.mean,
            new_seek_distance: self.statistics.new_seek_distance.mean,
            exit_probability: self.statistics.exit_probability,
            exit_without_cooperation: self.statistics.exit_without_cooperation,
        }
    }

    /// Run the anticipation timer if it is due (the kernel's timer callback): the wait is
    /// over, and the exit estimates learn from it.
    fn run_timer(&mut self, now: Nanos) {
        if !self.anticipation.timer_due(now) {
            return;
        }
        self.finish_anticipation(IdleEnd::Timer);
        if let Some(process) = self.anticipation.process {
            self.statistics.anticipation_timed_out(process);
        }
    }

    /// Whether to stop (or not start) waiting, given this candidate.
    fn should_break(&mut self, candidate: Option<Candidate>, now: Nanos) -> bool {
        self.break_reason(candidate, now).is_some()
    }

    /// Why to stop (or not start) waiting, given this candidate.
    fn break_reason(&mut self, candidate: Option<Candidate>, now: Nanos) -> Option<BreakReason> {
        let head = self.head[self.batch.class.index()];
        self.anticipation
            .break_reason(&mut self.statistics, candidate, head, now)
    }

    /// The process anticipation is about, as the trace names it.
    fn anticipated_queue(&self) -> QueueRef {
        QueueRef {
            process: self.anticipation.process,
            group: self.anticipated.0,
            priority: self.anticipated.1,
        }
    }

    /// Start waiting for the anticipated process.
    fn begin_anticipation(&mut self) {
        if self.trace.is_enabled() && self.anticipation.state == AnticipationState::Off {
            let event = TraceEvent::IdleStart {
                queue: self.anticipated_queue(),
                kind: IdleKind::Anticipation,
                window: self.anticipation.expire,
            };
            self.trace.push(event);
        }
        self.anticipation.begin_wait();
    }

    /// Stop waiting for the anticipated process, for `reason`.
    fn finish_anticipation(&mut self, reason: IdleEnd) {
        if self.trace.is_enabled() && self.anticipation.is_waiting() {
            let event = TraceEvent::IdleEnd {
                queue: self.anticipated_queue(),
                kind: IdleKind::Anticipation,
                reason,
            };
            self.trace.push(event);
        }
        self.anticipation.finish();
    }

    /// Whether to keep the disk idle rather than dispatch `next` (or nothing).
    fn can_anticipate(&mut self, next: Option<SlotKey>, now: Nanos) -> bool {
        if self.anticipation.process.is_none()
            || self.anticipation.state == AnticipationState::Finished
        {
            return false;
        }
        let candidate = next.map(|slot| Candidate::new(self.queue.get(slot), true));
        !self.should_break(candidate, now)
    }

    /// Whether the FIFO of `class` is due for a check and its head has expired.
    fn fifo_expired(&mut self, class: Class, now: Nanos) -> bool {
        if !self.batch.fifo_check_due(class, now) {
            return false;
        }
        let Some((deadline, slot)) = self
            .queue
            .fifo_head(class)
            .filter(|&(deadline, _)| now > deadline)
        else {
            return false;
        };
        if self.trace.is_enabled() {
            self.expired_pick = Some((slot, now - deadline));
        }
        true
    }

    /// The head of a class's FIFO; the class is known to have requests queued.
    fn fifo_head(&self, class: Class) -> SlotKey {
        let (_, slot) = self
            .queue
            .fifo_head(class)
            .expect("a chosen class has requests queued");
        slot
    }

    /// Decide what to do with both classes' queues as they are.
    fn select(&mut self, now: Nanos, sync_pending: bool, async_pending: bool) -> Selection {
        let batch_over = sync_pending && async_pending && self.batch.expired(now);
        if !batch_over {
            if let Some(selection) = self.continue_batch(now, async_pending) {
                return selection;
            }
        }
        let class = self.batch.choose_next(sync_pending, async_pending, now);
        let selection = self.serve(self.batch_start(class), class, now);
        if self.trace.is_enabled() {
            let expired = matches!(selection, Selection::Request(slot)
                if self.expired_pick.is_some_and(|(pick, _)| pick == slot));
            self.trace.push(TraceEvent::BatchStart {
                class: match class {
                    Class::Sync => BatchClass::Sync,
                    Class::Async => BatchClass::Async,
                },
                start: if expired {
                    BatchStart::Expired
                } else {
                    BatchStart::FifoHead
                },
                starved: false,
            });
        }
        selection
    }

    /// Where a new batch of `class` starts: its FIFO head, except that before 2.6.24 an async
    /// batch went on in elevator order from where the last async request ended.
    fn batch_start(&self, class: Class) -> SlotKey {
        if class == Class::Async && !self.behaviour.async_batch_at_fifo_head {
            if let Some(slot) = self
                .queue
                .next_in_elevator_order(class, self.head[class.index()])
            {
                return slot;
            }
        }
        self.fifo_head(class)
    }

    /// Continue the current batch: an expired sync FIFO head, anticipation, or the next
    /// request in elevator order. `None` when the batch has nothing left.
    fn continue_batch(&mut self, now: Nanos, async_pending: bool) -> Option<Selection> {
        let class = self.batch.class;
        let next = self
            .queue
            .next_in_elevator_order(class, self.head[class.index()]);
        if class == Class::Sync && self.anticipation.expire > 0 {
            if self.fifo_expired(Class::Sync, now) {
                return Some(Selection::Request(self.fifo_head(Class::Sync)));
            }
            if self.can_anticipate(next, now) {
                return Some(Selection::Anticipate);
            }
        }
        let slot = next?;
        if class == Class::Sync && !async_pending {
            self.batch.extend_sync_batch(now);
        }
        Some(self.serve(slot, class, now))
    }

    /// Serve `slot`, or the FIFO head of `class` if its check is due and it has expired.
    fn serve(&mut self, slot: SlotKey, class: Class, now: Nanos) -> Selection {
        let slot = if self.fifo_expired(class, now) {
            self.fifo_head(class)
        } else {
            slot
        };
        Selection::Request(slot)
    }

    /// Hand a request to the device: the head moves, anticipation turns to its process
    /// (none for async), and the counts follow.
    fn send(&mut self, slot: SlotKey) -> Request {
        if self.trace.is_enabled() {
            self.trace_send(slot);
        }
        let request = self.queue.take(slot);
        let class = Class::of(&request);
        self.head[class.index()] = request.end_sector();
        let previous = self.anticipation.process;
        let anticipated = (class == Class::Sync).then_some(request.process);
        self.anticipation.dispatched(anticipated);
        self.batch.dispatched(class);
        self.statistics.dispatched(request.process);
        if let Some(previous) = previous.filter(|&p| Some(p) != anticipated) {
            self.statistics.forget_if_done(previous, anticipated);
        }
        request
    }

    /// Tracing: the request at `slot` goes to the device; an expired FIFO head says so, and a
    /// sync request's group and priority name the process anticipation turns to.
    #[cold]
    #[inline(never)]
    fn trace_send(&mut self, slot: SlotKey) {
        let request = self.queue.get(slot);
        if Class::of(request) == Class::Sync {
            self.anticipated = (request.group, request.priority);
        }
        if let Some((pick, late)) = self.expired_pick.take() {
            if pick == slot {
                let request = request.id;
                self.trace.push(TraceEvent::FifoExpired { request, late });
            }
        }
    }

    /// The answer while anticipating.
    fn waiting(&self, now: Nanos) -> Dispatch {
        match self.anticipation.state {
            AnticipationState::WaitNext => Dispatch::WaitUntil(self.anticipation.deadline()),
            _ => Dispatch::WaitUntil(now.saturating_add(AWAIT_COMPLETION)),
        }
    }
}

impl Scheduler for Anticipatory {
    fn name(&self) -> &'static str {
        "anticipatory"
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.run_timer(now);
        let process = request.process;
        let request_id = request.id;
        let request = match self.queue.merge(request) {
            Ok(merged) => {
                self.trace.emit(|| TraceEvent::Merge {
                    request: request_id,
                    into: merged.into.0,
                    position: merged.into.1,
                });
                if let Some((into, absorbed)) = merged.coalesced {
                    self.trace.push(TraceEvent::Coalesce { into, absorbed });
                    self.statistics.unqueued(process);
                }
                return Inserted::Merged(merged.carrier);
            }
            Err(request) => request,
        };
        let class = Class::of(&request);
        let candidate = Candidate::new(&request, class == Class::Sync);
        if class == Class::Sync {
            let (sector, end) = (request.sector, request.end_sector());
            self.statistics
                .record_arrival(request.process, sector, end, now);
        }
        self.statistics.queued(request.process);
        let deadline = now.saturating_add(self.fifo_expire[class.index()]);
        self.queue.enqueue(request, class, deadline);
        if self.anticipation.is_waiting() {
            if let Some(reason) = self.break_reason(Some(candidate), now) {
                self.finish_anticipation(idle_end(reason));
            }
        }
        Inserted::Queued
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.run_timer(now);
        let sync_pending = !self.queue.is_empty(Class::Sync);
        let async_pending = !self.queue.is_empty(Class::Async);
        self.batch
            .note_idle_write_batch(sync_pending, async_pending);
        if !sync_pending && !async_pending {
            return Dispatch::Empty;
        }
        if self.anticipation.is_waiting() {
            return self.waiting(now);
        }
        if self.batch.changed {
            return Dispatch::WaitUntil(now.saturating_add(AWAIT_COMPLETION));
        }
        match self.select(now, sync_pending, async_pending) {
            Selection::Request(slot) if self.batch.settle_change(now) => {
                Dispatch::Request(self.send(slot))
            }
            // The class changed and the old batch's requests are still at the device.
            Selection::Request(_) => Dispatch::WaitUntil(now.saturating_add(AWAIT_COMPLETION)),
            Selection::Anticipate => {
                self.begin_anticipation();
                self.waiting(now)
            }
        }
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.run_timer(now);
        let request = &completion.request;
        let class = Class::of(request);
        self.batch.completed(class, now);
        self.statistics
            .completed(request.process, class == Class::Sync, now);
        if self.anticipation.process == Some(request.process) {
            self.anticipation.process_completed(now);
        }
        self.statistics
            .forget_if_done(request.process, self.anticipation.process);
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }

    fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        self.run_timer(now);
        self.anticipation.outranked.remove(&process);
        self.statistics.exited(process);
        let anticipated = self.anticipation.process == Some(process);
        if anticipated && self.anticipation.is_waiting() {
            if let Some(reason) = self.break_reason(None, now) {
                self.finish_anticipation(idle_end(reason));
            }
        }
        self.statistics
            .forget_if_done(process, self.anticipation.process);
    }

    /// An outranked process is not waited for: a wait for it ends now, and none starts
    /// until the layer lifts it (the module doc says why).
    fn set_outranked(&mut self, process: ProcessId, outranked: bool, now: Nanos) {
        self.run_timer(now);
        if !outranked {
            self.anticipation.outranked.remove(&process);
            return;
        }
        self.anticipation.outranked.insert(process);
        if self.anticipation.process == Some(process) && self.anticipation.is_waiting() {
            self.finish_anticipation(IdleEnd::Outranked);
        }
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}

/// How the trace names the reason anticipation was broken.
fn idle_end(reason: BreakReason) -> IdleEnd {
    match reason {
        BreakReason::NoProcess => IdleEnd::ServiceEnded,
        BreakReason::SameProcess => IdleEnd::RequestArrived,
        BreakReason::Outranked => IdleEnd::Outranked,
        BreakReason::TimedOut => IdleEnd::Timer,
        BreakReason::Queued | BreakReason::Dispatched => IdleEnd::OtherRequests,
        BreakReason::Close | BreakReason::BetterThanExpected => IdleEnd::CloseRequest,
        BreakReason::Exited => IdleEnd::ProcessExited,
        BreakReason::ExitLikely => IdleEnd::ExitLikely,
        BreakReason::ThinkTime => IdleEnd::ThinkTime,
    }
}
