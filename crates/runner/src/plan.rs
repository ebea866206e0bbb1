//! A real run's plan: where the jobs' files are (one target, or a directory), the files or
//! devices to open and how, and one process per job clone with its group, priority, phase
//! and random streams, from the plan the simulator runs too ([`ioslice_fio::plan`]), so that
//! the same seed issues the same I/O in both.
//!
//! Made by the thread that runs the job file, before anything is opened.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use ioslice_core::{GroupTree, IoPriority};
use ioslice_engine::device::kind_name;
use ioslice_engine::DeviceError;
use ioslice_fio::pattern::IoPattern;
use ioslice_fio::plan::plan_run;
use ioslice_fio::{JobSpec, Pattern};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::layout::FileLayout;
use crate::{job_error, RunError};

/// Where the jobs' files are.
#[derive(Debug, Clone)]
pub(crate) enum Place {
    /// Every job uses this file or block device.
    Single(PathBuf),
    /// Every job uses this device, which is not on the filesystem (an engine backend of its
    /// own): the path only names it; the second field is its capacity in bytes.
    Device(PathBuf, u64),
    /// Jobs name files relative to this directory.
    Directory(PathBuf),
}

/// One file (or device) opened one way, driven by one engine.
#[derive(Debug, Clone)]
pub(crate) struct TargetPlan {
    pub(crate) path: PathBuf,
    pub(crate) direct: bool,
    pub(crate) write: bool,
    /// Bytes the jobs need (regular files are laid out to this).
    pub(crate) len: u64,
    /// How to lay it out if it is missing.
    pub(crate) layout: FileLayout,
}

/// One job process before it starts.
pub(crate) struct ProcessPlan {
    pub(crate) spec_index: usize,
    pub(crate) pid: u32,
    pub(crate) group_path: String,
    pub(crate) priority: IoPriority,
    pub(crate) phase: usize,
    pub(crate) groupid: u32,
    /// For each of the job's files: its target.
    pub(crate) targets: Vec<usize>,
    pub(crate) pattern: IoPattern,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) fill_seed: u64,
    /// The job's log files, if it writes any (opened by the run, not the plan).
    pub(crate) logs: Option<ioslice_fio::logs::JobLogs>,
}

/// A directory, or a single file or block device (which [`Target::open`](ioslice_engine::Target::open) checks).
pub(crate) fn place_of(path: &Path) -> Result<Place, RunError> {
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => Ok(Place::Directory(path.to_path_buf())),
        Ok(metadata) => {
            let file_type = metadata.file_type();
            if file_type.is_file() || file_type.is_block_device() {
                Ok(Place::Single(path.to_path_buf()))
            } else {
                let what = kind_name(&file_type);
                Err(RunError::Job(format!(
                    "{}: is a {what}; expected a regular file, a directory or a block device",
                    path.display()
                )))
            }
        }
        // A missing regular file is created and laid out, as fio does (`crate::layout`).
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            crate::layout::check_creatable(path)?;
            Ok(Place::Single(path.to_path_buf()))
        }
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

/// Whether a job reads (what it reads must be there before it starts).
fn reads(pattern: Pattern) -> bool {
    !matches!(pattern, Pattern::Write | Pattern::RandWrite)
}

/// Whether a job writes.
fn writes(pattern: Pattern) -> bool {
    !matches!(pattern, Pattern::Read | Pattern::RandRead)
}

/// One process per job clone, from the plan the simulator runs too (`ioslice_fio::plan`), the
/// targets they use, and the number of stonewall phases.
pub(crate) fn plan(
    specs: &[JobSpec],
    place: &Place,
    groups: &GroupTree,
    seed: u64,
    max_jobs: u32,
) -> Result<(Vec<ProcessPlan>, Vec<TargetPlan>, usize), RunError> {
    // Files named without a size take the size of what is there already, each looked up
    // once however many jobs and clones name it.
    let mut sizes: BTreeMap<PathBuf, u64> = BTreeMap::new();
    let mut capacity = |spec: &JobSpec, _clone: u32| {
        let path = match place {
            Place::Device(_, capacity) => return *capacity,
            Place::Single(path) => path.clone(),
            Place::Directory(dir) => {
                let names = ioslice_fio::pattern::split_filenames(
                    spec.filename.as_deref().unwrap_or_default(),
                );
                match names.first() {
                    Some(name) => dir.join(name),
                    None => return 0,
                }
            }
        };
        *sizes
            .entry(path)
            .or_insert_with_key(|path| existing_size(path))
    };
    for spec in specs {
        // A diskless job (`exec`, `cpuio`) has no file.
        let diskless = spec.ioengine.is_diskless();
        if !diskless && spec.size.is_none() && spec.filesize.is_none() && capacity(spec, 0) == 0 {
            let name = spec.filename.as_deref().unwrap_or(&spec.name);
            return Err(RunError::Job(format!(
                "{}:{}: job {}: {} is empty or missing: give size=",
                spec.origin.file, spec.origin.line, spec.name, name
            )));
        }
    }
    let run = plan_run(specs, seed, max_jobs, &mut capacity).map_err(job_error)?;
    let mut targets: Vec<TargetPlan> = Vec::new();
    let mut index_of: BTreeMap<(PathBuf, bool), usize> = BTreeMap::new();
    let mut processes = Vec::with_capacity(run.processes.len());
    for process in run.processes {
        let spec = process.spec;
        let mut process_targets = Vec::with_capacity(process.files.len());
        let files: &[_] = if spec.ioengine.is_diskless() {
            &[]
        } else {
            &process.files
        };
        for file in files {
            if file.size == 0 {
                return Err(RunError::Job(format!(
                    "{}:{}: job {}: {} is empty or missing: give size=",
                    spec.origin.file, spec.origin.line, spec.name, file.name
                )));
            }
            let path = match place {
                Place::Single(path) | Place::Device(path, _) => path.clone(),
                Place::Directory(dir) => crate::confine::within(dir, spec, &file.name)?,
            };
            // A device of its own has no page cache to bypass: one target for every job.
            let direct = spec.direct || matches!(place, Place::Device(..));
            let key = (path.clone(), direct);
            let target = *index_of.entry(key).or_insert_with(|| {
                targets.push(TargetPlan {
                    path,
                    direct: spec.direct,
                    write: false,
                    len: 0,
                    layout: FileLayout {
                        reads: false,
                        overwrite: false,
                        fallocate: spec.fallocate,
                        create_on_open: spec.create_on_open,
                        job: spec.name.clone(),
                    },
                });
                targets.len() - 1
            });
            targets[target].write |= writes(spec.pattern);
            targets[target].layout.reads |= reads(spec.pattern);
            targets[target].layout.overwrite |= spec.overwrite && writes(spec.pattern);
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
            logs: None,
        });
    }
    Ok((processes, targets, run.phases))
}
