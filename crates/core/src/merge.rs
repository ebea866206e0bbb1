//! Request merging shared by every policy: a slab that holds queued requests, and an
//! index by start and end sector that finds back-merge candidates (a queued request that
//! ends where the new one starts) and front-merge candidates (one that starts where the new
//! one ends). After a merge the grown request may touch another queued request; the
//! policy can then coalesce the two, as the kernel's `attempt_back_merge`/`attempt_front_merge` do.
//!
//! The index looks requests up by exact sector, as the kernel's merge hash does, so it is a
//! hash of sectors to the slots there (in slot order, so a lookup finds the same candidate
//! whatever the hash). A policy that also keeps its queue in sector order can find requests
//! by start sector there, as the kernel's elevators find front merges in their sort lists
//! (`elv_rb_find`) and keep only the hash by end: it asks for an index
//! [`MergeIndex::by_end_only`] and looks up by start itself (bfq, in its
//! [`crate::sector_tree`]).

use std::collections::HashMap;

use foldhash::fast::FixedState;
use smallvec::SmallVec;

use crate::Request;

/// A slot in a [`RequestSlab`].
pub type SlotKey = usize;

/// Queued requests by slot; freed slots are reused, so keys stay small.
#[derive(Debug, Default, Clone)]
pub struct RequestSlab {
    slots: Vec<Option<Request>>,
    free: Vec<SlotKey>,
    len: usize,
}

impl RequestSlab {
    /// Store a request; returns its slot.
    pub fn insert(&mut self, request: Request) -> SlotKey {
        self.len += 1;
        match self.free.pop() {
            Some(key) => {
                self.slots[key] = Some(request);
                key
            }
            None => {
                self.slots.push(Some(request));
                self.slots.len() - 1
            }
        }
    }

    /// Take a request out. Panics on an empty slot: the policies keep their indexes exact.
    pub fn remove(&mut self, key: SlotKey) -> Request {
        let request = self.slots[key].take().expect("slot holds a request");
        self.free.push(key);
        self.len -= 1;
        request
    }

    /// The request in a slot.
    pub fn get(&self, key: SlotKey) -> &Request {
        self.slots[key].as_ref().expect("slot holds a request")
    }

    /// The request in a slot, mutably.
    pub fn get_mut(&mut self, key: SlotKey) -> &mut Request {
        self.slots[key].as_mut().expect("slot holds a request")
    }

    /// Whether a slot holds a request.
    pub fn contains(&self, key: SlotKey) -> bool {
        self.slots.get(key).is_some_and(Option::is_some)
    }

    /// Number of requests held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Which end of a queued request grew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeKind {
    /// The new request was appended after the queued one.
    Back,
    /// The new request was prepended before the queued one (its start sector changed).
    Front,
}

/// Slots of queued requests by one of their ends' sector, each sector's slots in slot order
/// (nearly always one).
#[derive(Debug, Clone, Default)]
struct SectorHash {
    slots: HashMap<u64, SmallVec<[SlotKey; 2]>, FixedState>,
}

impl SectorHash {
    /// Whether the slot was not there yet.
    fn insert(&mut self, sector: u64, key: SlotKey) -> bool {
        let bucket = self.slots.entry(sector).or_default();
        match bucket.binary_search(&key) {
            Ok(_) => false,
            Err(at) => {
                bucket.insert(at, key);
                true
            }
        }
    }

    /// Whether the slot was there.
    fn remove(&mut self, sector: u64, key: SlotKey) -> bool {
        let Some(bucket) = self.slots.get_mut(&sector) else {
            return false;
        };
        let found = bucket
            .binary_search(&key)
            .map(|at| bucket.remove(at))
            .is_ok();
        if bucket.is_empty() {
            self.slots.remove(&sector);
        }
        found
    }

    /// The slots at `sector`, in slot order.
    fn at(&self, sector: u64) -> &[SlotKey] {
        self.slots
            .get(&sector)
            .map_or(&[], |bucket| bucket.as_slice())
    }
}

/// Queued requests by start and by end sector.
#[derive(Debug, Clone)]
pub struct MergeIndex {
    /// Empty, and never looked at, in an index made [`MergeIndex::by_end_only`].
    by_start: SectorHash,
    /// Whether `by_start` is kept.
    starts: bool,
    by_end: SectorHash,
    /// Requests indexed.
    len: usize,
    /// Largest merged request, in sectors (the kernel's max_sectors_kb × 2).
    pub max_sectors: u32,
    /// Whether front merges are attempted (deadline's `front_merges`).
    pub front_merges: bool,
    /// Whether merging is on at all (the queue's `nomerges`).
    pub enabled: bool,
}

