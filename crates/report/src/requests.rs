//! Requests over time: how many requests each process completed in each time window, the
//! series the IOPS overlay draws ([`crate::overlay`]). ioslice's runs count them beside
//! their bytes ([`crate::BandwidthRecorder`], in the same windows); fio's `write_iops_log`
//! files give them too ([`crate::fio_log`]).

use ioslice_core::Nanos;
use serde::{Deserialize, Serialize};

/// The requests one process completed in one direction, window by window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessRequests {
    /// The process's index in the run, as [`crate::ProcessSeries::process`].
    pub process: u32,
    /// Its name: the job's, or `flusher`.
    pub name: String,
    /// `read`, `write` or `trim`.
    pub direction: String,
    /// Requests completed in each window, from the run's start.
    pub requests: Vec<u64>,
}

impl ProcessRequests {
    /// Requests in the whole series.
    pub fn total(&self) -> u64 {
        self.requests.iter().sum()
    }
}

/// A run's completed requests over time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestSeries {
    /// The window length, ns.
    pub window_ns: Nanos,
    /// Every process and direction that completed any request, by process then direction;
    /// every series has the same number of windows.
    pub series: Vec<ProcessRequests>,
}

impl RequestSeries {
    /// The same series with process `i` (for `i ≥ 1`) named `names[i - 1]`.
    pub fn named(mut self, names: &[String]) -> Self {
        for series in &mut self.series {
            if let Some(name) = job_name(series.process, names) {
                series.name.clone_from(name);
            }
        }
        self
    }
}

/// Process `process`'s name among `names`, the job processes' names in order: process `i`
/// (for `i ≥ 1`) is `names[i - 1]`; process 0, the flusher, has none there.
pub(crate) fn job_name(process: u32, names: &[String]) -> Option<&String> {
    (process as usize).checked_sub(1).and_then(|i| names.get(i))
}
