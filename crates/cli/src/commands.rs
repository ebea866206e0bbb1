//! The subcommands: argument shapes and what each prints.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use clap::Args;
use ioslice_core::trace::Tee;
use ioslice_core::{Progress, SchedSpec, StopSignal, TraceSink, SCHEDULERS};
use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_fio::output::{render, OutputFormat};
use ioslice_fio::JobFile;
use ioslice_report::{Report, Settings};
use ioslice_runner::{run_traced as run_jobs, RunConfig, RunSpec};
use ioslice_sim::preset::{presets, DeviceSpec};
use ioslice_sim::simulation::SimConfig;

use crate::cgroup_arg;
use crate::fio_args::CommandLineJobs;
use crate::fio_cmdline::JobSources;
use crate::report::{self, Recorders, ReportArgs, SharedRecorders};
use crate::scenario::ScenarioDefaults;
use crate::status::StatusLine;
use crate::trace::{self, TraceArgs, TraceFile};

/// The scheduler used when neither `--sched` nor the job file's `ioscheduler=` names one:
/// what Linux picks for a rotational disk (mq-deadline's legacy ancestor).
const DEFAULT_SCHEDULER: &str = "deadline";
/// The device used when `--device` is not given: no hardware, no root.
pub const DEFAULT_DEVICE: &str = "sim:sata-7200";

/// What `run` and `compare` share: the simulated device and host, the seed, cgroup weights,
/// and how strictly the job file is read.
#[derive(Debug, Args)]
pub struct SimulationArgs {
    /// Simulated device: `sim:PRESET[:key=value,...]` (see `ioslice devices`). For `run`, a
    /// path instead (a regular file, a directory or a block device) runs the job file for
    /// real through the engine. Default: the job file's `; ioslice-device:` line, else
    /// sim:sata-7200.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
    /// Simulated host settings, `key=value,...`: memory_mib, dirty_ratio,
    /// dirty_background_ratio, nr_requests, max_sectors_kb, read_ahead_kb, host_latency_us,
    /// queue_run_delay_us, driver_queue, direct_writes=sync|async (see `ioslice devices`).
    /// Repeatable; applied after the job file's `; ioslice-host:` lines.
    #[arg(long = "host", value_name = "KEY=VALUE,...")]
    pub host: Vec<String>,
    /// The kernel release whose elevators to model, as the kernel writes it (`2.6.10`,
    /// `2.6.28`): sets `version=` on every scheduler that has that tunable and was not given
    /// one (see `ioslice schedulers`). Default: the job file's `; ioslice-kernel:` line,
    /// else each scheduler's newest model.
    #[arg(long, value_name = "RELEASE")]
    pub kernel: Option<String>,
    /// Seed for every random choice; the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Weight and limits for cgroup NAME (nested `a/b` allowed):
    /// `NAME:weight=N,rbps=8M,wbps=B,riops=N,wiops=N,burst=100ms` (any of them), or io.max's
    /// `"NAME rbps=B wbps=B riops=N wiops=N"` with `max` for unlimited. The weight (1..=10000)
    /// overrides the job file's cgroup_weight; sizes take k/M/G suffixes (base 1024).
    /// `latency=75ms` gives the group an io.latency target (its siblings are throttled while
    /// it misses it). Repeatable. When any job names a cgroup, `run` adds per-cgroup totals to its output
    /// and `compare` prints one column per cgroup.
    #[arg(long = "cgroup", value_name = "NAME:weight=N,rbps=B,...")]
    pub cgroup: Vec<String>,
    /// Which controller enforces the cgroups' weights: `elevator` (the default: cfq's and
    /// bfq's own groups), or `ioband[:policy=weight|weight-iosize,token=N,io_throttle=N,io_limit=N]`
    /// (dm-ioband above the elevator, which then schedules without groups), or
    /// `elv-fq[:slice_sync=MS,slice_async=MS,group_idle=MS,fairness=0|1]` (elevator fair
    /// queuing: an instance of the elevator per group, groups given time slices by B-WF2Q+).
    #[arg(long = "controller", value_name = "elevator|ioband[:...]|elv-fq[:...]")]
    pub controller: Option<String>,
    /// Treat options ioslice does not support as errors instead of warnings.
    #[arg(long)]
    pub strict: bool,
    /// The most job processes one run may have, every numjobs clone counted (fio's
    /// --max-jobs; fio's limit, 4096, by default).
    #[arg(long = "max-jobs", value_name = "N", default_value_t = ioslice_fio::plan::DEFAULT_MAX_JOBS,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_jobs: u32,
}

