//! fio's output formats: normal (human-readable), JSON, and terse version 3.
//!
//! Each printer takes a finished [`RunReport`], folds `group_reporting` entries into one
//! per group, and formats numbers the way fio does (auto-scaled binary and decimal
//! units, latencies in the unit fio would choose, fio's percentile list and buckets).
//! The simulator has no CPU accounting, so CPU fields are zero.

use std::fmt;
use std::str::FromStr;

use crate::report::RunReport;

mod groups;
mod json;
mod metrics;
mod normal;
mod terse;
mod units;

pub use json::json;
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

/// Render a run in the given format.
pub fn render(report: &RunReport, format: OutputFormat) -> String {
    match format {
        OutputFormat::Normal => normal(report),
        OutputFormat::Json => json(report),
        OutputFormat::Terse => terse(report),
    }
}
