//! A protected group's latencies over a window, judged against its target: by the share of
//! requests that missed it on a non-rotational device (a p90), by the mean on a rotational
//! one (`latency_stat` and `latency_sum_ok` of `block/blk-iolatency.c`).

use crate::Nanos;

/// Latencies counted over one window, or over windows added up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct LatencyStat {
    /// Requests completed.
    pub total: u64,
    /// Those that took the target or longer.
    pub missed: u64,
    /// Their latencies added up.
    pub sum: u128,
}

impl LatencyStat {
    /// Count a completion of `latency` against `target`.
    pub fn record(&mut self, latency: Nanos, target: Nanos) {
        self.total += 1;
        if latency >= target {
            self.missed += 1;
        }
        self.sum += u128::from(latency);
    }

    /// Add `other`'s counts.
    pub fn add(&mut self, other: &LatencyStat) {
        self.total += other.total;
        self.missed += other.missed;
        self.sum += other.sum;
    }

    /// The mean latency, 0 without requests.
    pub fn mean(&self) -> Nanos {
        if self.total == 0 {
            return 0;
        }
        u64::try_from(self.sum / u128::from(self.total)).unwrap_or(Nanos::MAX)
    }

    /// Whether the target was met: on a non-rotational device fewer than a tenth of the
    /// requests (at least one) missed it; on a rotational one the mean is within it.
    pub fn met(&self, target: Nanos, rotational: bool) -> bool {
        if rotational {
            self.mean() <= target
        } else {
            self.missed < (self.total / 10).max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_on_flash_mean_on_disks() {
        let mut stat = LatencyStat::default();
        for latency in [1, 2, 3, 4, 5, 6, 7, 8, 9] {
            stat.record(latency, 10);
        }
        assert!(stat.met(10, false));
        stat.record(100, 10);
        assert_eq!((stat.total, stat.missed), (10, 1));
        assert!(
            !stat.met(10, false),
            "one in ten missed: p90 past the target"
        );
        assert_eq!(stat.mean(), 14);
        assert!(!stat.met(10, true));
        assert!(stat.met(14, true));
        for _ in 0..10 {
            stat.record(1, 10);
        }
        assert!(stat.met(10, false), "one in twenty");
        assert!(LatencyStat::default().met(1, false));
    }
}
