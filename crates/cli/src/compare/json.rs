//! The comparison as one JSON document: every run with its scheduler (the tunables set and
//! the declared defaults of the others), device, seed, client count, per-client and per-cgroup bandwidth, and aggregate.
//!
//! Keys come out in the order of the structs below and runs in plan order, so the same
//! arguments give the same bytes. Bandwidths are whole bytes per second (fio's `bw_bytes`),
//! latencies whole nanoseconds.

use ioslice_core::limit::Limits;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::execute::Finished;
use super::measure::{ClientResult, GroupResult};
use super::plan::Plan;

/// The whole document.
#[derive(Debug, Serialize)]
struct Document<'a> {
    /// What wrote it.
    version: String,
    /// The job file as given.
    job_file: &'a str,
    /// Device of every run.
    device: String,
    /// Seed of every run.
    seed: u64,
    /// `--host` settings of every run (empty: the defaults).
    host: String,
    /// Every run, scheduler by scheduler, client counts in the order given.
    runs: Vec<Run<'a>>,
}

/// One run.
#[derive(Debug, Serialize)]
struct Run<'a> {
    /// The resolved specification: canonical name and the settings given.
    scheduler: String,
    /// Tunables set by `--sched` or `--set`, with their values.
    #[serde(serialize_with = "ordered_map")]
    settings: &'a [(String, i64)],
    /// The scheduler's other tunables with their declared defaults (a policy may pick a
    /// device-dependent default instead, as CFQ does for `slice_idle`).
    #[serde(serialize_with = "ordered_map")]
    defaults: &'a [(String, i64)],
    device: String,
    seed: u64,
    /// The numjobs every job ran with (`--clients`), null for the job file's own.
    numjobs: Option<u32>,
    /// Processes that ran.
    clients: usize,
    /// Every process in order.
    jobs: &'a [ClientResult],
    /// Every cgroup in order of first appearance in the job file, with the weight the
    /// scheduler gave it (none for the root or under a scheduler that weighs no cgroups) and
    /// its limits when it has any; empty when no job names a cgroup.
    cgroups: &'a [GroupResult],
    aggregate: Aggregate,
}

/// The run as a whole.
#[derive(Debug, Serialize)]
struct Aggregate {
    /// Sum of the clients' bandwidths.
    bw_bytes: u64,
    /// Best client.
    max_bw_bytes: u64,
    /// Worst client.
    min_bw_bytes: u64,
    /// Largest completion latency of any request.
    max_clat_ns: u64,
}

impl Serialize for ClientResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("pid", &self.pid)?;
        map.serialize_entry("cgroup", &self.cgroup)?;
        map.serialize_entry("bw_bytes", &self.bw_bytes)?;
        map.serialize_entry("max_clat_ns", &self.max_clat_ns)?;
        map.end()
    }
}

impl Serialize for GroupResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", &self.name)?;
        if let Some(weight) = self.weight {
            map.serialize_entry("weight", &weight)?;
        }
        if !self.limits.is_unlimited() {
            map.serialize_entry("limits", &LimitsJson(&self.limits))?;
        }
        map.serialize_entry("jobs", &self.jobs)?;
        map.serialize_entry("bw_bytes", &self.bw_bytes)?;
        map.end()
    }
}

/// A cgroup's limits as `run`'s JSON has them: the rates set (`rbps`, `wbps` in bytes/s,
/// `riops`, `wiops` per second; one not listed is unlimited) and `burst_ns`, the burst in force.
struct LimitsJson<'a>(&'a Limits);

impl Serialize for LimitsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let l = self.0;
        let mut map = serializer.serialize_map(None)?;
        for (name, rate) in [
            ("rbps", l.read_bps),
            ("wbps", l.write_bps),
            ("riops", l.read_iops),
            ("wiops", l.write_iops),
        ] {
            if let Some(rate) = rate {
                map.serialize_entry(name, &rate)?;
            }
        }
        map.serialize_entry("burst_ns", &l.burst_or_default())?;
        map.end()
    }
}

/// `[(name, value)]` as a JSON object in the given order.
fn ordered_map<S: Serializer>(pairs: &&[(String, i64)], serializer: S) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(pairs.len()))?;
    for (name, value) in pairs.iter() {
        map.serialize_entry(name, value)?;
    }
    map.end()
}

/// The document, pretty-printed, with a final newline.
pub fn render(plan: &Plan, runs: &[Finished]) -> Result<String, String> {
    let device = plan.device.to_string();
    let document = Document {
        version: ioslice_core::VERSION.to_string(),
        job_file: &plan.job_path,
        device: device.clone(),
        seed: plan.inputs.seed,
        host: plan.machine.host.join(","),
        runs: runs
            .iter()
            .map(|finished| {
                let scheduler = &plan.schedulers[finished.spec.scheduler];
                let r = &finished.result;
                Run {
                    scheduler: scheduler.spec.to_string(),
                    settings: &scheduler.settings,
                    defaults: &scheduler.defaults,
                    device: device.clone(),
                    seed: plan.inputs.seed,
                    numjobs: finished.spec.clients,
                    clients: r.clients.len(),
                    jobs: &r.clients,
                    cgroups: &r.groups,
                    aggregate: Aggregate {
                        bw_bytes: r.aggregate_bw(),
                        max_bw_bytes: r.max_bw(),
                        min_bw_bytes: r.min_bw(),
                        max_clat_ns: r.max_clat_ns(),
                    },
                }
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&document).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}
