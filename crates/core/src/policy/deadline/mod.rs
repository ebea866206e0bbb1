//! The legacy **deadline** elevator.
//!
//! Every queued request sits on two lists of its direction: a *sort list* ordered by start
//! sector and a *FIFO* ordered by deadline (`insert time + read_expire` or `write_expire`).
//! Requests leave in *batches*: a batch starts at some request and continues in sector order
//! for up to `fifo_batch` requests. When a batch ends the direction is chosen again: reads are
//! preferred, but once reads have been chosen `writes_starved` times in a row while writes
//! wait, a write batch runs. A new batch starts at the head of its direction's FIFO if that
//! request's deadline has passed or nothing follows in sector order (always the case after a
//! batch of the other direction), and otherwise keeps sweeping up from where the last batch
//! stopped. Deadlines are soft: they are looked at only
//! when a batch starts. Incoming requests merge with a queued neighbour (back merges always,
//! front merges when `front_merges=1`), and two queued requests that a merge made contiguous
//! coalesce, the survivor keeping the earlier deadline and its FIFO position.
//!
//! Source: the kernel's legacy `block/deadline-iosched.c` (single-queue, up to 4.20), chiefly
//! `deadline_dispatch_requests`, and the kernel's `Documentation/block/deadline-iosched.rst`.
//! This is our own code, written from those sources.

mod fifo;

use std::collections::BTreeSet;
use std::ops::Bound;

use fifo::Fifos;

use crate::merge::{MergeIndex, MergeKind, RequestSlab, SlotKey};
use crate::time::ms;
use crate::trace::{BatchClass, BatchStart, TraceBuffer};
use crate::tunable::{TunableDef, Tunables};
use crate::{Completion, Direction, Dispatch, Inserted, Nanos, Request, Scheduler, TraceEvent};

/// Largest value of the kernel's `int` tunables.
const INT_MAX: i64 = i32::MAX as i64;

/// A request's place in the sort list: start sector, then slot to break ties.
type SortKey = (u64, SlotKey);

/// The sort list of one direction: its queued requests by start sector (the kernel's
/// `sort_list` rb-tree).
#[derive(Debug, Default, Clone)]
struct SortList(BTreeSet<SortKey>);

impl SortList {
    /// The first request after `position` in sector order that `admit` takes.
    fn next_after(
        &self,
        position: SortKey,
        mut admit: impl FnMut(SlotKey) -> bool,
    ) -> Option<SlotKey> {
        self.0
            .range((Bound::Excluded(position), Bound::Unbounded))
            .map(|&(_, slot)| slot)
            .find(|&slot| admit(slot))
    }
}

/// Which queued requests may be dispatched now: every one, unless a zoned device's write
/// locks hold some back (mq-deadline's zone write locking, [`crate::policy::zone_lock`]).
pub(crate) type Admit<'a> = &'a dyn Fn(&Request) -> bool;

/// Admits every request: the legacy elevator's own dispatch.
fn admit_all(_: &Request) -> bool {
    true
}

/// What the next dispatch sends: a request, and if it starts a new batch, the batch's
/// direction and the starvation count that choosing it leaves.
#[derive(Debug, Clone, Copy)]
struct Choice {
    /// The request.
    slot: SlotKey,
    /// `Some((direction, starved))` when the request starts a batch.
    new_batch: Option<(Direction, i64)>,
}

/// The legacy deadline elevator: sector-sorted batches, per-direction deadlines, reads
/// preferred over writes up to `writes_starved` batches.
#[derive(Debug, Clone)]
pub struct Deadline {
    /// Queued requests.
    slab: RequestSlab,
    /// Merge candidates by start and end sector.
    merge: MergeIndex,
    /// The sort lists, per direction (indexed by [`Direction::index`]).
    sort: [SortList; 2],
    /// The FIFOs of both directions.
    fifo: Fifos,
    /// `read_expire` and `write_expire`, in nanoseconds.
    expire: [Nanos; 2],
    /// Read batches chosen over waiting writes before a write batch is forced (0 or less:
    /// waiting writes always go first, as in the kernel).
    writes_starved: i64,
    /// Requests per batch.
    fifo_batch: u64,
    /// Read batches chosen in a row while writes waited.
    starved: i64,
    /// Requests dispatched in the current batch.
    batching: u64,
    /// Direction and sort-list position of the last dispatched request; the batch
    /// continues after it. Only the direction last dispatched has a "next" request.
    last: Option<(Direction, SortKey)>,
    /// Merges and batches, when tracing is on.
    trace: TraceBuffer,
}

