//! ioslice-runner: running an fio job file for real, the engine's counterpart of the
//! simulator's driver (what `ioslice run --device PATH` does).
//!
//! It is a client of [`ioslice_engine`]'s public API and nothing more: each job process is a
//! thread with a [`Batch`] of its clients, the same batching and lanes any program using the
//! engine has.
//!
//! [`run`] opens the files or the block device a job file names under one `--device`
//! path, starts one [`Engine`] per file (each with its own policy instance), and drives
//! every job process on its own thread with the same
//! [`JobClock`](ioslice_fio::workload::JobClock) the simulator uses, on the real clock. Each
//! process draws its offsets from the random stream the simulator would give it for the same
//! seed ([`ioslice_fio::plan`]), so both runs issue the same I/O. The result is a
//! [`RunReport`], printed in fio's formats like a simulation's.
//!
//! Where the I/O goes, by what `--device` names:
//! - a regular file or a block device: every job uses it, as when every job's `filename=`
//!   names that one device (a job's offsets are from its start); a missing regular file is
//!   created and laid out as fio lays it out (`layout`);
//! - a directory: each job's files are named as fio names them (`filename=`, else
//!   `jobname.clone.filenum`, under `directory=`) relative to it (a name that leaves it is
//!   refused, `confine`), created and laid out
//!   (written with zeros, as fio does) to the size the jobs need. Jobs on different files
//!   get different engines: a real elevator is per device, so several per-file engines on
//!   one filesystem approximate it (they do not arbitrate between each other).
//!
//! Writing to a block device that is mounted, partitioned or carries a signature is refused
//! (the engine's opener, [`Engine::on_path`](ioslice_engine::Engine::on_path)) unless [`RunConfig::allow_mounted_write`] is set;
//! reading from one is allowed, as in fio.
//!
//! A request that fails completes with its errno; the engine keeps serving the others. The
//! job counts the error, keeps the first errno as fio's `err=`, and stops unless fio's rule
//! lets it go on: `continue_on_error=` covers the kind of error (a kind `ignore_error=` gives
//! a list is covered too) and the error is non-fatal (`EIO` and `EILSEQ`, or what
//! `ignore_error=` lists for that kind; [`ioslice_fio::errno::goes_on`]).
//!
//! [`run_traced`] also traces every engine ([`EngineBuilder::trace`](ioslice_engine::EngineBuilder::trace)):
//! it asks for one sink per engine, naming the engine's file when there are several.
//!
//! The plan (targets and processes) is in `plan`, each job process's thread in `worker`,
//! fio's disk statistics in `disk_stats`, opening the targets and starting their engines in
//! `opened`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ioslice_core::{Nanos, SchedSpec, TraceSink};
use ioslice_engine::{Batch, DeviceError, Engine, EngineError};
use ioslice_fio::jobfile::{check_supported, check_verify};
use ioslice_fio::{
    CgroupSettings, JobDescription, JobFile, JobReport, JobSpec, JobStats, RunReport,
};

mod confine;
mod disk_stats;
mod exec;
mod file_ops;
mod flow;
mod layout;
mod opened;
mod plan;
mod progress;
mod regroup;
mod verify;
mod waitee;
mod worker;

use ioslice_fio::logs::{JobLogs, LogError, LogFiles};
pub use ioslice_fio::run_spec::RunSpec;

use disk_stats::{disk_util, DiskStat};
pub use opened::DeviceBackend;
use opened::{start_engines, Opened};
use plan::{place_of, plan, Place, ProcessPlan};
use verify::Verifier;
use worker::Worker;

/// What a real run needs besides the job file: the run's description, shared with the
/// simulator, plus where the I/O goes and how long a request may take.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The seed, policy, groups, controller, job limit, stop signal, progress and logs.
    pub run: RunSpec,
    /// A regular file, a directory or a block device.
    pub path: PathBuf,
    /// Write to a block device even if it is mounted, partitioned or formatted.
    pub allow_mounted_write: bool,
    /// How long a request may stay at the device before it fails with `ETIMEDOUT`
    /// (`--io-timeout`; `None`: for ever). fio's rules for errors then apply to it as to any
    /// other errno.
    pub io_timeout: Option<std::time::Duration>,
    /// A device given as an engine backend instead of `path` (a simulated disk on the real
    /// clock): every job uses it, `path` only names it, and nothing on the filesystem is
    /// touched.
    pub device: Option<DeviceBackend>,
}

