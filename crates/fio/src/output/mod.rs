//! fio's output formats: normal (human-readable), JSON, JSON plus (`json+`: JSON with
//! each completion latency's histogram bins), and terse version 3.
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
//! cgroups first appear among the jobs, then any cgroup that holds no job itself but was
//! given a weight or a limit (its block has no rate lines):
//!
//! ```text
//! Group totals (cgroup=grp1, weight=100, jobs=8):
//!   limits: rbps=8MiB/s wbps=max riops=max wiops=max burst=100ms
//!   read: IOPS=2500, BW=9.77MiB/s (10.2MB/s)(97.7MiB/10000msec)
//! ```
//!
//! The weight is the one the scheduler gave the cgroup ([`RunReport::cgroups`]), with its
//! own default and range (CFQ 500, BFQ 100 when none is set); there is none for the root
//! and none under a scheduler that does not weigh cgroups (noop, deadline, mq-deadline,
//! anticipatory).
//! The `limits:` line appears for a limited cgroup: io.max's four rates (`max` for
//! unlimited) and the burst in force.
//!
//! The JSON output gets a top-level `"cgroups"` array after fio's own keys, each entry
//! with `name`, `weight` (when the scheduler weighs cgroups), `limits` (when limited: the
//! rates set, `rbps`/`wbps` in bytes/s and `riops`/`wiops` per second, and `burst_ns`),
//! `jobs`, and `read`/`write`/`trim` objects holding
//! `io_bytes`, `io_kbytes`, `bw_bytes`, `bw` (KiB/s), `iops`, `runtime` (ms) and `total_ios`
//! with fio's meanings. The totals appear whenever any job names a cgroup; jobs that name
//! none are in the root cgroup, `/`. A cgroup's bandwidth is its bytes over its longest
//! runtime, as in fio's `Run status group` lines.

use std::fmt;
use std::str::FromStr;

use crate::report::RunReport;

mod cgroups;
mod groups;
mod json;
mod metrics;
mod normal;
pub mod status_line;
mod terse;
use crate::units;

pub use json::{json, json_plus};
pub use normal::normal;
pub use terse::terse;

/// One of fio's `--output-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OutputFormat {
    /// fio's default human-readable output.
    #[default]
    Normal,
    /// fio's JSON output.
    Json,
    /// fio's `json+` output: JSON with each completion latency's `bins`.
    JsonPlus,
    /// fio's terse (version 3) output.
    Terse,
    /// Several formats at once (`normal,json`), see [`FormatList`].
    List(FormatList),
}

/// Several of fio's formats at once, as `--output-format=normal,json` asks: each printed
/// once, in fio's order whatever the order asked (terse, then JSON, then normal), `json+`
/// standing for `json` when both are asked. fio prints the normal output's job header lines
/// as the jobs start, before the others; here they stay with the normal output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FormatList {
    /// `normal` is in the list.
    pub normal: bool,
    /// `json` is.
    pub json: bool,
    /// `json+` is.
    pub json_plus: bool,
    /// `terse` is.
    pub terse: bool,
}

impl FormatList {
    /// Add one format (a list's formats join).
    fn with(mut self, format: OutputFormat) -> Self {
        match format {
            OutputFormat::Normal => self.normal = true,
            OutputFormat::Json => self.json = true,
            OutputFormat::JsonPlus => self.json_plus = true,
            OutputFormat::Terse => self.terse = true,
            OutputFormat::List(list) => {
                self.normal |= list.normal;
                self.json |= list.json;
                self.json_plus |= list.json_plus;
                self.terse |= list.terse;
            }
        }
        self
    }

    /// The formats asked, in the order of their names.
    fn names(&self) -> Vec<&'static str> {
        [
            (self.normal, "normal"),
            (self.json, "json"),
            (self.json_plus, "json+"),
            (self.terse, "terse"),
        ]
        .into_iter()
        .filter_map(|(asked, name)| asked.then_some(name))
        .collect()
    }

    /// Each format asked, rendered in fio's order.
    fn render(&self, report: &RunReport) -> String {
        let mut out = String::new();
        if self.terse {
            out.push_str(&terse(report));
        }
        if self.json_plus {
            out.push_str(&json_plus(report));
        } else if self.json {
            out.push_str(&json(report));
        }
        if self.normal {
            out.push_str(&normal(report));
        }
        out
    }
}

/// An `--output-format` value that is not one of [`OutputFormat`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown output format `{}`: valid values are normal, json, json+, terse, or several separated by commas",
            self.0
        )
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for OutputFormat {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.contains(',') {
            let list = s.split(',').try_fold(FormatList::default(), |list, name| {
                let format = name.parse().map_err(|_| UnknownFormat(s.to_string()))?;
                Ok(list.with(format))
            })?;
            return Ok(OutputFormat::List(list));
        }
        match s.trim().to_ascii_lowercase().as_str() {
            "normal" => Ok(OutputFormat::Normal),
            "json" => Ok(OutputFormat::Json),
            "json+" => Ok(OutputFormat::JsonPlus),
            "terse" => Ok(OutputFormat::Terse),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            OutputFormat::Normal => "normal",
            OutputFormat::Json => "json",
            OutputFormat::JsonPlus => "json+",
            OutputFormat::Terse => "terse",
            OutputFormat::List(list) => return f.write_str(&list.names().join(",")),
        };
        f.write_str(name)
    }
}

/// Render a run in the given format.
pub fn render(report: &RunReport, format: OutputFormat) -> String {
    match format {
        OutputFormat::Normal => normal(report),
        OutputFormat::Json => json(report),
        OutputFormat::JsonPlus => json_plus(report),
        OutputFormat::Terse => terse(report),
        OutputFormat::List(list) => list.render(report),
    }
}
