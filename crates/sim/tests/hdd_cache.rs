//! The HDD model's read segments and read-ahead, with exact times on a disk whose numbers
//! are round: 6000 rpm (a 10 ms revolution), 1000 sectors per track and no track skew, so a
//! sector passes every 10 µs; a 1 µs-per-sector bus; 100 µs hit and 500 µs miss overheads;
//! 2048-sector segments with read-ahead up to 1024 sectors past the host's last read.
//!
//! What is checked: a read that starts ahead of read-ahead's position but within its limit,
//! while read-ahead runs, waits for the media to get there (no seek, no rotation); one that
//! starts beyond the limit is a miss; once the head has served a command elsewhere, only
//! what read-ahead had read by then is in the buffer.

mod common;

use common::round_disk::{serve, RoundDisk, BUS, REVOLUTION, SECTOR};
use ioslice_core::{Direction, Nanos};
use ioslice_sim::device::hdd::Hdd;
use ioslice_sim::device::{Command, DeviceModel};

const HIT_OVERHEAD: Nanos = 100_000;
const MISS_OVERHEAD: Nanos = 500_000;
const READAHEAD: u64 = 1024;

fn disk() -> Hdd {
    RoundDisk {
        hit_overhead: HIT_OVERHEAD,
        miss_overhead: MISS_OVERHEAD,
        readahead_sectors: READAHEAD,
        write_cache_sectors: 0,
    }
    .build()
}

/// Submit a read of `sectors` at `sector` at `now` and run the disk until it completes;
/// returns the completion time.
fn read(disk: &mut Hdd, tag: u64, sector: u64, sectors: u32, now: Nanos) -> Nanos {
    serve(disk, Direction::Read, (tag, sector, sectors), now)
}

/// The first read, `[0, 32)` at time 0 from the head at LBA 0: the miss overhead, then
/// sector 0 comes round at 10 ms, 32 sectors pass, and the last sector crosses the bus.
/// Read-ahead starts at sector 32 when the media read ends, at `FIRST_MEDIA_DONE`.
const FIRST_MEDIA_DONE: Nanos = REVOLUTION + 32 * SECTOR;

fn after_first_read() -> (Hdd, Nanos) {
    let mut disk = disk();
    let done = read(&mut disk, 1, 0, 32, 0);
    assert_eq!(done, FIRST_MEDIA_DONE + BUS);
    assert_eq!(disk.media_operations(), 1);
    (disk, done)
}

#[test]
fn a_read_just_ahead_of_read_ahead_waits_for_the_media_not_a_seek() {
    let (mut disk, now) = after_first_read();
    // 1 µs after the media read, read-ahead is still at sector 32. The read [40, 72) starts
    // 8 sectors ahead: the drive waits for sectors 32..72 to pass (40 sectors from the
    // anchor), then sends the last sector. As a miss it would have cost the 500 µs overhead
    // and then nearly a whole revolution, since sector 40 passes during the overhead.
    let done = read(&mut disk, 2, 40, 32, now);
    assert_eq!(done, FIRST_MEDIA_DONE + 40 * SECTOR + BUS);
    assert_eq!(done - now, 400_000);
    assert_eq!(
        disk.media_operations(),
        1,
        "served by read-ahead, no media command"
    );

    // Read-ahead went on past the read: [72, 104) is in the buffer 1 ms later.
    let later = done + 1_000_000;
    let hit = read(&mut disk, 3, 72, 32, later);
    assert_eq!(hit, later + HIT_OVERHEAD + 32 * BUS);
    assert_eq!(disk.media_operations(), 1);
}

#[test]
fn a_read_right_at_the_read_ahead_limit_streams_to_it() {
    let (mut disk, now) = after_first_read();
    // The limit is 32 + 1024 = 1056: a read starting there still comes from read-ahead.
    let done = read(&mut disk, 2, 32 + READAHEAD, 8, now);
    assert_eq!(done, FIRST_MEDIA_DONE + (READAHEAD + 8) * SECTOR + BUS);
    assert_eq!(disk.media_operations(), 1);
}

