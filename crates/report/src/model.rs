//! The report's data: what one run ([`RunRecord`]) and one comparison ([`ComparisonRecord`])
//! keep for the page, and how a run's record is made from ioslice's own [`RunReport`].
//!
//! Every type here is plain data with serde's `Serialize` and `Deserialize`, so that a run
//! can write its record as JSON and `ioslice report` can read several back and render them
//! together. Figures are whole numbers (bytes, nanoseconds, requests) wherever the source
//! has them whole, so that a JSON round trip gives back exactly the same record.

use ioslice_fio::latency_bins::{self, BINS};
use ioslice_fio::{JobReport, LatencyStats, RunReport};
use ioslice_timeline::Timeline;
use serde::{Deserialize, Serialize};

use crate::bandwidth::BandwidthSeries;
use crate::requests::RequestSeries;
use crate::settings::Settings;

/// The percentiles fio reports, in percent: the points of the percentile chart.
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Everything one page shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Runs, in the order given.
    pub runs: Vec<RunRecord>,
    /// Comparisons, in the order given.
    pub comparisons: Vec<ComparisonRecord>,
}

/// One run: its settings, what each job did, and, when recorded, its bandwidth over time and
/// its decision timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's heading.
    pub title: String,
    /// What the run used: job file, device, scheduler, controller, host, seed.
    pub settings: Settings,
    /// Every job (every process), in job order.
    pub jobs: Vec<JobRecord>,
    /// Completed bytes at the device per time window, per process and direction; `None`
    /// when the run was not recorded (a fio JSON file).
    pub bandwidth: Option<BandwidthSeries>,
    /// Completed requests per time window, per process and direction, when recorded (a
    /// run ioslice recorded, or fio's `write_iops_log` files); absent from older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestSeries>,
    /// The decision timeline, when one was recorded.
    pub timeline: Option<Timeline>,
}

/// One job (one process, or a reporting group in a fio JSON file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Job name.
    pub name: String,
    /// Its cgroup path, empty for the root.
    pub cgroup: String,
    /// Each direction that saw I/O, in fio's order (read, write, trim).
    pub directions: Vec<DirectionRecord>,
}

/// What one job did in one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionRecord {
    /// `read`, `write` or `trim`.
    pub direction: String,
    /// Bytes completed.
    pub io_bytes: u64,
    /// Bytes per second over the job's runtime (fio's `bw_bytes`).
    pub bw_bytes: u64,
    /// Requests completed.
    pub total_ios: u64,
    /// The job's runtime in this direction, nanoseconds (fio's `runtime`, at millisecond
    /// resolution when read from fio's JSON).
    pub runtime_ns: u64,
    /// Completion latency.
    pub clat: LatencyRecord,
}

impl DirectionRecord {
    /// Requests per second over the runtime.
    pub fn iops(&self) -> f64 {
        if self.runtime_ns == 0 {
            0.0
        } else {
            self.total_ios as f64 * 1e9 / self.runtime_ns as f64
        }
    }
}

/// A latency distribution: moments, fio's percentiles and, where known, its bins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyRecord {
    /// Samples.
    pub count: u64,
    /// Smallest, ns.
    pub min_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
    /// Mean, ns, rounded.
    pub mean_ns: u64,
    /// `(percent, value ns)`, fio's list (p1 … p99.99).
    pub percentiles: Vec<Percentile>,
    /// The non-empty bins as `(value ns, count)`, by value: what the CDF is drawn from.
    /// Empty when the source had only percentiles (fio's plain `json`); the CDF is then
    /// drawn from the percentiles.
    pub bins: Vec<(u64, u64)>,
}

/// One percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// In percent (99.9).
    pub percent: f64,
    /// The latency, ns.
    pub value_ns: u64,
}

