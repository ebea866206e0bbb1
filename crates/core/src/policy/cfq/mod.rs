//! PLACEHOLDER while the cfq policy is being written: delegates to noop.

use crate::policy::noop::Noop;
use crate::registry::SchedulerContext;
use crate::tunable::{TunableDef, Tunables};
use crate::{Completion, Dispatch, Inserted, Nanos, Request, Scheduler};

/// Placeholder.
#[derive(Debug, Clone)]
pub struct Cfq(Noop);

impl Cfq {
    /// Placeholder tunables.
    pub const TUNABLES: &'static [TunableDef] = Noop::TUNABLES;

    /// Placeholder constructor.
    pub fn new(tunables: &Tunables, _context: &SchedulerContext) -> Self {
        Self(Noop::new(tunables))
    }
}

impl Scheduler for Cfq {
    fn name(&self) -> &'static str {
        "cfq"
    }
    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.0.insert(request, now)
    }
    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.0.dispatch(now)
    }
    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.0.complete(completion, now)
    }
    fn queued(&self) -> usize {
        self.0.queued()
    }
}
