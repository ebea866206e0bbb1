//! What a run's engines stand on: files and block devices opened by path through the
//! engine's own opener ([`Engine::on_path`]), or a device given as an engine backend
//! ([`DeviceBackend`], a simulated disk on the real clock), and one engine started on each.
//! Touched by the thread that starts the run, before the job threads.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use ioslice_core::GroupTree;
use ioslice_engine::device::refusal_line;
use ioslice_engine::{Backend, BackendChoice, DirectIo, Engine, Geometry, OpenError};

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

/// What the job threads need to know of a target an engine stands on.
pub(crate) struct Opened {
    /// Its path, or the name the device was given by.
    pub(crate) path: PathBuf,
    /// Offsets, lengths and addresses of direct I/O are multiples of this.
    pub(crate) logical_block_size: u32,
}

/// One engine per target, each with its own instance of the run's policy, traced where the
/// run is: on `device` when one is given, else on every target opened by its path, refusing
/// dangerous writes unless the run allows them and checking a block device is large enough.
/// With `synchronous` (the run's one job waits for each request before the next, as fio's
/// `psync`), a file's transfers run on the job's own thread ([`BackendChoice::Synchronous`]).
pub(crate) fn start_engines(
    device: Option<(Box<dyn Backend>, Geometry)>,
    targets: &[TargetPlan],
    synchronous: bool,
    config: &RunConfig,
    groups: &GroupTree,
    trace: Option<TraceSinks<'_>>,
    notes: &mut Vec<String>,
) -> Result<(Vec<Engine>, Vec<Opened>), RunError> {
    let (limits_later, targets_later) =
        ioslice_fio::run_spec::limits_set_by(&config.run.group_changes);
    if let Some((backend, geometry)) = device {
        let mut builder = Engine::builder(backend, geometry)
            .scheduler_spec(config.run.scheduler.clone())
            .groups(groups.clone())
            .limits_later(limits_later, targets_later)
            .io_timeout(config.io_timeout);
        if let Some(sinks) = trace {
            builder = builder.trace(sinks(None));
        }
        let opened = Opened {
            path: config.path.clone(),
            logical_block_size: geometry.logical_block_size,
        };
        return Ok((vec![builder.start()?], vec![opened]));
    }
    let several = targets.len() > 1;
    let mut engines = Vec::with_capacity(targets.len());
    let mut opened = Vec::with_capacity(targets.len());
    for plan in targets {
        let mut builder = Engine::on_path(&plan.path)
            .direct(if plan.direct {
                DirectIo::On
            } else {
                DirectIo::Off
            })
            .min_len(plan.len)
            .allow_mounted_write_as(config.allow_mounted_write, "--allow-mounted-write")
            .backend(if synchronous {
                BackendChoice::Synchronous
            } else {
                BackendChoice::Automatic
            })
            .scheduler_spec(config.run.scheduler.clone())
            .groups(groups.clone())
            .limits_later(limits_later, targets_later)
            .io_timeout(config.io_timeout);
        if !plan.write {
            builder = builder.read_only();
        }
        if plan.len > 0 {
            builder = builder.create(plan.len);
        }
        if let Some(sinks) = trace {
            let label = plan.path.display().to_string();
            builder = builder.trace(sinks(several.then_some(label.as_str())));
        }
        let engine = builder.start().map_err(run_error)?;
        notes.extend_from_slice(engine.notes());
        opened.push(Opened {
            path: plan.path.clone(),
            logical_block_size: u32::try_from(engine.handle().logical_block_size())
                .unwrap_or(u32::MAX),
        });
        engines.push(engine);
    }
    if several {
        notes.push(format!(
            "{} files: one engine (and one {} instance) per file; they do not arbitrate between each other",
            targets.len(),
            config.run.scheduler.name
        ));
    }
    Ok((engines, opened))
}

/// The run's error for a target the engine could not be started on: a refused write names
/// `--allow-mounted-write`; the others keep the engine's wording.
fn run_error(error: OpenError) -> RunError {
    match error {
        OpenError::Device(error) => RunError::Device(error),
        OpenError::WriteRefused { path, reason } => {
            RunError::Refused(refusal_line(&path.display().to_string(), &reason))
        }
        OpenError::Engine { source, .. } => RunError::Engine(source),
        other => RunError::Job(other.to_string()),
    }
}
