//! Time slices: how long a queue owns the device, when its slice starts and ends, what it is
//! charged, and what happens when it expires.
//!
//! A queue's slice is `base + base/5 × (4 − level)` (base `slice_sync` or `slice_async`): sync
//! 180/100/40 ms and async 72/40/16 ms at levels 0/4/7. With `low_latency`, if the group's busy
//! queues of the class would take longer than the group's slice to get a turn each
//! (`slice_sync × average queues`), the slice shrinks in proportion, but not below
//! `2 × slice_idle` scaled like the slice. The slice starts at the queue's first completion.
//! An async queue also has a request budget, `2 × slice_async_rq × (8 − level)`.

use crate::trace::{IdleEnd, ServiceEnd, Traced};
use crate::{Nanos, PriorityClass, TraceEvent};

use super::{Cfq, QueueId};

/// Each priority level moves the slice by a fifth of its base (`CFQ_SLICE_SCALE`).
const SLICE_SCALE: i128 = 5;

/// The shortest charge for a slice that ended before it began: one jiffy at HZ=1000.
pub(super) const MIN_SLICE_CHARGE: Nanos = 1_000_000;

/// `a × b / c` without overflow (saturating at `u64::MAX`; `c` of 0 gives `a × b`).
pub(super) fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    let quotient = product / u128::from(c.max(1));
    u64::try_from(quotient).unwrap_or(u64::MAX)
}

/// A slice by priority level: `base + base/5 × (4 − level)`.
pub(super) fn prio_slice(base: Nanos, level: u8) -> Nanos {
    let step = i128::from(base) / SLICE_SCALE;
    let slice = i128::from(base) + step * (4 - i128::from(level.min(7)));
    u64::try_from(slice.max(0)).unwrap_or(u64::MAX)
}

/// The `low_latency` scaling of a slice: if `expected_latency` (every busy queue taking a full
/// sync slice) exceeds `group_slice`, shrink the slice by `group_slice / expected_latency`, but
/// not below `low_slice = min(slice, 2 × slice_idle × slice / slice_sync)`.
pub(super) fn low_latency_slice(
    slice: Nanos,
    group_slice: Nanos,
    expected_latency: Nanos,
    slice_idle: Nanos,
    slice_sync: Nanos,
) -> Nanos {
    if expected_latency <= group_slice {
        return slice;
    }
    let low_slice = slice.min(mul_div(slice_idle.saturating_mul(2), slice, slice_sync));
    mul_div(slice, group_slice, expected_latency).max(low_slice)
}

/// The idle window a slice's end closes: a preemption, an exit, or the end of the slice.
fn idle_end_for(reason: ServiceEnd) -> IdleEnd {
    match reason {
        ServiceEnd::Preempted => IdleEnd::Preempted,
        ServiceEnd::ProcessExited => IdleEnd::ProcessExited,
        _ => IdleEnd::ServiceEnded,
    }
}

impl Cfq {
    /// The unscaled slice of a queue by its kind and level.
    pub(super) fn prio_to_slice(&self, queue: QueueId) -> Nanos {
        let q = &self.queues[queue];
        let base = if q.sync {
            self.config.slice_sync
        } else {
            self.config.slice_async
        };
        prio_slice(base, q.level)
    }

    /// The slice a queue gets now, with `low_latency` scaling (which also updates the group's
    /// average of busy queues).
    pub(super) fn scaled_slice(&mut self, queue: QueueId) -> Nanos {
        let slice = self.prio_to_slice(queue);
        if !self.config.low_latency {
            return slice;
        }
        let group = self.queues[queue].group;
        let real_time = self.queues[queue].class == PriorityClass::RealTime;
        let average_queues = self.average_busy_queues(group, real_time);
        let expected_latency = self.config.slice_sync.saturating_mul(average_queues);
        low_latency_slice(
            slice,
            self.group_slice(group),
            expected_latency,
            self.config.slice_idle,
            self.config.slice_sync,
        )
    }

    /// Start the active queue's slice (at its first completion).
    pub(super) fn start_slice(&mut self, queue: QueueId, now: Nanos) {
        let slice = self.scaled_slice(queue);
        let q = &mut self.queues[queue];
        q.slice.start = Some(now);
        q.slice.end = now.saturating_add(slice);
        q.slice.allocated = slice;
        q.slice.new = false;
        self.emit(|cfq| TraceEvent::SliceTimer {
            queue: cfq.queue_ref(queue),
            length: slice,
        });
    }

    /// Whether the queue's slice has started and run out.
    pub(super) fn slice_used(&self, queue: QueueId, now: Nanos) -> bool {
        let slice = &self.queues[queue].slice;
        !slice.new && now >= slice.end
    }

