//! Cooperating processes: sync queues whose requests interleave on disk (several processes
//! reading one file in turns, say) are served as one instead of idling on each in turn.
//!
//! The kernel indexes sync queues on the round robin by the start sector of their next request,
//! per priority level (its prio trees), and moves a queue in its tree on every change of that
//! request. The question is asked only when the active queue runs dry, a few times per slice
//! against every request's move, so here the live queues are scanned when it is asked, with the
//! index's order and tie-breaks (sector, then queue id). When the active queue runs dry, a queue of the same
//! group and RT-ness, neither of them seeky, whose next request lies within 8192 sectors of the
//! head is a *close cooperator*: CFQ hands the next slice to it rather than idling, and marks
//! the two to merge — in the direction of fewer processes. The processes of the merged queue
//! move to the other at their next request. A merged queue that turns seeky is split again at
//! its processes' next requests.

use crate::trace::Traced;
use crate::ProcessId;

use super::preempt::CLOSE_THRESHOLD;
use super::queue::Queue;
use super::{Cfq, QueueId};

impl Cfq {
    /// Where a queue stands for cooperator search: its level and the start sector of its next
    /// request, while it is on the round robin with a next request and not IDLE class.
    fn cooperator_position(&self, queue: &Queue) -> Option<(u8, u64)> {
        match queue.next_request {
            Some(slot) if queue.on_rr && !queue.is_idle_class() => {
                Some((queue.level, self.slab.get(slot).sector))
            }
            _ => None,
        }
    }

    /// The queues of `level` nearest `sector` other than `exclude`, in (sector, queue) order: the
    /// first at or after it, and the last before it (the kernel's prio-tree lookup).
    fn neighbours(&self, level: u8, sector: u64, exclude: QueueId) -> [Option<(u64, QueueId)>; 2] {
        let mut at_or_after: Option<(u64, QueueId)> = None;
        let mut before: Option<(u64, QueueId)> = None;
        for (id, q) in self.queues.live() {
            if id == exclude {
                continue;
            }
            let Some((q_level, start)) = self.cooperator_position(q) else {
                continue;
            };
            if q_level != level {
                continue;
            }
            let key = (start, id);
            if start >= sector {
                if at_or_after.is_none_or(|best| key < best) {
                    at_or_after = Some(key);
                }
            } else if before.is_none_or(|best| key > best) {
                before = Some(key);
            }
        }
        [at_or_after, before]
    }

    /// The queue at the same level whose next request starts nearest the head, if within
    /// 8192 sectors (the kernel's `cfqq_close`).
    fn closest_queue(&self, queue: QueueId) -> Option<QueueId> {
        let head = self.device.last_position;
        let level = self.queues[queue].level;
        self.neighbours(level, head, queue)
            .into_iter()
            .flatten()
            .map(|(sector, other)| (sector.abs_diff(head), other))
            .filter(|&(distance, _)| distance <= CLOSE_THRESHOLD)
            .min()
            .map(|(_, other)| other)
    }

    /// A queue to hand the slice to instead of idling on `queue` (the kernel's
    /// `cfq_close_cooperator`): sync, not seeky, same group and RT-ness, next request close.
    pub(super) fn close_cooperator(&self, queue: QueueId) -> Option<QueueId> {
        let q = &self.queues[queue];
        if q.is_idle_class() || !q.sync || q.seek.seeky() {
            return None;
        }
        if self.groups[q.group.index()].nr_queues == 1 {
            return None;
        }
        let other = self.closest_queue(queue)?;
        let o = &self.queues[other];
        let suits =
            o.group == q.group && o.sync && !o.seek.seeky() && o.is_real_time() == q.is_real_time();
        suits.then_some(other)
    }

    /// Mark `queue` and `cooperator` to merge, the one with fewer processes into the other
    /// (the kernel's `cfq_setup_merge`).
    pub(super) fn setup_merge(&mut self, queue: QueueId, cooperator: QueueId) {
        if self.queues[cooperator].process_refs == 0 {
            return;
        }
        // Follow a merge already planned for the cooperator, refusing a cycle back to `queue`.
        let mut target = cooperator;
        let mut steps = 0;
        while let Some(next) = self.queues[target].new_queue {
            if next == queue || steps > self.busy_queues {
                return;
            }
            target = next;
            steps += 1;
        }
        let refs = self.queues[queue].process_refs;
        let target_refs = self.queues[target].process_refs;
        if refs == 0 || target_refs == 0 {
            return;
        }
        let (from, into) = if target_refs >= refs {
            (queue, target)
        } else {
            (target, queue)
        };
        self.queues[from].new_queue = Some(into);
        self.queues[into].merge_refs += 1;
    }

