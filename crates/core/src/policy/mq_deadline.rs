//! The blk-mq **mq-deadline** elevator of Linux 5.14 and later: the deadline elevator once per
//! I/O priority level, with strict priority between the levels and aging against starvation.
//!
//! This module owns the priority levels and the choice between them; each level is a complete
//! legacy [`Deadline`] elevator of its own (sort lists and FIFOs per direction, batches of
//! `fifo_batch`, `writes_starved`, expiry, merging and coalescing), built with the same
//! tunables. There are three levels: RT, BE and IDLE. A request goes to its class's level
//! (the kernel's class NONE is already BE here); the levels within a class are ignored. A
//! request merges only with requests of its own level.
//!
//! A level is *busy* while it holds requests that have not completed: queued in it, or
//! dispatched and still at the device (the kernel's `dd_queued()`, inserted less completed).
//! Each dispatch:
//! 1. *Aging*: if at least two levels are busy, BE and then IDLE are asked for the request
//!    they would send next, which is sent only if it was inserted at or before
//!    `now - prio_aging_expire` (asking a level that refuses changes nothing in it).
//! 2. Otherwise RT, BE and IDLE are walked in that order: the first level with a queued
//!    request sends it, and a busy level with nothing queued (its requests are all at the
//!    device) stops the walk, so nothing of a lower level goes out meanwhile. That is
//!    strict priority: a lower level waits until the higher ones have completed everything.
//!
//! On a zoned device (the `zone_sectors` and `conventional_zones` tunables, which a driver
//! sets from the device, as the kernel reads the queue's zone layout) each level dispatches
//! only writes whose sequential zone has no write at the device (zone write locking, see
//! [`crate::policy::zone_lock`]): the sort-list continuation and the FIFO head of a write
//! batch pass over writes to locked zones (`deadline_next_request`, `deadline_fifo_request`),
//! and writes count as waiting for the starvation test only when one of them can go. With
//! only writes to locked zones queued nothing is dispatched until a completion unlocks one.
//! On a rotational device the kernel also skips a run of contiguous writes after a locked
//! one (`deadline_skip_seq_writes`, to keep a stream that crosses into the next zone whole)
//! and prefers a write batch to start at the start of a run; here each write is judged on
//! its own zone.
//!
//! Departures from the kernel: the batch state (`batching`, `starved`, the direction of the
//! batch) is per level here, where the kernel keeps one for the whole elevator; a level
//! that refuses an aged dispatch is left unchanged, where the kernel has already chosen the
//! batch's direction; `AT_HEAD` insertions and `async_depth` have no counterpart (nothing
//! inserts at the head, and by default the kernel's `async_depth` limits nothing).
//!
//! Source: Linux's `block/mq-deadline.c` as of 6.x (with priority levels and aging):
//! `dd_dispatch_request`, `dd_dispatch_prio_aged_requests` and `__dd_dispatch_request`
//! (zone write locking as in 5.x–6.9, `dd_finish_request` unlocking); and
//! the kernel's `Documentation/block/deadline-iosched.rst` for `prio_aging_expire`. This is our
//! own code, written from those sources.

use crate::policy::deadline::Deadline;
use crate::policy::zone_lock::ZoneWriteLocks;
use crate::time::ms;
use crate::trace::TraceBuffer;
use crate::tunable::{TunableDef, Tunables};
use crate::{
    Completion, Dispatch, Inserted, IoPriority, Nanos, PriorityClass, Request, Scheduler,
    TraceEvent,
};

/// The priority levels, highest first: RT, BE, IDLE (indexed by [`PriorityClass::index`]).
const LEVELS: usize = PriorityClass::ALL.len();

/// The levels aging may serve ahead of higher ones, in the order it asks them.
const AGING_ORDER: [PriorityClass; 2] = [PriorityClass::BestEffort, PriorityClass::Idle];

/// The level a request of this priority is queued at.
fn level(priority: IoPriority) -> usize {
    priority.class.index()
}

/// The mq-deadline elevator: one deadline elevator per priority class, served in strict
/// priority order, except that a best-effort or idle request that has waited
/// `prio_aging_expire` goes ahead of the higher levels.
#[derive(Debug, Clone)]
pub struct MqDeadline {
    /// One deadline elevator per level, RT, BE, IDLE.
    levels: [Deadline; LEVELS],
    /// Requests of each level dispatched and not yet completed.
    in_flight: [usize; LEVELS],
    /// How long a BE or IDLE request waits before aging lets it pass higher levels.
    prio_aging_expire: Nanos,
    /// The sequential zones with a write at the device (none on a device without zones).
    zone_locks: ZoneWriteLocks,
    /// The levels' events, pulled in the order they happened.
    trace: TraceBuffer,
}

