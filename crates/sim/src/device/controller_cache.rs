//! An array controller's read cache with sequential read-ahead, in front of another device
//! model (an array). Hardware RAID controllers of the 2000s (HP's HSG80 and EVA, Dell's PERC,
//! DDN's EF-series) keep the data they read in a cache of their own and, once they see a
//! stream read sequentially, fetch the data that follows before the host asks for it:
//!
//! - **Stream detection**: a read that starts where an earlier read of the same stream ended
//!   ("two back-to-back accesses to consecutive LBA ranges", DDN EF2800 guide §6.3.5; Dell's
//!   "adaptive read-ahead": the two most recent reads sequential). Many streams are tracked at
//!   once (HSZ80: "can detect multiple sequential I/O requests").
//! - **Read-ahead**: the first read-ahead of a stream fetches one chunk, each later one keeps a
//!   stripe of data fetched ahead of the host's reads (DDN's default: "one chunk for the first
//!   access in a sequential read and one stripe for all subsequent accesses"). The fetch runs
//!   in parallel with the host's read (HSG80: "these are parallel actions").
//! - **Hits**: a read found whole in the cache completes after its transfer over the host
//!   link; a read waiting for data already being fetched completes when the fetch does, then
//!   transfers. Anything else goes to the array as it came, and its data stays in the cache.
//! - **Capacity**: lines (one chunk each) are replaced least recently used first; lines being
//!   fetched stay until their fetch completes.
//! - **Writes** pass through to the array and drop the lines they overlap (this models the read
//!   cache only; a controller's write-back cache is not modelled).
//!
//! Misses are not charged the host link: the array's members already charge their own.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use ioslice_core::{Direction, Nanos};

use super::{Command, DeviceInfo, DeviceModel};

/// What a [`ControllerCache`] is built from (besides the device behind it).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerCacheConfig {
    /// Cache size in lines.
    pub capacity_lines: usize,
    /// One line, in sectors (the array's chunk).
    pub line_sectors: u64,
    /// Data fetched ahead once a stream is seen: the first time (sectors).
    pub first_readahead_sectors: u64,
    /// Data kept fetched ahead of a stream's reads after that (sectors); 0 turns read-ahead off.
    pub readahead_sectors: u64,
    /// Host link rate, MB/s (10^6 bytes a second).
    pub link_mbps: f64,
    /// Sequential streams tracked at once.
    pub streams: usize,
}

/// A line of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Holds data; the stamp orders replacement.
    Present { stamp: u64 },
    /// Being fetched by the read-ahead with this inner tag.
    Fetching { fetch: u64 },
}

/// A command sent to the device behind the cache.
#[derive(Debug, Clone, Copy)]
enum Inner {
    /// A host command passed through, with the host's tag.
    Host(Command),
    /// A read-ahead of lines `first..first + count`.
    Fetch { first: u64, count: u64 },
}

/// A host read waiting for read-aheads in flight.
#[derive(Debug, Clone, Copy)]
struct Waiter {
    fetches_left: usize,
    sectors: u32,
}

/// One sequential stream the controller follows.
#[derive(Debug, Clone, Copy)]
struct Stream {
    /// Where the stream's next read is expected to start.
    next: u64,
    /// End of what has been fetched ahead for it.
    fetched_to: u64,
    /// Reads seen in sequence.
    sequential: u32,
}

/// A controller read cache in front of `inner`.
pub struct ControllerCache {
    config: ControllerCacheConfig,
    inner: Box<dyn DeviceModel>,
    lines: BTreeMap<u64, Line>,
    replacement: BTreeMap<u64, u64>,
    stamp: u64,
    /// Streams by the sector their next read is expected at.
    streams: BTreeMap<u64, (u64, Stream)>,
    stream_age: BTreeMap<u64, u64>,
    sent: HashMap<u64, Inner>,
    next_tag: u64,
    fetch_waiters: HashMap<u64, Vec<u64>>,
    waiters: HashMap<u64, Waiter>,
    ready: BinaryHeap<Reverse<(Nanos, u64, u64)>>,
    sequence: u64,
    link_free: Nanos,
    host_in_flight: usize,
    hits: u64,
    fetches: u64,
    scratch: Vec<u64>,
}

impl std::fmt::Debug for ControllerCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerCache")
            .field("config", &self.config)
            .field("lines", &self.lines.len())
            .finish()
    }
}

