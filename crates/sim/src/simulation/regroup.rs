//! Changes to groups' weights and limits at scheduled simulated times
//! ([`SimConfig::group_changes`](crate::simulation::SimConfig::group_changes), the job file's
//! `; ioslice-at:` directives): checked before the run (the group exists, the tree and the
//! policy accept the weight), then handed to the policy
//! ([`Scheduler::update_group`](ioslice_core::Scheduler::update_group)) when their time
//! comes, before the events due at that instant. A change due after everything else has
//! finished does not prolong the run.

use std::collections::VecDeque;

use ioslice_core::iolatency::{self, IolatencyLayer};
use ioslice_core::limit::{LimitLayer, Limits};
use ioslice_core::{build_scheduler, GroupId, Nanos, Scheduler, SchedulerContext};

use super::{SimConfig, SimError, Simulation};
use crate::config::GroupChange;

/// A change resolved against the run's groups, at its absolute simulated time.
#[derive(Debug, Clone)]
pub(super) struct DueChange {
    at: Nanos,
    group: GroupId,
    weight: Option<u32>,
    limits: Option<Limits>,
}

/// The run's changes in time order (those at one time in the order given), each at
/// `epoch + at`: an unknown group, a weight outside the tree's range or one the policy
/// refuses is an error naming the change.
pub(super) fn resolve(
    changes: &[GroupChange],
    context: &SchedulerContext,
    config: &SimConfig,
    epoch: Nanos,
) -> Result<VecDeque<DueChange>, SimError> {
    let mut ordered: Vec<&GroupChange> = changes.iter().collect();
    ordered.sort_by_key(|change| change.at);
    let mut tree = context.groups.clone();
    let mut due = VecDeque::with_capacity(ordered.len());
    for change in ordered {
        let fail = |why: String| SimError::Job(format!("{}: {why}", change.origin));
        let group = tree
            .find(&change.group)
            .filter(|&id| id != GroupId::ROOT)
            .ok_or_else(|| fail(format!("no group '{}' in the run", change.group)))?;
        if let Some(weight) = change.weight {
            tree.set_weight(group, weight)
                .map_err(|e| fail(e.to_string()))?;
            let changed = SchedulerContext {
                groups: tree.clone(),
                ..context.clone()
            };
            build_scheduler(&config.run.scheduler, &changed).map_err(|e| fail(e.to_string()))?;
        }
        if let Some(limits) = change.limits {
            tree.set_limits(group, limits);
        }
        due.push_back(DueChange {
            at: epoch.saturating_add(change.at),
            group,
            weight: change.weight,
            limits: change.limits,
        });
    }
    Ok(due)
}

/// The policy the run uses: under the limit layer as well when a change sets a limit and
/// no group had one at the start, and under io.latency when a change sets a latency target
/// and no group had one (the registry adds each layer only for a tree that calls for it).
/// Added afterwards, io.latency is outside the limit layer rather than inside it: it sees
/// requests as the limit layer releases them, which changes when a held request is timed
/// from, not what it throttles.
pub(super) fn with_limit_layer(
    scheduler: Box<dyn Scheduler>,
    context: &SchedulerContext,
    changes: &VecDeque<DueChange>,
) -> Box<dyn Scheduler> {
    let groups = &context.groups;
    let sets =
        |what: fn(&Limits) -> bool| changes.iter().any(|c| c.limits.as_ref().is_some_and(what));
    let mut scheduler = scheduler;
    if !groups.has_limits() && sets(|_| true) {
        scheduler = Box::new(LimitLayer::new(scheduler, groups));
    }
    if !iolatency::has_targets(groups) && sets(|l| l.latency.is_some()) {
        scheduler = Box::new(IolatencyLayer::new(scheduler, context));
    }
    scheduler
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
            if let Some(weight) = change.weight {
                // Checked before the run: the tree takes it.
                let _ = self.groups.set_weight(change.group, weight);
            }
            if let Some(limits) = change.limits {
                self.groups.set_limits(change.group, limits);
            }
            let settings = self.groups.get(change.group).clone();
            // Checked before the run: the policy takes it.
            let _ = self.queue.update_group(change.group, &settings, self.now);
            applied = true;
        }
        applied
    }
}
