//! A request to end a run early, shared by whoever asks (a signal handler, a test) and the
//! drivers that check it (the simulator's event loop, the real run's job threads). Setting
//! it stops new I/O; what is in flight completes and is reported, as fio does on SIGINT.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Set once, read often; clones share the same state. It holds the number of the signal
/// that asked (or any non-zero number for another reason).
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<AtomicUsize>);

impl StopSignal {
    /// Not yet asked.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask every holder to stop, for `signal` (non-zero). Only an atomic store, so a signal
    /// handler may call it.
    pub fn set(&self, signal: i32) {
        self.0.store(
            usize::try_from(signal).unwrap_or(0).max(1),
            Ordering::Relaxed,
        );
    }

    /// The shared cell itself, for a signal handler to store the signal's number in
    /// (`signal_hook::flag::register_usize`).
    pub fn cell(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.0)
    }

    /// Whether a stop was asked.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed) != 0
    }

    /// The signal that asked, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            signal => Some(i32::try_from(signal).unwrap_or(i32::MAX)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_request() {
        let stop = StopSignal::new();
        let seen_by_driver = stop.clone();
        assert!(!seen_by_driver.is_set());
        assert_eq!(seen_by_driver.signal(), None);
        stop.set(2);
        assert!(seen_by_driver.is_set());
        assert_eq!(seen_by_driver.signal(), Some(2));
        stop.set(0);
        assert_eq!(seen_by_driver.signal(), Some(1), "zero still means asked");
    }
}
