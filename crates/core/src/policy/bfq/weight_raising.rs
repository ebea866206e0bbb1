//! Low latency (`low_latency=1`): *weight raising* for interactive and soft real-time queues,
//! and the detection of large bursts of queue creations that must not be raised.
//!
//! A sync queue that becomes busy after at least `wr_min_idle_time` (2 s) without I/O — an
//! application starting — is *interactive*: its weight is multiplied by 30 for a time inversely
//! proportional to the device's peak rate (7 s on a disk, 2.5 s on flash at the reference rate,
//! kept within 3–25 s), or until it has received 120000 sectors (a large application's start-up).
//! A queue whose requests arrive periodically, each after an idle gap longer than its service at
//! 7000 sectors/s (≈ HD video) would take, with nothing in flight and not totally seeky, is *soft
//! real-time*: its weight is multiplied by 3000 for 300 ms, renewed while the pattern holds,
//! falling back to an interactive period still running when it stops.
//!
//! Queues created within 180 ms of each other in the same group form a burst; from the 8th on the
//! burst is *large* (a boot, `git grep`, a parallel build) and its queues are never raised — they
//! are throughput work, and raising them all would raise none.
//!
//! Source: Linux's `block/bfq-iosched.c`: `bfq_wr_duration`,
//! `bfq_bfqq_handle_idle_busy_switch`, `bfq_bfqq_softrt_next_start`, `bfq_update_wr_data` and
//! `bfq_handle_burst`; and the `low_latency` tunable in `Documentation/block/bfq-iosched.rst`.
//! Our own code.

use crate::time::{ms, SECOND};
use crate::trace::{RaiseEnd, RaiseKind};
use crate::{GroupId, Nanos};

/// The interactive coefficient (`bfq_wr_coeff`).
pub(super) const INTERACTIVE_COEFFICIENT: u64 = 30;
/// Soft real-time raising multiplies the interactive coefficient by this.
pub(super) const SOFT_RT_FACTOR: u64 = 100;
/// How long soft real-time raising lasts (`wr_rt_max_time`).
pub(super) const SOFT_RT_DURATION: Nanos = ms(300);
/// Idle time after which a queue that becomes busy is interactive (`wr_min_idle_time`).
pub(super) const MIN_IDLE_TIME: Nanos = 2 * SECOND;
/// Interactive raising ends after this much service (sectors, `max_service_from_wr`).
pub(super) const MAX_SERVICE: u64 = 120_000;
/// Largest rate of a soft real-time queue, sectors/s (`wr_max_softrt_rate`).
pub(super) const SOFT_RT_MAX_RATE: u64 = 7000;
/// Queue creations this close together belong to one burst (`burst_interval`).
const BURST_INTERVAL: Nanos = ms(180);
/// Size from which a burst is large (`large_burst_thresh`).
const LARGE_BURST: usize = 8;
/// Four jiffies at HZ=250: the margin soft real-time queues must idle beyond slice_idle.
const SOFT_RT_MARGIN: Nanos = ms(16);

/// A queue's weight-raising state.
#[derive(Debug, Clone)]
pub(super) struct WeightRaising {
    /// The coefficient its weight is multiplied by (1: not raised).
    pub(super) coefficient: u64,
    /// When the current raising started.
    pub(super) start: Nanos,
    /// How long it lasts.
    pub(super) duration: Nanos,
    /// Service received while raised.
    pub(super) service: u64,
    /// When an interactive period, interrupted by soft real-time raising, started.
    pub(super) interactive_start: Option<Nanos>,
    /// That interactive period's length.
    pub(super) interactive_duration: Nanos,
    /// The earliest arrival that still qualifies as soft real-time.
    pub(super) soft_rt_next_start: Nanos,
    /// When it last went from idle to busy.
    pub(super) last_busy: Nanos,
    /// It ran dry with requests in flight: learn `soft_rt_next_start` at its last completion.
    pub(super) soft_rt_update: bool,
}

impl Default for WeightRaising {
    fn default() -> Self {
        Self {
            coefficient: 1,
            start: 0,
            duration: 0,
            service: 0,
            interactive_start: None,
            interactive_duration: 0,
            soft_rt_next_start: 0,
            last_busy: 0,
            soft_rt_update: false,
        }
    }
}

/// What a queue that becomes busy qualifies for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Deserves {
    /// Interactive raising.
    Interactive,
    /// Soft real-time raising.
    SoftRealTime,
    /// Nothing.
    Nothing,
}

impl WeightRaising {
    /// Whether raised, and whether soft real-time.
    pub(super) fn is_soft_rt(&self) -> bool {
        self.coefficient > INTERACTIVE_COEFFICIENT
    }

