//! Live clients per group ([`Members`]): what makes removing a group with a client in it an
//! error (see the `tenants` module).
//!
//! Touched by any thread that makes, clones, drops or moves a client, or removes a group:
//! behind its own small lock, taken before the engine's, never after it. The lock is the
//! engine's kind (`sync`), so that the model checker sees it: a `std` lock held while a
//! modelled thread waits for the engine's would stall the model.

use std::sync::PoisonError;

use crate::sync::{Mutex, MutexGuard};

use ioslice_core::GroupId;

/// Live clients per group, by group index.
#[derive(Debug, Default)]
pub(crate) struct Members {
    counts: Mutex<Vec<usize>>,
}

impl Members {
    /// The counts, held until the guard drops.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Vec<usize>> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One client more in `group`.
    pub(crate) fn join(counts: &mut Vec<usize>, group: GroupId) {
        if counts.len() <= group.index() {
            counts.resize(group.index() + 1, 0);
        }
        counts[group.index()] += 1;
    }

    /// One client fewer in `group`.
    pub(crate) fn leave(&self, group: GroupId) {
        if let Some(count) = self.lock().get_mut(group.index()) {
            *count = count.saturating_sub(1);
        }
    }
}
