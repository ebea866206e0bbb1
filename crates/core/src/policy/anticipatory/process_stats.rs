//! What AS learns about each process, and about processes it has not met yet.
//!
//! Every sync request a process submits updates two running means: its *think time*, the
//! time from the completion of its last sync request to the arrival of this one (0 when it
//! still had I/O outstanding, at most [`MAX_THINK_TIME`]), and its *seek distance*, how far
//! this request starts from where its previous one ended (outliers clamped). Both are
//! exponentially weighted with a 7/8 decay in fixed point ×256: the sample weight and the
//! weighted sum decay together, and the mean is their quotient, so a process's first sample
//! counts fully. The first sample of each process also feeds the means used for processes
//! with no history of their own. Two probabilities, ×256, say how often an anticipated
//! process exited while AS waited for it, and how often no cooperating process's request
//! came to the rescue after such an exit.
//!
//! Source: Linux's `block/as-iosched.c`: `as_update_iohist`, `as_update_thinktime` and
//! `as_update_seekdist`, and `as_antic_timeout` for the exit probabilities; our own code.
//! Times are nanoseconds rather than jiffies.

use std::collections::BTreeMap;

use super::version::Anticipation as Rules;
use crate::time::ms;
use crate::{Nanos, ProcessId};

/// Think times are counted up to this (the kernel's 20 ms `MAX_THINKTIME`): a process in a
/// long non-I/O phase is penalised a little, not forever.
pub(super) const MAX_THINK_TIME: Nanos = ms(20);

/// Fixed-point one: weights and probabilities are kept ×256.
pub(super) const ONE: u64 = 256;

/// While a process has at most this sample weight, a seek may be up to 4 × its mean plus
/// [`EARLY_SEEK_SLACK`]; afterwards plus [`SEEK_SLACK`].
const EARLY_SEEK_WEIGHT: u64 = 60;
/// Outlier allowance over 4 × the mean for a process's first few seeks (1 GiB).
const EARLY_SEEK_SLACK: u64 = 2 * 1024 * 1024;
/// Outlier allowance over 4 × the mean once a process has a history (64 MiB).
const SEEK_SLACK: u64 = 2 * 1024 * 64;

/// One step of the 7/8 decay: the new value counts for one eighth.
fn decay(old: u64, new: u64) -> u64 {
    old.saturating_mul(7).saturating_add(new) / 8
}

/// A mean of decaying samples: the sample weight and the weighted sum, both ×256.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct DecayingMean {
    /// Sum of the decayed sample weights (×256); 0 means no sample yet.
    pub samples: u64,
    /// Sum of the decayed samples (×256).
    total: u64,
    /// `total / samples`, rounded to nearest.
    pub mean: u64,
}

impl DecayingMean {
    /// Add one sample.
    fn add(&mut self, value: u64) {
        self.samples = decay(self.samples, ONE);
        self.total = decay(self.total, value.saturating_mul(ONE));
        self.mean = self.total.saturating_add(self.samples / 2) / self.samples;
    }

    /// Whether no sample has been added yet.
    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }
}

/// A global estimate fed by each process's first sample: a decayed sum ×256 without its own
/// weight, so it starts low and rises towards the typical value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct FirstSampleMean {
    total: u64,
    /// `total / 256`.
    pub mean: u64,
}

impl FirstSampleMean {
    fn add(&mut self, value: u64) {
        self.total = decay(self.total, value.saturating_mul(ONE));
        self.mean = self.total / ONE;
    }
}

/// The history of one process (the kernel's `as_io_context`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ProcessStats {
    /// The process has finished and will submit nothing more.
    pub exited: bool,
    /// It has submitted sync I/O before.
    started: bool,
    /// When its last sync request completed, once one has.
    last_completion: Option<Nanos>,
    /// Where its last sync request ended: the next seek is measured from here.
    last_end_sector: u64,
    /// Mean think time, in nanoseconds.
    pub think_time: DecayingMean,
    /// Mean seek distance, in sectors.
    pub seek_distance: DecayingMean,
    /// Its requests queued in the scheduler.
    pub queued: usize,
    /// Its requests at the device.
    pub in_flight: usize,
}

impl ProcessStats {
    /// Whether it has nothing queued or at the device.
    fn idle(&self) -> bool {
        self.queued == 0 && self.in_flight == 0
    }
}

/// Every process's history, and the estimates for new processes (the kernel's `est_time`).
#[derive(Debug, Clone, Default)]
pub(super) struct Statistics {
    /// By process; a `BTreeMap` so nothing depends on hash order.
    processes: BTreeMap<ProcessId, ProcessStats>,
    /// Think time of processes with no history, from first samples.
    pub new_think_time: FirstSampleMean,
    /// Seek distance of processes with no history, from first samples.
    pub new_seek_distance: FirstSampleMean,
    /// How often (×256) an anticipated process with no think-time history had exited or
    /// timed out: the kernel's `exit_prob`.
    pub exit_probability: u64,
    /// How often (×256) an exited anticipated process was not followed by a cooperating
    /// process's close request: the kernel's `exit_no_coop`.
    pub exit_without_cooperation: u64,
}

