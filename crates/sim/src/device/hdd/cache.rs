//! The drive's buffer: read segments with read-ahead, and the write-back cache.
//!
//! Read side (DiskSim's "buffer segments" and read-ahead): after a read miss the drive keeps
//! reading past the request into the segment while the mechanism has nothing else to do. A
//! segment works as a ring: read-ahead runs until it is `readahead` sectors past what the
//! host has consumed, and resumes (after waiting for the next sector to come round) when the
//! host consumes more. Read-ahead is computed lazily from its anchor time and the zone's
//! streaming rate, so it costs nothing per sector. A read wholly inside valid data is a hit.
//!
//! A read that starts anywhere read-ahead will reach on its own — from the segment's valid
//! data up to the read-ahead limit, including sectors not yet under the head — is a *stream*
//! read while read-ahead runs: the drive does not seek, it waits for the media to bring the
//! data into the segment (the time for the sectors between the head and the read's end to
//! pass, at the zone's streaming rate) and keeps reading ahead past it. Sources: Ruemmler &
//! Wilkes, "An introduction to disk drive modeling" (IEEE Computer, 1994) name read-ahead
//! into the buffer and the producer–consumer interlock between the mechanism filling a
//! segment and the bus emptying it as the behaviour that matters most to model; DiskSim
//! 4.0's read-segment check counts a read whose first block is the one being prefetched as
//! a partial hit on the segment being read ("almost read hits"). This model extends that to
//! any start up to the read-ahead limit, because the head passes those sectors in order
//! anyway. Read-ahead stops when the mechanism serves another media command (the head
//! moves): what it had read by then stays valid, and nothing beyond it.
//!
//! Write side ("immediate report"): with the write cache enabled a write completes once its
//! data is in the buffer; dirty data is kept as merged extents, and destaged later in an
//! order the drive chooses (SPTF over the dirty extents nearest the head).
//!
//! Write segments (DiskSim's "Maximum number of write segments"): each dirty extent holds a
//! buffer segment, and so does the extent being destaged until it reaches the media. A write
//! that overlaps or extends one of them joins its segment — a sequential stream appends to
//! the segment the media is draining — but any other write needs a segment of its own, and
//! with every write segment taken it waits until a destage frees one.

use std::collections::BTreeMap;

use ioslice_core::Nanos;

use super::geometry::Geometry;

/// One read segment: sectors `[start, end)` are valid (unless read-ahead is running on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    start: u64,
    end: u64,
    consumed: u64,
    last_use: u64,
}

/// Read-ahead running on one segment: sector `anchor_lba` starts under the head at
/// `anchor_time`, then `sectors` sectors pass every `per` nanoseconds, up to `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ReadAhead {
    segment: usize,
    anchor_time: Nanos,
    anchor_lba: u64,
    limit: u64,
    sectors: u64,
    per: Nanos,
}

impl ReadAhead {
    fn position(&self, now: Nanos) -> u64 {
        let elapsed = u128::from(now.saturating_sub(self.anchor_time));
        let done = elapsed * u128::from(self.sectors) / u128::from(self.per.max(1));
        self.anchor_lba
            .saturating_add(done.min(u128::from(u64::MAX)) as u64)
            .min(self.limit)
    }

    fn time_to_reach(&self, lba: u64) -> Nanos {
        let sectors = u128::from(lba.saturating_sub(self.anchor_lba));
        self.anchor_time
            + (sectors * u128::from(self.per)).div_ceil(u128::from(self.sectors)) as Nanos
    }
}

/// How a read relates to the read cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// All its data is valid in a segment.
    Hit(usize),
    /// It starts inside the segment read-ahead is filling, or ahead of the head but within
    /// the read-ahead limit, and ends beyond what has been read so far: read-ahead will
    /// bring it without a seek.
    Stream(usize),
    /// Not (wholly) cached.
    Miss,
}

/// The read segments and the read-ahead stream.
#[derive(Debug, Clone)]
pub struct SegmentCache {
    segments: Vec<Segment>,
    segment_sectors: u64,
    readahead_sectors: u64,
    stream: Option<ReadAhead>,
    uses: u64,
}

impl SegmentCache {
    /// `segments` segments of `segment_sectors` each; read-ahead up to `readahead_sectors`
    /// (at most a segment) past the host's last read.
    pub fn new(segments: usize, segment_sectors: u64, readahead_sectors: u64) -> Self {
        let empty = Segment {
            start: 0,
            end: 0,
            consumed: 0,
            last_use: 0,
        };
        Self {
            segments: vec![empty; segments],
            segment_sectors,
            readahead_sectors: readahead_sectors.min(segment_sectors),
            stream: None,
            uses: 0,
        }
    }

