//! What the runner's tests share: a trace sink they keep a handle on.

use std::sync::{Arc, Mutex, PoisonError};

use ioslice_core::trace::TraceLog;
use ioslice_core::{GroupTree, Nanos, TraceEvent, TraceSink};

/// A sink the test keeps a handle on while the engine owns it.
#[derive(Clone, Default)]
pub struct Shared(pub Arc<Mutex<TraceLog>>);

impl TraceSink for Shared {
    fn start(&mut self, groups: &GroupTree) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .start(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .record(time, event);
    }
}