impl Deadline {
    /// The tunables, with the kernel's names, units and defaults.
    pub const TUNABLES: &'static [TunableDef] = &[
        TunableDef {
            name: "read_expire",
            default: 500,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "deadline of a read, from its insertion",
        },
        TunableDef {
            name: "write_expire",
            default: 5000,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "deadline of a write, from its insertion",
        },
        TunableDef {
            name: "writes_starved",
            default: 2,
            min: i32::MIN as i64,
            max: INT_MAX,
            unit: "count",
            help: "read batches preferred over waiting writes before a write batch",
        },
        TunableDef {
            name: "fifo_batch",
            default: 16,
            min: 0,
            max: INT_MAX,
            unit: "requests",
            help: "requests dispatched in sector order per batch (1 is close to FCFS)",
        },
        TunableDef {
            name: "front_merges",
            default: 1,
            min: 0,
            max: 1,
            unit: "bool",
            help: "try merging a request in front of a queued one",
        },
    ];

    /// A deadline elevator with these tunables (resolved against [`Self::TUNABLES`]).
    pub fn new(tunables: &Tunables) -> Self {
        let mut merge = MergeIndex::default();
        merge.front_merges = tunables.get_bool("front_merges");
        Self {
            slab: RequestSlab::default(),
            merge,
            sort: Default::default(),
            fifo: Fifos::default(),
            expire: [
                ms(tunables.get_u64("read_expire")),
                ms(tunables.get_u64("write_expire")),
            ],
            writes_starved: tunables.get("writes_starved"),
            fifo_batch: tunables.get_u64("fifo_batch"),
            starved: 0,
            batching: 0,
            last: None,
            trace: TraceBuffer::default(),
        }
    }

    /// The sort-list key of a queued request.
    fn sort_key(&self, slot: SlotKey) -> SortKey {
        (self.slab.get(slot).sector, slot)
    }

    /// The request that continues the batch in `direction`, if that direction was the last
    /// dispatched and something `admit` takes follows the last position in sector order.
    fn next_in_sort(&self, direction: Direction, admit: Admit) -> Option<SlotKey> {
        match self.last {
            Some((last, position)) if last == direction => {
                self.sort[direction.index()].next_after(position, |slot| admit(self.slab.get(slot)))
            }
            _ => None,
        }
    }

    /// The first request of `direction`'s FIFO that `admit` takes, and its deadline.
    fn fifo_head(&self, direction: Direction, admit: Admit) -> Option<(Nanos, SlotKey)> {
        self.fifo
            .first_where(direction, |slot| admit(self.slab.get(slot)))
    }

    /// Put a new request on the slab, the merge index, its sort list and its FIFO.
    fn enqueue(&mut self, request: Request, now: Nanos) {
        let direction = request.direction;
        let deadline = now.saturating_add(self.expire[direction.index()]);
        let sector = request.sector;
        let slot = self.slab.insert(request);
        self.merge.add(slot, self.slab.get(slot));
        self.sort[direction.index()].0.insert((sector, slot));
        self.fifo.push_back(direction, slot, deadline);
    }

    /// Take a request off its sort list and FIFO (not off the slab or merge index).
    fn unlink(&mut self, slot: SlotKey) {
        let key = self.sort_key(slot);
        let direction = self.slab.get(slot).direction;
        self.sort[direction.index()].0.remove(&key);
        self.fifo.remove(direction, slot);
    }

    /// Merge `incoming` into the queued request at `slot`, then coalesce it with a neighbour
    /// the merge made contiguous. Returns the slot of the request that now carries it.
    fn merge_into(&mut self, slot: SlotKey, kind: MergeKind, incoming: Request) -> SlotKey {
        let direction = self.slab.get(slot).direction.index();
        let old_key = self.sort_key(slot);
        self.trace.emit(|| TraceEvent::Merge {
            request: incoming.id,
            into: self.slab.get(slot).id,
            position: kind,
        });
        self.merge.merge(&mut self.slab, slot, kind, incoming);
        let new_key = self.sort_key(slot);
        if new_key != old_key {
            let sort = &mut self.sort[direction].0;
            sort.remove(&old_key);
            sort.insert(new_key);
        }
        self.coalesce(slot, kind)
    }

    /// After the request at `slot` grew at the `kind` end, absorb the queued neighbour it now
    /// touches, if any (the kernel's `requests_merged`). Returns the survivor's slot.
    fn coalesce(&mut self, slot: SlotKey, kind: MergeKind) -> SlotKey {
        let allow = |queued: &Request, incoming: &Request| self.allow_merge(queued, incoming);
        let Some((survivor, absorbed)) =
            self.merge.coalesce_candidate(&self.slab, slot, kind, allow)
        else {
            return slot;
        };
        self.trace.emit(|| TraceEvent::Coalesce {
            into: self.slab.get(survivor).id,
            absorbed: self.slab.get(absorbed).id,
        });
        let key = self.sort_key(absorbed);
        let direction = self.slab.get(absorbed).direction;
        self.sort[direction.index()].0.remove(&key);
        // The survivor takes the absorbed request's deadline and FIFO place if earlier.
        self.fifo.coalesce(direction, survivor, absorbed);
        self.merge.coalesce(&mut self.slab, survivor, absorbed);
        survivor
    }

    /// Choose the direction of a new batch: reads, unless writes wait and reads have been
    /// preferred `writes_starved` times already. Returns the direction and the count of read
    /// batches preferred over waiting writes once it is chosen (what `starved` becomes);
    /// `None` when nothing is queued.
    /// Writes only count when `admit` takes one of them (the kernel's
    /// `deadline_fifo_request(.., DD_WRITE)` in the starvation test).
    fn choose_direction(&self, admit: Admit) -> Option<(Direction, i64)> {
        let reads = !self.fifo.is_empty(Direction::Read);
        let writes = self.fifo_head(Direction::Write, admit).is_some();
        if reads {
            let starved = self.starved;
            let after = if writes {
                starved.saturating_add(1)
            } else {
                starved
            };
            if !(writes && starved >= self.writes_starved) {
                return Some((Direction::Read, after));
            }
        }
        if writes {
            return Some((Direction::Write, 0));
        }
        None
    }

    /// The request the next dispatch sends, and whether it starts a batch, without changing
    /// anything: the batch's continuation while it lasts, else the start of a new batch in
    /// the direction [`Self::choose_direction`] picks. `None` when nothing is queued.
    fn choose(&self, now: Nanos, admit: Admit) -> Option<Choice> {
        let continuation = self
            .last
            .and_then(|(direction, _)| self.next_in_sort(direction, admit))
            .filter(|_| self.batching < self.fifo_batch);
        if let Some(slot) = continuation {
            return Some(Choice {
                slot,
                new_batch: None,
            });
        }
        let (direction, starved) = self.choose_direction(admit)?;
        let slot = self.batch_start(direction, now, admit)?;
        Some(Choice {
            slot,
            new_batch: Some((direction, starved)),
        })
    }

    /// Dispatch what [`Self::choose`] chose: start its batch if it starts one, count it in
    /// the batch and take it off every structure.
    fn commit(&mut self, choice: Choice, now: Nanos) -> Request {
        if let Some((direction, starved)) = choice.new_batch {
            self.starved = starved;
            self.batching = 0;
            if self.trace.is_enabled() {
                self.trace_batch_start(direction, choice.slot, now);
            }
        }
        self.batching += 1;
        self.take(choice.slot)
    }

    /// When a queued request was inserted: its deadline less its direction's expire (the
    /// kernel's `fifo_time - fifo_expire[dir]`). A request that coalesced with an earlier
    /// one carries the earlier one's time.
    fn insert_time(&self, slot: SlotKey) -> Nanos {
        let direction = self.slab.get(slot).direction;
        self.fifo
            .deadline(slot)
            .saturating_sub(self.expire[direction.index()])
    }

    /// Dispatch as [`Scheduler::dispatch`] would, but only if the request it would send was
    /// inserted at or before `cutoff`. Otherwise nothing changes (no batch starts, the
    /// starvation count stays) and the answer is `None`. mq-deadline's aging asks this of a
    /// priority level with `cutoff = now - prio_aging_expire`.
    pub(crate) fn dispatch_inserted_by(
        &mut self,
        now: Nanos,
        cutoff: Nanos,
        admit: Admit,
    ) -> Option<Request> {
        let choice = self.choose(now, admit)?;
        if self.insert_time(choice.slot) > cutoff {
            return None;
        }
        Some(self.commit(choice, now))
    }

    /// Dispatch as [`Scheduler::dispatch`] would, among the requests `admit` takes only.
    pub(crate) fn dispatch_admitted(&mut self, now: Nanos, admit: Admit) -> Dispatch {
        match self.choose(now, admit) {
            Some(choice) => Dispatch::Request(self.commit(choice, now)),
            None => Dispatch::Empty,
        }
    }

    /// The first request of a new batch in `direction`: the FIFO head if it has expired or
    /// nothing follows in sector order, otherwise the next request in sector order.
    fn batch_start(&self, direction: Direction, now: Nanos, admit: Admit) -> Option<SlotKey> {
        let (deadline, head) = self.fifo_head(direction, admit)?;
        let expired = now >= deadline;
        match self.next_in_sort(direction, admit) {
            Some(next) if !expired => Some(next),
            _ => Some(head),
        }
    }

    /// Trace a new batch in `direction` starting at `slot`: where it starts and why, and an
    /// expired FIFO head.
    fn trace_batch_start(&mut self, direction: Direction, slot: SlotKey, now: Nanos) {
        let Some((deadline, head)) = self.fifo.head(direction) else {
            return;
        };
        let expired = now >= deadline;
        let start = if expired && slot == head {
            BatchStart::Expired
        } else if self.next_in_sort(direction, &admit_all) == Some(slot) {
            BatchStart::Sorted
        } else {
            BatchStart::FifoHead
        };
        if start == BatchStart::Expired {
            let request = self.slab.get(slot).id;
            self.trace.push(TraceEvent::FifoExpired {
                request,
                late: now - deadline,
            });
        }
        self.trace.push(TraceEvent::BatchStart {
            // Batches run per data direction: discards sit on the write lists.
            class: match direction.data() {
                Direction::Read => BatchClass::Read,
                Direction::Write | Direction::Discard => BatchClass::Write,
            },
            start,
            starved: direction == Direction::Write && !self.fifo.is_empty(Direction::Read),
        });
    }

    /// Remove the request at `slot` from every structure and remember its position.
    fn take(&mut self, slot: SlotKey) -> Request {
        self.unlink(slot);
        let key = self.sort_key(slot);
        let request = self.slab.remove(slot);
        self.merge.remove(slot, &request);
        self.last = Some((request.direction.data(), key));
        request
    }
}

