//! Idling: when a sync queue runs dry, keep the device for it `slice_idle` in case its process
//! issues a nearby request soon (defeating "deceptive idleness"), and decide whom that is worth
//! doing for.
//!
//! * *Think time* is an EWMA (7/8, ×256 fixed point) of the gap between a sync completion and
//!   the process's next request, each sample capped at `2 × slice_idle`; it counts after a few
//!   samples. A process thinking longer than `slice_idle` gets no idle window.
//! * *Seek history*: the last 32 requests, each seeky if more than 800 sectors from the previous
//!   one on rotational media (smaller than 64 sectors on flash); a queue with more than 4 seeky
//!   requests is seeky and gets no idle window, unless it is *deep* (has had 4 or more requests
//!   queued at once). No idle window either when `slice_idle` is 0 or the process exited.
//! * A queue with an idle window idles; one without idles only as the last queue of its service
//!   tree (so seeky processes together still keep the disk), and never on a queueing flash device.
//! * The timer is not armed while the queue has requests in flight, when the process exited, or
//!   when its think time exceeds what is left of the slice. With queue idling off, `group_idle`
//!   idles on a group's last queue instead. A group's last queue whose slice is about to end
//!   waits busy for one more idle period so its group stays on the tree.

use crate::trace::{IdleEnd, IdleKind, ServiceEnd};
use crate::{Nanos, ProcessId};

use super::{Cfq, QueueId};

/// The idle window: the timer, what it waits for, and whether the trace shows it open.
#[derive(Debug, Clone)]
pub(super) struct IdleWindow {
    /// When the timer fires, if armed.
    pub(super) timer: Option<Nanos>,
    /// What the armed timer waits for (the trace's kind of idle window).
    pub(super) kind: IdleKind,
    /// The trace shows an idle window open.
    pub(super) traced: bool,
}

impl Default for IdleWindow {
    fn default() -> Self {
        Self {
            timer: None,
            kind: IdleKind::Queue,
            traced: false,
        }
    }
}

/// Think-time samples (×256) above which the mean is trusted: three samples.
const VALID_SAMPLES: u64 = 80;
/// Fixed point of the think-time EWMA.
const EWMA_SCALE: u64 = 256;
/// A request further than this from the previous one is a seek, on rotational media.
const SEEK_THRESHOLD: u64 = 800;
/// A request smaller than this is seeky on non-rotational media.
const NONROTATIONAL_SMALL_REQUEST: u32 = 64;
/// A queue is seeky with more seeky requests than this among its last 32.
const SEEKY_REQUESTS: u32 = 32 / 8;
/// A queue that has had this many requests queued at once is deep.
const DEEP_QUEUE: usize = 4;
/// Requests of at most a page do not stop the idle wait of a queue that is alone.
const PAGE_SIZE: u64 = 4096;

/// Mean time between a completion and the next request (the kernel's `cfq_ttime`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ThinkTime {
    /// Sample weight, ×256, tending to 256.
    samples: u64,
    /// Weighted sum of samples, ×256: at most 256 × the largest sample, which is capped at
    /// twice a tunable of at most `INT_MAX` ms (4.3e15 ns), so 1.1e18, and seven times it
    /// plus a new sample still fits 64 bits.
    total: u64,
    /// The mean.
    pub(super) mean: Nanos,
    /// The last completion.
    pub(super) last_end: Nanos,
}

impl ThinkTime {
    /// No samples yet; the first is measured from `now`.
    pub(super) fn starting_at(now: Nanos) -> Self {
        Self {
            last_end: now,
            ..Self::default()
        }
    }

    /// A request arrived at `now`: one more sample, capped at `cap`.
    pub(super) fn record(&mut self, now: Nanos, cap: Nanos) {
        let elapsed = now.saturating_sub(self.last_end).min(cap);
        self.samples = (7 * self.samples + 256) / 8;
        // Saturating only past the bound above, which the tunables keep it within.
        let total = self
            .total
            .saturating_mul(7)
            .saturating_add(EWMA_SCALE.saturating_mul(elapsed));
        self.total = total / 8;
        self.mean = self.total.saturating_add(128) / self.samples;
    }

    /// Whether enough samples were seen to trust the mean.
    pub(super) fn valid(&self) -> bool {
        self.samples > VALID_SAMPLES
    }

    /// Whether the mean is trusted and exceeds `limit` (the kernel's `cfq_io_thinktime_big`).
    pub(super) fn exceeds(&self, limit: Nanos) -> bool {
        self.valid() && self.mean > limit
    }
}

/// Which of a queue's last 32 requests were seeks.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SeekHistory {
    bits: u32,
    /// End sector of the previous request.
    last_end: Option<u64>,
}

