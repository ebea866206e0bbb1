//! Zone write locking: at most one write in flight per sequential-write-required zone of a
//! zoned block device, so that the writes of a zone reach the drive in the order they are
//! dispatched, one at a time, however the layers below reorder what they are given.
//!
//! A zoned device's zones all have `zone_sectors` sectors; the first `conventional_zones`
//! are conventional (written anywhere), the rest sequential-write-required. A write to a
//! sequential zone locks that zone when it is dispatched and unlocks it when it completes;
//! while the zone is locked, the elevator passes over the zone's other writes. Reads,
//! discards and writes to conventional zones never lock. Kernels 4.16 to 6.9 did this in
//! the block layer for mq-deadline (`blk_req_needs_zone_write_lock`,
//! `blk_req_zone_write_lock`, `blk_req_can_dispatch_to_zone` in `block/blk-zoned.c` and
//! `include/linux/blkdev.h`; the bitmap `seq_zones_wlock`); Linux 6.10 replaced it with zone
//! write plugging above the elevator. This is our own code, written from those sources.

use std::collections::BTreeSet;

use crate::{Direction, Request};

/// The zone layout a policy needs, and the zones locked by a write in flight.
#[derive(Debug, Clone, Default)]
pub struct ZoneWriteLocks {
    /// Sectors per zone; 0 for a device without zones (nothing ever locks).
    zone_sectors: u64,
    /// The conventional zones at the start of the device.
    conventional_zones: u64,
    /// Sequential zones with a write at the device.
    locked: BTreeSet<u64>,
}

impl ZoneWriteLocks {
    /// Locks for a device with zones of `zone_sectors` sectors (0: not zoned), the first
    /// `conventional_zones` of them conventional.
    pub fn new(zone_sectors: u64, conventional_zones: u64) -> Self {
        Self {
            zone_sectors,
            conventional_zones,
            locked: BTreeSet::new(),
        }
    }

    /// The sequential zone a write must lock, if `request` is one (the kernel's
    /// `blk_req_needs_zone_write_lock`).
    fn zone_of(&self, request: &Request) -> Option<u64> {
        if self.zone_sectors == 0 || request.direction != Direction::Write {
            return None;
        }
        let zone = request.sector / self.zone_sectors;
        (zone >= self.conventional_zones).then_some(zone)
    }

    /// Whether `request` may be dispatched now: it is no write to a locked zone.
    pub fn can_dispatch(&self, request: &Request) -> bool {
        self.zone_of(request)
            .is_none_or(|zone| !self.locked.contains(&zone))
    }

    /// `request` was dispatched: lock its zone if it is a write to a sequential zone.
    pub fn dispatched(&mut self, request: &Request) {
        if let Some(zone) = self.zone_of(request) {
            self.locked.insert(zone);
        }
    }

    /// `request` completed: unlock its zone.
    pub fn completed(&mut self, request: &Request) {
        if let Some(zone) = self.zone_of(request) {
            self.locked.remove(&zone);
        }
    }

    /// Zones locked now.
    pub fn locked(&self) -> usize {
        self.locked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProcessId, RequestId};

    fn write(sector: u64) -> Request {
        Request::new(RequestId(sector), ProcessId(1), Direction::Write, sector, 8)
    }

    #[test]
    fn one_write_per_sequential_zone() {
        let mut locks = ZoneWriteLocks::new(100, 1);
        assert!(locks.can_dispatch(&write(10)));
        locks.dispatched(&write(10));
        // Conventional zone 0 never locks.
        assert!(locks.can_dispatch(&write(20)));
        locks.dispatched(&write(150));
        assert!(!locks.can_dispatch(&write(158)));
        assert!(locks.can_dispatch(&write(200)));
        let read = Request::new(RequestId(9), ProcessId(1), Direction::Read, 160, 8);
        assert!(locks.can_dispatch(&read));
        locks.completed(&write(150));
        assert!(locks.can_dispatch(&write(158)));
        assert_eq!(locks.locked(), 0);
    }

    #[test]
    fn nothing_locks_without_zones() {
        let mut locks = ZoneWriteLocks::new(0, 0);
        locks.dispatched(&write(150));
        assert!(locks.can_dispatch(&write(158)));
    }
}