impl RunConfig {
    /// A run of `scheduler` on `path` with `seed` and every other setting at its default:
    /// no writes to a mounted device, the job file's groups only, the elevator's own
    /// controller, fio's job limit, no stop asked, and the kernel's 30 s I/O timeout.
    pub fn new(seed: u64, scheduler: SchedSpec, path: PathBuf) -> Self {
        Self {
            run: RunSpec::new(seed, scheduler),
            path,
            allow_mounted_write: false,
            io_timeout: Some(ioslice_engine::DEFAULT_IO_TIMEOUT),
            device: None,
        }
    }
}

/// A finished real run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// What fio would print.
    pub report: RunReport,
    /// One-line notes worth telling (the backend chosen where it is not io_uring, per-file
    /// engines, a refusal overridden by `allow_mounted_write`).
    pub notes: Vec<String>,
    /// fio's line for each job's first I/O error:
    /// `fio: io_u error on file F: Invalid argument: read offset=0, buflen=1000`.
    pub io_errors: Vec<String>,
    /// Names of the jobs an I/O error stopped (fio exits with status 1 for them).
    pub failed_jobs: Vec<String>,
    /// fio's line for each missing file created and laid out before the run
    /// (`job: Laying out IO file (1 file / 1MiB)`).
    pub laid_out: Vec<String>,
    /// fio's message for each verify failure (`crc32c: verify failed at file F offset O,
    /// …` with the expected and received checksums on the next lines), in job order.
    pub verify_errors: Vec<String>,
}

