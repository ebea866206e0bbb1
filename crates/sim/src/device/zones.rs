//! The zones of a host-managed zoned drive (SMR under ZBC/ZAC): equal zones, the first few
//! conventional (written anywhere), the rest sequential-write-required, each with a write
//! pointer. A write to a sequential zone must start at its write pointer and stay within
//! the zone; the drive rejects any other with ILLEGAL REQUEST (ZBC's "unaligned write
//! command", ASC 21h/04h, or "write boundary violation", 21h/05h), which Linux completes as
//! `BLK_STS_IOERR`, so the process sees `EIO`. A write at the pointer moves it on; a zone
//! whose pointer reaches its end is full. Reads are unrestricted (Linux's `sd_zbc` takes a
//! host-managed disk only if reads past a write pointer do not fail) and, data not being
//! modelled, return the drive's fill pattern. Resetting a zone puts its pointer back at its
//! start. The open-zone limit is the drive's advice to the host (`max_open_zones`): a
//! write that implicitly opens a zone beyond it makes the drive close another implicitly
//! opened zone, not fail, so the limit is reported and not enforced here.
//!
//! Sources: T10 ZBC (INCITS 536) and T13 ZAC: zone types, write pointers, the unaligned
//! write and boundary errors, implicit open and close; Linux `drivers/scsi/sd_zbc.c`
//! (4.10+: unrestricted reads required) and `include/uapi/linux/blkzoned.h` (zone types).
//! This is our own code.

use std::collections::BTreeSet;

use ioslice_core::errno::EIO;

/// What a scheduler and the user are told about a zoned device's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneGeometry {
    /// Sectors per zone (the kernel's `queue/chunk_sectors` of a zoned disk).
    pub zone_sectors: u64,
    /// Conventional zones at the start of the device.
    pub conventional: u64,
    /// Zones in all (`queue/nr_zones`); the last may be shorter.
    pub count: u64,
    /// Zones a host should keep open at most (`queue/max_open_zones`; 0: no limit).
    pub max_open: u64,
}

impl ZoneGeometry {
    /// The zone a sector is in.
    pub fn zone_of(&self, sector: u64) -> u64 {
        sector / self.zone_sectors
    }

    /// The first sector of a zone.
    pub fn start_of(&self, zone: u64) -> u64 {
        zone * self.zone_sectors
    }

    /// Whether a zone is sequential-write-required.
    pub fn is_sequential(&self, zone: u64) -> bool {
        zone >= self.conventional
    }
}

/// Why the drive rejected a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneError {
    /// The write does not start at its zone's write pointer (ZBC "unaligned write command").
    Unaligned {
        /// Where the write started.
        sector: u64,
        /// The zone's write pointer.
        write_pointer: u64,
    },
    /// The write runs past the end of its sequential zone ("write boundary violation").
    Boundary {
        /// Where the write started.
        sector: u64,
    },
}

impl ZoneError {
    /// The error number the process sees: `EIO` for both.
    pub fn errno(self) -> i32 {
        EIO
    }
}

/// The write pointers of a zoned drive's sequential zones.
#[derive(Debug, Clone)]
pub struct WritePointers {
    geometry: ZoneGeometry,
    capacity: u64,
    /// Absolute write pointer of each sequential zone, by zone number less `conventional`.
    pointers: Vec<u64>,
    /// Zones opened by a write and neither full nor reset since.
    open: BTreeSet<u64>,
}

impl WritePointers {
    /// Every sequential zone empty, on a device of `capacity` sectors.
    pub fn new(geometry: ZoneGeometry, capacity: u64) -> Self {
        let sequential = geometry.count.saturating_sub(geometry.conventional);
        let pointers = (geometry.conventional..geometry.conventional + sequential)
            .map(|zone| geometry.start_of(zone))
            .collect();
        Self {
            geometry,
            capacity,
            pointers,
            open: BTreeSet::new(),
        }
    }

