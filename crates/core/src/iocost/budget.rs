//! Device vtime, per-group vtime and budget, and debt.
//!
//! The device clock `vnow` advances at vrate: [`super::VTIME_PER_USEC`] per microsecond at
//! 100%. Each group carries its own vtime, advanced by the charge of every request it
//! issues; a request may go when the group's vtime plus its charge does not pass `vnow`,
//! otherwise it waits for `vnow` to catch up. Budget cannot be hoarded: at each period a
//! group's vtime is pulled up to no more than a margin behind `vnow`. A request that must
//! go regardless (swap, filesystem metadata) issues at once; if it has no budget its
//! absolute cost becomes debt, repaid from budget before any other request of the group
//! may issue (`block/blk-iocost.c`, 5.4 to 6.x: `ioc_now`, `ioc_rqos_throttle`,
//! `abs_vdebt`).

use super::hweight::charge;
use super::{MILLION, VTIME_PER_USEC};

/// The device's vtime clock over one period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceClock {
    /// When the period started, nanoseconds.
    pub period_at_ns: u64,
    /// `vnow` at the period start.
    pub period_at_vtime: u64,
    /// Current vrate, ppm of nominal.
    pub vrate_ppm: u64,
}

impl DeviceClock {
    /// `vnow` at `now_ns` (not before the period start).
    pub fn vnow(&self, now_ns: u64) -> u64 {
        let us = u128::from(now_ns.saturating_sub(self.period_at_ns) / 1_000);
        let delta =
            us * u128::from(VTIME_PER_USEC) * u128::from(self.vrate_ppm) / u128::from(MILLION);
        self.period_at_vtime
            .saturating_add(u64::try_from(delta).unwrap_or(u64::MAX))
    }

    /// Starts a new period at `now_ns` with `vrate_ppm`, continuing `vnow`.
    pub fn restart(&mut self, now_ns: u64, vrate_ppm: u64) {
        self.period_at_vtime = self.vnow(now_ns);
        self.period_at_ns = now_ns;
        self.vrate_ppm = vrate_ppm;
    }

    /// Nanoseconds until `vnow` advances by `shortfall` vtime (rounded up; at least 1).
    pub fn wait_ns(&self, shortfall: u64) -> u64 {
        let per_us = u128::from(VTIME_PER_USEC) * u128::from(self.vrate_ppm.max(1));
        let us = (u128::from(shortfall) * u128::from(MILLION)).div_ceil(per_us);
        u64::try_from(us * 1_000).unwrap_or(u64::MAX).max(1)
    }
}

/// What a group may do with a request now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Issue: the charge was added to the group's vtime.
    Issue,
    /// Wait until `vnow` has advanced by this much vtime.
    Wait(u64),
}

/// One group's vtime account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Account {
    /// The group's vtime.
    pub vtime: u64,
    /// Debt in absolute cost (at hweight 100%).
    pub abs_debt: u64,
}

impl Account {
    /// Admits a request of absolute cost `abs_cost` at `hweight_inuse` when `vnow` is as
    /// given: issues and charges if within budget and debt-free, else says how long to wait.
    pub fn admit(&mut self, abs_cost: u64, hweight_inuse: u64, vnow: u64) -> Admit {
        self.repay(hweight_inuse, vnow);
        let cost = charge(abs_cost, hweight_inuse);
        let debt = charge(self.abs_debt, hweight_inuse);
        let due = self.vtime.saturating_add(debt).saturating_add(cost);
        if due <= vnow {
            self.vtime += cost;
            Admit::Issue
        } else {
            Admit::Wait(due - vnow)
        }
    }

    /// Issues a request that must go now: charged if there is budget, else added to debt.
    pub fn force(&mut self, abs_cost: u64, hweight_inuse: u64, vnow: u64) {
        self.repay(hweight_inuse, vnow);
        let cost = charge(abs_cost, hweight_inuse);
        if self.abs_debt == 0 && self.vtime.saturating_add(cost) <= vnow {
            self.vtime += cost;
        } else {
            self.abs_debt = self.abs_debt.saturating_add(abs_cost);
        }
    }

    /// Pays debt from whatever budget the group has at `vnow`.
    pub fn repay(&mut self, hweight_inuse: u64, vnow: u64) {
        if self.abs_debt == 0 || self.vtime >= vnow {
            return;
        }
        let budget = vnow - self.vtime;
        let owed = charge(self.abs_debt, hweight_inuse);
        if owed <= budget {
            self.vtime += owed;
            self.abs_debt = 0;
        } else {
            self.vtime = vnow;
            let paid = budget * hweight_inuse / super::hweight::WEIGHT_ONE;
            self.abs_debt = self.abs_debt.saturating_sub(paid.max(1));
        }
    }

    /// Discards budget beyond `margin` behind `vnow` (an idle group cannot hoard).
    pub fn cap_budget(&mut self, vnow: u64, margin: u64) {
        self.vtime = self.vtime.max(vnow.saturating_sub(margin));
    }
}

#[cfg(test)]
mod tests {
    use super::super::hweight::WEIGHT_ONE;
    use super::*;

    #[test]
    fn vnow_runs_at_vrate() {
        let mut c = DeviceClock {
            period_at_ns: 0,
            period_at_vtime: 0,
            vrate_ppm: MILLION,
        };
        assert_eq!(c.vnow(1_000_000), 1_000 * VTIME_PER_USEC);
        c.restart(1_000_000, MILLION / 2);
        assert_eq!(c.vnow(3_000_000), 2_000 * VTIME_PER_USEC);
        assert_eq!(c.wait_ns(VTIME_PER_USEC), 2_000);
    }

    #[test]
    fn half_share_pays_double_and_waits() {
        let mut a = Account {
            vtime: 0,
            abs_debt: 0,
        };
        assert_eq!(a.admit(100, WEIGHT_ONE / 2, 1_000), Admit::Issue);
        assert_eq!(a.vtime, 200);
        assert_eq!(a.admit(500, WEIGHT_ONE / 2, 1_000), Admit::Wait(200));
        assert_eq!(a.vtime, 200);
    }

    #[test]
    fn forced_requests_run_into_debt_that_blocks_until_repaid() {
        let mut a = Account {
            vtime: 900,
            abs_debt: 0,
        };
        a.force(300, WEIGHT_ONE, 1_000);
        assert_eq!(
            a,
            Account {
                vtime: 900,
                abs_debt: 300
            }
        );
        assert_eq!(a.admit(10, WEIGHT_ONE, 1_000), Admit::Wait(10 + 200));
        assert_eq!(
            a,
            Account {
                vtime: 1_000,
                abs_debt: 200
            }
        );
        assert_eq!(a.admit(10, WEIGHT_ONE, 1_210), Admit::Issue);
        assert_eq!(
            a,
            Account {
                vtime: 1_210,
                abs_debt: 0
            }
        );
    }

    #[test]
    fn idle_budget_is_capped() {
        let mut a = Account::default();
        a.cap_budget(10_000, 1_500);
        assert_eq!(a.vtime, 8_500);
    }
}