impl MqDeadline {
    /// The tunables, with the kernel's names, units and defaults: the deadline elevator's,
    /// then `prio_aging_expire`.
    pub const TUNABLES: &'static [TunableDef] = &[
        Deadline::TUNABLES[0],
        Deadline::TUNABLES[1],
        Deadline::TUNABLES[2],
        Deadline::TUNABLES[3],
        Deadline::TUNABLES[4],
        TunableDef {
            name: "prio_aging_expire",
            default: 10_000,
            min: 0,
            max: i32::MAX as i64,
            unit: "ms",
            help: "wait after which a BE or IDLE request is served ahead of higher priority levels",
        },
        TunableDef {
            name: "zone_sectors",
            default: 0,
            min: 0,
            max: i64::MAX,
            unit: "sectors",
            help: "zone size of a zoned device (0: not zoned); set from the device",
        },
        TunableDef {
            name: "conventional_zones",
            default: 0,
            min: 0,
            max: i64::MAX,
            unit: "zones",
            help: "conventional zones at the start of a zoned device; set from the device",
        },
    ];

    /// An mq-deadline elevator with these tunables (resolved against [`Self::TUNABLES`]).
    pub fn new(tunables: &Tunables) -> Self {
        Self {
            levels: std::array::from_fn(|_| Deadline::new(tunables)),
            in_flight: [0; LEVELS],
            prio_aging_expire: ms(tunables.get_u64("prio_aging_expire")),
            zone_locks: ZoneWriteLocks::new(
                tunables.get_u64("zone_sectors"),
                tunables.get_u64("conventional_zones"),
            ),
            trace: TraceBuffer::default(),
        }
    }

    /// Whether a level holds requests that have not completed (queued, or at the device).
    fn busy(&self, level: usize) -> bool {
        self.in_flight[level] > 0 || self.levels[level].queued() > 0
    }

    /// Aging: with at least two levels busy, the first of BE and IDLE whose next request
    /// was inserted at or before `now - prio_aging_expire` sends it.
    fn dispatch_aged(&mut self, now: Nanos) -> Option<(usize, Request)> {
        let busy = (0..LEVELS).filter(|&level| self.busy(level)).count();
        if busy < 2 {
            return None;
        }
        // Before the clock reaches prio_aging_expire nothing can have waited that long.
        let cutoff = now.checked_sub(self.prio_aging_expire)?;
        let locks = &self.zone_locks;
        let admit = |request: &Request| locks.can_dispatch(request);
        AGING_ORDER.iter().find_map(|class| {
            let level = class.index();
            let request = self.levels[level].dispatch_inserted_by(now, cutoff, &admit);
            self.trace.pull(&mut self.levels[level]);
            request.map(|request| (level, request))
        })
    }

    /// Strict priority: the highest level with a queued request sends it, unless a higher
    /// level still has requests at the device.
    fn dispatch_by_priority(&mut self, now: Nanos) -> Option<(usize, Request)> {
        let locks = &self.zone_locks;
        let admit = |request: &Request| locks.can_dispatch(request);
        for level in 0..LEVELS {
            let answer = self.levels[level].dispatch_admitted(now, &admit);
            self.trace.pull(&mut self.levels[level]);
            if let Dispatch::Request(request) = answer {
                return Some((level, request));
            }
            if self.busy(level) {
                return None;
            }
        }
        None
    }
}

impl Scheduler for MqDeadline {
    fn name(&self) -> &'static str {
        "mq-deadline"
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        let level = level(request.priority);
        let inserted = self.levels[level].insert(request, now);
        self.trace.pull(&mut self.levels[level]);
        inserted
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        let sent = match self.dispatch_aged(now) {
            Some(sent) => Some(sent),
            None => self.dispatch_by_priority(now),
        };
        match sent {
            Some((level, request)) => {
                self.in_flight[level] += 1;
                self.zone_locks.dispatched(&request);
                Dispatch::Request(request)
            }
            // Nothing queued, or only below a level whose requests are at the device: its
            // completion brings the next call.
            None => Dispatch::Empty,
        }
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        let level = level(completion.request.priority);
        self.in_flight[level] = self.in_flight[level].saturating_sub(1);
        self.zone_locks.completed(&completion.request);
        self.levels[level].complete(completion, now);
        self.trace.pull(&mut self.levels[level]);
    }

    fn queued(&self) -> usize {
        self.levels.iter().map(Scheduler::queued).sum()
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
        for level in &mut self.levels {
            level.set_tracing(on);
        }
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tunables_are_deadlines_then_aging_and_zones() {
        let (shared, own) = MqDeadline::TUNABLES.split_at(Deadline::TUNABLES.len());
        assert_eq!(shared, Deadline::TUNABLES);
        assert_eq!(
            own.iter()
                .map(|def| (def.name, def.default, def.unit))
                .collect::<Vec<_>>(),
            vec![
                ("prio_aging_expire", 10_000, "ms"),
                ("zone_sectors", 0, "sectors"),
                ("conventional_zones", 0, "zones"),
            ]
        );
    }
}