    /// The layout.
    pub fn geometry(&self) -> ZoneGeometry {
        self.geometry
    }

    /// The end of a zone (the device's end for a shorter last zone).
    fn end_of(&self, zone: u64) -> u64 {
        (self.geometry.start_of(zone) + self.geometry.zone_sectors).min(self.capacity)
    }

    fn slot(&self, zone: u64) -> Option<usize> {
        let index = zone.checked_sub(self.geometry.conventional)?;
        usize::try_from(index)
            .ok()
            .filter(|&i| i < self.pointers.len())
    }

    /// The write pointer of a sequential zone (None for a conventional zone).
    pub fn write_pointer(&self, zone: u64) -> Option<u64> {
        self.slot(zone).map(|i| self.pointers[i])
    }

    /// Zones opened by writes, not full and not reset.
    pub fn open_zones(&self) -> usize {
        self.open.len()
    }

    /// The drive executes a write of `sectors` at `sector`: accepted (the pointer moves on)
    /// or rejected (nothing changes).
    pub fn write(&mut self, sector: u64, sectors: u64) -> Result<(), ZoneError> {
        let zone = self.geometry.zone_of(sector);
        let Some(slot) = self.slot(zone) else {
            return Ok(());
        };
        let write_pointer = self.pointers[slot];
        if sector != write_pointer {
            return Err(ZoneError::Unaligned {
                sector,
                write_pointer,
            });
        }
        let end = self.end_of(zone);
        if sector + sectors > end {
            return Err(ZoneError::Boundary { sector });
        }
        self.pointers[slot] = sector + sectors;
        if sector + sectors == end {
            self.open.remove(&zone);
        } else {
            self.open.insert(zone);
        }
        Ok(())
    }

    /// Reset the write pointers of the sequential zones that `[start, end)` covers whole
    /// (RESET WRITE POINTER; conventional zones are left alone, as the kernel's
    /// `BLKRESETZONE` does).
    pub fn reset(&mut self, start: u64, end: u64) {
        let first = self.geometry.zone_of(start).max(self.geometry.conventional);
        for zone in first..self.geometry.count {
            let zone_start = self.geometry.start_of(zone);
            if zone_start >= end {
                break;
            }
            if zone_start < start || self.end_of(zone) > end {
                continue;
            }
            if let Some(slot) = self.slot(zone) {
                self.pointers[slot] = zone_start;
                self.open.remove(&zone);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive() -> WritePointers {
        let geometry = ZoneGeometry {
            zone_sectors: 100,
            conventional: 1,
            count: 4,
            max_open: 2,
        };
        WritePointers::new(geometry, 400)
    }

    #[test]
    fn writes_at_the_pointer_advance_it_and_others_fail() {
        let mut zones = drive();
        assert_eq!(zones.write(50, 10), Ok(()), "conventional: anywhere");
        assert_eq!(zones.write(100, 10), Ok(()));
        assert_eq!(zones.write_pointer(1), Some(110));
        assert_eq!(
            zones.write(120, 10),
            Err(ZoneError::Unaligned {
                sector: 120,
                write_pointer: 110
            })
        );
        assert_eq!(
            zones.write(110, 100),
            Err(ZoneError::Boundary { sector: 110 })
        );
        assert_eq!(zones.write_pointer(1), Some(110));
        assert_eq!(zones.open_zones(), 1);
        assert_eq!(zones.write(110, 90), Ok(()));
        assert_eq!(zones.open_zones(), 0, "a full zone is closed");
    }

    #[test]
    fn reset_takes_whole_zones_back_to_their_start() {
        let mut zones = drive();
        zones.write(100, 30).expect("at the pointer");
        zones.write(200, 30).expect("at the pointer");
        zones.reset(100, 200);
        assert_eq!(zones.write_pointer(1), Some(100));
        assert_eq!(zones.write_pointer(2), Some(230), "not covered whole");
        assert_eq!(zones.write_pointer(0), None);
    }
}
