//! A process queue (the kernel's `cfq_queue`): its queued requests in sector order (the sort
//! list) and in arrival order with their expiry times (the FIFO), the request it would serve
//! next, and the flags and bookkeeping of its time slice. Each process has one sync queue; async
//! requests go to queues shared per group, class and level. A request merges only with requests
//! of the queue it would join, as the kernel's `cfq_allow_merge` wants.

use std::ops::{Index, IndexMut};

use crate::merge::{MergeIndex, MergeKind, RequestSlab, SlotKey};
use crate::{GroupId, IoPriority, Nanos, PriorityClass, ProcessId, Request, RequestId, TraceEvent};

use super::fifo::Fifo;
use super::idle::SeekHistory;
use super::service_tree::TreePosition;
use super::sort_list::SortList;
use super::{Cfq, ProcessState, QueueId};

/// Which queue holds a queued request, and its place on that queue's FIFO.
#[derive(Debug, Clone, Copy)]
pub(super) struct SlotInfo {
    /// The queue.
    pub(super) queue: QueueId,
    /// When the request is due: insertion time plus `fifo_expire_sync` or `fifo_expire_async`.
    pub(super) fifo_time: Nanos,
    /// Insertion order, keeping FIFO order among equal due times.
    pub(super) fifo_seq: u64,
}

/// The time slice of a queue.
#[derive(Debug, Clone, Default)]
pub(super) struct Slice {
    /// Not started yet: a slice starts at the queue's first completion.
    pub(super) new: bool,
    /// When it started (its first completion), if it has.
    pub(super) start: Option<Nanos>,
    /// When it ends.
    pub(super) end: Nanos,
    /// Its length when it started.
    pub(super) allocated: Nanos,
    /// Slice left (positive) or overrun (negative) when the queue was last cut short; it moves the
    /// queue's next place on its service tree forward (or back).
    pub(super) resid: i64,
    /// Requests dispatched in this slice (the charge in IOPS mode).
    pub(super) dispatched: u64,
    /// When the queue became active.
    pub(super) dispatch_start: Nanos,
}

/// One queue.
#[derive(Debug, Clone)]
pub(super) struct Queue {
    /// The process it was made for (sync queues; the trace names the queue after it).
    pub(super) process: Option<ProcessId>,
    /// Sync (one process's reads and sync writes) or async (shared writeback).
    pub(super) sync: bool,
    /// The group it is served in: its own, or the root while moved there (`group_isolation=0`).
    pub(super) group: GroupId,
    /// Its own group while it is served in the root group (the kernel's `orig_cfqg`).
    pub(super) origin: Option<GroupId>,
    /// Its I/O class.
    pub(super) class: PriorityClass,
    /// Its level 0–7 (7 for the IDLE class).
    pub(super) level: u8,
    /// Queued requests by start sector.
    pub(super) sort_list: SortList,
    /// Queued requests by due time.
    pub(super) fifo: Fifo,
    /// Merge candidates among its queued requests.
    pub(super) merges: MergeIndex,
    /// The request it would serve next in sector order.
    pub(super) next_request: Option<SlotKey>,
    /// Its requests at the device.
    pub(super) dispatched: usize,
    /// On the round robin: on a service tree, with requests or as the active queue.
    pub(super) on_rr: bool,
    /// Its service tree and key while on one.
    pub(super) tree_position: Option<TreePosition>,
    /// Its time slice.
    pub(super) slice: Slice,
    /// Whether CFQ idles for it when it runs dry (SYNC tree) or not (SYNC_NOIDLE tree).
    pub(super) idle_window: bool,
    /// It has had 4 or more requests queued at once: seeky but deep queues keep idling.
    pub(super) deep: bool,
    /// The idle timer runs for its next request.
    pub(super) wait_request: bool,
    /// A request must go out at the next dispatch, whatever the caps.
    pub(super) must_dispatch: bool,
    /// Its FIFO was looked at in this slice.
    pub(super) fifo_checked: bool,
    /// It keeps its ending slice one idle period longer so its group stays busy.
    pub(super) wait_busy: bool,
    /// Seek history of its requests.
    pub(super) seek: SeekHistory,
    /// Processes whose sync requests it takes.
    pub(super) process_refs: usize,
    /// Queues set to merge into it.
    pub(super) merge_refs: usize,
    /// The cooperating queue its processes move to at their next request.
    pub(super) new_queue: Option<QueueId>,
    /// It holds merged cooperating processes.
    pub(super) coop: bool,
    /// It turned seeky while merged: split at the next request.
    pub(super) split_coop: bool,
}

