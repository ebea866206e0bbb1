//! `ioslice run --device PATH`: the job file through the real engine on a file, directory
//! or block device, described by the same [`RunInputs`] as a simulated run, plus its target
//! and I/O timeout. Notes, fio's `io_u error` lines and verify failures go to stderr; a job
//! stopped by an I/O error makes the exit status 1, as in fio.

use std::path::PathBuf;

use ioslice_core::{Progress, StopSignal};
use ioslice_fio::output::{render, OutputFormat};
use ioslice_report::Settings;
use ioslice_runner::{run_traced, RunConfig, RunOutcome};

use super::observers::Observers;
use super::{sources, RunArgs};
use crate::fio_args::CommandLineJobs;
use crate::scenario::ScenarioDefaults;
use crate::shared::{choose_scheduler, warn_unused_cgroups, Printed, RunInputs};

/// Run the jobs on `device` and render the report in `format`.
pub fn run(
    args: &RunArgs,
    jobs: &CommandLineJobs,
    device: &str,
    format: OutputFormat,
    stop: &StopSignal,
) -> Result<Printed, String> {
    if !args.simulation.host.is_empty() {
        return Err(
            "--host describes a simulated host: it does not apply to a real --device".into(),
        );
    }
    let defaults = ScenarioDefaults::read_all(&args.job_files)?;
    check_real(&defaults)?;
    let inputs = RunInputs::of(&args.simulation)?;
    let job_file = crate::fio_cmdline::load_for_run(&sources(args, jobs))?;
    let mut scheduler = choose_scheduler(args.sched.as_deref(), &job_file)?;
    if let Some(kernel) = args.simulation.kernel()?.or(defaults.kernel) {
        scheduler = ioslice_core::registry::with_kernel(&scheduler, &kernel);
    }
    warn_unused_cgroups(&job_file, &inputs.cgroups);
    let progress = Progress::new();
    let mut spec = inputs.spec(scheduler, stop);
    spec.group_changes =
        crate::group_change::run_changes(&defaults.group_changes, &spec.group_limits);
    spec.progress = Some(progress.clone());
    spec.logs = Some(PathBuf::new());
    let config = RunConfig {
        run: spec,
        path: PathBuf::from(device),
        allow_mounted_write: args.allow_mounted_write,
        io_timeout: parse_io_timeout(&args.io_timeout)?,
        device: crate::timed::timed_device(device)?,
    };
    let observers = Observers::start(args, &job_file, &progress, false)?;
    let make_sink = |label: Option<&str>| observers.sink(label);
    let sinks = observers.traced().then_some(&make_sink);
    let outcome = run_traced(
        &job_file,
        &config,
        sinks.map(|sinks| sinks as ioslice_runner::TraceSinks<'_>),
    );
    let ended = observers.end()?;
    let mut outcome = outcome.map_err(|e| e.to_string())?;
    let run = &config.run;
    let settings = Settings::real(&job_file.path, device, run);
    ended.keep(&mut outcome.report, settings)?;
    print_notes(&outcome);
    Ok(Printed {
        text: render(&outcome.report, format),
        status: u8::from(!outcome.failed_jobs.is_empty()),
    })
}

/// What the run has to say besides its report, on stderr: where it laid out its files, its
/// notes, fio's `io_u error` lines and verify failures.
fn print_notes(outcome: &RunOutcome) {
    for line in &outcome.laid_out {
        eprintln!("{line}");
    }
    for note in &outcome.notes {
        eprintln!("ioslice: note: {note}");
    }
    for line in outcome.io_errors.iter().chain(&outcome.verify_errors) {
        eprintln!("{line}");
    }
}

/// What the job files' scenario directives (`defaults`) say that a real run can use: the
/// kernel release whose elevators to model (`; ioslice-kernel:`). A simulated host
/// (`; ioslice-host:`) does not apply to a real device and is refused, naming where it was
/// written, as `--host` is, and so are scheduled changes to groups (`; ioslice-at:`), which
/// run in simulation only; the device a file names (`; ioslice-device:`) gives way to the
/// `--device` given.
fn check_real(defaults: &ScenarioDefaults) -> Result<(), String> {
    if let (Some(host), Some(origin)) = (defaults.host.first(), &defaults.host_origin) {
        return Err(format!(
            "{origin}: '; ioslice-host: {host}' describes a simulated host: it does not apply to a real --device (run the file on a sim: device, or remove the line)"
        ));
    }
    Ok(())
}

/// `--io-timeout SECS`: `None` for 0.
fn parse_io_timeout(text: &str) -> Result<Option<std::time::Duration>, String> {
    let seconds = text
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && (0.0..=1e9).contains(s))
        .ok_or_else(|| {
            format!("--io-timeout: bad value '{text}': expected seconds, such as 30 or 0.5 (0: no timeout)")
        })?;
    Ok((seconds > 0.0).then(|| std::time::Duration::from_secs_f64(seconds)))
}
