//! A queue's sort list (the kernel's `cfqq->sort_list`, an rb-tree): its queued requests in
//! sector order, ties by slot, from which the queue serves its next request and finds the
//! neighbours of the one leaving.
//!
//! A queue holds at most its processes' queue depth, or `nr_requests` of writeback, so the list
//! is a sorted vector: one binary search finds a place and both neighbours, and moving a few
//! dozen entries costs less than a tree's node walk. The order is the tree's, (sector, slot).

use crate::merge::{RequestSlab, SlotKey};
use crate::sector_order::SeekCost;

/// Queued requests by (start sector, slot).
#[derive(Debug, Clone, Default)]
pub(super) struct SortList {
    entries: Vec<(u64, SlotKey)>,
}

impl SortList {
    /// Number of requests.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Add a request starting at `sector`.
    pub(super) fn insert(&mut self, sector: u64, slot: SlotKey) {
        let key = (sector, slot);
        let at = self.entries.partition_point(|&entry| entry < key);
        if self.entries.get(at) != Some(&key) {
            self.entries.insert(at, key);
        }
    }

    /// Remove the request at `slot` starting at `sector`, if there.
    pub(super) fn remove(&mut self, sector: u64, slot: SlotKey) {
        if let Ok(at) = self.entries.binary_search(&(sector, slot)) {
            self.entries.remove(at);
        }
    }

    /// The request to serve after the one at `last` (starting at `sector`) leaves: the better,
    /// from its position, of its neighbours in sector order, the one after wrapping to the
    /// first (the kernel's `cfq_find_next_rq`).
    pub(super) fn next_after(
        &self,
        seek: &SeekCost,
        slab: &RequestSlab,
        sector: u64,
        last: SlotKey,
    ) -> Option<SlotKey> {
        let key = (sector, last);
        let below = self.entries.partition_point(|&entry| entry < key);
        let above = match self.entries.get(below) {
            Some(&entry) if entry == key => below + 1,
            _ => below,
        };
        let after = self
            .entries
            .get(above)
            .or_else(|| self.entries.first().filter(|&&(_, slot)| slot != last))
            .map(|&(_, slot)| slot);
        let before = below
            .checked_sub(1)
            .and_then(|at| self.entries.get(at))
            .map(|&(_, slot)| slot);
        seek.choose_slot(slab, sector, after, before)
    }
}

#[cfg(test)]
mod tests {
    use super::SortList;
    use crate::merge::RequestSlab;
    use crate::sector_order::SeekCost;
    use crate::{Direction, ProcessId, Request, RequestId};

    #[test]
    fn next_after_takes_the_nearer_neighbour_and_wraps_to_the_first() {
        let mut slab = RequestSlab::default();
        let mut list = SortList::default();
        let mut slots = Vec::new();
        for sector in [1_000, 50_000, 60_000] {
            let slot = slab.insert(Request::new(
                RequestId(sector),
                ProcessId(1),
                Direction::Read,
                sector,
                8,
            ));
            list.insert(sector, slot);
            slots.push(slot);
        }
        let seek = SeekCost::default();
        // From 50 000: 60 000 is 10 000 ahead, 1 000 is 49 000 behind (beyond back_seek_max).
        assert_eq!(
            list.next_after(&seek, &slab, 50_000, slots[1]),
            Some(slots[2])
        );
        // From 60 000, the last: nothing ahead, so the first (wrapped) against 50 000 behind.
        assert_eq!(
            list.next_after(&seek, &slab, 60_000, slots[2]),
            Some(slots[1])
        );
        list.remove(50_000, slots[1]);
        list.remove(60_000, slots[2]);
        assert_eq!(list.len(), 1);
        // The only request left has no neighbour.
        assert_eq!(list.next_after(&seek, &slab, 1_000, slots[0]), None);
    }
}
