//! CFQ before groups: the 2004 time-sliced patch, 2.6.28 and 2.6.30 (see `../version.rs` for
//! what each release changed and the sources read).
//!
//! Queues with requests wait on one service tree (RT first, IDLE last); the first is made
//! active and owns the device for a slice. In the 2004 patch the tree is a plain round robin
//! and the slice starts at the queue's first dispatch; from 2.6.28 a queue's key is the time it
//! joined plus an offset for lower priority and slice type, and the slice starts at its first
//! completion. Before 2.6.30 a dispatch call moves a batch of requests onto the block layer's
//! dispatch list (`dispatch_list`), which the driver drains before CFQ is asked again.
//!
//! This is our own code, written from the kernel sources named in `../version.rs`.

mod dispatch_list;
mod queue;
mod select;
#[cfg(test)]
mod tests;
mod tracing;

use std::collections::{BTreeMap, BTreeSet};

use crate::merge::{MergeKind, RequestSlab, SlotKey};
use crate::sector_order::SeekCost;
use crate::time::ms;
use crate::trace::{ServiceEnd, TraceBuffer};
use crate::tunable::Tunables;
use crate::{Completion, Dispatch, Inserted, Nanos, ProcessId, Request, RequestId};

use super::version::{self, Era};
use dispatch_list::DispatchList;
use queue::{LegacyQueue, ProcessIo, QueueId, QueueKey};

/// A queue's place for each queued request: its queue, FIFO due time and arrival number.
#[derive(Debug, Clone, Copy, Default)]
struct SlotInfo {
    queue: QueueId,
    due: Nanos,
    seq: u64,
}

/// The tunables in the algorithm's units.
#[derive(Debug, Clone)]
struct LegacyConfig {
    quantum: usize,
    fifo_expire_sync: Nanos,
    fifo_expire_async: Nanos,
    seek: SeekCost,
    slice_sync: Nanos,
    slice_async: Nanos,
    slice_async_rq: u64,
    slice_idle: Nanos,
}

impl LegacyConfig {
    fn new(tunables: &Tunables, version: i64) -> Self {
        let get = |name: &str| {
            if tunables.is_set(name) {
                tunables.get_u64(name)
            } else {
                version::default_for(version, name)
                    .and_then(|value| u64::try_from(value).ok())
                    .unwrap_or_else(|| tunables.get_u64(name))
            }
        };
        Self {
            quantum: usize::try_from(get("quantum")).unwrap_or(usize::MAX),
            fifo_expire_sync: ms(get("fifo_expire_sync")),
            fifo_expire_async: ms(get("fifo_expire_async")),
            seek: SeekCost {
                back_seek_max: get("back_seek_max").saturating_mul(2),
                back_seek_penalty: get("back_seek_penalty"),
            },
            slice_sync: ms(get("slice_sync")),
            slice_async: ms(get("slice_async")),
            slice_async_rq: get("slice_async_rq"),
            slice_idle: ms(get("slice_idle")),
        }
    }
}

/// NCQ detection as in 2.6.28: assumed until 50 busy samples show a peak depth below 5; then
/// decided again every 50 samples.
#[derive(Debug, Clone)]
struct HwTag {
    present: bool,
    samples: u32,
    peak: usize,
}

impl HwTag {
    fn sample(&mut self, in_device: usize, queued: usize) {
        self.peak = self.peak.max(in_device);
        if queued <= 5 && in_device <= 5 {
            return;
        }
        self.samples += 1;
        if self.samples <= 50 {
            return;
        }
        self.present = self.peak >= 5;
        self.samples = 0;
        self.peak = 0;
    }
}