    /// Which raising runs, if any.
    pub(super) fn kind(&self) -> Option<RaiseKind> {
        match self.coefficient {
            1 => None,
            _ if self.is_soft_rt() => Some(RaiseKind::SoftRealTime),
            _ => Some(RaiseKind::Interactive),
        }
    }

    /// A queue becomes busy and deserves `deserves` (`in_burst`: it belongs to a large burst).
    pub(super) fn on_busy(
        &mut self,
        deserves: Deserves,
        in_burst: bool,
        interactive: Nanos,
        now: Nanos,
    ) {
        match deserves {
            Deserves::Interactive => {
                if self.coefficient == 1 {
                    // A new raising period.
                    self.service = 0;
                    self.start = now;
                }
                // A raising period already running keeps its start and service: only its
                // coefficient and length are renewed, so it still ends on time.
                self.coefficient = INTERACTIVE_COEFFICIENT;
                self.duration = interactive;
                self.interactive_start = None;
            }
            Deserves::SoftRealTime => {
                if self.coefficient > 1 && !self.is_soft_rt() {
                    self.interactive_start = Some(self.start);
                    self.interactive_duration = self.duration;
                } else if self.coefficient == 1 {
                    self.service = 0;
                }
                self.coefficient = INTERACTIVE_COEFFICIENT * SOFT_RT_FACTOR;
                self.start = now;
                self.duration = SOFT_RT_DURATION;
            }
            Deserves::Nothing if in_burst => self.end(),
            Deserves::Nothing => {}
        }
        self.last_busy = now;
        self.soft_rt_update = false;
    }

    /// The queue ran dry. With nothing in flight its soft real-time start is known now; with
    /// requests in flight it cannot qualify until the last of them completes.
    pub(super) fn ran_dry(
        &mut self,
        service_since_busy: u64,
        in_flight: usize,
        slice_idle: Nanos,
        now: Nanos,
    ) {
        if in_flight == 0 {
            self.next_soft_rt_start(service_since_busy, slice_idle, now);
        } else {
            self.soft_rt_next_start = Nanos::MAX;
            self.soft_rt_update = true;
        }
    }

    /// The last in-flight request of a dry queue completed.
    pub(super) fn last_completion(
        &mut self,
        service_since_busy: u64,
        slice_idle: Nanos,
        now: Nanos,
    ) {
        if self.soft_rt_update {
            self.soft_rt_update = false;
            self.soft_rt_next_start = 0;
            self.next_soft_rt_start(service_since_busy, slice_idle, now);
        }
    }

    /// Check the raising at a dispatch: it ends in a large burst, when its time is up (a soft
    /// real-time period falls back to a running interactive one) or after too much service.
    /// Returns why, when the coefficient changed.
    pub(super) fn update(&mut self, in_burst: bool, now: Nanos) -> Option<RaiseEnd> {
        if self.coefficient == 1 {
            return None;
        }
        let before = self.coefficient;
        let reason = if in_burst {
            self.end();
            RaiseEnd::LargeBurst
        } else if now > self.start.saturating_add(self.duration) {
            match self.interactive_start.take() {
                Some(start) if now <= start.saturating_add(self.interactive_duration) => {
                    self.coefficient = INTERACTIVE_COEFFICIENT;
                    self.start = start;
                    self.duration = self.interactive_duration;
                }
                _ => self.end(),
            }
            RaiseEnd::Expired
        } else if !self.is_soft_rt() && self.service > MAX_SERVICE {
            self.end();
            RaiseEnd::TooMuchService
        } else {
            return None;
        };
        (self.coefficient != before).then_some(reason)
    }

    /// Stop raising.
    pub(super) fn end(&mut self) {
        self.coefficient = 1;
        self.interactive_start = None;
    }

    /// When a queue that just emptied may next count as soft real-time: its service since it
    /// became busy at `SOFT_RT_MAX_RATE` after that, and at least slice_idle plus a margin from now.
    pub(super) fn next_soft_rt_start(
        &mut self,
        service_since_busy: u64,
        slice_idle: Nanos,
        now: Nanos,
    ) {
        let at_max_rate = self
            .last_busy
            .saturating_add(service_since_busy.saturating_mul(SECOND) / SOFT_RT_MAX_RATE);
        self.soft_rt_next_start = self
            .soft_rt_next_start
            .max(at_max_rate)
            .max(now + slice_idle + SOFT_RT_MARGIN);
    }
}

/// Detection of large bursts of queue creations.
#[derive(Debug, Clone, Default)]
pub(super) struct BurstDetector {
    /// Queues of the current burst while it is not yet large.
    members: Vec<usize>,
    size: usize,
    large: bool,
    group: Option<GroupId>,
    last_creation: Option<Nanos>,
}

