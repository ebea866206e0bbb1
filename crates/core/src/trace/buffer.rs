//! Where a policy records its events ([`TraceBuffer`]), off until its driver turns tracing
//! on, and how a policy builds them from its own state only when they are wanted
//! ([`Traced`]).

use super::TraceEvent;
use crate::Scheduler;

/// Where a policy records its events: off (nothing recorded, nothing built) until its driver
/// turns tracing on.
#[derive(Debug, Clone, Default)]
pub struct TraceBuffer {
    events: Option<Vec<TraceEvent>>,
}

impl TraceBuffer {
    /// Turn recording on or off; turning it off drops what was not drained.
    pub fn set_enabled(&mut self, on: bool) {
        match (on, self.events.is_some()) {
            (true, false) => self.events = Some(Vec::new()),
            (false, true) => self.events = None,
            _ => {}
        }
    }

    /// Whether events are recorded.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.events.is_some()
    }

    /// Record an event if tracing is on. Build events inside `if buffer.is_enabled()` (or
    /// with [`TraceBuffer::emit`]) so that nothing is built when it is off.
    #[inline]
    pub fn push(&mut self, event: TraceEvent) {
        if let Some(events) = &mut self.events {
            events.push(event);
        }
    }

    /// Record the event `build` makes, building it only if tracing is on. Off, this is one
    /// branch: the building is out of line, so the caller's code stays as it was.
    #[inline(always)]
    pub fn emit(&mut self, build: impl FnOnce() -> TraceEvent) {
        if self.events.is_some() {
            self.emit_now(build);
        }
    }

    #[cold]
    #[inline(never)]
    fn emit_now(&mut self, build: impl FnOnce() -> TraceEvent) {
        self.push(build());
    }

    /// Move the recorded events to the end of `out`, in order.
    pub fn drain_into(&mut self, out: &mut Vec<TraceEvent>) {
        if let Some(events) = &mut self.events {
            out.append(events);
        }
    }

    /// Record, in order, what `policy` (a policy this one wraps) recorded.
    #[inline(always)]
    pub fn pull(&mut self, policy: &mut dyn Scheduler) {
        if self.events.is_some() {
            self.pull_now(policy);
        }
    }

    #[cold]
    #[inline(never)]
    fn pull_now(&mut self, policy: &mut dyn Scheduler) {
        if let Some(events) = &mut self.events {
            policy.drain_trace(events);
        }
    }
}

/// A policy that records into a [`TraceBuffer`] of its own and builds its events from its own
/// state (the queue an event names, its group and priority).
pub trait Traced {
    /// The policy's buffer.
    fn trace_buffer(&mut self) -> &mut TraceBuffer;

    /// Whether the policy records events.
    fn tracing(&self) -> bool;

    /// Record the event `build` makes from the policy's state, if tracing is on. Off, this is
    /// one branch: the building is out of line, so the policy's code stays as it was.
    #[inline(always)]
    fn emit(&mut self, build: impl FnOnce(&Self) -> TraceEvent)
    where
        Self: Sized,
    {
        if self.tracing() {
            emit_built(self, build);
        }
    }
}

#[cold]
#[inline(never)]
fn emit_built<T: Traced>(policy: &mut T, build: impl FnOnce(&T) -> TraceEvent) {
    let event = build(policy);
    policy.trace_buffer().push(event);
}
