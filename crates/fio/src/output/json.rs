//! fio's JSON output (`--output-format=json`), with fio's key order and whitespace.

use std::fmt::Write;

use ioslice_core::limit::Limits;
use ioslice_core::Nanos;

use super::cgroups::{cgroup_totals, CgroupDirection, CgroupTotals};
use super::groups::{self, group_of, share_of_group, RunGroup};
use super::metrics::{
    self, bw_samples, dir_runtime, distribution, iops_samples, millis, per_second, per_second_f,
    reported_slat, DIRECTIONS, PERCENTILES,
};
use super::units::{self, f6};
use crate::latency_bins;
use crate::report::{DiskUtil, JobReport, RunReport};
use crate::stats::{DirectionStats, JobStats, LatencyStats};
use crate::steady_state::SteadyStateReport;

/// A JSON value in the order it is to be printed.
#[derive(Debug, Clone)]
enum Value {
    /// An integer.
    Int(i128),
    /// A float, printed with six decimals.
    Float(f64),
    /// A string.
    Str(String),
    /// An object, keys in order.
    Object(Vec<(String, Value)>),
    /// An array.
    Array(Vec<Value>),
}

/// Builds an object key by key.
#[derive(Default)]
struct Object(Vec<(String, Value)>);

impl Object {
    fn int(mut self, key: &str, value: impl Into<i128>) -> Self {
        self.0.push((key.to_string(), Value::Int(value.into())));
        self
    }

    fn float(mut self, key: &str, value: f64) -> Self {
        self.0.push((key.to_string(), Value::Float(value)));
        self
    }

    fn str(mut self, key: &str, value: &str) -> Self {
        self.0
            .push((key.to_string(), Value::Str(value.to_string())));
        self
    }

    fn value(mut self, key: &str, value: Value) -> Self {
        self.0.push((key.to_string(), value));
        self
    }

    fn done(self) -> Value {
        Value::Object(self.0)
    }
}

impl Value {
    /// Print as fio does: `"key" : value`, two spaces of indentation per level.
    fn write(&self, out: &mut String, level: usize) {
        match self {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => out.push_str(&f6(*f)),
            Value::Str(s) => quote(out, s),
            Value::Object(pairs) => {
                out.push('{');
                for (i, (key, value)) in pairs.iter().enumerate() {
                    separator(out, i, level + 1);
                    quote(out, key);
                    out.push_str(" : ");
                    value.write(out, level + 1);
                }
                close(out, level, '}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, value) in items.iter().enumerate() {
                    separator(out, i, level + 1);
                    value.write(out, level + 1);
                }
                close(out, level, ']');
            }
        }
    }
}

fn separator(out: &mut String, index: usize, level: usize) {
    if index > 0 {
        out.push(',');
    }
    out.push('\n');
    indent(out, level);
}

fn close(out: &mut String, level: usize, bracket: char) {
    out.push('\n');
    indent(out, level);
    out.push(bracket);
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// A JSON string literal.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Render a run as fio's JSON output, with a top-level `"cgroups"` array after fio's keys
/// whenever a job names a cgroup.
pub fn json(report: &RunReport) -> String {
    render_json(report, Bins::Without)
}

/// Render a run as fio's `json+` output: the JSON output with each completion latency's
/// `bins`, the count in every non-empty latency bin keyed by the value it stands for (ns).
pub fn json_plus(report: &RunReport) -> String {
    render_json(report, Bins::With)
}

/// Whether completion latencies carry their bins (`json+`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bins {
    Without,
    With,
}

fn render_json(report: &RunReport, bins: Bins) -> String {
    let folded = groups::fold(&report.jobs);
    let run_groups = groups::run_groups(&folded);
    let jobs = folded
        .iter()
        .map(|job| job_value(job, group_of(&run_groups, job), bins, report.elapsed))
        .collect();
    let mut top = Object::default()
        .str("fio version", &report.version)
        .int("timestamp", report.timestamp)
        .int("timestamp_ms", i128::from(report.timestamp) * 1000)
        .str("time", &units::ctime(report.timestamp));
    // fio leaves the key out when no `[global]` section set anything, and for several job
    // files.
    if !report.global_options.is_empty() {
        top = top.value("global options", options(&report.global_options));
    }
    top = top.value("jobs", Value::Array(jobs)).value(
        "disk_util",
        Value::Array(report.disk_util.iter().map(disk).collect()),
    );
    let cgroups = cgroup_totals(&report.jobs, &report.cgroups);
    if !cgroups.is_empty() {
        top = top.value(
            "cgroups",
            Value::Array(cgroups.iter().map(cgroup).collect()),
        );
    }
    let mut out = String::new();
    top.done().write(&mut out, 0);
    out.push('\n');
    out
}

fn options(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), Value::Str(v.clone())))
            .collect(),
    )
}

