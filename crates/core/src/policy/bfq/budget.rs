//! Budgets: how much service (in sectors) a queue may receive in its next turn, learned from
//! how its last turn ended, and when a turn is charged in time instead of sectors.
//!
//! A sync queue that is not weight raised gets a budget from how its previous one ended (`b` its
//! last budget, `min = max_budget / 32`): twice `b` after a budget timeout or after idling out
//! with requests still in flight; `b − 4·min` (down to `min`) after idling out with nothing in
//! flight; four times `b` when it used all of it; what it actually used when it ran out of
//! requests — all capped at `max_budget`. Async queues get `max_budget`, raised queues `2·min`.
//! The budget is never below the cost of the queue's next request.
//!
//! A queue that is *slow* — its turn lasted over 20 ms and it received less than half of
//! `max_budget`, or for shorter turns it is seeky — or that timed out with a third of its budget
//! left is charged for the time it held the device, `max_budget × elapsed / timeout_sync`, if
//! that is more than its service: seeky processes get time fairness, sequential ones bandwidth
//! fairness.
//!
//! Source: Linux's `block/bfq-iosched.c`: `__bfq_bfqq_recalc_budget` (the next budget),
//! `bfq_set_budget_timeout`, and `bfq_bfqq_is_slow` with `bfq_bfqq_expire` (when a turn is
//! charged in time); `bfq_bfqq_charge_time` in `block/bfq-wf2q.c`. Our own code.

use crate::time::ms;
use crate::Nanos;

use super::queue::Expiration;

/// The largest budget a queue may get, and the smoothed count of budgets assigned (which
/// reaches 256), from which the largest budget follows the peak rate in auto mode.
#[derive(Debug, Clone)]
pub(super) struct Budgets {
    /// The largest budget, in sectors.
    pub(super) max: u64,
    /// Smoothed count of assigned budgets.
    pub(super) assigned: u64,
}

impl Budgets {
    /// `max` as the largest budget, none assigned yet.
    pub(super) fn new(max: u64) -> Self {
        Self { max, assigned: 0 }
    }
}

/// `max_budget` before the peak rate is known (`bfq_default_max_budget`, 8 MiB).
pub(super) const DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// The smoothed count of assigned budgets after which `max_budget` follows the peak rate.
pub(super) const MIN_BUDGETS_FOR_AUTO: u64 = 194;
/// A turn longer than this is judged by its service rather than by seekiness.
const SLOW_JUDGE_AFTER: Nanos = ms(20);

/// How the previous turn ended, for the feedback.
#[derive(Debug, Clone, Copy)]
pub(super) struct TurnEnd {
    /// Why it ended.
    pub(super) reason: Expiration,
    /// The queue's last budget (`b`).
    pub(super) last_budget: u64,
    /// Service received in the turn.
    pub(super) service: u64,
    /// Requests still at the device.
    pub(super) in_flight: usize,
}

/// The budget after a turn of a sync, unraised queue (the feedback table).
pub(super) fn next_budget(end: TurnEnd, max_budget: u64) -> u64 {
    let min = min_budget(max_budget);
    let b = end.last_budget;
    let budget = match end.reason {
        Expiration::TooIdle if end.in_flight > 0 => b.saturating_mul(2),
        Expiration::TooIdle if b > 5 * min => b - 4 * min,
        Expiration::TooIdle => min,
        Expiration::BudgetTimeout => b.saturating_mul(2),
        Expiration::BudgetExhausted => b.saturating_mul(4),
        Expiration::NoMoreRequests => end.service.max(min),
        Expiration::Preempted => b,
    };
    budget.min(max_budget).max(1)
}

/// The smallest budget, `max_budget / 32`.
pub(super) fn min_budget(max_budget: u64) -> u64 {
    (max_budget / 32).max(1)
}