impl LatencyRecord {
    /// The record of ioslice's latency statistics: moments, percentiles and every
    /// non-empty bin.
    pub fn of(stats: &LatencyStats) -> Self {
        let counts = stats.bin_counts();
        let bins = (0..BINS)
            .filter(|&bin| counts[bin] > 0)
            .map(|bin| (latency_bins::value_of(bin), counts[bin]))
            .collect();
        let percentiles = if stats.count() == 0 {
            Vec::new()
        } else {
            PERCENTILES
                .iter()
                .map(|&percent| Percentile {
                    percent,
                    value_ns: stats.percentile(percent),
                })
                .collect()
        };
        Self {
            count: stats.count(),
            min_ns: stats.min(),
            max_ns: stats.max(),
            mean_ns: stats.mean().round() as u64,
            percentiles,
            bins,
        }
    }

    /// The CDF as `(latency ns, share of samples at or below it in 0..=1)`: from the bins
    /// when there are any, else from the percentiles.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        if !self.bins.is_empty() {
            let total: u64 = self.bins.iter().map(|&(_, count)| count).sum();
            let mut running = 0u64;
            return self
                .bins
                .iter()
                .map(|&(value, count)| {
                    running += count;
                    (value, running as f64 / total.max(1) as f64)
                })
                .collect();
        }
        self.percentiles
            .iter()
            .map(|p| (p.value_ns, p.percent / 100.0))
            .collect()
    }
}

impl JobRecord {
    /// The record of one of ioslice's job reports.
    pub fn of(job: &JobReport) -> Self {
        let stats = &job.stats;
        let directions = ["read", "write", "trim"]
            .iter()
            .zip(&stats.directions)
            .filter(|(_, d)| d.has_io())
            .map(|(name, d)| {
                let mut d = d.clone();
                d.settle();
                DirectionRecord {
                    direction: (*name).to_string(),
                    io_bytes: d.io_bytes,
                    bw_bytes: per_second(d.io_bytes, stats.runtime),
                    total_ios: d.total_ios,
                    runtime_ns: stats.runtime,
                    clat: LatencyRecord::of(&d.clat),
                }
            })
            .collect();
        Self {
            name: job.description.name.clone(),
            cgroup: job.description.cgroup.trim_matches('/').to_string(),
            directions,
        }
    }

    /// Bytes per second, every direction.
    pub fn bw_bytes(&self) -> u64 {
        self.directions.iter().map(|d| d.bw_bytes).sum()
    }
}

impl RunRecord {
    /// The record of a run ioslice made: its report (one entry per process, as the
    /// simulator and the runner make it), its settings, the bandwidth the
    /// [`BandwidthRecorder`](crate::BandwidthRecorder) saw and, if recorded, its timeline.
    /// The title is the job file and the scheduler; [`RunRecord::titled`] changes it.
    pub fn new(
        report: &RunReport,
        settings: Settings,
        bandwidth: BandwidthSeries,
        timeline: Option<Timeline>,
    ) -> Self {
        let jobs: Vec<JobRecord> = report.jobs.iter().map(JobRecord::of).collect();
        let names: Vec<String> = jobs.iter().map(|job| job.name.clone()).collect();
        let title = format!("{} under {}", settings.job_file, settings.scheduler.spec);
        Self {
            title,
            settings,
            jobs,
            bandwidth: Some(bandwidth.named(&names)),
            requests: None,
            timeline,
        }
    }

    /// The same record with the requests completed per window (named as its jobs are).
    pub fn with_requests(mut self, requests: RequestSeries) -> Self {
        let names: Vec<String> = self.jobs.iter().map(|job| job.name.clone()).collect();
        self.requests = Some(requests.named(&names));
        self
    }

    /// The same record under another heading.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Whether any job names a cgroup.
    pub fn has_cgroups(&self) -> bool {
        self.jobs.iter().any(|job| !job.cgroup.is_empty())
    }
}

/// A comparison: the same job file under several schedulers and client counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRecord {
    /// Its heading.
    pub title: String,
    /// The job file.
    pub job_file: String,
    /// The device every run used, as given.
    pub device: String,
    /// The runs, in plan order (scheduler by scheduler, client counts in the order given).
    pub cells: Vec<ComparisonCell>,
}

