//! The stable names of the reasons and kinds the trace's events carry (`slice_expired`,
//! `request_arrived`, `soft_rt`, …): the text and JSON renderings print them, and anything
//! else that shows events (the decision timeline) names them the same way.

use super::{
    BatchClass, BatchStart, IdleEnd, IdleKind, PreemptReason, RaiseEnd, RaiseKind, ServiceEnd,
    Workload,
};
use crate::PriorityClass;

/// What a batch serves, as the trace names it.
pub fn batch_class(class: BatchClass) -> &'static str {
    match class {
        BatchClass::Read => "read",
        BatchClass::Write => "write",
        BatchClass::Sync => "sync",
        BatchClass::Async => "async",
    }
}

/// Where a batch starts, as the trace names it.
pub fn batch_start(start: BatchStart) -> &'static str {
    match start {
        BatchStart::Expired => "expired",
        BatchStart::FifoHead => "fifo_head",
        BatchStart::Sorted => "sorted",
    }
}

/// Why a slice or budget ended, as the trace names it.
pub fn service_end(reason: ServiceEnd) -> &'static str {
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

/// Why a queue preempted another, as the trace names it.
pub fn preempt_reason(reason: PreemptReason) -> &'static str {
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

/// What kind of wait, as the trace names it.
pub fn idle_kind(kind: IdleKind) -> &'static str {
    match kind {
        IdleKind::Queue => "queue",
        IdleKind::Group => "group",
        IdleKind::Anticipation => "anticipation",
        IdleKind::Linger => "linger",
    }
}

/// Why a wait ended, as the trace names it.
pub fn idle_end(reason: IdleEnd) -> &'static str {
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

/// Which weight raising, as the trace names it.
pub fn raise_kind(kind: RaiseKind) -> &'static str {
    match kind {
        RaiseKind::Interactive => "interactive",
        RaiseKind::SoftRealTime => "soft_rt",
    }
}

/// Why weight raising ended, as the trace names it.
pub fn raise_end(reason: RaiseEnd) -> &'static str {
    match reason {
        RaiseEnd::Expired => "expired",
        RaiseEnd::TooMuchService => "too_much_service",
        RaiseEnd::LargeBurst => "large_burst",
        RaiseEnd::HandedOver => "handed_over",
    }
}

/// A cfq workload type, as the trace names it.
pub fn workload(workload: Workload) -> &'static str {
    match workload {
        Workload::Async => "async",
        Workload::SyncNoIdle => "sync_noidle",
        Workload::Sync => "sync",
    }
}

/// An I/O priority class, as ionice names it, as the trace names it.
pub fn priority_class(class: PriorityClass) -> &'static str {
    match class {
        PriorityClass::RealTime => "RT",
        PriorityClass::BestEffort => "BE",
        PriorityClass::Idle => "IDLE",
    }
}
