//! The service of a queue in cfq and bfq: its slices (`slice_start` … `slice_end`, the
//! slice's timer from its first completion), its budgets (`budget_start` … `budget_end`),
//! its weight raising (`raise_start` … `raise_end`), and cfq's group turns (`group_start` …
//! `group_end` or the next `group_start`).

use ioslice_core::trace::{ChargeUnit, QueueRef, RaiseEnd, RaiseKind, ServiceEnd, Workload};
use ioslice_core::{GroupId, Nanos, PriorityClass};

use super::{plural, TimelineRecorder};
use crate::coarsen::Span;
use crate::kind::MarkKind;
use crate::label::{class_name, raise_end, raise_kind, service_end, workload, Label};
use crate::lanes::queue_name;
use crate::text::{duration, instant};

/// A slice open on a queue's lane.
#[derive(Debug)]
pub(super) struct Slice {
    pub(super) start: Nanos,
    pub(super) queue: String,
    pub(super) timer: Option<(Nanos, Nanos)>,
}

/// A budget open on a queue's lane.
#[derive(Debug)]
pub(super) struct Budget {
    pub(super) start: Nanos,
    pub(super) sectors: u64,
    pub(super) queue: String,
    pub(super) timeout: Nanos,
    pub(super) raising: u64,
}

/// A weight raising open on a queue's lane.
#[derive(Debug)]
pub(super) struct Raise {
    pub(super) start: Nanos,
    pub(super) queue: String,
    pub(super) kind: RaiseKind,
    pub(super) coefficient: u64,
    pub(super) duration: Nanos,
}

/// The group in service.
#[derive(Debug)]
pub(super) struct GroupTurn {
    pub(super) start: Nanos,
    pub(super) lane: u32,
    pub(super) group: GroupId,
    pub(super) class: &'static str,
    pub(super) workload: Workload,
    pub(super) slice: Nanos,
    pub(super) resumed: bool,
}

impl TimelineRecorder {
    pub(super) fn slice_start(&mut self, queue: &QueueRef) {
        let lane = self.lanes.queue(queue);
        let slice = Slice {
            start: self.now,
            queue: queue_name(queue),
            timer: None,
        };
        if let Some(open) = self.slices.insert(lane, slice) {
            self.close_slice(lane, open, "restarted", None);
        }
    }

    pub(super) fn slice_timer(&mut self, queue: &QueueRef, length: Nanos) {
        let lane = self.lanes.queue(queue);
        let now = self.now;
        if let Some(slice) = self.slices.get_mut(&lane) {
            slice.timer = Some((now, length));
        }
    }

    pub(super) fn slice_end(&mut self, queue: &QueueRef, reason: ServiceEnd, dispatched: u64) {
        let lane = self.lanes.queue(queue);
        if let Some(slice) = self.slices.remove(&lane) {
            self.close_slice(lane, slice, service_end(reason), Some(dispatched));
        }
    }

    pub(super) fn budget_start(
        &mut self,
        queue: &QueueRef,
        sectors: u64,
        timeout: Nanos,
        raising: u64,
    ) {
        let lane = self.lanes.queue(queue);
        let open = Budget {
            start: self.now,
            sectors,
            queue: queue_name(queue),
            timeout,
            raising,
        };
        if let Some(old) = self.budgets.insert(lane, open) {
            let budget = format!(", {} sectors", old.sectors);
            self.close_budget(lane, old, "restarted", budget);
        }
    }

    pub(super) fn budget_end(&mut self, queue: &QueueRef, reason: ServiceEnd, served: String) {
        let lane = self.lanes.queue(queue);
        if let Some(open) = self.budgets.remove(&lane) {
            self.close_budget(lane, open, service_end(reason), served);
        }
    }

    pub(super) fn raise_start(
        &mut self,
        queue: &QueueRef,
        kind: RaiseKind,
        coefficient: u64,
        duration: Nanos,
    ) {
        let lane = self.lanes.queue(queue);
        let open = Raise {
            start: self.now,
            queue: queue_name(queue),
            kind,
            coefficient,
            duration,
        };
        if let Some(old) = self.raises.insert(lane, open) {
            self.close_raise(lane, old, "restarted");
        }
    }

