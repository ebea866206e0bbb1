//! A hard disk drive in the style of DiskSim's detailed disk model.
//!
//! Mechanics: a seek curve through datasheet anchors (see [`seek`]), write settle and head
//! switch, zoned recording and rotation as a function of virtual time (see [`geometry`]).
//! Controller: a per-command overhead and an interface (bus) rate. Buffer: read segments
//! with read-ahead, and an optional write-back cache (`wce`) whose dirty data is destaged in
//! the background in shortest-positioning-time order (see [`cache`]). Queue: up to `ncq`
//! commands, served shortest-positioning-time-first (see [`queue`]). Sources: DiskSim
//! 4.0's `mech_g1`/`layout_g1` modules and diskspecs, Ruemmler & Wilkes 1994, and 7200 rpm
//! datasheets (WD Ultrastar DC HC310, HGST Ultrastar 7K4000, Seagate Constellation ES.3,
//! Hitachi Deskstar 7K500 and Travelstar 7K320); every preset value is listed with its source
//! by [`crate::preset::presets`]. The model draws no random numbers: the same commands at the
//! same times always complete at the same times.

pub mod cache;
pub mod geometry;
pub mod queue;
pub mod seek;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use ioslice_core::{Direction, Nanos};

use self::cache::{Lookup, SegmentCache, WriteCache};
use self::geometry::{Geometry, GeometryConfig, Location, SECTOR_BYTES};
use self::queue::{DriveQueue, Queued};
use self::seek::SeekCurve;
use super::zones::{WritePointers, ZoneGeometry};
use super::{Command, DeviceInfo, DeviceModel};

/// Dirty extents on each side of the head that the destage SPTF considers.
const DESTAGE_WINDOW: usize = 16;
/// Largest single destage, in sectors (1 MiB): long dirty runs go out in pieces.
const MAX_DESTAGE_SECTORS: u64 = 2048;

/// Everything an [`Hdd`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct HddConfig {
    /// The name reported in [`DeviceInfo`].
    pub name: String,
    /// Capacity, rotation, heads and zones.
    pub geometry: GeometryConfig,
    /// Seek time over one cylinder, ms.
    pub seek_track_ms: f64,
    /// Average seek time (one third of the stroke), ms.
    pub seek_avg_ms: f64,
    /// Full-stroke seek time, ms.
    pub seek_full_ms: f64,
    /// Extra settle time after a seek or head switch before writing.
    pub write_settle: Nanos,
    /// Controller overhead of a read served from the buffer (a hit).
    pub read_overhead: Nanos,
    /// Controller overhead of a read that goes to the media (a miss).
    pub read_miss_overhead: Nanos,
    /// Controller overhead of a write command.
    pub write_overhead: Nanos,
    /// Interface transfer rate, MB/s.
    pub bus_mbps: f64,
    /// Number of read segments.
    pub segments: usize,
    /// Size of each read segment, sectors.
    pub segment_sectors: u64,
    /// How far read-ahead runs past the host's last read, sectors.
    pub readahead_sectors: u64,
    /// Read-ahead the drive always finishes after a read miss before turning to another
    /// command (DiskSim's minimum read-ahead), sectors.
    pub readahead_min_sectors: u64,
    /// Write-back cache enabled (writes complete once in the buffer).
    pub write_cache: bool,
    /// Room for dirty data in the write-back cache, sectors.
    pub write_cache_sectors: u64,
    /// Commands the drive queues (1 = no command queueing).
    pub queue_depth: usize,
    /// A queued command older than this is served next whatever SPTF says.
    pub age_limit: Nanos,
}

