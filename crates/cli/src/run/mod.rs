//! `ioslice run`: a job file in simulation (`--device sim:…`, [`simulated`]) or for real
//! through the engine (`--device PATH`, [`real`]). What the two do around the run, the status
//! line, the trace file, the report's recorders and the run's end, is one thing
//! ([`observers`]); what they are given, [`crate::shared`].

mod observers;
mod real;
mod simulated;

use std::path::PathBuf;

use clap::Args;
use ioslice_core::StopSignal;
use ioslice_fio::output::OutputFormat;

use crate::fio_args::CommandLineJobs;
use crate::fio_cmdline::JobSources;
use crate::report::ReportArgs;
use crate::shared::{Printed, SimulationArgs};
use crate::trace::TraceArgs;

/// `ioslice run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The fio job files. Several run one after another, as fio runs them: each later
    /// file's first job waits for the jobs before it and starts a new reporting group.
    /// Jobs may also be given as fio's command line: `--name=NAME` starts a job, the
    /// `--option=value`s after it are its own, those before the first `--name` are global
    /// (defaults for those jobs and the first job file's). See docs/usage.md.
    #[arg(value_name = "JOB_FILE")]
    pub job_files: Vec<PathBuf>,
    /// Write the report to FILE instead of stdout (fio's --output).
    #[arg(long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Run only the job sections of this name (every `[global]` still applies); repeatable
    /// (fio's --section).
    #[arg(long = "section", value_name = "NAME")]
    pub section: Vec<String>,
    /// Parse the job files and options, print any warning, and run nothing (fio's
    /// --parse-only).
    #[arg(long = "parse-only")]
    pub parse_only: bool,
    /// Print each job file as fio's command line, as fio prints it, and run nothing (fio's
    /// --showcmd).
    #[arg(long = "showcmd")]
    pub showcmd: bool,
    /// Terse output, as --output-format=terse (fio's --minimal).
    #[arg(long = "minimal")]
    pub minimal: bool,
    /// The status line on stderr: auto (on a terminal, the default), always, never (fio's
    /// --eta).
    #[arg(long = "eta", value_name = "WHEN", value_parser = ["auto", "always", "never"])]
    pub eta: Option<String>,
    /// Scheduler and tunables, e.g. `deadline:read_expire=250,fifo_batch=1` (default: the job
    /// file's ioscheduler=, else deadline).
    #[arg(long = "sched", value_name = "SPEC")]
    pub sched: Option<String>,
    /// The simulated machine and run.
    #[command(flatten)]
    pub simulation: SimulationArgs,
    /// Output format: normal, json, json+ or terse, or several separated by commas.
    #[arg(
        long = "output-format",
        value_name = "FORMAT",
        default_value = "normal"
    )]
    pub output_format: String,
    /// Write to a block device even if it is mounted, partitioned or holds a filesystem or
    /// partition table (fio's allow_mounted_write). Only for a real `--device` path.
    #[arg(long = "allow-mounted-write")]
    pub allow_mounted_write: bool,
    /// How long a request may stay at a real device before it fails with ETIMEDOUT (seconds,
    /// fractions allowed; 0 waits for ever), like the kernel's block-layer timeout. The
    /// device's late answer is absorbed. Only for a real `--device` path.
    #[arg(long = "io-timeout", value_name = "SECS", default_value = "30")]
    pub io_timeout: String,
    /// The trace of the run.
    #[command(flatten)]
    pub trace: TraceArgs,
    /// The HTML report of the run.
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Where `run` finds its jobs: its job files and command line.
fn sources<'a>(args: &'a RunArgs, jobs: &'a CommandLineJobs) -> JobSources<'a> {
    JobSources {
        job_files: &args.job_files,
        section: &args.section,
        strict: args.simulation.strict,
        jobs,
    }
}

/// Run a job file, in simulation (`--device sim:…`) or for real (`--device PATH`), and
/// render the report. SIGINT or SIGTERM ends the run early with what it measured
/// ([`crate::signals`]).
pub fn run(args: &RunArgs, jobs: &CommandLineJobs) -> Result<Printed, String> {
    if args.job_files.is_empty() && jobs.jobs.is_empty() {
        return Err(
            "no jobs: expected a job file, or a job on the command line (--name=NAME --rw=read ...)"
                .into(),
        );
    }
    if args.showcmd {
        return crate::fio_cmdline::show(&sources(args, jobs)).map(Printed::from);
    }
    if args.parse_only {
        let job_file = crate::fio_cmdline::load_run_jobs(&sources(args, jobs))?;
        crate::fio_cmdline::print_warnings(&job_file);
        return Ok(String::new().into());
    }
    let stop = crate::signals::stop_on_signals()?;
    let mut printed = run_until(args, jobs, &stop)?;
    if let Some((line, status)) = crate::signals::interrupted(&stop) {
        eprintln!("{line}");
        printed.status = status;
    }
    if let Some(path) = &args.output {
        std::fs::write(path, &printed.text)
            .map_err(|e| format!("--output {}: {e}", path.display()))?;
        printed.text.clear();
    }
    Ok(printed)
}

/// The run, in simulation or for real as `--device` says, until it ends or `stop` is set.
fn run_until(args: &RunArgs, jobs: &CommandLineJobs, stop: &StopSignal) -> Result<Printed, String> {
    let format = if args.minimal {
        "terse"
    } else {
        &args.output_format
    };
    let format: OutputFormat = format.parse().map_err(|e| format!("{e}"))?;
    match args.simulation.device.as_deref() {
        Some(path) if !path.starts_with("sim:") => real::run(args, jobs, path, format, stop),
        _ => simulated::run(args, jobs, format, stop),
    }
}
