//! fio's queue-depth search for `latency_target` (with `latency_window`,
//! `latency_percentile` and `latency_run`): a pure state machine, time and completion
//! counts passed in, that says how deep a job may queue and when the search is over.
//!
//! Learned from fio's io_u.c (`lat_target_init`, `lat_target_check`,
//! `lat_target_success`, `__lat_target_failed`, `lat_target_failed`, `queue_full`;
//! fio 3.33) and written afresh. The search starts at depth 1 with the job's `iodepth` as
//! the upper bound. At the end of each window (at least `latency_window` long) it counts
//! the completions of the window whose total latency stayed within the target; if their
//! share reaches `latency_percentile` the depth goes up (doubling while no depth has
//! failed, else bisecting towards the lowest failing depth), otherwise it bisects down
//! towards the highest depth that passed. With `latency_percentile=100` one completion
//! over the target ramps down at once (and at depth 1 ends the job with an error). When
//! a passing window leaves the depth unchanged and `latency_run` is off, the job quiesces,
//! resets its statistics and runs one more window at that depth, then stops: that depth
//! is the one fio reports (`latency : ... depth=N`, JSON `latency_depth`).

/// The errno a job ends with when, at `latency_percentile=100`, an I/O at depth 1 misses
/// the target (fio's `td_verror(td, ETIMEDOUT, "max latency exceeded")`; Linux's number).
pub const ETIMEDOUT: i32 = 110;

/// A job's latency-target options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyTarget {
    /// `latency_target`, in nanoseconds (a completion's total latency above it fails).
    pub target_ns: u64,
    /// `latency_window`, in nanoseconds (how long each window lasts at least).
    pub window_ns: u64,
    /// `latency_percentile`: the share of a window's completions, in percent, that must
    /// stay within the target.
    pub percentile: f64,
    /// `latency_run`: keep searching for the whole run instead of settling.
    pub run: bool,
    /// The job's `iodepth`, the deepest the search goes.
    pub iodepth: u32,
}

impl LatencyTarget {
    /// The search `spec` asks for, if it sets `latency_target`; the search's deepest depth
    /// is the depth the job's engine allows.
    pub fn of(spec: &crate::JobSpec) -> Option<LatencyTarget> {
        (spec.latency_target > 0).then(|| LatencyTarget {
            target_ns: spec.latency_target,
            window_ns: spec.latency_window,
            percentile: spec.latency_percentile,
            run: spec.latency_run,
            iodepth: spec.effective_depth(),
        })
    }
}

/// What a job's report says of its search (fio's `latency : target=…` line and JSON
/// `latency_*` fields).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyTargetReport {
    /// `latency_target`, nanoseconds.
    pub target_ns: u64,
    /// `latency_window`, nanoseconds (fio prints microseconds).
    pub window_ns: u64,
    /// `latency_percentile`.
    pub percentile: f64,
    /// The depth the search settled on (or had reached when the job ended).
    pub depth: u32,
}

/// What the job does after a completion or a window check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing changes.
    Continue,
    /// The depth went up; a new window starts.
    RampedUp,
    /// The depth went down: wait for the requests in flight to finish (so the deeper
    /// queue does not cause a storm of further failures); a new window starts.
    RampedDown,
    /// The search settled: wait for the requests in flight, reset the job's statistics
    /// and run one last window at this depth.
    FinalWindow,
    /// The last window passed: the job is done.
    Done,
    /// With `latency_percentile=100`, a completion missed the target at depth 1: the job
    /// ends with an error (fio's "latency of ... exceeds specified max").
    Fatal,
}

/// The search's state.
#[derive(Debug, Clone, PartialEq)]
pub struct DepthSearch {
    options: LatencyTarget,
    depth: u32,
    low: u32,
    high: u32,
    stable_count: u32,
    final_window: bool,
    window_start_ns: u64,
    window_start_ios: u64,
    failed: u64,
}

