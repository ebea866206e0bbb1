//! Building, starting and stopping an engine.
//!
//! For a file or block device, [`Engine::on_path`] does all of what follows in one step
//! (opening the target, checking writes are safe, choosing the backend); this module is the
//! layer underneath, for a backend of the caller's own.
//!
//! [`Engine::builder`] takes the backend and the target's geometry ([`Geometry`]); the builder
//! names the policy as a `--sched` specification, declares groups with weights and limits,
//! and sizes the submission queue. [`EngineBuilder::start`] checks all of it, builds the
//! policy with [`build_scheduler`](ioslice_core::build_scheduler) (which wraps the limit layer when a group has limits) and
//! spawns the dispatcher thread (the poller of last resort: clients run the engine's work
//! themselves). [`Engine::shutdown`] (or dropping the engine) stops
//! accepting requests, drains every request queued or in flight, and joins the thread.

use std::io;
use std::sync::Arc;

use crate::sync::thread::{self, JoinHandle};

use ioslice_core::SchedulerContext;

use crate::backend::Backend;
use crate::dispatcher::{Parts, Shared};
use crate::handle::Handle;
use crate::settings::{self, policy_setters, PolicySettings};
use crate::stats::{FinalStats, Recorder};

pub use crate::error::EngineError;

/// What the engine needs to know about the file or device behind the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Logical block size in bytes (a power of two, at least 512): offsets, lengths and
    /// buffer addresses of O_DIRECT requests must be multiples of it.
    pub logical_block_size: u32,
    /// Operations the device is given at once.
    pub queue_depth: usize,
    /// Size in bytes; requests past it are refused at submission.
    pub capacity: u64,
    /// Whether the device has moving heads (policies tune their idling by it).
    pub rotational: bool,
}

impl Geometry {
    /// What an opened file or block device reports: its logical block size (for O_DIRECT),
    /// queue depth (sysfs, else 32), size and whether it rotates.
    pub fn of(target: &crate::device::Target) -> Self {
        Self {
            logical_block_size: target.logical_block_size(),
            queue_depth: target.queue_depth() as usize,
            capacity: target.size_bytes(),
            rotational: target.rotational(),
        }
    }

    /// A non-rotational target with 512-byte blocks and queue depth 32.
    pub fn new(capacity: u64) -> Self {
        Self {
            logical_block_size: 512,
            queue_depth: 32,
            capacity,
            rotational: false,
        }
    }
}

/// Configures an [`Engine`]; see [`Engine::builder`].
pub struct EngineBuilder {
    backend: Box<dyn Backend>,
    target: Geometry,
    settings: PolicySettings,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("backend", &self.backend.name())
            .field("target", &self.target)
            .field("settings", &self.settings)
            .finish()
    }
}

impl EngineBuilder {
    /// The default submission queue capacity (and most requests the policy holds at once).
    pub const DEFAULT_SUBMISSION_QUEUE: usize = settings::DEFAULT_SUBMISSION_QUEUE;
    /// The default policy.
    pub const DEFAULT_SCHEDULER: &'static str = settings::DEFAULT_SCHEDULER;

    policy_setters!();

    /// Everything about the policy at once (an [`OpenBuilder`](crate::OpenBuilder) handing
    /// over what it was told).
    pub(crate) fn settings(mut self, settings: PolicySettings) -> Self {
        self.settings = settings;
        self
    }