/// Why a real run could not start. Each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The job file asks for something that cannot run, or sizes that do not fit.
    #[error("{0}")]
    Job(String),
    /// The path or a file under it cannot be opened.
    #[error("{0}")]
    Device(#[from] DeviceError),
    /// Writing was refused (a mounted or formatted block device).
    #[error("{0}")]
    Refused(String),
    /// The engine would not start (the scheduler specification, groups).
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// A log file (`write_bw_log=`, …) that cannot be written.
    #[error("{0}")]
    Log(#[from] LogError),
    /// A job thread could not be started, or panicked.
    #[error("job thread: {0}")]
    Thread(String),
}

/// What a job process's thread hands back.
pub(crate) struct ProcessResult {
    stats: JobStats,
    end: Nanos,
    ramp_end: Nanos,
    first_error: Option<String>,
    stopped_by_error: bool,
    /// fio's messages for the verify failures the job found.
    verify_reports: Vec<String>,
    /// Why the job's logs could not be written, if they could not.
    log_error: Option<LogError>,
    /// The job thread's id, which fio reports as a threaded job's `pid`.
    thread_id: u32,
}

/// Run `job_file` for real on `config.path`.
///
/// # Errors
/// A [`RunError`] when the run cannot start: a missing or unusable path, a refused write,
/// a job that cannot run, a bad scheduler. I/O errors during the run are not errors of
/// this function: they are in the report and [`RunOutcome::failed_jobs`].
pub fn run(job_file: &JobFile, config: &RunConfig) -> Result<RunOutcome, RunError> {
    run_traced(job_file, config, None)
}

/// Makes the trace sink of each engine of a run: given `None` when the run has one engine,
/// else the engine's file, to label its events with.
pub type TraceSinks<'a> = &'a dyn Fn(Option<&str>) -> Box<dyn TraceSink + Send>;

/// [`run`], with every engine traced into a sink from `trace`, if given.
///
/// # Errors
/// As [`run`].
pub fn run_traced(
    job_file: &JobFile,
    config: &RunConfig,
    trace: Option<TraceSinks<'_>>,
) -> Result<RunOutcome, RunError> {
    let began = Instant::now();
    check_supported(job_file).map_err(job_error)?;
    if let Some(job) = job_file
        .jobs
        .iter()
        .find(|job| job.zone_mode == ioslice_fio::ZoneMode::Zbd)
    {
        return Err(job_error(format!(
            "job {}: zonemode=zbd runs only on a simulated zoned device: expected --device sim:smr",
            job.name
        )));
    }
    if let Some(job) = job_file.jobs.iter().find(|job| {
        job.ioengine == ioslice_fio::IoEngine::CpuIo
            && job.cpu.mode == ioslice_fio::cpuio::CpuMode::Qsort
    }) {
        return Err(job_error(format!(
            "job {}: ioengine=cpuio with cpumode=qsort runs only simulated: expected cpumode=noop, or a sim: device",
            job.name
        )));
    }
    check_verify(job_file).map_err(job_error)?;
    let mut device = config
        .device
        .as_ref()
        .map(DeviceBackend::open)
        .transpose()?;
    let place = match &device {
        Some((_, geometry)) => Place::Device(config.path.clone(), geometry.capacity),
        None => place_of(&config.path)?,
    };
    let specs = file_ops::namespace::with_sizes(specs_on(job_file, &place));
    specs.iter().try_for_each(check_block_room)?;
    let namespace = file_ops::namespace::all_namespace(&specs)?;
    if namespace && !matches!(place, Place::Directory(_)) {
        return Err(RunError::Job(format!(
            "{}: is not a directory; expected a directory for the jobs' files (ioengine={})",
            config.path.display(),
            specs[0].ioengine.fio_name()
        )));
    }
    let mut groups = job_file
        .group_tree(&config.run.group_weights, &config.run.group_limits)
        .map_err(job_error)?;
    groups.set_controller(config.run.controller);
    let changes = regroup::check(job_file, config, &groups)?;
    if let (true, Some(change)) = (namespace, changes.first()) {
        return Err(RunError::Job(format!(
            "{}: a change to the groups needs jobs that do their I/O through the engine; expected none with ioengine={}",
            change.change.origin,
            specs[0].ioengine.fio_name()
        )));
    }
    let (mut processes, targets, phases) = plan(
        &specs,
        &place,
        &groups,
        config.run.seed,
        config.run.max_jobs,
    )?;
    open_logs(&mut processes, &specs, config)?;
    if namespace {
        file_ops::namespace::set_up(&specs, &processes, &targets)?;
        let descriptions = descriptions_of(job_file, &processes);
        let started = Instant::now();
        let results = file_ops::namespace::run_phases(
            &mut processes,
            phases,
            &specs,
            &targets,
            started,
            &config.run.stop,
        )?;
        let cgroups = CgroupSettings::of_run(&groups, |_| None);
        let report = report_of(job_file, config, began, cgroups, Vec::new());
        let outcome = RunOutcome::of(report, Vec::new(), Vec::new());
        return outcome.with_jobs(job_file, descriptions, results);
    }

    let mut notes = Vec::new();
    let mut laid_out = Vec::new();
    if device.is_none() {
        for target in &targets {
            laid_out.extend(layout::create_missing(
                &target.path,
                target.len,
                &target.layout,
            )?);
        }
    }
    // One synchronous job alone transfers on its own thread; several keep their lanes, so
    // that no job's thread does another's transfer while its own waits.
    let synchronous =
        processes.len() == 1 && specs.iter().all(|spec| spec.ioengine.is_synchronous());
    let (engines, opened) = start_engines(
        device.take(),
        &targets,
        synchronous,
        config,
        &groups,
        trace,
        &mut notes,
    )?;
    let disks_before: Vec<Option<DiskStat>> = engines
        .iter()
        .map(|engine| engine.target().and_then(DiskStat::of_target))
        .collect();
    let mut cgroups = match engines.first() {
        Some(engine) => {
            let handle = engine.handle();
            CgroupSettings::of_run(&groups, |id| handle.group_weight(&groups.get(id).path))
        }
        None => CgroupSettings::of_run(&groups, |_| None),
    };
    let descriptions = descriptions_of(job_file, &processes);

    let started = Instant::now();
    if let Some(progress) = &config.run.progress {
        progress.begin(processes.len());
    }
    let moves = Arc::new(regroup::Moves::for_processes(processes.iter().map(
        |process| {
            let job = job_file.jobs[process.spec_index].name.as_str();
            (process.spec_index, job, process.group_path.as_str())
        },
    )));
    let shared = Shared {
        started,
        flows: flow::SharedFlows::default(),
        waitees: Arc::new(waitee::Waitees::of(&processes, &specs)),
        stop: &config.run.stop,
        progress: config.run.progress.as_ref(),
        moves: Arc::clone(&moves),
    };
    let handles = engines.iter().map(Engine::handle).collect();
    let changer =
        regroup::ChangesThread::start(changes, handles, moves, started, config.run.stop.clone())?;
    let results = run_phases(processes, phases, &specs, &engines, &opened, &shared);
    cgroups.extend(changer.finish()?);
    let results = results?;
    let elapsed = started.elapsed();
    let mut finals = Vec::with_capacity(engines.len());
    for engine in engines {
        finals.push(engine.shutdown()?);
    }
    let disk_util = disk_util(&opened, &disks_before, &finals, elapsed);

    let report = report_of(job_file, config, began, cgroups, disk_util);
    RunOutcome::of(report, notes, laid_out).with_jobs(job_file, descriptions, results)
}

/// Each process's job description, with its job's index.
fn descriptions_of(job_file: &JobFile, processes: &[ProcessPlan]) -> Vec<(usize, JobDescription)> {
    processes
        .iter()
        .map(|plan| {
            let spec = &job_file.jobs[plan.spec_index];
            let description = JobDescription::of(spec, plan.groupid, plan.pid, plan.priority);
            (plan.spec_index, description)
        })
        .collect()
}

/// The run's report before its jobs are added.
fn report_of(
    job_file: &JobFile,
    config: &RunConfig,
    began: Instant,
    cgroups: Vec<CgroupSettings>,
    disk_util: Vec<ioslice_fio::DiskUtil>,
) -> RunReport {
    RunReport {
        version: ioslice_core::VERSION.to_string(),
        timestamp: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs()),
        elapsed: nanos_since(began),
        global_options: job_file.global_options.clone(),
        jobs: Vec::new(),
        disk_util,
        scheduler: config.run.scheduler.to_string(),
        device: config.path.display().to_string(),
        cgroups,
    }
}

