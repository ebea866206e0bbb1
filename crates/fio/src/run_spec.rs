//! What a run of a job file is given besides the job file, whichever driver runs it
//! ([`RunSpec`]): the seed, the policy, the groups given outside the job file and their
//! changes during the run ([`GroupChange`]), the controller, the job limit, the stop signal, where progress is published and where the
//! jobs' log files go. The real-I/O driver's configuration (`ioslice_runner::RunConfig`) is
//! this plus its targets and I/O timeout.

use std::path::PathBuf;

use ioslice_core::ioband::Controller;
use ioslice_core::limit::Limits;
use ioslice_core::{
    build_scheduler, GroupId, GroupTree, Nanos, Progress, SchedSpec, SchedulerContext, StopSignal,
};

use crate::JobFile;

/// A run's description, shared by the drivers.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Seed of the jobs' random streams (the same streams on every driver for the same seed).
    pub seed: u64,
    /// The policy and its tunables.
    pub scheduler: SchedSpec,
    /// Group weights given outside the job file (`--cgroup NAME:weight=N`), applied after it.
    pub group_weights: Vec<(String, u32)>,
    /// Group limits (`--cgroup NAME:rbps=…`, cgroup v2 `io.max`), applied after the weights;
    /// a later entry for the same group replaces an earlier one.
    pub group_limits: Vec<(String, Limits)>,
    /// Changes to the groups during the run, applied at their times, checked before the run
    /// with [`resolve_changes`].
    pub group_changes: Vec<GroupChange>,
    /// Which controller enforces the groups' weights (`--controller`).
    pub controller: Controller,
    /// The most job processes the run may have, every `numjobs` clone counted (fio's
    /// `--max-jobs`; [`crate::plan::DEFAULT_MAX_JOBS`] unless raised).
    pub max_jobs: u32,
    /// Set from outside (SIGINT) to end the run early: every job stops issuing, what is in
    /// flight completes, and the report covers what was done.
    pub stop: StopSignal,
    /// Where to publish the run's progress for a status line, if anyone follows it.
    pub progress: Option<Progress>,
    /// Where the jobs' log files (`write_bw_log=`, …) go: their relative names are taken
    /// from this directory (an empty path is the current directory); `None` writes none.
    pub logs: Option<PathBuf>,
}

impl RunSpec {
    /// A run of `scheduler` with `seed` and every other setting at its default: the job
    /// file's groups only, the elevator's own controller, fio's job limit, no stop asked, no
    /// progress published, no log files.
    pub fn new(seed: u64, scheduler: SchedSpec) -> Self {
        Self {
            seed,
            scheduler,
            group_weights: Vec::new(),
            group_limits: Vec::new(),
            group_changes: Vec::new(),
            controller: Controller::default(),
            max_jobs: crate::plan::DEFAULT_MAX_JOBS,
            stop: StopSignal::new(),
            progress: None,
            logs: None,
        }
    }
}

/// A change to the groups at a time from the start of the run (a job file's
/// `; ioslice-at: 10s cgroup NAME weight=800`): a group's weight and/or limits set, a group
/// made or removed, or a job moved into a group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupChange {
    /// When, from the start of the run.
    pub at: Nanos,
    /// The group's path.
    pub group: String,
    /// What happens to it.
    pub action: GroupAction,
    /// Its new weight, if the change sets one.
    pub weight: Option<u32>,
    /// Its limits from then on (all of them, not only those the change names), if the
    /// change sets any.
    pub limits: Option<Limits>,
    /// Where the change was written (`file:line`), for errors.
    pub origin: String,
}

/// What a [`GroupChange`] does to its group.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GroupAction {
    /// Its weight and/or limits are set, as writing its cgroup files does
    /// (`cgroup NAME SETTINGS`).
    #[default]
    Set,
    /// It is made under its parent, which must exist then, with the weight and limits
    /// given (`cgroup NAME create [SETTINGS]`), as `mkdir` makes a cgroup.
    Create,
    /// It is removed (`cgroup NAME remove`), as `rmdir` removes a cgroup: it must have no
    /// child group and no job still running in it then.
    Remove,
    /// Every process of the job with this name moves into it (`job NAME cgroup=PATH`), as
    /// writing their pids to its `cgroup.procs` does: their next requests are its.
    Move {
        /// The job's name (its section in the job file).
        job: String,
    },
}

/// Whether any of `changes` sets a limit, and whether any sets an io.latency target: a driver
/// puts the layers for them in from the start, as a tree that had them would have them
/// ([`ioslice_core::with_layers_for_changes`]).
pub fn limits_set_by(changes: &[GroupChange]) -> (bool, bool) {
    let mut limits = changes.iter().filter_map(|change| change.limits.as_ref());
    let any = limits.clone().next().is_some();
    (any, limits.any(|l| l.latency.is_some()))
}