    /// Check everything, build the policy and start the dispatcher thread.
    pub fn start(mut self) -> Result<Engine, EngineError> {
        let target = self.target;
        let block = target.logical_block_size;
        if !block.is_power_of_two() || block < 512 {
            return Err(EngineError::Config(format!(
                "logical block size {block} is not a power of two of at least 512 bytes"
            )));
        }
        if target.queue_depth == 0 {
            return Err(EngineError::Config("queue depth must be at least 1".into()));
        }
        if self.settings.submission_queue == 0 {
            return Err(EngineError::Config(
                "submission queue capacity must be at least 1".into(),
            ));
        }
        let groups = self.settings.group_tree()?;
        let context = SchedulerContext {
            groups: groups.clone(),
            rotational: target.rotational,
            queue_depth: target.queue_depth,
        };
        let max_queued = self.settings.submission_queue;
        let trace = self.settings.trace.take();
        let statistics = self.settings.statistics;
        let io_timeout = self.settings.io_timeout;
        let later = self.settings.later;
        let policy = self.settings.build(&context)?;

        let started = crate::sync::now();
        let recorder = Arc::new(Recorder::new(started, statistics));
        let backend_name = self.backend.name();
        let shared = Shared::start(Parts {
            backend: self.backend,
            policy,
            groups,
            logical_block_size: u64::from(block),
            capacity: target.capacity,
            recorder,
            started,
            depth: target.queue_depth,
            max_queued,
            trace,
            io_timeout,
            later,
        });
        let dispatcher = Arc::clone(&shared);
        let thread = thread::Builder::new()
            .name("ioslice-dispatch".into())
            .spawn(move || dispatcher.run_dispatcher())
            .map_err(EngineError::Spawn)?;
        Ok(Engine {
            shared,
            thread: Some(thread),
            backend_name,
            target: None,
            notes: Vec::new(),
        })
    }
}

/// A running engine: a policy and a backend that client threads drive themselves, with a
/// dispatcher thread as the poller of last resort. See the
/// [crate documentation](crate) for an example.
#[derive(Debug)]
pub struct Engine {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<io::Result<()>>>,
    backend_name: &'static str,
    /// The file or block device, when the engine opened it itself (`Engine::on_path`).
    pub(crate) target: Option<crate::device::Target>,
    /// What was worth telling while opening it (a backend fallback, O_DIRECT refused).
    pub(crate) notes: Vec<String>,
}

impl Engine {
    /// Start configuring an engine in front of `backend`, which drives `target`.
    pub fn builder(backend: Box<dyn Backend>, target: Geometry) -> EngineBuilder {
        EngineBuilder {
            backend,
            target,
            settings: PolicySettings::default(),
        }
    }

    /// A handle for clients; clone it freely, send it to any thread.
    pub fn handle(&self) -> Handle {
        Handle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The backend's name (`io_uring`, `psync`, `memory`).
    pub fn backend_name(&self) -> &'static str {
        self.backend_name
    }

    /// The file or block device the engine opened, for an engine started from a path
    /// ([`Engine::on_path`]): its path, kind, whether O_DIRECT is on, its alignment and
    /// size. `None` for an engine built on a backend of the caller's ([`Engine::builder`]).
    pub fn target(&self) -> Option<&crate::device::Target> {
        self.target.as_ref()
    }

    /// One-line notes from opening the target ([`Engine::on_path`]): the backend chosen
    /// when it is not the obvious one (io_uring unavailable, `IOSLICE_BACKEND` set), O_DIRECT
    /// refused and buffered I/O used instead. Empty when there is nothing to tell.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Stop accepting requests (new ones fail with a shutdown error), complete every
    /// request queued or in flight, stop the dispatcher thread, and return the statistics.
    pub fn shutdown(mut self) -> Result<FinalStats, EngineError> {
        self.stop()?;
        Ok(self.shared.recorder.settled_snapshot())
    }

    fn stop(&mut self) -> Result<(), EngineError> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        self.shared.begin_stop();
        match thread.join() {
            Ok(_) | Err(_) if self.shared.has_panicked() => Err(EngineError::Panicked),
            Ok(Ok(())) => Ok(()),
            Ok(Err(source)) => Err(EngineError::Backend {
                backend: self.backend_name,
                source,
            }),
            Err(_) => {
                self.shared.abandon();
                Err(EngineError::DispatcherPanicked)
            }
        }
    }
}

impl Drop for Engine {
    /// Shuts down as [`Engine::shutdown`] does; an error can only be dropped here.
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
