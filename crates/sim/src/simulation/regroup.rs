//! Changes to the groups at scheduled simulated times
//! ([`SimConfig::group_changes`](crate::simulation::SimConfig::group_changes), the job file's
//! `; ioslice-at:` directives): a group's weight and limits set, a group made or removed, a
//! job's processes moved into a group. Checked before the run against the tree as the
//! earlier changes leave it (the group exists, or for a new one its parent does and it does
//! not; a removed one has no child group; the tree and the policy accept the weight; a moved
//! job exists), then handed to the policy ([`Scheduler::update_group`],
//! [`Scheduler::add_group`], [`Scheduler::remove_group`]) when their time comes, before the
//! events due at that instant. Whether a removed group still has a job running in it is
//! known only then: the run stops with an error naming the job, as `rmdir` says `EBUSY`. A
//! change due after everything else has finished does not prolong the run.

use std::collections::VecDeque;

use ioslice_core::{Nanos, SchedulerContext};
use ioslice_fio::report::CgroupSettings;
use ioslice_fio::run_spec::{resolve_changes, ResolvedChange};
use ioslice_fio::JobFile;

use super::{Lifecycle, SimConfig, SimError, Simulation};
use crate::config::{GroupAction, GroupChange};

/// A change resolved against the run's groups, at its absolute simulated time.
#[derive(Debug, Clone)]
pub(super) struct DueChange {
    at: Nanos,
    resolved: ResolvedChange,
}

/// The run's changes in time order (those at one time in the order given), each at
/// `epoch + at`, checked before the run ([`resolve_changes`]): a group that does not exist
/// then, a weight outside the tree's range or one the policy refuses, a job not in the job
/// file, is an error naming the change.
pub(super) fn resolve(
    changes: &[GroupChange],
    context: &SchedulerContext,
    config: &SimConfig,
    job_file: &JobFile,
    epoch: Nanos,
) -> Result<VecDeque<DueChange>, SimError> {
    let resolved = resolve_changes(changes, &config.run.scheduler, context, job_file)
        .map_err(SimError::Job)?;
    Ok(resolved
        .into_iter()
        .map(|resolved| DueChange {
            at: epoch.saturating_add(resolved.change.at),
            resolved,
        })
        .collect())
}

impl Simulation<'_> {
    /// When the next change is due, if anything else is still to happen.
    pub(super) fn next_change(&self) -> Option<Nanos> {
        self.group_changes.front().map(|change| change.at)
    }

    /// Apply every change due by now; whether there was one.
    pub(super) fn apply_due_changes(&mut self) -> bool {
        let mut applied = false;
        while let Some(change) = self
            .group_changes
            .front()
            .filter(|change| change.at <= self.now)
            .cloned()
        {
            self.group_changes.pop_front();
            applied = true;
            if let Err(error) = self.apply(&change) {
                self.failure = Some(error);
                break;
            }
        }
        applied
    }

    /// One change, checked before the run but for a removal's jobs.
    fn apply(&mut self, due: &DueChange) -> Result<(), SimError> {
        let ResolvedChange { change, group, job } = &due.resolved;
        let group = *group;
        match (&change.action, job) {
            (GroupAction::Remove, _) => return self.remove_group(due),
            (GroupAction::Move { .. }, &Some(job)) => {
                let path = self.groups.get(group).path.clone();
                let now = self.now;
                for process in &mut self.processes {
                    if process.spec_index == job && process.lifecycle != Lifecycle::Done {
                        process.group = group;
                        let ramp_end = process.clock.as_ref().map_or(now, |c| c.ramp_end());
                        process.stats.moved_to(&path, now.saturating_sub(ramp_end));
                    }
                }
                return Ok(());
            }
            (GroupAction::Create, _) => {
                // Checked before the run: made with the same id.
                let _ = self.groups.add(&change.group);
            }
            _ => {}
        }
        if let Some(weight) = change.weight {
            // Checked before the run: the tree takes it.
            let _ = self.groups.set_weight(group, weight);
        }
        if let Some(limits) = change.limits {
            self.groups.set_limits(group, limits);
        }
        if change.action == GroupAction::Create {
            // Checked before the run: the policy takes it.
            let _ = self.queue.add_group(group, &self.groups, self.now);
            let settings =
                CgroupSettings::of_run(&self.groups, |id| self.queue.policy().group_weight(id));
            self.cgroups
                .extend(settings.into_iter().skip(self.cgroups.len()));
        } else {
            let settings = self.groups.get(group).clone();
            // Checked before the run: the policy takes it.
            let _ = self.queue.update_group(group, &settings, self.now);
        }
        Ok(())
    }

    /// Remove a group, unless a job still runs in it or has I/O in flight there.
    fn remove_group(&mut self, due: &DueChange) -> Result<(), SimError> {
        let ResolvedChange { change, group, .. } = &due.resolved;
        let group = *group;
        let busy = self.processes.iter().find(|process| {
            process.group == group
                && (process.lifecycle != Lifecycle::Done
                    || self.pending.values().any(|io| io.process == process.pid.0))
        });
        if let Some(process) = busy {
            let job = &self.job_file.jobs[process.spec_index].name;
            return Err(SimError::Job(format!(
                "{}: cgroup '{}' is busy at {} ms: job '{job}' still runs in it (remove it after the job ends, or move the job out first)",
                change.origin,
                self.groups.get(group).path,
                (self.now - self.epoch) / 1_000_000
            )));
        }
        // Checked before the run: no child group is left.
        let _ = self.groups.remove(group);
        self.queue.remove_group(group, &self.groups, self.now);
        Ok(())
    }
}