/// One run of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ComparisonCell {
    /// The scheduler as given (`cfq:slice_idle=0`).
    pub scheduler: String,
    /// The client count (`--clients`), `None` for the job file's own `numjobs`.
    pub clients: Option<u32>,
    /// Sum of the clients' bandwidths, bytes/s.
    pub aggregate_bw_bytes: u64,
    /// Every client in process order.
    pub client_bw: Vec<ClientBandwidth>,
    /// Every cgroup in column order (empty for a job file without cgroups).
    pub group_bw: Vec<GroupBandwidth>,
    /// Largest completion latency of any request, ns.
    pub max_clat_ns: u64,
    /// What the original post reported for this run, if the scenario carries it.
    pub seed: Option<SeedFigures>,
}

/// One client's bandwidth.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientBandwidth {
    /// Job name.
    pub name: String,
    /// Its cgroup, `/` for the root.
    pub cgroup: String,
    /// Bytes (all directions) per second of its runtime.
    pub bw_bytes: u64,
}

/// One cgroup's bandwidth.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupBandwidth {
    /// Path, `/` for the root.
    pub name: String,
    /// Sum of its clients' bandwidths, bytes/s.
    pub bw_bytes: u64,
}

/// Figures an original post reported for one run, in KB/s as posted (the posts' "KB" are
/// what their tools printed: KiB for fio and the tiobench-era tools).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedFigures {
    /// The aggregate, KB/s.
    pub aggregate_kb_s: Option<f64>,
    /// Per cgroup, `(path, KB/s)`, in any order; matched to the cell's groups by name.
    pub groups: Vec<(String, f64)>,
}

/// How the root cgroup is named in comparisons (as `ioslice compare` names it).
pub const ROOT_GROUP: &str = "/";

impl ComparisonCell {
    /// The cell of one run of a comparison, measured as `ioslice compare` measures it:
    /// each client's bytes (all directions) over its runtime, each cgroup the sum of its
    /// clients in order of first appearance, the aggregate the sum of all.
    pub fn from_report(scheduler: &str, clients: Option<u32>, report: &RunReport) -> Self {
        let client_bw: Vec<ClientBandwidth> = report
            .jobs
            .iter()
            .map(|job| {
                let bytes: u64 = job.stats.directions.iter().map(|d| d.io_bytes).sum();
                let cgroup = job.description.cgroup.trim_matches('/');
                ClientBandwidth {
                    name: job.description.name.clone(),
                    cgroup: if cgroup.is_empty() {
                        ROOT_GROUP.to_string()
                    } else {
                        cgroup.to_string()
                    },
                    bw_bytes: per_second(bytes, job.stats.runtime),
                }
            })
            .collect();
        let mut group_bw: Vec<GroupBandwidth> = Vec::new();
        if client_bw.iter().any(|c| c.cgroup != ROOT_GROUP) {
            for client in &client_bw {
                match group_bw.iter_mut().find(|g| g.name == client.cgroup) {
                    Some(group) => group.bw_bytes += client.bw_bytes,
                    None => group_bw.push(GroupBandwidth {
                        name: client.cgroup.clone(),
                        bw_bytes: client.bw_bytes,
                    }),
                }
            }
        }
        let max_clat_ns = report
            .jobs
            .iter()
            .flat_map(|job| job.stats.directions.iter().map(|d| d.clat.max()))
            .max()
            .unwrap_or(0);
        Self {
            scheduler: scheduler.to_string(),
            clients,
            aggregate_bw_bytes: client_bw.iter().map(|c| c.bw_bytes).sum(),
            client_bw,
            group_bw,
            max_clat_ns,
            seed: None,
        }
    }

    /// The same cell with the original post's figures.
    pub fn with_seed(mut self, seed: SeedFigures) -> Self {
        self.seed = Some(seed);
        self
    }

    /// `deadline ×4`, or the scheduler alone when the job file's own client count ran.
    pub fn label(&self) -> String {
        match self.clients {
            Some(n) => format!("{} ×{n}", self.scheduler),
            None => self.scheduler.clone(),
        }
    }
}

/// `count` per second over `runtime` ns, truncated; 0 for a zero runtime.
pub(crate) fn per_second(count: u64, runtime: u64) -> u64 {
    if runtime == 0 {
        return 0;
    }
    let rate = u128::from(count) * 1_000_000_000 / u128::from(runtime);
    u64::try_from(rate).unwrap_or(u64::MAX)
}
