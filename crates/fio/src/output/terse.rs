//! fio's terse output, version 3: one semicolon-separated line per job or reporting group.

use super::groups::{self, group_of, share_of_group, RunGroup};
use super::metrics::{
    self, bw_samples, dir_runtime, distribution, millis, per_second, reported_slat, PERCENTILES,
};
use super::units::f6;
use crate::report::{DiskUtil, JobReport, RunReport};
use crate::stats::LatencyStats;

/// Terse format version written.
const TERSE_VERSION: u32 = 3;
/// Percentile slots in a terse line; fio fills the unused ones with `0%=0`.
const PERCENTILE_SLOTS: usize = 20;

/// Render a run as fio's terse (version 3) output.
pub fn terse(report: &RunReport) -> String {
    let folded = groups::fold(&report.jobs);
    let run_groups = groups::run_groups(&folded);
    let mut out = String::new();
    for job in &folded {
        let mut fields = vec![
            TERSE_VERSION.to_string(),
            report.version.clone(),
            job.description.name.clone(),
            job.description.groupid.to_string(),
            job.stats.error.to_string(),
        ];
        for dir in 0..2 {
            direction(&mut fields, job, dir, group_of(&run_groups, job));
        }
        job_tail(&mut fields, job);
        for d in &report.disk_util {
            disk(&mut fields, d);
        }
        out.push_str(&fields.join(";"));
        out.push('\n');
    }
    out
}

/// Status of one direction: totals, latencies (µs), percentiles, bandwidth samples.
fn direction(fields: &mut Vec<String>, job: &JobReport, dir: usize, group: Option<&RunGroup>) {
    let stats = &job.stats;
    let d = &stats.directions[dir];
    let runtime = dir_runtime(stats, dir);
    fields.push((d.io_bytes >> 10).to_string());
    fields.push((per_second(d.io_bytes, runtime) / 1024).to_string());
    fields.push(per_second(d.total_ios, runtime).to_string());
    fields.push(millis(runtime).to_string());
    moments_us(fields, reported_slat(&job.description, d));
    moments_us(fields, Some(&d.clat));
    for &p in &PERCENTILES {
        fields.push(format!("{}%={}", f6(p), d.clat.percentile(p) / 1000));
    }
    fields.extend((PERCENTILES.len()..PERCENTILE_SLOTS).map(|_| "0%=0".to_string()));
    moments_us(fields, Some(&d.lat));
    let bw = bw_samples(stats, dir);
    let agg = if bw.count > 0 {
        share_of_group(bw.mean, group, dir)
    } else {
        0.0
    };
    fields.push(bw.min.to_string());
    fields.push(bw.max.to_string());
    fields.push(format!("{}%", f6(agg)));
    fields.push(f6(bw.mean));
    fields.push(f6(bw.stddev));
}

/// min;max;mean;stdev in microseconds; zeros for `None`.
fn moments_us(fields: &mut Vec<String>, lat: Option<&LatencyStats>) {
    let empty = LatencyStats::default();
    let lat = lat.unwrap_or(&empty);
    fields.push((lat.min() / 1000).to_string());
    fields.push((lat.max() / 1000).to_string());
    fields.push(f6(lat.mean() / 1000.0));
    fields.push(f6(lat.stddev() / 1000.0));
}

/// CPU, IO depths and the latency distribution (nanosecond buckets folded into the first
/// microsecond one, as terse has no nanosecond fields).
fn job_tail(fields: &mut Vec<String>, job: &JobReport) {
    let cpu = &job.stats.cpu;
    let (usr, sys) = cpu.percent_of(job.stats.runtime);
    fields.push(format!("{usr:.6}%"));
    fields.push(format!("{sys:.6}%"));
    fields.extend([cpu.ctx, cpu.majf, cpu.minf].map(|n| n.to_string()));
    let depths = distribution(&job.stats.depth_counts);
    fields.extend(depths.iter().map(|p| format!("{p:.1}%")));
    let buckets = metrics::latency_buckets(&job.stats);
    let mut usec = buckets.usec;
    usec[0] += buckets.nsec.iter().sum::<f64>();
    fields.extend(usec.iter().chain(&buckets.msec).map(|p| format!("{p:.2}%")));
}

/// name;read ios;write ios;read merges;write merges;read ticks;write ticks;in queue;util%.
fn disk(fields: &mut Vec<String>, d: &DiskUtil) {
    fields.push(d.name.clone());
    for v in [
        d.ios[0],
        d.ios[1],
        d.merges[0],
        d.merges[1],
        d.ticks[0],
        d.ticks[1],
        d.in_queue,
    ] {
        fields.push(v.to_string());
    }
    fields.push(format!("{:.2}%", super::units::finite(d.util)));
}
