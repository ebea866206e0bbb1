//! ioslice-core: the request model, I/O priorities, groups, and every scheduling policy.
//!
//! A policy is a pure state machine. It never reads a clock, sleeps, spawns a thread,
//! touches a device or draws a random number: time comes in as an argument
//! ([`Nanos`]), and anything a policy wants to happen later it says in its return value
//! ([`Dispatch::WaitUntil`]). The simulator and the real engine are two drivers of the
//! same policies.
//!
//! A policy can also say what it decided and why, as typed events ([`trace`]): the driver
//! turns its tracing on, drains its events after each call and stamps them with the time.
//! Off, which is how every policy starts, it costs a branch per decision.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod elvfq;
pub mod errno;
pub mod file_kind;
pub mod group;
pub mod id_map;
pub mod ioband;
pub mod iocost;
pub mod iolatency;
pub mod kernel;
pub mod limit;
pub mod merge;
pub mod policy;
pub mod priority;
pub mod progress;
pub mod registry;
pub mod request;
pub mod request_queue;
pub mod scheduler;
pub mod sector_order;
pub mod sector_tree;
pub mod sorted_set;
pub mod spec;
pub mod stop;
pub mod time;
pub mod trace;
pub mod tunable;

/// The name and version ioslice writes where fio writes `fio-3.33` (`fio version` in fio's
/// JSON and terse output, the report's settings).
pub const VERSION: &str = concat!("ioslice-", env!("CARGO_PKG_VERSION"));

pub use group::{Group, GroupId, GroupTree};
pub use ioband::Controller;
pub use priority::{IoPriority, PriorityClass};
pub use progress::{JobState, Progress};
pub use registry::{
    build_scheduler, with_controllers, with_layers_for_changes, SchedulerInfo, SCHEDULERS,
};
pub use request::{Completion, Direction, ProcessId, Request, RequestId};
pub use scheduler::{Dispatch, Inserted, Scheduler, SchedulerContext};
pub use stop::StopSignal;
pub use time::Nanos;
pub use trace::{TraceEvent, TraceSink};
pub use tunable::{SchedSpec, TunableError};
