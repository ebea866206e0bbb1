//! A job's timing as a pure state machine: how many requests it keeps in flight, when it
//! thinks, how fast it may go (`rate`, `rate_iops`), when it starts and stops. The driver
//! (simulator or engine) owns the clock and the random generator and calls [`JobClock::poll`]
//! whenever something changed for the job; the answer says what the job does next.
//!
//! Two options change when a job ends and how deep it queues, and live here too:
//! `latency_target`'s depth search ([`crate::latency_target`]: the depth the job may queue
//! to, a quiesce before each change of depth, statistics started over for the final
//! window) and steady-state detection ([`crate::steady_state`]: the job ends at the tick
//! its criterion is met). The driver tells the clock of each completion
//! ([`JobClock::on_io_done`]) as it happens.

use ioslice_core::Nanos;
use rand::RngCore;

use crate::latency_target::{self, DepthSearch, LatencyTarget, LatencyTargetReport};
use crate::pattern::{DataDirection, IoPattern, IoUnit};
use crate::steady_state::{SteadyState, SteadyStateOptions, SteadyStateReport};
use crate::JobSpec;

/// What a job does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Submit this I/O now.
    Submit(IoUnit),
    /// Nothing before this time (think time, rate limit, start delay); poll again then.
    WaitUntil(Nanos),
    /// Waiting for a completion: poll again after the next one.
    AwaitCompletion,
    /// The job has issued everything and all of it has completed.
    Done,
    /// The depth search settled and everything in flight completed: start the job's
    /// statistics over now (its final window is what it reports), then poll again.
    ResetStatistics,
}

/// Why the job is waiting for everything in flight to complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quiesce {
    /// The search changed depth; its next window starts once the queue is empty.
    Window,
    /// The search settled; its final window starts, with fresh statistics.
    FinalWindow,
}

/// The timing state of one job process.
#[derive(Debug, Clone)]
pub struct JobClock {
    pattern: IoPattern,
    depth: u32,
    thinktime: Nanos,
    thinktime_blocks: u32,
    rate_bytes: [Option<u64>; 3],
    rate_iops: [Option<u64>; 3],
    /// When the job started issuing.
    start: Nanos,
    /// When statistics begin (start + ramp_time).
    ramp_end: Nanos,
    /// When issuing stops, if the job has a runtime.
    deadline: Option<Nanos>,
    in_flight: u32,
    /// Completions since the last think.
    completed_since_think: u32,
    /// Issue nothing before this (think time).
    resume_at: Nanos,
    /// Bytes and I/Os issued per direction, for the rate limits.
    issued_bytes: [u64; 3],
    issued_ios: [u64; 3],
    /// The next I/O, drawn but held back by a rate limit.
    held: Option<IoUnit>,
    exhausted: bool,
    /// Bytes the job will issue, when it ends by size.
    total_bytes: Option<u64>,
    /// `runtime=`: the final window of a depth search starts it over, as in fio.
    runtime: Option<Nanos>,
    /// `latency_target=`'s options, and the search once statistics began (depth 1 before).
    latency: Option<LatencyTarget>,
    search: Option<DepthSearch>,
    quiesce: Option<Quiesce>,
    /// Steady-state detection (`ss_dur=`).
    steady: Option<SteadyState>,
    /// Reads and writes completed (the depth search's count).
    rw_done: u64,
    /// I/Os and bytes completed, every direction (steady state's).
    ios_done: u64,
    bytes_done: u64,
    /// The error that ended the job, if one did, with fio's message for it.
    error: Option<(i32, String)>,
}

