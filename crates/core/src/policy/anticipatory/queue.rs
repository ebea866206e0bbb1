//! The queued requests of AS: per class (sync, async) a sort list by start sector and a FIFO
//! by deadline, plus merging. The next request in elevator order is the cheaper of the first
//! request at or after the head and the last one before it, as the one-way elevator with
//! short backward seeks prices them (`as_choose_req` in Linux's `block/as-iosched.c`, with its
//! `MAXBACK` of 1 Mi sectors).

use std::collections::BTreeSet;

use super::class::Class;
use super::fifo::Fifos;
use crate::merge::{MergeIndex, MergeKind, RequestSlab, SlotKey};
use crate::sector_order::SeekCost;
use crate::{Nanos, Request, RequestId};

/// AS's seek pricing: backward seeks up to 1 Mi sectors at twice the cost.
const SEEK_COST: SeekCost = SeekCost {
    back_seek_max: 1024 * 1024,
    back_seek_penalty: 2,
};

/// What merging an incoming request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Merged {
    /// The queued request that now carries the incoming one.
    pub carrier: RequestId,
    /// The queued request the incoming one joined, and at which end.
    pub into: (RequestId, MergeKind),
    /// The grown request and a queued neighbour became one (one request fewer): the
    /// survivor and the absorbed request.
    pub coalesced: Option<(RequestId, RequestId)>,
}

/// Every queued request, on its class's sort list and FIFO, and indexed for merging.
#[derive(Debug, Clone, Default)]
pub(super) struct Queue {
    slab: RequestSlab,
    merge: MergeIndex,
    /// Per class: (start sector, slot), in sector order.
    sort: [BTreeSet<(u64, SlotKey)>; 2],
    fifo: Fifos,
}

impl Queue {
    /// Number of queued requests (merged ones count once).
    pub fn len(&self) -> usize {
        self.slab.len()
    }

    /// Whether a class has nothing queued.
    pub fn is_empty(&self, class: Class) -> bool {
        self.fifo.is_empty(class)
    }

    /// A queued request.
    pub fn get(&self, slot: SlotKey) -> &Request {
        self.slab.get(slot)
    }

    /// The head of a class's FIFO: its deadline and slot.
    pub fn fifo_head(&self, class: Class) -> Option<(Nanos, SlotKey)> {
        self.fifo.head(class)
    }

    /// Merge `incoming` into a queued request (back merge first, then front), coalescing
    /// the grown request with a neighbour it now touches. Gives the request back if nothing
    /// takes it.
    pub fn merge(&mut self, incoming: Request) -> Result<Merged, Request> {
        let Some((slot, kind)) = self
            .merge
            .find(&self.slab, &incoming, Request::mergeable_with)
        else {
            return Err(incoming);
        };
        let class = Class::of(self.slab.get(slot));
        let into = (self.slab.get(slot).id, kind);
        self.sort[class.index()].remove(&self.sort_key(slot));
        self.merge.merge(&mut self.slab, slot, kind, incoming);
        self.sort[class.index()].insert(self.sort_key(slot));
        let coalesced = self.coalesce(slot, kind);
        let survivor = coalesced.map_or(slot, |(survivor, _)| survivor);
        Ok(Merged {
            carrier: self.slab.get(survivor).id,
            into,
            coalesced: coalesced.map(|(_, absorbed)| (self.slab.get(survivor).id, absorbed)),
        })
    }

    /// After the request at `slot` grew at its `kind` end, absorb the queued neighbour it
    /// now touches, if any. Returns the survivor and the absorbed request's id if there was
    /// a coalesce.
    fn coalesce(&mut self, slot: SlotKey, kind: MergeKind) -> Option<(SlotKey, RequestId)> {
        let (survivor, absorbed) =
            self.merge
                .coalesce_candidate(&self.slab, slot, kind, Request::mergeable_with)?;
        // The survivor precedes the absorbed request on disk, so its start (and sort place)
        // stays; the absorbed one leaves every list.
        let class = Class::of(self.slab.get(absorbed));
        let absorbed_id = self.slab.get(absorbed).id;
        self.sort[class.index()].remove(&self.sort_key(absorbed));
        self.fifo.coalesce(survivor, absorbed);
        self.merge.coalesce(&mut self.slab, survivor, absorbed);
        Some((survivor, absorbed_id))
    }

    /// Queue a request of its own in `class`, with this FIFO deadline.
    pub fn enqueue(&mut self, request: Request, class: Class, deadline: Nanos) {
        let slot = self.slab.insert(request);
        self.merge.add(slot, self.slab.get(slot));
        self.sort[class.index()].insert(self.sort_key(slot));
        self.fifo.push(class, slot, deadline);
    }