impl Queue {
    /// A fresh queue for requests of this kind and priority.
    pub(super) fn new(sync: bool, group: GroupId, priority: IoPriority) -> Self {
        let level = match priority.class {
            PriorityClass::Idle => IoPriority::LEVELS - 1,
            _ => priority.level.min(IoPriority::LEVELS - 1),
        };
        Self {
            process: None,
            sync,
            group,
            origin: None,
            class: priority.class,
            level,
            sort_list: SortList::default(),
            fifo: Fifo::default(),
            merges: MergeIndex::default(),
            next_request: None,
            dispatched: 0,
            on_rr: false,
            tree_position: None,
            slice: Slice::default(),
            idle_window: sync && priority.class != PriorityClass::Idle,
            deep: false,
            wait_request: false,
            must_dispatch: false,
            fifo_checked: false,
            wait_busy: false,
            seek: SeekHistory::default(),
            process_refs: 0,
            merge_refs: 0,
            new_queue: None,
            coop: false,
            split_coop: false,
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

    /// Whether it is an IDLE-class queue.
    pub(super) fn is_idle_class(&self) -> bool {
        self.class == PriorityClass::Idle
    }

    /// Whether it is a real-time queue.
    pub(super) fn is_real_time(&self) -> bool {
        self.class == PriorityClass::RealTime
    }

    /// The group its processes belong to, wherever it is served.
    pub(super) fn own_group(&self) -> GroupId {
        self.origin.unwrap_or(self.group)
    }
}

/// Every queue, by id; freed ids are reused.
#[derive(Debug, Clone, Default)]
pub(super) struct Queues {
    slots: Vec<Option<Queue>>,
    free: Vec<QueueId>,
}

impl Queues {
    /// Store a new queue.
    pub(super) fn alloc(&mut self, queue: Queue) -> QueueId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id] = Some(queue);
                id
            }
            None => {
                self.slots.push(Some(queue));
                self.slots.len() - 1
            }
        }
    }

    /// The queue with this id, if it is live.
    pub(super) fn get(&self, id: QueueId) -> Option<&Queue> {
        self.slots.get(id).and_then(Option::as_ref)
    }

    /// Every live queue with its id, in id order.
    pub(super) fn live(&self) -> impl Iterator<Item = (QueueId, &Queue)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(id, queue)| Some((id, queue.as_ref()?)))
    }

    /// Forget a queue nothing refers to any more.
    pub(super) fn release(&mut self, id: QueueId) {
        if self.slots[id].take().is_some() {
            self.free.push(id);
        }
    }
}

impl Index<QueueId> for Queues {
    type Output = Queue;

    fn index(&self, id: QueueId) -> &Queue {
        self.slots[id]
            .as_ref()
            .expect("queue ids in use refer to live queues")
    }
}

impl IndexMut<QueueId> for Queues {
    fn index_mut(&mut self, id: QueueId) -> &mut Queue {
        self.slots[id]
            .as_mut()
            .expect("queue ids in use refer to live queues")
    }
}

/// Requests of the same direction and kind may merge (the queue is already the same).
fn same_kind(queued: &Request, incoming: &Request) -> bool {
    queued.direction == incoming.direction && queued.sync == incoming.sync
}

/// The key of a group's async queue for a priority: class and level (one IDLE queue).
pub(super) fn async_key(priority: IoPriority) -> (usize, u8) {
    match priority.class {
        PriorityClass::Idle => (priority.class.index(), 0),
        class => (class.index(), priority.level.min(IoPriority::LEVELS - 1)),
    }
}

impl Cfq {
    /// The group a request belongs to (an id this run does not know counts as the root).
    pub(super) fn group_of(&self, request: &Request) -> GroupId {
        if request.group.index() < self.groups.len() {
            request.group
        } else {
            GroupId::ROOT
        }
    }

    /// The queue a request would join now, without creating one.
    pub(super) fn current_queue(&self, request: &Request) -> Option<QueueId> {
        let group = self.group_of(request);
        if request.sync {
            let queue = self.processes.get(&request.process)?.sync_queue?;
            (self.queues[queue].own_group() == group).then_some(queue)
        } else {
            let key = async_key(request.priority);
            self.groups[group.index()].async_queues.get(&key).copied()
        }
    }

    /// The queue a new request joins (the kernel's `cfq_set_request`): the group's async queue
    /// for its priority, or the process's sync queue — created, merged with a cooperator or
    /// split from one as needed.
    pub(super) fn queue_for_request(&mut self, request: &Request, now: Nanos) -> QueueId {
        let group = self.group_of(request);
        if !request.sync {
            return self.async_queue(group, request.priority);
        }
        let process = request.process;
        let existing = self
            .processes
            .entry(process)
            .or_insert_with(|| ProcessState::new(now))
            .sync_queue;
        let current = match existing {
            Some(queue) if self.queues[queue].own_group() == group => {
                self.cooperate(process, queue)
            }
            Some(queue) => {
                self.detach_process(process, queue);
                None
            }
            None => None,
        };
        current.unwrap_or_else(|| self.new_sync_queue(process, group, request.priority))
    }

