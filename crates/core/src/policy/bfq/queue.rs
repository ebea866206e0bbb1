//! A BFQ queue (the kernel's `bfq_queue`): its queued requests in sector order and in arrival
//! order, the request it serves next, and what BFQ learns about the process behind it (think
//! time, seekiness, budget, weight raising, injection). Each process has one sync queue;
//! async requests go to queues shared per group, class and level.

use std::collections::VecDeque;

use crate::merge::{MergeIndex, MergeKind, RequestSlab, SlotKey};
use crate::sector_order::SeekCost;
use crate::sector_tree::{SectorTree, SortList};
use crate::{GroupId, IoPriority, Nanos, PriorityClass, ProcessId, Request};

use super::idling::{SeekHistory, ThinkTime};
use super::weight_raising::WeightRaising;
use super::wf2q::EntityId;

/// A queue's index in the policy's queue list.
pub(super) type QueueId = usize;

/// Where a queued request is on its queue's FIFO.
#[derive(Debug, Clone, Copy)]
pub(super) struct SlotInfo {
    /// Due time and insertion order.
    pub(super) fifo_key: (Nanos, u64),
}

/// What merging an arriving request did.
#[derive(Debug, Clone, Copy)]
pub(super) struct Merged {
    /// The queued request that now carries it.
    pub(super) carrier: crate::RequestId,
    /// The queued request it joined.
    pub(super) into: crate::RequestId,
    /// At which end.
    pub(super) position: MergeKind,
    /// The grown request absorbed a neighbour: the survivor and the absorbed request.
    pub(super) coalesced: Option<(crate::RequestId, crate::RequestId)>,
}

/// Why a queue stopped being served (the kernel's `BFQQE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expiration {
    /// Idling for its next request timed out.
    TooIdle,
    /// It held the device for longer than `timeout_sync` (scaled for weight raising).
    BudgetTimeout,
    /// Its next request costs more than its budget has left.
    BudgetExhausted,
    /// It ran out of requests and BFQ chose not to idle for it.
    NoMoreRequests,
    /// Another queue took the device.
    Preempted,
}

