//! The policy side of an engine's configuration, the same for both builders
//! ([`EngineBuilder`](crate::EngineBuilder) on a backend, [`OpenBuilder`](crate::OpenBuilder)
//! on a path): which policy, its groups with weights and limits, the submission queue, the
//! trace and which statistics are kept. Both builders hold a [`PolicySettings`] and get their setters for it from one macro,
//! so the two cannot drift apart; the open builder hands its settings to the engine builder
//! whole.
//!
//! Touched only by the thread configuring an engine, before it starts.

use ioslice_core::limit::Limits;
use ioslice_core::{
    build_scheduler, with_controllers, with_layers_for_changes, GroupTree, SchedSpec, Scheduler,
    SchedulerContext, TraceSink,
};

use crate::error::EngineError;
use crate::stats::Statistics;

/// Builds a policy of the caller's own for the engine's groups and device.
pub(crate) type PolicyFactory = Box<dyn FnOnce(&SchedulerContext) -> Box<dyn Scheduler> + Send>;

/// The default submission queue capacity (and most requests the policy holds at once).
pub(crate) const DEFAULT_SUBMISSION_QUEUE: usize = 1024;

/// How long a request may stay at the device before it fails with `ETIMEDOUT` unless set
/// otherwise: the kernel block layer's default (`/sys/block/*/queue/io_timeout`, 30 s).
pub const DEFAULT_IO_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// The default policy.
pub(crate) const DEFAULT_SCHEDULER: &str = "bfq";

/// Which policy the engine runs.
pub(crate) enum PolicyChoice {
    /// A named policy as `--sched` takes it, parsed when the engine starts.
    Named(String),
    /// A named policy already parsed.
    Spec(SchedSpec),
    /// A policy of the caller's own.
    Own(PolicyFactory),
}

impl std::fmt::Debug for PolicyChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Named(text) => write!(f, "{text:?}"),
            Self::Spec(spec) => write!(f, "{:?}", spec.to_string()),
            Self::Own(_) => f.write_str("own policy"),
        }
    }
}

/// A group declared on a builder, applied in order on top of the base tree.
#[derive(Debug)]
pub(crate) enum GroupSetting {
    Weight(String, u32),
    Limits(String, Limits),
}

/// The layers put in for limits and latency targets that groups are given only while the
/// engine runs ([`EngineBuilder::limits_later`](crate::EngineBuilder::limits_later)).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LaterLayers {
    pub(crate) limits: bool,
    pub(crate) latency_targets: bool,
}

/// Everything about the policy a builder was told.
pub(crate) struct PolicySettings {
    pub(crate) policy: PolicyChoice,
    pub(crate) base_groups: GroupTree,
    pub(crate) groups: Vec<GroupSetting>,
    pub(crate) submission_queue: usize,
    pub(crate) trace: Option<Box<dyn TraceSink + Send>>,
    pub(crate) statistics: Statistics,
    pub(crate) io_timeout: Option<std::time::Duration>,
    pub(crate) later: LaterLayers,
}

impl std::fmt::Debug for PolicySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySettings")
            .field("policy", &self.policy)
            .field("groups", &self.groups)
            .field("submission_queue", &self.submission_queue)
            .field("traced", &self.trace.is_some())
            .field("statistics", &self.statistics)
            .field("io_timeout", &self.io_timeout)
            .field("later", &self.later)
            .finish()
    }
}

impl Default for PolicySettings {
    fn default() -> Self {
        Self {
            policy: PolicyChoice::Named(DEFAULT_SCHEDULER.to_string()),
            base_groups: GroupTree::default(),
            groups: Vec::new(),
            submission_queue: DEFAULT_SUBMISSION_QUEUE,
            trace: None,
            statistics: Statistics::default(),
            io_timeout: Some(DEFAULT_IO_TIMEOUT),
            later: LaterLayers::default(),
        }
    }
}

impl PolicySettings {
    /// The base tree with every group setting applied.
    pub(crate) fn group_tree(&self) -> Result<GroupTree, EngineError> {
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
        Ok(groups)
    }

    /// The named policy's specification, parsed; `None` for a policy of the caller's own.
    fn spec(&self) -> Result<Option<SchedSpec>, EngineError> {
        match &self.policy {
            PolicyChoice::Own(_) => Ok(None),
            PolicyChoice::Spec(spec) => Ok(Some(spec.clone())),
            PolicyChoice::Named(text) => parse_named(text).map(Some),
        }
    }

    /// Build the policy for `context`, inside the controllers its groups call for (the
    /// limit layer where a group has limits, dm-ioband when the tree says so) and the layers
    /// for limits given later, a policy of the caller's own as much as a named one.
    pub(crate) fn build(
        self,
        context: &SchedulerContext,
    ) -> Result<Box<dyn Scheduler>, EngineError> {
        let policy = match self.policy {
            PolicyChoice::Own(build) => with_controllers(build(context), context),
            PolicyChoice::Spec(spec) => built(&spec, context)?,
            PolicyChoice::Named(text) => built(&parse_named(&text)?, context)?,
        };
        let later = self.later;
        Ok(with_layers_for_changes(
            policy,
            context,
            later.limits,
            later.latency_targets,
        ))
    }

    /// Whether the named policy can be built for `groups` (its name and tunables), before
    /// any target is opened. A policy of the caller's own is not checked.
    pub(crate) fn check(&self, groups: &GroupTree) -> Result<(), EngineError> {
        let Some(spec) = self.spec()? else {
            return Ok(());
        };
        let context = SchedulerContext {
            groups: groups.clone(),
            rotational: false,
            queue_depth: 32,
        };
        built(&spec, &context).map(|_| ())
    }
}

