//! `group_isolation`: whether a group keeps its seeky queues.
//!
//! CFQ of Linux 2.6.33–2.6.38 had a `group_isolation` tunable, 0 by default. With 0, a sync
//! queue of a child group that CFQ stops idling for (seeky, or thinking too long: the
//! sync-noidle workload) is served in the root group instead, on the root's sync-noidle tree,
//! where all such queues share the device by queue, whatever their groups' weights. Idling for
//! one seeky queue after another in each group would cost much throughput; the price is that
//! group weights hold for sequential I/O only. A moved queue that gets its idle window back
//! returns to its own group. With 1 every queue stays in its group. Linux 2.6.39 dropped the
//! tunable and always isolates, as `1` does here; ioslice's cfq follows the 4.x kernels in
//! everything else, so 1 is its default, and 0 models the kernels that had the choice.
//!
//! The decision is taken whenever a queue is put on a service tree (the kernel's
//! `cfq_service_tree_add`), so a queue changes group when it joins the round robin, at the end
//! of its slice, or when it preempts — never while it is active. A move takes the queue out of
//! its old group's count of queues (the group leaves the group tree with its last one) and
//! into the new one's.
//!
//! Source: the kernel's `Documentation/cgroups/blkio-controller.txt` of 2.6.33–2.6.38 and
//! `block/cfq-iosched.c` of those kernels. This is our own code.

use crate::trace::Traced;
use crate::{GroupId, TraceEvent};

use super::service_tree::WorkloadType;
use super::{Cfq, QueueId};

impl Cfq {
    /// The group a queue should be served in now: its own, or the root for a sync-noidle
    /// queue when groups do not isolate.
    fn isolation_group(&self, queue: QueueId) -> GroupId {
        let own = self.queues[queue].own_group();
        if self.config.group_isolation {
            return own;
        }
        match self.workload_type(queue) {
            WorkloadType::SyncNoIdle => GroupId::ROOT,
            WorkloadType::Sync => own,
            // Async queues never move (they are shared by a group's processes).
            WorkloadType::Async => self.queues[queue].group,
        }
    }

    /// Move the queue to the group it should be served in, if it is elsewhere: off its old
    /// group's tree and count. Returns whether it moved (it then joins its new group's tree as
    /// a new queue).
    pub(super) fn place_in_group(&mut self, queue: QueueId) -> bool {
        let from = self.queues[queue].group;
        let to = self.isolation_group(queue);
        if to == from {
            return false;
        }
        self.emit(|cfq| TraceEvent::GroupMove {
            queue: cfq.queue_ref(queue),
            to,
        });
        if let Some(position) = self.queues[queue].tree_position.take() {
            self.groups[from.index()].trees[position.tree.index()].remove(position, queue);
            self.notify_queue_del(from);
        }
        let q = &mut self.queues[queue];
        q.origin = (to == GroupId::ROOT).then_some(from);
        q.group = to;
        true
    }
}