    pub(super) fn raise_end(&mut self, queue: &QueueRef, reason: RaiseEnd) {
        let lane = self.lanes.queue(queue);
        if let Some(open) = self.raises.remove(&lane) {
            self.close_raise(lane, open, raise_end(reason));
        }
    }

    pub(super) fn close_slice(
        &mut self,
        lane: u32,
        slice: Slice,
        reason: &'static str,
        sent: Option<u64>,
    ) {
        let now = self.now;
        let timer = match slice.timer {
            Some((at, length)) => format!(
                "{} from its first completion at {}",
                duration(length),
                instant(at)
            ),
            None => String::from("no request completed in it"),
        };
        let sent = match sent {
            Some(count) => format!("{} dispatched, ", plural(count, "request", "requests")),
            None => String::new(),
        };
        let label = format!(
            "slice of {} ({timer}): active {}, {sent}ended {reason}",
            slice.queue,
            duration(now.saturating_sub(slice.start))
        );
        self.store.push(Span::new(
            lane,
            MarkKind::Slice,
            slice.start,
            now,
            Label::Text(label),
            reason,
        ));
    }

    pub(super) fn close_budget(
        &mut self,
        lane: u32,
        budget: Budget,
        reason: &'static str,
        served: String,
    ) {
        let now = self.now;
        let label = format!(
            "budget of {}{served} (timeout {}{}): {} in service, ended {reason}",
            budget.queue,
            duration(budget.timeout),
            if budget.raising > 1 {
                format!(", weight raised ×{}", budget.raising)
            } else {
                String::new()
            },
            duration(now.saturating_sub(budget.start))
        );
        self.store.push(Span::new(
            lane,
            MarkKind::Budget,
            budget.start,
            now,
            Label::Text(label),
            reason,
        ));
    }

    pub(super) fn close_raise(&mut self, lane: u32, raise: Raise, reason: &'static str) {
        let now = self.now;
        let label = format!(
            "weight of {} raised ×{} ({}, for up to {}): {}, ended {reason}",
            raise.queue,
            raise.coefficient,
            raise_kind(raise.kind),
            duration(raise.duration),
            duration(now.saturating_sub(raise.start))
        );
        self.store.push(Span::new(
            lane,
            MarkKind::Raise,
            raise.start,
            now,
            Label::Text(label),
            reason,
        ));
    }

    pub(super) fn close_group(&mut self, turn: GroupTurn, outcome: String) {
        let now = self.now;
        let label = format!(
            "group {} in service ({} {} workload, {} of its workload slice left{}): {}, {outcome}",
            self.lanes.group_name(turn.group),
            turn.class,
            workload(turn.workload),
            duration(turn.slice),
            if turn.resumed { ", resumed" } else { "" },
            duration(now.saturating_sub(turn.start))
        );
        self.store.push(Span::new(
            turn.lane,
            MarkKind::Group,
            turn.start,
            now,
            Label::Text(label),
            workload(turn.workload),
        ));
    }

    pub(super) fn group_start(
        &mut self,
        group: GroupId,
        class: PriorityClass,
        workload: Workload,
        slice: Nanos,
        resumed: bool,
    ) {
        if let Some(open) = self.group.take() {
            self.close_group(open, String::from("until the next choice"));
        }
        let lane = self.lanes.group(group);
        self.group = Some(GroupTurn {
            start: self.now,
            lane,
            group,
            class: class_name(class),
            workload,
            slice,
            resumed,
        });
    }

    pub(super) fn group_end(&mut self, group: GroupId, charge: u64, unit: ChargeUnit) {
        let charge = match unit {
            ChargeUnit::Time => format!("charged {}", duration(charge)),
            ChargeUnit::Requests => format!("charged {}", plural(charge, "request", "requests")),
        };
        match self.group.take() {
            Some(turn) if turn.group == group => self.close_group(turn, charge),
            other => {
                self.group = other;
                let lane = self.lanes.group(group);
                let label = format!("group {} {charge}", self.lanes.group_name(group));
                self.instant(lane, MarkKind::Group, label, "charge");
            }
        }
    }
}