impl Statistics {
    /// The history of a process, if it has one.
    pub fn get(&self, process: ProcessId) -> Option<&ProcessStats> {
        self.processes.get(&process)
    }

    fn entry(&mut self, process: ProcessId) -> &mut ProcessStats {
        self.processes.entry(process).or_default()
    }

    /// A sync request of `process` from `sector` to `end_sector` arrived (or, for the
    /// anticipated process, a cooperating process's close request stands in for its next
    /// one): update its think time and seek distance.
    pub fn record_arrival(&mut self, process: ProcessId, sector: u64, end_sector: u64, now: Nanos) {
        let stats = self.processes.entry(process).or_default();
        if stats.started || stats.last_completion.is_some() {
            let think_time = match stats.last_completion {
                Some(completed) if stats.idle() => {
                    now.saturating_sub(completed).min(MAX_THINK_TIME)
                }
                _ => 0,
            };
            if stats.think_time.is_empty() {
                self.new_think_time.add(think_time);
                self.exit_probability = decay(self.exit_probability, 0);
            }
            stats.think_time.add(think_time);
            let seek = sector.abs_diff(stats.last_end_sector);
            if stats.seek_distance.is_empty() {
                self.new_seek_distance.add(seek);
            }
            stats
                .seek_distance
                .add(clamp_seek(seek, &stats.seek_distance));
        }
        stats.last_end_sector = end_sector;
        stats.started = true;
    }

    /// A request of `process` was queued as a request of its own.
    pub fn queued(&mut self, process: ProcessId) {
        self.entry(process).queued += 1;
    }

    /// A queued request of `process` left the queue without reaching the device (it was
    /// coalesced into another).
    pub fn unqueued(&mut self, process: ProcessId) {
        let stats = self.entry(process);
        stats.queued = stats.queued.saturating_sub(1);
    }

    /// A request of `process` went to the device.
    pub fn dispatched(&mut self, process: ProcessId) {
        let stats = self.entry(process);
        stats.queued = stats.queued.saturating_sub(1);
        stats.in_flight += 1;
    }

    /// A request of `process` completed; a sync one starts its next think time.
    pub fn completed(&mut self, process: ProcessId, sync: bool, now: Nanos) {
        let stats = self.entry(process);
        stats.in_flight = stats.in_flight.saturating_sub(1);
        if sync {
            stats.last_completion = Some(now);
        }
    }

    /// `process` has finished.
    pub fn exited(&mut self, process: ProcessId) {
        self.entry(process).exited = true;
    }

    /// Drop the history of `process` if it has exited, has nothing queued or in flight,
    /// and is not `anticipated`: nothing will ever ask for it again.
    pub fn forget_if_done(&mut self, process: ProcessId, anticipated: Option<ProcessId>) {
        let done = self
            .processes
            .get(&process)
            .is_some_and(|stats| stats.exited && stats.idle());
        if done && anticipated != Some(process) {
            self.processes.remove(&process);
        }
    }

    /// The seek distance to expect from `process`: its own mean, or the new-process mean.
    pub fn expected_seek(&self, process: ProcessId) -> u64 {
        match self.processes.get(&process) {
            Some(stats) if !stats.seek_distance.is_empty() => stats.seek_distance.mean,
            _ => self.new_seek_distance.mean,
        }
    }

    /// Anticipation on `process` timed out (the kernel's timer): count it towards the exit
    /// probability when the process had no think-time history, and towards "exited without
    /// a cooperating request" when it had exited.
    pub fn anticipation_timed_out(&mut self, process: ProcessId) {
        let Some(stats) = self.processes.get(&process) else {
            return;
        };
        let (no_history, exited) = (stats.think_time.is_empty(), stats.exited);
        if no_history {
            self.exit_probability = decay(self.exit_probability, ONE);
        }
        if exited {
            self.exit_without_cooperation = decay(self.exit_without_cooperation, ONE);
        }
    }

    /// A cooperating process's close request rescued anticipation on `process`: if it had
    /// exited, that lowers the "exited without cooperation" estimate.
    pub fn cooperation_after_exit(&mut self, process: ProcessId) {
        let Some(stats) = self.processes.get(&process) else {
            return;
        };
        if !stats.exited {
            return;
        }
        if stats.think_time.is_empty() {
            self.exit_probability = decay(self.exit_probability, ONE);
        }
        self.exit_without_cooperation = decay(self.exit_without_cooperation, 0);
    }

