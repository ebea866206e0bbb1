//! Which statistics a simulation keeps for each job ([`Statistics`]), and recording one
//! completed request accordingly.
//!
//! The default keeps what fio reports: bytes and requests, submission, completion and total
//! latency (fio's latency bins each) and bandwidth over fixed windows. [`Statistics::Totals`]
//! keeps each job's bytes and requests only, as exact as ever: the counterpart of the
//! engine's option of the same name, and of Linux's BFQ without `CONFIG_DEBUG_BLK_CGROUP`.
//! It is there to measure what the statistics cost (`cargo bench -p ioslice-sim --bench
//! iospeed`); a run without it loses its latency percentiles.

use ioslice_core::Nanos;
use ioslice_fio::DirectionStats;

/// Which statistics a simulation keeps ([`run_with_statistics`](super::run_with_statistics)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Statistics {
    /// Everything fio reports (the default).
    #[default]
    Detailed,
    /// Each job's completed bytes and requests only: no latencies, no bandwidth samples.
    Totals,
}

impl Statistics {
    /// Record a request of `bytes` that took `clat` and completed `since_start` after its
    /// job's ramp ended.
    pub(super) fn record(
        self,
        direction: &mut DirectionStats,
        bytes: u64,
        clat: Nanos,
        since_start: Nanos,
    ) {
        match self {
            // A simulated request has no submission latency.
            Statistics::Detailed => direction.record_without_slat(bytes, clat, since_start),
            Statistics::Totals => {
                direction.io_bytes += bytes;
                direction.total_ios += 1;
            }
        }
    }
}
