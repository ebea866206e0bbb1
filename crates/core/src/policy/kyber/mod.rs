//! The blk-mq **kyber** elevator (Linux 4.12 and later): requests split into scheduling
//! domains (read, write, discard, other), each with a device-wide budget of *tokens* that
//! bounds its requests at the device, and a timer that resizes the budgets so that each
//! domain's latency stays near its target.
//!
//! This module owns the domains' queues, their tokens and the dispatch rotation; the
//! latency histograms and the timer are in [`latency`], the domains' constants in
//! [`domain`].
//!
//! - *Queues*: each domain is a FIFO in arrival order, with the merging every elevator
//!   gets from the block layer (back and front merges of contiguous requests of the same
//!   process, [`crate::merge`]); a request merges only within its domain. There is no
//!   sorting, no per-process fairness and no priority.
//! - *Tokens*: a request takes one of its domain's tokens when dispatched and gives it back
//!   when it completes; a domain with none left sends nothing until one comes back. Depths
//!   start at read 256, write 128, discard 64, other 16, and never grow past that.
//! - *Dispatch*: the domain being served sends up to its batch (read 16, write 8, discard
//!   and other 1) in a row; when its batch is spent, or it has no request or no token, the
//!   rotation moves to the next domain (read, write, discard, other, read, …) that has
//!   both, starting a new batch there.
//! - *Feedback*: every completion of a read, write or discard adds its total and I/O
//!   latency to the domain's histograms and arms a 100 ms timer ([`latency`]). A policy
//!   reads no clock, so the timer fires at the first call (insert, dispatch, completion)
//!   at or after its time, acting as of its time: nothing the policy decides in between
//!   depends on it, so this is exactly when the kernel's timer would have acted.
//!
//! Tunables: `read_lat_nsec` and `write_lat_nsec`, the kernel's sysfs names and unit
//! (nanoseconds; 2 ms and 10 ms by default), and the queue's `nomerges`.
//!
//! Departures from the kernel: one hardware queue and one software queue, so a domain's
//! requests leave in arrival order (the kernel flushes per-CPU lists in CPU order); a
//! request stays mergeable until it is dispatched (the kernel stops merging into a domain's
//! requests once a dispatch has moved them to the hardware queue's list); tokens are a count
//! (a shrunk sbitmap may still hand out a bit while more requests than the new depth are
//! out, if theirs are past it); the request model has no flushes, so the other domain stays
//! empty (discards, fio's trims, fill the discard domain); and the 75% of scheduler tags the kernel keeps from async
//! requests (`async_depth`, enforced where tags are allocated, before the elevator) has no
//! counterpart.
//!
//! Source: Linux's `block/kyber-iosched.c` (6.x): `kyber_sched_domain`,
//! `kyber_dispatch_request`, `kyber_dispatch_cur_domain`, `kyber_get_domain_token`,
//! `kyber_finish_request`, `kyber_completed_request`, `kyber_timer_fn`; and the kernel's
//! `Documentation/block/kyber-iosched.rst` for the tunables. This is our own code, written
//! from those sources.

pub mod domain;
pub mod latency;

use crate::policy::noop::Noop;
use crate::trace::TraceBuffer;
use crate::tunable::{TunableDef, Tunables};
use crate::{Completion, Dispatch, Inserted, Nanos, Request, Scheduler, TraceEvent};
use domain::{Domain, DOMAINS};
use latency::LatencyFeedback;

/// The kyber elevator.
#[derive(Debug, Clone)]
pub struct Kyber {
    /// One FIFO per domain, in rotation order.
    queues: [Noop; DOMAINS],
    /// Each domain's tokens: the most of its requests at the device at once.
    depths: [usize; DOMAINS],
    /// Each domain's requests dispatched and not yet completed (tokens in use).
    in_flight: [usize; DOMAINS],
    /// The domain being served.
    current: Domain,
    /// Requests sent in the current batch.
    batching: usize,
    /// Latency histograms and the timer that resizes `depths`.
    feedback: LatencyFeedback,
    /// The queues' merges and the depth changes, when tracing is on.
    trace: TraceBuffer,
}

