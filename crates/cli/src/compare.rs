//! `ioslice compare`: the same workload under several schedulers (and client counts),
//! printed as the classic mailing-list tables: clients, max/min per-client bandwidth,
//! aggregate bandwidth, and maximum latency.

use std::fmt::Write as _;

use clap::Args;
use ioslice_fio::{JobFile, RunReport};
use ioslice_sim::simulation::{run as simulate, SimConfig};

use crate::commands::{choose_scheduler, load_job_file};

/// `ioslice compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The fio job file.
    pub job_file: std::path::PathBuf,
    /// Schedulers to compare, comma-separated; each may carry tunables:
    /// `noop,deadline:read_expire=250,fifo_batch=1` (an item with '=' and no ':' belongs to the scheduler before it).
    #[arg(long = "sched", value_name = "LIST", default_value = "noop,deadline")]
    pub sched: String,
    /// Simulated device: `sim:PRESET[:key=value,...]`.
    #[arg(long, value_name = "DEVICE", default_value = crate::commands::DEFAULT_DEVICE)]
    pub device: String,
    /// Client counts: each run replaces every job's numjobs with the count.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub clients: Vec<u32>,
    /// Seed for every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Treat unsupported options as errors.
    #[arg(long)]
    pub strict: bool,
}

/// One row of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Processes that ran.
    pub clients: usize,
    /// Best per-client bandwidth, KB/s (1000 bytes).
    pub max_kbs: f64,
    /// Worst per-client bandwidth, KB/s.
    pub min_kbs: f64,
    /// Sum over clients, KB/s.
    pub aggregate_kbs: f64,
    /// Largest completion latency of any request, ms.
    pub max_latency_ms: f64,
}

/// Reduce a run to the table's row.
pub fn row(report: &RunReport) -> Row {
    let per_client: Vec<f64> = report
        .jobs
        .iter()
        .map(|job| {
            let bytes: u64 = job.stats.directions.iter().map(|d| d.io_bytes).sum();
            if job.stats.runtime == 0 {
                0.0
            } else {
                bytes as f64 / 1000.0 / (job.stats.runtime as f64 / 1e9)
            }
        })
        .collect();
    let max_latency = report
        .jobs
        .iter()
        .flat_map(|job| job.stats.directions.iter())
        .map(|d| d.clat.max())
        .max()
        .unwrap_or(0);
    Row {
        clients: per_client.len(),
        max_kbs: per_client.iter().copied().fold(0.0, f64::max),
        min_kbs: per_client.iter().copied().reduce(f64::min).unwrap_or(0.0),
        aggregate_kbs: per_client.iter().sum(),
        max_latency_ms: max_latency as f64 / 1e6,
    }
}

/// Run every scheduler × client count and print one table per scheduler.
pub fn compare(args: &CompareArgs) -> Result<String, String> {
    let job_file = load_job_file(&args.job_file, args.strict)?;
    let device: ioslice_sim::preset::DeviceSpec =
        args.device.parse().map_err(|e| format!("--device: {e}"))?;
    let mut out = String::new();
    let counts: Vec<Option<u32>> = if args.clients.is_empty() {
        vec![None]
    } else {
        args.clients.iter().copied().map(Some).collect()
    };
    for sched in split_schedulers(&args.sched) {
        let scheduler = choose_scheduler(Some(&sched), &job_file)?;
        let _ = writeln!(out, "Scheduler: {scheduler}  Device: {}\n", args.device);
        let _ = writeln!(
            out,
            "Clients   Max bwidth   Min bwidth   Agg bwidth   Max latency"
        );
        for &count in &counts {
            let config = SimConfig::new(args.seed, scheduler.clone(), device.clone());
            let jobs = with_clients(&job_file, count);
            let outcome = simulate(&jobs, &config).map_err(|e| e.to_string())?;
            let r = row(&outcome.report);
            let _ = writeln!(
                out,
                "{:>7}   {:>10.0}   {:>10.0}   {:>10.0}   {:>8.0}msec",
                r.clients, r.max_kbs, r.min_kbs, r.aggregate_kbs, r.max_latency_ms
            );
        }
        out.push('\n');
    }
    out.push_str(
        "Bandwidth in KB/s (1000 bytes) per client; latency is the largest completion latency.\n",
    );
    Ok(out)
}

/// Split `noop,deadline:read_expire=250,fifo_batch=1` into `noop` and
/// `deadline:read_expire=250,fifo_batch=1`.
pub fn split_schedulers(list: &str) -> Vec<String> {
    let mut specs: Vec<String> = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match specs.last_mut() {
            Some(last) if item.contains('=') && !item.contains(':') => {
                last.push(',');
                last.push_str(item);
            }
            _ => specs.push(item.to_string()),
        }
    }
    specs
}

/// The job file with every job's numjobs replaced by `count`.
fn with_clients(job_file: &JobFile, count: Option<u32>) -> JobFile {
    let mut copy = job_file.clone();
    if let Some(count) = count {
        for job in &mut copy.jobs {
            job.numjobs = count;
        }
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_lists_keep_tunables_with_their_scheduler() {
        assert_eq!(
            split_schedulers("noop, deadline:read_expire=250,fifo_batch=1,noop:nomerges=1"),
            vec![
                "noop",
                "deadline:read_expire=250,fifo_batch=1",
                "noop:nomerges=1"
            ]
        );
    }
}
