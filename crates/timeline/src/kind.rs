//! What a mark is: the kinds of marks, their names in [`crate::Mark::kind`], what the legend
//! says of each, their colours, and where on its lane each is drawn.

use serde::{Deserialize, Serialize};

/// The kind of a mark. [`crate::Mark::kind`] holds its [`MarkKind::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// Requests of a process at the device (dispatch to completion), back to back.
    Service,
    /// deadline and anticipatory: a batch, from its start to the next one.
    Batch,
    /// deadline and anticipatory: a FIFO head past its deadline served first (an instant).
    FifoExpired,
    /// cfq: a queue's slice, from its activation to its expiry.
    Slice,
    /// bfq: a queue in service with a budget.
    Budget,
    /// cfq: a group chosen, until its charge or the next choice.
    Group,
    /// Idling for a queue's next request (cfq `slice_idle`, bfq).
    Idle,
    /// cfq `group_idle`: idling on a group's last queue.
    GroupIdle,
    /// Anticipatory scheduling: waiting for the process's next nearby request.
    Anticipation,
    /// bfq parallel service: lighter queues held for a queue that ran dry.
    Linger,
    /// bfq: a queue's weight raised.
    Raise,
    /// A process's requests held by a group's limit.
    Hold,
    /// A process outranked by the limit layer (not waited for).
    Outranked,
    /// A queue takes the device from another (an instant on both lanes).
    Preempt,
    /// bfq: a request of another queue sent while the device is held for one (an instant).
    Inject,
    /// A process's queue merged into a cooperating queue (an instant).
    QueueMerge,
    /// A process leaves a shared queue (an instant).
    QueueSplit,
    /// cfq: a queue moves between groups (an instant).
    GroupMove,
    /// A controller's step (an instant): kyber resizing a domain's tokens, io.latency
    /// moving a parent's scale or a group's depth, iocost moving the device's vrate.
    Control,
}

/// Where on its lane a kind is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Band {
    /// Behind everything, the lane's full height, pale: slices, budgets, batches, groups.
    Background,
    /// A thin strip at the top: raising, holds, outranking.
    Strip,
    /// The middle: requests at the device.
    Service,
    /// The bottom: idle windows and anticipation.
    Wait,
    /// A vertical tick across the lane: preemptions, injections, expiries, merges.
    Instant,
}

impl Band {
    /// Where in a lane `lane` high the band is drawn: offset from the lane's top, height.
    pub(crate) fn geometry(self, lane: u32) -> (u32, u32) {
        match self {
            Band::Background => (1, lane.saturating_sub(2)),
            Band::Strip => (1, 4),
            Band::Service => (7, 11),
            Band::Wait => (19, 7),
            Band::Instant => (0, lane),
        }
    }
}

impl MarkKind {
    /// Every kind, in legend order.
    pub const ALL: [MarkKind; 19] = [
        MarkKind::Service,
        MarkKind::Batch,
        MarkKind::FifoExpired,
        MarkKind::Slice,
        MarkKind::Budget,
        MarkKind::Group,
        MarkKind::Idle,
        MarkKind::GroupIdle,
        MarkKind::Anticipation,
        MarkKind::Linger,
        MarkKind::Raise,
        MarkKind::Hold,
        MarkKind::Outranked,
        MarkKind::Preempt,
        MarkKind::Inject,
        MarkKind::QueueMerge,
        MarkKind::QueueSplit,
        MarkKind::GroupMove,
        MarkKind::Control,
    ];

