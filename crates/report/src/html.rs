//! The page: one self-contained HTML document (inline CSS, inline SVG, the timeline's own
//! inline script; nothing fetched) with a section per comparison, then one per run. This module
//! owns the page's frame, a run's section (settings tables, job table, charts, timeline),
//! [`crate::comparison`] owns a comparison's section, [`crate::text`] escaping and units.

use std::fmt::Write;

use crate::charts::latency::{self, LatencyLine};
use crate::charts::timeseries::{self, Line, Measure, TimeChart};
use crate::model::{Report, RunRecord};
use crate::settings::Setting;
use crate::text::{bytes, escape, kb_per_s, latency_label, BANDWIDTH_UNIT};

const STYLE: &str = "body{font-family:sans-serif;margin:0 auto;max-width:1040px;padding:0 16px 48px;color:#222;background:#fff}\
h1{font-size:1.6em;border-bottom:2px solid #1f77b4;padding-bottom:4px}\
h2{font-size:1.3em;margin-top:2.2em;border-bottom:1px solid #ccc}\
h3{font-size:1.05em;margin:1.4em 0 .4em}\
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.85em}\
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}\
th{background:#f3f6fa}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.set td{font-weight:bold}\
details{margin:.3em 0}summary{cursor:pointer;font-weight:bold}\
.note{color:#555;font-size:.9em}.missing{color:#8a5a00;background:#fff6e0;padding:4px 8px;border-left:3px solid #e0a000}\
svg.chart{display:block;max-width:100%;height:auto;margin:.6em 0}\
figure.chart-box{display:flex;flex-wrap:wrap;align-items:flex-start;gap:4px 12px;margin:.6em 0}\
figure.chart-box svg.chart{flex:1 1 640px;min-width:0;width:100%;margin:0}\
figure.chart-box figcaption{flex:1 0 100%}\
.ts-controls{flex:1 0 100%;font-size:.9em}.ts-controls label{margin-right:1.2em}\
ul.legend{flex:0 1 190px;list-style:none;margin:28px 0 0;padding:0;font-size:.8em;max-height:340px;overflow-y:auto}\
ul.legend li{display:flex;align-items:flex-start;gap:4px;margin:1px 0;overflow-wrap:anywhere}ul.legend svg{flex:0 0 26px;margin-top:2px}\
.chart-error{color:#a00}nav li{margin:2px 0}";

/// The most points a bandwidth chart draws over all its series.
const CHART_POINTS: usize = 12_000;