impl SeekHistory {
    /// Record a request.
    pub(super) fn record(&mut self, sector: u64, sectors: u32, rotational: bool) {
        let distance = self.last_end.map_or(0, |end| end.abs_diff(sector));
        let seeky = if rotational {
            distance > SEEK_THRESHOLD
        } else {
            sectors < NONROTATIONAL_SMALL_REQUEST
        };
        self.bits = (self.bits << 1) | u32::from(seeky);
        self.last_end = Some(sector.saturating_add(u64::from(sectors)));
    }

    /// Whether more than 4 of the last 32 requests were seeky.
    pub(super) fn seeky(&self) -> bool {
        self.bits.count_ones() > SEEKY_REQUESTS
    }
}

/// What decides a sync queue's idle window.
#[derive(Debug, Clone, Copy)]
pub(super) struct IdleWindowFacts {
    /// The window as it stands.
    pub(super) current: bool,
    /// The process exited.
    pub(super) exited: bool,
    /// `slice_idle` is 0.
    pub(super) idling_off: bool,
    /// The queue is seeky.
    pub(super) seeky: bool,
    /// The queue is deep.
    pub(super) deep: bool,
    /// The process's mean think time, if trusted.
    pub(super) think_time: Option<Nanos>,
    /// `slice_idle`.
    pub(super) slice_idle: Nanos,
}

/// Whether a sync queue gets an idle window (the kernel's `cfq_update_idle_window`).
pub(super) fn idle_window(facts: IdleWindowFacts) -> bool {
    if facts.exited || facts.idling_off || (facts.seeky && !facts.deep) {
        return false;
    }
    match facts.think_time {
        Some(mean) => mean <= facts.slice_idle,
        None => facts.current,
    }
}

impl Cfq {
    /// A request arrived: sample think times of its process and tree (sync) and group.
    pub(super) fn update_think_times(&mut self, queue: QueueId, process: ProcessId, now: Nanos) {
        let q = &self.queues[queue];
        let group = q.group.index();
        let slice_cap = self.config.slice_idle.saturating_mul(2);
        if q.sync {
            if let Some(position) = q.tree_position {
                self.groups[group].trees[position.tree.index()]
                    .think_time
                    .record(now, slice_cap);
            }
            if let Some(state) = self.processes.get_mut(&process) {
                state.think_time.record(now, slice_cap);
            }
        }
        let group_cap = self.config.group_idle.saturating_mul(2);
        self.groups[group].think_time.record(now, group_cap);
    }

    /// A request arrived: re-decide whether its sync queue idles.
    pub(super) fn update_idle_window(&mut self, queue: QueueId, process: ProcessId) {
        let q = &self.queues[queue];
        if !q.sync || q.is_idle_class() {
            return;
        }
        let deep = q.deep || q.queued() >= DEEP_QUEUE;
        let state = self.processes.get(&process);
        let facts = IdleWindowFacts {
            current: q.idle_window,
            exited: state.is_none_or(|state| state.exited),
            idling_off: self.config.slice_idle == 0,
            seeky: q.seek.seeky(),
            deep,
            think_time: state
                .map(|state| state.think_time)
                .filter(ThinkTime::valid)
                .map(|think_time| think_time.mean),
            slice_idle: self.config.slice_idle,
        };
        let q = &mut self.queues[queue];
        q.deep = deep;
        q.idle_window = idle_window(facts);
    }

    /// No queue idling on a non-rotational device that queues commands.
    fn flash_with_queueing(&self) -> bool {
        !self.rotational && self.hw_tag.present()
    }

    /// Whether CFQ idles for this queue when it runs dry (the kernel's `cfq_should_idle`).
    pub(super) fn should_idle(&self, queue: QueueId) -> bool {
        let q = &self.queues[queue];
        if self.config.slice_idle == 0 || q.is_idle_class() || q.tree_position.is_none() {
            return false;
        }
        if q.idle_window && !self.flash_with_queueing() {
            return true;
        }
        // Service-tree idling: the last queue of its tree idles for the tree's processes.
        let tree = self.tree_of(queue);
        tree.count() == 1 && q.sync && !tree.think_time.exceeds(self.config.slice_idle)
    }