impl RunOutcome {
    /// A run's outcome with no job added yet.
    fn of(report: RunReport, notes: Vec<String>, laid_out: Vec<String>) -> Self {
        Self {
            report,
            notes,
            io_errors: Vec::new(),
            failed_jobs: Vec::new(),
            laid_out,
            verify_errors: Vec::new(),
        }
    }

    /// Add each process's result, in the plan's order.
    fn with_jobs(
        mut self,
        job_file: &JobFile,
        descriptions: Vec<(usize, JobDescription)>,
        results: Vec<Option<ProcessResult>>,
    ) -> Result<Self, RunError> {
        for ((spec_index, description), result) in descriptions.into_iter().zip(results) {
            let Some(mut result) = result else {
                return Err(RunError::Thread("a job process did not run".into()));
            };
            if let Some(error) = result.log_error.take() {
                return Err(error.into());
            }
            self.add_job(&job_file.jobs[spec_index], description, result);
        }
        Ok(self)
    }

    /// Account a finished job process: its report, its first I/O error, whether an error
    /// stopped it.
    fn add_job(
        &mut self,
        spec: &JobSpec,
        mut description: JobDescription,
        mut result: ProcessResult,
    ) {
        result.stats.runtime = result.end.saturating_sub(result.ramp_end);
        description.pid = result.thread_id;
        if let Some(line) = result.first_error {
            self.io_errors.push(line);
        }
        self.verify_errors.append(&mut result.verify_reports);
        if result.stopped_by_error {
            self.failed_jobs.push(spec.name.clone());
        }
        self.report.jobs.push(JobReport {
            description,
            stats: result.stats,
        });
    }
}

/// The jobs as they will run: with a single target, every job names it.
fn specs_on(job_file: &JobFile, place: &Place) -> Vec<JobSpec> {
    job_file
        .jobs
        .iter()
        .map(|spec| match place {
            Place::Single(path) | Place::Device(path, _) => JobSpec {
                filename: Some(path.display().to_string().replace(':', "\\:")),
                directory: None,
                ..spec.clone()
            },
            Place::Directory(_) => spec.clone(),
        })
        .collect()
}

/// What every job thread of a run shares: the run's start, the stop request and the
/// progress cells.
struct Shared<'a> {
    started: Instant,
    /// fio's flow groups (`flow_id`, `flow`), shared by every job thread.
    flows: flow::SharedFlows,
    /// The jobs others wait for (`wait_for=`): how many of each job's processes are not done.
    waitees: Arc<waitee::Waitees>,
    stop: &'a ioslice_core::StopSignal,
    progress: Option<&'a ioslice_core::Progress>,
    /// Each process's moves, from the run's scheduled changes to groups.
    moves: Arc<regroup::Moves>,
}