impl JobClock {
    /// The clock of a job that starts issuing at `start`.
    pub fn new(spec: &JobSpec, pattern: IoPattern, start: Nanos) -> Self {
        let ramp_end = start + spec.ramp_time;
        Self {
            total_bytes: pattern.bytes_left(),
            pattern,
            depth: spec.effective_depth(),
            thinktime: spec.thinktime,
            thinktime_blocks: spec.thinktime_blocks.max(1),
            rate_bytes: spec.rate,
            rate_iops: spec.rate_iops,
            start,
            ramp_end,
            deadline: spec.runtime.map(|runtime| ramp_end + runtime),
            in_flight: 0,
            completed_since_think: 0,
            resume_at: start,
            issued_bytes: [0; 3],
            issued_ios: [0; 3],
            held: None,
            exhausted: false,
            runtime: spec.runtime,
            latency: LatencyTarget::of(spec),
            search: None,
            quiesce: None,
            steady: SteadyStateOptions::of(spec).map(|o| SteadyState::new(o, start)),
            rw_done: 0,
            ios_done: 0,
            bytes_done: 0,
            error: None,
        }
    }

    /// When the job started issuing.
    pub fn start(&self) -> Nanos {
        self.start
    }

    /// When statistics begin: completions before this are not counted. (The depth
    /// search's final window moves it to the window's start.)
    pub fn ramp_end(&self) -> Nanos {
        self.ramp_end
    }

    /// How much of the job is done at `now`, 0.0–1.0, as fio's status line counts it: the
    /// share of its run time gone, or of its bytes issued, whichever is further; 1.0 once
    /// it has issued everything and nothing is in flight.
    pub fn fraction_done(&self, now: Nanos) -> f64 {
        if self.exhausted && self.in_flight == 0 {
            return 1.0;
        }
        let by_time = self.deadline.map_or(0.0, |end| {
            let elapsed = now.saturating_sub(self.start) as f64;
            elapsed / end.saturating_sub(self.start).max(1) as f64
        });
        let by_bytes = self.total_bytes.map_or(0.0, |total| {
            self.issued_bytes.iter().sum::<u64>() as f64 / total.max(1) as f64
        });
        by_time.max(by_bytes).min(1.0)
    }

    /// Requests submitted and not yet completed.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// What the job does next at `now`.
    pub fn poll(&mut self, now: Nanos, rng: &mut impl RngCore) -> Step {
        if self.deadline.is_some_and(|end| now >= end) {
            self.exhausted = true;
            self.held = None;
        }
        self.observe(now);
        if self.exhausted {
            return self.drain_step();
        }
        if let Some(step) = self.quiesced(now) {
            return step;
        }
        if self.in_flight >= self.depth_limit() {
            return Step::AwaitCompletion;
        }
        if now < self.resume_at {
            return Step::WaitUntil(self.capped(self.resume_at));
        }
        let unit = match self.held.take() {
            Some(unit) => unit,
            None => match self.pattern.next(rng) {
                Some(unit) => unit,
                None => {
                    self.exhausted = true;
                    return self.drain_step();
                }
            },
        };
        let allowed = self.rate_allows_at(&unit);
        if allowed > now {
            self.held = Some(unit);
            return Step::WaitUntil(self.capped(allowed));
        }
        let d = direction_index(unit.direction);
        self.issued_bytes[d] += unit.length;
        self.issued_ios[d] += 1;
        self.in_flight += 1;
        Step::Submit(unit)
    }