impl Default for MergeIndex {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_SECTORS)
    }
}

impl MergeIndex {
    /// 512 KiB: the classic `max_sectors_kb`.
    pub const DEFAULT_MAX_SECTORS: u32 = 1024;

    /// An empty index merging up to `max_sectors` per request.
    pub fn new(max_sectors: u32) -> Self {
        Self {
            by_start: SectorHash::default(),
            starts: true,
            by_end: SectorHash::default(),
            len: 0,
            max_sectors,
            front_merges: true,
            enabled: true,
        }
    }

    /// An index by end sector only, for a policy that finds requests by start sector in its
    /// own sort list: [`MergeIndex::find`] then finds back merges only, and
    /// [`MergeIndex::coalesce_candidate`] only after front merges; the policy looks for the
    /// others itself, with [`MergeIndex::fits`] and its own test.
    pub fn by_end_only() -> Self {
        Self {
            starts: false,
            ..Self::default()
        }
    }

    /// Index a queued request.
    pub fn add(&mut self, key: SlotKey, request: &Request) {
        if self.enabled {
            self.link(key, request.sector, request.end_sector());
        }
    }

    /// Forget a queued request (before it leaves the slab or changes its extent).
    pub fn remove(&mut self, key: SlotKey, request: &Request) {
        if self.enabled {
            self.unlink(key, request.sector, request.end_sector());
        }
    }

    fn link(&mut self, key: SlotKey, start: u64, end: u64) {
        if self.starts {
            self.by_start.insert(start, key);
        }
        if self.by_end.insert(end, key) {
            self.len += 1;
        }
    }

    fn unlink(&mut self, key: SlotKey, start: u64, end: u64) {
        if self.starts {
            self.by_start.remove(start, key);
        }
        if self.by_end.remove(end, key) {
            self.len -= 1;
        }
    }

    /// Whether `a` followed by `b` stays within the largest merged request.
    pub fn fits(&self, a: &Request, b: &Request) -> bool {
        a.sectors.saturating_add(b.sectors) <= self.max_sectors
    }

    /// A queued request `incoming` can merge into, and how: back merges are tried first.
    /// `allow` is the policy's own test ([`crate::Scheduler::allow_merge`]).
    pub fn find(
        &self,
        slab: &RequestSlab,
        incoming: &Request,
        allow: impl Fn(&Request, &Request) -> bool,
    ) -> Option<(SlotKey, MergeKind)> {
        if !self.enabled || self.len == 0 {
            return None;
        }
        let usable = |key: SlotKey| {
            let queued = slab.get(key);
            self.fits(queued, incoming) && allow(queued, incoming)
        };
        let ending_here = self
            .by_end
            .at(incoming.sector)
            .iter()
            .copied()
            .find(|&key| usable(key));
        if let Some(key) = ending_here {
            return Some((key, MergeKind::Back));
        }
        if !self.front_merges || !self.starts {
            return None;
        }
        let end = incoming.end_sector();
        self.by_start
            .at(end)
            .iter()
            .copied()
            .find(|&key| usable(key))
            .map(|key| (key, MergeKind::Front))
    }

    /// Merge `incoming` into the queued request at `key`; the index follows the new extent.
    pub fn merge(
        &mut self,
        slab: &mut RequestSlab,
        key: SlotKey,
        kind: MergeKind,
        incoming: Request,
    ) {
        let queued = slab.get_mut(key);
        self.unlink(key, queued.sector, queued.end_sector());
        absorb(queued, incoming, kind);
        self.link(key, queued.sector, queued.end_sector());
    }

    /// After the request at `key` grew, a neighbour it now touches that it may absorb:
    /// for a back merge, one starting at its new end; for a front merge, one ending at its
    /// new start (which then absorbs it). Returns `(survivor, absorbed)`.
    pub fn coalesce_candidate(
        &self,
        slab: &RequestSlab,
        key: SlotKey,
        kind: MergeKind,
        allow: impl Fn(&Request, &Request) -> bool,
    ) -> Option<(SlotKey, SlotKey)> {
        let grown = slab.get(key);
        let (map, position) = match kind {
            MergeKind::Back => (&self.by_start, grown.end_sector()),
            MergeKind::Front => (&self.by_end, grown.sector),
        };
        map.at(position)
            .iter()
            .copied()
            .filter(|&other| other != key)
            .find(|&other| {
                let neighbour = slab.get(other);
                let (first, second) = match kind {
                    MergeKind::Back => (grown, neighbour),
                    MergeKind::Front => (neighbour, grown),
                };
                self.fits(first, second) && allow(first, second)
            })
            .map(|other| match kind {
                MergeKind::Back => (key, other),
                MergeKind::Front => (other, key),
            })
    }