    /// A fresh sync queue for a process.
    fn new_sync_queue(
        &mut self,
        process: ProcessId,
        group: GroupId,
        priority: IoPriority,
    ) -> QueueId {
        let mut queue = Queue::new(true, group, priority);
        queue.process = Some(process);
        queue.process_refs = 1;
        let id = self.queues.alloc(queue);
        if let Some(state) = self.processes.get_mut(&process) {
            state.sync_queue = Some(id);
        }
        id
    }

    /// The group's async queue for this priority, created on first use.
    fn async_queue(&mut self, group: GroupId, priority: IoPriority) -> QueueId {
        let key = async_key(priority);
        if let Some(&queue) = self.groups[group.index()].async_queues.get(&key) {
            return queue;
        }
        let queue = self.queues.alloc(Queue::new(false, group, priority));
        self.groups[group.index()].async_queues.insert(key, queue);
        queue
    }

    /// The process stops using this sync queue.
    pub(super) fn detach_process(&mut self, process: ProcessId, queue: QueueId) {
        if let Some(state) = self.processes.get_mut(&process) {
            state.sync_queue = None;
        }
        let refs = &mut self.queues[queue].process_refs;
        *refs = refs.saturating_sub(1);
        self.release_if_unused(queue);
    }

    /// Free a sync queue nothing uses any more (async queues live as long as their group).
    /// A queue already freed (by an expiry on the way) is left alone.
    pub(super) fn release_if_unused(&mut self, queue: QueueId) {
        let Some(q) = self.queues.get(queue) else {
            return;
        };
        let unused = q.sync
            && q.process_refs == 0
            && q.merge_refs == 0
            && q.is_empty()
            && q.dispatched == 0
            && !q.on_rr
            && self.active != Some(queue);
        if !unused {
            return;
        }
        let target = q.new_queue;
        self.queues.release(queue);
        if let Some(target) = target {
            let refs = &mut self.queues[target].merge_refs;
            *refs = refs.saturating_sub(1);
            self.release_if_unused(target);
        }
    }

    /// Put a request on its queue (the kernel's `cfq_add_rq_rb`): sort list, FIFO, merge
    /// index; the queue joins the round robin if it was off it; the request may become the
    /// queue's next.
    pub(super) fn add_request(&mut self, queue: QueueId, request: Request, now: Nanos) -> SlotKey {
        let fifo_time = now.saturating_add(self.config.fifo_expire(request.sync));
        let fifo_seq = self.next_sequence();
        let sector = request.sector;
        let slot = self.slab.insert(request);
        self.set_slot(
            slot,
            SlotInfo {
                queue,
                fifo_time,
                fifo_seq,
            },
        );
        let q = &mut self.queues[queue];
        q.sort_list.insert(sector, slot);
        q.fifo.insert((fifo_time, fifo_seq, slot));
        q.merges.add(slot, self.slab.get(slot));
        if !q.on_rr {
            self.add_to_round_robin(queue, now);
        }
        let current = self.queues[queue].next_request;
        let next = self.choose_request(current, Some(slot), self.device.last_position);
        self.set_next_request(queue, next);
        slot
    }

    /// Take a request off its queue and out of the slab (to dispatch it).
    pub(super) fn remove_request(&mut self, slot: SlotKey) -> Request {
        let queue = self.slots[slot].queue;
        if self.queues[queue].next_request == Some(slot) {
            let next = self.find_next_request(queue, slot);
            self.set_next_request(queue, next);
        }
        self.unlink(queue, slot);
        let request = self.slab.remove(slot);
        self.queues[queue].merges.remove(slot, &request);
        request
    }

    /// Take a request off its queue's sort list and FIFO (it stays in the slab).
    fn unlink(&mut self, queue: QueueId, slot: SlotKey) {
        let sector = self.slab.get(slot).sector;
        let fifo_seq = self.slots[slot].fifo_seq;
        let q = &mut self.queues[queue];
        q.sort_list.remove(sector, slot);
        let (slab, slots) = (&self.slab, &self.slots);
        q.fifo.forget(|&(_, seq, other)| {
            // The leaving request counts as gone from here on.
            (other, seq) != (slot, fifo_seq) && fifo_entry_live(slab, slots, other, seq)
        });
    }

    /// The queue's FIFO entry due first, if any.
    pub(super) fn fifo_first(&mut self, queue: QueueId) -> Option<(Nanos, SlotKey)> {
        let (slab, slots) = (&self.slab, &self.slots);
        self.queues[queue]
            .fifo
            .first(|&(_, seq, slot)| fifo_entry_live(slab, slots, slot, seq))
            .map(|(due, _, slot)| (due, slot))
    }

