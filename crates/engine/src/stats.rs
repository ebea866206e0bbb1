//! Statistics the dispatcher keeps while it runs, readable at any time from any thread.
//!
//! Whichever thread runs the engine's work writes, off the policy's critical section: a turn
//! only collects its completions as `Sample`s under the engine's lock; the thread takes
//! the batch with the gauges of that moment (`Gauges`) as it releases the lock, and folds it
//! into the shared `Recorder` under that one's own short lock (no allocation beyond a new
//! process-and-group entry; each latency recorded once, in that entry, and merged into the
//! group's, the process's and the engine's percentiles when a snapshot asks) before it
//! fulfils the batch's outcomes, so a client that has its
//! outcome finds its request counted. Batches may fold out of order; the counts are sums, and
//! the gauges keep the latest batch's. [`Handle::stats`](crate::Handle::stats) takes the
//! recorder's lock to copy a [`Snapshot`] out; the final statistics wait until every batch
//! taken is folded.
//! Listings are `BTreeMap`s keyed by group path and process id, so every report lists them
//! in the same order. Latencies run from a client's submission to the dispatcher seeing the
//! completion, in microseconds, in one `hdrhistogram` per group, per process and overall.
//!
//! [`Statistics::Totals`] (the builders' `statistics` option) keeps only the engine-wide
//! counters (requests, reads, writes, bytes, errors), exact as ever, and skips the per-group
//! and per-process tables and every latency histogram: what Linux's BFQ does without
//! `CONFIG_DEBUG_BLK_CGROUP`, where the debugging statistics cost it 25–30 % of its IOPS.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use ioslice_core::Direction;

use crate::counters::Counters;
use crate::sync::{thread, AtomicUsize, Mutex, MutexGuard};

/// Which statistics an engine keeps ([`EngineBuilder::statistics`](crate::EngineBuilder::statistics)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Statistics {
    /// Everything: totals, per group, per process, with latency percentiles (the default).
    #[default]
    Detailed,
    /// Engine-wide counts and bytes only: [`Snapshot::groups`] and [`Snapshot::processes`]
    /// stay empty and every [`Figures::latency`] is zero. The counts are as exact as with
    /// [`Statistics::Detailed`].
    Totals,
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest seen.
    pub max: u64,
    /// Arithmetic mean.
    pub mean: f64,
}

/// Counters of one group, one process (queue), or the whole engine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Requests completed, failed ones included.
    pub requests: u64,
    /// Read requests completed.
    pub reads: u64,
    /// Write requests completed.
    pub writes: u64,
    /// Bytes read by successful requests.
    pub bytes_read: u64,
    /// Bytes written by successful requests.
    pub bytes_written: u64,
    /// Discard requests completed.
    pub discards: u64,
    /// Bytes discarded by successful requests.
    pub bytes_discarded: u64,
    /// Requests that completed with an error.
    pub errors: u64,
    /// Completion latency of every completed request.
    pub latency: Latency,
}

/// Everything at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Time since the engine started.
    pub elapsed: Duration,
    /// The whole engine.
    pub totals: Figures,
    /// Per group, by path (`/` is the root group).
    pub groups: BTreeMap<String, Figures>,
    /// Per process (queue), by process id.
    pub processes: BTreeMap<u32, Figures>,
    /// Requests the dispatcher has received from clients.
    pub submitted: u64,
    /// Requests waiting in the policy.
    pub queued: usize,
    /// Requests at the device (merged ones counted one by one).
    pub in_flight: usize,
    /// Completions for a request that was not in flight (a policy or backend bug); always
    /// zero in a healthy engine. Such completions are ignored.
    pub double_completions: u64,
    /// Requests completed with a shutdown error without being served (sent while the engine
    /// was stopping).
    pub cancelled: u64,
    /// Requests the device did not answer within the engine's I/O timeout, completed with
    /// `ETIMEDOUT` (also counted in the figures' errors).
    pub timed_out: u64,
    /// Answers the device gave to operations after they had timed out: absorbed, not
    /// completed again.
    pub late_completions: u64,
}

/// What [`Engine::shutdown`](crate::Engine::shutdown) returns: the statistics once every
/// request has completed.
pub type FinalStats = Snapshot;

#[derive(Debug)]
struct Entry {
    figures: Figures,
    histogram: Histogram<u64>,
}

