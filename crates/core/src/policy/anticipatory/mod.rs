//! PLACEHOLDER while the anticipatory policy is being written: delegates to noop.

use crate::policy::noop::Noop;
use crate::registry::SchedulerContext;
use crate::tunable::{TunableDef, Tunables};
use crate::{Completion, Dispatch, Inserted, Nanos, Request, Scheduler};

/// Placeholder.
#[derive(Debug, Clone)]
pub struct Anticipatory(Noop);

impl Anticipatory {
    /// Placeholder tunables.
    pub const TUNABLES: &'static [TunableDef] = Noop::TUNABLES;

    /// Placeholder constructor.
    pub fn new(tunables: &Tunables, _context: &SchedulerContext) -> Self {
        Self(Noop::new(tunables))
    }
}

impl Scheduler for Anticipatory {
    fn name(&self) -> &'static str {
        "anticipatory"
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
