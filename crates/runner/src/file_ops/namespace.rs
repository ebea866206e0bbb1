//! fio's namespace engines in a real run (`filecreate`, `filestat`, `filedelete`,
//! `dircreate`, `dirstat`, `dirdelete`), as fio's `engines/fileoperations.c` runs them (3.33
//! for the file engines; 3.37, where they first appear, for the directory ones).
//!
//! In fio these engines do their work when a file is opened and nothing when an I/O is
//! queued: each pass over a job's files makes one create (`open(O_CREAT|O_RDWR, 0600)` or
//! `mkdir(0700)`), one stat (`stat`, `lstat` or `statx`, by `stat_type=`) or one delete
//! (`unlink` or `rmdir`) of each file, and then the file's I/Os complete at once. So:
//!
//! - each operation is one completion-latency sample, timed around the system call alone;
//!   the I/Os record no latency of their own (fio's `FIO_NOSTATS`), so `lat` and `slat`
//!   stay empty;
//! - each file still counts its I/Os and bytes: `filesize / bs` of them (at least one), so
//!   a 4 KiB file of a 4 KiB-block job is one I/O of 4096 bytes;
//! - all of it is counted in one direction: writes when the job only writes (`rw=write`,
//!   `randwrite`), reads otherwise (fio's `td_read` first);
//! - one operation at a time (`FIO_SYNCIO`), whatever `iodepth` says;
//! - before the run, `filestat` and `filedelete` lay their files out (zeros, as fio), and
//!   `dirstat` and `dirdelete` make their directories; `filecreate` and `dircreate` make
//!   nothing (their files are the run's work). Nothing is removed after;
//! - `loops=` repeats the passes, and `time_based` repeats them until `runtime=`; a failed
//!   operation (a second `unlink` of a file, say) stops the job with its errno, as fio's
//!   `td_verror` does.
//!
//! A job file's jobs must all use these engines or none (a run of them starts no I/O
//! engine at all); `openfiles=` changes nothing here, each file being closed right after
//! its operation as fio does with `openfiles=1`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ioslice_core::{Nanos, StopSignal};
use ioslice_fio::file_ops::{FileOp, StatType};
use ioslice_fio::{IoEngine, JobSpec, JobStats, Pattern};

use crate::plan::{ProcessPlan, TargetPlan};
use crate::{ProcessResult, RunError};

/// The namespace engine of `spec`, if it uses one.
pub(crate) fn op_of(spec: &JobSpec) -> Option<FileOp> {
    match spec.ioengine {
        IoEngine::Namespace(op) => Some(op),
        _ => None,
    }
}

/// Whether the run is one of namespace engines: every job uses one, or none does.
///
/// # Errors
/// A job file that mixes them with data engines, which one run cannot drive.
pub(crate) fn all_namespace(specs: &[JobSpec]) -> Result<bool, RunError> {
    let namespace = specs.iter().filter(|spec| op_of(spec).is_some()).count();
    if namespace == 0 {
        return Ok(false);
    }
    if namespace == specs.len() {
        return Ok(true);
    }
    let (with, without) = (
        specs.iter().find(|spec| op_of(spec).is_some()),
        specs.iter().find(|spec| op_of(spec).is_none()),
    );
    let name = |spec: Option<&JobSpec>| spec.map_or("", |s| s.name.as_str()).to_string();
    Err(RunError::Job(format!(
        "job {} uses ioengine={} and job {} moves data: expected the filesystem engines in a job file of their own",
        name(with),
        with.map_or("", |s| s.ioengine.fio_name()),
        name(without)
    )))
}

/// The jobs with the size fio gives a file named without one: `filecreate`, `dircreate`
/// and `dirdelete` take the job's smallest block (fio's `get_file_size` for them), so
/// each of their files is one I/O.
pub(crate) fn with_sizes(mut specs: Vec<JobSpec>) -> Vec<JobSpec> {
    for spec in &mut specs {
        let sized = spec.filesize.is_some() || spec.size.is_some();
        if op_of(spec).is_some() && !sized {
            let bs = block(spec);
            spec.filesize = Some((bs, bs));
        }
    }
    specs
}

/// The block one I/O of `spec` stands for.
fn block(spec: &JobSpec) -> u64 {
    spec.block_size[direction(spec.pattern)].min().max(1)
}

