//! ioslice's HTML report: one self-contained page from one or more runs and comparisons.
//!
//! A [`Report`] holds [`RunRecord`]s and [`ComparisonRecord`]s; [`render_html`] makes the
//! page. Every record is serde data, so a run can write its record as JSON and
//! `ioslice report` can read several back and render them together.
//!
//! - A run made by ioslice: [`RunRecord::new`] from its [`ioslice_fio::RunReport`], its
//!   [`Settings`] ([`Settings::simulated`] from the simulation's configuration, or
//!   [`Settings::real`] for a device or file), the [`BandwidthSeries`] a
//!   [`BandwidthRecorder`] made from the trace, and optionally the decision timeline of an
//!   [`ioslice_timeline::TimelineRecorder`].
//! - A run made by fio (or ioslice's fio-format JSON): [`RunRecord::from_fio_json`]; it has
//!   no bandwidth series and no timeline, and the page says so.
//! - A comparison: [`ComparisonRecord`] with a [`ComparisonCell`] per run
//!   ([`ComparisonCell::from_report`]), each optionally with the original post's
//!   [`SeedFigures`].
//! - Files written apart: [`Report::read`] takes a report, a run or comparison record, or
//!   fio-format JSON, and [`Report::extend`] puts them together.
//!
//! # The page
//!
//! Per run: the settings (device with every parameter, scheduler with every tunable, value,
//! default and unit, controller, host, seed), a table of the jobs, bandwidth over time per
//! job, stacked per cgroup when jobs name cgroups, latency percentiles per job (p1 …
//! p99.99, log axis) and the latency CDF per job (log axis), and the decision timeline
//! ([`ioslice_timeline::render_html`]) when recorded. Per comparison: grouped bars
//! (scheduler × clients, or per cgroup for a job file with cgroups) with the original
//! post's figures beside ioslice's in a lighter shade, and a table. Every chart's `<svg>`
//! carries `class="chart"` and `data-points="N"`, the data points or bars it drew.
//!
//! Nothing is fetched: CSS and SVG are inline, and the only script is the timeline's. All
//! text is escaped. The same report gives the same bytes: no time stamps, no hash-map order,
//! and plotters' output is a function of its input.
//!
//! # Charts and fonts
//!
//! The charts are drawn by `plotters` with `default-features = false` and only the features
//! `svg_backend`, `line_series` and `area_series`. Without `ttf` or `ab_glyph`, plotters
//! sizes text with its built-in estimate (0.7 em a character) instead of a font file, which
//! is all an SVG needs: the SVG backend writes `<text>` elements, and the browser draws
//! them in its own sans-serif face. So the crate needs no fontconfig, no FreeType and no
//! embedded font, and labels may be a little wider or narrower than plotters reckoned.
//!
//! # Size
//!
//! Bandwidth series are bounded by successive halving of their windows (at most 1000
//! points; see [`bandwidth`]); a CDF line is thinned to at most 300 points (every `k`-th
//! bin, see [`charts::latency`]); a percentile line has fio's 17 points. The record and page
//! of a 30 s, 4-job simulated run (751 windows of 40 ms, 17 719 timeline marks) take about
//! 3 ms and 102 KiB, the timeline's fragment included as it renders today
//! (`bench/report-size.sh`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bandwidth;
pub mod charts;
pub mod comparison;
pub mod fio_json;
pub mod html;
pub mod load;
pub mod model;
pub mod settings;
pub mod smoothing;
pub mod text;

pub use bandwidth::{BandwidthRecorder, BandwidthSeries, ProcessSeries};
pub use model::{
    ClientBandwidth, ComparisonCell, ComparisonRecord, DirectionRecord, GroupBandwidth, JobRecord,
    LatencyRecord, Percentile, Report, RunRecord, SeedFigures,
};
pub use settings::{DeviceSettings, SchedulerSettings, Setting, Settings};

/// The report as one self-contained HTML document.
pub fn render_html(report: &Report) -> String {
    html::page(report)
}