/// A simulated hard disk.
#[derive(Debug, Clone)]
pub struct Hdd {
    name: String,
    geometry: Geometry,
    seek: SeekCurve,
    head_switch: Nanos,
    write_settle: Nanos,
    read_overhead: Nanos,
    read_miss_overhead: Nanos,
    write_overhead: Nanos,
    bus_ps_per_sector: u64,
    readahead_min_sectors: u64,
    write_cache_enabled: bool,
    queue_depth: usize,
    segments: SegmentCache,
    writes: WriteCache,
    queue: DriveQueue,
    /// Cached writes waiting for room in the write-back cache.
    blocked: VecDeque<Queued>,
    completions: BinaryHeap<Reverse<(Nanos, u64, u64)>>,
    in_flight: usize,
    next_seq: u64,
    now: Nanos,
    controller_free: Nanos,
    busy_until: Nanos,
    operation_active: bool,
    destaging: Option<u64>,
    head: Location,
    head_lba: u64,
    media_operations: u64,
    /// A host-managed drive's write pointers.
    zones: Option<WritePointers>,
    /// Commands rejected and not yet reported, with their error numbers.
    failed: BTreeMap<u64, i32>,
}

impl Hdd {
    /// Build a disk; fails with a one-line reason if the seek anchors are inconsistent.
    pub fn new(config: &HddConfig) -> Result<Self, String> {
        let geometry = Geometry::new(&config.geometry);
        let seek = SeekCurve::new(
            config.seek_track_ms,
            config.seek_avg_ms,
            config.seek_full_ms,
            geometry.cylinders(),
        )?;
        let head = geometry.locate(0);
        Ok(Self {
            name: config.name.clone(),
            seek,
            head_switch: config.geometry.head_switch,
            write_settle: config.write_settle,
            read_overhead: config.read_overhead,
            read_miss_overhead: config.read_miss_overhead,
            write_overhead: config.write_overhead,
            bus_ps_per_sector: (SECTOR_BYTES as f64 * 1e6 / config.bus_mbps.max(1e-3)).round()
                as u64,
            readahead_min_sectors: config.readahead_min_sectors.min(config.readahead_sectors),
            write_cache_enabled: config.write_cache,
            queue_depth: config.queue_depth.max(1),
            segments: SegmentCache::new(
                config.segments.max(1),
                config.segment_sectors,
                config.readahead_sectors,
            ),
            writes: WriteCache::new(if config.write_cache {
                config.write_cache_sectors
            } else {
                0
            }),
            queue: DriveQueue::new(config.age_limit),
            blocked: VecDeque::new(),
            completions: BinaryHeap::new(),
            in_flight: 0,
            next_seq: 0,
            now: 0,
            controller_free: 0,
            busy_until: 0,
            operation_active: false,
            destaging: None,
            head,
            head_lba: 0,
            media_operations: 0,
            zones: None,
            failed: BTreeMap::new(),
            geometry,
        })
    }

    /// Limit the write-back cache to `segments` write segments (at least 1): a write that
    /// extends no dirty extent waits for a free one (DiskSim's "Maximum number of write
    /// segments"). Without it, any number of extents are cached.
    pub fn with_write_segments(mut self, segments: usize) -> Self {
        self.writes = self.writes.with_max_segments(segments);
        self
    }

    /// Make the disk a host-managed zoned drive with this zone layout, every sequential
    /// zone empty.
    pub fn with_zones(mut self, geometry: ZoneGeometry) -> Self {
        self.zones = Some(WritePointers::new(geometry, self.geometry.capacity()));
        self
    }

    /// The drive checks a write against its zone's write pointer as it executes it; false
    /// if it rejects it, which then completes after the command overhead.
    fn zone_accepts(&mut self, command: &Command, now: Nanos) -> bool {
        let Some(zones) = &mut self.zones else {
            return true;
        };
        match zones.write(command.sector, u64::from(command.sectors)) {
            Ok(()) => true,
            Err(error) => {
                self.failed.insert(command.tag, error.errno());
                self.complete_from_buffer(command.tag, 0, self.write_overhead, now);
                false
            }
        }
    }

    /// The layout (zones, rotation).
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The seek curve.
    pub fn seek_curve(&self) -> &SeekCurve {
        &self.seek
    }