/// A page of the report's frame and style around `body` (already HTML), titled `title`.
pub fn standalone(title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = write!(
        out,
        "<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
    let _ = writeln!(out, "<h1>{}</h1>", escape(title));
    out.push_str(body);
    out.push_str("</body>\n</html>\n");
    out
}

/// The whole page.
pub fn page(report: &Report) -> String {
    let mut out = String::with_capacity(256 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>ioslice report</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<h1>ioslice report</h1>\n");
    if report.runs.is_empty() && report.comparisons.is_empty() {
        out.push_str("<p class=\"missing\">The report holds no run and no comparison.</p>\n");
    }
    out.push_str("<nav><ul>\n");
    if report.runs.len() > 1 {
        out.push_str("<li><a href=\"#overlay\">The runs together</a></li>\n");
    }
    for (i, comparison) in report.comparisons.iter().enumerate() {
        let _ = writeln!(
            out,
            "<li><a href=\"#comparison-{i}\">Comparison: {}</a></li>",
            escape(&comparison.title)
        );
    }
    for (i, run) in report.runs.iter().enumerate() {
        let _ = writeln!(
            out,
            "<li><a href=\"#run-{i}\">Run: {}</a></li>",
            escape(&run.title)
        );
    }
    out.push_str("</ul></nav>\n");
    // A comparison sums its runs up, so it comes first; the runs follow as its details.
    for (i, comparison) in report.comparisons.iter().enumerate() {
        crate::comparison::section(&mut out, i, comparison);
    }
    crate::overlay::section(&mut out, &report.runs);
    for (i, run) in report.runs.iter().enumerate() {
        run_section(&mut out, i, run);
    }
    if report.runs.iter().any(|run| run.bandwidth.is_some()) {
        out.push_str("<script>");
        out.push_str(timeseries::SCRIPT);
        out.push_str("</script>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// One run's section.
fn run_section(out: &mut String, index: usize, run: &RunRecord) {
    let _ = writeln!(
        out,
        "<section class=\"run\" id=\"run-{index}\">\n<h2>{}</h2>",
        escape(&run.title)
    );
    settings(out, run);
    let mut missing = Vec::new();
    if run.bandwidth.is_none() {
        missing.push("bandwidth over time (the source keeps no per-request record)");
    }
    if run.timeline.is_none() {
        missing.push("the decision timeline (not recorded for this run)");
    }
    if !missing.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"missing\">Not in this run: {}.</p>",
            escape(&missing.join("; "))
        );
    }
    jobs_table(out, run);
    if let Some(series) = &run.bandwidth {
        bandwidth_charts(out, index, run, &series.thinned(CHART_POINTS));
    }
    let lines: Vec<LatencyLine> = run
        .jobs
        .iter()
        .flat_map(|job| {
            job.directions.iter().map(move |d| LatencyLine {
                name: format!("{} ({})", job.name, d.direction),
                latency: &d.clat,
                style: 0,
            })
        })
        .filter(|line| line.latency.count > 0 || !line.latency.percentiles.is_empty())
        .enumerate()
        .map(|(index, line)| LatencyLine {
            style: index,
            ..line
        })
        .collect();
    out.push_str("<h3>Completion latency</h3>\n");
    if lines.is_empty() {
        out.push_str("<p class=\"missing\">No completion latency was recorded.</p>\n");
    } else {
        out.push_str(&latency::percentiles("Latency percentiles per job", &lines).figure());
        if let Some(note) = latency::below_resolution(&lines) {
            let _ = writeln!(
                out,
                "<p class=\"note below-resolution\">{}</p>",
                escape(&note)
            );
        }
        let from = if lines.iter().all(|l| !l.latency.bins.is_empty()) {
            "from fio's latency bins, thinned to at most 300 points a line"
        } else {
            "from the bins where the source has them, else from the percentiles alone"
        };
        let _ = writeln!(out, "<p class=\"note\">The CDF is drawn {from}.</p>");
        out.push_str(&latency::cdf("Latency CDF per job", &lines).figure());
    }
    if let Some(timeline) = &run.timeline {
        out.push_str("<h3>Decision timeline</h3>\n");
        out.push_str(&ioslice_timeline::render_html(
            timeline,
            &format!("tl-{index}"),
        ));
        out.push('\n');
    }
    out.push_str("</section>\n");
}

/// Bandwidth over time per job, and per cgroup when jobs name cgroups.
fn bandwidth_charts(
    out: &mut String,
    index: usize,
    run: &RunRecord,
    series: &crate::bandwidth::BandwidthSeries,
) {
    out.push_str("<h3>Bandwidth over time</h3>\n");
    let tunables: Vec<(String, String)> = run
        .settings
        .scheduler
        .tunables
        .iter()
        .map(|t| (t.name.clone(), t.value.clone()))
        .collect();
    let scheduler = run
        .settings
        .scheduler
        .name
        .as_deref()
        .unwrap_or(&run.settings.scheduler.spec);
    let slice_ns = crate::smoothing::slice_of(scheduler, &tunables);
    let default_why = match slice_ns {
        Some(slice) => format!(
            "starts at the shortest window of at least four of {scheduler}'s {} slices and two rounds in which each line has one, so that weighted shares show through the time slicing",
            latency_label(slice as f64)
        ),
        None => "starts at the shortest window of at least 100 ms".to_string(),
    };
    let _ = writeln!(
        out,
        "<p class=\"note\">{} The smoothing window {default_why}; the view shows instead the bytes each line has done, or its share of all the bytes done, since the start. {}.</p>",
        escape(&recorded_how(run, series.window_ns)),
        escape(BANDWIDTH_UNIT)
    );
    let lines: Vec<Line> = series
        .series
        .iter()
        .map(|s| Line {
            name: format!("{} ({})", s.name, s.direction),
            counts: &s.bytes,
        })
        .collect();
    out.push_str(&timeseries::render(&TimeChart {
        id: format!("run-{index}-jobs"),
        kind: "bandwidth",
        title: "Bandwidth per job".to_string(),
        window_ns: series.window_ns,
        lines,
        slice_ns,
        measure: Measure::Bytes,
        counts_attribute: false,
    }));
    if run.has_cgroups() {
        let layers = cgroup_layers(run, series);
        let lines = Line::of_pairs(&layers);
        out.push_str(&timeseries::render(&TimeChart {
            id: format!("run-{index}-cgroups"),
            kind: "cgroups",
            title: "Bandwidth per cgroup".to_string(),
            window_ns: series.window_ns,
            lines,
            slice_ns,
            measure: Measure::Bytes,
            counts_attribute: false,
        }));
    }
}

/// How the run's bandwidth was recorded, as a sentence.
fn recorded_how(run: &RunRecord, window_ns: u64) -> String {
    let window = latency_label(window_ns as f64);
    if run.settings.version.as_deref() == Some(crate::fio_log::WRITTEN_BY) {
        format!("Bytes from fio's bandwidth log, in windows of {window} (the median gap between its lines, or a 1000th of the run): each line's average over the time since the line before, or each logged request's size.")
    } else {
        format!("Bytes completed at the device, recorded in windows of {window} (windows start at 10 ms and double, merging pairs, whenever a series would pass 1000 points; with many jobs, adjacent windows are merged until the chart holds at most 12,000 points).")
    }
}

/// Per cgroup (`/` for the root, `flusher` for the flusher), the bytes of its processes
/// summed over directions, in order of first appearance.
fn cgroup_layers(
    run: &RunRecord,
    series: &crate::bandwidth::BandwidthSeries,
) -> Vec<(String, Vec<u64>)> {
    let windows = series.windows();
    let mut layers: Vec<(String, Vec<u64>)> = Vec::new();
    if !series.groups.is_empty() {
        // Where each request was charged: a job moved to another cgroup counts in each.
        layers.extend(
            series
                .groups
                .iter()
                .map(|g| (g.name.clone(), g.bytes.clone())),
        );
        for flusher in series.series.iter().filter(|s| s.process == 0) {
            match layers.iter_mut().find(|(name, _)| name == "flusher") {
                Some((_, total)) => total
                    .iter_mut()
                    .zip(&flusher.bytes)
                    .for_each(|(t, b)| *t += b),
                None => layers.push(("flusher".to_string(), flusher.bytes.clone())),
            }
        }
        return layers;
    }
    for s in &series.series {
        let name = match (s.process as usize).checked_sub(1) {
            None => "flusher".to_string(),
            Some(i) => match run.jobs.get(i) {
                Some(job) if !job.cgroup.is_empty() => job.cgroup.clone(),
                _ => "/".to_string(),
            },
        };
        let index = match layers.iter().position(|(n, _)| *n == name) {
            Some(found) => found,
            None => {
                layers.push((name, vec![0; windows]));
                layers.len() - 1
            }
        };
        for (total, bytes) in layers[index].1.iter_mut().zip(&s.bytes) {
            *total += bytes;
        }
    }
    layers
}

/// The settings tables.
fn settings(out: &mut String, run: &RunRecord) {
    let s = &run.settings;
    out.push_str("<table class=\"kv\">\n");
    let mut row = |name: &str, value: &str| {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(name),
            escape(value)
        );
    };
    row("job file", &s.job_file);
    if let Some(version) = &s.version {
        row("written by", version);
    }
    row(
        "device",
        &format!("{} — {}", s.device.spec, s.device.summary),
    );
    row("scheduler", &s.scheduler.spec);
    row(
        "controller",
        s.controller.as_deref().unwrap_or("not recorded"),
    );
    row(
        "seed",
        &s.seed
            .map_or_else(|| "not recorded".to_string(), |seed| seed.to_string()),
    );
    out.push_str("</table>\n");
    let device_title = format!(
        "Device {}: {} parameters{}",
        s.device.spec,
        s.device.params.len(),
        set_list(&s.device.params)
    );
    settings_table(out, &device_title, "source", &s.device.params, false);
    let scheduler_title = format!(
        "Scheduler {}: {} tunables{}",
        s.scheduler.name.as_deref().unwrap_or(&s.scheduler.spec),
        s.scheduler.tunables.len(),
        set_list(&s.scheduler.tunables)
    );
    settings_table(
        out,
        &scheduler_title,
        "what it does",
        &s.scheduler.tunables,
        true,
    );
    if !s.host.is_empty() {
        let host_title = format!("Host: {} settings{}", s.host.len(), set_list(&s.host));
        settings_table(out, &host_title, "what it models", &s.host, false);
    }
    if !s.groups.is_empty() {
        let title = format!("Groups: {} set by --cgroup", s.groups.len());
        settings_table(out, &title, "", &s.groups, false);
    }
    if !s.options.is_empty() {
        let options: Vec<Setting> = s
            .options
            .iter()
            .map(|(name, value)| Setting {
                name: name.clone(),
                value: value.clone(),
                ..Setting::default()
            })
            .collect();
        settings_table(out, "Global options", "", &options, false);
    }
}

/// A `<details>` with a table of settings; rows that were set are bold.
/// `, set: ncq=1, rpm=5400` for the settings that were set; empty when none was.
fn set_list(rows: &[Setting]) -> String {
    let set: Vec<String> = rows
        .iter()
        .filter(|s| s.set)
        .map(|s| format!("{}={}", s.name, s.value))
        .collect();
    if set.is_empty() {
        ", all at their defaults".to_string()
    } else {
        format!(", set: {}", set.join(", "))
    }
}

/// No table when there are no rows: the summary table above says what the device or
/// scheduler is (a real device, or one fio's JSON only names).
fn settings_table(out: &mut String, title: &str, note: &str, rows: &[Setting], open: bool) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<details{}><summary>{}</summary>",
        if open { " open" } else { "" },
        escape(title)
    );
    let _ = writeln!(
        out,
        "<table><tr><th>name</th><th>value</th><th>default</th><th>unit</th><th>{}</th></tr>",
        escape(note)
    );
    for s in rows {
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if s.set { " class=\"set\"" } else { "" },
            escape(&s.name),
            escape(&s.value),
            escape(s.default.as_deref().unwrap_or("")),
            escape(&s.unit),
            escape(&s.note)
        );
    }
    out.push_str("</table>\n</details>\n");
}

