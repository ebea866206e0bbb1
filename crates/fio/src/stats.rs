//! Per-job statistics as fio keeps them: bytes and I/O counts per direction, submission,
//! completion and total latency (exact min/max/mean/stddev plus fio's latency bins for
//! percentiles), bandwidth and IOPS sampled over fixed windows, and the depth distribution.

use std::sync::Arc;

use ioslice_core::Nanos;

use crate::latency_bins::{self, BINS};
pub use crate::sample_windows::{Samples, WindowSeries, SAMPLE_WINDOW};

/// Latency samples in nanoseconds: exact moments, and fio's bins for percentiles.
///
/// The bins are shared between copies until one of them records (a group's folded copy, or
/// a total latency that equals the completion latency, costs nothing), and samples that are
/// all zero (a simulated request's submission latency) need no bins at all.
#[derive(Clone, Default)]
pub struct LatencyStats {
    /// `None` while every sample (if any) is zero.
    bins: Option<Arc<[u64; BINS]>>,
    count: u64,
    min: u64,
    max: u64,
    mean: f64,
    sum_squared_deviation: f64,
}

impl std::fmt::Debug for LatencyStats {
    /// The moments and the non-empty bins (not all 1856).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bins = self.bin_counts();
        let filled: Vec<(usize, u64)> = (0..BINS)
            .filter(|&bin| bins[bin] > 0)
            .map(|bin| (bin, bins[bin]))
            .collect();
        f.debug_struct("LatencyStats")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .field("mean", &self.mean)
            .field("sum_squared_deviation", &self.sum_squared_deviation)
            .field("bins", &filled)
            .finish()
    }
}

impl PartialEq for LatencyStats {
    /// The same samples: the same moments and the same count in every bin.
    fn eq(&self, other: &Self) -> bool {
        let moments = |s: &Self| (s.count, s.min, s.max, s.mean, s.sum_squared_deviation);
        moments(self) == moments(other) && self.bin_counts() == other.bin_counts()
    }
}

impl LatencyStats {
    /// `count` samples of zero, exactly as recording each would leave it.
    pub fn zeros(count: u64) -> Self {
        Self {
            count,
            ..Self::default()
        }
    }

    /// Record one sample.
    pub fn record(&mut self, nanos: u64) {
        self.bins_mut()[latency_bins::bin_of(nanos)] += 1;
        if self.count == 0 {
            self.min = nanos;
            self.max = nanos;
        } else {
            self.min = self.min.min(nanos);
            self.max = self.max.max(nanos);
        }
        // Welford's update keeps mean and variance exact enough over billions of samples.
        self.count += 1;
        let value = nanos as f64;
        let delta = value - self.mean;
        self.mean += delta / self.count as f64;
        self.sum_squared_deviation += delta * (value - self.mean);
    }

    /// The bins, made (with every sample so far, all zero, in the first) and unshared.
    fn bins_mut(&mut self) -> &mut [u64; BINS] {
        let count = self.count;
        let bins = self.bins.get_or_insert_with(|| {
            let mut bins = [0; BINS];
            bins[0] = count;
            Arc::new(bins)
        });
        Arc::make_mut(bins)
    }

    /// The count in each bin (all in the first while every sample is zero).
    pub fn bin_counts(&self) -> std::borrow::Cow<'_, [u64; BINS]> {
        match &self.bins {
            Some(bins) => std::borrow::Cow::Borrowed(bins),
            None => {
                let mut bins = [0; BINS];
                bins[0] = self.count;
                std::borrow::Cow::Owned(bins)
            }
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest sample (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Mean (0 when empty).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample standard deviation, as fio computes it (n − 1 in the denominator).
    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            (self.sum_squared_deviation / (self.count - 1) as f64).sqrt()
        }
    }

    /// The value at a percentile (0–100] as fio reports it: the value its bin stands for;
    /// 0 when empty.
    pub fn percentile(&self, percent: f64) -> u64 {
        let Some(bins) = &self.bins else {
            return 0;
        };
        let bin = latency_bins::percentile_bin(bins, self.count, percent).unwrap_or(BINS - 1);
        latency_bins::value_of(bin)
    }