    /// Media accesses so far (read misses, media writes, destages; not cache hits).
    pub fn media_operations(&self) -> u64 {
        self.media_operations
    }

    /// Dirty sectors in the write-back cache.
    pub fn dirty_sectors(&self) -> u64 {
        self.writes.dirty_sectors()
    }

    fn bus_time(&self, sectors: u64) -> Nanos {
        sectors * self.bus_ps_per_sector / 1000
    }

    /// Seek, settle and rotational latency from `from` at time `at` to the start of `lba`.
    fn positioning(&self, from: &Location, at: Nanos, lba: u64, write: bool) -> Nanos {
        let to = self.geometry.locate(lba);
        let mut seek = if to.cylinder != from.cylinder {
            self.seek.time(to.cylinder.abs_diff(from.cylinder))
        } else if to.head != from.head {
            self.head_switch
        } else {
            0
        };
        if write && seek > 0 {
            seek += self.write_settle;
        }
        seek + self
            .geometry
            .rotational_wait(&to, at + seek, self.geometry.sector_time(lba))
    }

    /// Where the head is at `now`: on the read-ahead's track if it runs.
    fn head_at(&self, now: Nanos) -> Location {
        match self.segments.stream_head(now) {
            Some(lba) => self.geometry.locate(lba),
            None => self.head,
        }
    }

    /// Stop read-ahead, leaving the head where it got to.
    fn park_stream(&mut self, now: Nanos) {
        if let Some(lba) = self.segments.stream_head(now) {
            self.head = self.geometry.locate(lba);
            self.head_lba = lba;
        }
        self.segments.stop_stream(now);
    }

    fn schedule(&mut self, at: Nanos, tag: u64) {
        self.next_seq += 1;
        self.completions.push(Reverse((at, self.next_seq, tag)));
    }

    /// Serve a command from the buffer: controller overhead plus bus transfer.
    fn complete_from_buffer(&mut self, tag: u64, sectors: u64, overhead: Nanos, now: Nanos) {
        let done = now.max(self.controller_free) + overhead + self.bus_time(sectors);
        self.controller_free = done;
        self.schedule(done, tag);
    }

    fn extent(command: &Command) -> (u64, u64) {
        (command.sector, command.sector + u64::from(command.sectors))
    }

    /// Try to answer a read from the buffer at `now`.
    fn read_from_buffer(&mut self, command: &Command, now: Nanos) -> bool {
        let (start, end) = Self::extent(command);
        if let Lookup::Hit(segment) = self.segments.lookup(start, end, now) {
            self.segments.consume(segment, end, now, &self.geometry);
        } else if !self.writes.covers(start, end) {
            return false;
        }
        self.complete_from_buffer(command.tag, end - start, self.read_overhead, now);
        true
    }

    fn cacheable(&self, command: &Command) -> bool {
        self.write_cache_enabled
            && !command.fua
            && u64::from(command.sectors) <= self.writes.capacity()
    }

    /// Accept blocked writes into the write-back cache while there is room.
    fn accept_blocked(&mut self, now: Nanos) {
        while let Some(front) = self.blocked.front() {
            let sectors = u64::from(front.command.sectors);
            let (start, end) = Self::extent(&front.command);
            if !self.writes.has_room(start, end) {
                break;
            }
            let command = front.command;
            self.blocked.pop_front();
            self.writes.insert(start, end);
            self.complete_from_buffer(command.tag, sectors, self.write_overhead, now);
        }
    }

    /// The mechanism's next event: the end of its current operation, or a decision now.
    fn mechanism_event(&self) -> Option<Nanos> {
        if self.operation_active {
            Some(self.busy_until)
        } else if !self.queue.is_empty() || !self.writes.is_empty() {
            Some(self.busy_until.max(self.now))
        } else {
            None
        }
    }