/// Every job and direction: bytes, bandwidth, IOPS, completion latency.
fn jobs_table(out: &mut String, run: &RunRecord) {
    out.push_str("<h3>Jobs</h3>\n<table class=\"jobs\"><tr><th>job</th><th>cgroup</th><th>dir</th><th>bytes</th><th>KB/s</th><th>IOPS</th><th>clat min</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n");
    let ns = |v: u64| {
        if v == 0 {
            "below resolution".to_string()
        } else {
            latency_label(v as f64)
        }
    };
    for job in &run.jobs {
        for d in &job.directions {
            let percentile = |wanted: f64| {
                d.clat
                    .percentiles
                    .iter()
                    .find(|p| (p.percent - wanted).abs() < 1e-9)
                    .map_or_else(|| "–".to_string(), |p| ns(p.value_ns))
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escape(&job.name),
                escape(if job.cgroup.is_empty() { "/" } else { &job.cgroup }),
                escape(&d.direction),
                escape(&bytes(d.io_bytes)),
                kb_per_s(d.bw_bytes),
                d.iops(),
                escape(&ns(d.clat.min_ns)),
                escape(&ns(d.clat.mean_ns)),
                escape(&percentile(50.0)),
                escape(&percentile(99.0)),
                escape(&percentile(99.9)),
                escape(&ns(d.clat.max_ns)),
            );
        }
    }
    let _ = writeln!(
        out,
        "</table>\n<p class=\"note\">{}; a latency below the clock's resolution (recorded as 0 ns) is said as such.</p>",
        escape(BANDWIDTH_UNIT)
    );
}
