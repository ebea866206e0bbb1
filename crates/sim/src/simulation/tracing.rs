//! The simulator's calls to the policy when the run is traced: each records what the driver
//! sees (an arrival, a dispatch, a completion) and collects the policy's own events, stamped
//! with the virtual time. Kept out of line, so that an untraced run's code is as it was.

use ioslice_core::{Completion, Dispatch, Inserted, Request, TraceEvent};

use super::Simulation;

impl Simulation<'_> {
    /// Insert `request` into the policy, traced.
    #[cold]
    #[inline(never)]
    pub(super) fn insert_traced(&mut self, request: Request) -> Inserted {
        let now = self.now;
        let Some(trace) = &mut self.trace else {
            return self.scheduler.insert(request, now);
        };
        trace.record(now, &TraceEvent::insert(&request));
        let inserted = self.scheduler.insert(request, now);
        trace.collect(now, self.scheduler.as_mut());
        inserted
    }

    /// Trace what the policy decided in a dispatch, and the request it hands over.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_dispatch(&mut self, answer: &Dispatch) {
        if let Some(trace) = &mut self.trace {
            trace.collect(self.now, self.scheduler.as_mut());
            if let Dispatch::Request(request) = answer {
                trace.record(self.now, &TraceEvent::dispatch(request));
            }
        }
    }

    /// Tell the policy of a completion, traced.
    #[cold]
    #[inline(never)]
    pub(super) fn complete_traced(&mut self, completion: &Completion) {
        let now = self.now;
        if let Some(trace) = &mut self.trace {
            trace.record(now, &TraceEvent::complete(completion, now));
        }
        self.scheduler.complete(completion, now);
        self.trace_collect();
    }

    /// Trace what the policy decided in its last call.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_collect(&mut self) {
        if let Some(trace) = &mut self.trace {
            trace.collect(self.now, self.scheduler.as_mut());
        }
    }
}
