//! Who holds which role, kept behind the engine's lock beside the core's state (the core
//! holds it and knows nothing of it): the poller and what it waits for, the keeper of the
//! policy's timer, the submitters waiting for room, the exiting threads, and whether the
//! dispatcher thread is wanted or asleep. The transitions are the `drive` module's, the
//! timer's are the `timer` module's (see the roles table in the `dispatcher` module).
//!
//! Touched under the lock by every thread that takes or gives up a role.

use std::time::Instant;

/// Who holds the poller role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Client,
    Dispatcher,
}

/// A lane's thread blocked until `until` at the latest, which runs a turn then: the policy's
/// timer is kept if it is not earlier.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimerKeeper {
    pub(crate) lane: usize,
    pub(crate) until: Instant,
}

/// The roles' state behind the lock.
#[derive(Debug, Default)]
pub(crate) struct Roles {
    /// Who polls the backend, if anybody.
    pub(crate) poller: Option<Role>,
    /// The poller is blocked in the waiter (until `poll_deadline`).
    pub(crate) poller_blocked: bool,
    /// The poller polls for room in the policy (a submitter pushed back).
    pub(crate) poller_wants_room: bool,
    pub(crate) poll_deadline: Option<Instant>,
    /// The lane thread blocked until (at the latest) the policy's timer, if any.
    pub(crate) keeper: Option<TimerKeeper>,
    /// Submitters blocked for room.
    pub(crate) room_waiters: usize,
    /// Exiting threads waiting for the operations in flight ([`Shared::outlive_submissions`]).
    ///
    /// [`Shared::outlive_submissions`]: crate::submitter::OutlivesSubmissions::outlive_submissions
    pub(crate) exit_waiters: usize,
    /// The dispatcher thread was asked to take the poller role.
    pub(crate) dispatcher_wanted: bool,
    /// The dispatcher thread sleeps on `idle` and nobody has woken it since.
    pub(crate) dispatcher_asleep: bool,
}
