//! The array controller's read cache: stream detection, read-ahead, hits over the host
//! link, replacement, writes, and every command completed exactly once. A null device
//! behind it (fixed latency) makes every time exact.

use ioslice_core::{Direction, Nanos};
use ioslice_sim::device::controller_cache::{ControllerCache, ControllerCacheConfig};
use ioslice_sim::device::null::NullDevice;
use ioslice_sim::device::{Command, DeviceModel};
use proptest::prelude::*;

/// Behind the cache: every command takes 1 ms.
const MISS: Nanos = 1_000_000;
/// Lines of 128 sectors (64 KiB), like the array's chunk.
const LINE: u64 = 128;

fn cache(capacity_lines: usize, readahead_lines: u64) -> ControllerCache {
    let inner = NullDevice::new("behind".into(), MISS, 1024, 1 << 30);
    let config = ControllerCacheConfig {
        capacity_lines,
        line_sectors: LINE,
        first_readahead_sectors: LINE,
        readahead_sectors: readahead_lines * LINE,
        link_mbps: 400.0,
        streams: 16,
    };
    ControllerCache::new(config, Box::new(inner)).expect("a valid configuration")
}

fn read(tag: u64, sector: u64, sectors: u32) -> Command {
    Command {
        tag,
        direction: Direction::Read,
        sector,
        sectors,
        fua: false,
    }
}

/// Submit `command` at `now` and run the device until it completes; the completion time.
fn serve(device: &mut ControllerCache, command: Command, now: Nanos) -> Nanos {
    device.submit(command, now);
    let mut done = Vec::new();
    while let Some(at) = device.next_event() {
        device.advance(at, &mut done);
        if done.contains(&command.tag) {
            return at;
        }
    }
    panic!("command {} never completed", command.tag);
}

/// 64 KiB over a 400 MB/s link: 65536 / 400 µs, rounded.
const LINE_TRANSFER: Nanos = 163_840;

#[test]
fn a_stream_is_read_ahead_after_two_consecutive_reads_and_then_hits() {
    let mut device = cache(1024, 11);
    // First read of the stream and the second, consecutive one: both go behind.
    assert_eq!(serve(&mut device, read(1, 0, 128), 0), MISS);
    assert_eq!(serve(&mut device, read(2, 128, 128), MISS), 2 * MISS);
    // The second started the first read-ahead: one line, which is in the cache by now.
    assert_eq!(device.fetches(), 1);
    let start = 3 * MISS;
    assert_eq!(
        serve(&mut device, read(3, 256, 128), start),
        start + LINE_TRANSFER
    );
    assert_eq!(device.hits(), 1);
}

#[test]
fn a_read_waits_for_the_read_ahead_already_fetching_its_data() {
    let mut device = cache(1024, 11);
    serve(&mut device, read(1, 0, 128), 0);
    device.submit(read(2, 128, 128), MISS);
    // The read-ahead of line 2 left with read 2, at MISS; line 2 comes back at 2 * MISS.
    let start = MISS + 10_000;
    assert_eq!(
        serve(&mut device, read(3, 256, 128), start),
        2 * MISS + LINE_TRANSFER
    );
}

#[test]
fn random_reads_start_no_read_ahead() {
    let mut device = cache(1024, 11);
    let mut now = 0;
    for (tag, line) in [7u64, 3, 11, 1, 9, 5].into_iter().enumerate() {
        now = serve(&mut device, read(tag as u64, line * LINE, 8), now);
    }
    assert_eq!(device.fetches(), 0);
    assert_eq!(device.hits(), 0);
}

#[test]
fn readahead_off_never_fetches() {
    let mut device = cache(1024, 0);
    let mut now = 0;
    for tag in 0..20u64 {
        now = serve(&mut device, read(tag, tag * 128, 128), now);
    }
    assert_eq!(device.fetches(), 0);
    assert_eq!(now, 20 * MISS);
}

#[test]
fn least_recently_used_lines_are_replaced() {
    let mut device = cache(2, 0);
    serve(&mut device, read(1, 0, 8), 0);
    serve(&mut device, read(2, LINE, 8), MISS);
    // Line 0 again: a hit, and now the most recently used.
    assert_eq!(
        serve(&mut device, read(3, 0, 8), 2 * MISS),
        2 * MISS + 10_240
    );
    // A third line replaces line 1, the least recently used.
    serve(&mut device, read(4, 2 * LINE, 8), 3 * MISS);
    assert_eq!(
        serve(&mut device, read(5, 0, 8), 4 * MISS),
        4 * MISS + 10_240
    );
    assert_eq!(
        serve(&mut device, read(6, LINE, 8), 5 * MISS),
        6 * MISS,
        "line 1 was replaced"
    );
}

#[test]
fn a_write_drops_the_lines_it_overlaps() {
    let mut device = cache(16, 0);
    serve(&mut device, read(1, 0, 8), 0);
    let write = Command {
        direction: Direction::Write,
        ..read(2, 4, 8)
    };
    assert_eq!(serve(&mut device, write, MISS), 2 * MISS);
    assert_eq!(serve(&mut device, read(3, 0, 8), 2 * MISS), 3 * MISS);
}

#[test]
fn hits_share_the_host_link_in_turn() {
    let mut device = cache(16, 0);
    serve(&mut device, read(1, 0, 128), 0);
    device.submit(read(2, 0, 128), MISS);
    device.submit(read(3, 0, 128), MISS);
    let mut done = Vec::new();
    let mut times = Vec::new();
    while let Some(at) = device.next_event() {
        device.advance(at, &mut done);
        times.push(at);
    }
    assert_eq!(done, vec![2, 3]);
    assert_eq!(times, vec![MISS + LINE_TRANSFER, MISS + 2 * LINE_TRANSFER]);
    assert_eq!(device.in_flight(), 0);
}

proptest! {
    /// Any mix of reads and writes, sequential runs and jumps, at any times: every command
    /// completes exactly once, never before it was submitted, and nothing stays in flight.
    #[test]
    fn every_command_completes_exactly_once(
        ops in prop::collection::vec((any::<bool>(), 0u64..64, 1u32..300, 0u64..3_000_000), 1..120),
        capacity in 1usize..40,
        readahead in 0u64..24,
    ) {
        let mut device = cache(capacity, readahead);
        let mut now = 0;
        let mut submitted = std::collections::BTreeMap::new();
        let mut done = Vec::new();
        let mut sector = 0u64;
        for (tag, (write, jump, sectors, gap)) in ops.into_iter().enumerate() {
            now += gap;
            while let Some(at) = device.next_event().filter(|&at| at <= now) {
                device.advance(at, &mut done);
            }
            sector = if jump < 48 { sector } else { jump * 1000 };
            let command = Command {
                direction: if write { Direction::Write } else { Direction::Read },
                ..read(tag as u64, sector, sectors)
            };
            sector += u64::from(sectors);
            submitted.insert(tag as u64, now);
            device.submit(command, now);
        }
        while let Some(at) = device.next_event() {
            let before = done.len();
            device.advance(at, &mut done);
            for tag in &done[before..] {
                prop_assert!(submitted[tag] <= at);
            }
        }
        let mut sorted = done.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, submitted.keys().copied().collect::<Vec<_>>());
        prop_assert_eq!(device.in_flight(), 0);
    }
}
