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
//! - A run fio logged: [`fio_log::runs`] makes a run of each prefix's `write_bw_log`,
//!   `write_iops_log` and `write_lat_log` files, with a bandwidth series, a requests series
//!   and each job's latency.
//! - Files written apart: [`Report::read`] takes a report, a run or comparison record, or
//!   fio-format JSON, and [`Report::extend`] puts them together.
//!
//! A page of two runs or more opens with their latency percentiles, latency CDFs,
//! bandwidth over time and IOPS over time on shared axes ([`overlay`]), each run labelled by the settings that
//! differ between the runs ([`labels`]).
//!
//! # The page
//!
//! Per run: the settings (device with every parameter, scheduler with every tunable, value,
//! default and unit, controller, host, seed), a table of the jobs (bandwidth in KB/s of 1000
//! bytes, as the terminal's tables print it), bandwidth over time per job and, when jobs
//! name cgroups, per cgroup ([`charts::timeseries`]: a smoothing window and a view the
//! reader picks, see [`smoothing`]), latency percentiles per job (p1 … p99.99, log axis)
//! and the latency CDF per job (log axis), latencies below the clock's resolution left out
//! and said, and the decision timeline ([`ioslice_timeline::render_html`]) when recorded.
//! Per comparison: grouped bars (scheduler × clients, or per cgroup for a job file with
//! cgroups) with the original post's figures beside ioslice's in a lighter shade where there
//! are any, and a table. Every chart's `<svg>` carries `class="chart"`, `data-points="N"`,
//! the data points or bars it drew, and `data-plot`, its plotting area; its legend is an
//! HTML list beside it, never over the data ([`charts::palette`]).
//!
//! Nothing is fetched: CSS and SVG are inline, and the scripts (the bandwidth charts'
//! controls, the timeline's zoom) are inline too. All text is escaped. The same report
//! gives the same bytes: no time stamps, no hash-map order, and plotters' output is a
//! function of its input.
//!
//! # Charts and fonts
//!
//! The bars and latency charts are drawn by `plotters` with `default-features = false` and
//! only the features `svg_backend`, `line_series` and `area_series` (the bandwidth charts
//! are written directly, see [`charts::timeseries`]). Without `ttf` or `ab_glyph`, plotters
//! sizes text with its built-in estimate (0.7 em a character) instead of a font file, which
//! is all an SVG needs: the SVG backend writes `<text>` elements, and the browser draws
//! them in its own sans-serif face. So the crate needs no fontconfig, no FreeType and no
//! embedded font, and labels may be a little wider or narrower than plotters reckoned.
//!
//! # Size
//!
//! Bandwidth series are bounded by successive halving of their windows (at most 1000
//! points; see [`bandwidth`]), and each drawn line of each view to 300 points (fewer past
//! eight lines; see [`smoothing`]); a CDF line is thinned to at most 300 points (every `k`-th
//! bin, see [`charts::latency`]); a percentile line has fio's 17 points. The record and page
//! of a 30 s, 4-job simulated run (751 windows of 40 ms, 8819 timeline marks kept) take
//! about 9 ms and 1.9 MB: 71 KB for the bandwidth chart with all its views, 1.76 MB for the
//! timeline's fragment (`bench/report-size.sh`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bandwidth;
pub mod charts;
pub mod comparison;
pub mod fio_json;
pub mod fio_log;
pub mod groups;
pub mod html;
pub mod labels;
pub mod load;
pub mod model;
pub mod overlay;
pub mod requests;
pub mod settings;
pub mod smoothing;
pub mod text;

pub use bandwidth::{BandwidthRecorder, BandwidthSeries, ProcessSeries};
pub use model::{
    ClientBandwidth, ComparisonCell, ComparisonRecord, DirectionRecord, GroupBandwidth, JobRecord,
    LatencyRecord, Percentile, Report, RunRecord, SeedFigures,
};
pub use requests::{ProcessRequests, RequestSeries};
pub use settings::{DeviceSettings, SchedulerSettings, Setting, Settings};

/// The report as one self-contained HTML document.
pub fn render_html(report: &Report) -> String {
    html::page(report)
}
