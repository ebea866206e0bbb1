//! fio's `wait_for=NAME`: a job's processes start only once every process of the job named
//! NAME is done (fio's `waitee_running`), then after their own `startdelay`. The parser has
//! checked that NAME is one job defined before this one.

use super::{Lifecycle, Simulation};

impl Simulation<'_> {
    /// Whether process `index` waits for a job with a process not done yet.
    pub(super) fn held_by_waitee(&self, index: usize) -> bool {
        let jobs = &self.job_file.jobs;
        let Some(waitee) = &jobs[self.processes[index].spec_index].wait_for else {
            return false;
        };
        self.processes
            .iter()
            .any(|p| &jobs[p.spec_index].name == waitee && p.lifecycle != Lifecycle::Done)
    }

    /// Schedule the start of every held process whose job's waitee is now done.
    pub(super) fn release_held(&mut self) {
        for index in 0..self.processes.len() {
            if self.processes[index].lifecycle == Lifecycle::Held && !self.held_by_waitee(index) {
                self.processes[index].lifecycle = Lifecycle::Waiting;
                self.schedule_start(index, self.now);
            }
        }
    }
}
