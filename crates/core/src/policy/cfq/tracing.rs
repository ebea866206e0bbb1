//! What CFQ tells the trace ([`crate::trace`]): the names it gives its queues there, and how
//! its own reasons map onto the trace's.

use crate::trace::{self, QueueRef, TraceBuffer, Traced};
use crate::{IoPriority, Nanos, TraceEvent};

use super::preempt::PreemptReason;
use super::service_tree::WorkloadType;
use super::{Cfq, QueueId};

impl Cfq {
    /// A queue as the trace names it.
    pub(super) fn queue_ref(&self, queue: QueueId) -> QueueRef {
        let q = &self.queues[queue];
        QueueRef {
            process: q.process,
            group: q.group,
            priority: IoPriority {
                class: q.class,
                level: q.level,
            },
        }
    }

    /// The active queue starts to idle, for at most `window`.
    #[inline(always)]
    pub(super) fn start_idle_window(&mut self, queue: QueueId, window: Nanos) {
        if self.trace.is_enabled() {
            self.idle.traced = true;
            self.emit(|cfq| TraceEvent::IdleStart {
                queue: cfq.queue_ref(queue),
                kind: cfq.idle.kind,
                window,
            });
        }
    }

    /// The active queue's idle window, if the trace shows one open, ends. (A small request
    /// that arrives while the queue is alone goes out at once and ends the window here,
    /// although the timer stays armed until the queue's next completion re-arms it.)
    #[inline(always)]
    pub(super) fn end_idle_window(&mut self, queue: QueueId, reason: trace::IdleEnd) {
        if self.idle.traced {
            self.idle.traced = false;
            self.emit(|cfq| TraceEvent::IdleEnd {
                queue: cfq.queue_ref(queue),
                kind: cfq.idle.kind,
                reason,
            });
        }
    }
}

impl From<PreemptReason> for trace::PreemptReason {
    fn from(reason: PreemptReason) -> Self {
        match reason {
            PreemptReason::ActiveIsIdleClass => Self::IdleClass,
            PreemptReason::SyncOverAsync => Self::SyncOverAsync,
            PreemptReason::ActiveSliceUsed => Self::SliceUsed,
            PreemptReason::RealTimeOverNonRealTime => Self::RealTime,
            PreemptReason::SyncNoIdleTreeOfTwo => Self::SyncNoIdle,
            PreemptReason::ActiveShouldNotIdle => Self::ShouldNotIdle,
            PreemptReason::CloseToHead => Self::CloseToHead,
        }
    }
}

impl From<WorkloadType> for trace::Workload {
    fn from(workload: WorkloadType) -> Self {
        match workload {
            WorkloadType::Async => Self::Async,
            WorkloadType::SyncNoIdle => Self::SyncNoIdle,
            WorkloadType::Sync => Self::Sync,
        }
    }
}

impl Traced for Cfq {
    fn trace_buffer(&mut self) -> &mut TraceBuffer {
        &mut self.trace
    }

    fn tracing(&self) -> bool {
        self.trace.is_enabled()
    }
}
