//! Per-cgroup totals: what the jobs of each cgroup (`cgroup=`) did together.
//!
//! fio has no such block; ioslice adds one to the normal output (after the job blocks)
//! and a top-level `"cgroups"` array to the JSON (after fio's own keys, which stay as
//! they are). Totals appear whenever any job names a cgroup, even a cgroup of one job:
//! a user who names cgroups is comparing them. Jobs that name none are in the root
//! cgroup, shown as `/`, so that the totals add up to the whole run.
//!
//! A cgroup's totals are those of the jobs placed directly in it (a job in `a/b` counts
//! for `a/b`, not for `a`); a job moved between cgroups during the run counts in each for
//! the stretch of its run it spent there, over that stretch's length. Per direction, the
//! bandwidth and IOPS are the cgroup's bytes and I/Os over its longest runtime, as fio's
//! `Run status group` aggregate computes them.
//! Totals are taken over the report's entries before `group_reporting` folds them, so a
//! reporting group that spans cgroups is still split correctly.
//!
//! Each cgroup carries the weight and limits the run gave it ([`RunReport::cgroups`]). A
//! cgroup that holds no job itself but was given a weight or a limit (a parent whose limit
//! its children share) follows the others, with no I/O of its own, so that every setting
//! of the run is shown.
//!
//! [`RunReport::cgroups`]: crate::report::RunReport::cgroups

use super::metrics::{has_io, per_second, per_second_f};
use crate::report::{CgroupSettings, JobReport};

/// How the root cgroup (jobs without `cgroup=`) is named in the output.
pub(crate) const ROOT_NAME: &str = "/";

/// One direction of a cgroup's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CgroupDirection {
    /// Bytes moved by the cgroup's jobs.
    pub io_bytes: u64,
    /// I/Os completed by them.
    pub total_ios: u64,
    /// Longest runtime among the jobs that did I/O this way, ns.
    pub runtime: u64,
}

impl CgroupDirection {
    /// Bandwidth in bytes/s: all bytes over the longest runtime.
    pub fn bw_bytes(&self) -> u64 {
        per_second(self.io_bytes, self.runtime)
    }

    /// Whole I/Os per second.
    pub fn iops(&self) -> u64 {
        per_second(self.total_ios, self.runtime)
    }

    /// I/Os per second, as fio's JSON float.
    pub fn iops_f(&self) -> f64 {
        per_second_f(self.total_ios, self.runtime)
    }

    /// Whether the cgroup did any I/O this way.
    pub fn has_io(&self) -> bool {
        self.io_bytes > 0 || self.total_ios > 0
    }
}

/// The totals of one cgroup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CgroupTotals {
    /// Path (`a/b`), or [`ROOT_NAME`].
    pub name: String,
    /// The weight and limits the run gave it; the default (no weight, no limit) for the
    /// root and for a report that does not say.
    pub settings: CgroupSettings,
    /// Processes in it.
    pub jobs: u32,
    /// [read, write, trim].
    pub directions: [CgroupDirection; 3],
}

/// Totals per cgroup in order of first appearance among `jobs`, then the cgroups of
/// `settings` with a weight or limit set and no job of their own; empty when no job names
/// a cgroup. `settings` are the run's cgroups by path (`a/b`).
pub(crate) fn cgroup_totals(jobs: &[JobReport], settings: &[CgroupSettings]) -> Vec<CgroupTotals> {
    if jobs.iter().all(|job| cgroup_path(job).is_empty()) {
        return Vec::new();
    }
    let mut totals: Vec<CgroupTotals> = Vec::new();
    for job in jobs {
        for stretch in stretches(job) {
            let name = if stretch.path.is_empty() {
                ROOT_NAME
            } else {
                stretch.path
            };
            let index = match totals.iter().position(|t| t.name == name) {
                Some(index) => index,
                None => {
                    totals.push(CgroupTotals {
                        name: name.to_string(),
                        settings: settings_of(stretch.path, settings),
                        ..CgroupTotals::default()
                    });
                    totals.len() - 1
                }
            };
            add_stretch(&mut totals[index], job, &stretch);
        }
    }
    for group in settings.iter().filter(|g| g.is_configured()) {
        if !totals.iter().any(|t| t.name == group.path) {
            totals.push(CgroupTotals {
                name: group.path.clone(),
                settings: group.clone(),
                ..CgroupTotals::default()
            });
        }
    }
    totals
}

/// A job's cgroup path without surrounding slashes; empty for the root.
fn cgroup_path(job: &JobReport) -> &str {
    job.description.cgroup.trim_matches('/')
}

/// What the run gave the cgroup at `path`; nothing for the root or an unknown path.
fn settings_of(path: &str, settings: &[CgroupSettings]) -> CgroupSettings {
    settings
        .iter()
        .find(|group| !path.is_empty() && group.path.trim_matches('/') == path)
        .cloned()
        .unwrap_or_default()
}

/// A stretch of a job's run in one cgroup: the whole run for a job never moved, else from
/// its start (or a move) to its next move (or its end).
struct Stretch<'a> {
    path: &'a str,
    /// How long it lasted, on the job's runtime clock.
    runtime: u64,
    /// I/Os and bytes per direction done in it.
    ios: [u64; 3],
    bytes: [u64; 3],
    /// The job's first stretch in this cgroup (the job counts once per cgroup).
    first_here: bool,
}

/// The job's stretches, one per cgroup it was in between moves ([`JobStats::moves`]).
///
/// [`JobStats::moves`]: crate::stats::JobStats::moves
fn stretches(job: &JobReport) -> Vec<Stretch<'_>> {
    let stats = &job.stats;
    let end = (
        stats.runtime,
        stats.directions.each_ref().map(|d| d.total_ios),
        stats.directions.each_ref().map(|d| d.io_bytes),
    );
    let mut marks = vec![(cgroup_path(job), 0, [0; 3], [0; 3])];
    marks.extend(
        stats
            .moves
            .iter()
            .map(|m| (m.group.trim_matches('/'), m.at, m.ios, m.bytes)),
    );
    let mut out: Vec<Stretch<'_>> = Vec::with_capacity(marks.len());
    for (i, &(path, at, ios, bytes)) in marks.iter().enumerate() {
        let (until, ios_then, bytes_then) = marks
            .get(i + 1)
            .map_or(end, |&(_, next_at, next_ios, next_bytes)| {
                (next_at, next_ios, next_bytes)
            });
        let first_here = !out.iter().any(|s| s.path == path);
        out.push(Stretch {
            path,
            runtime: until.saturating_sub(at),
            ios: std::array::from_fn(|d| ios_then[d].saturating_sub(ios[d])),
            bytes: std::array::from_fn(|d| bytes_then[d].saturating_sub(bytes[d])),
            first_here,
        });
    }
    out
}

/// Add a job's stretch to its cgroup's totals, in the directions the job did I/O in; a
/// direction it did I/O in during the stretch counts the stretch's length (for a job never
/// moved, its runtime).
fn add_stretch(totals: &mut CgroupTotals, job: &JobReport, stretch: &Stretch<'_>) {
    if stretch.first_here {
        totals.jobs += job.description.jobs.max(1);
    }
    for (index, dir) in job.stats.directions.iter().enumerate() {
        if !has_io(dir) {
            continue;
        }
        let sum = &mut totals.directions[index];
        sum.io_bytes += stretch.bytes[index];
        sum.total_ios += stretch.ios[index];
        if stretch.ios[index] > 0 || stretch.bytes[index] > 0 {
            sum.runtime = sum.runtime.max(stretch.runtime);
        }
    }
}