impl Kyber {
    /// The tunables, with the kernel's names, units and defaults.
    pub const TUNABLES: &'static [TunableDef] = &[
        TunableDef {
            name: "read_lat_nsec",
            default: 2_000_000,
            min: 0,
            max: i64::MAX,
            unit: "ns",
            help: "target latency of reads; past it, the other domains are throttled",
        },
        TunableDef {
            name: "write_lat_nsec",
            default: 10_000_000,
            min: 0,
            max: i64::MAX,
            unit: "ns",
            help: "target latency of writes; past it, the other domains are throttled",
        },
        Noop::TUNABLES[0],
    ];

    /// A kyber elevator with these tunables (resolved against [`Self::TUNABLES`]).
    pub fn new(tunables: &Tunables) -> Self {
        Self {
            queues: std::array::from_fn(|_| Noop::new(tunables)),
            depths: Domain::ALL.map(Domain::max_depth),
            in_flight: [0; DOMAINS],
            current: Domain::Read,
            batching: 0,
            feedback: LatencyFeedback::new(
                tunables.get_u64("read_lat_nsec"),
                tunables.get_u64("write_lat_nsec"),
            ),
            trace: TraceBuffer::default(),
        }
    }

    /// A domain's token depth now.
    pub fn depth(&self, domain: Domain) -> usize {
        self.depths[domain.index()]
    }

    /// A domain's requests at the device now (tokens in use).
    pub fn in_flight(&self, domain: Domain) -> usize {
        self.in_flight[domain.index()]
    }

    /// The domain being served.
    pub fn current_domain(&self) -> Domain {
        self.current
    }

    /// When the depth timer fires next, if armed.
    pub fn timer(&self) -> Option<Nanos> {
        self.feedback.timer()
    }

    /// Run the depth timer if its time has come.
    fn catch_up(&mut self, now: Nanos) {
        self.feedback
            .fire_if_due(now, &mut self.depths, &mut self.trace);
    }

    /// The current domain's oldest request, if it has one and a token for it.
    fn dispatch_current(&mut self, now: Nanos) -> Option<Request> {
        let index = self.current.index();
        if self.in_flight[index] >= self.depths[index] {
            return None;
        }
        let answer = self.queues[index].dispatch(now);
        self.trace.pull(&mut self.queues[index]);
        let Dispatch::Request(request) = answer else {
            return None;
        };
        self.batching += 1;
        self.in_flight[index] += 1;
        Some(request)
    }
}

impl Scheduler for Kyber {
    fn name(&self) -> &'static str {
        "kyber"
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.catch_up(now);
        let index = Domain::of(&request).index();
        let inserted = self.queues[index].insert(request, now);
        self.trace.pull(&mut self.queues[index]);
        inserted
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.catch_up(now);
        if self.batching < self.current.batch() {
            if let Some(request) = self.dispatch_current(now) {
                return Dispatch::Request(request);
            }
        }
        // The batch is spent, or the domain has nothing or no token: a new batch in the
        // next domain that can send, back round to this one if no other can.
        self.batching = 0;
        for _ in 0..DOMAINS {
            self.current = self.current.next();
            if let Some(request) = self.dispatch_current(now) {
                return Dispatch::Request(request);
            }
        }
        // Nothing queued, or only in domains out of tokens: a completion gives one back
        // and brings the next call.
        Dispatch::Empty
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.catch_up(now);
        let request = &completion.request;
        let domain = Domain::of(request);
        let index = domain.index();
        self.in_flight[index] = self.in_flight[index].saturating_sub(1);
        self.feedback
            .record(domain, request.submit_time, completion.dispatch_time, now);
        self.queues[index].complete(completion, now);
    }

    fn queued(&self) -> usize {
        self.queues.iter().map(Scheduler::queued).sum()
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
        for queue in &mut self.queues {
            queue.set_tracing(on);
        }
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}
