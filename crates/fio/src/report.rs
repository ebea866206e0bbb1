//! A finished run, ready to be printed in fio's formats by [`crate::output`].

use ioslice_core::limit::{Limits, Throttle};
use ioslice_core::time::{MICROSECOND, MILLISECOND, SECOND};
use ioslice_core::{GroupId, GroupTree, IoPriority, Nanos};

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
    /// The job's process id: in a real run its thread's id (fio reports a threaded job's so), in
    /// a simulated one its 1-based index in the run (the simulator has no processes).
    pub pid: u32,
    /// `rw=` as fio prints it (`read`, `randrw`, …).
    pub rw: String,
    /// Block sizes as fio prints them: `(R) 4096B-4096B, (W) 16.0KiB-16.0KiB, (T) 1024B-130KiB`
    /// (four significant figures, powers of 1024 past them).
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

impl JobDescription {
    /// How the report names and describes one process of `spec`: its reporting group, its
    /// pid-like number and its I/O priority.
    pub fn of(spec: &crate::JobSpec, groupid: u32, pid: u32, priority: IoPriority) -> Self {
        let bs = |i: usize| {
            let size = |n: u64| crate::units::bytes(n, true);
            format!(
                "{}-{}",
                size(spec.block_size[i].min()),
                size(spec.block_size[i].max())
            )
        };
        Self {
            name: spec.name.clone(),
            groupid,
            jobs: 1,
            pid,
            rw: spec.pattern.fio_name().to_string(),
            bs_line: format!("(R) {}, (W) {}, (T) {}", bs(0), bs(1), bs(2)),
            ioengine: spec.ioengine.fio_name().to_string(),
            iodepth: spec.iodepth,
            options: spec.options.clone(),
            priority: priority.to_string(),
            cgroup: spec.cgroup.clone().unwrap_or_default(),
            group_reporting: spec.group_reporting,
        }
    }
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
    /// Seconds since 1970 the run is dated: its end (the simulator leaves 0 for its caller to
    /// date, `ioslice run` dates it now or at `SOURCE_DATE_EPOCH`).
    pub timestamp: u64,
    /// From the run's start to its end (in a simulated run, on the simulated clock): fio's
    /// `elapsed`, which it prints in whole seconds rounded up.
    pub elapsed: Nanos,
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
    /// Every cgroup of the run but the root, parents before children, with the weight the
    /// scheduler gave it and its limits; empty when the run has no cgroups.
    pub cgroups: Vec<CgroupSettings>,
}

/// A cgroup as the run used it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CgroupSettings {
    /// Path from the root (`a/b`).
    pub path: String,
    /// The weight the scheduler gave it against its sibling cgroups, with its own default
    /// and range applied (CFQ's 500 and 10..=1000, BFQ's 100 and 1..=1000); `None` when the
    /// scheduler does not weigh cgroups.
    pub weight: Option<u32>,
    /// Whether a weight was set (a job's `cgroup_weight=`, `--cgroup`), as opposed to the
    /// scheduler's default.
    pub weight_set: bool,
    /// Its bandwidth and IOPS limits (`io.max`); unlimited by default.
    pub limits: Limits,
}

impl CgroupSettings {
    /// Every group but the root, parents first, as a run uses it: the weight its policy
    /// gives it (`weight`: what [`Scheduler::group_weight`](ioslice_core::Scheduler::group_weight)
    /// says, the policy's own default and range, or none for a policy without groups) and
    /// its limits.
    pub fn of_run(groups: &GroupTree, weight: impl Fn(GroupId) -> Option<u32>) -> Vec<Self> {
        groups
            .iter()
            .filter(|(id, _)| *id != GroupId::ROOT)
            .map(|(id, group)| Self {
                path: group.path.clone(),
                weight: weight(id),
                weight_set: group.weight_set,
                limits: group.limits,
            })
            .collect()
    }
}

impl CgroupSettings {
    /// Whether the run set anything for it: a weight or a limit.
    pub fn is_configured(&self) -> bool {
        self.weight_set || !self.limits.is_unlimited()
    }