    /// A request of this job completed at `now`.
    pub fn on_complete(&mut self, now: Nanos) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.thinktime > 0 {
            self.completed_since_think += 1;
            if self.completed_since_think >= self.thinktime_blocks {
                self.completed_since_think = 0;
                self.resume_at = self.resume_at.max(now + self.thinktime);
            }
        }
    }

    /// An I/O of this job completed at `now` after `latency` (from its submission), before
    /// [`Self::on_complete`] lets the job issue again: the depth search judges its latency
    /// and steady state counts it.
    pub fn on_io_done(&mut self, now: Nanos, direction: DataDirection, bytes: u64, latency: Nanos) {
        self.sample_steady_state(now);
        self.ios_done += 1;
        self.bytes_done += bytes;
        if direction == DataDirection::Trim {
            return;
        }
        self.rw_done += 1;
        if self.quiesce.is_some() || self.exhausted {
            return;
        }
        let Some(search) = self.search.as_mut() else {
            return;
        };
        match search.on_completion(latency, now, self.rw_done) {
            latency_target::Step::Fatal => {
                let message = format!(
                    "fio: latency of {latency} nsec exceeds specified max ({} nsec)",
                    search.report().target_ns
                );
                self.error = Some((latency_target::ETIMEDOUT, message));
                self.abort();
            }
            latency_target::Step::RampedDown => self.quiesce = Some(Quiesce::Window),
            _ => {}
        }
    }

    /// Stop issuing at once (an error the job does not continue past).
    pub fn abort(&mut self) {
        self.exhausted = true;
        self.held = None;
    }

    /// The depth search's outcome, when the job has a `latency_target`.
    pub fn latency_report(&self) -> Option<LatencyTargetReport> {
        let options = self.latency?;
        Some(match &self.search {
            Some(search) => search.report(),
            None => DepthSearch::new(options, 0, 0).report(),
        })
    }

    /// Steady state's outcome, when the job has an `ss_dur`.
    pub fn steady_state_report(&self) -> Option<SteadyStateReport> {
        self.steady.as_ref().map(SteadyState::report)
    }

    /// The errno of the error that ended the job (the depth search's `ETIMEDOUT`).
    pub fn error(&self) -> Option<i32> {
        self.error.as_ref().map(|(errno, _)| *errno)
    }

    /// fio's message for the error that ended the job.
    pub fn error_message(&self) -> Option<&str> {
        self.error.as_ref().map(|(_, message)| message.as_str())
    }

    /// How many requests the job may have in flight now: its depth, or the search's.
    fn depth_limit(&self) -> u32 {
        match (&self.latency, &self.search) {
            (None, _) => self.depth,
            (Some(_), None) => 1,
            (Some(_), Some(search)) => search.depth().min(self.depth),
        }
    }

    /// Steady state's ticks and the depth search's window check, as of `now`.
    fn observe(&mut self, now: Nanos) {
        self.sample_steady_state(now);
        let Some(options) = self.latency else {
            return;
        };
        if self.quiesce.is_some() || self.exhausted || now < self.ramp_end {
            return;
        }
        let rw_done = self.rw_done;
        let search = self
            .search
            .get_or_insert_with(|| DepthSearch::new(options, now, rw_done));
        match search.check(now, rw_done) {
            latency_target::Step::RampedDown => self.quiesce = Some(Quiesce::Window),
            latency_target::Step::FinalWindow => self.quiesce = Some(Quiesce::FinalWindow),
            latency_target::Step::Done => self.abort(),
            _ => {}
        }
    }

    /// The samples of steady state due by `now`; reaching it ends the job.
    fn sample_steady_state(&mut self, now: Nanos) {
        let Some(steady) = self.steady.as_mut() else {
            return;
        };
        if !self.exhausted && steady.advance(now, self.ios_done, self.bytes_done) {
            self.abort();
        }
    }

    /// While the search waits for the queue to empty, the step that says so; once empty,
    /// its next window starts (and for the final one, statistics and runtime start over).
    fn quiesced(&mut self, now: Nanos) -> Option<Step> {
        let quiesce = self.quiesce?;
        if self.in_flight > 0 {
            return Some(Step::AwaitCompletion);
        }
        self.quiesce = None;
        if let Some(search) = self.search.as_mut() {
            search.restart_window(now, self.rw_done);
        }
        if quiesce != Quiesce::FinalWindow {
            return None;
        }
        self.ramp_end = now;
        self.deadline = self.runtime.map(|runtime| now + runtime);
        Some(Step::ResetStatistics)
    }

    fn drain_step(&self) -> Step {
        if self.in_flight == 0 {
            Step::Done
        } else {
            Step::AwaitCompletion
        }
    }

    /// A wake-up never later than the runtime deadline, so the job notices its end.
    /// (Also no later than steady state's next sample, so a waiting job ends on time.)
    fn capped(&self, at: Nanos) -> Nanos {
        let at = self.deadline.map_or(at, |end| at.min(end));
        let tick = self.steady.as_ref().and_then(SteadyState::next_tick);
        tick.map_or(at, |tick| at.min(tick))
    }

    /// The earliest time the rate limits let `unit` be issued: the time by which the bytes
    /// (or I/Os) already issued in its direction, plus this one, are within the rate.
    fn rate_allows_at(&self, unit: &IoUnit) -> Nanos {
        let d = direction_index(unit.direction);
        let by_bytes = self.rate_bytes[d]
            .filter(|&rate| rate > 0)
            .map(|rate| at_rate(self.issued_bytes[d], rate));
        let by_ios = self.rate_iops[d]
            .filter(|&rate| rate > 0)
            .map(|rate| at_rate(self.issued_ios[d], rate));
        self.start + by_bytes.unwrap_or(0).max(by_ios.unwrap_or(0))
    }
}