#[test]
fn a_read_beyond_the_read_ahead_limit_is_a_miss() {
    let (mut disk, now) = after_first_read();
    // [1300, 1332) starts past the limit 1056: a media read. The head is on cylinder 0
    // (track 1 is head 1 of the same cylinder, and head switches cost 0 here); after the
    // overhead (at 10.821 ms, 0.821 ms into the revolution) sector 1300 (300 sectors into
    // its track, at 3 ms) comes round 2.179 ms later.
    let done = read(&mut disk, 2, 1300, 32, now);
    let ready = now + MISS_OVERHEAD;
    assert_eq!(ready % REVOLUTION, 821_000);
    let wait = 3_000_000 - 821_000;
    assert_eq!(done, ready + wait + 32 * SECTOR + BUS);
    assert_eq!(done, 13_321_000);
    assert_eq!(disk.media_operations(), 2);
}

#[test]
fn after_the_head_moves_only_what_read_ahead_had_read_is_buffered() {
    let (mut disk, first_done) = after_first_read();
    // 1 ms after the first read completed, read-ahead is 100 sectors past 32 (1.001 ms at
    // 10 µs per sector). A read far away stops it there: [32, 132) stays valid.
    let far_submit = first_done + 1_000_000;
    let far_done = read(&mut disk, 2, 2_000_000, 32, far_submit);
    assert_eq!(disk.media_operations(), 2);
    assert!(far_done > far_submit + MISS_OVERHEAD);

    // Within what was read: a hit, however long ago.
    let hit_at = far_done + 50_000_000;
    let hit = read(&mut disk, 3, 100, 32, hit_at);
    assert_eq!(hit, hit_at + HIT_OVERHEAD + 32 * BUS);
    assert_eq!(disk.media_operations(), 2);

    // Just past it: read-ahead there no longer runs, so this is a media read with a seek back
    // from cylinder 500 (LBA 2_000_032 is on track 2000) to cylinder 0, and a wait for
    // sector 132 (at 1.32 ms in the revolution) to come round.
    let miss_at = hit + 1_000;
    let miss = read(&mut disk, 4, 132, 32, miss_at);
    assert_eq!(disk.media_operations(), 3);
    let seek = disk.seek_curve().time(500);
    let ready = miss_at + MISS_OVERHEAD + seek;
    let wait = (1_320_000 + REVOLUTION - ready % REVOLUTION) % REVOLUTION;
    let wait = if wait + SECTOR / 2 >= REVOLUTION {
        0
    } else {
        wait
    };
    assert_eq!(miss, ready + wait + 32 * SECTOR + BUS);
}

#[test]
fn a_read_already_read_ahead_is_a_hit_while_read_ahead_runs() {
    let (mut disk, now) = after_first_read();
    // 2 ms later read-ahead has read [32, 232): [100, 132) is served from the buffer.
    let at = now + 2_000_000;
    let done = read(&mut disk, 2, 100, 32, at);
    assert_eq!(done, at + HIT_OVERHEAD + 32 * BUS);
    assert_eq!(disk.media_operations(), 1);
}

#[test]
fn a_stream_read_takes_its_turn_at_the_controller_like_a_hit() {
    let (mut disk, first_done) = after_first_read();
    // 2 ms later read-ahead has read [32, 232). Three hits come at once, then a read at the
    // head's position: the controller handles the hits one after another (overhead plus bus
    // each), then the read's command, and sends its data once read-ahead has brought it.
    let now = first_done + 2_000_000;
    disk.advance(now, &mut Vec::new());
    for (tag, sector) in [(2, 100), (3, 132), (4, 164), (5, 232)] {
        disk.submit(
            Command {
                tag,
                direction: Direction::Read,
                sector,
                sectors: 32,
                fua: false,
            },
            now,
        );
    }
    let mut finished = Vec::new();
    while let Some(at) = disk.next_event() {
        let mut completed = Vec::new();
        disk.advance(at, &mut completed);
        finished.extend(completed.into_iter().map(|tag| (tag, at)));
    }
    let hit = HIT_OVERHEAD + 32 * BUS;
    // Read-ahead reaches sector 264 at 12.64 ms; the controller is done with the read's
    // command and transfer only at now + 3 hits + 132 µs = 12.849 ms.
    let media = FIRST_MEDIA_DONE + 232 * SECTOR + BUS;
    assert_eq!(media, 12_641_000);
    assert_eq!(
        finished,
        vec![
            (2, now + hit),
            (3, now + 2 * hit),
            (4, now + 3 * hit),
            (5, now + 4 * hit),
        ]
    );
    assert!(now + 4 * hit > media);
    assert_eq!(disk.media_operations(), 1);
}
