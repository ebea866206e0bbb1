//! The recorder: trace events in, spans out. It keeps what is open (requests at the device,
//! the current batch, idle windows, slices, budgets, raisings, the group in service, holds)
//! and closes each into a span for the [`Store`] when its end comes; it keeps no event.
//!
//! Where each event lands:
//!
//! | events | mark | lane |
//! |---|---|---|
//! | `dispatch` … `complete` | `service` (busy periods, merged back to back) | the request's process |
//! | `batch_start` (to the next one) | `batch` | device |
//! | `fifo_expired` | `fifo_expired` (instant) | device |
//! | `idle_start` … `idle_end` | `idle`, `group_idle`, `anticipation`, `linger` | the queue waited for |
//! | `slice_start` … `slice_end` | `slice` | the queue |
//! | `budget_start` … `budget_end` | `budget` | the queue |
//! | `raise_start` … `raise_end` | `raise` | the queue |
//! | `group_start` … `group_end` (or the next `group_start`) | `group` | the group |
//! | `hold` … `release` (while any is held) | `hold` | the process |
//! | `outranked` on … off | `outranked` | the process |
//! | `preempt` | `preempt` (instant) | both queues |
//! | `inject` | `inject` (instant) | the injected queue |
//! | `queue_merge`, `queue_split` | instants | the process (and the shared queue) |
//! | `group_move` | `group_move` (instant) | the queue |
//! | `domain_depth`, `vrate_adjust` | `control` (instant) | device |
//! | `latency_scale`, `latency_depth` | `control` (instant) | the parent, the group |
//!
//! A queue's lane is its process's for a sync queue, its own for an async queue. What is
//! still open at the end closes at the last event's time.

mod controls;
mod limits;
mod queues;

use std::collections::BTreeMap;

use ioslice_core::trace::{
    BatchClass, BatchStart, IdleEnd, IdleKind, PreemptReason, QueueRef, RequestInfo, TraceEvent,
};
use ioslice_core::{Direction, GroupTree, Nanos, TraceSink};

use crate::coarsen::{Span, Store, Stores, BASE_RESOLUTION, DEFAULT_CAP};
use crate::kind::MarkKind;
use crate::label::{batch_class, idle_end, preempt_reason, Label};
use crate::lanes::{queue_name, Lanes, DEVICE};
use crate::text::duration;
use crate::{Detail, Mark, Sampling, Timeline};
use limits::Held;
use queues::{Budget, GroupTurn, Raise, Slice};

/// Builds a [`Timeline`] from a run's trace events.
#[derive(Debug)]
pub struct TimelineRecorder {
    lanes: Lanes,
    store: Stores,
    now: Nanos,
    in_flight: BTreeMap<u64, u32>,
    busy: BTreeMap<u32, Busy>,
    batch: Option<Batch>,
    waits: BTreeMap<(u32, MarkKind), Wait>,
    slices: BTreeMap<u32, Slice>,
    budgets: BTreeMap<u32, Budget>,
    raises: BTreeMap<u32, Raise>,
    group: Option<GroupTurn>,
    held: BTreeMap<u64, u32>,
    holds: BTreeMap<u32, Held>,
    outranked: BTreeMap<u32, Nanos>,
}

/// A lane's requests at the device, from the first dispatch while none was there to the
/// completion that leaves none.
#[derive(Debug)]
struct Busy {
    start: Nanos,
    in_flight: u32,
    first: RequestInfo,
    merged: u32,
    reads: u64,
    writes: u64,
}

#[derive(Debug)]
struct Batch {
    start: Nanos,
    last: Nanos,
    class: BatchClass,
    from: BatchStart,
    starved: bool,
    dispatched: u64,
}

#[derive(Debug)]
struct Wait {
    start: Nanos,
    queue: QueueRef,
    window: Nanos,
}

impl Default for TimelineRecorder {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl TimelineRecorder {
    /// A recorder whose process lanes are named `process_names[i]` for the process with
    /// index `i + 1` (the simulator's and the runner's numbering; 0 is the flusher).
    pub fn new(process_names: Vec<String>) -> Self {
        Self::with_cap(process_names, DEFAULT_CAP)
    }

    /// As [`TimelineRecorder::new`], keeping at most `cap` marks (see the crate's
    /// down-sampling rule).
    pub fn with_cap(process_names: Vec<String>, cap: usize) -> Self {
        Self {
            lanes: Lanes::new(process_names),
            store: Stores {
                overview: Store::new(cap, BASE_RESOLUTION),
                detail: None,
            },
            now: 0,
            in_flight: BTreeMap::new(),
            busy: BTreeMap::new(),
            batch: None,
            waits: BTreeMap::new(),
            slices: BTreeMap::new(),
            budgets: BTreeMap::new(),
            raises: BTreeMap::new(),
            group: None,
            held: BTreeMap::new(),
            holds: BTreeMap::new(),
            outranked: BTreeMap::new(),
        }
    }