    /// Take a queued request out of every structure.
    pub fn take(&mut self, slot: SlotKey) -> Request {
        let class = Class::of(self.slab.get(slot));
        self.sort[class.index()].remove(&self.sort_key(slot));
        self.fifo.remove(slot);
        let request = self.slab.remove(slot);
        self.merge.remove(slot, &request);
        request
    }

    fn sort_key(&self, slot: SlotKey) -> (u64, SlotKey) {
        (self.slab.get(slot).sector, slot)
    }

    /// The next request of `class` in elevator order with the head at `head`: the cheaper
    /// of the first request at or after the head (wrapping to the lowest) and the last one
    /// before it.
    pub fn next_in_elevator_order(&self, class: Class, head: u64) -> Option<SlotKey> {
        let sort = &self.sort[class.index()];
        let ahead = sort.range((head, 0)..).next().or_else(|| sort.first());
        let behind = sort.range(..(head, 0)).next_back();
        let slot_of = |&(_, slot): &(u64, SlotKey)| slot;
        SEEK_COST.choose_slot(&self.slab, head, ahead.map(slot_of), behind.map(slot_of))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, ProcessId};

    fn read(id: u64, sector: u64) -> Request {
        Request::new(RequestId(id), ProcessId(1), Direction::Read, sector, 8)
    }

    fn queue_of(sectors: &[u64]) -> Queue {
        let mut queue = Queue::default();
        for (id, &sector) in (0u64..).zip(sectors) {
            queue.enqueue(read(id, sector), Class::Sync, id);
        }
        queue
    }

    fn next_sector(queue: &Queue, head: u64) -> Option<u64> {
        queue
            .next_in_elevator_order(Class::Sync, head)
            .map(|slot| queue.get(slot).sector)
    }

    #[test]
    fn elevator_order_prefers_forward_allows_short_backward_and_wraps() {
        let queue = queue_of(&[1000, 5000, 9000]);
        // Head 5500: 9000 is 3500 ahead, 5000 is 500 behind (cost 1000): backward wins.
        assert_eq!(next_sector(&queue, 5500), Some(5000));
        // Head 6000: 3000 ahead against 1000 behind (cost 2000): backward again.
        assert_eq!(next_sector(&queue, 6000), Some(5000));
        // Head 7000: 2000 ahead against 2000 behind (cost 4000): forward.
        assert_eq!(next_sector(&queue, 7000), Some(9000));
        // Past the last request: the lowest (9000 behind, cost 18000) loses to the nearest
        // behind (1000, cost 2000).
        assert_eq!(next_sector(&queue, 10_000), Some(9000));
        // Everything more than 1 Mi sectors behind wraps to the lowest.
        assert_eq!(next_sector(&queue, 5 << 20), Some(1000));
        assert_eq!(next_sector(&Queue::default(), 0), None);
    }

    #[test]
    fn merging_and_coalescing_keep_the_lists_in_step() {
        let mut queue = queue_of(&[0, 16]);
        let merged = queue.merge(read(9, 8)).expect("back merge onto 0");
        assert_eq!(
            merged,
            Merged {
                carrier: RequestId(0),
                into: (RequestId(0), MergeKind::Back),
                coalesced: Some((RequestId(0), RequestId(1)))
            }
        );
        assert_eq!(queue.len(), 1);
        let slot = queue.next_in_elevator_order(Class::Sync, 0).expect("one");
        assert_eq!(queue.fifo_head(Class::Sync), Some((0, slot)));
        let rq = queue.take(slot);
        assert_eq!((rq.sector, rq.sectors, rq.merged.len()), (0, 24, 2));
        assert!(queue.is_empty(Class::Sync));
        assert_eq!(queue.next_in_elevator_order(Class::Sync, 0), None);
        // Front merges are always on.
        let mut queue = queue_of(&[8]);
        assert!(queue.merge(read(1, 0)).is_ok());
        assert!(queue.merge(read(2, 100)).is_err());
    }

    #[test]
    fn classes_split_sync_from_async() {
        let sync_write = Request {
            sync: true,
            ..Request::new(RequestId(1), ProcessId(1), Direction::Write, 0, 8)
        };
        let async_write = Request::new(RequestId(2), ProcessId(1), Direction::Write, 0, 8);
        assert_eq!(Class::of(&read(0, 0)), Class::Sync);
        assert_eq!(Class::of(&sync_write), Class::Sync);
        assert_eq!(Class::of(&async_write), Class::Async);
    }
}