impl ControllerCache {
    /// A cache of `config` in front of `inner`.
    pub fn new(config: ControllerCacheConfig, inner: Box<dyn DeviceModel>) -> Result<Self, String> {
        if config.line_sectors == 0 {
            return Err("a cache line must be at least one sector".into());
        }
        if !(config.link_mbps.is_finite() && config.link_mbps > 0.0) {
            return Err("the host link rate must be positive".into());
        }
        Ok(Self {
            config,
            inner,
            lines: BTreeMap::new(),
            replacement: BTreeMap::new(),
            stamp: 0,
            streams: BTreeMap::new(),
            stream_age: BTreeMap::new(),
            sent: HashMap::new(),
            next_tag: 0,
            fetch_waiters: HashMap::new(),
            waiters: HashMap::new(),
            ready: BinaryHeap::new(),
            sequence: 0,
            link_free: 0,
            host_in_flight: 0,
            hits: 0,
            fetches: 0,
            scratch: Vec::new(),
        })
    }

    /// Host reads served from the cache (whole, or after a read-ahead in flight).
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Read-ahead commands sent to the device behind.
    pub fn fetches(&self) -> u64 {
        self.fetches
    }

    fn line_range(&self, sector: u64, sectors: u64) -> std::ops::Range<u64> {
        let line = self.config.line_sectors;
        sector / line..(sector + sectors.max(1)).div_ceil(line)
    }

    fn transfer_time(&self, sectors: u32) -> Nanos {
        let bytes = f64::from(sectors) * 512.0;
        (bytes * 1000.0 / self.config.link_mbps).round() as Nanos
    }

    /// Schedule a host read's completion after its transfer, starting no earlier than `at`.
    fn deliver(&mut self, tag: u64, sectors: u32, at: Nanos) {
        let start = at.max(self.link_free);
        self.link_free = start + self.transfer_time(sectors);
        self.sequence += 1;
        self.ready
            .push(Reverse((self.link_free, self.sequence, tag)));
        self.hits += 1;
    }

    fn touch(&mut self, line: u64) {
        if let Some(Line::Present { stamp }) = self.lines.get(&line).copied() {
            self.replacement.remove(&stamp);
            self.stamp += 1;
            self.replacement.insert(self.stamp, line);
            self.lines.insert(line, Line::Present { stamp: self.stamp });
        }
    }

    fn make_present(&mut self, line: u64) {
        if let Some(Line::Present { stamp }) = self.lines.get(&line).copied() {
            self.replacement.remove(&stamp);
        }
        self.stamp += 1;
        self.replacement.insert(self.stamp, line);
        self.lines.insert(line, Line::Present { stamp: self.stamp });
        self.evict();
    }

    fn evict(&mut self) {
        while self.lines.len() > self.config.capacity_lines {
            let Some((_, line)) = self.replacement.pop_first() else {
                break;
            };
            self.lines.remove(&line);
        }
    }

    /// Send `what` to the device behind; its tag there.
    fn send(&mut self, what: Inner, now: Nanos) -> u64 {
        let command = match what {
            Inner::Host(command) => command,
            Inner::Fetch { first, count } => Command {
                tag: 0,
                direction: Direction::Read,
                sector: first * self.config.line_sectors,
                // `fetch` sends only what fits in one command.
                sectors: u32::try_from(count * self.config.line_sectors).unwrap_or(u32::MAX),
                fua: false,
            },
        };
        self.next_tag += 1;
        self.sent.insert(self.next_tag, what);
        self.inner.submit(
            Command {
                tag: self.next_tag,
                ..command
            },
            now,
        );
        self.next_tag
    }

    /// A host read: from the cache, after read-aheads in flight, or from the array.
    fn read(&mut self, command: Command, now: Nanos) {
        let range = self.line_range(command.sector, u64::from(command.sectors));
        let mut fetches: Vec<u64> = Vec::new();
        let mut whole = true;
        for line in range.clone() {
            match self.lines.get(&line) {
                Some(Line::Present { .. }) => {}
                Some(Line::Fetching { fetch }) => fetches.push(*fetch),
                None => whole = false,
            }
        }
        if !whole {
            self.send(Inner::Host(command), now);
        } else if fetches.is_empty() {
            range.for_each(|line| self.touch(line));
            self.deliver(command.tag, command.sectors, now);
        } else {
            fetches.sort_unstable();
            fetches.dedup();
            for fetch in &fetches {
                self.fetch_waiters
                    .entry(*fetch)
                    .or_default()
                    .push(command.tag);
            }
            let waiter = Waiter {
                fetches_left: fetches.len(),
                sectors: command.sectors,
            };
            self.waiters.insert(command.tag, waiter);
        }
        self.follow_stream(command.sector, u64::from(command.sectors), now);
    }