    /// Fold another set of samples into this one (for group reporting).
    pub fn merge(&mut self, other: &LatencyStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        if self.bins.is_some() || other.bins.is_some() {
            let theirs = other.bin_counts();
            for (mine, theirs) in self.bins_mut().iter_mut().zip(theirs.iter()) {
                *mine += theirs;
            }
        }
        let total = self.count + other.count;
        let delta = other.mean - self.mean;
        self.mean += delta * other.count as f64 / total as f64;
        self.sum_squared_deviation += other.sum_squared_deviation
            + delta * delta * (self.count as f64) * (other.count as f64) / total as f64;
        self.count = total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Share of samples at or below `nanos`, in percent (for fio's `lat (usec): 250=..%` lines).
    pub fn share_at_or_below(&self, nanos: u64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let through = latency_bins::bin_of(nanos);
        let count: u64 = self.bin_counts()[..=through].iter().sum();
        100.0 * count as f64 / self.count as f64
    }
}

/// Read-only helpers for the output formats.
impl LatencyStats {
    /// Number of samples below `nanos`, for fio's latency buckets (`lat (usec): 20=..%`).
    /// Exact when `nanos` is at or below the minimum or above the maximum; otherwise a
    /// histogram bucket that straddles `nanos` counts as not below it, so that samples at
    /// a round boundary (10 µs exactly) land above it, as fio counts them.
    pub fn count_below(&self, nanos: u64) -> u64 {
        if self.count == 0 || nanos <= self.min {
            return 0;
        }
        if nanos > self.max {
            return self.count;
        }
        self.bin_counts()[..latency_bins::bin_of(nanos)]
            .iter()
            .sum()
    }
}

/// One direction (read, write or trim) of one job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirectionStats {
    /// Bytes completed.
    pub io_bytes: u64,
    /// Requests completed.
    pub total_ios: u64,
    /// Requests that completed with an error.
    pub errors: u64,
    /// Submission latency: from the job issuing the request to the scheduler accepting it.
    pub slat: LatencyStats,
    /// Completion latency: from submission to completion.
    pub clat: LatencyStats,
    /// Total latency: slat + clat.
    pub lat: LatencyStats,
    /// Bytes completed in each [`SAMPLE_WINDOW`] since the job started (or, for a job
    /// that logs its bandwidth, in each of its log's windows or per I/O).
    pub window_bytes: WindowSeries,
    /// Requests completed in each [`SAMPLE_WINDOW`] (or as the job's IOPS log samples).
    pub window_ios: WindowSeries,
    /// Bandwidth (KiB/s) and IOPS samples of a group folded from several jobs, summed as
    /// fio sums them; `None` for one job, whose samples come from its windows.
    pub group_samples: Option<[Samples; 2]>,
    /// Requests recorded by [`DirectionStats::record_without_slat`] whose (zero) submission
    /// latency and total latency are not yet in `slat` and `lat`; see [`DirectionStats::settle`].
    unsettled: u64,
}

impl DirectionStats {
    /// Record a completed request: `since_start` is its completion time relative to the job's start.
    pub fn record(&mut self, bytes: u64, slat: u64, clat: u64, since_start: Nanos) {
        self.settle();
        self.slat.record(slat);
        self.clat.record(clat);
        self.lat.record(slat + clat);
        self.count(bytes, clat, since_start);
    }

    /// [`DirectionStats::record`] for a request with no submission latency (every simulated
    /// one), in a third of the work: while every request so far had none, its submission
    /// latency is one more zero and its total latency its completion latency, so both are
    /// filled in once, by [`DirectionStats::settle`], instead of at every request. The
    /// figures come out exactly as if recorded one by one.
    pub fn record_without_slat(&mut self, bytes: u64, clat: u64, since_start: Nanos) {
        if self.slat.count() > 0 {
            return self.record(bytes, 0, clat, since_start);
        }
        self.clat.record(clat);
        self.unsettled += 1;
        self.count(bytes, clat, since_start);
    }

    /// Fill in the submission and total latencies [`DirectionStats::record_without_slat`]
    /// left out. Call it before reading `slat` or `lat`; recording and merging call it.
    pub fn settle(&mut self) {
        if self.unsettled == 0 {
            return;
        }
        // Nothing else was recorded: every total latency is the completion latency.
        self.slat = LatencyStats::zeros(self.unsettled);
        self.lat = self.clat.clone();
        self.unsettled = 0;
    }

    fn count(&mut self, bytes: u64, clat: Nanos, since_start: Nanos) {
        self.io_bytes += bytes;
        self.total_ios += 1;
        let sample = if self.window_bytes.per_io() {
            // fio's bandwidth of one I/O: bytes over its completion latency.
            bytes
                .saturating_mul(1_000_000)
                .checked_div(clat)
                .unwrap_or(0)
        } else {
            bytes
        };
        self.window_bytes.add(since_start, sample);
        self.window_ios.add(since_start, 1);
    }