impl DepthSearch {
    /// A search starting at depth 1, at `now_ns`, with `ios_done` completions so far.
    pub fn new(options: LatencyTarget, now_ns: u64, ios_done: u64) -> DepthSearch {
        DepthSearch {
            options,
            depth: 1,
            low: 1,
            high: options.iodepth.max(1),
            stable_count: 0,
            final_window: false,
            window_start_ns: now_ns,
            window_start_ios: ios_done,
            failed: 0,
        }
    }

    /// The depth the job may queue to now (and, once done, the depth it settled on).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The search's state as the job's report gives it.
    pub fn report(&self) -> LatencyTargetReport {
        LatencyTargetReport {
            target_ns: self.options.target_ns,
            window_ns: self.options.window_ns,
            percentile: self.options.percentile,
            depth: self.depth,
        }
    }

    /// Whether the job is in its last window at the settled depth.
    pub fn in_final_window(&self) -> bool {
        self.final_window
    }

    /// A read or write completed with total latency `latency_ns`.
    pub fn on_completion(&mut self, latency_ns: u64, now_ns: u64, ios_done: u64) -> Step {
        if latency_ns <= self.options.target_ns {
            return Step::Continue;
        }
        if self.options.percentile >= 100.0 {
            if self.depth == 1 {
                return Step::Fatal;
            }
            self.ramp_down(now_ns, ios_done);
            return Step::RampedDown;
        }
        self.failed += 1;
        Step::Continue
    }

    /// The periodic check: once a window has lasted `latency_window`, judge it.
    pub fn check(&mut self, now_ns: u64, ios_done: u64) -> Step {
        if now_ns.saturating_sub(self.window_start_ns) < self.options.window_ns {
            return Step::Continue;
        }
        let ios = ios_done.saturating_sub(self.window_start_ios);
        // An empty window is a failed one (fio's 0/0 compares false).
        let passed = ios > 0 && {
            let success = (ios.saturating_sub(self.failed)) as f64 / ios as f64 * 100.0;
            success >= self.options.percentile
        };
        if passed {
            return self.ramp_up(now_ns, ios_done);
        }
        if self.depth == 1 {
            // fio leaves depth 1 as it is and keeps the window open.
            return Step::Continue;
        }
        self.ramp_down(now_ns, ios_done);
        Step::RampedDown
    }

    /// Starts the window over at `now_ns` (after the job quiesced for a change of depth:
    /// what completed meanwhile is not judged).
    pub fn restart_window(&mut self, now_ns: u64, ios_done: u64) {
        self.new_window(now_ns, ios_done);
    }

    fn new_window(&mut self, now_ns: u64, ios_done: u64) {
        self.window_start_ns = now_ns;
        self.window_start_ios = ios_done;
        self.failed = 0;
    }

    fn ramp_down(&mut self, now_ns: u64, ios_done: u64) {
        self.high = self.depth;
        if self.depth == self.low {
            self.low = self.low.saturating_sub(1);
        }
        self.depth = ((self.depth + self.low) / 2).max(1);
        self.stable_count = 0;
        self.new_window(now_ns, ios_done);
    }