/// Nanoseconds after the start at which `amount` units have been allowed at `per_second`.
fn at_rate(amount: u64, per_second: u64) -> Nanos {
    let nanos = u128::from(amount) * 1_000_000_000 / u128::from(per_second);
    u64::try_from(nanos).unwrap_or(u64::MAX)
}

/// Index 0 read, 1 write, 2 trim.
pub fn direction_index(direction: DataDirection) -> usize {
    match direction {
        DataDirection::Read => 0,
        DataDirection::Write => 1,
        DataDirection::Trim => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::{plan_files, FilePlan};
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn clock(spec: &JobSpec, start: Nanos) -> JobClock {
        let files: Vec<FilePlan> = plan_files(spec, 0, 1 << 40).expect("plan");
        let pattern = IoPattern::new(spec, &files, 0).expect("pattern");
        JobClock::new(spec, pattern, start)
    }

    fn spec(edit: impl FnOnce(&mut JobSpec)) -> JobSpec {
        let mut spec = JobSpec {
            name: "job".into(),
            size: Some(crate::Extent::Bytes(64 * 4096)),
            ..JobSpec::default()
        };
        edit(&mut spec);
        spec
    }

    #[test]
    fn synchronous_engine_keeps_one_in_flight_and_finishes() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut job = clock(&spec(|_| {}), 0);
        let mut submitted = 0;
        loop {
            match job.poll(0, &mut rng) {
                Step::Submit(unit) => {
                    assert_eq!(unit.offset, submitted * 4096);
                    submitted += 1;
                    assert_eq!(job.poll(0, &mut rng), Step::AwaitCompletion);
                    job.on_complete(0);
                }
                Step::Done => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(submitted, 64);
    }

    #[test]
    fn iodepth_bounds_in_flight_for_async_engines() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut job = clock(
            &spec(|s| {
                s.ioengine = crate::IoEngine::Libaio;
                s.iodepth = 4;
            }),
            0,
        );
        for _ in 0..4 {
            assert!(matches!(job.poll(0, &mut rng), Step::Submit(_)));
        }
        assert_eq!(job.poll(0, &mut rng), Step::AwaitCompletion);
        job.on_complete(5);
        assert!(matches!(job.poll(5, &mut rng), Step::Submit(_)));
    }

    #[test]
    fn thinktime_stalls_after_each_block_group() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut job = clock(&spec(|s| s.thinktime = 1_000), 0);
        assert!(matches!(job.poll(0, &mut rng), Step::Submit(_)));
        job.on_complete(100);
        assert_eq!(job.poll(100, &mut rng), Step::WaitUntil(1_100));
        assert!(matches!(job.poll(1_100, &mut rng), Step::Submit(_)));
    }

    #[test]
    fn rate_limit_spaces_submissions_exactly() {
        let mut rng = StdRng::seed_from_u64(1);
        // 4096 bytes at 4096 KiB/s: one block per 1/1024 s = 976_562 ns.
        let mut job = clock(&spec(|s| s.rate[0] = Some(4096 * 1024)), 10);
        assert!(matches!(job.poll(10, &mut rng), Step::Submit(_)));
        job.on_complete(20);
        assert_eq!(job.poll(20, &mut rng), Step::WaitUntil(10 + 976_562));
        assert!(matches!(job.poll(10 + 976_562, &mut rng), Step::Submit(_)));
    }

    fn done_at(job: &mut JobClock, now: Nanos) {
        job.on_io_done(now, DataDirection::Read, 4096, 100);
        job.on_complete(now);
    }

    /// The depth search limits what is in flight (1, then 2), waits for the queue to empty
    /// before its final window, starts statistics over there, and ends the job when that
    /// window passes.
    #[test]
    fn the_depth_search_limits_depth_and_ends_after_its_final_window() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut job = clock(
            &spec(|s| {
                s.ioengine = crate::IoEngine::Libaio;
                s.iodepth = 2;
                s.latency_target = 1_000;
                s.latency_window = 100;
            }),
            0,
        );
        assert!(matches!(job.poll(0, &mut rng), Step::Submit(_)));
        assert_eq!(job.poll(0, &mut rng), Step::AwaitCompletion);
        done_at(&mut job, 100);
        for _ in 0..2 {
            assert!(matches!(job.poll(100, &mut rng), Step::Submit(_)));
        }
        assert_eq!(job.poll(100, &mut rng), Step::AwaitCompletion);
        done_at(&mut job, 200);
        // Settled at 2: one in flight still, so the job waits for it.
        assert_eq!(job.poll(200, &mut rng), Step::AwaitCompletion);
        done_at(&mut job, 210);
        assert_eq!(job.poll(210, &mut rng), Step::ResetStatistics);
        assert_eq!(job.ramp_end(), 210);
        for _ in 0..2 {
            assert!(matches!(job.poll(210, &mut rng), Step::Submit(_)));
        }
        done_at(&mut job, 310);
        done_at(&mut job, 310);
        assert_eq!(job.poll(310, &mut rng), Step::Done);
        assert_eq!(job.latency_report().map(|r| r.depth), Some(2));
    }

    /// Steady state: a thinking job's wait ends at the next sample, and a job whose IOPS
    /// hold still ends there.
    #[test]
    fn steady_state_ends_a_waiting_job_at_its_sample() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut job = clock(
            &spec(|s| {
                s.size = Some(crate::Extent::Bytes(1 << 30));
                s.thinktime = 600_000_000;
                s.ss_criterion.limit = 1.0;
                s.ss_criterion.slope = false;
                s.ss_duration = 2_000_000_000;
            }),
            0,
        );
        assert!(matches!(job.poll(0, &mut rng), Step::Submit(_)));
        done_at(&mut job, 1);
        assert_eq!(job.poll(1, &mut rng), Step::WaitUntil(600_000_001));
        assert!(matches!(job.poll(600_000_001, &mut rng), Step::Submit(_)));
        done_at(&mut job, 600_000_002);
        // The next think would end at 1.2 s; the sample at 1 s comes first.
        assert_eq!(
            job.poll(600_000_002, &mut rng),
            Step::WaitUntil(1_000_000_000)
        );
        assert_eq!(
            job.poll(1_000_000_000, &mut rng),
            Step::WaitUntil(1_200_000_002)
        );
        assert!(matches!(job.poll(1_200_000_002, &mut rng), Step::Submit(_)));
        done_at(&mut job, 1_200_000_003);
        assert!(matches!(job.poll(1_800_000_003, &mut rng), Step::Submit(_)));
        done_at(&mut job, 1_800_000_004);
        // Two I/Os in each second: steady at 2 s.
        assert_eq!(job.poll(2_000_000_000, &mut rng), Step::Done);
        let report = job.steady_state_report().expect("steady state");
        assert!(report.attained);
        assert_eq!(report.iops, [2, 2]);
    }

    #[test]
    fn runtime_stops_issuing_and_drains() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut job = clock(
            &spec(|s| {
                s.runtime = Some(1_000);
                s.time_based = true;
                s.ramp_time = 500;
            }),
            0,
        );
        assert_eq!(job.ramp_end(), 500);
        assert!(matches!(job.poll(0, &mut rng), Step::Submit(_)));
        assert_eq!(job.poll(1_500, &mut rng), Step::AwaitCompletion);
        job.on_complete(1_600);
        assert_eq!(job.poll(1_600, &mut rng), Step::Done);
    }
}
