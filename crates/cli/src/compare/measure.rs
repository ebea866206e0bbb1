//! What a comparison keeps of one run: each client's bandwidth and worst latency, each
//! cgroup's bandwidth, and the aggregate. Bandwidths are whole bytes per second, so that
//! sums are exact and the same on every machine.

use ioslice_core::limit::Limits;
use ioslice_fio::{CgroupSettings, JobReport, RunReport};

/// How the root cgroup (jobs without `cgroup=`) is named in tables and JSON.
pub const ROOT_GROUP: &str = "/";

/// One client (process) of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientResult {
    /// Job name.
    pub name: String,
    /// The process's 1-based index in the run.
    pub pid: u32,
    /// Its cgroup, [`ROOT_GROUP`] when it names none.
    pub cgroup: String,
    /// Bytes moved (all directions) per second of its runtime.
    pub bw_bytes: u64,
    /// Its largest completion latency, ns.
    pub max_clat_ns: u64,
    /// How long it ran, from its start (after any ramp) to its last completion, ns.
    pub runtime_ns: u64,
}

/// One cgroup of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupResult {
    /// Path, or [`ROOT_GROUP`].
    pub name: String,
    /// The weight the scheduler gave it; `None` for the root and under a scheduler that
    /// does not weigh cgroups.
    pub weight: Option<u32>,
    /// Its limits (unlimited for the root).
    pub limits: Limits,
    /// Processes in it.
    pub jobs: u32,
    /// Sum of its clients' bandwidths, bytes/s.
    pub bw_bytes: u64,
}

/// Everything a comparison reports about one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// Every client in process order.
    pub clients: Vec<ClientResult>,
    /// Every cgroup in column order (empty for an ungrouped workload).
    pub groups: Vec<GroupResult>,
    /// Every cgroup of the run but the root, parents first, with the weight the scheduler
    /// gave it and its limits (the report's own).
    pub cgroups: Vec<CgroupSettings>,
}

impl RunResult {
    /// Sum of the clients' bandwidths, bytes/s.
    pub fn aggregate_bw(&self) -> u64 {
        self.clients.iter().map(|c| c.bw_bytes).sum()
    }

    /// Best client bandwidth, bytes/s.
    pub fn max_bw(&self) -> u64 {
        self.clients.iter().map(|c| c.bw_bytes).max().unwrap_or(0)
    }

    /// Worst client bandwidth, bytes/s.
    pub fn min_bw(&self) -> u64 {
        self.clients.iter().map(|c| c.bw_bytes).min().unwrap_or(0)
    }

    /// Largest completion latency of any request, ns.
    pub fn max_clat_ns(&self) -> u64 {
        self.clients
            .iter()
            .map(|c| c.max_clat_ns)
            .max()
            .unwrap_or(0)
    }
}

/// Reduce a run to its result. `columns` are the cgroups to report, in order (empty for
/// an ungrouped workload).
pub fn measure(report: &RunReport, columns: &[String]) -> RunResult {
    let clients: Vec<ClientResult> = report.jobs.iter().map(client).collect();
    let groups = columns
        .iter()
        .map(|name| group(name, &clients, &report.cgroups))
        .collect();
    RunResult {
        clients,
        groups,
        cgroups: report.cgroups.clone(),
    }
}

fn client(job: &JobReport) -> ClientResult {
    let stats = &job.stats;
    let bytes: u64 = stats.directions.iter().map(|d| d.io_bytes).sum();
    let cgroup = job.description.cgroup.trim_matches('/');
    ClientResult {
        name: job.description.name.clone(),
        pid: job.description.pid,
        cgroup: if cgroup.is_empty() {
            ROOT_GROUP.to_string()
        } else {
            cgroup.to_string()
        },
        bw_bytes: per_second(bytes, stats.runtime),
        max_clat_ns: stats
            .directions
            .iter()
            .map(|d| d.clat.max())
            .max()
            .unwrap_or(0),
        runtime_ns: stats.runtime,
    }
}

fn group(name: &str, clients: &[ClientResult], cgroups: &[CgroupSettings]) -> GroupResult {
    let members = clients.iter().filter(|c| c.cgroup == name);
    let settings = cgroups.iter().find(|g| g.path == name);
    GroupResult {
        name: name.to_string(),
        weight: settings.and_then(|g| g.weight),
        limits: settings.map(|g| g.limits).unwrap_or_default(),
        jobs: u32::try_from(members.clone().count()).unwrap_or(u32::MAX),
        bw_bytes: members.map(|c| c.bw_bytes).sum(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use ioslice_fio::{JobDescription, JobReport};

    fn job(name: &str, cgroup: &str, bytes: u64, runtime: u64, clat: u64) -> JobReport {
        let mut report = JobReport {
            description: JobDescription {
                name: name.to_string(),
                cgroup: cgroup.to_string(),
                ..JobDescription::default()
            },
            ..JobReport::default()
        };
        report.stats.runtime = runtime;
        report.stats.directions[0].record(bytes, 0, clat, runtime / 2);
        report
    }

    #[test]
    fn clients_groups_and_aggregate() {
        let report = RunReport {
            jobs: vec![
                job("a", "g1", 4_000_000, 2_000_000_000, 5_000_000),
                job("b", "", 1_000_000, 1_000_000_000, 9_000_000),
                job("c", "/g1", 3_000, 3_000_000_000, 1_000_000),
            ],
            cgroups: vec![CgroupSettings {
                path: "g1".into(),
                weight: Some(100),
                weight_set: false,
                limits: Limits {
                    read_iops: Some(7),
                    ..Limits::default()
                },
            }],
            ..RunReport::default()
        };
        let columns = vec!["g1".to_string(), "/".to_string()];
        let result = measure(&report, &columns);
        let bw: Vec<u64> = result.clients.iter().map(|c| c.bw_bytes).collect();
        assert_eq!(bw, [2_000_000, 1_000_000, 1_000]);
        assert_eq!(result.clients[1].cgroup, "/");
        assert_eq!(result.groups[0].bw_bytes, 2_001_000);
        assert_eq!(result.groups[0].jobs, 2);
        assert_eq!(result.groups[0].weight, Some(100));
        assert_eq!(result.groups[0].limits.read_iops, Some(7));
        assert_eq!(result.cgroups, report.cgroups);
        assert_eq!(result.groups[1].bw_bytes, 1_000_000);
        assert_eq!(result.groups[1].weight, None);
        assert!(result.groups[1].limits.is_unlimited());
        assert_eq!(result.aggregate_bw(), 3_001_000);
        assert_eq!((result.max_bw(), result.min_bw()), (2_000_000, 1_000));
        assert!(result.max_clat_ns() >= 9_000_000);
    }

    #[test]
    fn zero_runtime_is_zero_bandwidth() {
        let report = RunReport {
            jobs: vec![job("a", "", 4096, 0, 1)],
            ..RunReport::default()
        };
        assert_eq!(measure(&report, &[]).aggregate_bw(), 0);
    }
}
