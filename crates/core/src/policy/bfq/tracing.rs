//! What BFQ tells the trace ([`crate::trace`]): the names it gives its queues there, its
//! expiry reasons as the trace's, and the helpers that record idling and weight raising
//! where they change.

use crate::trace::{self, IdleEnd, IdleKind, QueueRef, RaiseKind, ServiceEnd, TraceBuffer, Traced};
use crate::{IoPriority, Nanos, TraceEvent};

use super::queue::{Expiration, QueueId};
use super::Bfq;

/// A change of BFQ's idling, for [`Bfq::trace_idle`].
pub(super) enum TraceIdle {
    /// Idling starts, for at most this long.
    Start(Nanos),
    /// Idling ends, for this reason.
    End(IdleEnd),
}

impl From<Expiration> for ServiceEnd {
    fn from(reason: Expiration) -> Self {
        match reason {
            Expiration::TooIdle => Self::IdleTimeout,
            Expiration::BudgetTimeout => Self::BudgetTimeout,
            Expiration::BudgetExhausted => Self::BudgetExhausted,
            Expiration::NoMoreRequests => Self::NoMoreRequests,
            Expiration::Preempted => Self::Preempted,
        }
    }
}

impl Bfq {
    /// A queue as the trace names it.
    pub(super) fn queue_ref(&self, id: QueueId) -> QueueRef {
        let queue = self.queue(id);
        QueueRef {
            process: queue.process,
            group: queue.group,
            priority: IoPriority {
                class: queue.class,
                level: queue.level,
            },
        }
    }

    /// Stop idling for the queue in service, if BFQ idles, for `reason`.
    #[inline(always)]
    pub(super) fn stop_idling(&mut self, reason: IdleEnd) {
        if self.idle.stop() && self.trace.is_enabled() {
            self.trace_idle(TraceIdle::End(reason));
        }
    }

    /// Record that BFQ starts or stops idling for the queue in service.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_idle(&mut self, change: TraceIdle) {
        let Some(id) = self.in_service else {
            return;
        };
        let queue = self.queue_ref(id);
        let kind = IdleKind::Queue;
        self.trace.push(match change {
            TraceIdle::Start(window) => TraceEvent::IdleStart {
                queue,
                kind,
                window,
            },
            TraceIdle::End(reason) => TraceEvent::IdleEnd {
                queue,
                kind,
                reason,
            },
        });
    }

    /// A lingering queue is no longer waited for, for `reason`.
    #[inline]
    pub(super) fn trace_linger_end(&mut self, id: QueueId, reason: IdleEnd) {
        self.emit(|bfq| TraceEvent::IdleEnd {
            queue: bfq.queue_ref(id),
            kind: IdleKind::Linger,
            reason,
        });
    }

    /// A queue's weight raising starts (or changes kind): as it now stands.
    #[inline]
    pub(super) fn trace_raise_start(&mut self, id: QueueId, now: Nanos) {
        self.emit(|bfq| {
            let raising = &bfq.queue(id).raising;
            let end = raising.start.saturating_add(raising.duration);
            TraceEvent::RaiseStart {
                queue: bfq.queue_ref(id),
                kind: raising.kind().unwrap_or(RaiseKind::Interactive),
                coefficient: raising.coefficient,
                duration: end.saturating_sub(now),
            }
        });
    }

    /// A queue's weight raising of `kind` ends, for `reason`.
    #[inline]
    pub(super) fn trace_raise_end(
        &mut self,
        id: QueueId,
        kind: RaiseKind,
        reason: trace::RaiseEnd,
    ) {
        self.emit(|bfq| TraceEvent::RaiseEnd {
            queue: bfq.queue_ref(id),
            kind,
            reason,
        });
    }
}

/// The raising a coefficient above 1 stands for.
pub(super) fn raise_kind(coefficient: u64) -> RaiseKind {
    if coefficient > super::weight_raising::INTERACTIVE_COEFFICIENT {
        RaiseKind::SoftRealTime
    } else {
        RaiseKind::Interactive
    }
}

impl Traced for Bfq {
    fn trace_buffer(&mut self) -> &mut TraceBuffer {
        &mut self.trace
    }

    fn tracing(&self) -> bool {
        self.trace.is_enabled()
    }
}
