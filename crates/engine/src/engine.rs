//! Building, starting and stopping an engine.
//!
//! For a file or block device, [`Engine::on_path`] does all of what follows in one step
//! (opening the target, checking writes are safe, choosing the backend); this module is the
//! layer underneath, for a backend of the caller's own.
//!
//! [`Engine::builder`] takes the backend and the target's geometry ([`Geometry`]); the builder
//! names the policy as a `--sched` specification, declares groups with weights and limits,
//! and sizes the submission queue. [`EngineBuilder::start`] checks all of it, builds the
//! policy with [`build_scheduler`] (which wraps the limit layer when a group has limits) and
//! spawns the dispatcher thread (the poller of last resort: clients run the engine's work
//! themselves). [`Engine::shutdown`] (or dropping the engine) stops
//! accepting requests, drains every request queued or in flight, and joins the thread.

use std::io;
use std::sync::Arc;

use crate::sync::thread::{self, JoinHandle};

use ioslice_core::limit::Limits;
use ioslice_core::{build_scheduler, GroupTree, SchedSpec, Scheduler, SchedulerContext, TraceSink};

use crate::backend::Backend;
use crate::dispatcher::{Parts, Shared};
use crate::handle::Handle;
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

/// Builds a policy of the caller's own for the engine's groups and device.
type PolicyFactory = Box<dyn FnOnce(&SchedulerContext) -> Box<dyn Scheduler> + Send>;

#[derive(Debug)]
enum GroupSetting {
    Weight(String, u32),
    Limits(String, Limits),
}

/// Configures an [`Engine`]; see [`Engine::builder`].
pub struct EngineBuilder {
    backend: Box<dyn Backend>,
    target: Geometry,
    scheduler: String,
    base_groups: GroupTree,
    groups: Vec<GroupSetting>,
    submission_queue: usize,
    policy: Option<PolicyFactory>,
    trace: Option<Box<dyn TraceSink + Send>>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("backend", &self.backend.name())
            .field("target", &self.target)
            .field("scheduler", &self.scheduler)
            .field("groups", &self.groups)
            .field("submission_queue", &self.submission_queue)
            .field("own_policy", &self.policy.is_some())
            .field("traced", &self.trace.is_some())
            .finish()
    }
}

impl EngineBuilder {
    /// The default submission queue capacity (and most requests the policy holds at once).
    pub const DEFAULT_SUBMISSION_QUEUE: usize = 1024;
    /// The default policy.
    pub const DEFAULT_SCHEDULER: &'static str = "bfq";

    /// The policy, as `--sched` takes it: `NAME[:tunable=value,...]` (default `bfq`).
    pub fn scheduler(mut self, spec: &str) -> Self {
        self.scheduler = spec.to_string();
        self
    }

    /// Run a policy of your own instead of a named one: `build` makes it from the engine's
    /// groups and device ([`SchedulerContext`]) when the engine starts. Group limits still
    /// apply, through the same limit layer the named policies get.
    pub fn policy(
        mut self,
        build: impl FnOnce(&SchedulerContext) -> Box<dyn Scheduler> + Send + 'static,
    ) -> Self {
        self.policy = Some(Box::new(build));
        self
    }

    /// Declare the group at `path` (`a/b` creates `a` too) with a weight among its siblings.
    pub fn group(mut self, path: &str, weight: u32) -> Self {
        self.groups
            .push(GroupSetting::Weight(path.to_string(), weight));
        self
    }

    /// Start from a whole group tree (weights and limits set), as a job file declares it;
    /// [`Self::group`] and [`Self::group_limits`] add to it.
    pub fn groups(mut self, tree: GroupTree) -> Self {
        self.base_groups = tree;
        self
    }

    /// Declare the group at `path` with bandwidth and IOPS limits (on its whole subtree).
    pub fn group_limits(mut self, path: &str, limits: Limits) -> Self {
        self.groups
            .push(GroupSetting::Limits(path.to_string(), limits));
        self
    }

    /// How many requests the policy may hold before submitting clients block (at least 1;
    /// default [`Self::DEFAULT_SUBMISSION_QUEUE`]), like the kernel's `nr_requests`, so
    /// everything outstanding stays bounded.
    pub fn submission_queue(mut self, capacity: usize) -> Self {
        self.submission_queue = capacity;
        self
    }

    /// Trace the run: every request's arrival, dispatch and completion and every decision of
    /// the policy go to `sink` ([`ioslice_core::trace`]), stamped with the engine's time (since
    /// it started). The sink is called with the engine's lock held: it should be quick (a
    /// buffered writer).
    pub fn trace(mut self, sink: Box<dyn TraceSink + Send>) -> Self {
        self.trace = Some(sink);
        self
    }

    /// Check everything, build the policy and start the dispatcher thread.
    pub fn start(self) -> Result<Engine, EngineError> {
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
        if self.submission_queue == 0 {
            return Err(EngineError::Config(
                "submission queue capacity must be at least 1".into(),
            ));
        }
        let mut groups = self.base_groups.clone();
        for setting in &self.groups {
            match setting {
                GroupSetting::Weight(path, weight) => {
                    let id = groups.ensure(path)?;
                    groups.set_weight(id, *weight)?;
                }
                GroupSetting::Limits(path, limits) => {
                    let id = groups.ensure(path)?;
                    groups.set_limits(id, *limits);
                }
            }
        }
        let scheduler_error = |source| EngineError::Scheduler {
            spec: self.scheduler.clone(),
            source: Box::new(source),
        };
        let context = SchedulerContext {
            groups: groups.clone(),
            rotational: target.rotational,
            queue_depth: target.queue_depth,
        };
        let policy = match self.policy {
            Some(build) => ioslice_core::limit::wrap(build(&context), &groups),
            None => {
                let spec: SchedSpec = self.scheduler.parse().map_err(scheduler_error)?;
                build_scheduler(&spec, &context).map_err(scheduler_error)?
            }
        };

        let started = crate::sync::now();
        let recorder = Arc::new(Recorder::new(started));
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
            max_queued: self.submission_queue,
            trace: self.trace,
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
            scheduler: EngineBuilder::DEFAULT_SCHEDULER.to_string(),
            base_groups: GroupTree::default(),
            groups: Vec::new(),
            submission_queue: EngineBuilder::DEFAULT_SUBMISSION_QUEUE,
            policy: None,
            trace: None,
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
        Ok(self.shared.recorder.snapshot())
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