/// The named policy built for `context`; the error names it.
fn built(spec: &SchedSpec, context: &SchedulerContext) -> Result<Box<dyn Scheduler>, EngineError> {
    build_scheduler(spec, context).map_err(|source| scheduler_error(&spec.to_string(), source))
}

/// A `--sched` specification, parsed; the error names it.
fn parse_named(text: &str) -> Result<SchedSpec, EngineError> {
    text.parse().map_err(|source| scheduler_error(text, source))
}

fn scheduler_error(spec: &str, source: ioslice_core::TunableError) -> EngineError {
    EngineError::Scheduler {
        spec: spec.to_string(),
        source: Box::new(source),
    }
}

/// The policy setters of a builder whose [`PolicySettings`] is in its `settings` field.
macro_rules! policy_setters {
    () => {
        /// The policy, as `--sched` takes it: `NAME[:tunable=value,...]` (default `bfq`),
        /// e.g. `"bfq:slice_idle=0"`, `"mq-deadline"`, `"noop"`. Checked when the engine
        /// starts.
        pub fn scheduler(mut self, spec: &str) -> Self {
            self.settings.policy = $crate::settings::PolicyChoice::Named(spec.to_string());
            self
        }

        /// The policy as an already parsed specification (what
        /// [`SchedSpec::from_str`](std::str::FromStr::from_str) makes of `--sched`'s text).
        pub fn scheduler_spec(mut self, spec: ioslice_core::SchedSpec) -> Self {
            self.settings.policy = $crate::settings::PolicyChoice::Spec(spec);
            self
        }

        /// Run a policy of your own instead of a named one: `build` makes it from the
        /// engine's groups and device ([`SchedulerContext`](ioslice_core::SchedulerContext))
        /// when the engine starts. Group limits still apply, through the same limit layer the
        /// named policies get.
        pub fn policy(
            mut self,
            build: impl FnOnce(&ioslice_core::SchedulerContext) -> Box<dyn ioslice_core::Scheduler>
                + Send
                + 'static,
        ) -> Self {
            self.settings.policy = $crate::settings::PolicyChoice::Own(Box::new(build));
            self
        }

        /// Declare the group at `path` (`a/b` creates `a` too) with a weight among its
        /// siblings.
        pub fn group(mut self, path: &str, weight: u32) -> Self {
            self.settings
                .groups
                .push($crate::settings::GroupSetting::Weight(
                    path.to_string(),
                    weight,
                ));
            self
        }

        /// Declare the group at `path` with bandwidth and IOPS limits (on its whole subtree).
        pub fn group_limits(mut self, path: &str, limits: ioslice_core::limit::Limits) -> Self {
            self.settings
                .groups
                .push($crate::settings::GroupSetting::Limits(
                    path.to_string(),
                    limits,
                ));
            self
        }

        /// Let groups be given limits (`limits`) or io.latency targets (`latency_targets`)
        /// while the engine runs ([`Handle::set_group`](crate::Handle::set_group),
        /// [`Handle::add_group`](crate::Handle::add_group)) even if none has one at the start:
        /// the layers that enforce them are put in now, as they are for a tree that has them.
        /// Until a group is given one they hold nothing back. Without this, such a change is
        /// refused.
        pub fn limits_later(mut self, limits: bool, latency_targets: bool) -> Self {
            self.settings.later = $crate::settings::LaterLayers {
                limits,
                latency_targets,
            };
            self
        }

        /// Start from a whole group tree (weights and limits set), as a job file declares it;
        /// [`Self::group`] and [`Self::group_limits`] add to it.
        pub fn groups(mut self, tree: ioslice_core::GroupTree) -> Self {
            self.settings.base_groups = tree;
            self
        }

        /// How many requests the policy may hold before submitting clients block (at least
        /// 1; default 1024), like the kernel's `nr_requests`, so everything outstanding stays
        /// bounded.
        pub fn submission_queue(mut self, capacity: usize) -> Self {
            self.settings.submission_queue = capacity;
            self
        }

        /// Trace the run: every request's arrival, dispatch and completion and every decision
        /// of the policy go to `sink` ([`ioslice_core::trace`]), stamped with the engine's
        /// time (since it started). The sink is called with the engine's lock held: it should
        /// be quick (a buffered writer).
        pub fn trace(mut self, sink: Box<dyn ioslice_core::TraceSink + Send>) -> Self {
            self.settings.trace = Some(sink);
            self
        }

        /// Which statistics the engine keeps ([`Handle::stats`](crate::Handle::stats)):
        /// [`Statistics::Detailed`](crate::Statistics::Detailed) (the default) keeps totals,
        /// per group and per process with latency percentiles;
        /// [`Statistics::Totals`](crate::Statistics::Totals) only the engine-wide counts and
        /// bytes, which are as exact either way.
        pub fn statistics(mut self, kept: $crate::Statistics) -> Self {
            self.settings.statistics = kept;
            self
        }

        /// How long a request may stay at the device before it completes, once, with
        /// `ETIMEDOUT` (counted in [`Snapshot::timed_out`](crate::Snapshot::timed_out));
        /// `None` waits for ever. Default 30 s, as the kernel's block layer. The device's late
        /// answer is absorbed; meanwhile the operation no longer counts against the queue
        /// depth, but shutdown still waits for it (its buffers are the device's until then).
        pub fn io_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
            self.settings.io_timeout = timeout.filter(|t| !t.is_zero());
            self
        }
    };
}

pub(crate) use policy_setters;
