//! The ways a thread runs the engine's turns, one module each (see the roles table in the
//! `dispatcher` module):
//!
//! - `inline`: a client's thread, right after it submits (caller runs);
//! - `poller`: a thread waiting for an outcome or for room, holding the poller role;
//! - `lane`: a job's thread blocked on its own lane;
//! - `dispatcher_thread`: the poller of last resort, and the drain on shutdown.
//!
//! Here: what a thread holds the poller role for ([`Purpose`]); who holds it is kept in the
//! `roles` module.

use crate::completion::Slot;
use crate::dispatcher::roles::Role;

mod dispatcher_thread;
mod inline;
mod lane;
mod poller;

/// What a thread holds the poller role for.
pub(crate) enum Purpose<'s> {
    /// A client's outcome: until this slot is ready.
    Outcome(&'s dyn Slot),
    /// A submitter pushed back: until the policy has room for its request.
    Room,
    /// The dispatcher thread: until nobody needs a poller.
    Dispatch,
}

impl Purpose<'_> {
    pub(crate) fn role(&self) -> Role {
        match self {
            Purpose::Dispatch => Role::Dispatcher,
            Purpose::Outcome(_) | Purpose::Room => Role::Client,
        }
    }
}
