//! `ioslice compare`: the same workload under several schedulers (and client counts),
//! printed as the classic mailing-list tables or as one JSON document.
//!
//! Every argument is checked before the first run ([`plan`]); the runs are independent
//! simulations with the same job file, seed and device, run in parallel ([`execute`]), each
//! traced into a file of its own with `--trace`; the output is the same bytes whatever the
//! threads did ([`table`], [`json`]).

use std::path::PathBuf;

use clap::Args;

pub mod execute;
mod json;
pub mod measure;
pub mod plan;
mod reported;
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
    /// Client counts: each run replaces every job's numjobs with the count.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub clients: Vec<String>,
    /// The simulated machine and run.
    #[command(flatten)]
    pub simulation: crate::shared::SimulationArgs,
    /// Output format: normal (tables) or json.
    #[arg(
        long = "output-format",
        value_name = "FORMAT",
        default_value = "normal"
    )]
    pub output_format: String,
    /// The trace of each run.
    #[command(flatten)]
    pub trace: crate::trace::TraceArgs,
    /// The HTML report of the comparison and its runs.
    #[command(flatten)]
    pub report: crate::report::ReportArgs,
}

/// Check the arguments and run every scheduler × client count; what each run measured, in
/// plan order (scheduler by scheduler, client counts in the order given).
pub fn measure_runs(
    args: &CompareArgs,
    stop: &ioslice_core::StopSignal,
) -> Result<Vec<measure::RunResult>, String> {
    let plan = Plan::new(args)?;
    let runs = execute::execute(&plan, stop)?;
    Ok(runs.into_iter().map(|run| run.result).collect())
}

/// Check the arguments, run every scheduler × client count, and print the result. SIGINT
/// or SIGTERM ends the runs under way early and skips those not started; what ran is
/// printed ([`crate::signals`]).
pub fn compare(args: &CompareArgs) -> Result<crate::shared::Printed, String> {
    let plan = Plan::new(args)?;
    let stop = crate::signals::stop_on_signals()?;
    let runs = execute::execute(&plan, &stop)?;
    if let Some(path) = &plan.report {
        let reported = runs.iter().filter_map(|run| run.reported.clone()).collect();
        crate::report::write(path, &reported::report(&plan, reported))?;
    }
    let text = match plan.format {
        CompareFormat::Table => table::render(&plan, &runs),
        CompareFormat::Json => json::render(&plan, &runs)?,
    };
    let mut printed = crate::shared::Printed::from(text);
    if let Some((line, status)) = crate::signals::interrupted(&stop) {
        eprintln!(
            "{line}: {} of {} runs done",
            runs.len(),
            execute::runs(&plan).len()
        );
        printed.status = status;
    }
    Ok(printed)
}