/// The pre-group CFQ policy.
#[derive(Debug, Clone)]
pub(super) struct LegacyCfq {
    era: Era,
    config: LegacyConfig,
    rotational: bool,
    slab: RequestSlab,
    slots: Vec<SlotInfo>,
    queues: Vec<LegacyQueue>,
    queue_of: BTreeMap<QueueKey, QueueId>,
    processes: BTreeMap<ProcessId, ProcessIo>,
    /// Queues with requests: (class rank, key, insertion number, queue).
    tree: BTreeSet<(u8, i64, u64, QueueId)>,
    active: Option<QueueId>,
    /// The process whose request the active queue dispatched first (`active_cic`).
    active_process: Option<ProcessId>,
    idle_timer: Option<Nanos>,
    busy_queues: usize,
    busy_rt_queues: usize,
    /// Requests the driver took (`rq_in_driver`).
    in_device: usize,
    /// Sync-queue requests out of CFQ (`sync_flight`).
    sync_flight: usize,
    /// The queue of every request out of CFQ.
    owners: BTreeMap<RequestId, QueueId>,
    list: DispatchList,
    /// End of the last request the driver took.
    last_position: u64,
    hw_tag: HwTag,
    sequence: u64,
    /// Slices and preemptions, when tracing is on.
    trace: TraceBuffer,
}

impl LegacyCfq {
    /// The CFQ of release `version` (an era before groups) with these tunables.
    pub(super) fn new(tunables: &Tunables, version: i64, rotational: bool) -> Self {
        Self {
            era: Era::of(version),
            config: LegacyConfig::new(tunables, version),
            rotational,
            slab: RequestSlab::default(),
            slots: Vec::new(),
            queues: Vec::new(),
            queue_of: BTreeMap::new(),
            processes: BTreeMap::new(),
            tree: BTreeSet::new(),
            active: None,
            active_process: None,
            idle_timer: None,
            busy_queues: 0,
            busy_rt_queues: 0,
            in_device: 0,
            sync_flight: 0,
            owners: BTreeMap::new(),
            list: DispatchList::default(),
            last_position: 0,
            hw_tag: HwTag {
                present: true,
                samples: 0,
                peak: 0,
            },
            sequence: 0,
            trace: TraceBuffer::default(),
        }
    }

    fn next_sequence(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    /// Requests CFQ still holds: queued, or on the dispatch list.
    pub(super) fn queued(&self) -> usize {
        self.slab.len() + self.list.len()
    }

    /// The key of the queue a request joins.
    fn key_for(&self, request: &Request) -> QueueKey {
        if self.era == Era::TimeSliced2004 || request.sync {
            QueueKey::Process(request.process)
        } else {
            let (class, level) = super::queue::async_key(request.priority);
            QueueKey::Async(class, level)
        }
    }

    /// The queue a request joins, created on first use.
    fn queue_for(&mut self, request: &Request) -> QueueId {
        let key = self.key_for(request);
        if let Some(&queue) = self.queue_of.get(&key) {
            return queue;
        }
        let sync = self.era == Era::TimeSliced2004 || request.sync;
        let mut fresh = LegacyQueue::new(sync, request.priority);
        if let QueueKey::Process(process) = key {
            fresh.process = Some(process);
        }
        self.queues.push(fresh);
        let id = self.queues.len() - 1;
        self.queue_of.insert(key, id);
        id
    }

    /// A request arrives (`cfq_insert_request` and `cfq_rq_enqueued`).
    pub(super) fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.fire_idle_timer(now);
        let request = match self.merge_into_queued(request) {
            Ok(carrier) => return Inserted::Merged(carrier),
            Err(request) => request,
        };
        let queue = self.queue_for(&request);
        let (process, sync, sector, end) = (
            request.process,
            request.sync,
            request.sector,
            request.end_sector(),
        );
        self.add_request(queue, request, now);
        self.learn(queue, process, sector, end, now);
        if self.active == Some(queue) {
            if self.queues[queue].wait_request {
                self.idle_timer = None;
                let q = &mut self.queues[queue];
                q.wait_request = false;
                q.must_dispatch = true;
            }
        } else if let Some(reason) = self.should_preempt(queue, sync, sector, now) {
            self.trace_preempt(queue, reason);
            self.preempt(queue, now);
        }
        Inserted::Queued
    }