/// A [`GroupChange`] checked against the run's groups ([`resolve_changes`]).
#[derive(Debug, Clone)]
pub struct ResolvedChange {
    /// The change as written.
    pub change: GroupChange,
    /// Its group's id in the run's tree (for a group made, the id it is made with).
    pub group: GroupId,
    /// For a move, the index in the job file of the job moved.
    pub job: Option<usize>,
}

/// `changes` in time order (those at one time in the order given), each checked against
/// the run's groups (those of `context` at the start) as the earlier ones leave them: a
/// group made must not exist and its parent must; a group changed, removed or moved into
/// must exist (not the root); a group removed must have no child group left; a weight must
/// be in the tree's range; a job moved must be in `job_file`; after a change that sets a
/// weight or makes a group, the run's `scheduler` must take the tree as it then is. Each
/// error names the change's origin. Whether a removed group still has a job in it is known
/// only when the change is due.
pub fn resolve_changes(
    changes: &[GroupChange],
    scheduler: &SchedSpec,
    context: &SchedulerContext,
    job_file: &JobFile,
) -> Result<Vec<ResolvedChange>, String> {
    let accept = |tree: &GroupTree| {
        let changed = SchedulerContext {
            groups: tree.clone(),
            ..context.clone()
        };
        build_scheduler(scheduler, &changed)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let mut ordered: Vec<&GroupChange> = changes.iter().collect();
    ordered.sort_by_key(|change| change.at);
    let mut tree = context.groups.clone();
    let mut resolved = Vec::with_capacity(ordered.len());
    for change in ordered {
        let fail = |why: String| format!("{}: {why}", change.origin);
        let (group, job) = resolve_one(change, &mut tree, job_file).map_err(fail)?;
        if let Some(weight) = change.weight {
            tree.set_weight(group, weight)
                .map_err(|e| fail(e.to_string()))?;
        }
        if let Some(limits) = change.limits {
            tree.set_limits(group, limits);
        }
        if change.weight.is_some() || change.action == GroupAction::Create {
            accept(&tree).map_err(fail)?;
        }
        resolved.push(ResolvedChange {
            change: change.clone(),
            group,
            job,
        });
    }
    Ok(resolved)
}

/// One change's group (made, for a creation) and moved job, against `tree` as it is then.
fn resolve_one(
    change: &GroupChange,
    tree: &mut GroupTree,
    job_file: &JobFile,
) -> Result<(GroupId, Option<usize>), String> {
    if change.action == GroupAction::Create {
        let group = tree.add(&change.group).map_err(|e| e.to_string())?;
        return Ok((group, None));
    }
    let group = tree
        .find(&change.group)
        .filter(|&id| id != GroupId::ROOT)
        .ok_or_else(|| {
            format!(
                "no group '{}' in the run then (the groups then: {})",
                change.group,
                listed(tree)
            )
        })?;
    match &change.action {
        GroupAction::Set | GroupAction::Create => Ok((group, None)),
        GroupAction::Remove => {
            tree.remove(group).map_err(|e| e.to_string())?;
            Ok((group, None))
        }
        GroupAction::Move { job } => {
            let index = job_file.jobs.iter().position(|spec| &spec.name == job);
            let index = index.ok_or_else(|| {
                let names: Vec<&str> = job_file.jobs.iter().map(|j| j.name.as_str()).collect();
                format!(
                    "no job '{job}' in the job file (its jobs: {})",
                    names.join(", ")
                )
            })?;
            Ok((group, Some(index)))
        }
    }
}

/// The groups of `tree` that exist, by path, for errors: `none` without any but the root.
fn listed(tree: &GroupTree) -> String {
    let paths: Vec<&str> = tree
        .iter()
        .filter(|&(id, _)| id != GroupId::ROOT && !tree.is_removed(id))
        .map(|(_, group)| group.path.as_str())
        .collect();
    if paths.is_empty() {
        "none".to_string()
    } else {
        paths.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(limits: Option<Limits>) -> GroupChange {
        GroupChange {
            group: "g".into(),
            limits,
            ..GroupChange::default()
        }
    }

    #[test]
    fn the_layers_a_runs_changes_need() {
        let rate = Limits {
            read_bps: Some(1 << 20),
            ..Limits::default()
        };
        let target = Limits {
            latency: Some(250_000),
            ..Limits::default()
        };
        assert_eq!(limits_set_by(&[]), (false, false));
        assert_eq!(limits_set_by(&[change(None)]), (false, false));
        assert_eq!(
            limits_set_by(&[change(None), change(Some(rate))]),
            (true, false)
        );
        assert_eq!(
            limits_set_by(&[change(Some(rate)), change(Some(target))]),
            (true, true)
        );
    }
}
