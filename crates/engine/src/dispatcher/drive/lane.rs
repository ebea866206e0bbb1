//! A job's thread blocked on its own lane: it runs a turn, then blocks in the lane's waiter
//! alone, so the kernel wakes exactly that thread when its request completes; it keeps the
//! policy's timer on the way if nobody else does.
//!
//! Touched by the lane's own thread only.

use std::time::Instant;

use crate::completion::{CompletionQueue, Slot};
use crate::counters::Counters;
use crate::dispatcher::drive::poller::earliest;
use crate::dispatcher::{Lane, Shared};
use crate::sync::now;

impl Shared {
    /// Block until the job queue `slot` is ready or `deadline` passes, where every request
    /// `slot` waits for was submitted on `lane` by this thread: run a turn, then block on the
    /// lane alone. The backend wakes this thread when one of its operations completes, and
    /// only this thread reaps the lane meanwhile, so it cannot miss its completion; another
    /// thread that completes what the slot waits for wakes the lane through the registered
    /// waker.
    pub(crate) fn block_on_lane(
        &self,
        slot: &CompletionQueue,
        deadline: Option<Instant>,
        lane: &Lane,
    ) {
        let _exiting = self.note_submitter();
        // Lane waits are not counted as waiters: they need no poller.
        let uncounted = Counters::default();
        let passed = || deadline.is_some_and(|at| now() >= at);
        if slot.is_ready() || passed() {
            return;
        }
        let mut core = self.lock();
        loop {
            let open = core.lanes.get(lane.id).is_some_and(|state| state.open);
            if core.closed || !open {
                drop(core);
                return self.block_on(slot, deadline);
            }
            self.client_turn(&mut core);
            if !core.outcomes.is_empty() {
                self.unlock_and_deliver(core);
                if slot.is_ready() || passed() {
                    return;
                }
                core = self.lock();
                continue;
            }
            if !slot.register_uncounted(&lane.waker) {
                return self.unlock_and_deliver(core); // ready
            }
            core.set_waiting(lane.id, true);
            // An operation timing out ends the wait too (its outcome may be ours).
            let until = earliest(
                core.keep_timer_on_lane(lane.id, deadline),
                core.next_timeout(),
            );
            self.unlock_and_deliver(core);
            let waited = lane.waiter.wait(until);
            core = self.lock();
            core.set_waiting(lane.id, false);
            // Take what woke us, completions or a notification alike: a notification left on
            // the lane (a keeper woken for an earlier timer, with nothing of its own at the
            // device) would end every later wait at once, and the thread would spin.
            core.reap_own_lane(lane.id);
            if core
                .roles
                .keeper
                .is_some_and(|keeper| keeper.lane == lane.id)
            {
                core.roles.keeper = None;
            }
            slot.unregister(&uncounted);
            if let Err(error) = waited {
                core.fail_everything(error);
            }
            if slot.is_ready() || passed() {
                // What woke us may be this lane's completions: reap them for the next wait.
                self.client_turn(&mut core);
                self.unlock_and_deliver(core);
                return;
            }
        }
    }
}
