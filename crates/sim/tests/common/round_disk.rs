//! The round test disk of the HDD model's exact-time tests: 6000 rpm (a 10 ms revolution),
//! 1000 sectors per track and no track skew, so a sector passes every 10 µs; a 1 µs-per-sector
//! bus; 2048-sector read segments; one command at a time. The overheads, read-ahead and write
//! cache are each test file's.

use ioslice_core::{Direction, Nanos};
use ioslice_sim::device::hdd::geometry::GeometryConfig;
use ioslice_sim::device::hdd::{Hdd, HddConfig};
use ioslice_sim::device::{Command, DeviceModel};

/// Time for one sector to pass under the head.
pub const SECTOR: Nanos = 10_000;
/// Bus transfer of one sector.
pub const BUS: Nanos = 1_000;
/// One revolution.
pub const REVOLUTION: Nanos = 10_000_000;

/// What a test file sets of the round disk.
pub struct RoundDisk {
    /// Overhead of a command served from the buffer (and of every write).
    pub hit_overhead: Nanos,
    /// Overhead of a read that misses the buffer.
    pub miss_overhead: Nanos,
    /// Read-ahead past the host's last read, in sectors.
    pub readahead_sectors: u64,
    /// Write-back cache size in sectors; 0 is write-through.
    pub write_cache_sectors: u64,
}

impl RoundDisk {
    /// The disk.
    pub fn build(&self) -> Hdd {
        Hdd::new(&HddConfig {
            name: "round".into(),
            geometry: GeometryConfig {
                capacity_sectors: 4_000_000,
                rpm: 6000,
                heads: 4,
                zones: 1,
                // 51.2 MB/s over a 10 ms revolution is 1000 sectors per track.
                outer_mbps: 51.2,
                inner_mbps: 51.2,
                head_switch: 0,
            },
            seek_track_ms: 1.0,
            seek_avg_ms: 5.0,
            seek_full_ms: 10.0,
            write_settle: 0,
            read_overhead: self.hit_overhead,
            read_miss_overhead: self.miss_overhead,
            write_overhead: self.hit_overhead,
            bus_mbps: 512.0,
            segments: 4,
            segment_sectors: 2048,
            readahead_sectors: self.readahead_sectors,
            readahead_min_sectors: 0,
            write_cache: self.write_cache_sectors > 0,
            write_cache_sectors: self.write_cache_sectors,
            queue_depth: 1,
            age_limit: 1_000_000_000,
        })
        .expect("the test disk's seek anchors rise")
    }
}

/// Submit a command for `sectors` at `sector` at `now` and run the disk until it completes;
/// returns the completion time.
pub fn serve(
    disk: &mut Hdd,
    direction: Direction,
    (tag, sector, sectors): (u64, u64, u32),
    now: Nanos,
) -> Nanos {
    disk.advance(now, &mut Vec::new());
    let command = Command {
        tag,
        direction,
        sector,
        sectors,
        fua: false,
    };
    disk.submit(command, now);
    loop {
        let at = disk
            .next_event()
            .expect("a submitted command has an event pending");
        let mut completed = Vec::new();
        disk.advance(at, &mut completed);
        if completed.contains(&tag) {
            return at;
        }
    }
}