    /// First valid sector of segment `i` (a ring keeps only the last `segment_sectors`).
    fn valid_range(&self, i: usize, now: Nanos) -> (u64, u64) {
        let segment = &self.segments[i];
        let end = match self.stream {
            Some(stream) if stream.segment == i => stream.position(now),
            _ => segment.end,
        };
        (
            segment.start.max(end.saturating_sub(self.segment_sectors)),
            end,
        )
    }

    /// Classify the read `[start, end)` at `now`: a hit if its data is valid; a stream read
    /// if read-ahead is running and will reach its start on its own, i.e. the start lies
    /// between the segment's first valid sector and the read-ahead limit (which is at most a
    /// segment past what the host consumed) — whether or not the head has got there yet;
    /// otherwise a miss.
    pub fn lookup(&self, start: u64, end: u64, now: Nanos) -> Lookup {
        for i in 0..self.segments.len() {
            let (first, valid_end) = self.valid_range(i, now);
            if first <= start && end <= valid_end {
                return Lookup::Hit(i);
            }
        }
        if let Some(stream) = self.stream {
            let (first, _) = self.valid_range(stream.segment, now);
            if first <= start && start <= stream.limit {
                return Lookup::Stream(stream.segment);
            }
        }
        Lookup::Miss
    }

    /// Time from `now` until running read-ahead reaches `lba` (0 if it already has, or if
    /// no read-ahead runs). The wait a stream read starting at `lba` has before its data
    /// begins to arrive.
    pub fn stream_wait(&self, lba: u64, now: Nanos) -> Nanos {
        match self.stream {
            Some(stream) if stream.position(now) < lba => {
                stream.time_to_reach(lba).saturating_sub(now)
            }
            _ => 0,
        }
    }

    /// The host consumed up to `end` from segment `i` at `now`. Read-ahead may go further;
    /// if it had stopped at its limit it resumes when the next sector comes round.
    pub fn consume(&mut self, i: usize, end: u64, now: Nanos, geometry: &Geometry) {
        self.uses += 1;
        let segment = &mut self.segments[i];
        segment.consumed = segment.consumed.max(end);
        segment.last_use = self.uses;
        let new_limit = segment.consumed + self.readahead_sectors;
        let Some(stream) = self.stream.as_mut().filter(|stream| stream.segment == i) else {
            return;
        };
        if new_limit <= stream.limit {
            return;
        }
        let position = stream.position(now);
        if position == stream.limit {
            let next = geometry.locate(position);
            let wait = geometry.rotational_wait(&next, now, geometry.sector_time(position));
            stream.anchor_time = now + wait;
            stream.anchor_lba = position;
        }
        stream.limit = new_limit;
    }

    /// When read-ahead on segment `i` will have read up to `end` (extending it if needed).
    pub fn stream_until(&mut self, i: usize, end: u64, now: Nanos, geometry: &Geometry) -> Nanos {
        self.consume(i, end, now, geometry);
        match self.stream {
            Some(stream) if stream.segment == i => stream.time_to_reach(end).max(now),
            _ => now,
        }
    }

    /// Where the head is while read-ahead runs (the next sector it reads), if it runs.
    pub fn stream_head(&self, now: Nanos) -> Option<u64> {
        self.stream.map(|stream| stream.position(now))
    }

    /// The mechanism turns to other work at `now`: read-ahead stops where it is.
    pub fn stop_stream(&mut self, now: Nanos) {
        if let Some(stream) = self.stream.take() {
            self.segments[stream.segment].end = stream.position(now);
        }
    }

    /// A read miss `[start, end)` finished on the media at `done`: it fills the least recently
    /// used segment and read-ahead starts from its end.
    pub fn fill(&mut self, start: u64, end: u64, done: Nanos, geometry: &Geometry) {
        self.uses += 1;
        let i = self.victim();
        self.segments[i] = Segment {
            start,
            end,
            consumed: end,
            last_use: self.uses,
        };
        if self.readahead_sectors == 0 || end >= geometry.capacity() {
            return;
        }
        let (sectors, per) = geometry.streaming_rate(end);
        let limit = (end + self.readahead_sectors).min(geometry.capacity());
        self.stream = Some(ReadAhead {
            segment: i,
            anchor_time: done,
            anchor_lba: end,
            limit,
            sectors,
            per,
        });
    }

