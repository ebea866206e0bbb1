//! A group's weight and limits changed while the engine runs ([`Core::update_group`]): the
//! engine's copy of the groups' settings, checked and handed to the policy with the engine's
//! time, under the engine's lock.

use ioslice_core::limit::Limits;
use ioslice_core::GroupId;

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
        if limits.is_some_and(|l| !l.is_unlimited()) && !self.limit_layer {
            return Err(EngineError::Config(format!(
                "cannot limit group '{}' at run time: no group had a limit when the engine was built, so no limit layer runs (give one a limit on the builder)",
                self.groups.get(group).path
            )));
        }
        let mut next = self.groups.clone();
        if let Some(weight) = weight {
            next.set_weight(group, weight)?;
        }
        if let Some(limits) = limits {
            next.set_limits(group, limits);
        }
        let now = self.now();
        let answer = self.queue.update_group(group, next.get(group), now);
        answer.map_err(|source| EngineError::Scheduler {
            spec: self.queue.policy().name().to_string(),
            source: Box::new(source),
        })?;
        self.groups = next;
        Ok(())
    }
}