/// Run the phases (stonewall) one after the other, a thread per process; each process's
/// result in the plan's order.
fn run_phases(
    processes: Vec<ProcessPlan>,
    phases: usize,
    specs: &[JobSpec],
    engines: &[Engine],
    opened: &[Opened],
    shared: &Shared<'_>,
) -> Result<Vec<Option<ProcessResult>>, RunError> {
    let mut results: Vec<Option<ProcessResult>> = (0..processes.len()).map(|_| None).collect();
    let mut processes: Vec<Option<ProcessPlan>> = processes.into_iter().map(Some).collect();
    for phase in 0..phases {
        let mut threads = Vec::new();
        for (index, slot) in processes.iter_mut().enumerate() {
            if slot.as_ref().is_none_or(|p| p.phase != phase) {
                continue;
            }
            let Some(process) = slot.take() else { continue };
            if specs[process.spec_index].ioengine == ioslice_fio::IoEngine::Exec {
                let job = exec::ExecJob {
                    spec: specs[process.spec_index].clone(),
                    started: shared.started,
                    stop: shared.stop.clone(),
                    waitees: Arc::clone(&shared.waitees),
                    rng: process.rng.clone(),
                };
                // Its program is in the job's group until it ends, as a removal sees it.
                let moves = shared.moves.slot(index);
                let thread = std::thread::Builder::new()
                    .name(format!("ioslice-job-{}", process.pid))
                    .spawn(move || {
                        let result = job.run();
                        moves.ended();
                        result
                    })
                    .map_err(|e| RunError::Thread(e.to_string()))?;
                threads.push((index, thread));
                continue;
            }
            let mut worker = worker_for(&process, index, specs, engines, opened, shared)?;
            worker.progress = shared.progress.map(|progress| {
                let letter = specs[process.spec_index].pattern.status_letter();
                progress::JobProgress::new(progress.clone(), index, letter)
            });
            let thread = std::thread::Builder::new()
                .name(format!("ioslice-job-{}", process.pid))
                .spawn(move || worker.run(process))
                .map_err(|e| RunError::Thread(e.to_string()))?;
            threads.push((index, thread));
        }
        for (index, thread) in threads {
            let result = thread
                .join()
                .map_err(|_| RunError::Thread("a job thread panicked".into()))?;
            results[index] = Some(result);
        }
    }
    Ok(results)
}

/// A job process's thread-to-be (number `index` in the plan): a client of each of its
/// files' engines, in one batch, in its group (the one a scheduled change last moved its
/// job to, if one did).
fn worker_for(
    process: &ProcessPlan,
    index: usize,
    specs: &[JobSpec],
    engines: &[Engine],
    opened: &[Opened],
    shared: &Shared<'_>,
) -> Result<Worker, RunError> {
    let moves = shared.moves.slot(index);
    let group = moves.group_at_start();
    let mut clients = Vec::with_capacity(process.targets.len());
    let mut files = Vec::with_capacity(process.targets.len());
    for &target in &process.targets {
        let handle = engines[target].handle();
        clients.push(handle.client(process.pid, &group, process.priority)?);
        files.push((
            opened[target].path.display().to_string(),
            opened[target].logical_block_size as usize,
        ));
    }
    let spec = &specs[process.spec_index];
    let verifier = Verifier::new(spec, process.pid, process.fill_seed ^ VERIFY_SEED);
    Ok(Worker {
        spec: spec.clone(),
        batch: Batch::new(clients),
        files,
        started: shared.started,
        stop: shared.stop.clone(),
        flow: flow::FlowGate::new(Arc::clone(&shared.flows), spec),
        waitees: Arc::clone(&shared.waitees),
        verifier,
        progress: None,
        moves,
        starts_moved_to: (group != process.group_path).then_some(group),
    })
}

/// Open each process's log files (`write_bw_log=`, …) where `config.run.logs` says.
fn open_logs(
    processes: &mut [ProcessPlan],
    specs: &[JobSpec],
    config: &RunConfig,
) -> Result<(), RunError> {
    let Some(base) = &config.run.logs else {
        return Ok(());
    };
    let mut files = LogFiles::new(base);
    for process in processes {
        process.logs = JobLogs::open(&mut files, &specs[process.spec_index], process.pid)?;
    }
    Ok(())
}

/// Mixed into a process's fill seed for its blocks' verify seeds.
const VERIFY_SEED: u64 = 0x7665_7269_6679;

/// A job's blocks (the writes it fills, the reads it checks) must have room for a verify
/// header and its checksum.
fn check_block_room(spec: &JobSpec) -> Result<(), RunError> {
    let Some(verifier) = Verifier::new(spec, 0, 0) else {
        return Ok(());
    };
    let smallest = spec.block_size[0].min().min(spec.block_size[1].min());
    if smallest < verifier.min_block() {
        return Err(RunError::Job(format!(
            "{}:{}: job {}: verify={} needs blocks of at least {} bytes for its header and checksum, but the job has {smallest}-byte blocks: expected a larger bs=",
            spec.origin.file,
            spec.origin.line,
            spec.name,
            spec.verify.kind.as_ref().map_or("", |k| k.fio_name()),
            verifier.min_block()
        )));
    }
    Ok(())
}

fn job_error(error: impl std::fmt::Display) -> RunError {
    RunError::Job(error.to_string())
}

/// Nanoseconds since `instant`.
fn nanos_since(instant: Instant) -> Nanos {
    u64::try_from(instant.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
