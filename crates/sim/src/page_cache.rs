//! The page cache's write side: buffered writes dirty memory, a writeback flusher turns
//! dirty memory into async write requests, and writers are throttled at the dirty limit.
//!
//! This is the model Linux 2.6 used (`mm/page-writeback.c`, pdflush and later the per-bdi
//! flusher threads), reduced to what decides the device's queue:
//! - a buffered write returns as soon as its data is copied into the cache, unless dirty plus
//!   under-writeback memory has reached `dirty_ratio` percent of memory; then the writer
//!   sleeps until writeback brings it below (`balance_dirty_pages`);
//! - once dirty plus under-writeback memory passes `dirty_background_ratio` percent, the
//!   flusher writes dirty data back in file order, as async requests from its own
//!   process, until it is below again;
//! - the flusher keeps at most `nr_requests` of its requests queued or in flight, as the
//!   request queue's congestion limit made it; that is how writeback floods an elevator
//!   with up to `nr_requests` async writes;
//! - when the jobs are done, the remaining dirty data is written back too, so no data is
//!   left behind.
//!
//! Reads are modelled in `readahead`: cold-cache reads, with read-ahead for sequential ones.

use std::collections::BTreeMap;

use ioslice_core::request::SECTOR_SIZE;

/// The host memory and writeback parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCacheConfig {
    /// Memory the dirty ratios are percentages of, in bytes.
    pub memory_bytes: u64,
    /// `vm.dirty_ratio`: writers are throttled at this percentage of memory.
    pub dirty_ratio: u64,
    /// `vm.dirty_background_ratio`: the flusher starts at this percentage.
    pub dirty_background_ratio: u64,
    /// The request queue's `nr_requests`: the flusher's limit on outstanding requests.
    pub nr_requests: usize,
    /// Largest write the flusher issues (the queue's `max_sectors_kb`), in bytes.
    pub max_write_bytes: u64,
    /// The read-ahead window for buffered sequential reads (`read_ahead_kb`), in bytes;
    /// 0 turns read-ahead off.
    pub read_ahead_bytes: u64,
}

impl Default for PageCacheConfig {
    /// 2 GiB of memory (an assumption for a 2009 desktop, seed 004's era), the 2.6.22–2.6.29
    /// defaults `dirty_ratio=10` and `dirty_background_ratio=5`, `nr_requests=128`,
    /// `max_sectors_kb=512` and `read_ahead_kb=128`.
    fn default() -> Self {
        Self {
            memory_bytes: 2 << 30,
            dirty_ratio: 10,
            dirty_background_ratio: 5,
            nr_requests: 128,
            max_write_bytes: 512 << 10,
            read_ahead_bytes: 128 << 10,
        }
    }
}

impl PageCacheConfig {
    /// Dirty plus under-writeback bytes at which writers are throttled.
    pub fn dirty_limit(&self) -> u64 {
        self.memory_bytes / 100 * self.dirty_ratio
    }

    /// Dirty plus under-writeback bytes at which the flusher starts.
    pub fn background_limit(&self) -> u64 {
        self.memory_bytes / 100 * self.dirty_background_ratio
    }
}

/// Dirty sectors as disjoint, non-touching extents `start → end`.
#[derive(Debug, Clone, Default)]
struct DirtyExtents {
    extents: BTreeMap<u64, u64>,
    sectors: u64,
}

impl DirtyExtents {
    /// Mark `[start, end)` dirty; returns how many sectors were newly dirtied.
    fn insert(&mut self, mut start: u64, mut end: u64) -> u64 {
        let before = self.sectors;
        // Absorb every extent that overlaps or touches [start, end).
        let first = self
            .extents
            .range(..=start)
            .next_back()
            .filter(|&(_, &e)| e >= start)
            .map(|(&s, _)| s)
            .unwrap_or(start);
        let touching: Vec<(u64, u64)> = self
            .extents
            .range(first..=end)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.extents.remove(&s);
            self.sectors -= e - s;
            start = start.min(s);
            end = end.max(e);
        }
        self.extents.insert(start, end);
        self.sectors += end - start;
        self.sectors - before
    }

    /// Take up to `max` sectors of the first extent at or after `cursor` (wrapping to the
    /// lowest when none is): the next piece writeback writes, in file order.
    fn take_from(&mut self, cursor: u64, max: u64) -> Option<(u64, u64)> {
        let (&start, &end) = self
            .extents
            .range(cursor..)
            .next()
            .or_else(|| self.extents.iter().next())?;
        let piece_end = end.min(start + max);
        self.extents.remove(&start);
        if piece_end < end {
            self.extents.insert(piece_end, end);
        }
        self.sectors -= piece_end - start;
        Some((start, piece_end))
    }
}

/// The write side of the page cache.
#[derive(Debug, Clone)]
pub struct PageCache {
    config: PageCacheConfig,
    dirty: DirtyExtents,
    writeback_bytes: u64,
    outstanding: usize,
    cursor: u64,
    draining: bool,
    /// Bytes newly dirtied by buffered writes.
    pub bytes_dirtied: u64,
    /// Bytes the flusher wrote back (completed).
    pub bytes_written: u64,
}

impl PageCache {
    /// An empty cache.
    pub fn new(config: PageCacheConfig) -> Self {
        Self {
            config,
            dirty: DirtyExtents::default(),
            writeback_bytes: 0,
            outstanding: 0,
            cursor: 0,
            draining: false,
            bytes_dirtied: 0,
            bytes_written: 0,
        }
    }

    fn dirty_bytes(&self) -> u64 {
        self.dirty.sectors * SECTOR_SIZE
    }

    /// Dirty plus under-writeback bytes: what the limits are compared with.
    fn charged(&self) -> u64 {
        self.dirty_bytes() + self.writeback_bytes
    }

