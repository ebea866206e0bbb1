//! Batches: AS serves the sync class and the async class in alternating batches.
//!
//! A sync batch lasts `read_batch_expire`, but its clock only runs while async requests
//! compete (with none waiting it is pushed forward at every dispatch). An async batch is
//! aimed at `write_batch_expire` and enforced by a request budget, `write_batch_count`,
//! tuned after each async batch by how long it really took: overran by more than 3× → the
//! budget halves; overran less → one fewer; finished early with its budget spent → doubles
//! when the target was over 3× the time taken, otherwise one more; never below 1. A batch
//! that went idle (no competing sync requests, or nothing left to write) is not timed.
//!
//! Changing class waits for every request at the device to complete (`changed_batch`), and
//! a sync batch's clock starts at the first sync completion of that batch, so a drive's
//! write cache or queue does not eat the new batch's time. FIFO expiry is checked at most
//! once per expire interval per class, so a backlog of expired requests cannot turn into a
//! seek storm.
//!
//! Source: Linux's `block/as-iosched.c` (`update_write_batch`, `as_batch_expired`,
//! `as_fifo_expired`) and `Documentation/block/as-iosched.txt` §3; where the kernel's versions
//! differ the default follows the last one (2.6.32): a batch change that waited for the device
//! starts the new batch's clock at the last completion (from 2.6.27), and a new async batch
//! starts at its FIFO head (from 2.6.24); the `version` tunable selects the older rules
//! (see [`super::version`]). Our own code.

use super::class::Class;
use super::version::Behaviour;
use crate::Nanos;

/// Batch state (the kernel's `batch_data_dir`, `changed_batch`, `new_batch`,
/// `current_batch_expires`, `write_batch_count`, `current_write_count`,
/// `write_batch_idled`, `last_check_fifo` and `nr_dispatched`).
#[derive(Debug, Clone)]
pub(super) struct Batches {
    /// The class of the current batch.
    pub class: Class,
    /// The class changed and requests of the old batch are still at the device.
    pub changed: bool,
    /// A sync batch has begun; its clock starts at its first sync completion.
    awaiting_first_completion: bool,
    /// When the current batch ends.
    expires: Nanos,
    /// Request budget of an async batch (auto-tuned).
    pub write_batch_count: u64,
    /// Requests left in the current async batch's budget.
    writes_left: u64,
    /// The async batch ran out of work or competition, so its length says nothing.
    write_batch_idled: bool,
    /// Requests at the device, of either class.
    pub in_flight: usize,
    /// Last FIFO check per class.
    last_fifo_check: [Nanos; 2],
    /// `read_batch_expire` and `write_batch_expire`.
    batch_expire: [Nanos; 2],
    /// `read_expire` and `write_expire`: also the spacing of FIFO checks.
    fifo_expire: [Nanos; 2],
    /// The release's rules for batch changes (see [`Behaviour`]).
    behaviour: Behaviour,
}

impl Batches {
    /// Start in a sync batch, with the initial write budget of one request per 10 ms of
    /// `write_batch_expire`, at least 2 (the kernel's `batch_expire / 10` in jiffies at HZ=1000).
    ///
    /// The kernel starts with an async batch marker, so that its first read changes batch
    /// and tunes a write batch that never ran; we start in the sync batch instead.
    pub fn new(batch_expire: [Nanos; 2], fifo_expire: [Nanos; 2]) -> Self {
        let per_10_ms = batch_expire[Class::Async.index()] / crate::time::ms(10);
        Self {
            class: Class::Sync,
            changed: false,
            awaiting_first_completion: false,
            expires: batch_expire[Class::Sync.index()],
            write_batch_count: per_10_ms.max(2),
            writes_left: 0,
            write_batch_idled: false,
            in_flight: 0,
            last_fifo_check: [0; 2],
            batch_expire,
            fifo_expire,
            behaviour: Behaviour::of(super::version::NEWEST as u64),
        }
    }

