//! Publishing a simulation's progress ([`SimConfig::progress`]) for a status line: each
//! job's state and how much of it is done, the bytes and requests completed, and the
//! simulated clock. It is published every [`stop::CHECK_EVERY`](super::stop::CHECK_EVERY)
//! event-loop turns and once at the end, so an untracked run pays nothing and a tracked one
//! a look over its jobs per thousand turns.
//!
//! [`SimConfig::progress`]: crate::simulation::SimConfig::progress

use ioslice_core::JobState;

use super::{Lifecycle, Simulation};

impl Simulation<'_> {
    /// Publish the run's progress, if anyone follows it.
    pub(super) fn publish_progress(&self) {
        let Some(progress) = &self.progress else {
            return;
        };
        progress.begin(self.processes.len());
        let mut bytes = [0; 3];
        let mut ios = [0; 3];
        for (index, process) in self.processes.iter().enumerate() {
            for (direction, stats) in process.stats.directions.iter().enumerate() {
                bytes[direction] += stats.io_bytes;
                ios[direction] += stats.total_ios;
            }
            let letter = self.job_file.jobs[process.spec_index]
                .pattern
                .status_letter();
            let (state, done) = match process.lifecycle {
                Lifecycle::Waiting | Lifecycle::Held => (JobState::Waiting, 0.0),
                Lifecycle::Running => (
                    JobState::Running(letter),
                    process
                        .clock
                        .as_ref()
                        .map_or(0.0, |clock| clock.fraction_done(self.now)),
                ),
                Lifecycle::Done => (JobState::Done, 1.0),
            };
            progress.set_job(index, state, done);
        }
        progress.set_totals(bytes, ios);
        progress.set_clock(self.now.saturating_sub(self.epoch));
    }
}
