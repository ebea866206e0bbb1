//! `ioslice seeds`: every figure the posts the project started from reported, beside what
//! ioslice's models give for the same run, with the ratio and a verdict.
//!
//! Each `; ioslice-seed:` line of a scenario file ([`crate::seed_figure`]) is one run: the
//! file's jobs under the line's scheduler, with its client count and options, on the file's
//! device, host and kernel (its `; ioslice-` directives) unless the line says otherwise. Every
//! run is a `compare` run of one scheduler and client count, and they all go on every core.
//! The rules each figure is judged by are in [`verdict`]; lines marked `--calibration` are
//! counted apart from the predictions.

mod render;
mod verdict;

use std::path::PathBuf;

use clap::Args;
use rayon::prelude::*;

use crate::compare::CompareArgs;
use crate::scenario::ScenarioDefaults;
use crate::seed_figure::SeedFigure;
use crate::shared::{Printed, SimulationArgs};

pub use verdict::Judged;

/// `ioslice seeds`.
#[derive(Debug, Args)]
pub struct SeedsArgs {
    /// Scenario files whose `; ioslice-seed:` lines to run (for every post:
    /// `scenarios/seed-*/*.fio`). A file without such lines is skipped.
    #[arg(required = true, value_name = "JOB_FILE")]
    pub files: Vec<PathBuf>,
    /// Output format: text, or markdown (the table of docs/experiments.md).
    #[arg(long = "output-format", value_name = "FORMAT", default_value = "text")]
    pub output_format: String,
    /// Seed of every run whose line names none.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// One line of a scenario file, run and judged.
#[derive(Debug, Clone)]
pub struct Line {
    /// The scenario file.
    pub file: PathBuf,
    /// The line's figures and run.
    pub figure: SeedFigure,
    /// Every figure it gives, judged.
    pub judged: Vec<Judged>,
}

/// Run every line of every file and print the tables.
pub fn seeds(args: &SeedsArgs) -> Result<Printed, String> {
    let markdown = match args.output_format.trim() {
        "text" => false,
        "markdown" => true,
        other => {
            return Err(format!(
                "--output-format '{other}': expected text or markdown"
            ))
        }
    };
    let mut planned = Vec::new();
    for file in &args.files {
        let defaults = ScenarioDefaults::read_all(std::slice::from_ref(file))?;
        planned.extend(
            defaults
                .seed_figures
                .into_iter()
                .map(|figure| (file.clone(), figure)),
        );
    }
    if planned.is_empty() {
        return Err("no ioslice-seed: line in the files given: expected scenario files such as scenarios/seed-003/read-sequential-4k.fio".into());
    }
    let stop = crate::signals::stop_on_signals()?;
    let lines = planned
        .into_par_iter()
        .map(|(file, figure)| run_line(file, figure, args.seed, &stop))
        .collect::<Result<Vec<_>, String>>()?;
    Ok(render::render(&lines, markdown).into())
}

/// Run one line and judge its figures; an error names the file and the line's scheduler.
fn run_line(
    file: PathBuf,
    figure: SeedFigure,
    seed: u64,
    stop: &ioslice_core::StopSignal,
) -> Result<Line, String> {
    let at = |why: String| {
        format!(
            "{}: ioslice-seed: {}: {why}",
            file.display(),
            figure.scheduler
        )
    };
    let args = compare_args(&file, &figure, seed).map_err(at)?;
    let runs = crate::compare::measure_runs(&args, stop).map_err(at)?;
    let run = runs
        .first()
        .ok_or_else(|| at("the run was stopped before it finished".into()))?;
    let judged = verdict::judge(&figure, run).map_err(at)?;
    Ok(Line {
        file,
        figure,
        judged,
    })
}

/// The `compare` that runs a line: one scheduler, one client count, the line's options.
fn compare_args(
    file: &std::path::Path,
    figure: &SeedFigure,
    seed: u64,
) -> Result<CompareArgs, String> {
    let one = |key: &str| figure.option_values(key).last().map(str::to_string);
    let all = |key: &str| {
        figure
            .option_values(key)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let seed = match one("seed") {
        Some(text) => text
            .parse()
            .map_err(|_| format!("--seed={text}: expected a whole number"))?,
        None => seed,
    };
    Ok(CompareArgs {
        job_file: file.to_path_buf(),
        sched: figure.scheduler.clone(),
        set: Vec::new(),
        clients: figure.clients.map(|n| n.to_string()).into_iter().collect(),
        simulation: SimulationArgs {
            device: one("device"),
            host: all("host"),
            kernel: one("kernel"),
            seed,
            cgroup: all("cgroup"),
            controller: one("controller"),
            strict: false,
            max_jobs: ioslice_fio::plan::DEFAULT_MAX_JOBS,
        },
        output_format: "normal".into(),
        trace: crate::trace::TraceArgs {
            trace: None,
            trace_format: None,
        },
        report: crate::report::ReportArgs { report: None },
    })
}