    fn ramp_up(&mut self, now_ns: u64, ios_done: u64) -> Step {
        let before = self.depth;
        let iodepth = self.options.iodepth.max(1);
        self.low = self.depth;
        if self.depth + 1 == self.high {
            self.stable_count += 1;
            if self.stable_count >= 3 {
                self.high += 1;
                self.stable_count = 0;
            }
        }
        self.depth = if self.high != iodepth {
            (self.depth + self.high) / 2
        } else {
            self.depth.saturating_mul(2)
        };
        self.depth = self.depth.min(iodepth);
        let mut step = Step::RampedUp;
        if !self.options.run && self.depth == before {
            if self.final_window {
                step = Step::Done;
            } else {
                self.final_window = true;
                step = Step::FinalWindow;
            }
        }
        self.new_window(now_ns, ios_done);
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(iodepth: u32, percentile: f64) -> LatencyTarget {
        LatencyTarget {
            target_ns: 1_000_000,
            window_ns: 100_000_000,
            percentile,
            run: false,
            iodepth,
        }
    }

    /// Every window passes: the depth doubles to iodepth, then settles there, runs one
    /// final window and is done.
    #[test]
    fn passing_windows_double_to_iodepth_then_settle() {
        let mut search = DepthSearch::new(options(8, 95.0), 0, 0);
        let mut depths = vec![search.depth()];
        let mut steps = Vec::new();
        for window in 1..=5u64 {
            steps.push(search.check(window * 100_000_000, window * 1000));
            depths.push(search.depth());
        }
        assert_eq!(depths, [1, 2, 4, 8, 8, 8]);
        assert_eq!(
            steps,
            [
                Step::RampedUp,
                Step::RampedUp,
                Step::RampedUp,
                Step::FinalWindow,
                Step::Done
            ]
        );
    }

    /// A window shorter than latency_window is not judged.
    #[test]
    fn a_short_window_is_not_judged() {
        let mut search = DepthSearch::new(options(8, 95.0), 0, 0);
        assert_eq!(search.check(99_999_999, 1000), Step::Continue);
        assert_eq!(search.depth(), 1);
    }

    /// Depth 4 misses (6 of 100 over the target at 95%): the search bisects down to 3,
    /// which passes, bisects up between 3 and 4 (stays 3) and settles on 3.
    #[test]
    fn a_failing_depth_bisects_down_and_settles_below_it() {
        let mut search = DepthSearch::new(options(16, 95.0), 0, 0);
        assert_eq!(search.check(100_000_000, 100), Step::RampedUp); // 1 -> 2
        assert_eq!(search.check(200_000_000, 200), Step::RampedUp); // 2 -> 4
        for i in 0..6 {
            search.on_completion(2_000_000, 250_000_000 + i, 250);
        }
        assert_eq!(search.check(300_000_000, 300), Step::RampedDown);
        assert_eq!(search.depth(), 3);
        assert_eq!(search.check(400_000_000, 400), Step::FinalWindow);
        assert_eq!(search.depth(), 3);
        assert_eq!(search.check(500_000_000, 500), Step::Done);
        assert_eq!(search.depth(), 3);
    }

    /// Exactly the percentile passes (95 of 100 within the target at 95%).
    #[test]
    fn the_percentile_itself_passes() {
        let mut search = DepthSearch::new(options(8, 95.0), 0, 0);
        for i in 0..5 {
            search.on_completion(1_000_001, i, i);
        }
        search.on_completion(1_000_000, 10, 10);
        assert_eq!(search.check(100_000_000, 100), Step::RampedUp);
        assert_eq!(search.depth(), 2);
    }

    /// At 100%, one completion over the target ramps down at once; at depth 1 it is fatal.
    #[test]
    fn percentile_100_ramps_down_at_once_and_fails_at_depth_1() {
        let mut search = DepthSearch::new(options(8, 100.0), 0, 0);
        assert_eq!(search.on_completion(2_000_000, 10, 10), Step::Fatal);
        search.check(100_000_000, 100);
        search.check(200_000_000, 200);
        assert_eq!(search.depth(), 4);
        assert_eq!(
            search.on_completion(2_000_000, 210_000_000, 210),
            Step::RampedDown
        );
        assert_eq!(search.depth(), 3);
    }

    /// An empty window fails; at depth 1 the search keeps waiting.
    #[test]
    fn an_empty_window_at_depth_1_keeps_waiting() {
        let mut search = DepthSearch::new(options(8, 95.0), 0, 0);
        assert_eq!(search.check(100_000_000, 0), Step::Continue);
        assert_eq!(search.depth(), 1);
        assert_eq!(search.check(200_000_000, 50), Step::RampedUp);
    }

    /// latency_run keeps searching: a settled depth never ends the job.
    #[test]
    fn latency_run_never_settles() {
        let mut search = DepthSearch::new(
            LatencyTarget {
                run: true,
                ..options(2, 95.0)
            },
            0,
            0,
        );
        let steps: Vec<Step> = (1..=4u64)
            .map(|w| search.check(w * 100_000_000, w * 10))
            .collect();
        assert_eq!(steps, [Step::RampedUp; 4]);
        assert_eq!(search.depth(), 2);
    }
}
