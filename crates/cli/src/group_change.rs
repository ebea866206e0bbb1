//! `; ioslice-at: TIME cgroup NAME SETTINGS`: a change to a group's weight and limits at a
//! simulated time, written in a job file's comments ([`crate::scenario`]). `TIME` is a
//! duration with a unit from the start of the run (`10s`, `2500ms`); `SETTINGS` are those of
//! `--cgroup` ([`crate::cgroup_arg`]): `weight=W`, `rbps=`, `wbps=`, `riops=`, `wiops=`,
//! `burst=`, `throttle=`, separated by commas or spaces. As a write to `io.max` does, a change
//! sets only the limits it names; the group keeps the others (from `--cgroup` or an earlier
//! change).

use ioslice_core::limit::Limits;
use ioslice_core::spec::{parse_duration, DURATION_UNITS};
use ioslice_core::Nanos;
use ioslice_fio::JobFile;
use ioslice_sim::simulation::GroupChange;

use crate::cgroup_arg::{self, CgroupArg};

/// What the directive expects, for errors.
const EXPECTED: &str = "expected 'TIME cgroup NAME SETTINGS', e.g. '10s cgroup grp1 weight=800' or '5s cgroup grp1 rbps=8M,wbps=max'";

/// One directive as written: when, what, and where (`file:line`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledChange {
    /// From the start of the run.
    pub at: Nanos,
    /// The group and the settings it changes.
    pub change: CgroupArg,
    /// `file:line` of the directive.
    pub origin: String,
}

/// Read the directive's value (what follows `ioslice-at:`), written at `origin`.
pub fn parse(value: &str, origin: &str) -> Result<ScheduledChange, String> {
    let mut words = value.split_whitespace();
    let (Some(time), Some(kind)) = (words.next(), words.next()) else {
        return Err(EXPECTED.to_string());
    };
    let at = parse_duration(time, None).ok_or_else(|| {
        format!(
            "time '{time}': expected a duration with a unit: {DURATION_UNITS} (e.g. 10s, 2500ms)"
        )
    })?;
    if kind != "cgroup" {
        return Err(format!("'{kind}': {EXPECTED}"));
    }
    let rest: Vec<&str> = words.collect();
    if rest.len() < 2 {
        return Err(EXPECTED.to_string());
    }
    let change = cgroup_arg::parse_value(&rest.join(" "))?;
    Ok(ScheduledChange {
        at,
        change,
        origin: origin.to_string(),
    })
}

/// The changes for the simulator: each group checked against the job file's cgroups, and
/// limits made whole by carrying forward those the group had (from `initial`, the
/// `--cgroup` limits, then the earlier changes in time order).
pub fn sim_changes(
    changes: &[ScheduledChange],
    initial: &[(String, Limits)],
    job_file: &JobFile,
) -> Result<Vec<GroupChange>, String> {
    let named = cgroup_arg::job_cgroups(job_file);
    let mut limits: Vec<(String, Limits)> = initial.to_vec();
    let mut ordered: Vec<&ScheduledChange> = changes.iter().collect();
    ordered.sort_by_key(|c| c.at);
    let mut out = Vec::with_capacity(ordered.len());
    for scheduled in ordered {
        let path = &scheduled.change.path;
        let known = named
            .iter()
            .any(|g| g == path || g.starts_with(&format!("{path}/")));
        if !known {
            return Err(format!(
                "{}: ioslice-at: no job is in cgroup '{path}' or below it (the job file's cgroups: {})",
                scheduled.origin,
                if named.is_empty() { "none".to_string() } else { named.join(", ") }
            ));
        }
        let whole = if scheduled.change.limits.is_empty() {
            None
        } else {
            let index = match limits.iter().position(|(p, _)| p == path) {
                Some(index) => index,
                None => {
                    limits.push((path.clone(), Limits::default()));
                    limits.len() - 1
                }
            };
            for setting in &scheduled.change.limits {
                setting.apply(&mut limits[index].1);
            }
            Some(limits[index].1)
        };
        out.push(GroupChange {
            at: scheduled.at,
            group: path.clone(),
            weight: scheduled.change.weight,
            limits: whole,
            origin: scheduled.origin.clone(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directive_reads_time_group_and_settings() {
        let change = parse("10s cgroup grp1 weight=800", "j.fio:3").expect("valid");
        assert_eq!(change.at, 10_000_000_000);
        assert_eq!(change.change.path, "grp1");
        assert_eq!(change.change.weight, Some(800));
        let limits = parse("2500ms cgroup a/b rbps=8M,wiops=max", "j.fio:4").expect("valid");
        assert_eq!(limits.at, 2_500_000_000);
        assert_eq!(limits.change.path, "a/b");
        assert_eq!(limits.change.limits.len(), 2);
    }

    #[test]
    fn bad_directives_say_what_is_expected() {
        for (bad, says) in [
            ("10s", "expected 'TIME cgroup NAME SETTINGS'"),
            ("ten cgroup g weight=8", "time 'ten': expected a duration"),
            ("10 cgroup g weight=8", "time '10': expected a duration"),
            ("10s group g weight=8", "'group': expected"),
            ("10s cgroup g", "expected 'TIME cgroup NAME SETTINGS'"),
            (
                "10s cgroup g weight=0",
                "weight '0' is not an integer in 1..=10000",
            ),
            ("10s cgroup g speed=3", "unknown setting 'speed'"),
        ] {
            let error = parse(bad, "j.fio:1").expect_err(bad);
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
