//! What a run's engines stand on: files and block devices opened by path, or a device given
//! as an engine backend ([`DeviceBackend`], a simulated disk on the real clock), and one
//! engine started on each. Touched by the thread that starts the run, before the job threads.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ioslice_core::GroupTree;
use ioslice_engine::backend::{open_backend, open_synchronous_backend};
use ioslice_engine::device::{write_refusal, OpenOptions};
use ioslice_engine::{Backend, Engine, Geometry, Target, TargetKind};

use crate::plan::TargetPlan;
use crate::{RunConfig, RunError, TraceSinks};

/// Makes the backend of a device that is not a path, and says what the engine is to know of
/// it; a one-line message if it cannot.
pub type OpenDevice = dyn Fn() -> Result<(Box<dyn Backend>, Geometry), String> + Send + Sync;

/// A device given as an engine backend: every job of the run uses it.
#[derive(Clone)]
pub struct DeviceBackend {
    open: Arc<OpenDevice>,
}

impl DeviceBackend {
    /// A device whose backend `open` makes (once per run).
    pub fn new(open: Arc<OpenDevice>) -> Self {
        Self { open }
    }

    pub(crate) fn open(&self) -> Result<(Box<dyn Backend>, Geometry), RunError> {
        (self.open)().map_err(RunError::Job)
    }
}

impl fmt::Debug for DeviceBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeviceBackend")
    }
}

/// A target the run's engines stand on.
pub(crate) enum Opened {
    /// A file or block device, by its path.
    File(Target),
    /// A backend of its own, with its name and what the engine is told about it; the backend
    /// is taken when its engine starts.
    Device {
        name: PathBuf,
        geometry: Geometry,
        backend: Option<Box<dyn Backend>>,
    },
}

impl Opened {
    pub(crate) fn device(name: &Path, backend: Box<dyn Backend>, geometry: Geometry) -> Self {
        Self::Device {
            name: name.to_path_buf(),
            geometry,
            backend: Some(backend),
        }
    }

    /// Its path, or the name the device was given by.
    pub(crate) fn path(&self) -> &Path {
        match self {
            Self::File(target) => target.path(),
            Self::Device { name, .. } => name,
        }
    }

    /// Offsets, lengths and addresses of direct I/O are multiples of this.
    pub(crate) fn logical_block_size(&self) -> u32 {
        match self {
            Self::File(target) => target.logical_block_size(),
            Self::Device { geometry, .. } => geometry.logical_block_size,
        }
    }
}

/// Open every target, refusing dangerous writes unless the run allows them, and checking a
/// block device is large enough.
pub(crate) fn open_targets(
    targets: &[TargetPlan],
    config: &RunConfig,
    notes: &mut Vec<String>,
) -> Result<Vec<Opened>, RunError> {
    let mut opened = Vec::with_capacity(targets.len());
    for plan in targets {
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
        opened.push(Opened::File(target));
    }
    if targets.len() > 1 {
        notes.push(format!(
            "{} files: one engine (and one {} instance) per file; they do not arbitrate between each other",
            targets.len(),
            config.run.scheduler.name
        ));
    }
    Ok(opened)
}

/// One engine per opened target, each with its own instance of the run's policy, traced
/// where the run is. With `synchronous` (the run's one job waits for each request before
/// the next, as fio's `psync`), a file's transfers run on the job's own thread
/// ([`open_synchronous_backend`]).
pub(crate) fn start_engines(
    opened: &mut [Opened],
    synchronous: bool,
    config: &RunConfig,
    groups: &GroupTree,
    trace: Option<TraceSinks<'_>>,
    notes: &mut Vec<String>,
) -> Result<Vec<Engine>, RunError> {
    let mut engines = Vec::with_capacity(opened.len());
    let several = opened.len() > 1;
    for target in opened.iter_mut() {
        let (backend, geometry) = match target {
            Opened::File(file) => {
                let geometry = Geometry::of(file);
                let depth = u32::try_from(geometry.queue_depth).unwrap_or(u32::MAX);
                let open = if synchronous {
                    open_synchronous_backend
                } else {
                    open_backend
                };
                let (backend, note) = open(Arc::clone(file.file()), depth);
                if let Some(note) = note {
                    notes.push(format!("{}: {note}", file.path().display()));
                }
                (backend, geometry)
            }
            Opened::Device {
                name,
                geometry,
                backend,
            } => match backend.take() {
                Some(backend) => (backend, *geometry),
                None => {
                    return Err(RunError::Job(format!(
                        "{}: the device's engine was already started",
                        name.display()
                    )))
                }
            },
        };
        let mut builder = Engine::builder(backend, geometry)
            .scheduler_spec(config.run.scheduler.clone())
            .groups(groups.clone())
            .io_timeout(config.io_timeout);
        if let Some(sinks) = trace {
            let label = target.path().display().to_string();
            builder = builder.trace(sinks(several.then_some(label.as_str())));
        }
        engines.push(builder.start()?);
    }
    Ok(engines)
}
