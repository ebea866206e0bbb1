//! Numbers every output format derives from the recorded statistics: rates, bandwidth
//! and IOPS samples, latency distribution buckets, depth distributions.

use super::units::percent;
use crate::report::JobDescription;
pub(crate) use crate::stats::Samples;
use crate::stats::{DirectionStats, JobStats, LatencyStats};

/// Direction names in fio's order.
pub(crate) const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// The completion-latency percentiles fio lists by default.
pub(crate) const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Whether a direction did any I/O.
pub(crate) fn has_io(dir: &DirectionStats) -> bool {
    dir.has_io()
}

/// Nanoseconds to whole milliseconds.
pub(crate) fn millis(nanos: u64) -> u64 {
    nanos / 1_000_000
}

/// Runtime of one direction in nanoseconds: the job's runtime if it did I/O that way, else 0.
pub(crate) fn dir_runtime(stats: &JobStats, dir: usize) -> u64 {
    if has_io(&stats.directions[dir]) {
        stats.runtime
    } else {
        0
    }
}

/// `count` per second over `runtime` nanoseconds, truncated; 0 for a zero runtime.
pub(crate) fn per_second(count: u64, runtime: u64) -> u64 {
    if runtime == 0 {
        return 0;
    }
    let rate = u128::from(count) * NANOS_PER_SEC / u128::from(runtime);
    u64::try_from(rate).unwrap_or(u64::MAX)
}

/// `count` per second over `runtime` nanoseconds as a float; 0 for a zero runtime.
pub(crate) fn per_second_f(count: u64, runtime: u64) -> f64 {
    if runtime == 0 {
        0.0
    } else {
        count as f64 * 1e9 / runtime as f64
    }
}

/// The submission latency to report: none for synchronous engines, as in fio, which
/// measures none for them.
pub(crate) fn reported_slat<'a>(
    desc: &JobDescription,
    dir: &'a DirectionStats,
) -> Option<&'a LatencyStats> {
    let sync = crate::IoEngine::named(&desc.ioengine).is_synchronous();
    (!sync && dir.slat.count() > 0).then_some(&dir.slat)
}

/// Bandwidth samples of a direction, in KiB/s.
pub(crate) fn bw_samples(stats: &JobStats, dir: usize) -> Samples {
    stats.directions[dir].bw_samples(dir_runtime(stats, dir))
}

/// IOPS samples of a direction.
pub(crate) fn iops_samples(stats: &JobStats, dir: usize) -> Samples {
    stats.directions[dir].iops_samples(dir_runtime(stats, dir))
}

/// Labels of fio's latency buckets in nanoseconds, microseconds and milliseconds.
pub(crate) const LAT_NSEC_LABELS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// Microsecond bucket labels (same as nanoseconds).
pub(crate) const LAT_USEC_LABELS: [&str; 10] = LAT_NSEC_LABELS;
/// Millisecond bucket labels.
pub(crate) const LAT_MSEC_LABELS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// Upper edges (exclusive, in units) of the first eleven buckets of each scale.
const LAT_EDGES: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// fio's completion-latency distribution of a job, in percent: 10 nanosecond, 10
/// microsecond and 12 millisecond buckets; a bucket `L` holds latencies below `L` and at
/// or above the previous label. Non-empty buckets show at least 0.01%.
pub(crate) struct LatencyBuckets {
    /// Nanosecond buckets.
    pub nsec: [f64; 10],
    /// Microsecond buckets.
    pub usec: [f64; 10],
    /// Millisecond buckets (the last is `>=2000`).
    pub msec: [f64; 12],
}

/// The latency distribution of all of a job's completions.
pub(crate) fn latency_buckets(stats: &JobStats) -> LatencyBuckets {
    let mut clat = LatencyStats::default();
    for dir in &stats.directions {
        clat.merge(&dir.clat);
    }
    let total = clat.count();
    let below = |nanos: u64| clat.count_below(nanos);
    let share = |low: u64, high: Option<u64>| {
        let count = high.map_or(total, below).saturating_sub(below(low));
        let p = percent(count as f64, total as f64);
        if count > 0 && p < 0.01 {
            0.01
        } else {
            p
        }
    };
    let scale = |unit: u64, slots: usize| -> Vec<f64> {
        (0..slots)
            .map(|i| {
                let low = match i {
                    0 if unit == 1 => 0,
                    0 => unit,
                    _ => LAT_EDGES[i - 1] * unit,
                };
                share(low, LAT_EDGES.get(i).map(|edge| edge * unit))
            })
            .collect()
    };
    let mut out = LatencyBuckets {
        nsec: [0.0; 10],
        usec: [0.0; 10],
        msec: [0.0; 12],
    };
    out.nsec.copy_from_slice(&scale(1, 10));
    out.usec.copy_from_slice(&scale(1_000, 10));
    out.msec.copy_from_slice(&scale(1_000_000, 12));
    out
}

/// A distribution in percent as fio shows depths: non-empty buckets show at least 0.1%.
pub(crate) fn distribution(counts: &[u64]) -> Vec<f64> {
    let total: u64 = counts.iter().sum();
    counts
        .iter()
        .map(|&c| {
            let p = percent(c as f64, total as f64);
            if c > 0 && p < 0.1 {
                0.1
            } else {
                p
            }
        })
        .collect()
}

/// The submit/complete distribution: the simulator submits and reaps one request at a
/// time, so every batch falls in fio's `4` bucket (1–4) when any I/O was issued (with
/// bytes or not: a `cpuio` job's cycles count).
pub(crate) fn batch_distribution(stats: &JobStats) -> [f64; 7] {
    let any = stats.directions.iter().any(|d| d.total_ios > 0);
    let mut out = [0.0; 7];
    if any {
        out[1] = 100.0;
    }
    out
}