/// One queue.
#[derive(Debug, Clone)]
pub(super) struct Queue {
    /// The process whose sync requests it holds; `None` for a shared async queue.
    pub(super) process: Option<ProcessId>,
    /// The process has exited: never idle for it.
    pub(super) process_gone: bool,
    /// Sync or async.
    pub(super) sync: bool,
    /// Its group.
    pub(super) group: GroupId,
    /// Its class.
    pub(super) class: PriorityClass,
    /// Its level (0 for the IDLE class's single async queue key).
    pub(super) level: u8,
    /// Its weight from the level, `(8 − level) × 10`, before weight raising.
    pub(super) orig_weight: u64,
    /// Its entity in the scheduling engine.
    pub(super) entity: EntityId,
    /// Queued requests in arrival order, as `(due, sequence, slot)`: the kernel's FIFO list,
    /// of which only the head is ever looked at. Entries of requests that left are dropped
    /// lazily, when they reach the head; an entry is live while its slot still carries its
    /// sequence number.
    pub(super) fifo: VecDeque<(Nanos, u64, SlotKey)>,
    /// Merge candidates by end sector; by start sector they are found in the sort list, as
    /// the kernel's `bfq_request_merge` does with `elv_rb_find`.
    pub(super) merges: MergeIndex,
    /// Queued requests by start sector (the kernel's `sort_list`), in the store's tree.
    pub(super) sort_list: SortList,
    /// The request it would serve next.
    pub(super) next_request: Option<SlotKey>,
    /// Its requests at the device.
    pub(super) dispatched: usize,
    /// Requests its process submitted that have not completed, merged ones included.
    pub(super) outstanding: usize,
    /// The most requests it has had outstanding at once: 1 for a process that waits for each
    /// request before it sends the next (parallel service's lead is for those). Counted on
    /// arrival, merged requests included, so that neither the policy holding requests back
    /// nor merging makes a deep process look shallow.
    pub(super) depth: usize,
    /// On the scheduling engine with work (the kernel's "busy").
    pub(super) busy: bool,
    /// Its budget memory: the budget feedback's `b`.
    pub(super) max_budget: u64,
    /// When its current or last service slot times out (`None`: never served, long ago).
    pub(super) budget_timeout: Option<Nanos>,
    /// When its current or last service slot started.
    pub(super) slot_start: Nanos,
    /// The FIFO was looked at in this slot.
    pub(super) fifo_checked: bool,
    /// Start of the window over which I/O intensity is measured.
    pub(super) io_start: Nanos,
    /// Time in that window with nothing queued or in flight.
    pub(super) idle_total: Nanos,
    /// Idle less than a fifth of the time: I/O-bound (a new queue is taken to be).
    pub(super) io_bound: bool,
    /// Think time.
    pub(super) think_time: ThinkTime,
    /// Seek history of its requests.
    pub(super) seek: SeekHistory,
    /// Where its last request ended.
    pub(super) last_position: u64,
    /// When its last request completed.
    pub(super) last_completion: Nanos,
    /// Weight raising state.
    pub(super) raising: WeightRaising,
    /// Created in a large burst of queues: never weight raised.
    pub(super) in_large_burst: bool,
    /// Expired with no requests: budget left and when, for hole recovery.
    pub(super) emptied: Option<u64>,
    /// Service received since it last became busy.
    pub(super) service_since_busy: u64,
    /// Injection: how many requests of others may be in flight while idling for it.
    pub(super) inject_limit: usize,
    /// Injection: the baseline total service time of its first request after emptying.
    pub(super) last_service_time: Nanos,
    /// Injection: when the limit last went down or was reset.
    pub(super) inject_limit_changed: Nanos,
    /// Injection: the request whose total service time is being measured, with its arrival.
    pub(super) measured_request: Option<(crate::RequestId, Nanos)>,
    /// The queue whose completions wake this one (its requests arrive right after them).
    pub(super) waker: Option<QueueId>,
    /// How many queues have this one as their waker.
    pub(super) woken: usize,
    /// A waker candidate, how often it was seen, and since when.
    pub(super) waker_candidate: Option<(QueueId, u32, Nanos)>,
    /// When it was created.
    pub(super) created: Nanos,
    /// Order of its last activation among all queues (the kernel keeps busy queues on a
    /// list, newest first, which injection walks).
    pub(super) activation: u64,
    /// Processes whose sync requests it holds (0 for an async queue): more than one once
    /// cooperating processes were merged into it.
    pub(super) processes: u32,
    /// The queue one of its processes was merged into: the others follow (`new_bfqq`).
    pub(super) merged_into: Option<QueueId>,
    /// It holds merged cooperating processes (the kernel's `coop` flag).
    pub(super) coop: bool,
    /// A stable merge scheduled into this queue, created at that time (`stable_merge.rs`).
    pub(super) stable_merge: Option<(QueueId, Nanos)>,
    /// Processes were stably merged into it: never split, and still weight raised.
    pub(super) stable: bool,
    /// It has been served at least once.
    pub(super) served: bool,
}

/// What a new queue is.
pub(super) struct QueueKind {
    pub(super) process: Option<ProcessId>,
    pub(super) sync: bool,
    pub(super) group: GroupId,
    pub(super) priority: IoPriority,
}

impl Queue {
    /// A fresh queue with its entity.
    pub(super) fn new(kind: QueueKind, entity: EntityId, max_budget: u64, now: Nanos) -> Self {
        Self {
            process: kind.process,
            process_gone: false,
            sync: kind.sync,
            group: kind.group,
            class: kind.priority.class,
            level: kind.priority.level,
            orig_weight: weight_of(kind.priority),
            entity,
            fifo: VecDeque::new(),
            merges: MergeIndex::by_end_only(),
            sort_list: SortList::default(),
            next_request: None,
            dispatched: 0,
            outstanding: 0,
            depth: 0,
            busy: false,
            max_budget,
            budget_timeout: None,
            slot_start: now,
            fifo_checked: false,
            io_start: now,
            idle_total: 0,
            io_bound: true,
            think_time: ThinkTime::default(),
            seek: SeekHistory::new_queue(),
            last_position: 0,
            last_completion: now,
            raising: WeightRaising::default(),
            in_large_burst: false,
            emptied: None,
            service_since_busy: 0,
            inject_limit: 0,
            last_service_time: 0,
            inject_limit_changed: now,
            measured_request: None,
            waker: None,
            woken: 0,
            waker_candidate: None,
            created: now,
            activation: 0,
            processes: u32::from(kind.process.is_some()),
            merged_into: None,
            coop: false,
            stable_merge: None,
            stable: false,
            served: false,
        }
    }