    /// Whether a writer must sleep before dirtying more.
    pub fn throttled(&self) -> bool {
        self.charged() >= self.config.dirty_limit()
    }

    /// A buffered write copies `[start, end)` (sectors) into the cache.
    pub fn write(&mut self, start: u64, end: u64) {
        self.bytes_dirtied += self.dirty.insert(start, end) * SECTOR_SIZE;
    }

    /// From now on write back everything, whatever the thresholds (the jobs are done).
    pub fn drain(&mut self) {
        self.draining = true;
    }

    /// The next write the flusher issues now, as `[start, end)` sectors, if it has one:
    /// above the background threshold (or draining, or with writers throttled) and below
    /// its outstanding-request limit.
    pub fn next_writeback(&mut self, writers_waiting: bool) -> Option<(u64, u64)> {
        let wanted =
            self.draining || writers_waiting || self.charged() > self.config.background_limit();
        if !wanted || self.outstanding >= self.config.nr_requests {
            return None;
        }
        let max = (self.config.max_write_bytes / SECTOR_SIZE).max(1);
        let (start, end) = self.dirty.take_from(self.cursor, max)?;
        self.cursor = end;
        self.writeback_bytes += (end - start) * SECTOR_SIZE;
        self.outstanding += 1;
        Some((start, end))
    }

    /// A writeback request of `sectors` completed: its memory is clean.
    pub fn written(&mut self, sectors: u64) {
        let bytes = sectors * SECTOR_SIZE;
        self.writeback_bytes -= bytes.min(self.writeback_bytes);
        self.bytes_written += bytes;
        self.outstanding = self.outstanding.saturating_sub(1);
    }

    /// Writeback requests queued or in flight.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Whether nothing is dirty and nothing is being written back.
    pub fn is_clean(&self) -> bool {
        self.dirty.sectors == 0 && self.outstanding == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> PageCacheConfig {
        PageCacheConfig {
            memory_bytes: 100 * 1024 * 1024,
            dirty_ratio: 10,
            dirty_background_ratio: 5,
            nr_requests: 2,
            max_write_bytes: 64 * 1024,
            read_ahead_bytes: 0,
        }
    }

    #[test]
    fn extents_merge_and_count_new_sectors_once() {
        let mut dirty = DirtyExtents::default();
        assert_eq!(dirty.insert(0, 8), 8);
        assert_eq!(dirty.insert(16, 24), 8);
        assert_eq!(dirty.insert(4, 20), 8);
        assert_eq!(dirty.extents.len(), 1);
        assert_eq!(dirty.insert(24, 32), 8, "touching extents merge");
        assert_eq!(dirty.extents.iter().next(), Some((&0, &32)));
        assert_eq!(
            dirty.insert(0, 32),
            0,
            "rewriting dirty data dirties nothing new"
        );
    }

    #[test]
    fn writeback_walks_in_order_from_the_cursor_and_wraps() {
        let mut dirty = DirtyExtents::default();
        dirty.insert(100, 300);
        dirty.insert(1000, 1010);
        assert_eq!(dirty.take_from(0, 128), Some((100, 228)));
        assert_eq!(dirty.take_from(228, 128), Some((228, 300)));
        assert_eq!(dirty.take_from(300, 128), Some((1000, 1010)));
        dirty.insert(0, 8);
        assert_eq!(
            dirty.take_from(2000, 128),
            Some((0, 8)),
            "wraps to the start"
        );
        assert_eq!(dirty.take_from(0, 128), None);
        assert_eq!(dirty.sectors, 0);
    }

    #[test]
    fn flusher_starts_above_background_and_respects_its_request_limit() {
        let mut cache = PageCache::new(small());
        let background_sectors = small().background_limit() / SECTOR_SIZE;
        cache.write(0, background_sectors);
        assert_eq!(
            cache.next_writeback(false),
            None,
            "at the threshold, not above"
        );
        cache.write(background_sectors, background_sectors + 1000);
        assert_eq!(cache.next_writeback(false), Some((0, 128)));
        assert_eq!(cache.next_writeback(false), Some((128, 256)));
        assert_eq!(cache.next_writeback(false), None, "nr_requests outstanding");
        cache.written(128);
        assert_eq!(cache.bytes_written, 128 * SECTOR_SIZE);
        assert_eq!(cache.next_writeback(false), Some((256, 384)));
        while cache.next_writeback(false).is_some() || cache.outstanding() > 0 {
            cache.written(128);
        }
        assert!(
            cache.charged() <= small().background_limit(),
            "the flusher stops once below the background threshold"
        );
        assert!(!cache.is_clean(), "and leaves the rest dirty");
    }

    #[test]
    fn writers_throttle_at_the_dirty_limit_counting_writeback() {
        let mut cache = PageCache::new(small());
        let limit_sectors = small().dirty_limit() / SECTOR_SIZE;
        cache.write(0, limit_sectors - 1);
        assert!(!cache.throttled());
        cache.write(limit_sectors - 1, limit_sectors);
        assert!(cache.throttled());
        let (start, end) = cache.next_writeback(true).expect("above background");
        assert!(cache.throttled(), "data under writeback still counts");
        cache.written(end - start);
        assert!(!cache.throttled());
    }

    #[test]
    fn draining_writes_everything_back() {
        let mut cache = PageCache::new(small());
        cache.write(0, 300);
        assert_eq!(cache.next_writeback(false), None, "below background");
        cache.drain();
        let mut written = 0;
        while let Some((start, end)) = cache.next_writeback(false) {
            cache.written(end - start);
            written += end - start;
        }
        assert_eq!(written, 300);
        assert!(cache.is_clean());
        assert_eq!(cache.bytes_dirtied, cache.bytes_written);
    }
}