    /// The active queue ran dry: arm the idle timer if waiting is worth it (the kernel's
    /// `cfq_arm_slice_timer`).
    pub(super) fn arm_slice_timer(&mut self, now: Nanos) {
        let Some(queue) = self.active else {
            return;
        };
        if self.flash_with_queueing() {
            return;
        }
        let group_idle = !self.should_idle(queue);
        if group_idle && self.config.group_idle == 0 {
            return;
        }
        if self.queues[queue].dispatched > 0 || !self.active_process_thinks_in_time(queue, now) {
            return;
        }
        if group_idle && !self.group_waits_for_last_queue(queue) {
            return;
        }
        self.queues[queue].wait_request = true;
        let wait = if group_idle {
            self.config.group_idle
        } else {
            self.config.slice_idle
        };
        self.idle.timer = Some(now.saturating_add(wait));
        self.idle.kind = if group_idle {
            IdleKind::Group
        } else {
            IdleKind::Queue
        };
        self.start_idle_window(queue, wait);
    }

    /// The active process is alive and, as far as its think time tells, will issue its next
    /// request before the slice ends.
    fn active_process_thinks_in_time(&self, queue: QueueId, now: Nanos) -> bool {
        let Some(state) = self.active_process.and_then(|p| self.processes.get(&p)) else {
            return false;
        };
        let left = self.queues[queue].slice.end.saturating_sub(now);
        let thinks_too_long = state.think_time.valid() && left < state.think_time.mean;
        !(state.exited || thinks_too_long)
    }

    /// Group idling applies to a group's only queue, when its tree's think time is short.
    fn group_waits_for_last_queue(&self, queue: QueueId) -> bool {
        let group = &self.groups[self.queues[queue].group.index()];
        group.nr_queues <= 1
            && !self
                .tree_of(queue)
                .think_time
                .exceeds(self.config.group_idle)
    }

    /// Whether the group's last queue, empty at a completion, keeps its slice one idle period
    /// longer so the group is not taken off the tree (the kernel's `cfq_should_wait_busy`).
    pub(super) fn should_wait_busy(&self, queue: QueueId, now: Nanos) -> bool {
        let q = &self.queues[queue];
        let group = &self.groups[q.group.index()];
        if !q.is_empty() || group.nr_queues > 1 || group.think_time.exceeds(self.config.group_idle)
        {
            return false;
        }
        if self.slice_used(queue, now) {
            return true;
        }
        let left = q.slice.end.saturating_sub(now);
        self.active_process
            .and_then(|p| self.processes.get(&p))
            .is_some_and(|state| state.think_time.valid() && left < state.think_time.mean)
    }

    /// A request arrived for the active queue while it idled: stop waiting, unless it is a
    /// small request and the queue is alone (then it must simply go out next).
    pub(super) fn request_for_active_queue(&mut self, queue: QueueId, bytes: u64) {
        if !self.queues[queue].wait_request {
            return;
        }
        self.end_idle_window(queue, IdleEnd::RequestArrived);
        if bytes > PAGE_SIZE || self.busy_queues > 1 {
            self.idle.timer = None;
            self.queues[queue].wait_request = false;
        } else {
            self.queues[queue].must_dispatch = true;
        }
    }

    /// A seeky queue that turned out not to need its idle window — the device served it faster
    /// than it used its slice — loses it (and its depth).
    pub(super) fn stop_idling_for_fast_seeker(&mut self, queue: QueueId, now: Nanos) {
        let q = &self.queues[queue];
        if !(q.seek.seeky() && q.idle_window) {
            return;
        }
        let fast = q.slice.new || {
            let start = q.slice.start.unwrap_or(now);
            q.slice.end.saturating_sub(now) > now.saturating_sub(start)
        };
        if fast {
            let q = &mut self.queues[queue];
            q.deep = false;
            q.idle_window = false;
        }
    }

    /// Fire the idle timer if it is due (the kernel's `cfq_idle_slice_timer`): the queue's
    /// slice ends unless a request arrived meanwhile.
    pub(super) fn fire_idle_timer(&mut self, now: Nanos) {
        if self.idle.timer.is_none_or(|deadline| now < deadline) {
            return;
        }
        self.idle.timer = None;
        let Some(queue) = self.active else {
            return;
        };
        self.end_idle_window(queue, IdleEnd::Timer);
        self.queues[queue].wait_request = false;
        if self.queues[queue].must_dispatch {
            return;
        }
        let reason = if self.slice_used(queue, now) {
            ServiceEnd::SliceExpired
        } else {
            if self.busy_queues == 0 || !self.queues[queue].is_empty() {
                return;
            }
            // The wait failed: the queue no longer counts as deep.
            self.queues[queue].deep = false;
            ServiceEnd::IdleTimeout
        };
        self.expire_active(false, reason, now);
    }

