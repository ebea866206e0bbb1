//! A real run's progress ([`RunSpec::progress`](crate::RunSpec::progress)) as its job
//! threads publish it: each thread writes its own job's state and share done and adds its
//! completions to the run's totals, with relaxed atomics, as each request completes.

use ioslice_core::{JobState, Nanos, Progress};
use ioslice_fio::workload::JobClock;

/// One job thread's end of the run's progress.
#[derive(Debug, Clone)]
pub(crate) struct JobProgress {
    progress: Progress,
    /// The job's index among the run's processes.
    job: usize,
    /// fio's status letter for the job's pattern.
    letter: u8,
}

impl JobProgress {
    /// Job `job` of `progress`, whose pattern shows as `letter`.
    pub(crate) fn new(progress: Progress, job: usize, letter: u8) -> Self {
        Self {
            progress,
            job,
            letter,
        }
    }

    /// A request of `bytes` in `direction` completed at `now` (job time).
    pub(crate) fn completed(&self, direction: usize, bytes: u64, clock: &JobClock, now: Nanos) {
        self.progress.add(direction, bytes);
        self.running(clock, now);
    }

    /// The job is issuing at `now`.
    pub(crate) fn running(&self, clock: &JobClock, now: Nanos) {
        let done = clock.fraction_done(now);
        let state = JobState::Running(self.letter);
        self.progress.set_job(self.job, state, done);
        self.progress.set_clock(now);
    }

    /// The job has finished.
    pub(crate) fn done(&self) {
        self.progress.set_job(self.job, JobState::Done, 1.0);
    }
}
