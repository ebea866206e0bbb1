//! The engine-wide counters that futures, completers and the engine's turns touch without
//! the engine's lock: how many requests were cancelled, and how many wakers wait for somebody
//! to poll the backend (the dispatcher thread is asked for while any does).
//!
//! Touched by every thread: clients and futures count their wakers, completers count what is
//! dropped unfulfilled, the engine's turns and the statistics read them.

use crate::sync::{AtomicU64, AtomicUsize};

/// Engine-wide counters that futures and completers touch.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Completers dropped unfulfilled.
    pub cancelled: AtomicU64,
    /// Wakers registered (a parked thread's or an async task's) and not yet woken: somebody
    /// waits for the engine to reap, so some thread must be polling the backend.
    pub waiting: AtomicUsize,
}