    /// Bandwidth samples (KiB/s) over a run of `runtime`.
    pub fn bw_samples(&self, runtime: Nanos) -> Samples {
        match &self.group_samples {
            Some([bw, _]) => *bw,
            None => self.window_bytes.samples(runtime, 1.0 / 1024.0),
        }
    }

    /// IOPS samples over a run of `runtime`.
    pub fn iops_samples(&self, runtime: Nanos) -> Samples {
        match &self.group_samples {
            Some([_, iops]) => *iops,
            None => self.window_ios.samples(runtime, 1.0),
        }
    }

    /// Fold another job's direction into this one: counts and latencies. Its bandwidth
    /// and IOPS samples need the jobs' runtimes; [`JobStats::merge`] folds those.
    pub fn merge(&mut self, other: &DirectionStats) {
        self.settle();
        if other.unsettled > 0 {
            let mut settled = other.clone();
            settled.settle();
            return self.merge(&settled);
        }
        self.io_bytes += other.io_bytes;
        self.total_ios += other.total_ios;
        self.errors += other.errors;
        self.slat.merge(&other.slat);
        self.clat.merge(&other.clat);
        self.lat.merge(&other.lat);
    }

    /// Whether this direction moved any bytes: fio gives a direction a runtime, and reports
    /// it, only then (fio 3.33 `backend.c`, `update_runtime` under `td->io_bytes[ddir]`;
    /// `stat.c`, `show_thread_status_normal`), so a `cpuio` job's cycles, which move none,
    /// show neither a read section nor a rate.
    pub fn has_io(&self) -> bool {
        self.io_bytes > 0
    }

    /// The bandwidth and IOPS samples of a job whose runtime is `runtime` (none when this
    /// direction did no I/O).
    fn samples_over(&self, runtime: Nanos) -> [Samples; 2] {
        let runtime = if self.has_io() { runtime } else { 0 };
        [self.bw_samples(runtime), self.iops_samples(runtime)]
    }
}

/// Buckets of fio's `IO depths` line: 1, 2, 4, 8, 16, 32, >=64.
pub const DEPTH_BUCKETS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The statistics of one job (one process) or, after merging, of a reporting group.
#[derive(Debug, Clone, Default)]
pub struct JobStats {
    /// [read, write, trim].
    pub directions: [DirectionStats; 3],
    /// From the job's start (after ramp) to its last completion.
    pub runtime: Nanos,
    /// Submissions by how many requests the job had in flight then, in [`DEPTH_BUCKETS`].
    pub depth_counts: [u64; 7],
    /// Requests issued per direction.
    pub issued: [u64; 3],
    /// The first error's errno, 0 if none.
    pub error: i32,
    /// Zones the job reset to make room for its writes (`zonemode=zbd`).
    pub zone_resets: u64,
    /// What the job's thread cost the CPU (zero in a simulated run, which has no threads).
    pub cpu: CpuUsage,
    /// The depth search's outcome, when the job has a `latency_target`.
    pub latency_target: Option<crate::latency_target::LatencyTargetReport>,
    /// The steady-state detection's outcome, when the job has an `ss_dur`.
    pub steady_state: Option<crate::steady_state::SteadyStateReport>,
    /// The cgroups the job was moved into during the run, in order (a job file's
    /// `; ioslice-at: T job NAME cgroup=PATH`), each with the job's counts then: the cgroup
    /// totals charge each stretch of its I/O to the group it was in.
    pub moves: Vec<GroupMove>,
}

/// A job's move into another cgroup during the run, with what it had done by then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupMove {
    /// The group's path.
    pub group: String,
    /// When, from the job's start after its ramp (as [`JobStats::runtime`] counts).
    pub at: Nanos,
    /// I/Os completed per direction by then.
    pub ios: [u64; 3],
    /// Bytes moved per direction by then.
    pub bytes: [u64; 3],
}

/// A job thread's resource usage, as `getrusage` counts it: fio's `cpu` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuUsage {
    /// Time in user mode.
    pub user: Nanos,
    /// Time in the kernel.
    pub system: Nanos,
    /// Context switches, voluntary and involuntary.
    pub ctx: u64,
    /// Major page faults.
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
}

impl CpuUsage {
    /// Time in user and kernel mode as percentages of `runtime`, as fio reports them
    /// (0 for a zero runtime).
    pub fn percent_of(&self, runtime: Nanos) -> (f64, f64) {
        if runtime == 0 {
            return (0.0, 0.0);
        }
        let share = |time: Nanos| time as f64 * 100.0 / runtime as f64;
        (share(self.user), share(self.system))
    }

