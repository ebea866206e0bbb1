//! The dispatcher thread, the poller of last resort: asleep on `idle` while nobody needs it,
//! polling while somebody does (a counted waker, a timer nobody keeps, an exiting thread, a
//! shutdown) and until the operations it dispatched itself are back; on shutdown it tells the
//! policy every process exited, drains, and closes the engine.
//!
//! Touched by the dispatcher thread (its loop), and by any thread that asks for it.

use std::io;
use std::sync::atomic::Ordering;

use ioslice_core::ProcessId;

use super::Purpose;
use crate::completion::IoErrorKind;
use crate::dispatcher::core::Core;
use crate::dispatcher::roles::Role;
use crate::dispatcher::Shared;

impl Shared {
    /// Whether somebody other than a client's own wait needs the backend polled.
    pub(crate) fn needs_dispatcher(&self, core: &Core) -> bool {
        if core.closed {
            return false;
        }
        if core.stopping {
            return true;
        }
        let outstanding = !core.pending.is_empty() || !core.ops.is_empty();
        let timer = core.unkept_timer().is_some();
        let waiting =
            self.counters.waiting.load(Ordering::SeqCst) > 0 || core.roles.exit_waiters > 0;
        outstanding && (timer || waiting)
    }

    /// Ask the dispatcher thread to take the poller role (it takes it once it is free).
    pub(crate) fn want_dispatcher(&self, core: &mut Core) {
        core.roles.dispatcher_wanted = true;
        if core.roles.dispatcher_asleep {
            // Once per sleep: it clears the flag itself when it sleeps again.
            core.roles.dispatcher_asleep = false;
            self.idle.notify_one();
        }
    }

    /// An async task registered a waker: make sure some thread polls the backend.
    pub(crate) fn ensure_poller(&self) {
        let mut core = self.lock();
        if core.roles.poller.is_none() && !core.closed {
            self.want_dispatcher(&mut core);
        }
    }

    /// The dispatcher thread: poll whenever somebody needs it, drain on shutdown. An error is
    /// a backend failure that ended the engine; every request it held was failed with it.
    pub(crate) fn run_dispatcher(&self) -> io::Result<()> {
        let mut core = self.lock();
        loop {
            if core.stopping && !core.exits_told && !core.closed {
                core.exits_told = true;
                let now = core.now();
                let processes: Vec<ProcessId> = core.processes.iter().copied().collect();
                for process in processes {
                    core.queue.process_exited(process, now);
                }
                let polling = core.roles.poller.is_some();
                core.turn_role = Some(Role::Dispatcher);
                core.turn(!polling);
                core.turn_role = None;
                self.unlock_and_deliver(core);
                core = self.lock();
                continue;
            }
            if core.stopping && core.roles.poller.is_none() && !core.closed && core.drained() {
                core.closed = true;
                core.publish();
                if core.roles.room_waiters > 0 {
                    self.room.notify_all();
                }
                self.exits.notify_all();
            }
            if core.closed {
                break;
            }
            let needed = self.needs_dispatcher(&core) || core.dispatcher_ops > 0;
            if core.roles.poller.is_none() && (core.roles.dispatcher_wanted || needed) {
                core.roles.dispatcher_wanted = false;
                #[cfg(test)]
                {
                    core.dispatcher_polls += 1;
                }
                core = self.poll(core, Purpose::Dispatch, None);
                continue;
            }
            core.roles.dispatcher_asleep = true;
            core = self.relock(self.idle.wait(core));
            core.roles.dispatcher_asleep = false;
        }
        match core.failure.take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Stop: no more requests are accepted; the dispatcher thread drains and closes.
    pub(crate) fn begin_stop(&self) {
        self.accepting.store(false, Ordering::Release);
        let mut core = self.lock();
        core.stopping = true;
        self.want_dispatcher(&mut core);
        let blocked = core.roles.poller_blocked;
        drop(core);
        if blocked {
            // The poller re-checks with the lock: the dispatcher may now be needed.
            self.notifier.notify();
        }
    }

    /// The dispatcher thread is gone without closing (it panicked): fail what is left.
    pub(crate) fn abandon(&self) {
        let mut core = self.lock();
        if !core.closed {
            core.fail_all(IoErrorKind::ShutDown);
            core.closed = true;
            core.publish();
        }
        self.room.notify_all();
        self.exits.notify_all();
    }
}