    /// The same recorder keeping, beside the marks drawn at first, a finer record of at
    /// most `detail_cap` marks for zooming in ([`Timeline::detail`]; see the crate's
    /// down-sampling rule).
    pub fn with_detail(mut self, detail_cap: usize) -> Self {
        self.store.detail = Some(Store::new(detail_cap, BASE_RESOLUTION));
        self
    }

    /// The timeline: what is still open closes at the last event's time.
    pub fn finish(mut self) -> Timeline {
        let now = self.now;
        for (lane, busy) in std::mem::take(&mut self.busy) {
            self.close_busy(lane, busy, now);
        }
        self.in_flight.clear();
        if let Some(batch) = self.batch.take() {
            self.close_batch(batch, now);
        }
        for ((lane, kind), wait) in std::mem::take(&mut self.waits) {
            self.close_wait(lane, kind, wait, "run_ended");
        }
        for (lane, slice) in std::mem::take(&mut self.slices) {
            self.close_slice(lane, slice, "run_ended", None);
        }
        for (lane, budget) in std::mem::take(&mut self.budgets) {
            let sectors = format!(", {} sectors", budget.sectors);
            self.close_budget(lane, budget, "run_ended", sectors);
        }
        for (lane, raise) in std::mem::take(&mut self.raises) {
            self.close_raise(lane, raise, "run_ended");
        }
        if let Some(turn) = self.group.take() {
            self.close_group(turn, String::from("still in service at the end"));
        }
        for (lane, held) in std::mem::take(&mut self.holds) {
            self.close_hold(lane, held);
        }
        for (lane, start) in std::mem::take(&mut self.outranked) {
            self.close_outranked(lane, start);
        }
        let (spans, sampling) = self.store.overview.finish();
        let (lanes, remap) = self.lanes.finish();
        let marks = marks_of(spans, &sampling, &remap);
        // A detail is worth its bytes only where the overview was coarsened.
        let detail = self
            .store
            .detail
            .map(Store::finish)
            .filter(|_| sampling.resolution > 0)
            .map(|(spans, sampling)| Detail {
                marks: marks_of(spans, &sampling, &remap),
                sampling,
            });
        Timeline {
            lanes,
            marks,
            duration: now,
            sampling,
            detail,
        }
    }

    fn instant(&mut self, lane: u32, kind: MarkKind, label: String, reason: &'static str) {
        let now = self.now;
        self.store
            .push(Span::new(lane, kind, now, now, Label::Text(label), reason));
    }

    fn dispatch(&mut self, request: &RequestInfo, merged: u32) {
        let lane = self.lanes.process(request.process);
        self.lanes.note_group(lane, request.group);
        self.in_flight.insert(request.id.0, lane);
        let now = self.now;
        let busy = self.busy.entry(lane).or_insert(Busy {
            start: now,
            in_flight: 0,
            first: *request,
            merged,
            reads: 0,
            writes: 0,
        });
        busy.in_flight = busy.in_flight.saturating_add(1);
        match request.direction {
            Direction::Read => busy.reads += 1,
            // A discard counts with the writes, its data direction.
            Direction::Write | Direction::Discard => busy.writes += 1,
        }
        if let Some(batch) = &mut self.batch {
            batch.dispatched += 1;
            batch.last = now;
        }
    }

    fn complete(&mut self, request: &RequestInfo) {
        let now = self.now;
        if let Some(batch) = &mut self.batch {
            batch.last = now;
        }
        let Some(lane) = self.in_flight.remove(&request.id.0) else {
            return;
        };
        let done = match self.busy.get_mut(&lane) {
            Some(busy) => {
                busy.in_flight = busy.in_flight.saturating_sub(1);
                busy.in_flight == 0
            }
            None => false,
        };
        if done {
            if let Some(busy) = self.busy.remove(&lane) {
                self.close_busy(lane, busy, now);
            }
        }
    }

    fn close_busy(&mut self, lane: u32, busy: Busy, end: Nanos) {
        let count = busy.reads + busy.writes;
        let label = Label::Request {
            request: busy.first,
            merged: busy.merged,
            length: end.saturating_sub(busy.start),
        };
        let mut span = Span::new(lane, MarkKind::Service, busy.start, end, label, "");
        span.count = count.max(1);
        span.reasons = [("read", busy.reads), ("write", busy.writes)]
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect();
        self.store.push(span);
    }

