//! What a lone mark says, and the names labels give the trace's reasons (as the trace's
//! text rendering spells them). The per-request marks (a request at the device, a wait for a
//! queue) keep the facts and are worded only if they survive as lone marks at the end: most
//! merge into others, and wording each one would cost more than the rest of the recording.

use ioslice_core::trace::{QueueRef, RequestInfo};
use ioslice_core::{Direction, Nanos};

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
        Direction::Discard => "discard",
    }
}

// The reasons' names are the trace's own.
pub(crate) use ioslice_core::trace::names::{
    batch_class, idle_end, preempt_reason, priority_class as class_name, raise_end, raise_kind,
    service_end, workload,
};
