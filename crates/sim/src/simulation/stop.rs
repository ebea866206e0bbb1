//! Ending a simulation early when asked ([`SimConfig::stop`], set by SIGINT or SIGTERM), as
//! fio ends a run: every job stops issuing at the current virtual time, what is in flight
//! completes, and the report covers what was done. Jobs of later phases start at once and
//! do nothing.
//!
//! [`SimConfig::stop`]: crate::simulation::SimConfig::stop

use super::{Lifecycle, Simulation};

/// Event-loop turns between looks at the stop request: cheap, and a fraction of a
/// millisecond of real time.
pub(super) const CHECK_EVERY: u32 = 1024;

impl Simulation<'_> {
    /// Stop every job if a stop was asked since the last look.
    pub(super) fn check_stop(&mut self) {
        if self.stopping || !self.stop.is_set() {
            return;
        }
        self.stopping = true;
        for index in 0..self.processes.len() {
            let process = &mut self.processes[index];
            if process.lifecycle != Lifecycle::Running {
                continue;
            }
            if let Some(clock) = process.clock.as_mut() {
                clock.abort();
            }
            // A job waiting out a think time or a rate limit ends now, not when it would
            // have woken.
            process.wake_at = None;
            self.pump_job(index as u32);
        }
    }
}