    fn batch_start(&mut self, class: BatchClass, from: BatchStart, starved: bool) {
        let now = self.now;
        if let Some(batch) = self.batch.take() {
            let end = batch.last.max(batch.start).min(now);
            self.close_batch(batch, end);
        }
        self.batch = Some(Batch {
            start: now,
            last: now,
            class,
            from,
            starved,
            dispatched: 0,
        });
    }

    fn close_batch(&mut self, batch: Batch, end: Nanos) {
        let end = end.max(batch.last).max(batch.start);
        let from = match batch.from {
            BatchStart::Expired => "from an expired FIFO head",
            BatchStart::FifoHead => "from the FIFO head",
            BatchStart::Sorted => "sweeping on in sector order",
        };
        let label = format!(
            "{} batch {from}{}: {} dispatched over {}",
            batch_class(batch.class),
            if batch.starved {
                " (forced: writes starved)"
            } else {
                ""
            },
            plural(batch.dispatched, "request", "requests"),
            duration(end.saturating_sub(batch.start)),
        );
        let reason = batch_class(batch.class);
        self.store.push(Span::new(
            DEVICE,
            MarkKind::Batch,
            batch.start,
            end,
            Label::Text(label),
            reason,
        ));
    }

    fn idle_start(&mut self, queue: &QueueRef, kind: IdleKind, window: Nanos) {
        let lane = self.lanes.queue(queue);
        let kind = wait_kind(kind);
        let wait = Wait {
            start: self.now,
            queue: *queue,
            window,
        };
        if let Some(open) = self.waits.insert((lane, kind), wait) {
            self.close_wait(lane, kind, open, "restarted");
        }
    }

    fn idle_end(&mut self, queue: &QueueRef, kind: IdleKind, reason: IdleEnd) {
        let lane = self.lanes.queue(queue);
        let kind = wait_kind(kind);
        if let Some(open) = self.waits.remove(&(lane, kind)) {
            self.close_wait(lane, kind, open, idle_end(reason));
        }
    }

    fn close_wait(&mut self, lane: u32, kind: MarkKind, wait: Wait, reason: &'static str) {
        let now = self.now;
        let label = Label::Wait {
            kind,
            queue: wait.queue,
            window: wait.window,
            length: now.saturating_sub(wait.start),
            reason,
        };
        self.store
            .push(Span::new(lane, kind, wait.start, now, label, reason));
    }

