//! Disk geometry: zoned recording on cylinders × heads, and rotation.
//!
//! The surface is divided into zones of equal cylinder count; sectors per track fall
//! linearly (in media rate) from the outer zone to the inner one, as in DiskSim's
//! `layout_g1` zone lists. LBA 0 is on the outermost cylinder; LBAs fill a track, then the
//! next head of the same cylinder, then the next cylinder inwards. Each track is skewed by
//! the head-switch time, so a sequential transfer loses only that time per track, and the
//! sectors per track are chosen so that this sustained rate equals the datasheet figure.
//! Rotation is a pure function of virtual time: a sector passes under the head whenever
//! `time mod revolution` equals its angular offset, which keeps the model deterministic.

use ioslice_core::Nanos;

/// Bytes per sector.
pub const SECTOR_BYTES: u64 = 512;

/// What the geometry is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometryConfig {
    /// Capacity in sectors.
    pub capacity_sectors: u64,
    /// Spindle speed.
    pub rpm: u32,
    /// Recording surfaces (heads).
    pub heads: u32,
    /// Number of zones.
    pub zones: u32,
    /// Sustained media rate of the outer zone, MB/s (10⁶ bytes).
    pub outer_mbps: f64,
    /// Sustained media rate of the inner zone, MB/s.
    pub inner_mbps: f64,
    /// Head-switch time, which is also the track skew.
    pub head_switch: Nanos,
}

/// One recording zone.
#[derive(Debug, Clone, PartialEq)]
struct Zone {
    first_lba: u64,
    first_cylinder: u64,
    sectors_per_track: u64,
    skew_sectors: u64,
}

/// Where a sector lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// Cylinder, 0 at the outer edge.
    pub cylinder: u64,
    /// Head (surface).
    pub head: u32,
    /// Angular offset of the sector's start within a revolution, in nanoseconds.
    pub angle: Nanos,
}

/// Zones, cylinders, heads and rotation of one disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    zones: Vec<Zone>,
    heads: u64,
    cylinders: u64,
    revolution: Nanos,
    capacity: u64,
}

impl Geometry {
    /// Lay out the disk.
    pub fn new(config: &GeometryConfig) -> Self {
        let revolution = 60_000_000_000 / u64::from(config.rpm.max(1));
        let heads = u64::from(config.heads.max(1));
        let zone_count = config.zones.max(1);
        let spts: Vec<u64> = (0..zone_count)
            .map(|i| Self::sectors_per_track(config, i, zone_count, revolution))
            .collect();
        let sectors_per_cylinder_set: u64 = spts.iter().map(|spt| spt * heads).sum();
        let cylinders_per_zone = config
            .capacity_sectors
            .div_ceil(sectors_per_cylinder_set)
            .max(1);
        let mut zones = Vec::with_capacity(spts.len());
        let mut first_lba = 0;
        for (i, &spt) in spts.iter().enumerate() {
            let skew_sectors = (config.head_switch * spt).div_ceil(revolution);
            let first_cylinder = i as u64 * cylinders_per_zone;
            zones.push(Zone {
                first_lba,
                first_cylinder,
                sectors_per_track: spt,
                skew_sectors,
            });
            first_lba += cylinders_per_zone * heads * spt;
        }
        Self {
            zones,
            heads,
            cylinders: cylinders_per_zone * u64::from(zone_count),
            revolution,
            capacity: config.capacity_sectors,
        }
    }

    /// Sectors per track of zone `i` so that its sustained rate, track switches included,
    /// equals the interpolated media rate.
    fn sectors_per_track(config: &GeometryConfig, i: u32, zones: u32, revolution: Nanos) -> u64 {
        let fraction = if zones > 1 {
            f64::from(i) / f64::from(zones - 1)
        } else {
            0.0
        };
        let mbps = config.outer_mbps + (config.inner_mbps - config.outer_mbps) * fraction;
        let track_time_s = (revolution + config.head_switch) as f64 * 1e-9;
        ((mbps * 1e6 * track_time_s / SECTOR_BYTES as f64).round() as u64).max(1)
    }

    /// One revolution.
    pub fn revolution(&self) -> Nanos {
        self.revolution
    }

    /// Total cylinders.
    pub fn cylinders(&self) -> u64 {
        self.cylinders
    }

    /// Capacity in sectors.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Number of zones.
    pub fn zone_count(&self) -> usize {
        self.zones.len()
    }