    /// Set the queue's next request.
    pub(super) fn set_next_request(&mut self, queue: QueueId, next: Option<SlotKey>) {
        self.queues[queue].next_request = next;
    }

    /// The request to serve after `last` leaves (the kernel's `cfq_find_next_rq`): the better,
    /// from `last`'s position, of its neighbours in sector order (wrapping to the first).
    pub(super) fn find_next_request(&self, queue: QueueId, last: SlotKey) -> Option<SlotKey> {
        let sector = self.slab.get(last).sector;
        self.queues[queue]
            .sort_list
            .next_after(&self.config.seek, &self.slab, sector, last)
    }

    /// The better of two requests to serve with the head at `head` (the kernel's
    /// `cfq_choose_req`).
    pub(super) fn choose_request(
        &self,
        a: Option<SlotKey>,
        b: Option<SlotKey>,
        head: u64,
    ) -> Option<SlotKey> {
        self.config.seek.choose_slot(&self.slab, head, a, b)
    }

    /// Merge a request into a queued request of the queue it would join, then coalesce the
    /// grown request with a neighbour it now touches. Returns the id of the request that
    /// carries it, or gives the request back.
    pub(super) fn merge_into_queued(&mut self, request: Request) -> Result<RequestId, Request> {
        let Some(queue) = self.current_queue(&request) else {
            return Err(request);
        };
        let found = self.queues[queue]
            .merges
            .find(&self.slab, &request, same_kind);
        let Some((slot, kind)) = found else {
            return Err(request);
        };
        let old_sector = self.slab.get(slot).sector;
        self.trace.emit(|| TraceEvent::Merge {
            request: request.id,
            into: self.slab.get(slot).id,
            position: kind,
        });
        self.queues[queue]
            .merges
            .merge(&mut self.slab, slot, kind, request);
        if kind == MergeKind::Front {
            self.request_moved(queue, slot, old_sector);
        }
        let carrier = self.coalesce(queue, slot, kind);
        Ok(self.slab.get(carrier).id)
    }

    /// A front merge moved a request's start: re-sort it, and it may now be the next request.
    fn request_moved(&mut self, queue: QueueId, slot: SlotKey, old_sector: u64) {
        let sector = self.slab.get(slot).sector;
        let q = &mut self.queues[queue];
        q.sort_list.remove(old_sector, slot);
        q.sort_list.insert(sector, slot);
        let current = q.next_request;
        let next = self.choose_request(current, Some(slot), self.device.last_position);
        self.set_next_request(queue, next);
    }

    /// After the request at `slot` grew, absorb the queued neighbour it now touches (the
    /// kernel's `cfq_merged_requests`): the survivor keeps the earlier FIFO place.
    fn coalesce(&mut self, queue: QueueId, slot: SlotKey, kind: MergeKind) -> SlotKey {
        let candidate = self.queues[queue]
            .merges
            .coalesce_candidate(&self.slab, slot, kind, same_kind);
        let Some((survivor, absorbed)) = candidate else {
            return slot;
        };
        self.trace.emit(|| TraceEvent::Coalesce {
            into: self.slab.get(survivor).id,
            absorbed: self.slab.get(absorbed).id,
        });
        let mut next = self.queues[queue].next_request;
        if next == Some(absorbed) {
            next = self.find_next_request(queue, absorbed);
        }
        self.unlink(queue, absorbed);
        self.inherit_fifo_place(queue, survivor, absorbed);
        self.queues[queue]
            .merges
            .coalesce(&mut self.slab, survivor, absorbed);
        self.set_next_request(queue, next);
        survivor
    }

    /// The survivor of a coalesce takes the absorbed request's FIFO place if that was due earlier.
    fn inherit_fifo_place(&mut self, queue: QueueId, survivor: SlotKey, absorbed: SlotKey) {
        let inherited = self.slots[absorbed];
        let own = self.slots[survivor];
        if inherited.fifo_time >= own.fifo_time {
            return;
        }
        self.slots[survivor] = SlotInfo { queue, ..inherited };
        self.queues[queue]
            .fifo
            .insert((inherited.fifo_time, inherited.fifo_seq, survivor));
        let (slab, slots) = (&self.slab, &self.slots);
        self.queues[queue]
            .fifo
            .forget(|&(_, seq, slot)| fifo_entry_live(slab, slots, slot, seq));
    }
}

/// Whether a FIFO entry still stands for a queued request: the slot is queued under the entry's
/// insertion number (numbers are never reused, so a reused slot's old entries are stale).
fn fifo_entry_live(slab: &RequestSlab, slots: &[SlotInfo], slot: SlotKey, seq: u64) -> bool {
    slab.contains(slot) && slots.get(slot).is_some_and(|info| info.fifo_seq == seq)
}