    /// Whether the slice will run out before the requests in flight complete, at one
    /// `slice_idle` each (the kernel's `cfq_slice_used_soon`).
    pub(super) fn slice_used_soon(&self, queue: QueueId, now: Nanos) -> bool {
        let q = &self.queues[queue];
        let in_flight = u64::try_from(q.dispatched).unwrap_or(u64::MAX);
        q.slice.new
            || now.saturating_add(self.config.slice_idle.saturating_mul(in_flight)) > q.slice.end
    }

    /// The time to charge for the slice so far (the kernel's `cfq_cfqq_slice_usage`): from
    /// its start, at most what was allocated; if it never really started, the time since the
    /// queue became active, at least one jiffy (so a group pays for the seeks of queues that
    /// each dispatch one request and leave).
    pub(super) fn slice_charge(&self, queue: QueueId, now: Nanos) -> Nanos {
        let slice = &self.queues[queue].slice;
        match slice.start {
            Some(start) if start != now => (now - start).min(slice.allocated),
            _ => now
                .saturating_sub(slice.dispatch_start)
                .max(MIN_SLICE_CHARGE),
        }
    }

    /// Requests an async queue may dispatch in one slice while others wait:
    /// `2 × slice_async_rq × (8 − level)`.
    pub(super) fn async_request_budget(&self, queue: QueueId) -> u64 {
        let level = u64::from(self.queues[queue].level.min(7));
        2 * self.config.slice_async_rq * (8 - level)
    }

    /// End the active queue's slice (the kernel's `__cfq_slice_expired`) for `reason`.
    /// `timed_out` (a preemption) keeps the slice left over to credit its next turn. The group
    /// is charged; the queue leaves the round robin if empty, else goes back on its tree at a
    /// new place.
    pub(super) fn expire_active(&mut self, timed_out: bool, reason: ServiceEnd, now: Nanos) {
        let Some(queue) = self.active else {
            return;
        };
        self.end_idle_window(queue, idle_end_for(reason));
        if self.queues[queue].wait_request {
            self.idle.timer = None;
        }
        self.emit(|cfq| TraceEvent::SliceEnd {
            queue: cfq.queue_ref(queue),
            reason,
            dispatched: cfq.queues[queue].slice.dispatched,
        });
        let q = &mut self.queues[queue];
        q.wait_request = false;
        q.wait_busy = false;
        if q.coop && q.seek.seeky() {
            q.split_coop = true;
        }
        if timed_out {
            self.queues[queue].slice.resid = self.leftover_slice(queue, now);
        }
        self.group_served(queue, now);
        if self.queues[queue].on_rr && self.queues[queue].is_empty() {
            self.del_from_round_robin(queue);
        }
        self.resort(queue, now);
        self.active = None;
        self.active_process = None;
        self.release_if_unused(queue);
    }

    /// What is left of the active queue's slice: all of it if it has not started.
    fn leftover_slice(&mut self, queue: QueueId, now: Nanos) -> i64 {
        if self.queues[queue].slice.new {
            i64::try_from(self.scaled_slice(queue)).unwrap_or(i64::MAX)
        } else {
            let end = i128::from(self.queues[queue].slice.end);
            i64::try_from(end - i128::from(now)).unwrap_or(i64::MIN)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn slice_lengths_by_priority_level() {
        let sync: Vec<Nanos> = [0, 4, 7].iter().map(|&l| prio_slice(ms(100), l)).collect();
        assert_eq!(sync, vec![ms(180), ms(100), ms(40)]);
        let async_: Vec<Nanos> = [0, 4, 7].iter().map(|&l| prio_slice(ms(40), l)).collect();
        assert_eq!(async_, vec![ms(72), ms(40), ms(16)]);
        assert_eq!(prio_slice(ms(100), 1), ms(160));
    }

    #[test]
    fn low_latency_scales_slices_to_the_group_slice() {
        // 8 busy queues expect 800 ms for a round; the group slice is 300 ms: 100 → 37.5 ms.
        let scaled = low_latency_slice(ms(100), ms(300), ms(800), ms(8), ms(100));
        assert_eq!(scaled, 37_500_000);
        // Within the target: unchanged.
        assert_eq!(
            low_latency_slice(ms(100), ms(300), ms(300), ms(8), ms(100)),
            ms(100)
        );
        // Never below 2 × slice_idle, scaled like the slice: 16 ms for a 100 ms slice, 6.4 ms for 40.
        assert_eq!(
            low_latency_slice(ms(100), ms(300), ms(10_000), ms(8), ms(100)),
            ms(16)
        );
        assert_eq!(
            low_latency_slice(ms(40), ms(300), ms(10_000), ms(8), ms(100)),
            6_400_000
        );
    }
}