impl Default for Entry {
    fn default() -> Self {
        Self {
            figures: Figures::default(),
            // Three significant figures, auto-resizing: a constant that cannot fail.
            histogram: Histogram::new(3).expect("3 significant figures is a valid precision"),
        }
    }
}

impl Figures {
    /// Count one completed request (everything but its latency).
    fn count(&mut self, sample: &Sample) {
        self.requests += 1;
        match sample.direction {
            Direction::Read => self.reads += 1,
            Direction::Write => self.writes += 1,
            Direction::Discard => self.discards += 1,
        }
        match (sample.ok, sample.direction) {
            (false, _) => self.errors += 1,
            (true, Direction::Read) => self.bytes_read += sample.bytes,
            (true, Direction::Write) => self.bytes_written += sample.bytes,
            (true, Direction::Discard) => self.bytes_discarded += sample.bytes,
        }
    }
}

impl Entry {
    /// Add `other`'s counts and latencies to this one's.
    fn merge(&mut self, other: &Entry) {
        let (a, b) = (&mut self.figures, &other.figures);
        a.requests += b.requests;
        a.reads += b.reads;
        a.writes += b.writes;
        a.bytes_read += b.bytes_read;
        a.bytes_written += b.bytes_written;
        a.discards += b.discards;
        a.bytes_discarded += b.bytes_discarded;
        a.errors += b.errors;
        // Both auto-resize; adding cannot fail for lack of range.
        let _ = self.histogram.add(&other.histogram);
    }

    fn record(&mut self, sample: &Sample) {
        self.figures.count(sample);
        let micros = u64::try_from(sample.latency.as_micros()).unwrap_or(u64::MAX);
        // `record` grows the histogram as needed; `saturating_record` alone would clamp
        // anything beyond the first 2 ms to its initial bound, 2 µs.
        if self.histogram.record(micros).is_err() {
            self.histogram.saturating_record(micros);
        }
    }

    fn figures(&self) -> Figures {
        let h = &self.histogram;
        let mut figures = self.figures.clone();
        if !h.is_empty() {
            figures.latency = Latency {
                p50: h.value_at_quantile(0.50),
                p90: h.value_at_quantile(0.90),
                p99: h.value_at_quantile(0.99),
                p999: h.value_at_quantile(0.999),
                max: h.max(),
                mean: h.mean(),
            };
        }
        figures
    }
}

/// One completed request, as the dispatcher reports it.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub group: Arc<str>,
    /// The group's index in the engine's tree (`GroupId`), to key it without comparing paths.
    pub group_index: u32,
    pub process: u32,
    pub direction: Direction,
    pub bytes: u64,
    pub ok: bool,
    pub latency: Duration,
}

/// The engine's gauges when a batch of samples was taken; `batch` numbers the batches.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Gauges {
    pub batch: u64,
    pub submitted: u64,
    pub queued: usize,
    pub in_flight: usize,
    pub double_completions: u64,
    pub timed_out: u64,
    pub late_completions: u64,
}

/// One process's requests in one group: where a sample's latency is recorded, once. The
/// group's, the process's and the engine's percentiles are merged from these when asked for.
#[derive(Debug)]
struct Flow {
    group: Arc<str>,
    entry: Entry,
}

#[derive(Debug, Default)]
struct Tables {
    /// The gauges of the latest batch folded.
    latest: u64,
    /// The engine's counts (every setting).
    totals: Figures,
    /// With [`Statistics::Detailed`], by group index and process id.
    flows: BTreeMap<(u32, u32), Flow>,
    submitted: u64,
    queued: usize,
    in_flight: usize,
    double_completions: u64,
    timed_out: u64,
    late_completions: u64,
}

impl Tables {
    /// Every sample into the totals' counts and its flow (counts and latency).
    fn record_detailed(&mut self, samples: &[Sample]) {
        for sample in samples {
            self.totals.count(sample);
            self.flows
                .entry((sample.group_index, sample.process))
                .or_insert_with(|| Flow {
                    group: Arc::clone(&sample.group),
                    entry: Entry::default(),
                })
                .entry
                .record(sample);
        }
    }

    /// Every sample into the totals' counters only.
    fn record_totals(&mut self, samples: &[Sample]) {
        for sample in samples {
            self.totals.count(sample);
        }
    }

