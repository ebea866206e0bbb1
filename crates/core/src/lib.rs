//! ioslice-core: the request model, I/O priorities, groups, and every scheduling policy.
//!
//! A policy is a pure state machine. It never reads a clock, sleeps, spawns a thread,
//! touches a device or draws a random number: time comes in as an argument
//! ([`Nanos`]), and anything a policy wants to happen later it says in its return value
//! ([`Dispatch::WaitUntil`]). The simulator and the real engine are two drivers of the
//! same policies.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod group;
pub mod id_map;
pub mod limit;
pub mod merge;
pub mod policy;
pub mod priority;
pub mod registry;
pub mod request;
pub mod scheduler;
pub mod sector_order;
pub mod time;
pub mod tunable;

pub use group::{Group, GroupId, GroupTree};
pub use priority::{IoPriority, PriorityClass};
pub use registry::{build_scheduler, SchedulerContext, SchedulerInfo, SCHEDULERS};
pub use request::{Completion, Direction, ProcessId, Request, RequestId};
pub use scheduler::{Dispatch, Inserted, Scheduler};
pub use time::Nanos;
pub use tunable::{SchedSpec, TunableError};