    fn victim(&self) -> usize {
        (0..self.segments.len())
            .min_by_key(|&i| self.segments[i].last_use)
            .unwrap_or(0)
    }

    /// Forget cached data overlapping `[start, end)` (it was overwritten on the media).
    pub fn invalidate(&mut self, start: u64, end: u64, now: Nanos) {
        for i in 0..self.segments.len() {
            let (first, valid_end) = self.valid_range(i, now);
            if first < end && start < valid_end {
                if self.stream.is_some_and(|stream| stream.segment == i) {
                    self.stream = None;
                }
                self.segments[i] = Segment {
                    start: 0,
                    end: 0,
                    consumed: 0,
                    last_use: 0,
                };
            }
        }
    }
}

/// Dirty data of the write-back cache, as merged extents `start → end`.
#[derive(Debug, Clone)]
pub struct WriteCache {
    dirty: BTreeMap<u64, u64>,
    dirty_sectors: u64,
    destaging: u64,
    /// The extent being destaged, `[start, end)`.
    in_flight: Option<(u64, u64)>,
    capacity: u64,
    max_segments: usize,
}

impl WriteCache {
    /// Room for `capacity` sectors of dirty data, in any number of extents.
    pub fn new(capacity: u64) -> Self {
        Self {
            dirty: BTreeMap::new(),
            dirty_sectors: 0,
            destaging: 0,
            in_flight: None,
            capacity,
            max_segments: usize::MAX,
        }
    }

    /// At most `segments` (at least 1) extents dirty or being destaged at once.
    pub fn with_max_segments(mut self, segments: usize) -> Self {
        self.max_segments = segments.max(1);
        self
    }

    /// Size in sectors.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Whether the write `[start, end)` fits beside the dirty data and the data being
    /// destaged: room for its sectors, and a write segment to hold it.
    pub fn has_room(&self, start: u64, end: u64) -> bool {
        self.dirty_sectors + self.destaging + (end - start) <= self.capacity
            && (self.joins_segment(start, end) || self.segments_in_use() < self.max_segments)
    }

    /// Write segments held: one per dirty extent, and one for the extent being destaged
    /// unless a dirty extent continues it (the same stream, appended while it drains).
    pub fn segments_in_use(&self) -> usize {
        let draining = self
            .in_flight
            .is_some_and(|(_, end)| !self.dirty.contains_key(&end));
        self.dirty.len() + usize::from(draining)
    }

    /// Whether `[start, end)` overlaps or extends a dirty extent or the one being destaged.
    fn joins_segment(&self, start: u64, end: u64) -> bool {
        let touches = |(s, e): (u64, u64)| s <= end && start <= e;
        self.in_flight.is_some_and(touches)
            || self
                .dirty
                .range(..=end)
                .next_back()
                .is_some_and(|(&s, &e)| touches((s, e)))
    }

    /// Whether nothing waits to be destaged.
    pub fn is_empty(&self) -> bool {
        self.dirty.is_empty()
    }

    /// Dirty sectors not yet destaged.
    pub fn dirty_sectors(&self) -> u64 {
        self.dirty_sectors
    }

