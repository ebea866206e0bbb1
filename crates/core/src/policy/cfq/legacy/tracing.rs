//! What the pre-group CFQ tells the trace: slices starting and ending, slice lengths and
//! preemptions, with queues named as the 4.4 engine names them (every queue in the root group).

use crate::trace::{self, QueueRef, ServiceEnd, TraceBuffer, Traced};
use crate::{GroupId, IoPriority, Nanos, TraceEvent};

use super::queue::QueueId;
use super::LegacyCfq;

impl LegacyCfq {
    /// A queue as the trace names it.
    pub(super) fn queue_ref(&self, queue: QueueId) -> QueueRef {
        let q = &self.queues[queue];
        QueueRef {
            process: q.process,
            group: GroupId::ROOT,
            priority: IoPriority {
                class: q.class,
                level: q.level,
            },
        }
    }

    /// A queue became active.
    pub(super) fn trace_slice_start(&mut self, queue: QueueId) {
        self.emit(|cfq| TraceEvent::SliceStart {
            queue: cfq.queue_ref(queue),
        });
    }

    /// A queue's slice got its length.
    pub(super) fn trace_slice_timer(&mut self, queue: QueueId, length: Nanos) {
        self.emit(|cfq| TraceEvent::SliceTimer {
            queue: cfq.queue_ref(queue),
            length,
        });
    }

    /// The active queue's slice ended.
    pub(super) fn trace_slice_end(&mut self, queue: QueueId, reason: ServiceEnd) {
        self.emit(|cfq| TraceEvent::SliceEnd {
            queue: cfq.queue_ref(queue),
            reason,
            dispatched: cfq.queues[queue].slice_dispatched,
        });
    }

    /// `by` takes the device from the active queue.
    pub(super) fn trace_preempt(&mut self, by: QueueId, reason: trace::PreemptReason) {
        if let Some(active) = self.active {
            self.emit(|cfq| TraceEvent::Preempt {
                queue: cfq.queue_ref(active),
                by: cfq.queue_ref(by),
                reason,
            });
        }
    }

    /// Turn recording on or off.
    pub(in crate::policy::cfq) fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
    }

    /// Hand over what was recorded.
    pub(in crate::policy::cfq) fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }
}

impl Traced for LegacyCfq {
    fn trace_buffer(&mut self) -> &mut TraceBuffer {
        &mut self.trace
    }

    fn tracing(&self) -> bool {
        self.trace.is_enabled()
    }
}
