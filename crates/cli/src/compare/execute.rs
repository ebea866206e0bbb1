//! Running a comparison: every scheduler × client count is an independent simulation, so
//! they run on every core (rayon) and come back in plan order, whatever the threads did.
//! A progress bar (runs done / total) shows on stderr when it is a terminal and there is
//! more than one run. With `--trace`, every run's trace file is created before the first run
//! starts, and each run writes its own.

use std::path::PathBuf;

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ioslice_core::StopSignal;
use ioslice_fio::JobFile;
use ioslice_sim::simulation::SimConfig;
use rayon::prelude::*;

use super::measure::{measure, RunResult};
use super::plan::Plan;
use super::sched::ResolvedScheduler;
use crate::report::Recorders;
use crate::trace::{file_label, run_path, TraceFile};
use ioslice_core::TraceSink;
use ioslice_fio::RunReport;
use ioslice_report::{ComparisonCell, RunRecord, Settings};

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
    /// With `--report`: the run's record and its cell of the comparison's grid.
    pub reported: Option<(RunRecord, ComparisonCell)>,
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
/// that fails (in plan order) is the error. Once `stop` is set, runs under way end early
/// and runs not yet started are left out.
pub fn execute(plan: &Plan, stop: &StopSignal) -> Result<Vec<Finished>, String> {
    let specs = runs(plan);
    let traces = match &plan.trace {
        Some((path, format)) => trace_paths(plan, &specs, path)
            .iter()
            .map(|path| TraceFile::create(path, *format).map(Some))
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![None; specs.len()],
    };
    let items: Vec<(RunSpec, Option<TraceFile>)> = specs.into_iter().zip(traces).collect();
    let results = in_parallel(&items, stop, |(spec, trace)| {
        run_one(plan, *spec, trace.as_ref(), stop)
    });
    results.into_iter().flatten().collect()
}

/// Run `run` on every item on every core, with the progress bar; results in the items'
/// order. Once `stop` is set, items not yet started are left out (`None`).
pub fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    stop: &StopSignal,
    run: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let progress = progress_bar(items.len());
    let results = items
        .par_iter()
        .map(|item| {
            if stop.is_set() {
                return None;
            }
            let result = run(item);
            progress.inc(1);
            Some(result)
        })
        .collect();
    progress.finish_and_clear();
    results
}

/// One run of the plan, untraced and unrecorded: the simulator's whole report.
pub fn simulate(plan: &Plan, spec: RunSpec, stop: &StopSignal) -> Result<RunReport, String> {
    let (config, job_file) = sim_config(plan, spec, stop)?;
    let scheduler = &plan.schedulers[spec.scheduler];
    crate::trace::simulate(&job_file, &config, None, None)
        .map(|outcome| outcome.report)
        .map_err(|e| format!("{}: {e}", describe(scheduler, spec)))
}

/// The simulator's configuration and the job file of one run of the plan.
fn sim_config(
    plan: &Plan,
    spec: RunSpec,
    stop: &StopSignal,
) -> Result<(SimConfig, JobFile), String> {
    let scheduler = &plan.schedulers[spec.scheduler];
    let job_file = with_clients(&plan.job_file, spec.clients);
    let run = plan.inputs.spec(scheduler.spec.clone(), stop);
    let config = plan.machine.sim_config(plan.device.clone(), run)?;
    Ok((config, job_file))
}

/// Each run's trace file: `path` with the scheduler (and the client count, with `--clients`)
/// inserted before its extension; a scheduler listed twice alike gets `-2`, `-3`, … after
/// its name.
pub fn trace_paths(plan: &Plan, specs: &[RunSpec], path: &std::path::Path) -> Vec<PathBuf> {
    let mut names: Vec<String> = Vec::new();
    for scheduler in &plan.schedulers {
        let base = file_label(&scheduler.spec.to_string());
        let mut name = base.clone();
        let mut copy = 1;
        while names.contains(&name) {
            copy += 1;
            name = format!("{base}-{copy}");
        }
        names.push(name);
    }
    specs
        .iter()
        .map(|spec| {
            let label = match spec.clients {
                Some(n) => format!("{}.c{n}", names[spec.scheduler]),
                None => names[spec.scheduler].clone(),
            };
            run_path(path, &label)
        })
        .collect()
}

/// One simulation, reduced to its result; traced into `trace` if given.
fn run_one(
    plan: &Plan,
    spec: RunSpec,
    trace: Option<&TraceFile>,
    stop: &StopSignal,
) -> Result<Finished, String> {
    let scheduler = &plan.schedulers[spec.scheduler];
    let (config, job_file) = sim_config(plan, spec, stop)?;
    let runs = plan.schedulers.len() * plan.clients.len();
    let mut recorders = plan
        .report
        .as_ref()
        .map(|_| Recorders::new(&job_file, runs));
    let outcome = crate::trace::simulate(
        &job_file,
        &config,
        trace,
        recorders.as_mut().map(|r| r as &mut dyn TraceSink),
    );
    if let Some(file) = trace {
        file.finish()?;
    }
    let outcome = outcome.map_err(|e| format!("{}: {e}", describe(scheduler, spec)))?;
    let reported = recorders.map(|recorders| {
        let settings = Settings::simulated(&plan.job_path, &config);
        let record = recorders.finish(&outcome.report, settings);
        super::reported::run_and_cell(
            plan,
            (spec.scheduler, spec.clients),
            record,
            &outcome.report,
        )
    });
    Ok(Finished {
        spec,
        result: measure(&outcome.report, &plan.columns),
        reported,
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
    // One run has nothing to count (and `ioslice seeds` runs its lines as one-run
    // comparisons side by side, whose bars would draw over each other).
    if total < 2 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {elapsed}") {
        bar.set_style(style);
    }
    bar
}
