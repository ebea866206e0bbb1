//! `ioslice compare`: the same workload under several schedulers (and client counts),
//! printed as the classic mailing-list tables or as one JSON document.
//!
//! Every argument is checked before the first run ([`plan`]); the runs are independent
//! simulations with the same job file, seed and device, run in parallel ([`execute`]);
//! the output is the same bytes whatever the threads did ([`table`], [`json`]).

use std::path::PathBuf;

use clap::Args;

mod execute;
mod json;
mod measure;
mod plan;
mod sched;
mod table;

use plan::{CompareFormat, Plan};

/// `ioslice compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The fio job file.
    pub job_file: PathBuf,
    /// Schedulers to compare, comma-separated; each may carry tunables:
    /// `noop,deadline:read_expire=250,fifo_batch=1` (an item with '=' and no ':' belongs to
    /// the scheduler before it).
    #[arg(long = "sched", value_name = "LIST", default_value = "noop,deadline")]
    pub sched: String,
    /// Tunables for every listed scheduler that has them: `slice_idle=0,group_idle=8`.
    /// A tunable set in `--sched` for one scheduler wins over `--set` for that scheduler.
    /// Repeatable.
    #[arg(long = "set", value_name = "TUNABLE=VALUE,...")]
    pub set: Vec<String>,
    /// Simulated device: `sim:PRESET[:key=value,...]`.
    #[arg(long, value_name = "DEVICE", default_value = crate::commands::DEFAULT_DEVICE)]
    pub device: String,
    /// Client counts: each run replaces every job's numjobs with the count.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub clients: Vec<String>,
    /// Weight for cgroup NAME (nested `a/b` allowed), overriding the job file's
    /// cgroup_weight; N in 1..=10000. Repeatable. A job file whose jobs name cgroups
    /// is compared per cgroup: one row per run, one column per cgroup.
    #[arg(long = "cgroup", value_name = "NAME:weight=N")]
    pub cgroup: Vec<String>,
    /// Simulated host settings, `key=value,...`: memory_mib, dirty_ratio,
    /// dirty_background_ratio, nr_requests, max_sectors_kb, read_ahead_kb, host_latency_us,
    /// direct_writes=sync|async (see `ioslice devices`). Repeatable.
    #[arg(long = "host", value_name = "KEY=VALUE,...")]
    pub host: Vec<String>,
    /// Seed of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output format: normal (tables) or json.
    #[arg(
        long = "output-format",
        value_name = "FORMAT",
        default_value = "normal"
    )]
    pub output_format: String,
    /// Treat unsupported options as errors.
    #[arg(long)]
    pub strict: bool,
}

/// Check the arguments, run every scheduler × client count, and print the result.
pub fn compare(args: &CompareArgs) -> Result<String, String> {
    let plan = Plan::new(args)?;
    let runs = execute::execute(&plan)?;
    match plan.format {
        CompareFormat::Table => Ok(table::render(&plan, &runs)),
        CompareFormat::Json => json::render(&plan, &runs),
    }
}
