//! A run's progress, published by its driver and read by a display: what fio's status line
//! shows (`Jobs: 2 (f=2): [R(2)][45.0%][r=8MiB/s][r=2k IOPS][eta 00m:11s]`).
//!
//! The driver (the simulator every so many event-loop turns; a real run's job threads as they
//! complete requests) writes plain atomics; the display thread reads them whenever it
//! likes. Clones share the same cells, like [`crate::StopSignal`]. Nothing here reads a
//! clock: the driver says how far its clock has run.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

/// What a job is doing, as fio's status line shows it: one character per job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Not started yet (waiting for a stonewall or its start delay): fio's `P`.
    Waiting,
    /// Issuing: fio's letter for its pattern (`R`, `r`, `W`, `w`, `M`, `m`, `D`, `d`, …).
    Running(u8),
    /// Finished: fio's `_`.
    Done,
}

impl JobState {
    fn encode(self) -> u8 {
        match self {
            JobState::Waiting => b'P',
            JobState::Running(letter) => letter,
            JobState::Done => b'_',
        }
    }
}

/// One job's cells.
#[derive(Debug, Default)]
struct JobCells {
    state: AtomicU8,
    /// Fraction done, in millionths.
    done: AtomicU32,
}

#[derive(Debug, Default)]
struct Cells {
    /// Set once, when the driver knows how many jobs the run has.
    jobs: OnceLock<Box<[JobCells]>>,
    /// Bytes completed per direction (read, write, trim).
    bytes: [AtomicU64; 3],
    /// Requests completed per direction.
    ios: [AtomicU64; 3],
    /// Nanoseconds the driver's clock has run since the start (simulated time in a
    /// simulation).
    clock: AtomicU64,
}

/// The shared progress of a run: made by whoever displays it, begun by the driver once it
/// knows how many jobs the run has.
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<Cells>);

/// A moment's reading of a [`Progress`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProgressReading {
    /// Each job's state character (`P`, `_` or its pattern letter).
    pub states: Vec<u8>,
    /// Fraction of the whole run done, in millionths (the mean of the jobs').
    pub done: u32,
    /// Bytes completed per direction.
    pub bytes: [u64; 3],
    /// Requests completed per direction.
    pub ios: [u64; 3],
    /// The driver's clock, nanoseconds since the start.
    pub clock: u64,
}

impl Progress {
    /// Progress not yet begun.
    pub fn new() -> Self {
        Self::default()
    }

    /// The run has `jobs` jobs, all waiting. Only the first call counts.
    pub fn begin(&self, jobs: usize) {
        self.0.jobs.get_or_init(|| {
            (0..jobs)
                .map(|_| JobCells {
                    state: AtomicU8::new(JobState::Waiting.encode()),
                    done: AtomicU32::new(0),
                })
                .collect()
        });
    }

    /// Whether the driver has begun it.
    pub fn has_begun(&self) -> bool {
        self.0.jobs.get().is_some()
    }

    fn job_cells(&self) -> &[JobCells] {
        self.0.jobs.get().map_or(&[], |jobs| jobs)
    }

    /// Job `job`'s state and the fraction of it done (0.0–1.0). Out-of-range jobs are ignored.
    pub fn set_job(&self, job: usize, state: JobState, fraction_done: f64) {
        if let Some(cells) = self.job_cells().get(job) {
            cells.state.store(state.encode(), Ordering::Relaxed);
            let millionths = (fraction_done.clamp(0.0, 1.0) * 1e6) as u32;
            cells.done.store(millionths, Ordering::Relaxed);
        }
    }

    /// Add a completed request of `bytes` in `direction` (0 read, 1 write, 2 trim).
    pub fn add(&self, direction: usize, bytes: u64) {
        if let (Some(total), Some(count)) = (self.0.bytes.get(direction), self.0.ios.get(direction))
        {
            total.fetch_add(bytes, Ordering::Relaxed);
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Set the totals completed so far per direction (a driver that counts them itself).
    pub fn set_totals(&self, bytes: [u64; 3], ios: [u64; 3]) {
        for direction in 0..3 {
            self.0.bytes[direction].store(bytes[direction], Ordering::Relaxed);
            self.0.ios[direction].store(ios[direction], Ordering::Relaxed);
        }
    }

    /// How far the driver's clock has run, in nanoseconds.
    pub fn set_clock(&self, nanos: u64) {
        self.0.clock.store(nanos, Ordering::Relaxed);
    }

    /// Read every cell.
    pub fn read(&self) -> ProgressReading {
        let cells = &self.0;
        let jobs = self.job_cells();
        let states = jobs
            .iter()
            .map(|job| job.state.load(Ordering::Relaxed))
            .collect();
        let sum: u64 = jobs
            .iter()
            .map(|job| u64::from(job.done.load(Ordering::Relaxed)))
            .sum();
        let done = sum
            .checked_div(jobs.len() as u64)
            .map_or(0, |mean| mean as u32);
        ProgressReading {
            states,
            done,
            bytes: cells.bytes.each_ref().map(|b| b.load(Ordering::Relaxed)),
            ios: cells.ios.each_ref().map(|n| n.load(Ordering::Relaxed)),
            clock: cells.clock.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_and_the_run_is_the_mean_of_its_jobs() {
        let progress = Progress::new();
        let driver = progress.clone();
        assert!(!progress.has_begun());
        driver.begin(2);
        driver.begin(5);
        driver.set_job(0, JobState::Running(b'R'), 0.5);
        driver.set_job(1, JobState::Done, 1.0);
        driver.set_job(7, JobState::Done, 1.0);
        driver.add(0, 4096);
        driver.add(0, 4096);
        driver.add(1, 512);
        driver.add(9, 1);
        driver.set_clock(1_500_000_000);
        let reading = progress.read();
        assert_eq!(reading.states, b"R_");
        assert_eq!(reading.done, 750_000);
        assert_eq!(reading.bytes, [8192, 512, 0]);
        assert_eq!(reading.ios, [2, 1, 0]);
        assert_eq!(reading.clock, 1_500_000_000);
    }

    #[test]
    fn a_run_without_jobs_is_not_done_and_fractions_are_clamped() {
        assert_eq!(Progress::new().read().done, 0);
        let progress = Progress::new();
        progress.begin(1);
        assert_eq!(progress.read().states, b"P");
        progress.set_job(0, JobState::Running(b'w'), 3.0);
        assert_eq!(progress.read().done, 1_000_000);
    }
}
