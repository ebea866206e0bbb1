//! Running a comparison: every scheduler × client count is an independent simulation, so
//! they run on every core (rayon) and come back in plan order, whatever the threads did.
//! A progress bar (runs done / total) shows on stderr when it is a terminal.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ioslice_fio::JobFile;
use ioslice_sim::simulation::{run as simulate, SimConfig};
use rayon::prelude::*;

use super::measure::{measure, RunResult};
use super::plan::Plan;
use super::sched::ResolvedScheduler;
use crate::cgroup_arg;

/// One run of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSpec {
    /// Index into [`Plan::schedulers`].
    pub scheduler: usize,
    /// Every job's numjobs for this run, `None` for the job file's.
    pub clients: Option<u32>,
}

/// A finished run with what it ran.
#[derive(Debug, Clone)]
pub struct Finished {
    /// What ran.
    pub spec: RunSpec,
    /// What it measured.
    pub result: RunResult,
}

/// Every run of the plan, scheduler by scheduler, client counts in the order given.
pub fn runs(plan: &Plan) -> Vec<RunSpec> {
    (0..plan.schedulers.len())
        .flat_map(|scheduler| {
            plan.clients
                .iter()
                .map(move |&clients| RunSpec { scheduler, clients })
        })
        .collect()
}

/// Run every simulation of the plan in parallel; results in plan order. The first run
/// that fails (in plan order) is the error.
pub fn execute(plan: &Plan) -> Result<Vec<Finished>, String> {
    let specs = runs(plan);
    let progress = progress_bar(specs.len());
    let results: Vec<Result<Finished, String>> = specs
        .par_iter()
        .map(|&spec| {
            let result = run_one(plan, spec);
            progress.inc(1);
            result
        })
        .collect();
    progress.finish_and_clear();
    results.into_iter().collect()
}

/// One simulation, reduced to its result.
fn run_one(plan: &Plan, spec: RunSpec) -> Result<Finished, String> {
    let scheduler = &plan.schedulers[spec.scheduler];
    let mut config = SimConfig::new(plan.seed, scheduler.spec.clone(), plan.device.clone());
    config.group_weights = cgroup_arg::sim_weights(&plan.cgroup_overrides);
    config.group_limits = cgroup_arg::sim_limits(&plan.cgroup_overrides);
    crate::commands::apply_host(&mut config, &plan.host)?;
    let job_file = with_clients(&plan.job_file, spec.clients);
    let outcome =
        simulate(&job_file, &config).map_err(|e| format!("{}: {e}", describe(scheduler, spec)))?;
    Ok(Finished {
        spec,
        result: measure(&outcome.report, &plan.columns),
    })
}

/// `deadline:fifo_batch=1 with 4 clients`, for error messages.
fn describe(scheduler: &ResolvedScheduler, spec: RunSpec) -> String {
    match spec.clients {
        Some(n) => format!("run {} with numjobs={n}", scheduler.spec),
        None => format!("run {}", scheduler.spec),
    }
}

/// The job file with every job's numjobs replaced by `count`.
pub fn with_clients(job_file: &JobFile, count: Option<u32>) -> JobFile {
    let mut copy = job_file.clone();
    if let Some(count) = count {
        for job in &mut copy.jobs {
            job.numjobs = count;
        }
    }
    copy
}

/// A bar on stderr when it is a terminal, else one that draws nothing.
fn progress_bar(total: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {elapsed}") {
        bar.set_style(style);
    }
    bar
}