    /// A sync request completed: its process's and tree's think times start counting, and a
    /// sync request that waited too long delays async depth.
    pub(super) fn sync_request_completed(
        &mut self,
        queue: QueueId,
        request: &crate::Request,
        now: Nanos,
    ) {
        if let Some(state) = self.processes.get_mut(&request.process) {
            state.think_time.last_end = now;
        }
        let q = &self.queues[queue];
        let tree = q
            .tree_position
            .map_or_else(|| self.tree_index(queue), |position| position.tree);
        self.groups[q.group.index()].trees[tree.index()]
            .think_time
            .last_end = now;
        if request
            .submit_time
            .saturating_add(self.config.fifo_expire_sync)
            <= now
        {
            self.device.last_delayed_sync = Some(now);
        }
    }

    /// The active queue completed a request: start its slice, wait busy, expire it, or idle.
    pub(super) fn active_queue_completed(&mut self, queue: QueueId, sync: bool, now: Nanos) {
        if self.queues[queue].slice.new {
            self.start_slice(queue, now);
        }
        if self.should_wait_busy(queue, now) {
            let extend = if self.config.slice_idle > 0 {
                self.config.slice_idle
            } else {
                self.config.group_idle
            };
            let q = &mut self.queues[queue];
            q.slice.end = now.saturating_add(extend);
            q.wait_busy = true;
        }
        if self.slice_used(queue, now) || self.queues[queue].is_idle_class() {
            let reason = if self.slice_used(queue, now) {
                ServiceEnd::SliceExpired
            } else {
                ServiceEnd::IdleClass
            };
            self.expire_active(true, reason, now);
        } else if sync && self.queues[queue].is_empty() && self.close_cooperator(queue).is_none() {
            self.arm_slice_timer(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{ms, us};

    fn facts() -> IdleWindowFacts {
        IdleWindowFacts {
            current: true,
            exited: false,
            idling_off: false,
            seeky: false,
            deep: false,
            think_time: None,
            slice_idle: ms(8),
        }
    }

    #[test]
    fn think_time_counts_after_three_samples_and_caps_samples() {
        let mut think = ThinkTime::starting_at(0);
        for i in 1..=2 {
            think.record(i * ms(1), ms(16));
            think.last_end = i * ms(1) + 1;
        }
        assert!(!think.valid());
        think.record(ms(100), ms(16));
        assert!(think.valid(), "three samples");
        // Samples 1 ms, ~1 ms, then 97 ms capped to 16 ms.
        assert!(think.mean > ms(1) && think.mean < ms(16), "{}", think.mean);
        let mut steady = ThinkTime::starting_at(0);
        for i in 0..50 {
            steady.last_end = i * ms(1);
            steady.record(i * ms(1) + us(20), ms(16));
        }
        // The kernel's integer EWMA settles its sample weight at 249/256, so the mean reads
        // up to 256/249 of the true one.
        let high = (256 * us(20)).div_ceil(249);
        assert!(
            steady.mean > us(20) && steady.mean <= high,
            "{}",
            steady.mean
        );
    }

    #[test]
    fn seeky_needs_more_than_four_of_thirty_two() {
        let mut history = SeekHistory::default();
        history.record(0, 8, true);
        for i in 0..4 {
            history.record(1_000_000 * (i + 1), 8, true);
        }
        assert!(!history.seeky(), "four seeks");
        history.record(10, 8, true);
        assert!(history.seeky(), "five seeks");
        let mut sequential = SeekHistory::default();
        for i in 0..40 {
            sequential.record(i * 8, 8, true);
        }
        assert!(!sequential.seeky());
        let mut flash = SeekHistory::default();
        for i in 0..5 {
            flash.record(i * 8, 8, false);
        }
        assert!(flash.seeky(), "small requests count as seeky on flash");
    }

    #[test]
    fn idle_window_decisions() {
        assert!(idle_window(facts()));
        let long_thinker = IdleWindowFacts {
            think_time: Some(ms(9)),
            ..facts()
        };
        assert!(!idle_window(long_thinker), "think time too long");
        let quick = IdleWindowFacts {
            current: false,
            think_time: Some(ms(8)),
            ..facts()
        };
        assert!(
            idle_window(quick),
            "think time within slice_idle reopens it"
        );
        assert!(
            !idle_window(IdleWindowFacts {
                seeky: true,
                ..facts()
            }),
            "seeky"
        );
        assert!(
            idle_window(IdleWindowFacts {
                seeky: true,
                deep: true,
                ..facts()
            }),
            "seeky but deep"
        );
        assert!(
            !idle_window(IdleWindowFacts {
                idling_off: true,
                ..facts()
            }),
            "slice_idle=0"
        );
        assert!(
            !idle_window(IdleWindowFacts {
                exited: true,
                ..facts()
            }),
            "exited"
        );
    }
}
