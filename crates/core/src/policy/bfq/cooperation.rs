//! Early queue merging (EQM, the kernel's `bfq_setup_cooperator`, `bfq_merge_bfqqs` and
//! `bfq_split_bfqq`). Processes that read one file in interleaved chunks — each its own
//! chunk, the next one a little further on — each look random to a per-process queue, yet
//! together they read sequentially. When a young sync queue's request lands within
//! [`CLOSE_SECTORS`] of where the queue in service last read, or of another busy queue's next
//! request in the same group, the process's queue is merged into that queue: from then on its
//! requests go there, sorted among its cooperators' and served in one stream. A merged
//! queue that turns seeky is split again: each process gets a queue of its own at its next
//! request.
//!
//! Merging is only tried in the first [`MERGE_TIME_LIMIT`] of a queue's life (or before it
//! was first served), never for the IDLE class, async queues, seeky queues or queues of
//! different priorities, and never on a non-rotational device that queues commands, where
//! interleaving costs nothing.
//!
//! Processes spawned together merge by another rule, stable merging (`stable_merge.rs`).
//!
//! Not modelled: the kernel's per-process saved state — a process split off a shared queue starts from the shared
//! queue's think time, seek history and I/O-boundness, not from what it had before the merge.
//!
//! Source: Linux's `block/bfq-iosched.c`: the functions named at the top, with
//! `bfq_find_close_cooperator` and `bfq_may_be_close_cooperator`. Our own code.

use crate::time::ms;
use crate::trace::Traced;
use crate::trace::{IdleEnd, RaiseEnd};
use crate::{Nanos, PriorityClass, ProcessId, Request, TraceEvent};

use super::queue::{Expiration, QueueId};
use super::Bfq;

/// Requests this close (in sectors) count as one stream (`BFQQ_CLOSE_THR`).
pub(super) const CLOSE_SECTORS: u64 = 8 * 1024;
/// A queue served for longer than this after its first request is no longer merged
/// (`bfq_merge_time_limit`).
pub(super) const MERGE_TIME_LIMIT: Nanos = ms(100);

impl Bfq {
    /// The queue a sync request of `id`'s process should go to instead of `id`, if any: the
    /// process's queue is merged into it here.
    pub(super) fn cooperate(&mut self, id: QueueId, request: &Request, now: Nanos) -> QueueId {
        if let Some(target) = self.stable_merge_due(id, request, now) {
            return target;
        }
        match self.cooperator(id, request.sector, now) {
            Some(target) => {
                self.merge_queues(request.process, id, target, now);
                target
            }
            None => id,
        }
    }

    /// Whether merging can pay on this device: not on flash that queues commands.
    fn merging_pays(&self) -> bool {
        self.rotational || !self.hw_tag.queueing()
    }

    /// The queue in service if it last read close to `sector`, else the busy queue of the same
    /// group whose next request is closest to `sector`, within [`CLOSE_SECTORS`].
    fn cooperator(&self, id: QueueId, sector: u64, now: Nanos) -> Option<QueueId> {
        let queue = self.queue(id);
        if !self.merging_pays()
            || !queue.sync
            || queue.processes == 0
            || queue.class == PriorityClass::Idle
            || queue.seek.seeky()
            || self.too_late_for_merging(id, now)
        {
            return None;
        }
        if let Some(target) = self.merge_target(id) {
            return Some(target);
        }
        let in_service = self.in_service.filter(|&current| {
            current != id
                && sector.abs_diff(self.in_service_last_position) <= CLOSE_SECTORS
                && self.may_cooperate(id, current)
        });
        in_service.or_else(|| self.closest_busy_queue(id, sector))
    }

    /// Where another process of `id` went when it was merged away (the kernel's `new_bfqq`),
    /// following further merges: the other processes of a shared queue follow at their next
    /// request.
    fn merge_target(&self, id: QueueId) -> Option<QueueId> {
        let mut target = self.queue(id).merged_into?;
        for _ in 0..self.queues.len() {
            let next = self.queues.get(target)?.as_ref()?.merged_into;
            match next {
                Some(next) if next != id && next != target => target = next,
                _ => break,
            }
        }
        let live = self.queues.get(target).is_some_and(Option::is_some);
        (live && target != id && self.may_cooperate(id, target)).then_some(target)
    }

    /// The busy queue, other than `id`, whose next request is closest to `sector` and close.
    fn closest_busy_queue(&self, id: QueueId, sector: u64) -> Option<QueueId> {
        self.queues
            .iter()
            .enumerate()
            .filter_map(|(other, queue)| {
                let queue = queue.as_ref()?;
                let next = queue.next_request.filter(|_| queue.busy && other != id)?;
                let distance = self.store.slab.get(next).sector.abs_diff(sector);
                (distance <= CLOSE_SECTORS).then_some((distance, other))
            })
            .filter(|&(_, other)| self.may_cooperate(id, other))
            .min()
            .map(|(_, other)| other)
    }