impl SimulationArgs {
    /// The `--controller` given, else the elevator's own groups.
    pub fn controller(&self) -> Result<ioslice_core::ioband::Controller, String> {
        self.controller.as_deref().map_or(
            Ok(ioslice_core::ioband::Controller::Elevator),
            crate::controller_arg::parse,
        )
    }

    /// The device, host settings and kernel for the job files at `paths`: the command
    /// line's, else (the device, the kernel) or before them (the host) what the files declare.
    pub fn with_scenario(&self, paths: &[PathBuf]) -> Result<Machine, String> {
        let defaults = ScenarioDefaults::read_all(paths)?;
        let device = self
            .device
            .clone()
            .or(defaults.device)
            .unwrap_or_else(|| DEFAULT_DEVICE.to_string());
        let mut host = defaults.host;
        host.extend(self.host.iter().cloned());
        let kernel = self.kernel()?.or(defaults.kernel);
        Ok(Machine {
            device,
            host,
            kernel,
            group_changes: defaults.group_changes,
        })
    }

    /// `--kernel`, checked.
    pub fn kernel(&self) -> Result<Option<String>, String> {
        if let Some(kernel) = &self.kernel {
            ioslice_core::kernel::check(kernel).map_err(|e| format!("--kernel: {e}"))?;
        }
        Ok(self.kernel.clone())
    }
}

/// The machine a simulated run models: its device, host settings and kernel release.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The simulated device, `sim:PRESET[:key=value,...]`.
    pub device: String,
    /// Host settings, `key=value,...` each, in the order applied.
    pub host: Vec<String>,
    /// The kernel release whose elevators run, if one was named.
    pub kernel: Option<String>,
    /// Changes to groups during the run (`; ioslice-at:`), in file order.
    pub group_changes: Vec<crate::group_change::ScheduledChange>,
}

impl Machine {
    /// `spec` as this machine's kernel has it ([`ioslice_core::registry::with_kernel`]).
    pub fn scheduler(&self, spec: SchedSpec) -> SchedSpec {
        match &self.kernel {
            Some(kernel) => ioslice_core::registry::with_kernel(&spec, kernel),
            None => spec,
        }
    }
}

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

/// What a command prints on stdout, and its exit status.
#[derive(Debug)]
pub struct Printed {
    /// The report.
    pub text: String,
    /// 0, or 1 when a job stopped on an I/O error (as fio exits).
    pub status: u8,
}