    /// Whether `process` has exited and exits have usually not been rescued by cooperating
    /// requests (more than half the time). Counts the exit towards the exit probability when
    /// it has no think-time history.
    pub fn exited_without_cooperation(&mut self, process: ProcessId) -> bool {
        let Some(stats) = self.processes.get(&process) else {
            return false;
        };
        if !stats.exited {
            return false;
        }
        if stats.think_time.is_empty() {
            self.exit_probability = decay(self.exit_probability, ONE);
        }
        self.exit_without_cooperation > ONE / 2
    }

    /// The original (2.6.10) rules: an anticipated `process` has exited; that counts
    /// towards the exit probability when it has no think-time history.
    pub fn count_exit(&mut self, process: ProcessId) {
        if self
            .processes
            .get(&process)
            .is_some_and(|stats| stats.think_time.is_empty())
        {
            self.exit_probability = decay(self.exit_probability, ONE);
        }
    }

    /// The original (2.6.10) rules: another process's close request restarts the think-time
    /// clock of `process`, as if its own request had just completed.
    pub fn restart_think_clock(&mut self, process: ProcessId, now: Nanos) {
        if let Some(stats) = self.processes.get_mut(&process) {
            if stats.last_completion.is_some() {
                stats.last_completion = Some(now);
            }
        }
    }

    /// Whether `process`, by its own history or (with none) the new-process estimates,
    /// thinks longer than `limit` between requests, or for a new process, is likely to exit:
    /// by `rules`, exits went mostly unrescued by cooperation (from 2.6.18) or more than half
    /// of the waits on new processes saw one (2.6.10). Returns which, if either.
    pub fn unlikely_to_return(
        &self,
        process: ProcessId,
        limit: Nanos,
        rules: Rules,
    ) -> Option<Unlikely> {
        let stats = self.processes.get(&process)?;
        if !stats.think_time.is_empty() {
            return (stats.think_time.mean > limit).then_some(Unlikely::ThinkTime);
        }
        if self.new_think_time.mean > limit {
            return Some(Unlikely::ThinkTime);
        }
        let likely_exit = match rules {
            Rules::Cooperative => {
                let exit_odds = self
                    .exit_probability
                    .saturating_mul(self.exit_without_cooperation);
                exit_odds > ONE / 2 * ONE
            }
            Rules::Original => self.exit_probability > ONE / 2,
        };
        likely_exit.then_some(Unlikely::Exit)
    }
}

/// Why a process is not worth waiting for, by its statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unlikely {
    /// Its mean think time (or a new process's) exceeds the anticipation time.
    ThinkTime,
    /// New processes are likely to exit with no cooperating request following.
    Exit,
}

