//! `group_reporting` folding and fio's run-status groups.

use std::collections::BTreeMap;

use super::metrics::{dir_runtime, has_io, millis, per_second};
use crate::report::JobReport;

/// Fold entries that have `group_reporting` set into one entry per `groupid`, at the
/// position of the group's first entry, which also gives the name and other properties.
/// `jobs` becomes the number of processes folded together.
pub(crate) fn fold(jobs: &[JobReport]) -> Vec<JobReport> {
    let mut out: Vec<JobReport> = Vec::with_capacity(jobs.len());
    let mut slots: BTreeMap<u32, usize> = BTreeMap::new();
    for job in jobs {
        let count = job.description.jobs.max(1);
        if job.description.group_reporting {
            if let Some(&slot) = slots.get(&job.description.groupid) {
                let folded = &mut out[slot];
                folded.stats.merge(&job.stats);
                folded.description.jobs += count;
                continue;
            }
            slots.insert(job.description.groupid, out.len());
        }
        let mut job = job.clone();
        job.description.jobs = count;
        out.push(job);
    }
    out
}

/// One direction of a run-status group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct GroupDirection {
    /// Entries that did I/O this way.
    pub members: u32,
    /// Bytes moved by all of them.
    pub io_bytes: u64,
    /// Aggregate bandwidth, bytes/s: all bytes over the longest runtime.
    pub agg_bw: u64,
    /// Slowest entry's bandwidth, bytes/s.
    pub min_bw: u64,
    /// Fastest entry's bandwidth, bytes/s.
    pub max_bw: u64,
    /// Shortest runtime, ns.
    pub min_run: u64,
    /// Longest runtime, ns.
    pub max_run: u64,
}

impl GroupDirection {
    fn add(&mut self, bytes: u64, runtime: u64) {
        let bw = per_second(bytes, runtime);
        if self.members == 0 {
            self.min_bw = bw;
            self.min_run = runtime;
        }
        self.members += 1;
        self.io_bytes += bytes;
        self.min_bw = self.min_bw.min(bw);
        self.max_bw = self.max_bw.max(bw);
        self.min_run = self.min_run.min(runtime);
        self.max_run = self.max_run.max(runtime);
        self.agg_bw = per_second(self.io_bytes, self.max_run);
    }

    /// Shortest runtime in ms.
    pub fn min_run_ms(&self) -> u64 {
        millis(self.min_run)
    }

    /// Longest runtime in ms.
    pub fn max_run_ms(&self) -> u64 {
        millis(self.max_run)
    }
}

/// A run-status group: all (folded) entries sharing a `groupid`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RunGroup {
    /// The `groupid`.
    pub id: u32,
    /// [read, write, trim].
    pub directions: [GroupDirection; 3],
}

/// Run-status groups of (folded) entries, by ascending `groupid`.
pub(crate) fn run_groups(jobs: &[JobReport]) -> Vec<RunGroup> {
    let mut groups: BTreeMap<u32, RunGroup> = BTreeMap::new();
    for job in jobs {
        let id = job.description.groupid;
        let group = groups.entry(id).or_insert_with(|| RunGroup {
            id,
            ..RunGroup::default()
        });
        for (index, dir) in job.stats.directions.iter().enumerate() {
            if has_io(dir) {
                let runtime = dir_runtime(&job.stats, index);
                group.directions[index].add(dir.io_bytes, runtime);
            }
        }
    }
    groups.into_values().collect()
}

/// The group a job belongs to.
pub(crate) fn group_of<'a>(groups: &'a [RunGroup], job: &JobReport) -> Option<&'a RunGroup> {
    groups.iter().find(|g| g.id == job.description.groupid)
}

/// A job's mean bandwidth as a share of its group's aggregate bandwidth (fio's `per=`),
/// capped at 100%.
pub(crate) fn share_of_group(mean_kib: f64, group: Option<&RunGroup>, dir: usize) -> f64 {
    let agg_kib = group.map_or(0.0, |g| g.directions[dir].agg_bw as f64 / 1024.0);
    super::units::percent(mean_kib, agg_kib).min(100.0)
}
