//! A finished run, ready to be printed in fio's formats by [`crate::output`].

use crate::stats::JobStats;

/// What the header line and JSON `job options` of a job need to know about it.
#[derive(Debug, Clone, Default)]
pub struct JobDescription {
    /// Job name.
    pub name: String,
    /// Reporting group id (`groupid`).
    pub groupid: u32,
    /// Jobs folded into this entry (1 unless group_reporting).
    pub jobs: u32,
    /// A pid-like number: 1-based job index in the run (the simulator has no processes).
    pub pid: u32,
    /// `rw=` as fio prints it (`read`, `randrw`, …).
    pub rw: String,
    /// Block sizes as fio prints them: `(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B`.
    pub bs_line: String,
    /// Engine name.
    pub ioengine: String,
    /// iodepth.
    pub iodepth: u32,
    /// The job's own options, as fio's JSON `job options`.
    pub options: Vec<(String, String)>,
    /// I/O priority, as `BE4`, `RT0`, `IDLE`.
    pub priority: String,
    /// Group path (`""` for the root).
    pub cgroup: String,
    /// Whether `group_reporting` applies to this entry.
    pub group_reporting: bool,
}

/// One entry of the report: a job, or a reporting group folded together.
#[derive(Debug, Clone, Default)]
pub struct JobReport {
    /// Who it is.
    pub description: JobDescription,
    /// What it did.
    pub stats: JobStats,
}

/// Utilisation of the (simulated or real) device, fio's `Disk stats` block.
#[derive(Debug, Clone, Default)]
pub struct DiskUtil {
    /// Device name (`sim:sata-7200`, `loop0`).
    pub name: String,
    /// Completed [read, write] commands at the device.
    pub ios: [u64; 2],
    /// Requests merged into others, [read, write].
    pub merges: [u64; 2],
    /// Milliseconds spent on [read, write] commands (sum of their service times).
    pub ticks: [u64; 2],
    /// Milliseconds requests spent queued or in service (sum over requests).
    pub in_queue: u64,
    /// Percent of the run during which the device had at least one command.
    pub util: f64,
}

/// A whole run.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// What writes the report, in the place of fio's own version string.
    pub version: String,
    /// Seconds since the epoch the run is dated (0 in the simulator, so that output is reproducible).
    pub timestamp: u64,
    /// The `[global]` options, for JSON `global options`.
    pub global_options: Vec<(String, String)>,
    /// Entries in job order.
    pub jobs: Vec<JobReport>,
    /// Device statistics.
    pub disk_util: Vec<DiskUtil>,
    /// The scheduler that ran, as given (`deadline:fifo_batch=1`).
    pub scheduler: String,
    /// The device, as given (`sim:sata-7200`).
    pub device: String,
}