    /// Apply a planned merge or split as the process issues a request (the kernel does it in
    /// `cfq_set_request`). Returns the queue it uses now, or `None` when it needs a fresh one.
    pub(super) fn cooperate(&mut self, process: ProcessId, queue: QueueId) -> Option<QueueId> {
        let q = &mut self.queues[queue];
        if q.coop && q.split_coop {
            if q.process_refs == 1 {
                q.coop = false;
                q.split_coop = false;
            } else {
                self.emit(|cfq| crate::TraceEvent::QueueSplit {
                    process,
                    from: cfq.queue_ref(queue),
                });
                self.detach_process(process, queue);
                return None;
            }
        }
        let Some(target) = self.queues[queue].new_queue else {
            return Some(queue);
        };
        self.emit(|cfq| crate::TraceEvent::QueueMerge {
            process,
            from: cfq.queue_ref(queue),
            into: cfq.queue_ref(target),
        });
        if let Some(state) = self.processes.get_mut(&process) {
            state.sync_queue = Some(target);
        }
        let t = &mut self.queues[target];
        t.process_refs += 1;
        t.coop = true;
        let refs = &mut self.queues[queue].process_refs;
        *refs = refs.saturating_sub(1);
        self.release_if_unused(queue);
        Some(target)
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::cfq::testing::{cfq, finish, read, take};
    use crate::time::us;
    use crate::{ProcessId, Scheduler};

    #[test]
    fn interleaved_readers_merge_into_one_queue_and_split_when_seeky() {
        let mut cfq = cfq(&[]);
        cfq.insert(read(1, 1, 0), 0);
        cfq.insert(read(2, 2, 8), 0);
        let first = take(&mut cfq, 0);
        assert_eq!(first.process, ProcessId(1));
        // Process 1 ran dry with process 2's next request right at the head: no idling ...
        finish(&mut cfq, &first, us(200));
        assert_eq!(cfq.idle.timer, None);
        // ... the slice goes to process 2, and process 1's queue is set to merge into it.
        let second = take(&mut cfq, us(200));
        assert_eq!(second.process, ProcessId(2));
        let queue_of = |cfq: &super::Cfq, p: u32| cfq.processes[&ProcessId(p)].sync_queue;
        let (one, two) = (queue_of(&cfq, 1).unwrap(), queue_of(&cfq, 2).unwrap());
        assert_eq!(cfq.queues[one].new_queue, Some(two));
        // Process 1's next request moves it over.
        cfq.insert(read(3, 1, 16), us(220));
        assert_eq!(queue_of(&cfq, 1), Some(two));
        assert!(cfq.queues[two].coop);
        assert_eq!(cfq.queues[two].process_refs, 2);
        assert!(cfq.queues.get(one).is_none(), "the emptied queue is freed");

        // The shared queue turns seeky: far-apart requests from both processes.
        let mut now = us(220);
        finish(&mut cfq, &second, now);
        let mut id = 10;
        for _ in 0..6 {
            let request = take(&mut cfq, now);
            now += us(200);
            finish(&mut cfq, &request, now);
            id += 1;
            cfq.insert(read(id, 1 + (id % 2) as u32, id << 24), now);
        }
        assert!(cfq.queues[two].seek.seeky());
        cfq.expire_active(false, crate::trace::ServiceEnd::SliceExpired, now);
        assert!(cfq.queues[two].split_coop);
        // Each process leaves at its next request; the last one keeps the queue.
        cfq.insert(read(100, 1, 1 << 40), now);
        let split = queue_of(&cfq, 1).unwrap();
        assert_ne!(split, two);
        cfq.insert(read(101, 2, 1 << 41), now);
        assert_eq!(queue_of(&cfq, 2), Some(two));
        assert!(!cfq.queues[two].coop);
    }
}
