//! fio's default, human-readable output (`--output-format=normal`).

use std::fmt::Write;

use super::cgroups::{cgroup_totals, CgroupTotals};
use super::groups::{self, group_of, share_of_group, RunGroup};
use super::metrics::{
    self, bw_samples, dir_runtime, distribution, has_io, iops_samples, millis, per_second,
    reported_slat, Samples, DIRECTIONS, PERCENTILES,
};
use super::units::{self, bytes, latency_unit, percentile_unit, rate, scaled, TimeUnit};
use crate::report::{DiskUtil, JobReport, RunReport};
use crate::stats::{LatencyStats, DEPTH_BUCKETS};
use crate::steady_state::{Metric, SteadyStateReport};

/// Render a run as fio's normal output, with per-cgroup totals after the job blocks
/// whenever a job names a cgroup.
pub fn normal(report: &RunReport) -> String {
    let mut out = String::new();
    preamble(&mut out, report);
    let folded = groups::fold(&report.jobs);
    let run_groups = groups::run_groups(&folded);
    for job in &folded {
        job_block(&mut out, job, group_of(&run_groups, job), report.timestamp);
    }
    for totals in cgroup_totals(&report.jobs, &report.cgroups) {
        cgroup_block(&mut out, &totals);
    }
    for group in &run_groups {
        run_status(&mut out, group);
    }
    disk_stats(&mut out, &report.disk_util);
    out
}

/// Per-job description lines, the version line, and `Starting N processes`.
fn preamble(out: &mut String, report: &RunReport) {
    let mut previous: Option<(&str, u32)> = None;
    let mut ellipsis = false;
    for job in &report.jobs {
        let d = &job.description;
        let key = (d.name.as_str(), d.groupid);
        if previous == Some(key) {
            if !ellipsis {
                out.push_str("...\n");
                ellipsis = true;
            }
            continue;
        }
        previous = Some(key);
        ellipsis = false;
        let _ = writeln!(
            out,
            "{}: (g={}): rw={}, bs={}, ioengine={}, iodepth={}",
            d.name, d.groupid, d.rw, d.bs_line, d.ioengine, d.iodepth
        );
    }
    let processes: u32 = report.jobs.iter().map(|j| j.description.jobs.max(1)).sum();
    let plural = if processes == 1 { "" } else { "es" };
    let _ = writeln!(
        out,
        "{}\nStarting {processes} process{plural}\n",
        report.version
    );
}

/// Everything fio prints for one job or reporting group.
fn job_block(out: &mut String, job: &JobReport, group: Option<&RunGroup>, timestamp: u64) {
    let d = &job.description;
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}: pid={}: {}",
        d.name,
        d.groupid,
        d.jobs.max(1),
        job.stats.error,
        d.pid,
        units::ctime(timestamp)
    );
    for dir in 0..DIRECTIONS.len() {
        if has_io(&job.stats.directions[dir]) {
            direction(out, job, dir, group);
        }
    }
    latency_lines(out, job);
    resource_lines(out, job);
}

/// The block of one direction: rates, latencies, percentiles, bandwidth and IOPS samples.
fn direction(out: &mut String, job: &JobReport, dir: usize, group: Option<&RunGroup>) {
    let stats = &job.stats;
    let d = &stats.directions[dir];
    let runtime = dir_runtime(stats, dir);
    let bw = per_second(d.io_bytes, runtime);
    let zone_resets = if dir == 1 {
        format!("; {} zone resets", stats.zone_resets)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {}: {}{zone_resets}",
        DIRECTIONS[dir],
        rate_summary(per_second(d.total_ios, runtime), bw, d.io_bytes, runtime)
    );
    if let Some(slat) = reported_slat(&job.description, d) {
        latency_line(out, "slat", slat);
    }
    latency_line(out, "clat", &d.clat);
    latency_line(out, "lat", &d.lat);
    percentile_block(out, &d.clat);
    sample_lines(out, job, dir, group);
}

/// `IOPS=29.7k, BW=116MiB/s (122MB/s)(16.0MiB/138msec)`: rates, bytes and runtime (ns).
fn rate_summary(iops: u64, bw: u64, io_bytes: u64, runtime: u64) -> String {
    format!(
        "IOPS={}, BW={} ({})({}/{}msec)",
        scaled(iops, units::SIG_FIGS, false, ""),
        rate(bw, true),
        rate(bw, false),
        bytes(io_bytes, true),
        millis(runtime)
    )
}