    /// Sectors per track in zone `zone` (0 is the outer zone).
    pub fn zone_sectors_per_track(&self, zone: usize) -> u64 {
        self.zones[zone.min(self.zones.len() - 1)].sectors_per_track
    }

    fn zone_of(&self, lba: u64) -> &Zone {
        let index = self.zones.partition_point(|zone| zone.first_lba <= lba);
        &self.zones[index.saturating_sub(1)]
    }

    /// Where `lba` lies (LBAs past the end are clamped to the last sector).
    pub fn locate(&self, lba: u64) -> Location {
        let lba = lba.min(self.capacity.saturating_sub(1));
        let zone = self.zone_of(lba);
        let spt = zone.sectors_per_track;
        let track = (lba - zone.first_lba) / spt;
        let sector = (lba - zone.first_lba) % spt;
        let skewed = (sector + track * zone.skew_sectors) % spt;
        Location {
            cylinder: zone.first_cylinder + track / self.heads,
            head: (track % self.heads) as u32,
            angle: skewed * self.revolution / spt,
        }
    }

    /// Time from `at` until the start of the sector at `to` passes under the head. A head
    /// that arrives less than half a sector late still catches it (rounding of sector times).
    pub fn rotational_wait(&self, to: &Location, at: Nanos, sector_time: Nanos) -> Nanos {
        let position = at % self.revolution;
        let wait = (to.angle + self.revolution - position) % self.revolution;
        if wait + sector_time / 2 >= self.revolution {
            0
        } else {
            wait
        }
    }

    /// Time for one sector to pass under the head at `lba`.
    pub fn sector_time(&self, lba: u64) -> Nanos {
        self.revolution / self.zone_of(lba).sectors_per_track
    }

    /// Media time to transfer `sectors` sectors starting at `lba`: the sectors themselves plus
    /// one skew (head switch) per track boundary crossed. The start zone's layout is used.
    pub fn transfer_time(&self, lba: u64, sectors: u64) -> Nanos {
        if sectors == 0 {
            return 0;
        }
        let zone = self.zone_of(lba);
        let spt = zone.sectors_per_track;
        let in_track = (lba - zone.first_lba) % spt;
        let crossings = (in_track + sectors - 1) / spt;
        let passing =
            u128::from(sectors + crossings * zone.skew_sectors) * u128::from(self.revolution);
        (passing / u128::from(spt)) as Nanos
    }

    /// The sustained streaming rate at `lba` as (sectors, per nanoseconds): `sectors`
    /// sectors pass every `nanoseconds` including track switches.
    pub fn streaming_rate(&self, lba: u64) -> (u64, Nanos) {
        let zone = self.zone_of(lba);
        let spt = zone.sectors_per_track;
        (
            spt,
            self.revolution + zone.skew_sectors * self.revolution / spt,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> GeometryConfig {
        GeometryConfig {
            capacity_sectors: 1_000_000_000 / 512 * 80,
            rpm: 7200,
            heads: 4,
            zones: 16,
            outer_mbps: 60.0,
            inner_mbps: 30.0,
            head_switch: 1_000_000,
        }
    }

    #[test]
    fn zones_shrink_inwards_and_cover_capacity() {
        let geometry = Geometry::new(&config());
        assert_eq!(geometry.revolution(), 8_333_333);
        let outer = geometry.zone_sectors_per_track(0);
        let inner = geometry.zone_sectors_per_track(15);
        assert!(
            outer > inner && outer.abs_diff(2 * inner) < 4,
            "{outer} {inner}"
        );
        let last = geometry.locate(geometry.capacity() - 1);
        assert!(last.cylinder < geometry.cylinders());
        assert_eq!(geometry.locate(0).cylinder, 0);
    }

    #[test]
    fn sustained_rate_matches_outer_zone() {
        let geometry = Geometry::new(&config());
        let sectors = 100 * geometry.zone_sectors_per_track(0);
        let time = geometry.transfer_time(0, sectors);
        let mbps = (sectors * SECTOR_BYTES) as f64 / time as f64 * 1e3;
        assert!((mbps - 60.0).abs() < 0.6, "{mbps}");
    }

    #[test]
    fn consecutive_sectors_follow_each_other() {
        let geometry = Geometry::new(&config());
        let first = geometry.locate(10);
        let next = geometry.locate(11);
        let sector = geometry.sector_time(10);
        let end = first.angle + sector;
        assert_eq!(geometry.rotational_wait(&next, end, sector), 0);
    }
}