    /// Add `[start, end)`, merging with overlapping and adjacent extents (a rewrite of dirty
    /// data takes no extra room).
    pub fn insert(&mut self, start: u64, end: u64) {
        let (mut first, mut last, mut absorbed) = (start, end, 0);
        if let Some((&s, &e)) = self.dirty.range(..=start).next_back() {
            if e >= start {
                first = s;
                last = last.max(e);
                absorbed += e - s;
                self.dirty.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.dirty.range(first..).next() {
            if s > last {
                break;
            }
            last = last.max(e);
            absorbed += e - s;
            self.dirty.remove(&s);
        }
        self.dirty.insert(first, last);
        self.dirty_sectors += (last - first) - absorbed;
    }

    /// Whether `[start, end)` is wholly dirty (a read of it is served from the buffer).
    pub fn covers(&self, start: u64, end: u64) -> bool {
        self.dirty
            .range(..=start)
            .next_back()
            .is_some_and(|(_, &e)| e >= end)
    }

    /// Up to `per_side` extent starts on each side of `lba`, nearest first: the window the
    /// drive's SPTF destage chooses from.
    pub fn candidates(&self, lba: u64, per_side: usize) -> impl Iterator<Item = u64> + '_ {
        let below = self
            .dirty
            .range(..lba)
            .rev()
            .take(per_side)
            .map(|(&s, _)| s);
        let above = self.dirty.range(lba..).take(per_side).map(|(&s, _)| s);
        below.chain(above)
    }

    /// Start destaging up to `max_sectors` from the extent at `start`; returns its end.
    pub fn take(&mut self, start: u64, max_sectors: u64) -> u64 {
        let end = self
            .dirty
            .remove(&start)
            .expect("destage candidate is a dirty extent start");
        let cut = end.min(start + max_sectors.max(1));
        if cut < end {
            self.dirty.insert(cut, end);
        }
        self.dirty_sectors -= cut - start;
        self.destaging += cut - start;
        self.in_flight = Some((start, cut));
        cut
    }

    /// A destage of `sectors` reached the media: the room and its segment are free again.
    pub fn destaged(&mut self, sectors: u64) {
        self.destaging -= sectors;
        self.in_flight = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::hdd::geometry::GeometryConfig;

    /// 6000 rpm and 1000 sectors per track without skew: a sector passes every 10 µs.
    fn geometry() -> Geometry {
        Geometry::new(&GeometryConfig {
            capacity_sectors: 4_000_000,
            rpm: 6000,
            heads: 4,
            zones: 1,
            outer_mbps: 51.2,
            inner_mbps: 51.2,
            head_switch: 0,
        })
    }

    #[test]
    fn reads_up_to_the_read_ahead_limit_stream_while_it_runs() {
        let geometry = geometry();
        let mut cache = SegmentCache::new(4, 2048, 1024);
        // A miss [0, 32) ended on the media at 1 ms; read-ahead runs from 32 up to 1056.
        cache.fill(0, 32, 1_000_000, &geometry);
        let now = 1_500_000; // 50 sectors read ahead: [0, 82) valid.
        assert_eq!(cache.lookup(0, 82, now), Lookup::Hit(0));
        assert_eq!(cache.lookup(80, 112, now), Lookup::Stream(0));
        assert_eq!(cache.lookup(90, 122, now), Lookup::Stream(0));
        assert_eq!(cache.stream_wait(90, now), 80_000);
        assert_eq!(cache.lookup(1056, 1088, now), Lookup::Stream(0));
        assert_eq!(cache.lookup(1057, 1089, now), Lookup::Miss);
        // The head serves another command at 2 ms: [0, 132) stays, nothing streams.
        cache.stop_stream(2_000_000);
        assert_eq!(cache.lookup(100, 132, 9_000_000), Lookup::Hit(0));
        assert_eq!(cache.lookup(120, 152, 9_000_000), Lookup::Miss);
        assert_eq!(cache.stream_wait(140, 9_000_000), 0);
    }

    #[test]
    fn write_cache_merges_and_counts_once() {
        let mut cache = WriteCache::new(100);
        cache.insert(10, 18);
        cache.insert(18, 26);
        cache.insert(12, 14);
        assert_eq!(cache.dirty_sectors(), 16);
        cache.insert(30, 38);
        cache.insert(20, 32);
        assert_eq!(cache.dirty_sectors(), 28);
        assert!(cache.covers(12, 38));
        let end = cache.take(10, 8);
        assert_eq!(end, 18);
        assert!(!cache.has_room(100, 173));
        cache.destaged(8);
        assert!(cache.has_room(100, 180));
        assert_eq!(cache.candidates(0, 4).collect::<Vec<_>>(), vec![18]);
    }

    #[test]
    fn one_write_segment_takes_appends_and_refuses_a_second_extent() {
        let mut cache = WriteCache::new(100).with_max_segments(1);
        assert!(cache.has_room(10, 18));
        cache.insert(10, 18);
        // Appending, overlapping or prepending joins the segment; elsewhere needs another.
        assert!(cache.has_room(18, 26) && cache.has_room(12, 14) && cache.has_room(2, 10));
        assert!(!cache.has_room(40, 48));
        // While [10, 18) drains, a write at 18 continues its segment and holds no other.
        assert_eq!(cache.take(10, 64), 18);
        assert!(!cache.has_room(40, 48));
        cache.insert(18, 26);
        assert_eq!(cache.segments_in_use(), 1);
        assert!(!cache.has_room(40, 48));
        cache.destaged(8);
        assert!(!cache.has_room(40, 48));
        assert_eq!(cache.take(18, 64), 26);
        cache.destaged(8);
        assert_eq!(cache.segments_in_use(), 0);
        assert!(cache.has_room(40, 48));
    }
}