    /// Whether `id` may merge into `target` (`bfq_may_be_close_cooperator` and the checks of
    /// `bfq_setup_merge`): both sync, neither seeky nor IDLE class, the same priority and
    /// group, and `target` still has processes.
    fn may_cooperate(&self, id: QueueId, target: QueueId) -> bool {
        let (queue, other) = (self.queue(id), self.queue(target));
        other.sync
            && other.processes > 0
            && other.class != PriorityClass::Idle
            && (other.class, other.level) == (queue.class, queue.level)
            && other.group == queue.group
            && !other.seek.seeky()
    }

    /// A queue that was served and is older than [`MERGE_TIME_LIMIT`] keeps to itself.
    fn too_late_for_merging(&self, id: QueueId, now: Nanos) -> bool {
        let queue = self.queue(id);
        queue.served && now > queue.created.saturating_add(MERGE_TIME_LIMIT)
    }

    /// `process` moves from queue `from` to `target`, which becomes shared; `from` keeps the
    /// requests it has and goes away once they are served and no process uses it.
    pub(super) fn merge_queues(
        &mut self,
        process: ProcessId,
        from: QueueId,
        target: QueueId,
        now: Nanos,
    ) {
        self.emit(|bfq| TraceEvent::QueueMerge {
            process,
            from: bfq.queue_ref(from),
            into: bfq.queue_ref(target),
        });
        self.sync_queues.insert(process, target);
        let io_bound = self.queue(from).io_bound;
        let target_queue = self.queue_mut(target);
        target_queue.processes += 1;
        target_queue.coop = true;
        target_queue.io_bound |= io_bound;
        self.hand_over_raising(from, target, now);
        let queue = self.queue_mut(from);
        queue.merged_into = Some(target);
        queue.processes = queue.processes.saturating_sub(1);
        queue.io_bound = false;
        if queue.processes == 0 {
            self.no_process_left(from, now);
        }
    }

    /// A raised queue merged into an unraised one passes its raising on.
    fn hand_over_raising(&mut self, from: QueueId, target: QueueId, now: Nanos) {
        if self.queue(from).raising.coefficient == 1 || self.queue(target).raising.coefficient > 1 {
            return;
        }
        if let Some(kind) = self.queue(from).raising.kind() {
            self.trace_raise_end(from, kind, RaiseEnd::HandedOver);
        }
        for (id, raising) in [
            (target, self.queue(from).raising.clone()),
            (from, Default::default()),
        ] {
            let (old_weight, was_raised) = {
                let queue = self.queue(id);
                (queue.weight(), queue.raising.coefficient > 1)
            };
            self.queue_mut(id).raising = raising;
            let queue = self.queue(id);
            let (entity, weight) = (queue.entity, queue.weight());
            self.engine.get_mut(entity).new_weight = weight;
            self.reweigh_busy(id, old_weight, was_raised);
        }
        self.trace_raise_start(target, now);
    }

    /// The last process of a sync queue left it (exited, or merged elsewhere): stop idling
    /// for it, and free it once nothing refers to it.
    pub(super) fn no_process_left(&mut self, id: QueueId, now: Nanos) {
        self.queue_mut(id).process_gone = true;
        if self.trace.is_enabled() && self.parallel.lingering.contains_key(&id) {
            self.trace_linger_end(id, IdleEnd::ProcessExited);
        }
        self.stop_lingering(id);
        if self.in_service == Some(id) && self.idle.is_idling() && self.queue(id).is_empty() {
            self.stop_idling(IdleEnd::ProcessExited);
            self.expire(id, Expiration::NoMoreRequests, now);
        }
        self.release_if_unused(id);
    }

    /// A process whose shared queue turned seeky gets a queue of its own again; the last
    /// process keeps the shared one, which stops being shared.
    pub(super) fn split_if_seeky(&mut self, id: QueueId, request: &Request, now: Nanos) -> QueueId {
        let queue = self.queue_mut(id);
        if !queue.coop || queue.stable || !queue.seek.seeky() {
            return id;
        }
        if queue.processes <= 1 {
            queue.coop = false;
            return id;
        }
        queue.processes -= 1;
        self.emit(|bfq| TraceEvent::QueueSplit {
            process: request.process,
            from: bfq.queue_ref(id),
        });
        let queue = self.queue_mut(id);
        let (think_time, seek, io_bound) = (queue.think_time, queue.seek, queue.io_bound);
        let group = queue.group;
        let own = self.create_queue(Some(request.process), true, group, request, now);
        self.sync_queues.insert(request.process, own);
        let queue = self.queue_mut(own);
        queue.think_time = think_time;
        queue.seek = seek;
        queue.io_bound = io_bound;
        // It continues the process's I/O rather than starting afresh: not idle for long, so
        // not raised as a new interactive queue.
        queue.budget_timeout = Some(now);
        own
    }
}
