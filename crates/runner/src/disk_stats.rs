//! fio's `Disk stats` block for a real run: the kernel's counters of each block device the
//! run used (`/sys/dev/block/MAJ:MIN/stat`), read before and after, or the engines' own
//! counts where sysfs has none (tmpfs, overlay).
//!
//! Read by the thread that runs the job file, before the jobs start and after they end.

use std::fs;
use std::time::Duration;

use ioslice_engine::{FinalStats, Target};

use crate::opened::Opened;
use ioslice_fio::DiskUtil;

/// A block device's counters from sysfs (`/sys/dev/block/MAJ:MIN/stat`), for fio's
/// `Disk stats` block: the device itself, or the one holding a regular file's filesystem.
#[derive(Debug, Clone)]
pub(crate) struct DiskStat {
    name: String,
    devno: (u32, u32),
    /// read ios, read merges, read sectors, read ticks, write ios, write merges, write
    /// sectors, write ticks, in flight, io ticks, time in queue.
    fields: [u64; 11],
}

impl DiskStat {
    pub(crate) fn of_target(target: &Target) -> Option<Self> {
        Self::read(target.disk_number()?)
    }

    fn read((major, minor): (u32, u32)) -> Option<Self> {
        let dir = fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        let text = fs::read_to_string(dir.join("stat")).ok()?;
        let values: Vec<u64> = text
            .split_whitespace()
            .map_while(|field| field.parse().ok())
            .collect();
        let fields: [u64; 11] = values.get(..11)?.try_into().ok()?;
        Some(Self {
            name: dir.file_name()?.to_string_lossy().into_owned(),
            devno: (major, minor),
            fields,
        })
    }
}

/// fio's `Disk stats`: the kernel's counters for each device the run used, over the run
/// (as fio reports them), or the engines' own counts where sysfs has none (tmpfs, overlay).
pub(crate) fn disk_util(
    targets: &[Opened],
    before: &[Option<DiskStat>],
    finals: &[FinalStats],
    elapsed: Duration,
) -> Vec<DiskUtil> {
    let elapsed_ms = elapsed.as_millis().max(1) as f64;
    let mut seen = Vec::new();
    let mut utils = Vec::new();
    for ((target, before), stats) in targets.iter().zip(before).zip(finals) {
        match before {
            Some(before) => {
                if seen.contains(&before.devno) {
                    continue;
                }
                seen.push(before.devno);
                let Some(after) = DiskStat::read(before.devno) else {
                    continue;
                };
                let delta = |i: usize| after.fields[i].saturating_sub(before.fields[i]);
                utils.push(DiskUtil {
                    name: before.name.clone(),
                    ios: [delta(0), delta(4)],
                    merges: [delta(1), delta(5)],
                    ticks: [delta(3), delta(7)],
                    in_queue: delta(10),
                    util: (100.0 * delta(9) as f64 / elapsed_ms).min(100.0),
                });
            }
            None => {
                let totals = &stats.totals;
                let busy_ms = (totals.latency.mean * totals.requests as f64 / 1000.0) as u64;
                utils.push(DiskUtil {
                    name: target
                        .path
                        .file_name()
                        .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
                    ios: [totals.reads, totals.writes],
                    merges: [0, 0],
                    ticks: [busy_ms, 0],
                    in_queue: busy_ms,
                    util: 0.0,
                });
            }
        }
    }
    utils
}