/// One `jobs[]` entry.
fn job_value(job: &JobReport, group: Option<&RunGroup>, bins: Bins, elapsed: Nanos) -> Value {
    let d = &job.description;
    let s = &job.stats;
    let runtime_ms = millis(s.runtime);
    let (usr_cpu, sys_cpu) = s.cpu.percent_of(s.runtime);
    let mut o = Object::default()
        .str("jobname", &d.name)
        .int("groupid", d.groupid)
        .int("error", s.error)
        .int("eta", 0)
        .int("elapsed", millis(elapsed).div_ceil(1000))
        .value("job options", options(&d.options));
    for (dir, name) in DIRECTIONS.iter().enumerate() {
        o = o.value(name, direction(job, dir, group, bins));
    }
    let mut o = o
        .value(
            "sync",
            Object::default()
                .int("total_ios", 0)
                .value("lat_ns", moments(None))
                .done(),
        )
        .int("job_runtime", runtime_ms)
        .float("usr_cpu", usr_cpu)
        .float("sys_cpu", sys_cpu)
        .int("ctx", s.cpu.ctx)
        .int("majf", s.cpu.majf)
        .int("minf", s.cpu.minf)
        .value("iodepth_level", depth_levels(s))
        .value("iodepth_submit", batches(s))
        .value("iodepth_complete", batches(s))
        .value_latency(s)
        .value_latency_target(s, d.iodepth);
    // fio adds these when a job goes on past errors; here whenever a job had any.
    if s.total_errors() > 0 {
        o = o
            .int("total_err", s.total_errors())
            .int("first_error", s.error);
    }
    if let Some(ss) = &s.steady_state {
        o = o.value("steadystate", steady_state(ss));
    }
    o.done()
}

/// fio's `steadystate` object: the criterion, whether it was met, and the samples judged.
fn steady_state(ss: &SteadyStateReport) -> Value {
    let c = &ss.criterion;
    let pct = if c.percent { "%" } else { "" };
    // fio prints the limit and the judged value as C floats.
    let as_float = |x: f64| f6(f64::from(x as f32));
    let ints = |xs: &[u64]| Value::Array(xs.iter().map(|&x| Value::Int(x.into())).collect());
    let data = Object::default()
        .int("bw_mean", ss.bw_mean())
        .int("iops_mean", ss.iops_mean())
        .value("iops", ints(&ss.iops))
        .value("bw", ints(&ss.bw))
        .done();
    Object::default()
        .str("ss", &format!("{}:{}{pct}", c.name(), as_float(c.limit)))
        .int("duration", ss.duration)
        .int("attained", u8::from(ss.attained))
        .str("criterion", &format!("{}{pct}", as_float(ss.value)))
        .float("max_deviation", ss.max_deviation)
        .float("slope", ss.slope)
        .value("data", data)
        .done()
}

impl Object {
    /// `latency_depth`, `latency_target` (ns), `latency_percentile`, `latency_window` (µs):
    /// the depth search's, or the job's `iodepth` and fio's defaults without one.
    fn value_latency_target(self, stats: &JobStats, iodepth: u32) -> Self {
        let (depth, target, percentile, window) = match &stats.latency_target {
            Some(l) => (l.depth, l.target_ns, l.percentile, l.window_ns / 1_000),
            None => (iodepth, 0, 100.0, 0),
        };
        self.int("latency_depth", depth)
            .int("latency_target", target)
            .float("latency_percentile", percentile)
            .int("latency_window", window)
    }

    /// `latency_ns`, `latency_us`, `latency_ms`.
    fn value_latency(self, stats: &JobStats) -> Self {
        let b = metrics::latency_buckets(stats);
        self.value("latency_ns", shares(&metrics::LAT_NSEC_LABELS, &b.nsec))
            .value("latency_us", shares(&metrics::LAT_USEC_LABELS, &b.usec))
            .value("latency_ms", shares(&metrics::LAT_MSEC_LABELS, &b.msec))
    }
}

fn shares(labels: &[&str], values: &[f64]) -> Value {
    Value::Object(
        labels
            .iter()
            .zip(values)
            .map(|(l, v)| (l.to_string(), Value::Float(*v)))
            .collect(),
    )
}

fn depth_levels(stats: &JobStats) -> Value {
    let labels = ["1", "2", "4", "8", "16", "32", ">=64"];
    shares(&labels, &distribution(&stats.depth_counts))
}

fn batches(stats: &JobStats) -> Value {
    let labels = ["0", "4", "8", "16", "32", "64", ">=64"];
    shares(&labels, &metrics::batch_distribution(stats))
}