    /// Add another thread's usage (a reporting group's jobs together).
    pub fn add(&mut self, other: &CpuUsage) {
        self.user += other.user;
        self.system += other.system;
        self.ctx += other.ctx;
        self.majf += other.majf;
        self.minf += other.minf;
    }
}

impl JobStats {
    /// The statistics of a job of `spec`: bandwidth and IOPS sampled over fio's
    /// [`SAMPLE_WINDOW`], or as the job's bandwidth or IOPS log samples them, as fio does
    /// (over `log_avg_msec`, or per I/O when it is 0).
    pub fn for_job(spec: &crate::JobSpec) -> Self {
        let logs = &spec.logs;
        let series = |logged: bool| {
            if logged {
                WindowSeries::every(logs.avg_msec.saturating_mul(1_000_000))
            } else {
                WindowSeries::default()
            }
        };
        let direction = DirectionStats {
            window_bytes: series(logs.bw.is_some()),
            window_ios: series(logs.iops.is_some()),
            ..DirectionStats::default()
        };
        Self {
            directions: [direction.clone(), direction.clone(), direction],
            ..Self::default()
        }
    }

    /// The job moved into the cgroup at `group` at `at` (from its start after its ramp).
    pub fn moved_to(&mut self, group: &str, at: Nanos) {
        self.moves.push(GroupMove {
            group: group.to_string(),
            at,
            ios: self.directions.each_ref().map(|d| d.total_ios),
            bytes: self.directions.each_ref().map(|d| d.io_bytes),
        });
    }

    /// The statistics of a job of `spec` started afresh at the end of its ramp, in the
    /// cgroup this job was last moved into, if it was.
    pub fn restarted(&self, spec: &crate::JobSpec) -> Self {
        let mut fresh = Self::for_job(spec);
        if let Some(last) = self.moves.last() {
            fresh.moved_to(&last.group, 0);
        }
        fresh
    }

    /// Requests that completed with an error, every direction.
    pub fn total_errors(&self) -> u64 {
        self.directions.iter().map(|d| d.errors).sum()
    }

    /// Count a submission made with `in_flight` requests outstanding (this one included), in
    /// the largest bucket not above it, as fio's `io_u_mark_depth` does (io_u.c: 2–3 in `2`,
    /// 4–7 in `4`, …, 64 and more in `>=64`).
    pub fn record_depth(&mut self, in_flight: u32) {
        let bucket = DEPTH_BUCKETS
            .iter()
            .rposition(|&b| b <= in_flight)
            .unwrap_or(0);
        self.depth_counts[bucket] += 1;
    }

    /// Fold another job in (group reporting): sums, with the longest runtime; bandwidth
    /// and IOPS samples summed as fio sums them.
    pub fn merge(&mut self, other: &JobStats) {
        for (mine, theirs) in self.directions.iter_mut().zip(&other.directions) {
            let mut samples = mine.samples_over(self.runtime);
            let their_samples = theirs.samples_over(other.runtime);
            for (mine, theirs) in samples.iter_mut().zip(&their_samples) {
                mine.add(theirs);
            }
            mine.merge(theirs);
            mine.group_samples = Some(samples);
        }
        self.runtime = self.runtime.max(other.runtime);
        for (mine, theirs) in self.depth_counts.iter_mut().zip(&other.depth_counts) {
            *mine += theirs;
        }
        for (mine, theirs) in self.issued.iter_mut().zip(&other.issued) {
            *mine += theirs;
        }
        if self.error == 0 {
            self.error = other.error;
        }
        self.zone_resets += other.zone_resets;
        self.cpu.add(&other.cpu);
        // fio reports a group's search and steady state as its last job saw them.
        if other.latency_target.is_some() {
            self.latency_target = other.latency_target;
        }
        if other.steady_state.is_some() {
            self.steady_state.clone_from(&other.steady_state);
        }
    }
}

