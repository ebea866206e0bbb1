//! Tenants that come and go: groups added and removed while the engine runs, as `mkdir` and
//! `rmdir` make and remove cgroups, and clients moved to another group, as writing a pid to a
//! cgroup's `cgroup.procs` moves a task. Removing a group with a client in it is an error, as
//! `rmdir` of a cgroup with tasks says `EBUSY` (the count is the `members` module's).
//!
//! Touched by any thread holding a [`Handle`] or a [`Client`]: the member counts behind their
//! own small lock, taken before the engine's (never after it), and the groups themselves
//! under the engine's lock (the dispatcher core's copy of the tree).

use ioslice_core::limit::Limits;
use ioslice_core::GroupId;

use crate::error::EngineError;
use crate::handle::{Client, Handle};

impl Handle {
    /// Add a group at path `group` (`a/b`: its parent `a` must exist) while requests are in
    /// flight, as `mkdir` makes a cgroup, with `weight` and `limits` (`None`: the defaults).
    /// Clients can then be made in it ([`Handle::client`]) or moved to it
    /// ([`Client::moved_to`]). The policy makes room for it as its kernel counterpart does
    /// ([`Scheduler::add_group`](ioslice_core::Scheduler::add_group)). A path already there,
    /// a missing parent, a bad name, a weight outside 1..=10000 or one the policy refuses
    /// (BFQ takes 1..=1000), and limits or a latency target the engine has no layer for (no
    /// group had one when it was built), are errors and add nothing.
    pub fn add_group(
        &self,
        group: &str,
        weight: Option<u32>,
        limits: Option<Limits>,
    ) -> Result<(), EngineError> {
        self.shared.add_group(group, weight, limits).map(|_| ())
    }

    /// Remove the group at path `group`, as `rmdir` removes a cgroup: it must have no child
    /// groups, no live [`Client`] (drop them, or move them first), and no request of it
    /// queued or in flight; else an error says which, and nothing changes. Its statistics
    /// stay in [`Handle::stats`] under its path. A group added later at the same path is a
    /// new group.
    pub fn remove_group(&self, group: &str) -> Result<(), EngineError> {
        let members = self.shared.members.lock();
        let id = self.group_id(group)?;
        let clients = members.get(id.index()).copied().unwrap_or(0);
        if id != GroupId::ROOT && clients > 0 {
            return Err(EngineError::GroupBusy {
                group: format!("/{}", group.trim_matches('/')),
                why: format!("{clients} clients are in it (drop or move them first)"),
            });
        }
        self.shared.remove_group(id)
    }
}

impl Client {
    /// This client's process moved to the group at path `group`, as writing its pid to the
    /// group's `cgroup.procs` moves it: the same process and priority, its requests from
    /// now on charged to the new group. The policy sees the move at the process's next
    /// request: BFQ moves the process's sync queue, with its state and queued requests, as
    /// 6.x does (a queue shared with merged cooperators stays behind); CFQ gives it a new
    /// sync queue, and what it had queued finishes where it was.
    /// This client, and its clones, stay in the old group until dropped.
    pub fn moved_to(&self, group: &str) -> Result<Client, EngineError> {
        let handle = Handle {
            shared: std::sync::Arc::clone(self.shared()),
        };
        handle.client(self.process(), group, self.priority())
    }
}