    /// Finish the mechanism's operation (if any) at `now` and start the next.
    fn run_mechanism(&mut self, now: Nanos) {
        if self.operation_active {
            self.operation_active = false;
            if let Some(sectors) = self.destaging.take() {
                self.writes.destaged(sectors);
                self.accept_blocked(now);
            }
        }
        loop {
            let destage_first = self.queue.is_empty() || !self.blocked.is_empty();
            if destage_first && !self.writes.is_empty() {
                self.start_destage(now);
                return;
            }
            let Some(queued) = self.pop_sptf(now) else {
                return;
            };
            if self.start_host(&queued.command, now) {
                return;
            }
        }
    }

    fn pop_sptf(&mut self, now: Nanos) -> Option<Queued> {
        let mut queue = std::mem::take(&mut self.queue);
        let from = self.head_at(now);
        let chosen = queue.pop_sptf(now, |command| self.estimate(&from, command, now));
        self.queue = queue;
        chosen
    }

    /// SPTF's estimate of the time before `command` starts transferring.
    fn estimate(&self, from: &Location, command: &Command, now: Nanos) -> Nanos {
        let (start, end) = Self::extent(command);
        match command.direction {
            Direction::Read if self.writes.covers(start, end) => 0,
            Direction::Read => match self.segments.lookup(start, end, now) {
                Lookup::Hit(_) => 0,
                // Read-ahead may still have to reach the start.
                Lookup::Stream(_) => self.segments.stream_wait(start, now),
                Lookup::Miss => self.positioning(from, now + self.read_miss_overhead, start, false),
            },
            Direction::Write => self.positioning(from, now + self.write_overhead, start, true),
            Direction::Discard => 0,
        }
    }

    /// Start a queued host command at `now`; false if it finished without the mechanism.
    fn start_host(&mut self, command: &Command, now: Nanos) -> bool {
        let (start, end) = Self::extent(command);
        if command.direction == Direction::Write {
            if !self.zone_accepts(command, now) {
                return false;
            }
            self.media_access(command, now);
            return true;
        }
        // The buffer first: data dirty in the write cache is newer than what read-ahead
        // would bring from the media.
        if self.read_from_buffer(command, now) {
            return false;
        }
        if let Lookup::Stream(segment) = self.segments.lookup(start, end, now) {
            let media_done = self
                .segments
                .stream_until(segment, end, now, &self.geometry);
            // The controller decodes the command and sets up its transfer as it does for a
            // hit, one command at a time; the data then goes out as read-ahead brings it.
            let handled = now.max(self.controller_free) + self.read_overhead;
            self.controller_free = handled + self.bus_time(end - start);
            let done = self.controller_free.max(media_done + self.bus_time(1));
            self.busy_until = media_done;
            self.operation_active = true;
            self.schedule(done, command.tag);
        } else {
            self.media_access(command, now);
        }
        true
    }

    /// A read miss or a write that goes to the media: overhead, (data in, for a write),
    /// positioning, media transfer.
    fn media_access(&mut self, command: &Command, now: Nanos) {
        self.park_stream(now);
        self.media_operations += 1;
        let (start, end) = Self::extent(command);
        let write = command.direction == Direction::Write;
        let ready = if write {
            now + self.write_overhead + self.bus_time(end - start)
        } else {
            now + self.read_miss_overhead
        };
        let positioning = self.positioning(&self.head, ready, start, write);
        let media_done = ready + positioning + self.geometry.transfer_time(start, end - start);
        self.move_head(end, media_done);
        if write {
            self.segments.invalidate(start, end, now);
            self.schedule(media_done, command.tag);
        } else {
            self.segments.fill(start, end, media_done, &self.geometry);
            let minimum = self
                .readahead_min_sectors
                .min(self.geometry.capacity().saturating_sub(end));
            self.busy_until = media_done + self.geometry.transfer_time(end, minimum);
            let done = (ready + self.bus_time(end - start)).max(media_done + self.bus_time(1));
            self.schedule(done, command.tag);
        }
    }