/// What decides whether a turn is charged in time.
#[derive(Debug, Clone, Copy)]
pub(super) struct TurnLength {
    /// How long the queue held the device (idling excluded when it idled out).
    pub(super) elapsed: Nanos,
    /// Service received.
    pub(super) service: u64,
    /// Its budget.
    pub(super) budget: u64,
    /// Why it ended.
    pub(super) reason: Expiration,
    /// It is seeky.
    pub(super) seeky: bool,
    /// It is sync.
    pub(super) sync: bool,
    /// It is weight raised (then exempt).
    pub(super) raised: bool,
}

impl TurnLength {
    /// Whether the queue was slow (see the module doc).
    pub(super) fn slow(&self, max_budget: u64) -> bool {
        if !self.sync {
            return false;
        }
        if self.elapsed > SLOW_JUDGE_AFTER {
            self.service < max_budget / 2
        } else {
            self.seeky
        }
    }

    /// The service to charge: the time-based charge when it applies and is larger.
    pub(super) fn charge(&self, max_budget: u64, timeout: Nanos) -> u64 {
        let timed_out_early = self.reason == Expiration::BudgetTimeout
            && self.budget.saturating_sub(self.service) >= self.budget / 3;
        if self.raised || !(self.slow(max_budget) || timed_out_early) {
            return self.service;
        }
        let bounded = self.elapsed.min(timeout);
        let for_time =
            (u128::from(max_budget) * u128::from(bounded) / u128::from(timeout.max(1))) as u64;
        self.service.max(for_time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(reason: Expiration, last_budget: u64) -> TurnEnd {
        TurnEnd {
            reason,
            last_budget,
            service: 100,
            in_flight: 0,
        }
    }

    #[test]
    fn the_feedback_table() {
        let max = 16_384;
        let min = 512;
        assert_eq!(
            next_budget(end(Expiration::BudgetExhausted, 1000), max),
            4000
        );
        assert_eq!(
            next_budget(end(Expiration::BudgetExhausted, 8000), max),
            max
        );
        assert_eq!(next_budget(end(Expiration::BudgetTimeout, 1000), max), 2000);
        let mut idle_in_flight = end(Expiration::TooIdle, 1000);
        idle_in_flight.in_flight = 1;
        assert_eq!(next_budget(idle_in_flight, max), 2000);
        assert_eq!(next_budget(end(Expiration::TooIdle, 6 * min), max), 2 * min);
        assert_eq!(next_budget(end(Expiration::TooIdle, 5 * min), max), min);
        assert_eq!(next_budget(end(Expiration::NoMoreRequests, 9000), max), min);
        let mut used = end(Expiration::NoMoreRequests, 9000);
        used.service = 3000;
        assert_eq!(next_budget(used, max), 3000);
    }

    fn turn(elapsed: Nanos, service: u64, seeky: bool) -> TurnLength {
        TurnLength {
            elapsed,
            service,
            budget: 16_384,
            reason: Expiration::NoMoreRequests,
            seeky,
            sync: true,
            raised: false,
        }
    }

    #[test]
    fn slow_and_seeky_queues_pay_for_time() {
        let max = 16_384;
        let timeout = ms(125);
        // 62.5 ms of device time for 100 sectors: charged half of max_budget.
        assert_eq!(turn(ms(62) + 500_000, 100, true).charge(max, timeout), 8192);
        // Fast sequential service is charged as is.
        assert_eq!(turn(ms(50), 9000, false).charge(max, timeout), 9000);
        // A short turn of a sequential queue is not slow; of a seeky one it is.
        assert_eq!(turn(ms(10), 100, false).charge(max, timeout), 100);
        assert_eq!(turn(ms(10), 100, true).charge(max, timeout), 1310);
        // Time beyond the timeout is not charged.
        assert_eq!(turn(ms(500), 100, true).charge(max, timeout), max);
        let raised = TurnLength {
            raised: true,
            ..turn(ms(100), 100, true)
        };
        assert_eq!(raised.charge(max, timeout), 100);
    }
}