/// The system's description of an errno (`Input/output error`), as fio prints it.
pub fn error_text(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.find(" (os error") {
        Some(end) => text[..end].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_exact() {
        let mut stats = LatencyStats::default();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            stats.record(v * 1000);
        }
        assert_eq!(stats.count(), 8);
        assert_eq!(stats.min(), 2000);
        assert_eq!(stats.max(), 9000);
        assert!((stats.mean() - 5000.0).abs() < 1e-9);
        assert!((stats.stddev() - 2138.089935).abs() < 1e-3);
        // fio's bins: 4000 ns is in [4000, 4032), which stands for its middle.
        assert_eq!(stats.percentile(50.0), 4016);
        assert_eq!(stats.percentile(100.0), 9024);
    }

    #[test]
    fn merge_equals_recording_everything_once() {
        let mut a = LatencyStats::default();
        let mut b = LatencyStats::default();
        let mut all = LatencyStats::default();
        for v in 1..100u64 {
            let target = if v % 3 == 0 { &mut a } else { &mut b };
            target.record(v * 37);
            all.record(v * 37);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert!((a.mean() - all.mean()).abs() < 1e-6);
        assert!((a.stddev() - all.stddev()).abs() < 1e-6);
        assert_eq!(a.percentile(99.0), all.percentile(99.0));
    }

    #[test]
    fn recording_without_slat_then_settling_equals_recording_every_zero() {
        let samples: Vec<(u64, u64, Nanos)> = (1..500u64)
            .map(|i| (4096 * (i % 3 + 1), i * 7919 % 100_000 + 1, i * 3_000_000))
            .collect();
        let mut one_by_one = DirectionStats::default();
        let mut fast = DirectionStats::default();
        for &(bytes, clat, since) in &samples {
            one_by_one.record(bytes, 0, clat, since);
            fast.record_without_slat(bytes, clat, since);
        }
        fast.settle();
        assert_eq!(fast, one_by_one);
        // Merging settles what it needs; a later slat goes the slow way, still exact.
        let mut merged = DirectionStats::default();
        let mut unsettled = DirectionStats::default();
        unsettled.record_without_slat(4096, 10, 0);
        merged.merge(&unsettled);
        merged.record_without_slat(4096, 20, 1);
        merged.record(4096, 5, 30, 2);
        let mut expected = DirectionStats::default();
        expected.record(4096, 0, 10, 0);
        expected.record(4096, 0, 20, 1);
        expected.record(4096, 5, 30, 2);
        let figures = |d: &DirectionStats| {
            (
                d.io_bytes,
                d.total_ios,
                d.slat.clone(),
                d.clat.clone(),
                d.lat.clone(),
            )
        };
        assert_eq!(figures(&merged), figures(&expected));
    }

    #[test]
    fn a_job_that_logs_bandwidth_or_iops_samples_them_as_its_log_does() {
        let spec = |options: &str| {
            let text = format!("[j]\n{options}");
            let options = crate::jobfile::ParseOptions::default();
            crate::jobfile::parse_str(&text, "j.fio", &options)
                .expect("parses")
                .jobs[0]
                .clone()
        };
        let ms = 1_000_000;
        let record = |stats: &mut JobStats| {
            for i in 0..10u64 {
                // 4 KiB in 100 µs: 40960 by fio's per-I/O bandwidth.
                stats.directions[0].record_without_slat(4096, 100_000, i * 100 * ms);
            }
        };
        // Per I/O: ten bandwidth samples of 40960; IOPS keeps fio's 500 ms windows.
        let mut per_io = JobStats::for_job(&spec("write_bw_log=x\n"));
        record(&mut per_io);
        let bw = per_io.directions[0].bw_samples(1000 * ms);
        assert_eq!(
            (bw.count, bw.min, bw.max, bw.mean),
            (10, 40960, 40960, 40960.0)
        );
        // The window that ends with the run has no sample.
        let iops = per_io.directions[0].iops_samples(1000 * ms);
        assert_eq!((iops.count, iops.mean), (1, 10.0));
        // log_avg_msec=200: IOPS over 200 ms windows, two I/Os each, 10 per second.
        let mut windows = JobStats::for_job(&spec("write_iops_log=x\nlog_avg_msec=200\n"));
        record(&mut windows);
        let iops = windows.directions[0].iops_samples(1000 * ms);
        assert_eq!((iops.count, iops.min, iops.max), (4, 10, 10));
        assert_eq!(
            JobStats::for_job(&spec("")).directions,
            JobStats::default().directions
        );
    }

    #[test]
    fn depth_buckets() {
        let mut job = JobStats::default();
        for depth in [0, 1, 2, 3, 4, 7, 8, 15, 31, 32, 63, 64, 100] {
            job.record_depth(depth);
        }
        // fio's io_u_mark_depth: 1 (and nothing) in 1, 2–3 in 2, 4–7 in 4, 8–15 in 8, …
        assert_eq!(job.depth_counts, [2, 2, 2, 2, 1, 2, 2]);
    }
}
