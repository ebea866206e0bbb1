//! The HDD model's write segments (DiskSim's "Maximum number of write segments"), with exact
//! times on a disk whose numbers are round: 6000 rpm (a 10 ms revolution), 1000 sectors per
//! track and no track skew, so a sector passes every 10 µs; a 1 µs-per-sector bus; a 100 µs
//! write overhead; write-back caching on.
//!
//! What is checked: with one write segment, a write that extends no dirty extent waits until
//! the destage holding the segment reaches the media, while a write that continues the
//! extent being destaged is taken at once; without the limit both are taken at once.

mod common;

use common::round_disk::{serve, RoundDisk, BUS, REVOLUTION, SECTOR};
use ioslice_core::{Direction, Nanos};
use ioslice_sim::device::hdd::Hdd;
use ioslice_sim::device::DeviceModel;

const WRITE_OVERHEAD: Nanos = 100_000;

fn disk() -> Hdd {
    RoundDisk {
        hit_overhead: WRITE_OVERHEAD,
        miss_overhead: WRITE_OVERHEAD,
        readahead_sectors: 1024,
        write_cache_sectors: 4096,
    }
    .build()
}

/// Submit a write of `sectors` at `sector` at `now` and run the disk until it completes;
/// returns the completion time.
fn write(disk: &mut Hdd, tag: u64, sector: u64, sectors: u32, now: Nanos) -> Nanos {
    serve(disk, Direction::Write, (tag, sector, sectors), now)
}

/// The write `[0, 400)` at time 0: overhead and bus, done at 500 µs. The idle mechanism
/// destages it at once from sector 0 (under the head at time 0): 400 sectors, 0 to 4 ms.
fn after_a_long_write(disk: &mut Hdd) {
    assert_eq!(write(disk, 1, 0, 400, 0), WRITE_OVERHEAD + 400 * BUS);
}

#[test]
fn without_a_limit_every_write_is_taken_at_once() {
    let mut disk = disk();
    after_a_long_write(&mut disk);
    // Another stream's write, then the first stream's next: overhead and bus each.
    assert_eq!(write(&mut disk, 2, 500, 8, 600_000), 708_000);
    assert_eq!(write(&mut disk, 3, 400, 8, 800_000), 908_000);
}

#[test]
fn with_one_write_segment_another_stream_waits_for_the_destage() {
    let mut disk = disk().with_write_segments(1);
    after_a_long_write(&mut disk);
    // [500, 508) extends nothing: it waits until [0, 400) reaches the media at 4 ms.
    let destaged = 400 * SECTOR;
    assert_eq!(
        write(&mut disk, 2, 500, 8, 600_000),
        destaged + WRITE_OVERHEAD + 8 * BUS
    );
    // Its own destage starts at 4 ms and holds the segment until sector 500 has come
    // round (5 ms) and 8 sectors have passed; the first stream's next write waits for it.
    let second_destaged = 500 * SECTOR + 8 * SECTOR;
    assert_eq!(
        write(&mut disk, 3, 400, 8, 4_200_000),
        second_destaged + WRITE_OVERHEAD + 8 * BUS
    );
    // [400, 408) is destaged once sector 400 comes round again, a revolution after 4 ms.
    let at = disk.next_event().expect("the destage of [400, 408) runs");
    assert_eq!(at, REVOLUTION + 400 * SECTOR + 8 * SECTOR);
}

#[test]
fn with_one_write_segment_a_stream_appends_while_its_segment_drains() {
    let mut disk = disk().with_write_segments(1);
    after_a_long_write(&mut disk);
    // [400, 408) continues the extent being destaged: taken at once.
    assert_eq!(write(&mut disk, 2, 400, 8, 600_000), 708_000);
    assert_eq!(write(&mut disk, 3, 408, 8, 800_000), 908_000);
}