/// Clamp a seek so that the odd far fragment does not swamp the mean: at most 4 × the
/// current mean plus a slack that shrinks once the process has some history.
fn clamp_seek(seek: u64, history: &DecayingMean) -> u64 {
    let slack = if history.samples <= EARLY_SEEK_WEIGHT {
        EARLY_SEEK_SLACK
    } else {
        SEEK_SLACK
    };
    seek.min(history.mean.saturating_mul(4).saturating_add(slack))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::us;

    const P: ProcessId = ProcessId(1);

    #[test]
    fn decaying_mean_weights_and_rounding() {
        let mut mean = DecayingMean::default();
        mean.add(1000);
        // samples (7·0 + 256)/8 = 32, total 256000/8 = 32000, mean 1000.
        assert_eq!((mean.samples, mean.total, mean.mean), (32, 32_000, 1000));
        mean.add(0);
        // samples (224 + 256)/8 = 60, total 224000/8 = 28000, mean 28000/60 = 466.67 → 467.
        assert_eq!((mean.samples, mean.total, mean.mean), (60, 28_000, 467));
        for _ in 0..100 {
            mean.add(500);
        }
        // The integer weight settles at 249 while the sum nears 256 × the sample, so the
        // mean of a steady sample reads 256/249 high (2.8 %), as the kernel's does.
        assert_eq!(mean.samples, 249);
        assert_eq!(mean.mean, 514);
    }

    #[test]
    fn first_request_sets_the_position_only() {
        let mut stats = Statistics::default();
        stats.record_arrival(P, 100, 108, 0);
        let p = stats.get(P).expect("recorded");
        assert!(p.think_time.is_empty() && p.seek_distance.is_empty());
        assert_eq!(p.last_end_sector, 108);
    }

    #[test]
    fn think_time_counts_from_the_last_completion_when_nothing_is_outstanding() {
        let mut stats = Statistics::default();
        stats.record_arrival(P, 0, 8, 0);
        stats.queued(P);
        stats.dispatched(P);
        stats.completed(P, true, us(1000));
        stats.record_arrival(P, 8, 16, us(1020));
        let p = stats.get(P).expect("recorded");
        assert_eq!(p.think_time.mean, 20_000);
        assert_eq!(p.seek_distance.mean, 0);
        // The first sample of a process feeds the new-process estimates: 256·20000/8/256.
        assert_eq!(stats.new_think_time.mean, 2_500);
        // With a request outstanding the process is not thinking: the sample is 0.
        stats.queued(P);
        stats.record_arrival(P, 16, 24, ms(50));
        let p = stats.get(P).expect("recorded");
        // samples 60, total (7·640000)/8 = 560000 → 9333.
        assert_eq!(p.think_time.mean, 9_333);
    }

    #[test]
    fn think_time_is_capped_at_20_ms() {
        let mut stats = Statistics::default();
        stats.record_arrival(P, 0, 8, 0);
        stats.completed(P, true, ms(1));
        stats.record_arrival(P, 8, 16, ms(500));
        assert_eq!(stats.get(P).expect("recorded").think_time.mean, ms(20));
    }

    #[test]
    fn far_seeks_are_clamped() {
        let mut stats = Statistics::default();
        stats.record_arrival(P, 0, 8, 0);
        // A first seek of 10 Mi sectors counts as 4·0 + 2 Mi.
        stats.record_arrival(P, 10 << 20, (10 << 20) + 8, 0);
        assert_eq!(stats.get(P).expect("recorded").seek_distance.mean, 2 << 20);
        // But the new-process estimate takes the raw first seek (from sector 8): one eighth.
        assert_eq!(stats.new_seek_distance.mean, ((10 << 20) - 8) / 8);
    }

    #[test]
    fn exit_estimates_rise_on_timeouts_and_fall_on_cooperation() {
        let mut stats = Statistics::default();
        stats.record_arrival(P, 0, 8, 0);
        stats.exited(P);
        let mut seen = Vec::new();
        for _ in 0..6 {
            stats.anticipation_timed_out(P);
            seen.push(stats.exit_without_cooperation);
        }
        assert_eq!(seen, vec![32, 60, 84, 105, 123, 139]);
        // P never had a think-time sample, so each timeout also counted as a likely exit.
        assert_eq!(stats.exit_probability, 139);
        assert!(stats.exited_without_cooperation(P));
        stats.cooperation_after_exit(P);
        assert_eq!(stats.exit_without_cooperation, 121);
    }

    #[test]
    fn new_processes_likely_to_exit_by_each_releases_rule() {
        let mut stats = Statistics::default();
        stats.record_arrival(P, 0, 8, 0);
        // More than half of the waits on new processes saw an exit, but exits have always
        // been rescued by cooperation: only the 2.6.10 rule gives up on P.
        stats.exit_probability = 129;
        stats.exit_without_cooperation = 0;
        let limit = ms(6);
        assert_eq!(
            stats.unlikely_to_return(P, limit, Rules::Original),
            Some(Unlikely::Exit)
        );
        assert_eq!(stats.unlikely_to_return(P, limit, Rules::Cooperative), None);
        stats.exit_probability = 128;
        assert_eq!(stats.unlikely_to_return(P, limit, Rules::Original), None);
        // From 2.6.18 the product decides: 256 × 129 > 128 × 256.
        stats.exit_probability = 256;
        stats.exit_without_cooperation = 129;
        assert_eq!(
            stats.unlikely_to_return(P, limit, Rules::Cooperative),
            Some(Unlikely::Exit)
        );
    }

    #[test]
    fn a_restarted_think_clock_counts_from_the_restart() {
        let mut stats = Statistics::default();
        stats.record_arrival(P, 0, 8, 0);
        stats.queued(P);
        stats.dispatched(P);
        stats.completed(P, true, ms(1));
        stats.restart_think_clock(P, ms(3));
        stats.record_arrival(P, 8, 16, ms(4));
        assert_eq!(stats.get(P).expect("recorded").think_time.mean, ms(1));
        // A process that never completed a request has no clock to restart.
        let q = ProcessId(2);
        stats.record_arrival(q, 0, 8, 0);
        stats.restart_think_clock(q, ms(3));
        assert_eq!(stats.get(q).expect("recorded").last_completion, None);
    }

    #[test]
    fn exited_idle_processes_are_forgotten_unless_anticipated() {
        let mut stats = Statistics::default();
        stats.queued(P);
        stats.exited(P);
        stats.forget_if_done(P, None);
        assert!(stats.get(P).is_some(), "still queued");
        stats.dispatched(P);
        stats.completed(P, true, 5);
        stats.forget_if_done(P, Some(P));
        assert!(stats.get(P).is_some(), "still anticipated");
        stats.forget_if_done(P, None);
        assert!(stats.get(P).is_none());
    }
}
