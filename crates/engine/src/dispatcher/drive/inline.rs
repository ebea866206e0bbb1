//! Caller runs: a client's thread inserts its request (or its process's exit) and runs a turn
//! itself, reaping the shared lane only if nobody polls it; push-back while the policy is
//! full; deferred submissions and their flush.
//!
//! Touched by client threads (`Client` calls, a job's loop).

use std::sync::atomic::Ordering;

use super::Purpose;
use crate::dispatcher::core::Core;
use crate::dispatcher::Shared;
use crate::request::Message;

impl Shared {
    /// Insert a request (or a process's exit) and run a turn on the calling thread. Blocks
    /// while the policy holds `max_queued` requests (push-back). A request the engine can no
    /// longer take (it has shut down) is failed with a shutdown error.
    pub(crate) fn submit(&self, message: Message) {
        self.submit_as(message, true);
    }

    /// [`Shared::submit`]; with `flush` false, what the turn dispatches is queued at the
    /// backend but not handed to the device yet (no system call), unless
    /// [`DEFER_AT_MOST`] operations are already queued: a later turn or [`Shared::flush`]
    /// hands them over, batching several submissions into one. The caller must flush before
    /// it waits or stops submitting.
    ///
    /// [`DEFER_AT_MOST`]: crate::dispatcher::core::DEFER_AT_MOST
    pub(crate) fn submit_as(&self, message: Message, flush: bool) {
        let _exiting = self.note_submitter();
        let mut core = self.lock();
        if matches!(message, Message::Submit(_)) {
            let has_room = |core: &Core| core.closed || core.pending.len() < self.max_queued;
            while !has_room(&core) {
                if core.roles.poller.is_none() {
                    core = self.poll(core, Purpose::Room, None);
                } else {
                    core.roles.room_waiters += 1;
                    core = self.relock(self.room.wait(core));
                    core.roles.room_waiters -= 1;
                }
            }
        }
        if core.closed {
            drop(core);
            if let Message::Submit(submission) = message {
                submission.completer.fail(self.refusal());
            }
            return;
        }
        match message {
            Message::Submit(submission) => core.insert(submission),
            Message::Exit(process) => {
                let now = core.now();
                core.queue.process_exited(process, now);
            }
        }
        core.defer_submit = !flush;
        self.client_turn(&mut core);
        core.defer_submit = false;
        if core.deferred {
            self.deferred.store(true, Ordering::Release);
        }
        self.unlock_and_deliver(core);
    }

    /// Change a group's weight and/or limits under the lock, at the engine's time, then run
    /// a turn so that what the change lets go (a looser limit) goes now.
    pub(crate) fn update_group(
        &self,
        group: ioslice_core::GroupId,
        weight: Option<u32>,
        limits: Option<ioslice_core::limit::Limits>,
    ) -> Result<(), crate::error::EngineError> {
        let mut core = self.lock();
        let answer = core.update_group(group, weight, limits);
        if answer.is_ok() && !core.closed {
            self.client_turn(&mut core);
        }
        self.unlock_and_deliver(core);
        answer
    }

    /// Add a group under the lock, at the engine's time.
    pub(crate) fn add_group(
        &self,
        path: &str,
        weight: Option<u32>,
        limits: Option<ioslice_core::limit::Limits>,
    ) -> Result<ioslice_core::GroupId, crate::error::EngineError> {
        let mut core = self.lock();
        let answer = core.add_group(path, weight, limits);
        self.unlock_and_deliver(core);
        answer
    }

    /// Remove a group under the lock, at the engine's time, then run a turn: what was
    /// waiting for the group's share goes now.
    pub(crate) fn remove_group(
        &self,
        group: ioslice_core::GroupId,
    ) -> Result<(), crate::error::EngineError> {
        let mut core = self.lock();
        let answer = core.remove_group(group);
        if answer.is_ok() && !core.closed {
            self.client_turn(&mut core);
        }
        self.unlock_and_deliver(core);
        answer
    }

    /// [`Core::turn`] whose system calls wait for [`Shared::unlock_and_deliver`]: the caller
    /// must release the lock through it.
    pub(crate) fn turn_unlocked_syscalls(core: &mut Core, reap: bool) {
        core.defer_syscalls = true;
        core.turn(reap);
        core.defer_syscalls = false;
    }

    /// A turn on a client's thread, which reaps the shared ring only if nobody polls it, and
    /// makes sure somebody is there at the policy's timer. The caller releases the lock
    /// through [`Shared::unlock_and_deliver`].
    pub(crate) fn client_turn(&self, core: &mut Core) {
        let polling = core.roles.poller.is_some();
        Self::turn_unlocked_syscalls(core, !polling);
        self.keep_timer(core);
        self.wake_room_poller(core);
    }

    /// After a turn by a thread that is not the poller: a poller blocked for room, which the
    /// turn made, is woken (after the lock), and so are submitters waiting for it.
    pub(crate) fn wake_room_poller(&self, core: &mut Core) {
        if core.pending.len() >= self.max_queued {
            return;
        }
        if core.roles.room_waiters > 0 {
            self.room.notify_all();
        }
        if core.roles.poller_blocked && core.roles.poller_wants_room {
            core.roles.poller_blocked = false;
            core.wakes.push(self.notifier.clone());
        }
    }

    /// Hand the device what deferred submissions left queued.
    pub(crate) fn flush(&self) {
        if !self.deferred.load(Ordering::Acquire) {
            return;
        }
        let _exiting = self.note_submitter();
        let mut core = self.lock();
        self.deferred.store(false, Ordering::Release);
        if core.deferred {
            core.deferred = false;
            core.unsubmitted = 0;
            if let Err(error) = core.backend.submit() {
                core.fail_everything(error);
            }
        }
    }
}