    /// Its limits as `rbps=8MiB/s wbps=max riops=max wiops=max burst=100ms` (io.max's four
    /// rates, `max` for unlimited, then the burst in force, then ` throttle=above` for a
    /// throttle above the elevator), then ` latency=75ms` for an io.latency target; the
    /// target alone when it has no limit; `None` when it has neither.
    pub fn limits_text(&self) -> Option<String> {
        let l = &self.limits;
        let latency = l
            .latency
            .filter(|&target| target > 0)
            .map(|target| format!("latency={}", duration(target)));
        if l.is_unlimited() {
            return latency;
        }
        let bytes = |rate: Option<u64>| rate.map_or_else(|| "max".to_string(), bytes_per_second);
        let iops = |rate: Option<u64>| rate.map_or_else(|| "max".to_string(), |n| n.to_string());
        let throttle = match l.throttle {
            Throttle::Priority => String::new(),
            other => format!(" throttle={}", other.name()),
        };
        let latency = latency.map_or_else(String::new, |text| format!(" {text}"));
        Some(format!(
            "rbps={} wbps={} riops={} wiops={} burst={}{throttle}{latency}",
            bytes(l.read_bps),
            bytes(l.write_bps),
            iops(l.read_iops),
            iops(l.write_iops),
            duration(l.burst_or_default())
        ))
    }
}

/// Bytes per second exactly, in the largest binary unit that divides it: `8MiB/s`,
/// `1536KiB/s`, `1000000B/s` (what `--cgroup` reads back, less the `/s`).
fn bytes_per_second(rate: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    UNITS
        .iter()
        .find(|(_, shift)| rate >= 1 << shift && rate.is_multiple_of(1 << shift))
        .map_or_else(
            || format!("{rate}B/s"),
            |(unit, shift)| format!("{}{unit}/s", rate >> shift),
        )
}

/// A duration exactly, in the largest unit that divides it: `100ms`, `1s`, `250us`, `7ns`.
fn duration(nanos: u64) -> String {
    [("s", SECOND), ("ms", MILLISECOND), ("us", MICROSECOND)]
        .iter()
        .find(|(_, unit)| nanos >= *unit && nanos.is_multiple_of(*unit))
        .map_or_else(
            || format!("{nanos}ns"),
            |(name, unit)| format!("{}{name}", nanos / unit),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_in_io_max_order_with_exact_units() {
        let mut settings = CgroupSettings {
            path: "g1".into(),
            ..CgroupSettings::default()
        };
        assert_eq!(settings.limits_text(), None);
        settings.limits.burst = Some(SECOND);
        assert_eq!(settings.limits_text(), None, "a burst alone limits nothing");
        settings.limits.latency = Some(250 * MICROSECOND);
        assert_eq!(settings.limits_text().as_deref(), Some("latency=250us"));
        settings.limits.read_bps = Some(8 << 20);
        assert_eq!(
            settings.limits_text().as_deref(),
            Some("rbps=8MiB/s wbps=max riops=max wiops=max burst=1s latency=250us")
        );
        settings.limits = Limits {
            read_bps: Some(8 << 20),
            write_iops: Some(120),
            ..Limits::default()
        };
        assert_eq!(
            settings.limits_text().as_deref(),
            Some("rbps=8MiB/s wbps=max riops=max wiops=120 burst=100ms")
        );
        settings.limits = Limits {
            read_bps: Some(1_000_000),
            write_bps: Some(1536 << 10),
            read_iops: Some(1),
            burst: Some(250 * MICROSECOND + 1),
            ..Limits::default()
        };
        assert_eq!(
            settings.limits_text().as_deref(),
            Some("rbps=1000000B/s wbps=1536KiB/s riops=1 wiops=max burst=250001ns")
        );
        assert_eq!(bytes_per_second(3 << 40), "3TiB/s");
        assert_eq!(duration(2 * SECOND), "2s");
        assert_eq!(duration(0), "0ns");
    }
}
