//! The events a group's elevator records, as the run sees them: each elevator instance knows
//! only the root group, so the queues its events name are put back in the group it serves,
//! and its own group events (one group, always the root) are dropped: under elv-fq the
//! group events are the layer's.

use crate::trace::{QueueRef, TraceEvent};
use crate::GroupId;

/// `event` from the elevator of `group`, with its queues put in `group`; `None` for the
/// elevator's own group events.
pub(super) fn regroup(mut event: TraceEvent, group: GroupId) -> Option<TraceEvent> {
    if matches!(
        event,
        TraceEvent::GroupStart { .. } | TraceEvent::GroupEnd { .. }
    ) {
        return None;
    }
    for queue in queues(&mut event) {
        queue.group = group;
    }
    Some(event)
}

/// The queues an event names.
fn queues(event: &mut TraceEvent) -> Vec<&mut QueueRef> {
    match event {
        TraceEvent::SliceStart { queue, .. }
        | TraceEvent::SliceTimer { queue, .. }
        | TraceEvent::SliceEnd { queue, .. }
        | TraceEvent::BudgetStart { queue, .. }
        | TraceEvent::BudgetEnd { queue, .. }
        | TraceEvent::IdleStart { queue, .. }
        | TraceEvent::IdleEnd { queue, .. }
        | TraceEvent::RaiseStart { queue, .. }
        | TraceEvent::RaiseEnd { queue, .. }
        | TraceEvent::GroupMove { queue, .. }
        | TraceEvent::QueueSplit { from: queue, .. } => vec![queue],
        TraceEvent::Inject { queue, holder, .. } => vec![queue, holder],
        TraceEvent::Preempt { queue, by, .. } => vec![queue, by],
        TraceEvent::QueueMerge { from, into, .. } => vec![from, into],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{IdleEnd, IdleKind};
    use crate::{IoPriority, PriorityClass, ProcessId};

    #[test]
    fn queues_move_to_the_group_and_group_events_go() {
        let queue = QueueRef {
            process: Some(ProcessId(3)),
            group: GroupId::ROOT,
            priority: IoPriority::default(),
        };
        let event = TraceEvent::IdleEnd {
            queue,
            kind: IdleKind::Queue,
            reason: IdleEnd::Timer,
        };
        assert_eq!(
            regroup(event, GroupId(2)),
            Some(TraceEvent::IdleEnd {
                queue: QueueRef {
                    group: GroupId(2),
                    ..queue
                },
                kind: IdleKind::Queue,
                reason: IdleEnd::Timer,
            })
        );
        let group_start = TraceEvent::GroupStart {
            group: GroupId::ROOT,
            class: PriorityClass::BestEffort,
            workload: crate::trace::Workload::Sync,
            slice: 1,
            resumed: false,
        };
        assert_eq!(regroup(group_start, GroupId(2)), None);
    }
}