    /// Move the request at `absorbed` into the one at `survivor`, which precedes it on disk.
    /// The caller must already have taken `absorbed` out of its own structures; it is
    /// removed from the slab here and returned emptied of data for the caller's bookkeeping.
    pub fn coalesce(
        &mut self,
        slab: &mut RequestSlab,
        survivor: SlotKey,
        absorbed: SlotKey,
    ) -> Request {
        let taken = slab.remove(absorbed);
        self.remove(absorbed, &taken);
        let bookkeeping = Request {
            merged: Vec::new(),
            ..taken.clone()
        };
        self.merge(slab, survivor, MergeKind::Back, taken);
        bookkeeping
    }
}

/// Grow `queued` by `incoming` at the given end, keeping every id for completion.
pub fn absorb(queued: &mut Request, incoming: Request, kind: MergeKind) {
    if kind == MergeKind::Front {
        queued.sector = incoming.sector;
    }
    queued.sectors += incoming.sectors;
    queued.submit_time = queued.submit_time.min(incoming.submit_time);
    queued.merged.push(incoming.id);
    queued.merged.extend(incoming.merged);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, ProcessId, RequestId};

    fn rq(id: u64, sector: u64, sectors: u32) -> Request {
        Request {
            submit_time: id,
            ..Request::new(
                RequestId(id),
                ProcessId(1),
                Direction::Read,
                sector,
                sectors,
            )
        }
    }

    #[test]
    fn back_then_front_then_coalesce() {
        let mut slab = RequestSlab::default();
        let mut index = MergeIndex::default();
        let a = slab.insert(rq(1, 0, 8));
        index.add(a, slab.get(a));
        let c = slab.insert(rq(3, 16, 8));
        index.add(c, slab.get(c));
        let b = rq(2, 8, 8);
        let (key, kind) = index.find(&slab, &b, Request::mergeable_with).unwrap();
        assert_eq!((key, kind), (a, MergeKind::Back));
        index.merge(&mut slab, key, kind, b);
        assert_eq!(slab.get(a).sectors, 16);
        let (survivor, absorbed) = index
            .coalesce_candidate(&slab, a, kind, Request::mergeable_with)
            .unwrap();
        assert_eq!((survivor, absorbed), (a, c));
        index.coalesce(&mut slab, survivor, absorbed);
        let merged = slab.get(a);
        assert_eq!((merged.sector, merged.sectors), (0, 24));
        assert_eq!(
            merged.ids().collect::<Vec<_>>(),
            vec![RequestId(1), RequestId(2), RequestId(3)]
        );
        assert_eq!(slab.len(), 1);
    }

    #[test]
    fn front_merge_moves_the_start() {
        let mut slab = RequestSlab::default();
        let mut index = MergeIndex::default();
        let a = slab.insert(rq(1, 8, 8));
        index.add(a, slab.get(a));
        let (key, kind) = index
            .find(&slab, &rq(2, 0, 8), Request::mergeable_with)
            .unwrap();
        assert_eq!(kind, MergeKind::Front);
        index.merge(&mut slab, key, kind, rq(2, 0, 8));
        assert_eq!((slab.get(a).sector, slab.get(a).sectors), (0, 16));
        let mut no_front = MergeIndex {
            front_merges: false,
            ..MergeIndex::default()
        };
        let b = slab.insert(rq(3, 64, 8));
        no_front.add(b, slab.get(b));
        assert!(no_front
            .find(&slab, &rq(4, 56, 8), Request::mergeable_with)
            .is_none());
    }

    #[test]
    fn size_limit_and_disabled_index_refuse() {
        let mut slab = RequestSlab::default();
        let mut index = MergeIndex::new(16);
        let a = slab.insert(rq(1, 0, 8));
        index.add(a, slab.get(a));
        assert!(index
            .find(&slab, &rq(2, 8, 16), Request::mergeable_with)
            .is_none());
        assert!(index
            .find(&slab, &rq(2, 8, 8), Request::mergeable_with)
            .is_some());
        let mut off = MergeIndex {
            enabled: false,
            ..MergeIndex::default()
        };
        off.add(a, slab.get(a));
        assert!(off
            .find(&slab, &rq(2, 8, 8), Request::mergeable_with)
            .is_none());
    }
}