/// `Group totals (cgroup=grp1, weight=100, jobs=8):`, its limits when it has any
/// (`  limits: rbps=8MiB/s wbps=max riops=max wiops=max burst=100ms`), and a rate line per
/// direction with I/O.
fn cgroup_block(out: &mut String, totals: &CgroupTotals) {
    let weight = totals
        .settings
        .weight
        .map(|w| format!(", weight={w}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "Group totals (cgroup={}{weight}, jobs={}):",
        totals.name, totals.jobs
    );
    if let Some(limits) = totals.settings.limits_text() {
        let _ = writeln!(out, "  limits: {limits}");
    }
    for (name, d) in DIRECTIONS.iter().zip(&totals.directions) {
        if d.has_io() {
            let summary = rate_summary(d.iops(), d.bw_bytes(), d.io_bytes, d.runtime);
            let _ = writeln!(out, "  {name}: {summary}");
        }
    }
}

/// `    clat (usec): min=8, max=1962, avg=33.12, stdev=36.77`, omitted without samples.
fn latency_line(out: &mut String, name: &str, lat: &LatencyStats) {
    if lat.count() == 0 {
        return;
    }
    let unit = latency_unit(lat.min(), lat.max(), lat.stddev());
    let scale = unit.nanos as f64;
    let _ = writeln!(
        out,
        "    {name:>4} ({}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        unit.name,
        scaled(lat.min() / unit.nanos, 6, false, ""),
        scaled(lat.max() / unit.nanos, 6, false, ""),
        units::finite(lat.mean() / scale),
        units::finite(lat.stddev() / scale)
    );
}

/// The `clat percentiles (usec):` block, four entries per line.
fn percentile_block(out: &mut String, clat: &LatencyStats) {
    if clat.count() == 0 {
        return;
    }
    let values: Vec<u64> = PERCENTILES.iter().map(|&p| clat.percentile(p)).collect();
    let unit = percentile_unit(
        values.iter().copied().min().unwrap_or(0),
        values.iter().copied().max().unwrap_or(0),
    );
    let _ = write!(out, "    clat percentiles ({}):\n     |", unit.name);
    for (i, (p, v)) in PERCENTILES.iter().zip(&values).enumerate() {
        let last = i + 1 == values.len();
        if i > 0 && i % 4 == 0 {
            out.push_str("     |");
        }
        let _ = write!(out, " {p:5.2}th=[{:5}]", nearest(*v, unit));
        if !last {
            out.push(',');
        }
        if last || i % 4 == 3 {
            out.push('\n');
        }
    }
}

/// `value` in `unit`, rounded to the nearest whole unit (the histogram already reports
/// the top of a value's 1%-wide bucket, so rounding up again would overstate it).
fn nearest(value: u64, unit: TimeUnit) -> u64 {
    value / unit.nanos + u64::from(value % unit.nanos >= unit.nanos.div_ceil(2))
}

/// The `bw (  KiB/s):` and `iops        :` lines, when at least one full window was sampled.
fn sample_lines(out: &mut String, job: &JobReport, dir: usize, group: Option<&RunGroup>) {
    let bw = bw_samples(&job.stats, dir);
    if bw.count > 0 {
        let per = share_of_group(bw.mean, group, dir);
        let (shown, unit) = if bw.mean > 1024.0 * 1024.0 {
            (scale_samples(bw, 1024.0), "MiB")
        } else {
            (bw, "KiB")
        };
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={:.2}%, avg={:5.2}, stdev={:5.2}, samples={}",
            shown.min, shown.max, per, shown.mean, shown.stddev, shown.count
        );
    }
    let iops = iops_samples(&job.stats, dir);
    if iops.count > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            iops.min, iops.max, iops.mean, iops.stddev, iops.count
        );
    }
}

/// Samples divided by `by` (KiB/s to MiB/s).
fn scale_samples(s: Samples, by: f64) -> Samples {
    Samples {
        min: (s.min as f64 / by) as u64,
        max: (s.max as f64 / by) as u64,
        mean: s.mean / by,
        stddev: s.stddev / by,
        count: s.count,
    }
}

/// `  lat (usec)   : 10=0.34%, 20=23.14%, …`, five buckets per line, non-empty only.
fn latency_lines(out: &mut String, job: &JobReport) {
    let buckets = metrics::latency_buckets(&job.stats);
    bucket_lines(out, "nsec", &metrics::LAT_NSEC_LABELS, &buckets.nsec);
    bucket_lines(out, "usec", &metrics::LAT_USEC_LABELS, &buckets.usec);
    bucket_lines(out, "msec", &metrics::LAT_MSEC_LABELS, &buckets.msec);
}

