//! The groups changed while the engine runs: a group's weight and limits
//! ([`Core::update_group`]), a group added ([`Core::add_group`]) or removed
//! ([`Core::remove_group`]), as writing the cgroup files, `mkdir` and `rmdir` do. The engine's
//! copy of the groups is checked and changed, and the policy told with the engine's time,
//! under the engine's lock.

use ioslice_core::limit::Limits;
use ioslice_core::{GroupId, GroupTree};

use super::Core;
use crate::error::EngineError;

impl Core {
    /// Set `group`'s weight and/or limits (`None` keeps what it has) at the engine's time
    /// now, and tell the policy. A weight outside the tree's range, one the policy refuses,
    /// or a limit on an engine built without the limit layer, changes nothing.
    pub(crate) fn update_group(
        &mut self,
        group: GroupId,
        weight: Option<u32>,
        limits: Option<Limits>,
    ) -> Result<(), EngineError> {
        let mut next = self.groups.clone();
        self.settle(&mut next, group, weight, limits)?;
        let now = self.now();
        let answer = self.queue.update_group(group, next.get(group), now);
        answer.map_err(|source| self.refused(source))?;
        self.groups = next;
        Ok(())
    }

    /// Add the group at `path` under its parent, with `weight` and `limits` (`None`: the
    /// defaults), and tell the policy. A path already there, a missing parent, a weight
    /// refused, or a limit the engine has no layer for, adds nothing.
    pub(crate) fn add_group(
        &mut self,
        path: &str,
        weight: Option<u32>,
        limits: Option<Limits>,
    ) -> Result<GroupId, EngineError> {
        let mut next = self.groups.clone();
        let group = next.add(path)?;
        self.settle(&mut next, group, weight, limits)?;
        let now = self.now();
        let answer = self.queue.add_group(group, &next, now);
        answer.map_err(|source| self.refused(source))?;
        self.groups = next;
        Ok(group)
    }

    /// Remove `group`, which must have no child groups and no request queued or in flight
    /// (the caller has checked that no client is in it), and tell the policy.
    pub(crate) fn remove_group(&mut self, group: GroupId) -> Result<(), EngineError> {
        let queued = self
            .pending
            .values()
            .filter(|submission| submission.group == group)
            .count();
        let at_device = self
            .dispatched
            .values()
            .filter(|dispatched| dispatched.request.group == group)
            .map(|dispatched| dispatched.request.ids().count())
            .sum::<usize>();
        let pending = queued + at_device;
        if pending > 0 {
            return Err(EngineError::GroupBusy {
                group: self.label(group),
                why: format!("{pending} of its requests are queued or in flight"),
            });
        }
        let mut next = self.groups.clone();
        next.remove(group)?;
        let now = self.now();
        self.queue.remove_group(group, &next, now);
        self.groups = next;
        Ok(())
    }

    /// Put `weight` and `limits` on `group` in `next`, refusing what this engine cannot
    /// enforce: a limit without the limit layer, a latency target without io.latency.
    fn settle(
        &self,
        next: &mut GroupTree,
        group: GroupId,
        weight: Option<u32>,
        limits: Option<Limits>,
    ) -> Result<(), EngineError> {
        if let Some(limits) = limits {
            let path = next.get(group).path.clone();
            if !limits.is_unlimited() && !self.limit_layer {
                return Err(EngineError::Config(format!(
                    "cannot limit group '{path}' at run time: no group had a limit when the engine was built, so no limit layer runs (give one a limit on the builder, or build with limits_later)"
                )));
            }
            if limits.latency.is_some_and(|t| t > 0) && !self.latency_layer {
                return Err(EngineError::Config(format!(
                    "cannot give group '{path}' a latency target at run time: no group had one when the engine was built, so io.latency does not run (give one a target on the builder, or build with limits_later)"
                )));
            }
            next.set_limits(group, limits);
        }
        if let Some(weight) = weight {
            next.set_weight(group, weight)?;
        }
        Ok(())
    }

    /// The policy's refusal, as the engine reports it.
    fn refused(&self, source: ioslice_core::TunableError) -> EngineError {
        EngineError::Scheduler {
            spec: self.queue.policy().name().to_string(),
            source: Box::new(source),
        }
    }

    /// How errors name a group: its path from the root, `/a/b`.
    fn label(&self, group: GroupId) -> String {
        format!("/{}", self.groups.get(group).path)
    }
}
