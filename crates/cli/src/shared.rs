//! What `run`, `compare`, `sweep` and `seeds` share: the flags that describe the simulated
//! machine and the run ([`SimulationArgs`]), the machine the job files' directives and the
//! flags make ([`Machine`]), the job file read and its scheduler chosen, and the run's
//! description built from them for either driver ([`RunInputs`]) and, in simulation, with
//! its machine ([`Machine::sim_config`]).

use clap::Args;
use ioslice_core::{SchedSpec, StopSignal};
use ioslice_fio::jobfile::{parse_file, ParseOptions};
use ioslice_fio::run_spec::RunSpec;
use ioslice_fio::JobFile;
use ioslice_sim::preset::DeviceSpec;
use ioslice_sim::simulation::SimConfig;

use crate::cgroup_arg::{self, CgroupArg};
use crate::scenario::ScenarioDefaults;

/// The scheduler used when neither `--sched` nor the job file's `ioscheduler=` names one:
/// what Linux picks for a rotational disk (mq-deadline's legacy ancestor).
const DEFAULT_SCHEDULER: &str = "deadline";
/// The default for a job file in fio's zone mode (`zonemode=zbd`): what Linux 5.8–6.9 picks
/// for a zoned disk, the one elevator with zone write locking.
const DEFAULT_ZONED_SCHEDULER: &str = "mq-deadline";
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
    /// it misses it). Repeatable. When any job names a cgroup, `run` adds per-cgroup totals
    /// to its output
    /// and `compare` prints one column per cgroup.
    #[arg(long = "cgroup", value_name = "NAME:weight=N,rbps=B,...")]
    pub cgroup: Vec<String>,
    /// Which controller enforces the cgroups' weights: `elevator` (the default: cfq's and
    /// bfq's own groups), or `ioband[:policy=weight|weight-iosize,token=N,io_throttle=N,io_limit=N]`
    /// (dm-ioband above the elevator, which then schedules without groups), or
    /// `elv-fq[:slice_sync=MS,slice_async=MS,group_idle=MS,fairness=0|1]` (elevator fair
    /// queuing: an instance of the elevator per group, groups given time slices by B-WF2Q+),
    /// or `iocost[:rbps=N,...,rpct=P,rlat=US,wpct=P,wlat=US,min=P,max=P]` (blk-iocost above
    /// the elevator: each request's modelled cost charged to its group's vtime by io.weight,
    /// vrate set by the device's saturation; keys in io.cost.model's and io.cost.qos's names,
    /// the others the kernel's defaults for the device kind).
    #[arg(
        long = "controller",
        value_name = "elevator|ioband[:...]|elv-fq[:...]|iocost[:...]"
    )]
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

    /// The device, host settings and kernel of a run of job files whose directives are
    /// `defaults`: the command line's, else (the device, the kernel) or before them (the
    /// host) what the files declare.
    pub fn machine(&self, defaults: &ScenarioDefaults) -> Result<Machine, String> {
        let device = self
            .device
            .clone()
            .or_else(|| defaults.device.clone())
            .unwrap_or_else(|| DEFAULT_DEVICE.to_string());
        let mut host = defaults.host.clone();
        host.extend(self.host.iter().cloned());
        let kernel = self.kernel()?.or_else(|| defaults.kernel.clone());
        Ok(Machine {
            device,
            host,
            kernel,
            group_changes: defaults.group_changes.clone(),
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

    /// The simulated device, checked.
    pub fn device_spec(&self) -> Result<DeviceSpec, String> {
        self.device.parse().map_err(|e| format!("--device: {e}"))
    }

    /// The simulator's configuration for a run described by `run` on this machine's
    /// `device`: with its host settings and its scheduled changes to groups.
    pub fn sim_config(&self, device: DeviceSpec, mut run: RunSpec) -> Result<SimConfig, String> {
        run.group_changes =
            crate::group_change::run_changes(&self.group_changes, &run.group_limits);
        let mut config = SimConfig::new(run.seed, run.scheduler.clone(), device);
        config.run = run;
        apply_host(&mut config, &self.host)?;
        Ok(config)
    }
}

/// What the command line says of a run besides its scheduler and machine, checked: the
/// seed, the cgroups' weights and limits, the controller and the job limit. Both drivers'
/// runs are described from it ([`RunInputs::spec`]).
#[derive(Debug, Clone)]
pub struct RunInputs {
    /// `--seed`.
    pub seed: u64,
    /// `--cgroup`, parsed.
    pub cgroups: Vec<CgroupArg>,
    /// `--controller`, parsed.
    pub controller: ioslice_core::ioband::Controller,
    /// `--max-jobs`.
    pub max_jobs: u32,
}

impl RunInputs {
    /// The inputs `args` give.
    pub fn of(args: &SimulationArgs) -> Result<Self, String> {
        Ok(Self {
            seed: args.seed,
            cgroups: cgroup_arg::parse_all(&args.cgroup)?,
            controller: args.controller()?,
            max_jobs: args.max_jobs,
        })
    }

    /// A run of `scheduler` with these inputs, ended early by `stop`; no progress published
    /// and no log files unless the caller asks.
    pub fn spec(&self, scheduler: SchedSpec, stop: &StopSignal) -> RunSpec {
        let mut run = RunSpec::new(self.seed, scheduler);
        run.group_weights = cgroup_arg::sim_weights(&self.cgroups);
        run.group_limits = cgroup_arg::sim_limits(&self.cgroups);
        run.controller = self.controller;
        run.max_jobs = self.max_jobs;
        run.stop = stop.clone();
        run
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
    ioslice_fio::jobfile::check_simulable(&job_file).map_err(|e| e.to_string())?;
    for warning in &job_file.warnings {
        eprintln!(
            "ioslice: warning: {}:{}: {}",
            warning.origin.file, warning.origin.line, warning.message
        );
    }
    Ok(job_file)
}

/// `--sched` if given, else the jobs' `ioscheduler=` (which must agree), else the default
/// (mq-deadline for a job file in zone mode `zbd`).
pub fn choose_scheduler(flag: Option<&str>, job_file: &JobFile) -> Result<SchedSpec, String> {
    if let Some(text) = flag {
        return text.parse().map_err(|e| format!("--sched: {e}"));
    }
    let mut named = job_file
        .jobs
        .iter()
        .filter_map(|job| job.ioscheduler.as_deref().map(|name| (job, name)));
    let Some((first_job, first)) = named.next() else {
        let zoned = job_file
            .jobs
            .iter()
            .any(|job| job.zone_mode == ioslice_fio::ZoneMode::Zbd);
        let default = if zoned {
            DEFAULT_ZONED_SCHEDULER
        } else {
            DEFAULT_SCHEDULER
        };
        return default.parse().map_err(|e| format!("{e}"));
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

/// Print a warning for each `--cgroup` that names a group without jobs.
pub fn warn_unused_cgroups(job_file: &JobFile, overrides: &[cgroup_arg::CgroupArg]) {
    for warning in cgroup_arg::unused_warnings(job_file, overrides) {
        eprintln!("ioslice: warning: {warning}");
    }
}

/// Apply `--host` settings (each `key=value,...`) to a simulation's configuration.
pub fn apply_host(config: &mut SimConfig, settings: &[String]) -> Result<(), String> {
    settings
        .iter()
        .try_for_each(|text| ioslice_sim::host::apply(config, text))
        .map_err(|e| format!("--host: {e}"))
}
