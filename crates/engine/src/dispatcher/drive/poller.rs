//! The poller: a thread that waits for an outcome (or for room in the policy) and finds
//! nobody polling takes the role, runs turns and blocks in the backend's shared waiter between
//! them; a thread that finds another poller parks on its outcome instead.
//!
//! Touched by client threads waiting (`IoFuture::wait`, a job's queue) and, through
//! `Purpose::Dispatch`, by the dispatcher thread.

use std::time::Instant;

use super::Purpose;
use crate::completion::{park_until, park_waker, Slot};
use crate::dispatcher::core::Core;
use crate::dispatcher::lanes::LANE_RECHECK;
use crate::dispatcher::roles::Role;
use crate::dispatcher::Shared;
use crate::sync::{now, MutexGuard};

impl Shared {
    /// Block until `slot` is ready or `deadline` passes, polling the backend if nobody else
    /// does, else parked until the poller completes what the slot waits for.
    pub(crate) fn block_on(&self, slot: &dyn Slot, deadline: Option<Instant>) {
        let _exiting = self.note_submitter();
        loop {
            if slot.is_ready() || deadline.is_some_and(|at| now() >= at) {
                return;
            }
            let mut core = self.lock();
            if core.roles.poller.is_none() && !core.closed {
                core = self.poll(core, Purpose::Outcome(slot), deadline);
                drop(core);
                continue;
            }
            // Registered under the lock, so a poller giving up its role sees the waker
            // counted and hands the role on.
            let registered = slot.register(&park_waker(), &self.counters);
            drop(core);
            if registered {
                park_until(slot, deadline, &self.counters);
            }
        }
    }

    /// Hold the poller role (nobody holds it) and run turns, blocking in the backend's waiter
    /// between them, until `purpose` is met (checked under the lock), `deadline`, or the
    /// engine closes; then give the role up, handing it to the dispatcher thread if somebody
    /// needs a poller.
    ///
    /// Whatever another thread does that can meet the purpose wakes the blocked poller: an
    /// outcome delivered to its slot by another thread wakes it through the waker it
    /// registers there before blocking; room made by another thread's turn, through
    /// [`Shared::wake_room_poller`]; a new earlier timer, through [`Shared::keep_timer`].
    pub(crate) fn poll<'a>(
        &'a self,
        mut core: MutexGuard<'a, Core>,
        purpose: Purpose<'_>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, Core> {
        let role = purpose.role();
        core.roles.poller = Some(role);
        core.roles.poller_wants_room = matches!(purpose, Purpose::Room);
        loop {
            core.turn_role = Some(role);
            Self::turn_unlocked_syscalls(&mut core, true);
            core.turn_role = None;
            if core.roles.room_waiters > 0 && core.pending.len() < self.max_queued {
                self.room.notify_all();
            }
            if core.has_after_unlock() {
                self.unlock_and_deliver(core);
                core = self.lock();
            }
            if core.closed
                || self.purpose_met(&core, &purpose)
                || deadline.is_some_and(|at| now() >= at)
            {
                break;
            }
            if let Purpose::Outcome(slot) = purpose {
                if !slot.register_uncounted(&self.poller_waker) {
                    continue; // delivered meanwhile
                }
            }
            let until = self.poll_until(&core, deadline);
            core.roles.poller_blocked = true;
            core.roles.poll_deadline = until;
            self.unlock_and_deliver(core);
            let waited = self.waiter.wait(until);
            if let Purpose::Outcome(slot) = purpose {
                slot.unregister(&self.counters);
            }
            core = self.lock();
            core.roles.poller_blocked = false;
            core.roles.poll_deadline = None;
            if let Err(error) = waited {
                core.fail_everything(error);
                break;
            }
        }
        core.roles.poller = None;
        core.roles.poller_wants_room = false;
        if role == Role::Client && self.needs_dispatcher(&core) {
            self.want_dispatcher(&mut core);
        }
        if core.roles.room_waiters > 0 {
            self.room.notify_all();
        }
        core
    }

    /// Whether a poller has what it polls for.
    pub(crate) fn purpose_met(&self, core: &Core, purpose: &Purpose<'_>) -> bool {
        match purpose {
            Purpose::Outcome(slot) => slot.is_ready(),
            Purpose::Room => core.pending.len() < self.max_queued,
            Purpose::Dispatch => {
                let needed = self.needs_dispatcher(core) || core.dispatcher_ops > 0;
                !needed || (core.stopping && core.drained())
            }
        }
    }

    /// How long a poller blocks: until its deadline, the policy's timer or the earliest I/O
    /// timeout, whichever is first, and no longer than the lane recheck while a closed lane has operations left.
    /// Nothing else bounds the wait: whatever can end it wakes it (see [`Shared::poll`]).
    pub(crate) fn poll_until(&self, core: &Core, deadline: Option<Instant>) -> Option<Instant> {
        let timer = earliest(core.held_timer(), core.next_timeout());
        let mut until = earliest(deadline, timer);
        if core.orphaned_lane_ops() {
            let soon = now() + LANE_RECHECK;
            until = Some(until.map_or(soon, |at| at.min(soon)));
        }
        until
    }
}

/// The earlier of two optional instants.
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
