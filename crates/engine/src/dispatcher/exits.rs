//! A thread that submitted to a backend that ties operations to their submitter (io_uring)
//! outlives them: noting such a thread before its turns, and its wait when it exits
//! (invariant 6 of the `dispatcher` module; the thread-local list is `crate::submitter`'s).
//!
//! Touched by client threads (noted before they run turns, waiting as they exit); the
//! dispatcher thread polls for the exiting ones.

use std::sync::{PoisonError, Weak};

use super::Shared;
use crate::submitter::{self, OutlivesSubmissions, WaitOnReturn};

impl Shared {
    /// The calling thread (a client's, never the dispatcher thread) is about to run turns,
    /// which may submit to the backend: if the backend ties operations to the thread that
    /// submits them, keep this thread alive when it exits until those in flight are done
    /// ([`submitter`]). What it returns must live until the caller has released the lock and
    /// made its system calls.
    pub(crate) fn note_submitter(&self) -> Option<WaitOnReturn> {
        if !self.ties_operations_to_submitter {
            return None;
        }
        submitter::note(self.id, || {
            let me: Weak<dyn OutlivesSubmissions> = self.me.clone();
            me
        })
    }
}

impl OutlivesSubmissions for Shared {
    /// Block until no operation in flight now is still at the device, or the engine has
    /// closed, submitting nothing: the dispatcher thread (asked for, as for any waiter) polls
    /// meanwhile, and wakes this thread through `exits` whenever operations complete.
    fn outlive_submissions(&self) {
        let mut core = self.lock();
        let horizon = core.next_token;
        core.roles.exit_waiters += 1;
        loop {
            let in_flight = core.ops.keys().any(|&token| token < horizon);
            if core.closed || !in_flight {
                break;
            }
            if core.roles.poller.is_none() {
                self.want_dispatcher(&mut core);
            }
            core = self
                .exits
                .wait(core)
                .unwrap_or_else(PoisonError::into_inner);
        }
        core.roles.exit_waiters -= 1;
    }
}