/// The direction fio counts the operations in: writes for a job that only writes.
fn direction(pattern: Pattern) -> usize {
    match pattern {
        Pattern::Write | Pattern::RandWrite | Pattern::TrimWrite | Pattern::RandTrimWrite => 1,
        _ => 0,
    }
}

/// Lay out what the operations need before the run: the files `filestat` and `filedelete`
/// find, the directories `dirstat` and `dirdelete` find, and for every engine the
/// directories its names are in.
///
/// # Errors
/// A file or directory that cannot be made, naming it.
pub(crate) fn set_up(
    specs: &[JobSpec],
    processes: &[ProcessPlan],
    targets: &[TargetPlan],
) -> Result<(), RunError> {
    for process in processes {
        let Some(op) = op_of(&specs[process.spec_index]) else {
            continue;
        };
        for &target in &process.targets {
            let target = &targets[target];
            let failed = |e: std::io::Error| {
                RunError::Job(format!(
                    "{}: cannot be laid out: {e}",
                    target.path.display()
                ))
            };
            if let Some(parent) = target.path.parent() {
                fs::create_dir_all(parent).map_err(failed)?;
            }
            match op {
                FileOp::FileStat | FileOp::FileDelete => {
                    lay_out(&target.path, target.len).map_err(failed)?
                }
                FileOp::DirStat | FileOp::DirDelete => match fs::create_dir(&target.path) {
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                        return Err(failed(e))
                    }
                    _ => {}
                },
                FileOp::FileCreate | FileOp::DirCreate => {}
            }
        }
    }
    Ok(())
}