impl BurstDetector {
    /// A sync queue was created. Returns the queues now known to belong to a large burst
    /// (the new one included when it does).
    pub(super) fn created(&mut self, queue: usize, group: GroupId, now: Nanos) -> Vec<usize> {
        let continues = self.group == Some(group)
            && self
                .last_creation
                .is_some_and(|last| now.saturating_sub(last) <= BURST_INTERVAL);
        self.last_creation = Some(now);
        if !continues {
            self.members = vec![queue];
            self.size = 1;
            self.large = false;
            self.group = Some(group);
            return Vec::new();
        }
        self.size += 1;
        if self.large {
            return vec![queue];
        }
        self.members.push(queue);
        if self.size >= LARGE_BURST {
            self.large = true;
            return std::mem::take(&mut self.members);
        }
        Vec::new()
    }

    /// Forget a queue that goes away.
    pub(super) fn forget(&mut self, queue: usize) {
        self.members.retain(|&q| q != queue);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_queues_within_180_ms_are_a_large_burst() {
        let mut burst = BurstDetector::default();
        let group = GroupId::ROOT;
        for q in 0..7 {
            assert!(burst.created(q, group, q as u64 * ms(20)).is_empty());
        }
        assert_eq!(burst.created(7, group, ms(140)), (0..8).collect::<Vec<_>>());
        assert_eq!(
            burst.created(8, group, ms(150)),
            vec![8],
            "later members join"
        );
        assert!(burst.created(9, group, ms(400)).is_empty(), "a gap ends it");
        assert!(
            burst.created(10, GroupId(1), ms(410)).is_empty(),
            "another group"
        );
    }

    #[test]
    fn interactive_raising_ends_on_time_or_service() {
        let mut raising = WeightRaising::default();
        raising.on_busy(Deserves::Interactive, false, 5 * SECOND, 0);
        assert_eq!(raising.coefficient, 30);
        assert_eq!(raising.update(false, 5 * SECOND), None);
        assert_eq!(
            raising.update(false, 5 * SECOND + 1),
            Some(RaiseEnd::Expired)
        );
        assert_eq!(raising.coefficient, 1);
        raising.on_busy(Deserves::Interactive, false, 5 * SECOND, 10 * SECOND);
        raising.service = MAX_SERVICE + 1;
        assert_eq!(
            raising.update(false, 10 * SECOND),
            Some(RaiseEnd::TooMuchService)
        );
        raising.on_busy(Deserves::Interactive, false, 5 * SECOND, 20 * SECOND);
        assert_eq!(
            raising.update(true, 20 * SECOND),
            Some(RaiseEnd::LargeBurst),
            "a large burst ends it"
        );
    }

    #[test]
    fn deserving_again_renews_a_running_period_without_restarting_it() {
        let mut raising = WeightRaising::default();
        raising.on_busy(Deserves::Interactive, false, 5 * SECOND, 0);
        raising.service = 1000;
        // Busy again at 4 s, still deserving: the period keeps its start and service.
        raising.on_busy(Deserves::Interactive, false, 5 * SECOND, 4 * SECOND);
        assert_eq!(raising.service, 1000);
        assert_eq!(raising.update(false, 5 * SECOND), None);
        assert!(
            raising.update(false, 5 * SECOND + 1).is_some(),
            "ends 5 s after it began"
        );
        // A new period starts afresh.
        raising.on_busy(Deserves::Interactive, false, 5 * SECOND, 6 * SECOND);
        assert_eq!((raising.service, raising.coefficient), (0, 30));
        assert_eq!(raising.update(false, 11 * SECOND), None);
    }

    #[test]
    fn soft_real_time_falls_back_to_a_running_interactive_period() {
        let mut raising = WeightRaising::default();
        raising.on_busy(Deserves::Interactive, false, 5 * SECOND, 0);
        raising.on_busy(Deserves::SoftRealTime, false, 5 * SECOND, SECOND);
        assert_eq!(raising.coefficient, 3000);
        assert_eq!(
            raising.update(false, SECOND + ms(301)),
            Some(RaiseEnd::Expired)
        );
        assert_eq!(
            raising.coefficient, 30,
            "the interactive period runs until 5 s"
        );
        assert!(raising.update(false, 5 * SECOND + 1).is_some());
        assert_eq!(raising.coefficient, 1);
    }

    #[test]
    fn soft_real_time_next_start() {
        let mut raising = WeightRaising {
            last_busy: SECOND,
            ..WeightRaising::default()
        };
        // 700 sectors at 7000 sectors/s: 100 ms after becoming busy.
        raising.next_soft_rt_start(700, ms(8), SECOND + ms(10));
        assert_eq!(raising.soft_rt_next_start, SECOND + ms(100));
        raising.next_soft_rt_start(0, ms(8), SECOND + ms(90));
        assert_eq!(raising.soft_rt_next_start, SECOND + ms(114));
    }
}
