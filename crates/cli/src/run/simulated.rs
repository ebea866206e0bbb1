//! `ioslice run` on a simulated device: the machine from the flags and the job files'
//! directives, the run described by [`RunInputs`], the simulator, the report.

use std::path::PathBuf;

use ioslice_core::{Progress, StopSignal};
use ioslice_fio::output::{render, OutputFormat};
use ioslice_fio::JobFile;
use ioslice_report::Settings;

use super::observers::Observers;
use super::{sources, RunArgs};
use crate::fio_args::CommandLineJobs;
use crate::scenario::ScenarioDefaults;
use crate::shared::{choose_scheduler, warn_unused_cgroups, Printed, RunInputs};

/// Run the jobs on the simulated machine and render the report in `format`.
pub fn run(
    args: &RunArgs,
    jobs: &CommandLineJobs,
    format: OutputFormat,
    stop: &StopSignal,
) -> Result<Printed, String> {
    if args.allow_mounted_write {
        return Err(
            "--allow-mounted-write is for a real --device path, not a simulated device".into(),
        );
    }
    let defaults = ScenarioDefaults::read_all(&args.job_files)?;
    let machine = args.simulation.machine(&defaults)?;
    let device = machine.device_spec()?;
    let inputs = RunInputs::of(&args.simulation)?;
    let job_file = crate::fio_cmdline::load_for_simulation(&sources(args, jobs))?;
    let scheduler = machine.scheduler(choose_scheduler(args.sched.as_deref(), &job_file)?);
    warn_unused_cgroups(&job_file, &inputs.cgroups);
    warn_verify_not_simulated(&job_file);
    let progress = Progress::new();
    let mut spec = inputs.spec(scheduler, stop);
    spec.progress = Some(progress.clone());
    spec.logs = Some(PathBuf::new()); // fio's log files, named relative to the current directory
    let config = machine.sim_config(device, spec)?;
    let observers = Observers::start(args, &job_file, &progress, true)?;
    let outcome = if observers.traced() {
        ioslice_sim::simulation::run_traced(&job_file, &config, &mut *observers.sink(None))
    } else {
        ioslice_sim::simulation::run(&job_file, &config)
    };
    let ended = observers.end()?;
    let mut outcome = outcome.map_err(|e| e.to_string())?;
    ended.keep(
        &mut outcome.report,
        Settings::simulated(&job_file.path, &config),
    )?;
    Ok(render(&outcome.report, format).into())
}

/// Print a warning for each job whose `verify=` a simulation leaves out: the simulator issues
/// the writes but does not read them back (a real `--device` run does).
fn warn_verify_not_simulated(job_file: &JobFile) {
    for job in job_file.jobs.iter().filter(|job| job.verify.active()) {
        eprintln!(
            "ioslice: warning: job {}: verify= is not simulated (no read-back phase); it runs on a real --device",
            job.name
        );
    }
}
