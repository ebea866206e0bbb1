//! A legacy CFQ queue and the per-process history it is judged by.
//!
//! Which queue a request joins depends on the release: in the 2004 patch a process has one
//! queue for all its requests; from 2.6.28's CFQ on (the change came with the I/O priority
//! work of 2005–2006) a process has a sync queue for its reads and sync writes, and writeback
//! shares one async queue per priority. A process's *seek mean* is an EWMA (7/8, ×256 fixed
//! point) of the distance between its consecutive requests, each sample clamped to four times
//! the mean plus 1 GiB (first samples) or 64 MiB; the process is *seeky* when the mean
//! exceeds 8192 sectors (`CIC_SEEKY`, 2.6.28).

use std::collections::BTreeSet;

use crate::merge::{MergeIndex, SlotKey};
use crate::{IoPriority, Nanos, PriorityClass, ProcessId};

use super::super::idle::ThinkTime;

/// A queue's index.
pub(super) type QueueId = usize;

/// A seek mean above this many sectors makes a process seeky.
const SEEKY_MEAN: u64 = 8 * 1024;
/// Samples (×256) above which a mean is trusted: three samples.
const VALID_SAMPLES: u64 = 80;

/// The EWMA of a process's seek distances (the kernel's `seek_mean`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SeekMean {
    samples: u64,
    total: u128,
    /// The mean, in sectors.
    pub(super) mean: u64,
}

impl SeekMean {
    /// One more distance.
    pub(super) fn record(&mut self, distance: u64) {
        let slack = if self.samples <= 60 {
            2 * 1024 * 1024
        } else {
            2 * 1024 * 64
        };
        let distance = distance.min(self.mean.saturating_mul(4).saturating_add(slack));
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * u128::from(distance)) / 8;
        let mean = (self.total + u128::from(self.samples / 2)) / u128::from(self.samples.max(1));
        self.mean = u64::try_from(mean).unwrap_or(u64::MAX);
    }

    /// Whether enough samples were seen.
    pub(super) fn valid(&self) -> bool {
        self.samples > VALID_SAMPLES
    }

    /// Trusted and over 8192 sectors.
    pub(super) fn seeky(&self) -> bool {
        self.valid() && self.mean > SEEKY_MEAN
    }
}

/// What the legacy CFQ knows of a process (the kernel's `cfq_io_context`).
#[derive(Debug, Clone, Copy)]
pub(super) struct ProcessIo {
    /// Time from its last sync completion to its next request.
    pub(super) think_time: ThinkTime,
    /// Distance between its consecutive requests.
    pub(super) seek: SeekMean,
    /// End sector of its last request.
    pub(super) last_end: Option<u64>,
    /// It has exited.
    pub(super) exited: bool,
}

impl ProcessIo {
    /// A process first seen at `now`.
    pub(super) fn new(now: Nanos) -> Self {
        Self {
            think_time: ThinkTime::starting_at(now),
            seek: SeekMean::default(),
            last_end: None,
            exited: false,
        }
    }
}

/// One queue.
#[derive(Debug, Clone)]
pub(super) struct LegacyQueue {
    /// The process it was made for (none for a shared async queue).
    pub(super) process: Option<ProcessId>,
    /// Sliced and idled as sync (every queue in the 2004 patch).
    pub(super) sync: bool,
    /// Its class.
    pub(super) class: PriorityClass,
    /// Its level 0–7.
    pub(super) level: u8,
    /// Queued requests by start sector.
    pub(super) sort_list: BTreeSet<(u64, SlotKey)>,
    /// Queued requests by due time and arrival.
    pub(super) fifo: BTreeSet<(Nanos, u64, SlotKey)>,
    /// Merge candidates.
    pub(super) merges: MergeIndex,
    /// The request it would serve next.
    pub(super) next: Option<SlotKey>,
    /// Its requests out of CFQ: on the dispatch list or at the device.
    pub(super) dispatched: usize,
    /// On the service tree (it has queued requests).
    pub(super) on_rr: bool,
    /// Its place on the tree: class rank, key, insertion number.
    pub(super) tree_key: Option<(u8, i64, u64)>,
    /// The slice has not started.
    pub(super) slice_new: bool,
    /// When the slice ends, once started.
    pub(super) slice_end: Nanos,
    /// Slice left over when last cut short (2.6.28 adds it to the next tree key).
    pub(super) slice_resid: i64,
    /// Requests dispatched in this slice.
    pub(super) slice_dispatched: u64,
    /// The idle timer waits for its next request.
    pub(super) wait_request: bool,
    /// A request arrived while idling: serve it even past the slice (2004).
    pub(super) must_dispatch: bool,
    /// Its FIFO was looked at in this slice.
    pub(super) fifo_checked: bool,
    /// It may idle when it runs dry.
    pub(super) idle_window: bool,
}

impl LegacyQueue {
    /// A fresh queue.
    pub(super) fn new(sync: bool, priority: IoPriority) -> Self {
        let level = match priority.class {
            PriorityClass::Idle => IoPriority::LEVELS - 1,
            _ => priority.level.min(IoPriority::LEVELS - 1),
        };
        Self {
            process: None,
            sync,
            class: priority.class,
            level,
            sort_list: BTreeSet::new(),
            fifo: BTreeSet::new(),
            merges: MergeIndex::default(),
            next: None,
            dispatched: 0,
            on_rr: false,
            tree_key: None,
            slice_new: true,
            slice_end: 0,
            slice_resid: 0,
            slice_dispatched: 0,
            wait_request: false,
            must_dispatch: false,
            fifo_checked: false,
            idle_window: sync && priority.class != PriorityClass::Idle,
        }
    }

    /// Nothing queued.
    pub(super) fn is_empty(&self) -> bool {
        self.sort_list.is_empty()
    }

    /// IDLE class.
    pub(super) fn is_idle_class(&self) -> bool {
        self.class == PriorityClass::Idle
    }

    /// Real-time class.
    pub(super) fn is_real_time(&self) -> bool {
        self.class == PriorityClass::RealTime
    }

    /// Its rank on the tree: RT first, IDLE last.
    pub(super) fn class_rank(&self) -> u8 {
        match self.class {
            PriorityClass::RealTime => 0,
            PriorityClass::BestEffort => 1,
            PriorityClass::Idle => 2,
        }
    }
}

/// Which queue a request of a process joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum QueueKey {
    /// A process's own queue (sync queue, or every request in the 2004 patch).
    Process(ProcessId),
    /// The shared async queue of a class and level.
    Async(usize, u8),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_mean_turns_seeky_after_three_far_samples() {
        let mut seek = SeekMean::default();
        seek.record(100_000);
        seek.record(100_000);
        assert!(!seek.seeky(), "two samples are not enough");
        seek.record(100_000);
        assert!(seek.valid());
        // Weights 32, 60, 84 (of 256) against totals that lag them: the mean reads 0.6 % high.
        assert_eq!(seek.mean, 100_595);
        assert!(seek.seeky());
        let mut near = SeekMean::default();
        for _ in 0..10 {
            near.record(7_000);
        }
        assert!(!near.seeky(), "7000 sectors a seek is not seeky");
    }
}
