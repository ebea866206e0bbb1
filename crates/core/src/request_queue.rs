//! A device's request queue as both drivers run it, the simulator and the engine: the policy
//! (the queue's elevator), the trace of what it decides, and the dispatch loop
//! ([`run_queue`]) that asks it for a request while the device has room. Each call to the
//! policy goes through [`RequestQueue`], which records the driver's side of it (an arrival, a
//! dispatch, a completion) and collects the policy's own events when the run is traced, so
//! that the loop and its tracing are written once for both drivers.
//!
//! What differs between the drivers stays with them, behind [`QueueDevice`]: whether the
//! device has room (the simulated device's free slots; the engine's requests at its backend,
//! less those that timed out), what issuing a request means (a command to a device model, or
//! operations on a backend), and what a "wait until" becomes (a simulated event, or the
//! engine's timer). The kernel counterpart is `blk_mq_do_dispatch_sched` (block/blk-mq-sched.c,
//! Linux 5.x): dispatch from the elevator while the hardware queue has budget.
//!
//! Threads: in the simulator one thread owns it. In the engine it lives in the core behind the
//! engine's one lock, and whichever thread holds the lock calls it: a client's (submitting),
//! the poller (reaping and completing), a lane's thread, or the dispatcher thread (timers,
//! exits, shutdown).

use crate::trace::{TraceEvent, TraceSink, Tracer};
use crate::{
    Completion, Dispatch, Group, GroupId, GroupTree, Inserted, Nanos, ProcessId, Request,
    Scheduler, TunableError,
};

/// The policy of a device's queue and, when the run is traced, where its events go.
pub struct RequestQueue<S> {
    policy: Box<dyn Scheduler>,
    trace: Option<Tracer<S>>,
}

impl<S> std::fmt::Debug for RequestQueue<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestQueue")
            .field("policy", &self.policy.name())
            .field("traced", &self.trace.is_some())
            .finish()
    }
}

/// The driver's side of a queue: its device's room, and what issuing a request to it does.
pub trait QueueDevice {
    /// Where the queue's trace goes.
    type Sink: TraceSink;

    /// The queue in front of the device.
    fn queue(&mut self) -> &mut RequestQueue<Self::Sink>;

    /// Whether the device takes another request now.
    fn has_room(&self) -> bool;

    /// Hand the device `request`, which the policy dispatched at `now`.
    fn issue(&mut self, request: Request, now: Nanos);
}

/// Ask the policy for requests at `now` while the device has room, issuing each; the time
/// the policy asked to be asked again, if it did (a time now or past is taken as the next
/// nanosecond, so that the driver's clock moves on).
#[inline]
pub fn run_queue<D: QueueDevice + ?Sized>(device: &mut D, now: Nanos) -> Option<Nanos> {
    while device.has_room() {
        match device.queue().dispatch(now) {
            Dispatch::Request(request) => device.issue(request, now),
            Dispatch::WaitUntil(at) => return Some(at.max(now + 1)),
            Dispatch::Empty => return None,
        }
    }
    None
}

impl<S: TraceSink> RequestQueue<S> {
    /// A queue for `policy`, traced into `sink` (if given) with times relative to `origin`
    /// on the driver's clock; the sink is told the groups and the policy's tracing is turned
    /// on.
    pub fn new(
        mut policy: Box<dyn Scheduler>,
        sink: Option<S>,
        origin: Nanos,
        groups: &GroupTree,
    ) -> Self {
        let trace = sink.map(|sink| Tracer::new(sink, origin, groups, policy.as_mut()));
        Self { policy, trace }
    }

    /// The policy, to read from.
    pub fn policy(&self) -> &dyn Scheduler {
        self.policy.as_ref()
    }

    /// Whether the run is traced.
    pub fn is_traced(&self) -> bool {
        self.trace.is_some()
    }