impl Scheduler for Deadline {
    fn name(&self) -> &'static str {
        "deadline"
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        let allow = |queued: &Request, incoming: &Request| self.allow_merge(queued, incoming);
        match self.merge.find(&self.slab, &request, allow) {
            Some((slot, kind)) => {
                let carrier = self.merge_into(slot, kind, request);
                Inserted::Merged(self.slab.get(carrier).id)
            }
            None => {
                self.enqueue(request, now);
                Inserted::Queued
            }
        }
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.dispatch_admitted(now, &admit_all)
    }

    fn complete(&mut self, _completion: &Completion, _now: Nanos) {
        // Deadline is not completion-driven: dispatch decisions never look at completions.
    }

    fn queued(&self) -> usize {
        self.slab.len()
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProcessId, RequestId};

    fn deadline() -> Deadline {
        let tunables = Tunables::resolve("deadline", Deadline::TUNABLES, &[]);
        Deadline::new(&tunables.expect("defaults resolve"))
    }

    fn read(id: u64, sector: u64) -> Request {
        Request::new(RequestId(id), ProcessId(1), Direction::Read, sector, 8)
    }

    #[test]
    fn structures_stay_in_step_through_a_coalesce() {
        let mut dl = deadline();
        dl.insert(read(1, 0), 0);
        dl.insert(read(2, 16), 0);
        assert_eq!(dl.insert(read(3, 8), 0), Inserted::Merged(RequestId(1)));
        assert_eq!(dl.queued(), 1);
        assert_eq!(dl.sort[0].0.len(), 1);
        assert!(dl.fifo.head(Direction::Read).is_some());
        let Dispatch::Request(rq) = dl.dispatch(0) else {
            panic!("a request is queued");
        };
        assert_eq!((rq.sector, rq.sectors), (0, 24));
        assert_eq!(dl.dispatch(0), Dispatch::Empty);
        assert!(dl.sort[0].0.is_empty());
        assert!(dl.fifo.is_empty(Direction::Read));
    }
}
