//! Who keeps the policy's timer (a policy's "wait until t" with requests held): a poller
//! blocked no later than it, the *keeper* (a lane's thread blocked no later than it), a lane's
//! thread that is running (it turns again, or blocks and keeps it), or else the dispatcher
//! thread. A turn that makes the timer earlier wakes whoever keeps it for later.
//!
//! Touched under the lock by whichever thread runs a turn or blocks on its lane.

use std::time::Instant;

use super::core::Core;
use super::roles::TimerKeeper;
use super::Shared;

impl Core {
    /// The policy's timer, if requests wait for it.
    pub(crate) fn held_timer(&self) -> Option<Instant> {
        self.timer.filter(|_| !self.pending.is_empty())
    }

    /// The policy's timer, if requests wait for it and no lane's thread keeps it: neither
    /// the keeper (blocked until the timer at the latest) nor a lane's thread that is not
    /// blocked, which runs a turn or blocks (and keeps the timer) next, or closes its lane.
    pub(crate) fn unkept_timer(&self) -> Option<Instant> {
        let timer = self.held_timer()?;
        let kept = self
            .roles
            .keeper
            .is_some_and(|keeper| keeper.until <= timer);
        let keeper_to_come = self.lanes.iter().any(|lane| lane.open && !lane.waiting);
        (!kept && !keeper_to_come).then_some(timer)
    }

    /// A lane's thread is about to block on `lane` until `deadline`: with nobody polling and
    /// a timer nobody keeps, it becomes the keeper. Returns how long it blocks.
    pub(crate) fn keep_timer_on_lane(
        &mut self,
        lane: usize,
        deadline: Option<Instant>,
    ) -> Option<Instant> {
        if self.roles.poller.is_some() {
            return deadline;
        }
        let Some(timer) = self.unkept_timer() else {
            return deadline;
        };
        let until = deadline.map_or(timer, |at| at.min(timer));
        self.roles.keeper = Some(TimerKeeper { lane, until });
        Some(until)
    }
}

impl Shared {
    /// After a turn by a thread that is not the poller: make sure somebody is there at the
    /// policy's timer, if requests wait for it. With no poller, nothing is needed while a
    /// lane's thread runs (it keeps the timer when it blocks, [`Core::unkept_timer`]);
    /// otherwise a keeper blocked until later is woken (after the lock) to block again until
    /// the earlier time, and with no keeper the dispatcher thread is asked to poll. A poller
    /// blocked until later is woken likewise.
    pub(crate) fn keep_timer(&self, core: &mut Core) {
        let Some(timer) = core.held_timer() else {
            return;
        };
        if core.roles.poller.is_none() {
            if core.unkept_timer().is_none() {
                return;
            }
            let keeper = core.roles.keeper.take();
            match keeper.and_then(|keeper| core.backend.lane_notifier(keeper.lane)) {
                Some(notifier) => core.wakes.push(notifier),
                None => self.want_dispatcher(core),
            }
        } else if core.roles.poller_blocked && core.roles.poll_deadline.is_none_or(|at| timer < at)
        {
            core.roles.poll_deadline = Some(timer);
            core.wakes.push(self.notifier.clone());
        }
    }
}
