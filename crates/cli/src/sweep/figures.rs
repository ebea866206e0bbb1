//! What a sweep keeps of one point's run: per job (with its cgroup) and in total, the
//! bandwidth and IOPS (whole units per second of runtime, so that sums are exact) and the
//! completion-latency percentiles over every direction.

use crate::compare::measure::per_second;
use ioslice_fio::{JobReport, LatencyStats, RunReport};
use serde::{Deserialize, Serialize};

/// The completion latency percentiles kept, as fio names them.
const PERCENTILES: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

/// Completion latencies, ns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clat {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

impl Clat {
    fn of(stats: &LatencyStats) -> Self {
        let at = |i: usize| stats.percentile(PERCENTILES[i]);
        Clat {
            p50: at(0),
            p90: at(1),
            p95: at(2),
            p99: at(3),
            max: stats.max(),
        }
    }
}

/// One job (process) of a point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobFigures {
    /// Job name.
    pub name: String,
    /// Its 1-based index in the run.
    pub pid: u32,
    /// Its cgroup path, empty for the root (and in point files written before groups were
    /// kept).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cgroup: String,
    /// Bytes per second, all directions.
    pub bw_bytes: u64,
    /// Requests per second, all directions.
    pub iops: u64,
    /// Completion latencies.
    pub clat_ns: Clat,
}

/// Every job together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TotalFigures {
    /// Sum of the jobs' bandwidths.
    pub bw_bytes: u64,
    /// Sum of the jobs' IOPS.
    pub iops: u64,
    /// Completion latencies of every request of every job.
    pub clat_ns: Clat,
}

/// A finished point, as its point file stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointResult {
    /// The axes' values, in axis order: `{"sched": "bfq", "iodepth": "4"}`.
    pub axes: serde_json::Map<String, serde_json::Value>,
    /// The seed.
    pub seed: u64,
    /// Every job in process order.
    pub jobs: Vec<JobFigures>,
    /// The jobs together.
    pub total: TotalFigures,
}

/// The figures of one run.
pub fn figures(values: &[(String, String)], seed: u64, report: &RunReport) -> PointResult {
    let axes = axes_map(values);
    let jobs: Vec<JobFigures> = report.jobs.iter().map(job).collect();
    let mut all = LatencyStats::default();
    for job in &report.jobs {
        for direction in &job.stats.directions {
            all.merge(&direction.clat);
        }
    }
    PointResult {
        axes,
        seed,
        total: TotalFigures {
            bw_bytes: jobs.iter().map(|j| j.bw_bytes).sum(),
            iops: jobs.iter().map(|j| j.iops).sum(),
            clat_ns: Clat::of(&all),
        },
        jobs,
    }
}

/// The axes' values as the point file stores them.
pub fn axes_map(values: &[(String, String)]) -> serde_json::Map<String, serde_json::Value> {
    values
        .iter()
        .map(|(name, value)| (name.clone(), serde_json::Value::String(value.clone())))
        .collect()
}

fn job(job: &JobReport) -> JobFigures {
    let stats = &job.stats;
    let mut clat = LatencyStats::default();
    for direction in &stats.directions {
        clat.merge(&direction.clat);
    }
    let bytes: u64 = stats.directions.iter().map(|d| d.io_bytes).sum();
    let ios: u64 = stats.directions.iter().map(|d| d.total_ios).sum();
    JobFigures {
        name: job.description.name.clone(),
        pid: job.description.pid,
        cgroup: job.description.cgroup.trim_matches('/').to_string(),
        bw_bytes: per_second(bytes, stats.runtime),
        iops: per_second(ios, stats.runtime),
        clat_ns: Clat::of(&clat),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_and_total() {
        let mut a = JobReport::default();
        a.description.name = "a".into();
        a.stats.runtime = 2_000_000_000;
        a.stats.directions[0].record(8192, 0, 1_000, 0);
        a.stats.directions[1].record(4096, 0, 3_000, 0);
        let mut b = a.clone();
        b.description.pid = 2;
        b.stats.runtime = 1_000_000_000;
        let report = RunReport {
            jobs: vec![a, b],
            ..RunReport::default()
        };
        let point = figures(&[("bs".into(), "4k".into())], 3, &report);
        assert_eq!(point.jobs[0].bw_bytes, 6144);
        assert_eq!(point.jobs[0].iops, 1);
        assert_eq!(point.jobs[1].bw_bytes, 12288);
        assert_eq!(point.total.bw_bytes, 18432);
        assert_eq!(point.total.iops, 3);
        assert_eq!(point.total.clat_ns.max, 3_000);
    }
}