    /// The same, changing batches as `behaviour` says.
    pub fn with_behaviour(mut self, behaviour: Behaviour) -> Self {
        self.behaviour = behaviour;
        self
    }

    /// Whether the current batch is over: its time has passed, or for an async batch, its
    /// budget is spent. Never while a class change or a new sync batch is settling.
    pub fn expired(&self, now: Nanos) -> bool {
        if self.changed || self.awaiting_first_completion {
            return false;
        }
        now > self.expires || (self.class == Class::Async && self.writes_left == 0)
    }

    /// Whether a class's FIFO is due for a check (at most once per its expire time);
    /// a due check is recorded as done.
    pub fn fifo_check_due(&mut self, class: Class, now: Nanos) -> bool {
        let last = &mut self.last_fifo_check[class.index()];
        if now.saturating_sub(*last) < self.fifo_expire[class.index()] {
            return false;
        }
        *last = now;
        true
    }

    /// Called at every dispatch: an async batch with no sync request competing, and with
    /// its budget spent or nothing to write, has gone idle and will not be timed.
    pub fn note_idle_write_batch(&mut self, sync_pending: bool, async_pending: bool) {
        if self.class == Class::Async && !sync_pending && (self.writes_left == 0 || !async_pending)
        {
            self.write_batch_idled = true;
        }
    }

    /// With no async request waiting, a sync batch's clock does not run.
    pub fn extend_sync_batch(&mut self, now: Nanos) {
        self.expires = now.saturating_add(self.batch_expire[Class::Sync.index()]);
    }

    /// Choose the class of a new batch: sync if sync requests wait, unless the batch that
    /// just ended was sync and async requests wait too. Returns the class; a change of
    /// class is marked to wait for the old batch's requests.
    pub fn choose_next(&mut self, sync_pending: bool, async_pending: bool, now: Nanos) -> Class {
        if sync_pending && !(async_pending && self.class == Class::Sync) {
            if self.class == Class::Async {
                self.changed = true;
            }
            self.class = Class::Sync;
            self.last_fifo_check[Class::Sync.index()] = now;
            return Class::Sync;
        }
        if self.class == Class::Sync {
            self.changed = true;
            self.awaiting_first_completion = false;
        }
        self.class = Class::Async;
        self.writes_left = self.write_batch_count;
        self.write_batch_idled = false;
        // Before 2.6.24 a new async batch neither started at its FIFO head nor reset its
        // FIFO check.
        if self.behaviour.async_batch_at_fifo_head {
            self.last_fifo_check[Class::Async.index()] = now;
        }
        Class::Async
    }

    /// Before dispatching the first request after a class change: `false` while requests of
    /// the old batch are still at the device. Otherwise the new batch starts: an async batch's
    /// clock now, a sync batch's at its first completion.
    pub fn settle_change(&mut self, now: Nanos) -> bool {
        if !self.changed {
            return true;
        }
        if self.in_flight > 0 {
            return false;
        }
        match self.class {
            Class::Async => {
                self.expires = now.saturating_add(self.batch_expire[Class::Async.index()]);
            }
            Class::Sync => self.awaiting_first_completion = true,
        }
        self.changed = false;
        true
    }

    /// A request of `class` went to the device.
    pub fn dispatched(&mut self, class: Class) {
        self.in_flight += 1;
        if class == Class::Async {
            self.writes_left = self.writes_left.saturating_sub(1);
        }
    }

    /// A request of `class` completed. The last request of an old batch lets a waiting class
    /// change go ahead and starts the new batch's clock; the first sync completion of a new
    /// sync batch restarts it and retunes the write budget from the async batch before it.
    pub fn completed(&mut self, class: Class, now: Nanos) {
        if self.changed && self.in_flight == 1 {
            if self.behaviour.clock_at_drain {
                self.expires = now.saturating_add(self.batch_expire[self.class.index()]);
            }
            self.changed = false;
            if self.class == Class::Sync {
                self.awaiting_first_completion = true;
            }
        }
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.awaiting_first_completion && self.class == class {
            self.retune_write_batch(now);
            self.expires = now.saturating_add(self.batch_expire[Class::Sync.index()]);
            self.awaiting_first_completion = false;
        }
    }

