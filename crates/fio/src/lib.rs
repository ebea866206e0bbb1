//! ioslice-fio: fio's job files, the workloads they describe, and fio's output formats.
//!
//! This crate knows nothing of the simulator or the engine: it turns a job file into
//! [`JobSpec`]s, generates each job's I/O ([`workload`]) as a pure state machine with
//! time passed in, and prints a finished [`RunReport`] as fio would.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cpuio;
pub mod direction;
pub mod distribution;
pub mod errno;
pub mod exec;
pub mod file_ops;
pub mod flow;
pub mod job;
pub mod jobfile;
pub mod latency_bins;
pub mod latency_target;
pub mod logs;
pub mod output;
pub mod pattern;
pub mod plan;
pub mod report;
pub mod run_spec;
pub mod sample_windows;
pub mod stats;
pub mod steady_state;
pub(crate) mod units;
pub mod verify;
pub mod workload;

pub use job::{
    BlockSize, Extent, Fallocate, IoEngine, JobFile, JobSpec, Origin, Pattern, StridedZones,
    Warning, ZoneMode,
};
pub use report::{CgroupSettings, DiskUtil, JobDescription, JobReport, RunReport};
pub use stats::{CpuUsage, DirectionStats, JobStats, LatencyStats};