fn bucket_lines(out: &mut String, unit: &str, labels: &[&str], shares: &[f64]) {
    let shown: Vec<String> = labels
        .iter()
        .zip(shares)
        .filter(|(_, &share)| share > 0.0)
        .map(|(label, share)| format!("{label}={share:.2}%"))
        .collect();
    for line in shown.chunks(5) {
        let _ = writeln!(out, "  lat ({unit})   : {}", line.join(", "));
    }
}

/// cpu, IO depths, submit/complete, issued and latency-target lines.
fn resource_lines(out: &mut String, job: &JobReport) {
    let stats = &job.stats;
    let cpu = &stats.cpu;
    let (usr, sys) = cpu.percent_of(stats.runtime);
    let _ = writeln!(
        out,
        "  cpu          : usr={usr:.2}%, sys={sys:.2}%, ctx={}, majf={}, minf={}",
        cpu.ctx, cpu.majf, cpu.minf
    );
    let depth_labels: Vec<String> = DEPTH_BUCKETS
        .iter()
        .map(|b| {
            if *b == 64 {
                ">=64".to_string()
            } else {
                b.to_string()
            }
        })
        .collect();
    dist_line(
        out,
        "  IO depths    : ",
        &depth_labels,
        &distribution(&stats.depth_counts),
    );
    let batch_labels = ["0", "4", "8", "16", "32", "64", ">=64"].map(String::from);
    let batches = metrics::batch_distribution(stats);
    dist_line(out, "     submit    : ", &batch_labels, &batches);
    dist_line(out, "     complete  : ", &batch_labels, &batches);
    let [r, w, t] = stats.issued;
    let (target, window, percentile, depth) = match &stats.latency_target {
        Some(l) => (l.target_ns, l.window_ns / 1_000, l.percentile, l.depth),
        None => (0, 0, 100.0, job.description.iodepth),
    };
    let _ = writeln!(
        out,
        "     issued rwts: total={r},{w},{t},0 short=0,0,0,0 dropped=0,0,0,0\n     \
         latency   : target={target}, window={window}, percentile={percentile:.2}%, depth={depth}"
    );
    let errors = stats.total_errors();
    if errors > 0 {
        let _ = writeln!(
            out,
            "     errors    : total={errors}, first_error={}/<{}>",
            stats.error,
            crate::stats::error_text(stats.error)
        );
    }
    if let Some(ss) = &stats.steady_state {
        steady_state_line(out, ss);
    }
}

/// `  steadystate  : attained=yes, bw=71.9MiB/s (75.4MB/s), iops=18.4k, iops mean dev=10.021%`
fn steady_state_line(out: &mut String, ss: &SteadyStateReport) {
    let c = &ss.criterion;
    let bw = ss.bw_mean();
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}",
        if ss.attained { "yes" } else { "no" },
        rate(bw, true),
        rate(bw, false),
        scaled(ss.iops_mean(), units::SIG_FIGS, false, ""),
        if c.metric == Metric::Iops {
            "iops"
        } else {
            "bw"
        },
        if c.slope { " slope" } else { " mean dev" },
        units::finite(ss.value),
        if c.percent { "%" } else { "" },
    );
}

fn dist_line(out: &mut String, lead: &str, labels: &[String], shares: &[f64]) {
    let items: Vec<String> = labels
        .iter()
        .zip(shares)
        .map(|(l, s)| format!("{l}={s:.1}%"))
        .collect();
    let _ = writeln!(out, "{lead}{}", items.join(", "));
}

/// `Run status group N (all jobs):` and one line per direction with I/O.
fn run_status(out: &mut String, group: &RunGroup) {
    let _ = writeln!(out, "\nRun status group {} (all jobs):", group.id);
    for (name, g) in ["   READ", "  WRITE", "   TRIM"]
        .iter()
        .zip(&group.directions)
    {
        if g.members == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{name}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            rate(g.agg_bw, true),
            rate(g.agg_bw, false),
            rate(g.min_bw, true),
            rate(g.max_bw, true),
            rate(g.min_bw, false),
            rate(g.max_bw, false),
            bytes(g.io_bytes, true),
            bytes(g.io_bytes, false),
            g.min_run_ms(),
            g.max_run_ms()
        );
    }
}

/// `Disk stats (read/write):` and one line per device.
fn disk_stats(out: &mut String, disks: &[DiskUtil]) {
    if disks.is_empty() {
        return;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        let _ = writeln!(
            out,
            "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
            d.name,
            d.ios[0],
            d.ios[1],
            d.merges[0],
            d.merges[1],
            d.ticks[0],
            d.ticks[1],
            d.in_queue,
            units::finite(d.util)
        );
    }
}