impl From<String> for Printed {
    fn from(text: String) -> Self {
        Self { text, status: 0 }
    }
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

fn run_until(args: &RunArgs, jobs: &CommandLineJobs, stop: &StopSignal) -> Result<Printed, String> {
    let format = if args.minimal {
        "terse"
    } else {
        &args.output_format
    };
    let format: OutputFormat = format.parse().map_err(|e| format!("{e}"))?;
    let trace = args.trace.resolve()?;
    if let Some(path) = args.simulation.device.as_deref() {
        if !path.starts_with("sim:") {
            return run_real(args, jobs, path, format, trace, stop);
        }
    }
    let machine = args.simulation.with_scenario(&args.job_files)?;
    if args.allow_mounted_write {
        return Err(
            "--allow-mounted-write is for a real --device path, not a simulated device".into(),
        );
    }
    let device: DeviceSpec = machine
        .device
        .parse()
        .map_err(|e| format!("--device: {e}"))?;
    let overrides = cgroup_arg::parse_all(&args.simulation.cgroup)?;
    let job_file = crate::fio_cmdline::load_for_run(&sources(args, jobs))?;
    let scheduler = machine.scheduler(choose_scheduler(args.sched.as_deref(), &job_file)?);
    warn_unused_cgroups(&job_file, &overrides);
    warn_verify_not_simulated(&job_file);
    let mut config = SimConfig::new(args.simulation.seed, scheduler, device);
    config.run.max_jobs = args.simulation.max_jobs;
    config.run.stop = stop.clone();
    config.run.group_weights = cgroup_arg::sim_weights(&overrides);
    config.run.group_limits = cgroup_arg::sim_limits(&overrides);
    config.run.group_changes = crate::group_change::sim_changes(
        &machine.group_changes,
        &config.run.group_limits,
        &job_file,
    )?;
    config.run.controller = args.simulation.controller()?;
    config.run.logs = Some(PathBuf::new()); // fio's log files, named relative to the current directory
    apply_host(&mut config, &machine.host)?;
    let progress = Progress::new();
    config.run.progress = Some(progress.clone());
    let file = match trace {
        Some((path, trace_format)) => Some(TraceFile::create(&path, trace_format)?),
        None => None,
    };
    let mut recorders = args
        .report
        .report
        .as_ref()
        .map(|_| Recorders::new(&job_file, 1));
    let status = StatusLine::start_as(&progress, true, args.eta.as_deref());
    let outcome = trace::simulate(
        &job_file,
        &config,
        file.as_ref(),
        recorders.as_mut().map(|r| r as &mut dyn TraceSink),
    );
    status.finish();
    if let Some(file) = &file {
        file.finish()?;
    }
    let mut outcome = outcome.map_err(|e| e.to_string())?;
    outcome.report.timestamp = run_date()?;
    if let (Some(path), Some(recorders)) = (&args.report.report, recorders) {
        let settings = Settings::simulated(&job_file.path, &config);
        let record = recorders.finish(&outcome.report, settings);
        report::write(path, &Report::of_run(record))?;
    }
    Ok(render(&outcome.report, format).into())
}

/// `run --device PATH`: the job file through the real engine on a file, directory or block
/// device. Notes, fio's `io_u error` lines and verify failures go to stderr; a job stopped by an I/O error
/// makes the exit status 1, as in fio.
fn run_real(
    args: &RunArgs,
    jobs: &CommandLineJobs,
    device: &str,
    format: OutputFormat,
    trace: Option<(PathBuf, ioslice_core::trace::TraceFormat)>,
    stop: &StopSignal,
) -> Result<Printed, String> {
    if !args.simulation.host.is_empty() {
        return Err(
            "--host describes a simulated host: it does not apply to a real --device".into(),
        );
    }
    let machine = real_machine(&args.job_files)?;
    let overrides = cgroup_arg::parse_all(&args.simulation.cgroup)?;
    let job_file = crate::fio_cmdline::load_for_run(&sources(args, jobs))?;
    let mut scheduler = choose_scheduler(args.sched.as_deref(), &job_file)?;
    if let Some(kernel) = args.simulation.kernel()?.or(machine.kernel) {
        scheduler = ioslice_core::registry::with_kernel(&scheduler, &kernel);
    }
    warn_unused_cgroups(&job_file, &overrides);
    let progress = Progress::new();
    let config = RunConfig {
        run: RunSpec {
            seed: args.simulation.seed,
            scheduler,
            group_weights: cgroup_arg::sim_weights(&overrides),
            group_limits: cgroup_arg::sim_limits(&overrides),
            group_changes: Vec::new(),
            controller: args.simulation.controller()?,
            max_jobs: args.simulation.max_jobs,
            stop: stop.clone(),
            progress: Some(progress.clone()),
            logs: Some(PathBuf::new()),
        },
        path: PathBuf::from(device),
        allow_mounted_write: args.allow_mounted_write,
        io_timeout: parse_io_timeout(&args.io_timeout)?,
        device: crate::timed::timed_device(device)?,
    };
    let status = StatusLine::start_as(&progress, false, args.eta.as_deref());
    let file = match trace {
        Some((path, trace_format)) => Some(TraceFile::create(&path, trace_format)?),
        None => None,
    };
    let recorders = args
        .report
        .report
        .as_ref()
        .map(|_| SharedRecorders(Arc::new(Mutex::new(Recorders::new(&job_file, 1)))));
    let make_sink = |label: Option<&str>| -> Box<dyn TraceSink + Send> {
        Box::new(Tee {
            first: file.as_ref().map(|file| file.sink(label)),
            second: recorders.clone(),
        })
    };
    let sinks = (file.is_some() || recorders.is_some()).then_some(make_sink);
    let outcome = run_jobs(
        &job_file,
        &config,
        sinks
            .as_ref()
            .map(|sinks| sinks as ioslice_runner::TraceSinks<'_>),
    );
    status.finish();
    if let Some(file) = &file {
        file.finish()?;
    }
    let mut outcome = outcome.map_err(|e| e.to_string())?;
    outcome.report.timestamp = run_date()?;
    if let (Some(path), Some(recorders)) = (&args.report.report, recorders) {
        let recorders = recorders.into_inner()?;
        let settings = Settings::real(
            &job_file.path,
            device,
            &config.run.scheduler,
            &config.run.controller,
            config.run.seed,
        );
        report::write(
            path,
            &Report::of_run(recorders.finish(&outcome.report, settings)),
        )?;
    }
    for line in &outcome.laid_out {
        eprintln!("{line}");
    }
    for note in &outcome.notes {
        eprintln!("ioslice: note: {note}");
    }
    for line in &outcome.io_errors {
        eprintln!("{line}");
    }
    for message in &outcome.verify_errors {
        eprintln!("{message}");
    }
    Ok(Printed {
        text: render(&outcome.report, format),
        status: u8::from(!outcome.failed_jobs.is_empty()),
    })
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

/// Print a warning for each `--cgroup` that names a group without jobs.
pub fn warn_unused_cgroups(job_file: &JobFile, overrides: &[cgroup_arg::CgroupArg]) {
    for warning in cgroup_arg::unused_warnings(job_file, overrides) {
        eprintln!("ioslice: warning: {warning}");
    }
}

/// Parse a job file and print its warnings (the simulator refuses what it cannot run).
pub fn load_job_file(path: &std::path::Path, strict: bool) -> Result<JobFile, String> {
    let options = ParseOptions {
        strict,
        env: std::env::vars().collect(),
        ..ParseOptions::default()
    };
    let job_file = parse_file(path, &options).map_err(|e| e.to_string())?;
    // Refused in one line, without the warnings about options that go with what is refused.
    ioslice_fio::jobfile::check_supported(&job_file).map_err(|e| e.to_string())?;
    for warning in &job_file.warnings {
        eprintln!(
            "ioslice: warning: {}:{}: {}",
            warning.origin.file, warning.origin.line, warning.message
        );
    }
    Ok(job_file)
}

/// `--sched` if given, else the jobs' `ioscheduler=` (which must agree), else the default.
pub fn choose_scheduler(flag: Option<&str>, job_file: &JobFile) -> Result<SchedSpec, String> {
    if let Some(text) = flag {
        return text.parse().map_err(|e| format!("--sched: {e}"));
    }
    let mut named = job_file
        .jobs
        .iter()
        .filter_map(|job| job.ioscheduler.as_deref().map(|name| (job, name)));
    let Some((first_job, first)) = named.next() else {
        return DEFAULT_SCHEDULER.parse().map_err(|e| format!("{e}"));
    };
    if let Some((job, other)) = named.find(|(_, name)| *name != first) {
        return Err(format!(
            "{}:{}: job '{}' asks for ioscheduler={} but job '{}' asked for {}: one device has one scheduler (use --sched to choose)",
            job.origin.file, job.origin.line, job.name, other, first_job.name, first
        ));
    }
    first
        .parse()
        .map_err(|e| format!("{}:{}: {e}", first_job.origin.file, first_job.origin.line))
}

/// `ioslice devices`: every preset and parameter with its source.
pub fn devices() -> String {
    let mut out = String::new();
    for preset in presets() {
        let _ = writeln!(out, "sim:{}  {}", preset.name, preset.summary);
        let width = preset
            .params
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(0);
        for param in &preset.params {
            let value = format!("{} {}", param.value, param.unit);
            let _ = writeln!(
                out,
                "    {:width$}  {:>18}  {}",
                param.name,
                value.trim_end(),
                param.source,
                width = width
            );
        }
        out.push('\n');
    }
    out.push_str("Override any parameter: --device sim:PRESET:key=value,key=value\n\n");
    out.push_str("The simulated host (--host key=value,...):\n");
    let _ = write!(out, "{}", ioslice_sim::host::HostKeys);
    out
}

/// `ioslice schedulers`: every policy and tunable with its default and unit.
pub fn schedulers() -> String {
    let mut out = String::new();
    for info in SCHEDULERS {
        let aliases = if info.aliases.is_empty() {
            String::new()
        } else {
            format!(" (alias {})", info.aliases.join(", "))
        };
        let _ = writeln!(out, "{}{}  {}", info.name, aliases, info.summary);
        for def in info.tunables {
            let _ = writeln!(
                out,
                "    {:16} default {:>6}  [{}..={}] {:10}  {}",
                def.name,
                def.format_value(def.default),
                def.format_value(def.min),
                def.format_value(def.max),
                def.unit,
                def.help
            );
        }
        out.push('\n');
    }
    out.push_str("Set tunables: --sched NAME:tunable=value,tunable=value\n");
    out
}

/// Apply `--host` settings (each `key=value,...`) to a simulation's configuration.
pub fn apply_host(config: &mut SimConfig, settings: &[String]) -> Result<(), String> {
    settings
        .iter()
        .try_for_each(|text| ioslice_sim::host::apply(config, text))
        .map_err(|e| format!("--host: {e}"))
}

/// The date a run's report carries, in seconds since 1970: now, or `SOURCE_DATE_EPOCH` when
/// set, as reproducible builds fix theirs. The date is not part of what a seed determines, so
/// two runs of a seed differ in it alone; a byte-for-byte comparison sets the variable.
fn run_date() -> Result<u64, String> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text.trim().parse().map_err(|_| {
            format!("SOURCE_DATE_EPOCH={text}: expected whole seconds since 1970-01-01")
        }),
        Err(_) => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs())),
    }
}

/// What the job files' scenario directives say that a real run can use: the kernel release
/// whose elevators to model (`; ioslice-kernel:`). A simulated host (`; ioslice-host:`) does
/// not apply to a real device and is refused, naming the file, as `--host` is, and so are
/// scheduled changes to groups (`; ioslice-at:`), which run in simulation only; the device a
/// file names (`; ioslice-device:`) gives way to the `--device` given.
fn real_machine(paths: &[PathBuf]) -> Result<ScenarioDefaults, String> {
    for path in paths {
        let defaults = ScenarioDefaults::read(path)?;
        if let Some(host) = defaults.host.first() {
            return Err(format!(
                "{}: '; ioslice-host: {host}' describes a simulated host: it does not apply to a real --device (run the file on a sim: device, or remove the line)",
                path.display()
            ));
        }
        if let Some(change) = defaults.group_changes.first() {
            return Err(format!(
                "{}: ioslice-at: scheduled changes to groups run in simulation only, not on a real --device",
                change.origin
            ));
        }
    }
    ScenarioDefaults::read_all(paths)
}
