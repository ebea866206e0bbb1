//! `; ioslice-at: TIME …`: a change to the groups at a time from the start of the run (on
//! the simulator's clock, or the real one on a real `--device`), written in a job file's
//! comments ([`crate::scenario`]). `TIME` is a duration with a unit (`10s`, `2500ms`). What
//! follows is one of:
//!
//! - `cgroup NAME SETTINGS`: the group's weight and limits, in `--cgroup`'s settings
//!   ([`crate::cgroup_arg`]): `weight=W`, `rbps=`, `wbps=`, `riops=`, `wiops=`, `burst=`,
//!   `throttle=`, `latency=`, separated by commas or spaces. As a write to `io.max` does, a
//!   change sets only the limits it names; the group keeps the others (from `--cgroup` or an
//!   earlier change).
//! - `cgroup NAME create [SETTINGS]`: the group is made under its parent, as `mkdir` makes
//!   a cgroup, with those settings.
//! - `cgroup NAME remove`: the group is removed, as `rmdir` removes a cgroup; it must have
//!   no child group then, and no job still running in it (the run stops with an error
//!   naming the job if one is).
//! - `job NAME cgroup=PATH`: every process of the job moves into the group, as writing
//!   their pids to its `cgroup.procs` does.

use ioslice_core::limit::Limits;
use ioslice_core::spec::{parse_duration, DURATION_UNITS};
use ioslice_core::Nanos;
use ioslice_sim::simulation::{GroupAction, GroupChange};

use crate::cgroup_arg::{self, CgroupArg};

/// What the directive expects, for errors.
const EXPECTED: &str = "expected 'TIME cgroup NAME SETTINGS', 'TIME cgroup NAME create [SETTINGS]', 'TIME cgroup NAME remove' or 'TIME job NAME cgroup=PATH', e.g. '10s cgroup grp1 weight=800'";

/// One directive as written: when, what, and where (`file:line`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledChange {
    /// From the start of the run.
    pub at: Nanos,
    /// The group and the settings it is given (none for a removal or a move).
    pub change: CgroupArg,
    /// What happens to the group.
    pub action: GroupAction,
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
    let rest: Vec<&str> = words.collect();
    let (change, action) = match kind {
        "cgroup" => cgroup_change(&rest)?,
        "job" => job_move(&rest)?,
        _ => return Err(format!("'{kind}': {EXPECTED}")),
    };
    Ok(ScheduledChange {
        at,
        change,
        action,
        origin: origin.to_string(),
    })
}

/// `NAME SETTINGS`, `NAME create [SETTINGS]` or `NAME remove`.
fn cgroup_change(words: &[&str]) -> Result<(CgroupArg, GroupAction), String> {
    let bare = |name: &str| -> Result<CgroupArg, String> {
        Ok(CgroupArg {
            path: cgroup_arg::parse_name(name)?,
            weight: None,
            limits: Vec::new(),
        })
    };
    match words {
        [] | [_] => Err(EXPECTED.to_string()),
        [name, "remove"] => Ok((bare(name)?, GroupAction::Remove)),
        [name, "remove", ..] => Err(format!("'{name} remove' takes no settings: {EXPECTED}")),
        [name, "create"] => Ok((bare(name)?, GroupAction::Create)),
        [name, "create", settings @ ..] => Ok((
            cgroup_arg::parse_value(&format!("{name} {}", settings.join(" ")))?,
            GroupAction::Create,
        )),
        _ => Ok((cgroup_arg::parse_value(&words.join(" "))?, GroupAction::Set)),
    }
}

/// `NAME cgroup=PATH`.
fn job_move(words: &[&str]) -> Result<(CgroupArg, GroupAction), String> {
    let [job, target] = words else {
        return Err(EXPECTED.to_string());
    };
    let path = target
        .strip_prefix("cgroup=")
        .ok_or_else(|| format!("'{target}': {EXPECTED}"))?;
    let change = CgroupArg {
        path: cgroup_arg::parse_name(path)?,
        weight: None,
        limits: Vec::new(),
    };
    let job = job.to_string();
    Ok((change, GroupAction::Move { job }))
}

/// The changes for either driver, in time order, their limits made whole by carrying
/// forward those the group had (from `initial`, the `--cgroup` limits, then the earlier
/// changes). The driver checks them against its groups before the run
/// ([`ioslice_fio::run_spec::resolve_changes`]: a group changed must exist then, a group made
/// must not, …) and names the directive's line in its errors.
pub fn run_changes(changes: &[ScheduledChange], initial: &[(String, Limits)]) -> Vec<GroupChange> {
    let mut limits: Vec<(String, Limits)> = initial.to_vec();
    let mut ordered: Vec<&ScheduledChange> = changes.iter().collect();
    ordered.sort_by_key(|c| c.at);
    let mut out = Vec::with_capacity(ordered.len());
    for scheduled in ordered {
        let path = &scheduled.change.path;
        if scheduled.action == GroupAction::Remove {
            limits.retain(|(p, _)| p != path);
        }
        let whole = whole_limits(&mut limits, &scheduled.change, &scheduled.action);
        out.push(GroupChange {
            at: scheduled.at,
            group: path.clone(),
            action: scheduled.action.clone(),
            weight: scheduled.change.weight,
            limits: whole,
            origin: scheduled.origin.clone(),
        });
    }
    out
}

/// The group's limits after the change, if it sets any: those it had, with the change's.
fn whole_limits(
    limits: &mut Vec<(String, Limits)>,
    change: &CgroupArg,
    action: &GroupAction,
) -> Option<Limits> {
    if change.limits.is_empty() {
        return None;
    }
    let path = &change.path;
    let index = match limits.iter().position(|(p, _)| p == path) {
        Some(index) if *action != GroupAction::Create => index,
        Some(index) => {
            limits[index].1 = Limits::default();
            index
        }
        None => {
            limits.push((path.clone(), Limits::default()));
            limits.len() - 1
        }
    };
    for setting in &change.limits {
        setting.apply(&mut limits[index].1);
    }
    Some(limits[index].1)
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
    fn groups_made_removed_and_jobs_moved() {
        let create =
            parse("5s cgroup tenants/b create weight=300,rbps=8M", "j.fio:2").expect("valid");
        assert_eq!(create.action, GroupAction::Create);
        assert_eq!(create.change.path, "tenants/b");
        assert_eq!(create.change.weight, Some(300));
        assert_eq!(create.change.limits.len(), 1);
        let bare = parse("5s cgroup b create", "j.fio:3").expect("valid");
        assert_eq!(
            (bare.action, bare.change.weight),
            (GroupAction::Create, None)
        );
        let remove = parse("20s cgroup /b/ remove", "j.fio:4").expect("valid");
        assert_eq!(
            (remove.action, remove.change.path.as_str()),
            (GroupAction::Remove, "b")
        );
        let moved = parse("6s job reader cgroup=tenants/b", "j.fio:5").expect("valid");
        assert_eq!(
            moved.action,
            GroupAction::Move {
                job: "reader".into()
            }
        );
        assert_eq!(moved.change.path, "tenants/b");
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
            (
                "10s cgroup g remove weight=3",
                "'g remove' takes no settings",
            ),
            ("10s job reader", "expected 'TIME cgroup NAME SETTINGS'"),
            ("10s job reader group=b", "'group=b': expected"),
            ("10s job reader cgroup=a//b", "invalid group name 'a//b'"),
        ] {
            let error = parse(bad, "j.fio:1").expect_err(bad);
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