    /// Track the stream a read belongs to and keep its read-ahead going.
    fn follow_stream(&mut self, sector: u64, sectors: u64, now: Nanos) {
        let end = sector + sectors;
        let stream = match self.streams.remove(&sector) {
            Some((age, stream)) => {
                self.stream_age.remove(&age);
                Stream {
                    next: end,
                    fetched_to: stream.fetched_to.max(end),
                    sequential: stream.sequential.saturating_add(1),
                }
            }
            None => Stream {
                next: end,
                fetched_to: end,
                sequential: 0,
            },
        };
        let stream = self.read_ahead(stream, now);
        if let Some((age, _)) = self.streams.remove(&end) {
            self.stream_age.remove(&age);
        }
        self.stamp += 1;
        self.stream_age.insert(self.stamp, end);
        self.streams.insert(end, (self.stamp, stream));
        while self.streams.len() > self.config.streams {
            let Some((_, next)) = self.stream_age.pop_first() else {
                break;
            };
            self.streams.remove(&next);
        }
    }

    /// Fetch what a sequential stream will read next, in whole lines not already cached.
    fn read_ahead(&mut self, mut stream: Stream, now: Nanos) -> Stream {
        if stream.sequential == 0 || self.config.readahead_sectors == 0 {
            return stream;
        }
        let ahead = if stream.sequential == 1 {
            self.config.first_readahead_sectors
        } else {
            self.config.readahead_sectors
        };
        let target = (stream.next + ahead).min(self.inner.info().capacity_sectors);
        let from = stream.fetched_to.max(stream.next);
        if from >= target {
            return stream;
        }
        let lines = self.line_range(from, target - from);
        let mut run: Option<(u64, u64)> = None;
        for line in lines.clone() {
            if self.lines.contains_key(&line) {
                if let Some((first, count)) = run.take() {
                    self.fetch(first, count, now);
                }
            } else {
                run = match run {
                    Some((first, count)) => Some((first, count + 1)),
                    None => Some((line, 1)),
                };
            }
        }
        if let Some((first, count)) = run {
            self.fetch(first, count, now);
        }
        stream.fetched_to = lines.end * self.config.line_sectors;
        stream
    }

    fn fetch(&mut self, first: u64, count: u64, now: Nanos) {
        if u32::try_from(count * self.config.line_sectors).is_err() {
            return;
        }
        let tag = self.send(Inner::Fetch { first, count }, now);
        for l in first..first + count {
            self.lines.insert(l, Line::Fetching { fetch: tag });
        }
        self.fetches += 1;
        self.evict();
    }

    /// The device behind finished `tag` at `at`.
    fn inner_done(&mut self, tag: u64, at: Nanos, completed: &mut Vec<u64>) {
        let Some(what) = self.sent.remove(&tag) else {
            return;
        };
        match what {
            Inner::Host(command) => {
                if command.direction == Direction::Read {
                    for line in self.line_range(command.sector, u64::from(command.sectors)) {
                        if !matches!(self.lines.get(&line), Some(Line::Fetching { .. })) {
                            self.make_present(line);
                        }
                    }
                }
                self.host_in_flight -= 1;
                completed.push(command.tag);
            }
            Inner::Fetch { first, count } => {
                for line in first..first + count {
                    if self.lines.get(&line) == Some(&Line::Fetching { fetch: tag }) {
                        self.make_present(line);
                    }
                }
                for host in self.fetch_waiters.remove(&tag).unwrap_or_default() {
                    let Some(waiter) = self.waiters.get_mut(&host) else {
                        continue;
                    };
                    waiter.fetches_left -= 1;
                    if waiter.fetches_left == 0 {
                        let sectors = waiter.sectors;
                        self.waiters.remove(&host);
                        self.deliver(host, sectors, at);
                    }
                }
            }
        }
    }
}

impl DeviceModel for ControllerCache {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }

    fn in_flight(&self) -> usize {
        self.host_in_flight
    }

    fn submit(&mut self, command: Command, now: Nanos) {
        self.host_in_flight += 1;
        if command.direction == Direction::Read {
            return self.read(command, now);
        }
        for line in self.line_range(command.sector, u64::from(command.sectors)) {
            if let Some(Line::Present { stamp }) = self.lines.get(&line).copied() {
                self.replacement.remove(&stamp);
                self.lines.remove(&line);
            }
        }
        self.send(Inner::Host(command), now);
    }

    fn next_event(&self) -> Option<Nanos> {
        let ready = self.ready.peek().map(|Reverse((at, _, _))| *at);
        match (ready, self.inner.next_event()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<u64>) {
        loop {
            let ready = self.ready.peek().map(|Reverse((at, _, _))| *at);
            let inner = self.inner.next_event();
            match (ready, inner) {
                (Some(r), i) if r <= now && i.is_none_or(|i| r <= i) => {
                    if let Some(Reverse((_, _, tag))) = self.ready.pop() {
                        self.host_in_flight -= 1;
                        completed.push(tag);
                    }
                }
                (_, Some(i)) if i <= now => {
                    let mut done = std::mem::take(&mut self.scratch);
                    self.inner.advance(i, &mut done);
                    for tag in done.drain(..) {
                        self.inner_done(tag, i, completed);
                    }
                    self.scratch = done;
                }
                _ => break,
            }
        }
    }
}
