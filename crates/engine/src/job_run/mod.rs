//! Running an fio job file for real: the engine's counterpart of the simulator's driver.
//!
//! [`run`] opens the files or the block device a job file names under one `--device`
//! path, starts one [`Engine`] per file (each with its own policy instance), and drives
//! every job process on its own thread with the same
//! [`JobClock`](ioslice_fio::workload::JobClock) the simulator uses, on the real clock. Each process draws its offsets from the random stream the simulator would
//! give it for the same seed, so both runs issue the same I/O. The result is a
//! [`RunReport`], printed in fio's formats like a simulation's.
//!
//! Where the I/O goes, by what `--device` names:
//! - a regular file or a block device: every job uses it, as when every job's `filename=`
//!   names that one device (a job's offsets are from its start);
//! - a directory: each job's files are named as fio names them (`filename=`, else
//!   `jobname.clone.filenum`, under `directory=`) relative to it, created and laid out
//!   (written with zeros, as fio does) to the size the jobs need. Jobs on different files
//!   get different engines: a real elevator is per device, so several per-file engines on
//!   one filesystem approximate it (they do not arbitrate between each other).
//!
//! Writing to a block device that is mounted, partitioned or carries a signature is refused
//! ([`crate::device::write_refusal`]) unless [`RunConfig::allow_mounted_write`] is set;
//! reading from one is allowed, as in fio.
//!
//! A request that fails completes with its errno; the engine keeps serving the others. The
//! job counts the error, keeps the first errno as fio's `err=`, and stops unless fio's rule
//! lets it go on: `continue_on_error=` covers the kind of error (a kind `ignore_error=` gives
//! a list is covered too) and the error is non-fatal (`EIO` and `EILSEQ`, or what
//! `ignore_error=` lists for that kind; [`ioslice_fio::errno::goes_on`]).
//!
//! [`run_traced`] also traces every engine ([`EngineBuilder::trace`](crate::EngineBuilder::trace)):
//! it asks for one sink per engine, naming the engine's file when there are several.
//!
//! Each job process's thread is in `worker`.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ioslice_core::limit::Limits;
use ioslice_core::{build_scheduler, GroupTree, IoPriority, Nanos, SchedSpec};
use ioslice_core::{SchedulerContext, TraceSink, TunableError};
use ioslice_fio::jobfile::check_supported;
use ioslice_fio::pattern::IoPattern;
use ioslice_fio::plan::plan_run;
use ioslice_fio::{
    CgroupSettings, DiskUtil, JobDescription, JobFile, JobReport, JobSpec, JobStats, Pattern,
    RunReport,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::backend::open_backend;
use crate::completion::CompletionQueue;
use crate::device::{dev_major_minor, write_refusal, DeviceError, OpenOptions, Target, TargetKind};
use crate::engine::{Engine, EngineError, Geometry};
use crate::handle::Client;
use crate::stats::FinalStats;

mod worker;

use worker::Worker;

/// What a real run needs besides the job file.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Seed of the jobs' random streams (the simulator's streams for the same seed).
    pub seed: u64,
    /// The policy and its tunables.
    pub scheduler: SchedSpec,
    /// A regular file, a directory or a block device.
    pub path: PathBuf,
    /// Write to a block device even if it is mounted, partitioned or formatted.
    pub allow_mounted_write: bool,
    /// Group weights given outside the job file (`--cgroup NAME:weight=N`), applied after it.
    pub group_weights: Vec<(String, u32)>,
    /// Group limits (`--cgroup NAME:rbps=…`), applied after the weights.
    pub group_limits: Vec<(String, Limits)>,
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
    /// The engine would not start (scheduler, groups).
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// The scheduler specification was refused.
    #[error("{0}")]
    Scheduler(#[from] TunableError),
    /// A job thread could not be started, or panicked.
    #[error("job thread: {0}")]
    Thread(String),
}

/// Where the jobs' files are.
#[derive(Debug, Clone)]
enum Place {
    /// Every job uses this file or block device.
    Single(PathBuf),
    /// Jobs name files relative to this directory.
    Directory(PathBuf),
}

/// One file (or device) opened one way, driven by one engine.
#[derive(Debug, Clone)]
struct TargetPlan {
    path: PathBuf,
    direct: bool,
    write: bool,
    /// Bytes the jobs need (regular files are laid out to this).
    len: u64,
}

/// One job process before it starts.
struct ProcessPlan {
    spec_index: usize,
    pid: u32,
    group_path: String,
    priority: IoPriority,
    phase: usize,
    groupid: u32,
    /// For each of the job's files: its target.
    targets: Vec<usize>,
    pattern: IoPattern,
    rng: ChaCha8Rng,
    fill_seed: u64,
}

/// What a job process's thread hands back.
struct ProcessResult {
    stats: JobStats,
    end: Nanos,
    ramp_end: Nanos,
    first_error: Option<String>,
    stopped_by_error: bool,
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
    check_supported(job_file).map_err(job_error)?;
    let place = place_of(&config.path)?;
    let mut notes = Vec::new();

    // The jobs as they will run: in single-target mode every job names the target.
    let specs: Vec<JobSpec> = job_file
        .jobs
        .iter()
        .map(|spec| match &place {
            Place::Single(path) => JobSpec {
                filename: Some(path.display().to_string().replace(':', "\\:")),
                directory: None,
                ..spec.clone()
            },
            Place::Directory(_) => spec.clone(),
        })
        .collect();

    let groups = job_file
        .group_tree(&config.group_weights, &config.group_limits)
        .map_err(job_error)?;
    let (processes, targets, phases) = plan(&specs, &place, &groups, config.seed)?;

    // Open every target, refusing dangerous writes, and start an engine on each.
    let mut opened = Vec::with_capacity(targets.len());
    for plan in &targets {
        let options = OpenOptions {
            direct: plan.direct,
            write: plan.write,
            create_len: Some(plan.len),
        };
        let target = Target::open(&plan.path, &options)?;
        if plan.write {
            if let Some(reason) = write_refusal(&target) {
                if !config.allow_mounted_write {
                    return Err(RunError::Refused(reason));
                }
                notes.push(format!(
                    "--allow-mounted-write given: writing anyway ({reason})"
                ));
            }
        }
        if target.kind() == TargetKind::BlockDevice && target.size_bytes() < plan.len {
            return Err(RunError::Job(format!(
                "{}: the jobs need {} bytes but the device has {}",
                plan.path.display(),
                plan.len,
                target.size_bytes()
            )));
        }
        opened.push(target);
    }
    if targets.len() > 1 {
        notes.push(format!(
            "{} files: one engine (and one {} instance) per file; they do not arbitrate between each other",
            targets.len(),
            config.scheduler.name
        ));
    }
    let disks_before: Vec<Option<DiskStat>> = opened.iter().map(DiskStat::of_target).collect();
    let mut engines = Vec::with_capacity(opened.len());
    for target in &opened {
        let geometry = Geometry::of(target);
        let depth = u32::try_from(geometry.queue_depth).unwrap_or(u32::MAX);
        let (backend, note) = open_backend(Arc::clone(target.file()), depth);
        if let Some(note) = note {
            notes.push(format!("{}: {note}", target.path().display()));
        }
        let mut builder = Engine::builder(backend, geometry)
            .scheduler(&config.scheduler.to_string())
            .groups(groups.clone());
        if let Some(sinks) = trace {
            let label = target.path().display().to_string();
            builder = builder.trace(sinks((opened.len() > 1).then_some(label.as_str())));
        }
        engines.push(builder.start()?);
    }
    let cgroups = cgroup_settings(&groups, &config.scheduler, opened.first())?;

    let descriptions: Vec<JobDescription> = processes
        .iter()
        .map(|plan| {
            JobDescription::of(
                &job_file.jobs[plan.spec_index],
                plan.groupid,
                plan.pid,
                plan.priority,
            )
        })
        .collect();
    let spec_of: Vec<usize> = processes.iter().map(|plan| plan.spec_index).collect();

    // Run the phases (stonewall) one after the other, a thread per process.
    let started = Instant::now();
    let mut results: Vec<Option<ProcessResult>> = (0..processes.len()).map(|_| None).collect();
    let mut processes: Vec<Option<ProcessPlan>> = processes.into_iter().map(Some).collect();
    for phase in 0..phases {
        let mut threads = Vec::new();
        for (index, slot) in processes.iter_mut().enumerate() {
            if slot.as_ref().is_none_or(|p| p.phase != phase) {
                continue;
            }
            let Some(process) = slot.take() else { continue };
            let spec = specs[process.spec_index].clone();
            let mut clients = Vec::with_capacity(process.targets.len());
            let mut files = Vec::with_capacity(process.targets.len());
            for &target in &process.targets {
                let handle = engines[target].handle();
                clients.push(handle.client(process.pid, &process.group_path, process.priority)?);
                files.push((
                    opened[target].path().display().to_string(),
                    opened[target].logical_block_size() as usize,
                ));
            }
            let counters = clients.iter().map(Client::counters).collect();
            let worker = Worker {
                spec,
                queue: Arc::new(CompletionQueue::new(counters)),
                clients,
                files,
                started,
            };
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
    let elapsed = started.elapsed();

    let mut finals = Vec::with_capacity(engines.len());
    for engine in engines {
        finals.push(engine.shutdown()?);
    }
    let disk_util = disk_util(&opened, &disks_before, &finals, elapsed);

    let mut jobs = Vec::with_capacity(results.len());
    let mut io_errors = Vec::new();
    let mut failed_jobs = Vec::new();
    for ((description, spec_index), result) in descriptions.into_iter().zip(spec_of).zip(results) {
        let Some(mut result) = result else {
            return Err(RunError::Thread("a job process did not run".into()));
        };
        let spec = &job_file.jobs[spec_index];
        result.stats.runtime = result.end.saturating_sub(result.ramp_end);
        if let Some(line) = result.first_error {
            io_errors.push(line);
        }
        if result.stopped_by_error {
            failed_jobs.push(spec.name.clone());
        }
        jobs.push(JobReport {
            description,
            stats: result.stats,
        });
    }
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    Ok(RunOutcome {
        report: RunReport {
            version: format!("ioslice-{}", env!("CARGO_PKG_VERSION")),
            timestamp,
            global_options: job_file.global_options.clone(),
            jobs,
            disk_util,
            scheduler: config.scheduler.to_string(),
            device: config.path.display().to_string(),
            cgroups,
        },
        notes,
        io_errors,
        failed_jobs,
    })
}

fn job_error(error: impl std::fmt::Display) -> RunError {
    RunError::Job(error.to_string())
}

/// A directory, or a single file or block device (which [`Target::open`] checks).
fn place_of(path: &Path) -> Result<Place, RunError> {
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => Ok(Place::Directory(path.to_path_buf())),
        Ok(metadata) => {
            let file_type = metadata.file_type();
            if file_type.is_file() || file_type.is_block_device() {
                Ok(Place::Single(path.to_path_buf()))
            } else {
                let what = crate::device::kind_name(&file_type);
                Err(RunError::Job(format!(
                    "{}: is a {what}; expected a regular file, a directory or a block device",
                    path.display()
                )))
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(RunError::Job(format!(
            "{}: no such file, directory or block device",
            path.display()
        ))),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            Err(RunError::Device(DeviceError::PermissionDenied {
                path: path.to_path_buf(),
            }))
        }
        Err(source) => Err(RunError::Device(DeviceError::Io {
            path: path.to_path_buf(),
            source,
        })),
    }
}

/// Size of an existing file or block device (0 if it cannot be known).
fn existing_size(path: &Path) -> u64 {
    match fs::metadata(path) {
        Ok(metadata) if metadata.file_type().is_block_device() => fs::File::open(path)
            .and_then(|mut file| io::Seek::seek(&mut file, io::SeekFrom::End(0)))
            .unwrap_or(0),
        Ok(metadata) => metadata.len(),
        Err(_) => 0,
    }
}

/// Whether a job writes.
fn writes(pattern: Pattern) -> bool {
    !matches!(pattern, Pattern::Read | Pattern::RandRead)
}

/// One process per job clone, from the plan the simulator runs too (`ioslice_fio::plan`), the
/// targets they use, and the number of stonewall phases.
fn plan(
    specs: &[JobSpec],
    place: &Place,
    groups: &GroupTree,
    seed: u64,
) -> Result<(Vec<ProcessPlan>, Vec<TargetPlan>, usize), RunError> {
    // Files named without a size take the size of what is there already.
    let capacity = |spec: &JobSpec, _clone: u32| match place {
        Place::Single(path) => existing_size(path),
        Place::Directory(dir) => {
            ioslice_fio::pattern::split_filenames(spec.filename.as_deref().unwrap_or_default())
                .first()
                .map_or(0, |name| existing_size(&dir.join(name)))
        }
    };
    for spec in specs {
        if spec.size.is_none() && spec.filesize.is_none() && capacity(spec, 0) == 0 {
            let name = spec.filename.as_deref().unwrap_or(&spec.name);
            return Err(RunError::Job(format!(
                "{}:{}: job {}: {} is empty or missing: give size=",
                spec.origin.file, spec.origin.line, spec.name, name
            )));
        }
    }
    let run = plan_run(specs, seed, capacity).map_err(job_error)?;
    let mut targets: Vec<TargetPlan> = Vec::new();
    let mut index_of: BTreeMap<(PathBuf, bool), usize> = BTreeMap::new();
    let mut processes = Vec::with_capacity(run.processes.len());
    for process in run.processes {
        let spec = process.spec;
        let mut process_targets = Vec::with_capacity(process.files.len());
        for file in &process.files {
            if file.size == 0 {
                return Err(RunError::Job(format!(
                    "{}:{}: job {}: {} is empty or missing: give size=",
                    spec.origin.file, spec.origin.line, spec.name, file.name
                )));
            }
            let path = match place {
                Place::Single(path) => path.clone(),
                Place::Directory(dir) => dir.join(&file.name),
            };
            let key = (path.clone(), spec.direct);
            let target = *index_of.entry(key).or_insert_with(|| {
                targets.push(TargetPlan {
                    path,
                    direct: spec.direct,
                    write: false,
                    len: 0,
                });
                targets.len() - 1
            });
            targets[target].write |= writes(spec.pattern);
            targets[target].len = targets[target].len.max(file.size);
            process_targets.push(target);
        }
        let group = groups.of_job(spec.cgroup.as_deref());
        processes.push(ProcessPlan {
            spec_index: process.spec_index,
            pid: process.index + 1,
            group_path: groups.get(group).path.clone(),
            priority: spec.priority.unwrap_or_default(),
            phase: process.phase,
            groupid: process.groupid,
            targets: process_targets,
            fill_seed: process.fill_seed(),
            rng: ChaCha8Rng::seed_from_u64(process.seed),
            pattern: process.pattern,
        });
    }
    Ok((processes, targets, run.phases))
}

/// Every group but the root with the weight the policy gives it (asked of a policy built
/// like the engines' own) and its limits.
fn cgroup_settings(
    groups: &GroupTree,
    spec: &SchedSpec,
    target: Option<&Target>,
) -> Result<Vec<CgroupSettings>, RunError> {
    let context = SchedulerContext {
        groups: groups.clone(),
        rotational: target.is_some_and(Target::rotational),
        queue_depth: target.map_or(32, |t| t.queue_depth() as usize),
    };
    let policy = build_scheduler(spec, &context)?;
    Ok(CgroupSettings::of_run(groups, policy.as_ref()))
}

/// A block device's counters from sysfs (`/sys/dev/block/MAJ:MIN/stat`), for fio's
/// `Disk stats` block: the device itself, or the one holding a regular file's filesystem.
#[derive(Debug, Clone)]
struct DiskStat {
    name: String,
    devno: (u32, u32),
    /// read ios, read merges, read sectors, read ticks, write ios, write merges, write
    /// sectors, write ticks, in flight, io ticks, time in queue.
    fields: [u64; 11],
}

impl DiskStat {
    fn of_target(target: &Target) -> Option<Self> {
        let metadata = target.file().metadata().ok()?;
        let dev = if target.kind() == TargetKind::BlockDevice {
            metadata.rdev()
        } else {
            metadata.dev()
        };
        Self::read(dev_major_minor(dev))
    }

    fn read((major, minor): (u32, u32)) -> Option<Self> {
        let dir = fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        let text = fs::read_to_string(dir.join("stat")).ok()?;
        let values: Vec<u64> = text
            .split_whitespace()
            .map_while(|field| field.parse().ok())
            .collect();
        let fields: [u64; 11] = values.get(..11)?.try_into().ok()?;
        Some(Self {
            name: dir.file_name()?.to_string_lossy().into_owned(),
            devno: (major, minor),
            fields,
        })
    }
}

/// fio's `Disk stats`: the kernel's counters for each device the run used, over the run
/// (as fio reports them), or the engines' own counts where sysfs has none (tmpfs, overlay).
fn disk_util(
    targets: &[Target],
    before: &[Option<DiskStat>],
    finals: &[FinalStats],
    elapsed: Duration,
) -> Vec<DiskUtil> {
    let elapsed_ms = elapsed.as_millis().max(1) as f64;
    let mut seen = Vec::new();
    let mut utils = Vec::new();
    for ((target, before), stats) in targets.iter().zip(before).zip(finals) {
        match before {
            Some(before) => {
                if seen.contains(&before.devno) {
                    continue;
                }
                seen.push(before.devno);
                let Some(after) = DiskStat::read(before.devno) else {
                    continue;
                };
                let delta = |i: usize| after.fields[i].saturating_sub(before.fields[i]);
                utils.push(DiskUtil {
                    name: before.name.clone(),
                    ios: [delta(0), delta(4)],
                    merges: [delta(1), delta(5)],
                    ticks: [delta(3), delta(7)],
                    in_queue: delta(10),
                    util: (100.0 * delta(9) as f64 / elapsed_ms).min(100.0),
                });
            }
            None => {
                let totals = &stats.totals;
                let busy_ms = (totals.latency.mean * totals.requests as f64 / 1000.0) as u64;
                utils.push(DiskUtil {
                    name: target
                        .path()
                        .file_name()
                        .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
                    ios: [totals.reads, totals.writes],
                    merges: [0, 0],
                    ticks: [busy_ms, 0],
                    in_queue: busy_ms,
                    util: 0.0,
                });
            }
        }
    }
    utils
}