    /// Number of queued requests.
    pub(super) fn queued(&self) -> usize {
        self.sort_list.len()
    }

    /// Whether nothing is queued.
    pub(super) fn is_empty(&self) -> bool {
        self.sort_list.is_empty()
    }

    /// Its class as the scheduling engine counts them (0 RT, 1 BE, 2 IDLE).
    pub(super) fn class_index(&self) -> usize {
        self.class.index()
    }

    /// The weight it is scheduled with now: the level's weight times the raising coefficient.
    pub(super) fn weight(&self) -> u64 {
        self.orig_weight * self.raising.coefficient
    }
}

/// BFQ's weight of a priority: `(8 − level) × 10` (IDLE counts as level 7).
pub(super) fn weight_of(priority: IoPriority) -> u64 {
    let level = match priority.class {
        PriorityClass::Idle => IoPriority::LEVELS - 1,
        _ => priority.level.min(IoPriority::LEVELS - 1),
    };
    u64::from(IoPriority::LEVELS - level) * 10
}

/// Whether two requests of the same queue may merge.
pub(super) fn same_kind(queued: &Request, incoming: &Request) -> bool {
    queued.direction == incoming.direction && queued.sync == incoming.sync
}

/// Every queued request and the queues' sort lists and FIFOs.
#[derive(Debug, Clone, Default)]
pub(super) struct RequestStore {
    /// The requests.
    pub(super) slab: RequestSlab,
    /// Per slot: queue and FIFO key.
    slots: Vec<Option<SlotInfo>>,
    /// The nodes of every queue's sort list, by slot.
    tree: SectorTree,
    sequence: u64,
}