    /// The engine's, each group's and each process's figures, merged from the flows.
    fn merged(&self) -> (Figures, BTreeMap<String, Figures>, BTreeMap<u32, Figures>) {
        let mut all = Entry::default();
        let mut groups: BTreeMap<&str, Entry> = BTreeMap::new();
        let mut processes: BTreeMap<u32, Entry> = BTreeMap::new();
        for (&(_, process), flow) in &self.flows {
            all.merge(&flow.entry);
            groups.entry(&flow.group).or_default().merge(&flow.entry);
            processes.entry(process).or_default().merge(&flow.entry);
        }
        let mut totals = self.totals.clone();
        totals.latency = all.figures().latency;
        let groups = groups
            .into_iter()
            .map(|(path, entry)| (path.to_string(), entry.figures()))
            .collect();
        let processes = processes
            .into_iter()
            .map(|(process, entry)| (process, entry.figures()))
            .collect();
        (totals, groups, processes)
    }
}

/// The shared statistics: written under the engine's lock, read by anyone.
#[derive(Debug)]
pub(crate) struct Recorder {
    started: Instant,
    kept: Statistics,
    tables: Mutex<Tables>,
    /// Batches taken under the engine's lock and not yet folded.
    unfolded: AtomicUsize,
    /// Completers dropped unfulfilled (counted from any thread, so kept outside the lock),
    /// and the engine's other lock-free counters.
    pub counters: Arc<Counters>,
}

impl Recorder {
    pub(crate) fn new(started: Instant, kept: Statistics) -> Self {
        Self {
            started,
            kept,
            tables: Mutex::new(Tables::default()),
            unfolded: AtomicUsize::new(0),
            counters: Arc::new(Counters::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A batch is being taken under the engine's lock, to be [folded](Self::fold) after it.
    pub(crate) fn take(&self) {
        self.unfolded.fetch_add(1, Ordering::AcqRel);
    }

    /// Fold a batch of completions [taken](Self::take) and its gauges in, under one lock.
    pub(crate) fn fold(&self, samples: &[Sample], gauges: Gauges) {
        let mut tables = self.lock();
        match self.kept {
            Statistics::Detailed => tables.record_detailed(samples),
            Statistics::Totals => tables.record_totals(samples),
        }
        if gauges.batch >= tables.latest {
            tables.latest = gauges.batch;
            tables.submitted = gauges.submitted;
            tables.queued = gauges.queued;
            tables.in_flight = gauges.in_flight;
            tables.double_completions = gauges.double_completions;
            tables.timed_out = gauges.timed_out;
            tables.late_completions = gauges.late_completions;
        }
        drop(tables);
        self.unfolded.fetch_sub(1, Ordering::AcqRel);
    }

    /// Copy everything out once every batch taken is folded (the engine has stopped: the
    /// last ones are being folded by threads that just released the engine's lock).
    pub(crate) fn settled_snapshot(&self) -> Snapshot {
        while self.unfolded.load(Ordering::Acquire) > 0 {
            thread::yield_now();
        }
        self.snapshot()
    }

    /// Copy everything out.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let elapsed = crate::sync::now().saturating_duration_since(self.started);
        let cancelled = self.counters.cancelled.load(Ordering::Relaxed);
        let tables = self.lock();
        let (totals, groups, processes) = tables.merged();
        Snapshot {
            elapsed,
            totals,
            groups,
            processes,
            submitted: tables.submitted,
            queued: tables.queued,
            in_flight: tables.in_flight,
            double_completions: tables.double_completions,
            cancelled,
            timed_out: tables.timed_out,
            late_completions: tables.late_completions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(latency: Duration) -> Sample {
        Sample {
            group: Arc::from("/"),
            group_index: 0,
            process: 1,
            direction: Direction::Read,
            bytes: 4096,
            ok: true,
            latency,
        }
    }

    #[test]
    fn latencies_of_milliseconds_and_seconds_are_kept_as_they_are() {
        let mut entry = Entry::default();
        for micros in [150, 7_387, 12_000, 2_500_000] {
            entry.record(&sample(Duration::from_micros(micros)));
        }
        let latency = entry.figures().latency;
        // Three significant figures: within 0.1 %.
        assert!(
            (2_497_000..=2_503_000).contains(&latency.max),
            "{latency:?}"
        );
        assert!((7_380..=7_395).contains(&latency.p50), "{latency:?}");
        assert!(latency.mean > 600_000.0, "{latency:?}");
    }
}
