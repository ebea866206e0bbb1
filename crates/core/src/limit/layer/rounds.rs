//! blk-throttle's dispatch rounds, for groups held above the elevator (`throttle=above`).
//!
//! Learnt from `block/blk-throttle.c` of Linux 6.16–6.18 (`__blk_throtl_bio`,
//! `throtl_pending_timer_fn`, `throtl_select_dispatch`, `throtl_dispatch_tg`,
//! `tg_update_disptime`); our own code. A request that comes to a group with nothing queued
//! in its direction has its slice evaluated then (a new slice may start); when the pending
//! timer fires, groups whose dispatch time has come are served in dispatch-time order, each
//! at most `THROTL_GRP_QUANTUM` (8) requests a round, three quarters reads (6) and the rest
//! writes (2), and a round ends after `THROTL_QUANTUM` (32) requests; rounds repeat while a
//! group's dispatch time is not in the future. Each group's head request is evaluated
//! before it may go (its slice extended), and again after the round (its new dispatch time).

use super::{LimitLayer, Throttle};
use crate::Nanos;

/// Requests of one group a round.
const GROUP_QUANTUM: usize = 8;
/// Reads of one group a round: three quarters of its quantum.
const GROUP_READS: usize = GROUP_QUANTUM * 3 / 4;
/// Requests of all groups a round.
const QUANTUM: usize = 32;

impl LimitLayer {
    /// The slices on the path of a request of `bytes` that comes to `group` at `now`, each
    /// evaluated as its queue stands before the request joins it.
    pub(super) fn evaluate_arrival(
        &mut self,
        direction: usize,
        group: usize,
        bytes: u64,
        now: Nanos,
    ) {
        let mut current = Some(group);
        while let Some(g) = current.filter(|&g| self.groups[g].limited(direction)) {
            // A request joining a queue is not evaluated until it leads it.
            if self.nodes[direction][g].held == 0 {
                for k in 0..self.groups[g].own[direction] {
                    let b = self.groups[g].path[direction][k];
                    self.buckets[b].evaluate(bytes, true, now);
                }
            }
            current = self.groups[g].parent;
        }
    }

    /// Evaluate the head request of every group under `top` in `direction` at `now`.
    fn evaluate_heads(&mut self, direction: usize, top: usize, now: Nanos) {
        for g in 0..self.groups.len() {
            if self.groups[g].top[direction] != Some(top) {
                continue;
            }
            let Some(bytes) = self.nodes[direction][g].lane.head().map(|r| r.bytes()) else {
                continue;
            };
            for &b in &self.groups[g].path[direction] {
                self.buckets[b].evaluate(bytes, false, now);
            }
        }
    }

    /// The tops of limited subtrees held above the elevator, each once.
    fn above_tops(&self) -> Vec<usize> {
        let mut tops: Vec<usize> = (0..2)
            .flat_map(|d| {
                self.tops[d]
                    .iter()
                    .copied()
                    .filter(move |&top| self.groups[top].throttle[d] == Throttle::Above)
            })
            .collect();
        tops.sort_unstable();
        tops.dedup();
        tops
    }

    /// When the first head request under `top` may go, in either direction.
    fn dispatch_time(&self, top: usize, now: Nanos) -> Option<Nanos> {
        (0..2)
            .flat_map(|d| (0..self.groups.len()).map(move |g| (d, g)))
            .filter(|&(d, g)| self.groups[g].top[d] == Some(top))
            .filter_map(|(d, g)| {
                let head = self.nodes[d][g].lane.head()?;
                Some(self.ready_at(d, g, head.bytes(), now))
            })
            .min()
    }

    /// Serve the groups held above the elevator whose dispatch time has come, in rounds.
    pub(super) fn release_above(&mut self, now: Nanos) {
        let tops = self.above_tops();
        if tops.is_empty() {
            return;
        }
        loop {
            let mut due: Vec<(Nanos, usize)> = tops
                .iter()
                .filter_map(|&top| Some((self.dispatch_time(top, now)?, top)))
                .filter(|&(at, _)| at <= now)
                .collect();
            due.sort_unstable();
            let mut released = 0;
            for (_, top) in due {
                released += self.serve_group(top, now);
                if released >= QUANTUM {
                    break;
                }
            }
            if released == 0 {
                break;
            }
        }
        for top in tops {
            for d in 0..2 {
                self.evaluate_heads(d, top, now);
            }
        }
    }

    /// One group's turn in a round: up to its quantum of reads, then of writes, each while
    /// the head request may go. How many went.
    fn serve_group(&mut self, top: usize, now: Nanos) -> usize {
        let mut released = 0;
        for (direction, quota) in [(0, GROUP_READS), (1, GROUP_QUANTUM - GROUP_READS)] {
            if self.groups[top].top[direction] != Some(top)
                || self.groups[top].throttle[direction] != Throttle::Above
            {
                continue;
            }
            for _ in 0..quota {
                self.evaluate_heads(direction, top, now);
                let Some(group) = self.pick(direction, top, now) else {
                    break;
                };
                let Some(request) = self.take(direction, group, now) else {
                    break;
                };
                self.insert_released(request, direction, top, now);
                released += 1;
            }
        }
        released
    }
}
