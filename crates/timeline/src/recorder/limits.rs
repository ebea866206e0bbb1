//! The limit layer on a process's lane: its requests held by a group's limit (a span while
//! any is held, from the first `hold` to the `release` of the last), and its outranking
//! (`outranked` on … off).

use ioslice_core::{Direction, GroupId, Nanos, ProcessId};

use super::{plural, TimelineRecorder};
use crate::coarsen::Span;
use crate::kind::MarkKind;
use crate::label::{direction_name, Label};
use crate::text::duration;

/// A process's held requests.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) start: Nanos,
    pub(super) group: String,
    pub(super) outstanding: u64,
    pub(super) requests: u64,
    pub(super) bytes: u64,
    pub(super) longest: Nanos,
    pub(super) direction: Direction,
}

impl TimelineRecorder {
    pub(super) fn hold(
        &mut self,
        request: u64,
        process: ProcessId,
        group: GroupId,
        direction: Direction,
        bytes: u64,
    ) {
        let lane = self.lanes.process(process);
        self.held.insert(request, lane);
        let now = self.now;
        let group = self.lanes.group_name(group);
        let held = self.holds.entry(lane).or_insert(Held {
            start: now,
            group,
            outstanding: 0,
            requests: 0,
            bytes: 0,
            longest: 0,
            direction,
        });
        held.outstanding += 1;
        held.requests += 1;
        held.bytes = held.bytes.saturating_add(bytes);
    }

    pub(super) fn release(&mut self, request: u64, waited: Nanos) {
        let Some(lane) = self.held.remove(&request) else {
            return;
        };
        let done = match self.holds.get_mut(&lane) {
            Some(held) => {
                held.outstanding = held.outstanding.saturating_sub(1);
                held.longest = held.longest.max(waited);
                held.outstanding == 0
            }
            None => false,
        };
        if done {
            if let Some(held) = self.holds.remove(&lane) {
                self.close_hold(lane, held);
            }
        }
    }

    pub(super) fn outranked(&mut self, process: ProcessId, outranked: bool) {
        let lane = self.lanes.process(process);
        let now = self.now;
        match (outranked, self.outranked.remove(&lane)) {
            (true, Some(start)) => {
                self.outranked.insert(lane, start);
            }
            (true, None) => {
                self.outranked.insert(lane, now);
            }
            (false, Some(start)) => self.close_outranked(lane, start),
            (false, None) => {}
        }
    }

    pub(super) fn close_hold(&mut self, lane: u32, held: Held) {
        let now = self.now;
        let label = format!(
            "held by the limit of {}: {} ({} bytes), the longest {} since submission",
            held.group,
            plural(held.requests, "request", "requests"),
            held.bytes,
            duration(held.longest)
        );
        let mut span = Span::new(
            lane,
            MarkKind::Hold,
            held.start,
            now,
            Label::Text(label),
            direction_name(held.direction),
        );
        span.count = held.requests.max(1);
        self.store.push(span);
    }

    pub(super) fn close_outranked(&mut self, lane: u32, start: Nanos) {
        let now = self.now;
        let label = format!(
            "outranked by the limit layer (not waited for) for {}",
            duration(now.saturating_sub(start))
        );
        self.store.push(Span::new(
            lane,
            MarkKind::Outranked,
            start,
            now,
            Label::Text(label),
            "",
        ));
    }
}
