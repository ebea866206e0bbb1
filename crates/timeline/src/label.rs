//! What a lone mark says, and the names labels give the trace's reasons (as the trace's
//! text rendering spells them). The per-request marks (a request at the device, a wait for a
//! queue) keep the facts and are worded only if they survive as lone marks at the end: most
//! merge into others, and wording each one would cost more than the rest of the recording.

use ioslice_core::trace::{
    BatchClass, IdleEnd, PreemptReason, QueueRef, RaiseEnd, RaiseKind, RequestInfo, ServiceEnd,
    Workload,
};
use ioslice_core::{Direction, Nanos, PriorityClass};

use crate::kind::MarkKind;
use crate::lanes::queue_name;
use crate::text::duration;

/// A lone mark's label, worded or still facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Label {
    /// Already worded.
    Text(String),
    /// A request at the device, from its dispatch to its completion.
    Request {
        /// The request.
        request: RequestInfo,
        /// Requests merged into it.
        merged: u32,
        /// How long it was at the device.
        length: Nanos,
    },
    /// A wait for a queue (idling, anticipation, lingering).
    Wait {
        /// What kind of wait.
        kind: MarkKind,
        /// The queue waited for.
        queue: QueueRef,
        /// Its window (0: until the queue's requests complete).
        window: Nanos,
        /// How long it lasted.
        length: Nanos,
        /// Why it ended.
        reason: &'static str,
    },
}

impl Label {
    /// The words.
    pub fn render(&self) -> String {
        match self {
            Label::Text(text) => text.clone(),
            Label::Request {
                request,
                merged,
                length,
            } => format!(
                "request {} of p{}: {} of {} sectors at sector {}{}, {} at the device",
                request.id.0,
                request.process.0,
                direction_name(request.direction),
                request.sectors,
                request.sector,
                if *merged > 0 {
                    format!(" ({merged} merged)")
                } else {
                    String::new()
                },
                duration(*length),
            ),
            Label::Wait {
                kind,
                queue,
                window,
                length,
                reason,
            } => {
                let what = match kind {
                    MarkKind::Anticipation => "anticipation for",
                    MarkKind::GroupIdle => "group idling on",
                    MarkKind::Linger => "lingering for",
                    _ => "idling for",
                };
                let window = if *window == 0 {
                    String::from("until its requests complete")
                } else {
                    format!("window {}", duration(*window))
                };
                format!(
                    "{what} {} ({window}): {}, ended {reason}",
                    queue_name(queue),
                    duration(*length)
                )
            }
        }
    }
}

/// A direction as labels say it.
pub(crate) fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Read => "read",
        Direction::Write => "write",
    }
}

pub(crate) fn class_name(class: PriorityClass) -> &'static str {
    match class {
        PriorityClass::RealTime => "RT",
        PriorityClass::BestEffort => "BE",
        PriorityClass::Idle => "IDLE",
    }
}

pub(crate) fn batch_class(class: BatchClass) -> &'static str {
    match class {
        BatchClass::Read => "read",
        BatchClass::Write => "write",
        BatchClass::Sync => "sync",
        BatchClass::Async => "async",
    }
}

pub(crate) fn service_end(reason: ServiceEnd) -> &'static str {
    match reason {
        ServiceEnd::SliceExpired => "slice_expired",
        ServiceEnd::BudgetTimeout => "budget_timeout",
        ServiceEnd::BudgetExhausted => "budget_exhausted",
        ServiceEnd::NoMoreRequests => "no_more_requests",
        ServiceEnd::IdleTimeout => "idle_timeout",
        ServiceEnd::Preempted => "preempted",
        ServiceEnd::ProcessExited => "process_exited",
        ServiceEnd::Cooperator => "cooperator",
        ServiceEnd::WaitBusyDone => "wait_busy_done",
        ServiceEnd::IdleClass => "idle_class",
    }
}

pub(crate) fn preempt_reason(reason: PreemptReason) -> &'static str {
    match reason {
        PreemptReason::IdleClass => "idle_class",
        PreemptReason::SyncOverAsync => "sync_over_async",
        PreemptReason::SliceUsed => "slice_used",
        PreemptReason::RealTime => "real_time",
        PreemptReason::SyncNoIdle => "sync_noidle",
        PreemptReason::ShouldNotIdle => "should_not_idle",
        PreemptReason::CloseToHead => "close_to_head",
        PreemptReason::HoleRecovery => "hole_recovery",
        PreemptReason::HigherClassOrWeight => "higher_class_or_weight",
        PreemptReason::IdlingInVain => "idling_in_vain",
    }
}

pub(crate) fn idle_end(reason: IdleEnd) -> &'static str {
    match reason {
        IdleEnd::RequestArrived => "request_arrived",
        IdleEnd::Timer => "timer",
        IdleEnd::Preempted => "preempted",
        IdleEnd::ServiceEnded => "service_ended",
        IdleEnd::ProcessExited => "process_exited",
        IdleEnd::CloseRequest => "close_request",
        IdleEnd::OtherRequests => "other_requests",
        IdleEnd::ThinkTime => "think_time",
        IdleEnd::ExitLikely => "exit_likely",
        IdleEnd::Outranked => "outranked",
        IdleEnd::Released => "released",
    }
}

pub(crate) fn raise_kind(kind: RaiseKind) -> &'static str {
    match kind {
        RaiseKind::Interactive => "interactive",
        RaiseKind::SoftRealTime => "soft_rt",
    }
}

pub(crate) fn raise_end(reason: RaiseEnd) -> &'static str {
    match reason {
        RaiseEnd::Expired => "expired",
        RaiseEnd::TooMuchService => "too_much_service",
        RaiseEnd::LargeBurst => "large_burst",
        RaiseEnd::HandedOver => "handed_over",
    }
}

pub(crate) fn workload(workload: Workload) -> &'static str {
    match workload {
        Workload::Async => "async",
        Workload::SyncNoIdle => "sync_noidle",
        Workload::Sync => "sync",
    }
}
