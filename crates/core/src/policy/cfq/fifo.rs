//! A queue's FIFO (the kernel's `cfqq->fifo`): its queued requests by due time — insertion
//! time plus `fifo_expire_sync` or `fifo_expire_async` — and insertion order among equal due
//! times, so that a request that has waited too long is served next whatever its sector.
//!
//! A queue holds requests of one kind, so each arrives due no earlier than those before it and
//! joins at the back; only a coalesce, where the survivor takes the absorbed request's earlier
//! place, and a change of the expiry tunables put one in the middle. The entries are kept
//! sorted in a ring buffer. Requests mostly leave from the middle (dispatched in sector order),
//! so a leaving request's entry is left behind, stale, and dropped when it reaches the front or
//! when stale entries outnumber live ones; the caller says which entries are live (a slot
//! still queued under the same insertion number, which no other request ever gets).

use std::collections::VecDeque;

use crate::merge::SlotKey;
use crate::Nanos;

/// A FIFO entry: due time, insertion order, slot.
pub(super) type FifoKey = (Nanos, u64, SlotKey);

/// Stale entries tolerated before a sweep, whatever the number of live ones.
const STALE_SLACK: usize = 32;

/// Queued requests by (due time, insertion order).
#[derive(Debug, Clone, Default)]
pub(super) struct Fifo {
    /// Live and stale entries, sorted.
    entries: VecDeque<FifoKey>,
    /// How many of them are stale.
    stale: usize,
}

impl Fifo {
    /// The live entry due first; stale entries before it are dropped.
    pub(super) fn first(&mut self, live: impl Fn(&FifoKey) -> bool) -> Option<FifoKey> {
        while let Some(&front) = self.entries.front() {
            if live(&front) {
                return Some(front);
            }
            self.entries.pop_front();
            self.stale = self.stale.saturating_sub(1);
        }
        None
    }

    /// Add an entry in its place.
    pub(super) fn insert(&mut self, key: FifoKey) {
        match self.entries.back() {
            Some(&last) if last > key => {
                let at = self.entries.partition_point(|&entry| entry < key);
                self.entries.insert(at, key);
            }
            _ => self.entries.push_back(key),
        }
    }

    /// An entry turned stale (its request left the queue or took another place); when stale
    /// entries outnumber live ones, only the live are kept.
    pub(super) fn forget(&mut self, live: impl Fn(&FifoKey) -> bool) {
        self.stale += 1;
        if self.stale > STALE_SLACK && 2 * self.stale > self.entries.len() {
            self.entries.retain(|entry| live(entry));
            self.stale = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Fifo, FifoKey, STALE_SLACK};
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    #[test]
    fn serves_the_live_entry_due_first_whatever_the_insertion_order() {
        let live = RefCell::new(BTreeSet::new());
        let is_live = |key: &FifoKey| live.borrow().contains(key);
        let mut fifo = Fifo::default();
        for key in [(10, 1, 7), (10, 2, 3), (5, 9, 4)] {
            fifo.insert(key);
            live.borrow_mut().insert(key);
        }
        assert_eq!(fifo.first(is_live), Some((5, 9, 4)));
        live.borrow_mut().remove(&(10, 1, 7));
        fifo.forget(is_live);
        assert_eq!(fifo.first(is_live), Some((5, 9, 4)));
        live.borrow_mut().remove(&(5, 9, 4));
        fifo.forget(is_live);
        assert_eq!(fifo.first(is_live), Some((10, 2, 3)));
        live.borrow_mut().remove(&(10, 2, 3));
        fifo.forget(is_live);
        assert_eq!(fifo.first(is_live), None);
    }

    #[test]
    fn stale_entries_are_swept_once_they_outnumber_live_ones() {
        let live = RefCell::new(BTreeSet::new());
        let is_live = |key: &FifoKey| live.borrow().contains(key);
        let mut fifo = Fifo::default();
        let head = (0, 0, 0);
        fifo.insert(head);
        live.borrow_mut().insert(head);
        for seq in 1..=(2 * STALE_SLACK as u64) {
            let key = (seq, seq, 1);
            fifo.insert(key);
            fifo.forget(is_live);
        }
        assert!(
            fifo.entries.len() <= STALE_SLACK + 2,
            "{}",
            fifo.entries.len()
        );
        assert_eq!(fifo.first(is_live), Some(head));
    }
}