    fn preempt(&mut self, queue: &QueueRef, by: &QueueRef, reason: PreemptReason) {
        let reason = preempt_reason(reason);
        let (victim, winner) = (queue_name(queue), queue_name(by));
        let lane = self.lanes.queue(queue);
        let label = format!("{victim} preempted by {winner}: {reason}");
        self.instant(lane, MarkKind::Preempt, label, reason);
        let lane = self.lanes.queue(by);
        let label = format!("{winner} preempts {victim}: {reason}");
        self.instant(lane, MarkKind::Preempt, label, reason);
    }
}

impl TraceSink for TimelineRecorder {
    fn start(&mut self, groups: &GroupTree) {
        self.lanes.set_groups(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        self.now = self.now.max(time);
        match event {
            TraceEvent::Insert { .. } | TraceEvent::Merge { .. } | TraceEvent::Coalesce { .. } => {}
            TraceEvent::DomainDepth { .. }
            | TraceEvent::VrateAdjust { .. }
            | TraceEvent::LatencyScale { .. }
            | TraceEvent::LatencyDepth { .. } => self.control(event),
            TraceEvent::Dispatch { request, merged } => self.dispatch(request, *merged),
            TraceEvent::Complete { request, .. } => self.complete(request),
            TraceEvent::FifoExpired { request, late } => {
                let label = format!(
                    "FIFO expired: request {} served {} past its deadline",
                    request.0,
                    duration(*late)
                );
                self.instant(DEVICE, MarkKind::FifoExpired, label, "");
            }
            TraceEvent::BatchStart {
                class,
                start,
                starved,
            } => self.batch_start(*class, *start, *starved),
            TraceEvent::Inject {
                request,
                queue,
                holder,
            } => {
                let lane = self.lanes.queue(queue);
                let label = format!(
                    "request {} of {} injected while the device is held for {}",
                    request.0,
                    queue_name(queue),
                    queue_name(holder)
                );
                self.instant(lane, MarkKind::Inject, label, "");
            }
            TraceEvent::SliceStart { queue } => self.slice_start(queue),
            TraceEvent::SliceTimer { queue, length } => self.slice_timer(queue, *length),
            TraceEvent::SliceEnd {
                queue,
                reason,
                dispatched,
            } => self.slice_end(queue, *reason, *dispatched),
            TraceEvent::BudgetStart {
                queue,
                budget,
                timeout,
                raising,
            } => self.budget_start(queue, *budget, *timeout, *raising),
            TraceEvent::BudgetEnd {
                queue,
                reason,
                service,
                budget,
                charged,
                next_budget,
            } => {
                let served = format!(
                    ": {service} of {budget} sectors served, charged {charged}, next budget \
                     {next_budget}"
                );
                self.budget_end(queue, *reason, served);
            }
            TraceEvent::Preempt { queue, by, reason } => self.preempt(queue, by, *reason),
            TraceEvent::IdleStart {
                queue,
                kind,
                window,
            } => self.idle_start(queue, *kind, *window),
            TraceEvent::IdleEnd {
                queue,
                kind,
                reason,
            } => self.idle_end(queue, *kind, *reason),
            TraceEvent::RaiseStart {
                queue,
                kind,
                coefficient,
                duration,
            } => self.raise_start(queue, *kind, *coefficient, *duration),
            TraceEvent::RaiseEnd { queue, reason, .. } => self.raise_end(queue, *reason),
            TraceEvent::GroupStart {
                group,
                class,
                workload,
                slice,
                resumed,
            } => self.group_start(*group, *class, *workload, *slice, *resumed),
            TraceEvent::GroupEnd {
                group,
                charge,
                unit,
            } => self.group_end(*group, *charge, *unit),
            TraceEvent::GroupMove { queue, to } => {
                let lane = self.lanes.queue(queue);
                let label = format!(
                    "{} moves from group {} to {}",
                    queue_name(queue),
                    self.lanes.group_name(queue.group),
                    self.lanes.group_name(*to)
                );
                self.instant(lane, MarkKind::GroupMove, label, "");
            }
            TraceEvent::Hold {
                request,
                process,
                group,
                direction,
                bytes,
                wait: _,
            } => self.hold(request.0, *process, *group, *direction, *bytes),
            TraceEvent::Release {
                request, waited, ..
            } => self.release(request.0, *waited),
            TraceEvent::Outranked { process, outranked } => self.outranked(*process, *outranked),
            TraceEvent::QueueMerge {
                process,
                from,
                into,
            } => {
                let lane = self.lanes.process(*process);
                let label = format!(
                    "p{} merged into {} (from {})",
                    process.0,
                    queue_name(into),
                    queue_name(from)
                );
                self.instant(lane, MarkKind::QueueMerge, label.clone(), "");
                let shared = self.lanes.queue(into);
                if shared != lane {
                    self.instant(shared, MarkKind::QueueMerge, label, "");
                }
            }
            TraceEvent::QueueSplit { process, from } => {
                let lane = self.lanes.process(*process);
                let label = format!(
                    "p{} splits from the shared queue {}",
                    process.0,
                    queue_name(from)
                );
                self.instant(lane, MarkKind::QueueSplit, label, "");
            }
        }
    }
}

/// Spans as marks on the lanes as finally numbered (`remap`), labelled at the gaps they were
/// merged across.
fn marks_of(spans: Vec<Span>, sampling: &Sampling, remap: &[u32]) -> Vec<Mark> {
    let gaps: BTreeMap<MarkKind, Nanos> = MarkKind::ALL
        .into_iter()
        .map(|kind| (kind, gap_of(kind, sampling)))
        .collect();
    spans
        .into_iter()
        .map(|span| {
            let gap = gaps.get(&span.kind).copied().unwrap_or(0);
            let length = span.end.saturating_sub(span.start);
            let coverage = if length == 0 {
                1000
            } else {
                (u128::from(span.covered.min(length)) * 1000 / u128::from(length)) as u32
            };
            Mark {
                lane: remap.get(span.lane as usize).copied().unwrap_or(0),
                start: span.start,
                end: span.end,
                kind: span.kind.name().to_string(),
                label: span.describe(gap),
                count: span.count,
                coverage,
            }
        })
        .collect()
}

fn gap_of(kind: MarkKind, sampling: &Sampling) -> Nanos {
    if kind.streams() {
        sampling.base_resolution.max(sampling.resolution)
    } else {
        sampling.resolution
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

fn wait_kind(kind: IdleKind) -> MarkKind {
    match kind {
        IdleKind::Queue => MarkKind::Idle,
        IdleKind::Group => MarkKind::GroupIdle,
        IdleKind::Anticipation => MarkKind::Anticipation,
        IdleKind::Linger => MarkKind::Linger,
    }
}