    /// Its name, as [`crate::Mark::kind`] holds it.
    pub fn name(self) -> &'static str {
        match self {
            MarkKind::Service => "service",
            MarkKind::Batch => "batch",
            MarkKind::FifoExpired => "fifo_expired",
            MarkKind::Slice => "slice",
            MarkKind::Budget => "budget",
            MarkKind::Group => "group",
            MarkKind::Idle => "idle",
            MarkKind::GroupIdle => "group_idle",
            MarkKind::Anticipation => "anticipation",
            MarkKind::Linger => "linger",
            MarkKind::Raise => "raise",
            MarkKind::Hold => "hold",
            MarkKind::Outranked => "outranked",
            MarkKind::Preempt => "preempt",
            MarkKind::Inject => "inject",
            MarkKind::QueueMerge => "queue_merge",
            MarkKind::QueueSplit => "queue_split",
            MarkKind::GroupMove => "group_move",
            MarkKind::Control => "control",
        }
    }

    /// The kind with this name.
    pub fn from_name(name: &str) -> Option<MarkKind> {
        MarkKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// What the legend says of it.
    pub fn describe(self) -> &'static str {
        match self {
            MarkKind::Service => "requests at the device",
            MarkKind::Batch => "batch (deadline, as)",
            MarkKind::FifoExpired => "FIFO expiry",
            MarkKind::Slice => "time slice (cfq)",
            MarkKind::Budget => "budget in service (bfq)",
            MarkKind::Group => "group in service (cfq)",
            MarkKind::Idle => "idling for the queue",
            MarkKind::GroupIdle => "idling for the group",
            MarkKind::Anticipation => "anticipation wait",
            MarkKind::Linger => "lingering (bfq)",
            MarkKind::Raise => "weight raised (bfq)",
            MarkKind::Hold => "held by a limit",
            MarkKind::Outranked => "outranked by the limit layer",
            MarkKind::Preempt => "preemption",
            MarkKind::Inject => "injection (bfq)",
            MarkKind::QueueMerge => "queue merge",
            MarkKind::QueueSplit => "queue split",
            MarkKind::GroupMove => "move between groups",
            MarkKind::Control => "controller step (kyber, io.latency, iocost)",
        }
    }

    /// One of it, in a merged mark's label ("12 anticipation waits").
    pub(crate) fn noun(self) -> (&'static str, &'static str) {
        match self {
            MarkKind::Service => ("request", "requests"),
            MarkKind::Batch => ("batch", "batches"),
            MarkKind::FifoExpired => ("FIFO expiry", "FIFO expiries"),
            MarkKind::Slice => ("slice", "slices"),
            MarkKind::Budget => ("budget", "budgets"),
            MarkKind::Group => ("group turn", "group turns"),
            MarkKind::Idle => ("idle window", "idle windows"),
            MarkKind::GroupIdle => ("group idle window", "group idle windows"),
            MarkKind::Anticipation => ("anticipation wait", "anticipation waits"),
            MarkKind::Linger => ("lingering", "lingerings"),
            MarkKind::Raise => ("weight raising", "weight raisings"),
            MarkKind::Hold => ("held request", "held requests"),
            MarkKind::Outranked => ("outranking", "outrankings"),
            MarkKind::Preempt => ("preemption", "preemptions"),
            MarkKind::Inject => ("injection", "injections"),
            MarkKind::QueueMerge => ("queue merge", "queue merges"),
            MarkKind::QueueSplit => ("queue split", "queue splits"),
            MarkKind::GroupMove => ("group move", "group moves"),
            MarkKind::Control => ("controller step", "controller steps"),
        }
    }

    /// Its colour, as CSS.
    pub fn colour(self) -> &'static str {
        match self {
            MarkKind::Service => "#2f6fc9",
            MarkKind::Batch => "#cdbde6",
            MarkKind::FifoExpired => "#222222",
            MarkKind::Slice => "#bcd7ef",
            MarkKind::Budget => "#c2e5b8",
            MarkKind::Group => "#cfe3dc",
            MarkKind::Idle => "#f0a13a",
            MarkKind::GroupIdle => "#b8741a",
            MarkKind::Anticipation => "#e8590c",
            MarkKind::Linger => "#a8a820",
            MarkKind::Raise => "#2e9e44",
            MarkKind::Hold => "#d0459b",
            MarkKind::Outranked => "#777777",
            MarkKind::Preempt => "#d62728",
            MarkKind::Inject => "#13a5b5",
            MarkKind::QueueMerge => "#8c564b",
            MarkKind::QueueSplit => "#b07a6e",
            MarkKind::GroupMove => "#555555",
            MarkKind::Control => "#6a3d9a",
        }
    }

    /// Where on its lane it is drawn.
    pub fn band(self) -> Band {
        match self {
            MarkKind::Batch | MarkKind::Slice | MarkKind::Budget | MarkKind::Group => {
                Band::Background
            }
            MarkKind::Raise | MarkKind::Hold | MarkKind::Outranked => Band::Strip,
            MarkKind::Service => Band::Service,
            MarkKind::Idle | MarkKind::GroupIdle | MarkKind::Anticipation | MarkKind::Linger => {
                Band::Wait
            }
            MarkKind::FifoExpired
            | MarkKind::Preempt
            | MarkKind::Inject
            | MarkKind::QueueMerge
            | MarkKind::QueueSplit
            | MarkKind::GroupMove
            | MarkKind::Control => Band::Instant,
        }
    }

    /// Whether back-to-back marks of this kind merge at the base resolution (the streams of
    /// one per request: service and waits); the others, one per decision, merge only once
    /// the timeline is coarsened.
    pub(crate) fn streams(self) -> bool {
        matches!(self.band(), Band::Service | Band::Wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for kind in MarkKind::ALL {
            assert_eq!(MarkKind::from_name(kind.name()), Some(kind));
        }
        let mut names: Vec<_> = MarkKind::ALL.iter().map(|kind| kind.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MarkKind::ALL.len());
        assert_eq!(MarkKind::from_name("nothing"), None);
    }

    #[test]
    fn serde_names_match() {
        for kind in MarkKind::ALL {
            let json = serde_json::to_string(&kind).expect("a kind serializes");
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
    }
}
