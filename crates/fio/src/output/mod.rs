//! fio's output formats: normal (human-readable), JSON, and terse version 3.
//!
//! Each printer takes a finished [`RunReport`], folds `group_reporting` entries into one
//! per group, and formats numbers the way fio does (auto-scaled binary and decimal
//! units, latencies in the unit fio would choose, fio's percentile list and buckets).
//! The simulator has no CPU accounting, so CPU fields are zero.
//!
//! When any job names a cgroup, the normal and JSON outputs also carry per-cgroup totals
//! (below); terse output is fio's, unchanged.
//!
//! # Per-cgroup totals
//!
//! After the job blocks, the normal output prints one block per cgroup, in the order the
//! cgroups first appear among the jobs:
//!
//! ```text
//! Group totals (cgroup=grp1, weight=100, jobs=8):
//!   read: IOPS=2500, BW=9.77MiB/s (10.2MB/s)(97.7MiB/10000msec)
//! ```
//!
//! and the JSON output gets a top-level `"cgroups"` array after fio's own keys, each entry
//! with `name`, `weight` (when known), `jobs`, and `read`/`write`/`trim` objects holding
//! `io_bytes`, `io_kbytes`, `bw_bytes`, `bw` (KiB/s), `iops`, `runtime` (ms) and `total_ios`
//! with fio's meanings. The totals appear whenever any job names a cgroup; jobs that name
//! none are in the root cgroup, `/`. A cgroup's bandwidth is its bytes over its longest
//! runtime, as in fio's `Run status group` lines. Weights are not part of a
//! [`RunReport`]: pass them in [`RenderOptions`].

use std::fmt;
use std::str::FromStr;

use crate::report::RunReport;

mod cgroups;
mod groups;
mod json;
mod metrics;
mod normal;
mod terse;
mod units;

pub use json::{json, json_with};
pub use normal::{normal, normal_with};
pub use terse::terse;

/// One of fio's `--output-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OutputFormat {
    /// fio's default human-readable output.
    #[default]
    Normal,
    /// fio's JSON output.
    Json,
    /// fio's terse (version 3) output.
    Terse,
}

/// An `--output-format` value that is not one of [`OutputFormat`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown output format `{}`: valid values are normal, json, terse",
            self.0
        )
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for OutputFormat {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" => Ok(OutputFormat::Normal),
            "json" => Ok(OutputFormat::Json),
            "terse" => Ok(OutputFormat::Terse),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutputFormat::Normal => "normal",
            OutputFormat::Json => "json",
            OutputFormat::Terse => "terse",
        })
    }
}

/// What the printers need to know beyond the [`RunReport`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// The weight the run gave each cgroup, by path (`a/b`); a later entry for the same
    /// path overrides an earlier one. A cgroup not listed is printed without a weight.
    pub cgroup_weights: Vec<(String, u32)>,
}

/// Render a run in the given format.
pub fn render(report: &RunReport, format: OutputFormat) -> String {
    render_with(report, format, &RenderOptions::default())
}

/// Render a run in the given format, with what the report does not carry.
pub fn render_with(report: &RunReport, format: OutputFormat, options: &RenderOptions) -> String {
    match format {
        OutputFormat::Normal => normal_with(report, options),
        OutputFormat::Json => json_with(report, options),
        OutputFormat::Terse => terse(report),
    }
}