/// Write `len` zeros to a file shorter than that (a missing one is created).
fn lay_out(path: &Path, len: u64) -> std::io::Result<()> {
    if fs::metadata(path).is_ok_and(|m| m.len() >= len) {
        return Ok(());
    }
    let mut file = fs::File::create(path)?;
    let zeros = vec![0u8; 64 * 1024];
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        file.write_all(&zeros[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// One job process of a namespace engine, ready to run on its thread.
pub(crate) struct NamespaceJob {
    spec: JobSpec,
    op: FileOp,
    /// Each file's path and size.
    files: Vec<(PathBuf, u64)>,
    pid: u32,
    started: Instant,
    stop: StopSignal,
    logs: Option<ioslice_fio::logs::JobLogs>,
}

impl NamespaceJob {
    /// `process` of `specs`, whose files are `targets`, timed from `started`.
    pub(crate) fn new(
        process: &mut ProcessPlan,
        specs: &[JobSpec],
        targets: &[TargetPlan],
        started: Instant,
        stop: StopSignal,
    ) -> Option<Self> {
        let spec = specs[process.spec_index].clone();
        let op = op_of(&spec)?;
        let files = process
            .targets
            .iter()
            .map(|&t| (targets[t].path.clone(), targets[t].len))
            .collect();
        Some(Self {
            spec,
            op,
            files,
            pid: process.pid,
            started,
            stop,
            logs: process.logs.take(),
        })
    }

    fn now(&self) -> Nanos {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Run the passes; the job's result.
    pub(crate) fn run(mut self) -> ProcessResult {
        let (low, _) = self.spec.startdelay;
        std::thread::sleep(std::time::Duration::from_nanos(low));
        let start = self.now();
        let mut stats = JobStats::for_job(&self.spec);
        let mut first_error = None;
        let deadline = self
            .spec
            .runtime
            .map(|runtime| start.saturating_add(runtime));
        let mut pass = 0;
        'passes: loop {
            let more = if self.spec.time_based {
                deadline.is_some()
            } else {
                pass < self.spec.loops.max(1)
            };
            if !more {
                break;
            }
            for index in 0..self.files.len() {
                let now = self.now();
                if self.stop.is_set() || deadline.is_some_and(|at| now >= at) {
                    break 'passes;
                }
                if let Err(line) = self.operate(index, start, &mut stats) {
                    first_error = Some(line);
                    break 'passes;
                }
            }
            pass += 1;
        }
        let end = self.now();
        let log_error = self
            .logs
            .take()
            .and_then(|logs| logs.finish(end.saturating_sub(start)).err());
        ProcessResult {
            stats,
            end,
            ramp_end: start,
            stopped_by_error: first_error.is_some(),
            first_error,
            verify_reports: Vec::new(),
            log_error,
            // SAFETY: gettid takes nothing and only returns the calling thread's id.
            thread_id: u32::try_from(unsafe { libc::gettid() }).unwrap_or(0),
        }
    }

    /// The operation on file `index`, timed and counted; fio's error line if it failed.
    fn operate(&self, index: usize, start: Nanos, stats: &mut JobStats) -> Result<(), String> {
        let (path, size) = &self.files[index];
        let d = direction(self.spec.pattern);
        let began = Instant::now();
        let result = operation(self.op, self.spec.stat_type, path);
        let clat = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let since_start = self.now().saturating_sub(start);
        if let Err(error) = result {
            let errno = error.raw_os_error().unwrap_or(libc::EIO);
            stats.directions[d].errors += 1;
            stats.error = errno;
            return Err(format!(
                "fio: pid={}, err={errno}/file:engines/fileoperations.c, func={}({}), error={}",
                self.pid,
                call_name(self.op),
                path.display(),
                ioslice_fio::stats::error_text(errno)
            ));
        }
        let bs = block(&self.spec);
        let ios = size.div_ceil(bs).max(1);
        let direction = &mut stats.directions[d];
        direction.clat.record(clat);
        direction.total_ios += ios;
        direction.io_bytes += ios * bs;
        direction.window_bytes.add(since_start, ios * bs);
        direction.window_ios.add(since_start, ios);
        stats.issued[d] += ios;
        for _ in 0..ios {
            stats.record_depth(1);
        }
        Ok(())
    }
}

/// fio's name for the call in its error message.
fn call_name(op: FileOp) -> &'static str {
    match op {
        FileOp::FileCreate | FileOp::DirCreate => "open",
        FileOp::FileStat | FileOp::DirStat => "stat",
        FileOp::FileDelete | FileOp::DirDelete => "delete",
    }
}

/// The system call itself.
fn operation(op: FileOp, stat_type: StatType, path: &Path) -> std::io::Result<()> {
    match op {
        FileOp::FileCreate => {
            use std::os::unix::fs::OpenOptionsExt;
            fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(path)
                .map(drop)
        }
        FileOp::DirCreate => {
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new().mode(0o700).create(path)
        }
        FileOp::FileStat | FileOp::DirStat => stat(stat_type, path),
        FileOp::FileDelete => fs::remove_file(path),
        FileOp::DirDelete => fs::remove_dir(path),
    }
}

/// `stat_type=`'s call on `path`: `statx` as fio makes it, on the absolute path.
fn stat(stat_type: StatType, path: &Path) -> std::io::Result<()> {
    match stat_type {
        StatType::Stat => fs::metadata(path).map(drop),
        StatType::Lstat => fs::symlink_metadata(path).map(drop),
        StatType::Statx => {
            let absolute = fs::canonicalize(path)?;
            rustix::fs::statx(
                rustix::fs::CWD,
                &absolute,
                rustix::fs::AtFlags::empty(),
                rustix::fs::StatxFlags::ALL,
            )
            .map(drop)
            .map_err(std::io::Error::from)
        }
    }
}

/// Run the phases (stonewall) one after the other, a thread per process; each process's
/// result in the plan's order.
///
/// # Errors
/// A thread that cannot start or panics.
pub(crate) fn run_phases(
    processes: &mut [ProcessPlan],
    phases: usize,
    specs: &[JobSpec],
    targets: &[TargetPlan],
    started: Instant,
    stop: &StopSignal,
) -> Result<Vec<Option<ProcessResult>>, RunError> {
    let mut results: Vec<Option<ProcessResult>> = (0..processes.len()).map(|_| None).collect();
    for phase in 0..phases {
        let mut threads = Vec::new();
        for (index, process) in processes.iter_mut().enumerate() {
            if process.phase != phase {
                continue;
            }
            let Some(job) = NamespaceJob::new(process, specs, targets, started, stop.clone())
            else {
                continue;
            };
            let thread = std::thread::Builder::new()
                .name(format!("ioslice-job-{}", process.pid))
                .spawn(move || job.run())
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
