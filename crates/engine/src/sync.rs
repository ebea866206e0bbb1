//! The synchronisation the engine's threads share, and its clock: `std`'s, or, built with
//! `--cfg ioslice_model`, the model checker's (see the `model_check` module).
//!
//! In a model build, every lock, condition variable, atomic, thread, park and thread-local the
//! engine's core uses (the `dispatcher`, `completion`, `counters`, `submitter` and `stats`
//! modules and the memory backend) is [shuttle](https://docs.rs/shuttle)'s, which runs the
//! threads one at a time and explores the orders in which they can interleave; and the
//! engine's clock ([`now`]) is virtual: it stands still until a test moves it
//! ([`advance_clock`]). Shuttle's timed waits never time out, so in a model a thread blocked
//! "until a deadline" is only woken by another thread, or by the test moving the clock and
//! waking the memory device's waiters: a model without a clock checks that nothing depends on
//! a timeout to make progress.
//! The io_uring and thread-pool backends keep `std`'s primitives: the model runs on memory.
//!
//! Touched by every thread; holds no state of its own but the virtual clock.

#[cfg(not(ioslice_model))]
mod imp {
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
    pub(crate) use std::thread;
    pub(crate) use std::thread_local;

    /// The engine's clock: the system's monotonic clock.
    #[inline]
    pub(crate) fn now() -> std::time::Instant {
        std::time::Instant::now()
    }
}

#[cfg(ioslice_model)]
mod imp {
    use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering};
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    pub(crate) use shuttle::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub(crate) use shuttle::sync::{Condvar, Mutex, MutexGuard};
    pub(crate) use shuttle::thread;
    pub(crate) use shuttle::thread_local;

    /// The virtual clock's origin, and how far it has moved (shuttle runs every thread of
    /// an execution on one OS thread, so a process-wide value serves every model thread).
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    static ELAPSED_NANOS: StdAtomicU64 = StdAtomicU64::new(0);

    /// The engine's clock: the virtual clock's origin plus how far it was moved.
    pub(crate) fn now() -> Instant {
        let origin = *ORIGIN.get_or_init(Instant::now);
        origin + Duration::from_nanos(ELAPSED_NANOS.load(Ordering::SeqCst))
    }

    /// Move the virtual clock forward (a test's clock thread).
    pub(crate) fn advance_clock(by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        ELAPSED_NANOS.fetch_add(nanos, Ordering::SeqCst);
    }
}

pub(crate) use imp::*;