    fn move_head(&mut self, end: u64, busy_until: Nanos) {
        self.head = self.geometry.locate(end.saturating_sub(1));
        self.head_lba = end;
        self.busy_until = busy_until;
        self.operation_active = true;
    }

    /// Destage the dirty extent SPTF picks among those nearest the head.
    fn start_destage(&mut self, now: Nanos) {
        self.park_stream(now);
        self.media_operations += 1;
        let from = self.head;
        let best = self
            .writes
            .candidates(self.head_lba, DESTAGE_WINDOW)
            .min_by_key(|&start| (self.positioning(&from, now, start, true), start))
            .expect("destage starts only with dirty data");
        let end = self.writes.take(best, MAX_DESTAGE_SECTORS);
        let positioning = self.positioning(&from, now, best, true);
        let media_done = now + positioning + self.geometry.transfer_time(best, end - best);
        self.move_head(end, media_done);
        self.destaging = Some(end - best);
    }
}

impl DeviceModel for Hdd {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.name.clone(),
            capacity_sectors: self.geometry.capacity(),
            queue_depth: self.queue_depth,
            rotational: true,
            // A disk without TRIM: the kernel refuses discards to it (`EOPNOTSUPP`).
            discard: false,
            zones: self.zones.as_ref().map(WritePointers::geometry),
        }
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn submit(&mut self, command: Command, now: Nanos) {
        self.now = self.now.max(now);
        self.in_flight += 1;
        self.next_seq += 1;
        let queued = Queued {
            command,
            arrival: now,
            seq: self.next_seq,
        };
        match command.direction {
            Direction::Read if self.read_from_buffer(&command, now) => {}
            Direction::Write if self.cacheable(&command) => {
                if !self.zone_accepts(&command, now) {
                    return;
                }
                let (start, end) = Self::extent(&command);
                if self.blocked.is_empty() && self.writes.has_room(start, end) {
                    self.writes.insert(start, end);
                    self.complete_from_buffer(command.tag, end - start, self.write_overhead, now);
                } else {
                    self.blocked.push_back(queued);
                }
            }
            // The disk has no TRIM ([`DeviceInfo::discard`] is false, so the kernel sends
            // none); were one sent, the firmware would reject it once decoded, without the
            // mechanism.
            Direction::Discard => {
                self.complete_from_buffer(command.tag, 0, self.write_overhead, now)
            }
            _ => self.queue.push(queued),
        }
    }

    fn next_event(&self) -> Option<Nanos> {
        let completion = self.completions.peek().map(|Reverse((at, _, _))| *at);
        match (completion, self.mechanism_event()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<u64>) {
        loop {
            let completion = self.completions.peek().map(|Reverse((at, _, _))| *at);
            let mechanism = self.mechanism_event();
            // Completions due at the same time as the mechanism's event go first.
            let first = match (completion, mechanism) {
                (Some(c), Some(m)) if m < c => Some(m),
                (Some(c), _) => Some(c),
                (None, m) => m,
            };
            match (completion, mechanism) {
                (Some(c), _) if Some(c) == first && c <= now => {
                    let Reverse((at, _, tag)) = self.completions.pop().expect("peeked");
                    self.now = self.now.max(at);
                    self.in_flight -= 1;
                    completed.push(tag);
                }
                (_, Some(m)) if m <= now => {
                    self.now = self.now.max(m);
                    self.run_mechanism(m);
                }
                _ => break,
            }
        }
        self.now = self.now.max(now);
    }

    fn take_error(&mut self, tag: u64) -> Option<i32> {
        self.failed.remove(&tag)
    }

    fn reset_zones(&mut self, start: u64, end: u64) {
        if let Some(zones) = &mut self.zones {
            zones.reset(start, end);
        }
    }

    fn write_pointer(&self, zone: u64) -> Option<u64> {
        self.zones.as_ref()?.write_pointer(zone)
    }
}