    /// Resize `write_batch_count` by how long the last async batch took against its target.
    fn retune_write_batch(&mut self, now: Nanos) {
        let target = self.batch_expire[Class::Async.index()];
        // The async batch was due to end at `expires`, `target` after it started.
        let took = now.saturating_add(target).saturating_sub(self.expires);
        let count = &mut self.write_batch_count;
        if took > target && !self.write_batch_idled {
            if took > target.saturating_mul(3) {
                *count /= 2;
            } else {
                *count = count.saturating_sub(1);
            }
        } else if took < target && self.writes_left == 0 {
            if target > took.saturating_mul(3) {
                *count = count.saturating_mul(2);
            } else {
                *count += 1;
            }
        }
        *count = (*count).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn batches() -> Batches {
        Batches::new([ms(500), ms(125)], [ms(125), ms(250)])
    }

    /// Run an async batch that started at `start` with `budget` requests, of which `used`
    /// were dispatched, then the first sync completion at `end`. Returns the new budget.
    fn retuned(budget: u64, used: u64, start: Nanos, end: Nanos, idled: bool) -> u64 {
        let mut b = batches();
        b.write_batch_count = budget;
        assert_eq!(b.choose_next(false, true, start), Class::Async);
        assert!(b.settle_change(start));
        for _ in 0..used {
            b.dispatched(Class::Async);
            b.completed(Class::Async, start);
        }
        b.write_batch_idled = idled;
        assert_eq!(b.choose_next(true, true, end), Class::Sync);
        assert!(b.settle_change(end));
        b.dispatched(Class::Sync);
        b.completed(Class::Sync, end);
        b.write_batch_count
    }

    #[test]
    fn write_batch_count_auto_tuning() {
        let start = ms(1000);
        // Overran 125 ms by more than 3× (400 ms): halve.
        assert_eq!(retuned(12, 12, start, start + ms(400), false), 6);
        // Overran less (200 ms): one fewer.
        assert_eq!(retuned(12, 12, start, start + ms(200), false), 11);
        // An idle batch is not timed.
        assert_eq!(retuned(12, 12, start, start + ms(400), true), 12);
        // Budget spent in 40 ms (< 125/3): double.
        assert_eq!(retuned(12, 12, start, start + ms(40), false), 24);
        // Budget spent in 100 ms: one more.
        assert_eq!(retuned(12, 12, start, start + ms(100), false), 13);
        // Ended early with budget left (the writes ran out): unchanged.
        assert_eq!(retuned(12, 3, start, start + ms(40), false), 12);
        // Never below 1.
        assert_eq!(retuned(1, 1, start, start + ms(400), false), 1);
    }

    #[test]
    fn fifo_checks_are_rate_limited_per_class() {
        let mut b = batches();
        assert!(!b.fifo_check_due(Class::Sync, ms(124)));
        assert!(b.fifo_check_due(Class::Sync, ms(125)));
        assert!(!b.fifo_check_due(Class::Sync, ms(249)));
        assert!(b.fifo_check_due(Class::Sync, ms(250)));
        assert!(b.fifo_check_due(Class::Async, ms(250)));
        assert!(!b.fifo_check_due(Class::Async, ms(499)));
    }

    #[test]
    fn a_class_change_waits_for_the_old_batch() {
        let mut b = batches();
        b.dispatched(Class::Sync);
        b.dispatched(Class::Sync);
        assert_eq!(b.choose_next(true, true, 0), Class::Async);
        assert!(!b.settle_change(0));
        b.completed(Class::Sync, ms(1));
        assert!(!b.settle_change(ms(1)));
        b.completed(Class::Sync, ms(2));
        assert!(b.settle_change(ms(2)));
        // The async batch's clock started at the last completion: 2 + 125 ms.
        assert!(!b.expired(ms(127)));
        assert!(b.expired(ms(127) + 1));
    }
}