impl RequestStore {
    /// Put a request on a queue; returns its slot.
    pub(super) fn add(&mut self, queue: &mut Queue, request: Request, due: Nanos) -> SlotKey {
        self.sequence += 1;
        let fifo_key = (due, self.sequence);
        let slot = self.slab.insert(request);
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, None);
        }
        self.slots[slot] = Some(SlotInfo { fifo_key });
        queue.fifo.push_back((due, self.sequence, slot));
        let request = self.slab.get(slot);
        queue.merges.add(slot, request);
        self.tree.insert(&mut queue.sort_list, slot, request.sector);
        slot
    }

    /// Take a request off its queue and out of the store.
    pub(super) fn remove(&mut self, queue: &mut Queue, slot: SlotKey) -> Request {
        let request = self.slab.remove(slot);
        queue.merges.remove(slot, &request);
        self.tree.remove(&mut queue.sort_list, slot);
        self.slots[slot] = None;
        self.drop_stale_fifo_head(queue);
        request
    }

    /// The queue's requests that start at `sector`, in slot order.
    fn starting_at<'a>(&'a self, queue: &Queue, sector: u64) -> impl Iterator<Item = SlotKey> + 'a {
        self.tree.starting_at(&queue.sort_list, sector)
    }

    /// Whether `second` may be appended to `first`, both of `queue`.
    fn mergeable(&self, queue: &Queue, first: &Request, second: &Request) -> bool {
        queue.merges.fits(first, second) && same_kind(first, second)
    }

    /// The queue's requests in sector order, as `(start sector, slot)`.
    #[cfg(test)]
    pub(super) fn sorted<'a>(&'a self, queue: &Queue) -> impl Iterator<Item = (u64, SlotKey)> + 'a {
        self.tree.iter(&queue.sort_list)
    }

    /// The request to serve after `last` leaves its queue: the better, from `last`'s
    /// position, of its neighbours in sector order, wrapping to the first (the kernel's
    /// `bfq_find_next_rq`). The neighbours are read off `last`'s own node, with no search.
    pub(super) fn next_after(
        &self,
        queue: &Queue,
        seek: &SeekCost,
        last: SlotKey,
    ) -> Option<SlotKey> {
        let after = self.tree.next(last).or_else(|| {
            self.tree
                .first(&queue.sort_list)
                .filter(|&first| first != last)
        });
        let before = self.tree.prev(last);
        seek.choose_slot(&self.slab, self.tree.sector(last), after, before)
    }

    /// Whether a FIFO entry still stands for a queued request.
    fn live(&self, &(_, sequence, slot): &(Nanos, u64, SlotKey)) -> bool {
        self.slots[slot].is_some_and(|info| info.fifo_key.1 == sequence)
    }

    /// Pop the entries of requests that left until the head is a queued request.
    fn drop_stale_fifo_head(&self, queue: &mut Queue) {
        while queue.fifo.front().is_some_and(|entry| !self.live(entry)) {
            queue.fifo.pop_front();
        }
    }

    /// The head of the queue's FIFO if it is due by `now`.
    pub(super) fn expired_head(&self, queue: &Queue, now: Nanos) -> Option<SlotKey> {
        queue
            .fifo
            .front()
            .filter(|&&(due, _, _)| due <= now)
            .map(|&(_, _, slot)| slot)
    }

    /// Merge a request into a queued one of `queue`, coalescing a neighbour it then touches.
    /// Returns what it did, or the request back.
    pub(super) fn merge(&mut self, queue: &mut Queue, request: Request) -> Result<Merged, Request> {
        let found = queue
            .merges
            .find(&self.slab, &request, same_kind)
            .or_else(|| {
                let end = request.end_sector();
                self.starting_at(queue, end)
                    .find(|&slot| self.mergeable(queue, self.slab.get(slot), &request))
                    .map(|slot| (slot, MergeKind::Front))
            });
        let Some((slot, kind)) = found else {
            return Err(request);
        };
        let into = self.slab.get(slot).id;
        queue.merges.merge(&mut self.slab, slot, kind, request);
        if kind == MergeKind::Front {
            // The start moved: the request takes its new place in the sort list.
            self.tree.remove(&mut queue.sort_list, slot);
            let sector = self.slab.get(slot).sector;
            self.tree.insert(&mut queue.sort_list, slot, sector);
        }
        let (carrier, absorbed) = self.coalesce(queue, slot, kind);
        let carrier = self.slab.get(carrier).id;
        Ok(Merged {
            carrier,
            into,
            position: kind,
            coalesced: absorbed.map(|absorbed| (carrier, absorbed)),
        })
    }

    /// After a merge, absorb a neighbour the grown request now touches. The survivor keeps
    /// the earlier due time and takes that request's place in the FIFO, as the kernel's
    /// `bfq_requests_merged` does. Returns the survivor, and the absorbed request's id.
    fn coalesce(
        &mut self,
        queue: &mut Queue,
        slot: SlotKey,
        kind: MergeKind,
    ) -> (SlotKey, Option<crate::RequestId>) {
        let candidate = match kind {
            MergeKind::Front => queue
                .merges
                .coalesce_candidate(&self.slab, slot, kind, same_kind),
            MergeKind::Back => {
                let grown = self.slab.get(slot);
                self.starting_at(queue, grown.end_sector())
                    .filter(|&other| other != slot)
                    .find(|&other| self.mergeable(queue, grown, self.slab.get(other)))
                    .map(|other| (slot, other))
            }
        };
        let Some((survivor, absorbed)) = candidate else {
            return (slot, None);
        };
        let absorbed_id = self.slab.get(absorbed).id;
        if queue.next_request == Some(absorbed) {
            queue.next_request = Some(survivor);
        }
        let inherited = self.slots[absorbed].take();
        self.tree.remove(&mut queue.sort_list, absorbed);
        queue.merges.coalesce(&mut self.slab, survivor, absorbed);
        if let (Some(inherited), Some(own)) = (inherited, self.slots[survivor]) {
            if inherited.fifo_key < own.fifo_key {
                self.take_fifo_place(queue, inherited.fifo_key.1, survivor);
                self.slots[survivor] = Some(inherited);
            }
        }
        self.drop_stale_fifo_head(queue);
        (survivor, Some(absorbed_id))
    }

    /// Let `slot` stand in the FIFO where the entry with `sequence` is.
    fn take_fifo_place(&self, queue: &mut Queue, sequence: u64, slot: SlotKey) {
        if let Ok(index) = queue
            .fifo
            .binary_search_by_key(&sequence, |&(_, entry_sequence, _)| entry_sequence)
        {
            queue.fifo[index].2 = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, RequestId};

    fn queue() -> Queue {
        let kind = QueueKind {
            process: Some(ProcessId(1)),
            sync: true,
            group: GroupId::ROOT,
            priority: IoPriority::default(),
        };
        Queue::new(kind, 0, 1000, 0)
    }

    fn read(id: u64, sector: u64) -> Request {
        Request::new(RequestId(id), ProcessId(1), Direction::Read, sector, 8)
    }

    #[test]
    fn the_fifo_head_is_the_oldest_request_still_queued() {
        let (mut store, mut queue) = (RequestStore::default(), queue());
        let a = store.add(&mut queue, read(1, 800), 10);
        let b = store.add(&mut queue, read(2, 0), 20);
        let c = store.add(&mut queue, read(3, 400), 30);
        assert_eq!(store.expired_head(&queue, 9), None, "not due yet");
        assert_eq!(store.expired_head(&queue, 10), Some(a));
        // Sector order is independent of arrival.
        let sorted: Vec<SlotKey> = store.sorted(&queue).map(|(_, s)| s).collect();
        assert_eq!(sorted, vec![b, c, a]);
        // Leaving out of FIFO order keeps the head.
        store.remove(&mut queue, b);
        assert_eq!(store.expired_head(&queue, 100), Some(a));
        // A reused slot is a new request: the left request's entry does not stand for it.
        let d = store.add(&mut queue, read(4, 1600), 40);
        assert_eq!(d, b, "the slab reuses the freed slot");
        // The head leaving uncovers the next live entry, skipping the stale one.
        store.remove(&mut queue, a);
        assert_eq!(store.expired_head(&queue, 100), Some(c));
        assert_eq!(
            queue.fifo.len(),
            2,
            "stale entries before the head are dropped"
        );
        store.remove(&mut queue, c);
        assert_eq!(store.expired_head(&queue, 39), None);
        assert_eq!(store.expired_head(&queue, 40), Some(d));
        assert_eq!(queue.queued(), 1);
    }

    #[test]
    fn front_merges_are_found_by_start_sector_in_the_sort_list() {
        let (mut store, mut queue) = (RequestStore::default(), queue());
        let far = store.add(&mut queue, read(1, 64), 10);
        let grown = store.add(&mut queue, read(2, 16), 20);
        // [8, 16) ends where [16, 24) starts: a front merge, which moves its start to 8.
        let merged = store.merge(&mut queue, read(3, 8)).expect("merges");
        assert_eq!(
            (merged.into, merged.position, merged.coalesced),
            (RequestId(2), MergeKind::Front, None)
        );
        let sorted: Vec<(u64, SlotKey)> = store.sorted(&queue).collect();
        assert_eq!(sorted, vec![(8, grown), (64, far)]);
        // The sort list follows the new start: [0, 8) front-merges again.
        let merged = store.merge(&mut queue, read(4, 0)).expect("merges");
        assert_eq!(
            (merged.into, merged.position),
            (RequestId(2), MergeKind::Front)
        );
        assert_eq!(store.slab.get(grown).sectors, 24);
        // [56, 64) ends where [64, 72) starts, but a write does not join a read.
        let write = Request::new(RequestId(5), ProcessId(1), Direction::Write, 56, 8);
        assert!(store.merge(&mut queue, write).is_err());
        assert_eq!(queue.queued(), 2);
    }

    #[test]
    fn a_coalesced_request_keeps_the_earlier_due_time_and_fifo_place() {
        let (mut store, mut queue) = (RequestStore::default(), queue());
        // Queued: [16, 24) due 10, then [0, 8) due 20; the FIFO head is the first.
        let late_start = store.add(&mut queue, read(1, 16), 10);
        let early_start = store.add(&mut queue, read(2, 0), 20);
        let filler = read(3, 8);
        // [8, 16) back-merges into [0, 8), which then touches [16, 24) and absorbs it.
        let merged = store.merge(&mut queue, filler).expect("merges");
        assert_eq!(merged.carrier, RequestId(2));
        assert_eq!(
            (merged.into, merged.position),
            (RequestId(2), MergeKind::Back)
        );
        assert_eq!(merged.coalesced, Some((RequestId(2), RequestId(1))));
        assert_eq!(queue.queued(), 1);
        assert!(!store.slab.contains(late_start));
        assert_eq!(store.slab.get(early_start).sectors, 24);
        assert_eq!(
            store.expired_head(&queue, 10),
            Some(early_start),
            "the survivor inherits the absorbed request's earlier due time"
        );
        store.remove(&mut queue, early_start);
        assert!(queue.is_empty());
        assert_eq!(store.expired_head(&queue, u64::MAX), None);
        assert!(queue.fifo.is_empty());
    }
}
