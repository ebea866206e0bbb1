//! Stable merging (Linux 5.13 and later: the kernel's `bfq_do_or_sched_stable_merge` and the
//! delayed branch of `bfq_setup_cooperator`). Processes spawned together to do one job — fio's
//! jobs, a make's compilers, an application's threads — create their sync queues within
//! moments of each other. A sync queue created within `burst_interval` (180 ms) of the last
//! sync queue created in its group, with the same priority, is scheduled to merge into it.
//! The merge happens at one of its requests once both queues are [`STABLE_MERGE_DELAY`] old,
//! unless idling for the queue then boosts throughput without hurting anyone (a sequential
//! stream on a rotational disk, no weight-raised queue busy), in which case it is dropped.
//! On a non-rotational device that queues commands the merge happens at once: there,
//! keeping the queue alone cannot pay.
//!
//! A stably merged queue is never split again, however seeky it turns, and it may still be
//! weight raised (merged queues otherwise are not).
//!
//! Measured on Linux 6.18 on the emulated disk: four sequential readers started together in
//! one group run as one shared queue (`bfq<pid>SHARED-S` in the kernel's trace), which serves
//! their four streams in turn (`docs/fidelity.md`).
//!
//! Source: the kernel's behaviour above, and Linux's `block/bfq-iosched.c` (5.13 and later),
//! the functions named at the top. Our own code.

use crate::time::ms;
use crate::{GroupId, Nanos, Request};

use super::queue::QueueId;
use super::Bfq;

/// How long a queue may be the one later queues merge into, and how old both must be before
/// a scheduled merge happens (`bfq_activation_stable_merging`, `bfq_late_stable_merging`).
pub(super) const STABLE_MERGE_DELAY: Nanos = ms(600);
/// Queues created this close together merge (`burst_interval`).
const CREATION_WINDOW: Nanos = ms(180);

impl Bfq {
    /// A sync queue was created in `group` for a process's first request: it becomes the
    /// group's newest queue, or is scheduled to merge into it.
    pub(super) fn stable_merge_on_creation(&mut self, id: QueueId, group: GroupId, now: Nanos) {
        let candidate = self
            .last_created
            .get(&group)
            .copied()
            .filter(|&(last, created)| {
                now <= created.saturating_add(STABLE_MERGE_DELAY)
                    && self.same_queue_since(last, created)
                    && self.same_priority(last, id)
            });
        match candidate {
            None => {
                self.last_created.insert(group, (id, now));
            }
            Some(target) if now <= target.1.saturating_add(CREATION_WINDOW) => {
                self.queue_mut(id).stable_merge = Some(target);
            }
            Some(_) => {}
        }
    }

    /// The queue `id`'s request should go to if its scheduled stable merge is due now; the
    /// merge is then made (or dropped, if idling for `id` pays).
    pub(super) fn stable_merge_due(
        &mut self,
        id: QueueId,
        request: &Request,
        now: Nanos,
    ) -> Option<QueueId> {
        let (target, target_created) = self.queue(id).stable_merge?;
        let queue = self.queue(id);
        let at_once = !self.rotational && self.hw_tag.queueing();
        let old_enough = queue.served
            && now >= queue.created.saturating_add(STABLE_MERGE_DELAY)
            && now >= target_created.saturating_add(STABLE_MERGE_DELAY);
        if !at_once && !old_enough {
            return None;
        }
        self.queue_mut(id).stable_merge = None;
        let alive = self.same_queue_since(target, target_created)
            && self.queue(target).processes > 0
            && self.queue(id).processes > 0
            && target != id;
        let idling_pays = !at_once && self.idle_inputs(id).boosts_throughput_without_issues();
        if !alive || idling_pays {
            return None;
        }
        self.merge_queues(request.process, id, target, now);
        self.queue_mut(target).stable = true;
        Some(target)
    }

    /// Whether the queue at `id` is the one created at `created` (ids are reused).
    fn same_queue_since(&self, id: QueueId, created: Nanos) -> bool {
        self.queues
            .get(id)
            .and_then(Option::as_ref)
            .is_some_and(|queue| queue.created == created && queue.sync)
    }

    fn same_priority(&self, a: QueueId, b: QueueId) -> bool {
        let (a, b) = (self.queue(a), self.queue(b));
        (a.class, a.level) == (b.class, b.level)
    }
}