    /// Put `request` into the policy at `now`.
    #[inline]
    pub fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        if self.trace.is_some() {
            return self.insert_traced(request, now);
        }
        self.policy.insert(request, now)
    }

    /// The policy's next decision at `now`.
    #[inline]
    pub fn dispatch(&mut self, now: Nanos) -> Dispatch {
        let answer = self.policy.dispatch(now);
        if self.trace.is_some() {
            self.trace_dispatch(&answer, now);
        }
        answer
    }

    /// Tell the policy the device is done with a request it dispatched.
    #[inline]
    pub fn complete(&mut self, completion: &Completion, now: Nanos) {
        if self.trace.is_some() {
            self.complete_traced(completion, now);
            return;
        }
        self.policy.complete(completion, now);
    }

    /// Tell the policy `process` will submit nothing more.
    pub fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        self.policy.process_exited(process, now);
        self.collect(now);
    }

    /// Tell the policy a group's weight or limits changed at `now`.
    ///
    /// # Errors
    /// The policy's refusal of the new settings.
    pub fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        now: Nanos,
    ) -> Result<(), TunableError> {
        let answer = self.policy.update_group(group, settings, now);
        self.collect(now);
        answer
    }

    /// Tell the policy, and the trace, that `group` was added to `groups` at `now`.
    ///
    /// # Errors
    /// The policy's refusal of the group's settings; the trace is then not told.
    pub fn add_group(
        &mut self,
        group: GroupId,
        groups: &GroupTree,
        now: Nanos,
    ) -> Result<(), TunableError> {
        let answer = self.policy.add_group(group, groups, now);
        if answer.is_ok() {
            if let Some(trace) = &mut self.trace {
                trace.groups_changed(groups);
            }
        }
        self.collect(now);
        answer
    }

    /// Tell the policy, and the trace, that `group` was removed from `groups` at `now`.
    pub fn remove_group(&mut self, group: GroupId, groups: &GroupTree, now: Nanos) {
        self.policy.remove_group(group, groups, now);
        if let Some(trace) = &mut self.trace {
            trace.groups_changed(groups);
        }
        self.collect(now);
    }

    /// Hand what the policy recorded in its last call, made at `now`, to the trace.
    pub fn collect(&mut self, now: Nanos) {
        if let Some(trace) = &mut self.trace {
            trace.collect(now, self.policy.as_mut());
        }
    }

    /// An arrival, traced. Kept out of line, so that an untraced run's code stays short.
    #[cold]
    #[inline(never)]
    fn insert_traced(&mut self, request: Request, now: Nanos) -> Inserted {
        let Some(trace) = &mut self.trace else {
            return self.policy.insert(request, now);
        };
        trace.record(now, &TraceEvent::insert(&request));
        let inserted = self.policy.insert(request, now);
        trace.collect(now, self.policy.as_mut());
        inserted
    }

    /// What the policy decided in a dispatch, and the request it hands over.
    #[cold]
    #[inline(never)]
    fn trace_dispatch(&mut self, answer: &Dispatch, now: Nanos) {
        if let Some(trace) = &mut self.trace {
            trace.collect(now, self.policy.as_mut());
            if let Dispatch::Request(request) = answer {
                trace.record(now, &TraceEvent::dispatch(request));
            }
        }
    }

    /// A completion, traced.
    #[cold]
    #[inline(never)]
    fn complete_traced(&mut self, completion: &Completion, now: Nanos) {
        if let Some(trace) = &mut self.trace {
            trace.record(now, &TraceEvent::complete(completion, now));
        }
        self.policy.complete(completion, now);
        self.collect(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::noop::Noop;
    use crate::trace::TraceLog;
    use crate::{Direction, RequestId};

    /// A device of `room` slots that keeps what it was issued.
    struct Device<S> {
        queue: RequestQueue<S>,
        room: usize,
        issued: Vec<(u64, Nanos)>,
    }

    impl<S: TraceSink> QueueDevice for Device<S> {
        type Sink = S;

        fn queue(&mut self) -> &mut RequestQueue<S> {
            &mut self.queue
        }

        fn has_room(&self) -> bool {
            self.issued.len() < self.room
        }

        fn issue(&mut self, request: Request, now: Nanos) {
            self.issued.push((request.id.0, now));
        }
    }

    /// Requests far apart, so that none merges.
    fn read(id: u64) -> Request {
        Request::new(RequestId(id), ProcessId(1), Direction::Read, id * 1000, 8)
    }

    fn device<S: TraceSink>(room: usize, sink: Option<S>, origin: Nanos) -> Device<S> {
        let policy: Box<dyn Scheduler> = Box::new(Noop::default());
        Device {
            queue: RequestQueue::new(policy, sink, origin, &GroupTree::default()),
            room,
            issued: Vec::new(),
        }
    }

    #[test]
    fn the_loop_dispatches_while_the_device_has_room() {
        let mut device = device::<TraceLog>(2, None, 0);
        for id in 1..=3 {
            assert_eq!(device.queue.insert(read(id), 10), Inserted::Queued);
        }
        assert_eq!(run_queue(&mut device, 20), None);
        assert_eq!(device.issued, vec![(1, 20), (2, 20)]);
        assert_eq!(device.queue.policy().queued(), 1);
        device.room = 3;
        assert_eq!(run_queue(&mut device, 30), None);
        assert_eq!(device.issued[2], (3, 30));
        assert_eq!(device.queue.policy().queued(), 0);
    }

    #[test]
    fn a_traced_queue_records_arrival_dispatch_and_completion_from_the_origin() {
        let mut log = TraceLog::default();
        let mut device = device(1, Some(&mut log), 100);
        device.queue.insert(read(1), 110);
        assert_eq!(run_queue(&mut device, 120), None);
        let completion = Completion {
            request: read(1),
            dispatch_time: 120,
            error: None,
        };
        device.queue.complete(&completion, 150);
        assert!(device.queue.is_traced());
        let events: Vec<(Nanos, &str)> = log
            .events
            .iter()
            .map(|(time, event)| (*time, event.name()))
            .collect();
        assert_eq!(
            events,
            vec![(10, "insert"), (20, "dispatch"), (50, "complete")]
        );
    }

    /// A policy that holds everything until `until`.
    struct Holds {
        until: Nanos,
    }

    impl Scheduler for Holds {
        fn name(&self) -> &'static str {
            "holds"
        }
        fn insert(&mut self, _request: Request, _now: Nanos) -> Inserted {
            Inserted::Queued
        }
        fn dispatch(&mut self, _now: Nanos) -> Dispatch {
            Dispatch::WaitUntil(self.until)
        }
        fn complete(&mut self, _completion: &Completion, _now: Nanos) {}
        fn queued(&self) -> usize {
            1
        }
    }

    #[test]
    fn a_wait_is_returned_and_one_now_or_past_moves_to_the_next_nanosecond() {
        for (until, expected) in [(500, 500), (200, 201), (50, 201)] {
            let mut device = Device::<TraceLog> {
                queue: RequestQueue::new(Box::new(Holds { until }), None, 0, &GroupTree::default()),
                room: 4,
                issued: Vec::new(),
            };
            assert_eq!(run_queue(&mut device, 200), Some(expected));
            assert!(device.issued.is_empty());
        }
    }
}