/// A `read`/`write`/`trim` object.
fn direction(job: &JobReport, dir: usize, group: Option<&RunGroup>, bins: Bins) -> Value {
    let stats = &job.stats;
    let d: &DirectionStats = &stats.directions[dir];
    let runtime = dir_runtime(stats, dir);
    let bw_bytes = per_second(d.io_bytes, runtime);
    let bw = bw_samples(stats, dir);
    let iops = iops_samples(stats, dir);
    let agg = if bw.count > 0 {
        share_of_group(bw.mean, group, dir)
    } else {
        0.0
    };
    Object::default()
        .int("io_bytes", d.io_bytes)
        .int("io_kbytes", d.io_bytes >> 10)
        .int("bw_bytes", bw_bytes)
        .int("bw", bw_bytes / 1024)
        .float("iops", per_second_f(d.total_ios, runtime))
        .int("runtime", millis(runtime))
        .int("total_ios", d.total_ios)
        .int("short_ios", 0)
        .int("drop_ios", 0)
        .value("slat_ns", moments(reported_slat(&job.description, d)))
        .value("clat_ns", with_percentiles(&d.clat, bins))
        .value("lat_ns", moments(Some(&d.lat)))
        .int("bw_min", bw.min)
        .int("bw_max", bw.max)
        .float("bw_agg", agg)
        .float("bw_mean", bw.mean)
        .float("bw_dev", bw.stddev)
        .int("bw_samples", bw.count)
        .int("iops_min", iops.min)
        .int("iops_max", iops.max)
        .float("iops_mean", iops.mean)
        .float("iops_stddev", iops.stddev)
        .int("iops_samples", iops.count)
        .done()
}

fn moments_object(lat: Option<&LatencyStats>) -> Object {
    let empty = LatencyStats::default();
    let lat = lat.unwrap_or(&empty);
    Object::default()
        .int("min", lat.min())
        .int("max", lat.max())
        .float("mean", lat.mean())
        .float("stddev", lat.stddev())
        .int("N", lat.count())
}

/// `{min, max, mean, stddev, N}`; all zero for `None`.
fn moments(lat: Option<&LatencyStats>) -> Value {
    moments_object(lat).done()
}

/// `clat_ns`: the moments plus a `percentile` map when there are samples, and for `json+`
/// the `bins` map.
fn with_percentiles(lat: &LatencyStats, bins: Bins) -> Value {
    let o = moments_object(Some(lat));
    if lat.count() == 0 {
        return o.done();
    }
    let map = PERCENTILES
        .iter()
        .map(|&p| (format!("{p:.6}"), Value::Int(lat.percentile(p).into())))
        .collect();
    let o = o.value("percentile", Value::Object(map));
    match bins {
        Bins::Without => o.done(),
        Bins::With => o.value("bins", bin_map(lat)).done(),
    }
}

/// fio's `bins`: each non-empty latency bin, in order, keyed by the value it stands for.
fn bin_map(lat: &LatencyStats) -> Value {
    let counts = lat.bin_counts();
    let pairs = counts
        .iter()
        .enumerate()
        .filter(|(_, &count)| count > 0)
        .map(|(bin, &count)| {
            (
                latency_bins::value_of(bin).to_string(),
                Value::Int(count.into()),
            )
        })
        .collect();
    Value::Object(pairs)
}

/// A `disk_util[]` entry.
fn disk(d: &DiskUtil) -> Value {
    Object::default()
        .str("name", &d.name)
        .int("read_ios", d.ios[0])
        .int("write_ios", d.ios[1])
        .int("read_merges", d.merges[0])
        .int("write_merges", d.merges[1])
        .int("read_ticks", d.ticks[0])
        .int("write_ticks", d.ticks[1])
        .int("in_queue", d.in_queue)
        .float("util", d.util)
        .done()
}

/// A `cgroups[]` entry (ioslice's addition; fio has no such key).
fn cgroup(totals: &CgroupTotals) -> Value {
    let settings = &totals.settings;
    let mut o = Object::default().str("name", &totals.name);
    if let Some(weight) = settings.weight {
        o = o.int("weight", weight);
    }
    if !settings.limits.is_unlimited() {
        o = o.value("limits", limits(&settings.limits));
    }
    o = o.int("jobs", totals.jobs);
    for (name, d) in DIRECTIONS.iter().zip(&totals.directions) {
        o = o.value(name, cgroup_direction(d));
    }
    o.done()
}

/// A cgroup's `limits` object: the rates it has (`rbps`, `wbps` in bytes/s, `riops`,
/// `wiops` in requests/s; a rate not listed is unlimited) and `burst_ns`, the burst in force.
fn limits(limits: &Limits) -> Value {
    let mut o = Object::default();
    for (name, rate) in [
        ("rbps", limits.read_bps),
        ("wbps", limits.write_bps),
        ("riops", limits.read_iops),
        ("wiops", limits.write_iops),
    ] {
        if let Some(rate) = rate {
            o = o.int(name, rate);
        }
    }
    o.int("burst_ns", limits.burst_or_default()).done()
}

/// A cgroup's `read`/`write`/`trim` object, with the keys and units of fio's job entries.
fn cgroup_direction(d: &CgroupDirection) -> Value {
    Object::default()
        .int("io_bytes", d.io_bytes)
        .int("io_kbytes", d.io_bytes >> 10)
        .int("bw_bytes", d.bw_bytes())
        .int("bw", d.bw_bytes() / 1024)
        .float("iops", d.iops_f())
        .int("runtime", millis(d.runtime))
        .int("total_ios", d.total_ios)
        .done()
}