    /// Think time, seek mean and idle window learn from a new request of `process`.
    fn learn(&mut self, queue: QueueId, process: ProcessId, sector: u64, end: u64, now: Nanos) {
        let cap = self.config.slice_idle.saturating_mul(2);
        let hw_tag = self.hw_tag.present;
        let slice_idle = self.config.slice_idle;
        let state = self
            .processes
            .entry(process)
            .or_insert_with(|| ProcessIo::new(now));
        state.think_time.record(now, cap);
        if let Some(last) = state.last_end {
            state.seek.record(last.abs_diff(sector));
        }
        state.last_end = Some(end);
        let state = *state;
        let q = &mut self.queues[queue];
        if self.era == Era::TimeSliced2004 || !q.sync || q.is_idle_class() {
            return;
        }
        // `cfq_update_idle_window`: off for an exited process, with idling off, or for a seeky
        // process on a queueing device; else by think time once it is trusted.
        if state.exited || slice_idle == 0 || (hw_tag && state.seek.seeky()) {
            q.idle_window = false;
        } else if state.think_time.valid() {
            q.idle_window = state.think_time.mean <= slice_idle;
        }
    }

    /// Put a request on its queue: sort list, FIFO, merge index; the queue joins the tree.
    fn add_request(&mut self, queue: QueueId, request: Request, now: Nanos) {
        let expire = if self.queues[queue].sync {
            self.config.fifo_expire_sync
        } else {
            self.config.fifo_expire_async
        };
        let due = now.saturating_add(expire);
        let seq = self.next_sequence();
        let sector = request.sector;
        let slot = self.slab.insert(request);
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, SlotInfo::default());
        }
        self.slots[slot] = SlotInfo { queue, due, seq };
        let q = &mut self.queues[queue];
        q.sort_list.insert((sector, slot));
        q.fifo.insert((due, seq, slot));
        q.merges.add(slot, self.slab.get(slot));
        if !q.on_rr {
            self.add_to_tree(queue, now);
        }
        let current = self.queues[queue].next;
        self.queues[queue].next =
            self.config
                .seek
                .choose_slot(&self.slab, self.last_position, current, Some(slot));
    }

    /// Take a queued request off its queue and out of the slab; the queue leaves the tree
    /// when it empties (`cfq_remove_request`).
    fn remove_request(&mut self, slot: SlotKey) -> Request {
        let queue = self.slots[slot].queue;
        if self.queues[queue].next == Some(slot) {
            let next = self
                .config
                .seek
                .next_after(&self.slab, &self.queues[queue].sort_list, slot);
            self.queues[queue].next = next.filter(|&next| next != slot);
        }
        self.unlink(queue, slot);
        let request = self.slab.remove(slot);
        self.queues[queue].merges.remove(slot, &request);
        if self.queues[queue].on_rr && self.queues[queue].is_empty() {
            self.remove_from_tree(queue);
        }
        request
    }

    /// Take a request off its queue's sort list and FIFO (it stays in the slab).
    fn unlink(&mut self, queue: QueueId, slot: SlotKey) {
        let sector = self.slab.get(slot).sector;
        let SlotInfo { due, seq, .. } = self.slots[slot];
        let q = &mut self.queues[queue];
        q.sort_list.remove(&(sector, slot));
        q.fifo.remove(&(due, seq, slot));
    }

    /// Merge a request into one queued on the queue it would join, if one touches it.
    fn merge_into_queued(&mut self, request: Request) -> Result<RequestId, Request> {
        let Some(&queue) = self.queue_of.get(&self.key_for(&request)) else {
            return Err(request);
        };
        let same_kind = |a: &Request, b: &Request| a.direction == b.direction && a.sync == b.sync;
        let Some((slot, kind)) = self.queues[queue]
            .merges
            .find(&self.slab, &request, same_kind)
        else {
            return Err(request);
        };
        let old_sector = self.slab.get(slot).sector;
        self.queues[queue]
            .merges
            .merge(&mut self.slab, slot, kind, request);
        if kind == MergeKind::Front {
            let q = &mut self.queues[queue];
            q.sort_list.remove(&(old_sector, slot));
            q.sort_list.insert((self.slab.get(slot).sector, slot));
        }
        let carrier = self.coalesce(queue, slot, kind, same_kind);
        Ok(self.slab.get(carrier).id)
    }

    /// After a merge, absorb the neighbour the grown request now touches (the survivor keeps
    /// the earlier FIFO place).
    fn coalesce(
        &mut self,
        queue: QueueId,
        slot: SlotKey,
        kind: MergeKind,
        allow: impl Fn(&Request, &Request) -> bool,
    ) -> SlotKey {
        let Some((survivor, absorbed)) = self.queues[queue]
            .merges
            .coalesce_candidate(&self.slab, slot, kind, allow)
        else {
            return slot;
        };
        if self.queues[queue].next == Some(absorbed) {
            self.queues[queue].next = Some(survivor);
        }
        let (kept, gone) = (self.slots[survivor], self.slots[absorbed]);
        self.unlink(queue, absorbed);
        if gone.due < kept.due {
            let q = &mut self.queues[queue];
            q.fifo.remove(&(kept.due, kept.seq, survivor));
            q.fifo.insert((gone.due, gone.seq, survivor));
            self.slots[survivor] = SlotInfo { queue, ..gone };
        }
        let old_sector = self.slab.get(survivor).sector;
        self.queues[queue]
            .merges
            .coalesce(&mut self.slab, survivor, absorbed);
        let new_sector = self.slab.get(survivor).sector;
        let q = &mut self.queues[queue];
        q.sort_list.remove(&(old_sector, survivor));
        q.sort_list.insert((new_sector, survivor));
        survivor
    }

    /// Whether two requests may merge: same queue, direction and kind.
    pub(super) fn allow_merge(&self, queued: &Request, incoming: &Request) -> bool {
        queued.direction == incoming.direction
            && queued.sync == incoming.sync
            && self.queue_of.get(&self.key_for(queued))
                == self.queue_of.get(&self.key_for(incoming))
    }

    /// The driver asks for a request: the dispatch list's head, refilled by a dispatch round
    /// when empty.
    pub(super) fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.fire_idle_timer(now);
        if self.era == Era::Tree2630 {
            if let Some(request) = self.dispatch_single(now) {
                return Dispatch::Request(self.hand_to_driver(request));
            }
        } else {
            if self.list.is_empty() {
                self.dispatch_round(now);
            }
            if let Some(request) = self.list.take() {
                return Dispatch::Request(self.hand_to_driver(request));
            }
        }
        match self.idle_timer {
            Some(deadline) => Dispatch::WaitUntil(deadline),
            None => Dispatch::Empty,
        }
    }

    /// The driver takes a request (`cfq_activate_request`).
    fn hand_to_driver(&mut self, request: Request) -> Request {
        self.in_device += 1;
        self.last_position = request.end_sector();
        request
    }

    /// The device finished a request (`cfq_completed_request`).
    pub(super) fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.fire_idle_timer(now);
        let request = &completion.request;
        let Some(queue) = self.owners.remove(&request.id) else {
            return;
        };
        self.hw_tag.sample(self.in_device, self.slab.len());
        self.in_device = self.in_device.saturating_sub(1);
        let q = &mut self.queues[queue];
        q.dispatched = q.dispatched.saturating_sub(1);
        if q.sync && self.era != Era::TimeSliced2004 {
            self.sync_flight = self.sync_flight.saturating_sub(1);
        }
        if request.sync {
            if let Some(state) = self.processes.get_mut(&request.process) {
                state.think_time.last_end = now;
            }
        }
        if self.active == Some(queue) && self.era != Era::TimeSliced2004 {
            self.active_completed(queue, request.sync, now);
        }
    }

    /// A process exited: never idle for it; its active queue expires.
    pub(super) fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        self.fire_idle_timer(now);
        if let Some(state) = self.processes.get_mut(&process) {
            state.exited = true;
        }
        let own = self.queue_of.get(&QueueKey::Process(process)).copied();
        if own.is_some() && own == self.active {
            self.expire(false, ServiceEnd::ProcessExited, now);
        }
    }
}
