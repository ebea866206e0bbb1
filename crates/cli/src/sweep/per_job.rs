//! The sweep page's per-job figures: each job's bandwidth over the first axis, and, when
//! the jobs name cgroups, each cgroup's share of the bandwidth, so that a sweep over weights
//! shows how the groups divide the device across the axis. A line per job (cgroup) and per
//! value of the other axes; each value is the mean over seeds, with the min–max spread.

use std::fmt::Write;

use ioslice_report::charts::sweep::{lines, SweepLine};

use super::figures::PointResult;
use super::view::View;

/// The root cgroup's name on the page, for jobs in no group beside jobs in groups.
const ROOT: &str = "/";

/// Job names in the order the first point that has each lists them.
fn job_names(points: &[PointResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for job in points.iter().flat_map(|p| &p.jobs) {
        if !names.contains(&job.name) {
            names.push(job.name.clone());
        }
    }
    names
}

/// The cgroups in order of first appearance (the root as `/`); none when no job names one.
fn groups(points: &[PointResult]) -> Vec<String> {
    if points
        .iter()
        .flat_map(|p| &p.jobs)
        .all(|j| j.cgroup.is_empty())
    {
        return Vec::new();
    }
    let mut groups: Vec<String> = Vec::new();
    for job in points.iter().flat_map(|p| &p.jobs) {
        let group = group_of(&job.cgroup);
        if !groups.iter().any(|g| g == group) {
            groups.push(group.to_string());
        }
    }
    groups
}

fn group_of(cgroup: &str) -> &str {
    if cgroup.is_empty() {
        ROOT
    } else {
        cgroup
    }
}

/// Job `name`'s bandwidth at `point`, MiB/s (all its clones' when `numjobs` repeats it).
pub fn job_mib_s(point: &PointResult, name: &str) -> Option<f64> {
    let jobs: Vec<u64> = point
        .jobs
        .iter()
        .filter(|j| j.name == name)
        .map(|j| j.bw_bytes)
        .collect();
    (!jobs.is_empty()).then(|| jobs.iter().sum::<u64>() as f64 / 1_048_576.0)
}

/// Cgroup `group`'s share of the point's bandwidth, percent; `None` when nothing moved.
pub fn group_share(point: &PointResult, group: &str) -> Option<f64> {
    let total: u64 = point.jobs.iter().map(|j| j.bw_bytes).sum();
    let mine: u64 = point
        .jobs
        .iter()
        .filter(|j| group_of(&j.cgroup) == group)
        .map(|j| j.bw_bytes)
        .sum();
    (total > 0).then(|| mine as f64 * 100.0 / total as f64)
}

/// A line per entry of `names` and per combination of the axes after the first.
fn per_name(
    view: &View,
    names: &[String],
    value: impl Fn(&PointResult, &str) -> Option<f64>,
) -> Vec<SweepLine> {
    let (_, x_values, _) = view.x();
    let rest = view.combinations(1);
    rest.iter()
        .flat_map(|others| {
            names.iter().map(|name| SweepLine {
                name: if others.is_empty() {
                    name.clone()
                } else {
                    format!("{name}, {}", view.name(1, others))
                },
                values: x_values
                    .iter()
                    .map(|x| view.spread(&view.at(x, others), |p| value(p, name)))
                    .collect(),
            })
        })
        .collect()
}

/// The lines of each job's bandwidth.
pub fn job_lines(view: &View, points: &[PointResult]) -> Vec<SweepLine> {
    per_name(view, &job_names(points), job_mib_s)
}

/// The lines of each cgroup's share; none without cgroups.
pub fn group_lines(view: &View, points: &[PointResult]) -> Vec<SweepLine> {
    let lines = per_name(view, &groups(points), group_share);
    lines
        .into_iter()
        .map(|line| SweepLine {
            name: format!("cgroup {}", line.name),
            ..line
        })
        .collect()
}

/// The section: per-job bandwidth, and per-cgroup shares when there are cgroups.
pub fn section(view: &View, points: &[PointResult]) -> String {
    let mut out = String::new();
    let (x_name, _, x_labels) = view.x();
    let jobs = job_lines(view, points);
    if jobs.is_empty() {
        return out;
    }
    let _ = writeln!(out, "<h2>Bandwidth per job (MiB/s)</h2>");
    out.push_str(&lines("Bandwidth per job", "MiB/s", x_name, &x_labels, &jobs).figure());
    let groups = group_lines(view, points);
    if !groups.is_empty() {
        let _ = writeln!(
            out,
            "<h2>Share of bandwidth per cgroup (%)</h2>\n<p class=\"note\">Each cgroup's bytes per second as a share of all the jobs' at the point, the mean over seeds.</p>"
        );
        out.push_str(
            &lines(
                "Share of bandwidth per cgroup",
                "% of the bandwidth",
                x_name,
                &x_labels,
                &groups,
            )
            .figure(),
        );
    }
    out
}
