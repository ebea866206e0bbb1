//! When BFQ idles for an emptied queue, and for how long (the kernel's `bfq_better_to_idle`).
//!
//! Idling — keeping the device unused for a few milliseconds after a sync queue runs dry, in
//! case its process sends a nearby request — pays in two cases only:
//! (a) it *boosts throughput without issues*: the device rotates and does not queue commands, or
//!     it rotates or does not queue and the queue is sequential, I/O-bound and thinks briefly; and
//!     no weight-raised queue is busy (idling for others would delay it);
//! (b) it is *needed for service guarantees*: the queue is weight raised while others are not (or
//!     the device is crowded with others' requests), or the scenario is *asymmetric* — busy
//!     queues with different weights (unless this one has the smallest), more than one class
//!     busy, or a group other than the root with pending requests. Without idling, a queue
//!     that empties loses its turn and the others' share grows beyond their weights.
//! In a symmetric scenario BFQ does not idle and relies on preemption. `strict_guarantees`
//! idles always. Seeky queues that are not raised idle at most `BFQ_MIN_TT` (2 ms) in a symmetric
//! scenario; raised queues at least 20 ms.
//!
//! Also here: think time (an exponential average, 7/8 decay, ×256 fixed point), seek history
//! (a request is seeky beyond 800 sectors from the last, and on non-rotational media only if
//! small; a queue is seeky with more than 19 seeky requests among its last 32), and the
//! detection of command queueing (more than 3 requests in flight over 32 samples under load).
//!
//! Source: Linux's `block/bfq-iosched.c`: `bfq_better_to_idle` and the helpers it calls,
//! `bfq_arm_slice_timer` (how long to idle), `bfq_update_io_thinktime`,
//! `bfq_update_io_seektime`, `bfq_update_has_short_ttime` and `bfq_update_hw_tag`. Our own
//! code.

use crate::time::ms;
use crate::Nanos;

/// A request this far (sectors) from the previous one is seeky (`BFQQ_SEEK_THR`).
pub(super) const SEEK_THRESHOLD: u64 = 8 * 100;
/// On non-rotational media a seeky request must also be smaller than this (sectors).
pub(super) const SEEKY_SIZE_NONROT: u32 = 64;
/// Shortest idle for a seeky queue in a symmetric scenario (`BFQ_MIN_TT`).
pub(super) const MIN_THINK_TIME: Nanos = ms(2);
/// Shortest idle for a weight-raised queue.
pub(super) const RAISED_MIN_IDLE: Nanos = ms(20);
/// In-flight requests above which the device is taken to queue commands.
const QUEUE_THRESHOLD: usize = 3;
/// Samples per queueing decision.
const QUEUE_SAMPLES: u32 = 32;

/// A process's think time: the average gap between a completion and its next request.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ThinkTime {
    samples: u64,
    total: u64,
    /// Mean think time.
    pub(super) mean: Nanos,
}

impl ThinkTime {
    /// Add a gap, capped at `cap` (twice slice_idle) as the kernel does.
    pub(super) fn add(&mut self, gap: Nanos, cap: Nanos) {
        let gap = gap.min(cap);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * gap) / 8;
        self.mean = (self.total + 128) / self.samples.max(1);
    }

    /// Whether enough samples back the mean (more than 80 of the 256 the average converges to).
    pub(super) fn valid(&self) -> bool {
        self.samples > 80
    }
}

/// The last 32 requests of a queue, one bit each: seeky or not.
#[derive(Debug, Clone, Copy)]
pub(super) struct SeekHistory(u32);

impl SeekHistory {
    /// A new queue's history: its first request is almost certainly seeky.
    pub(super) fn new_queue() -> Self {
        Self(1)
    }

    /// Record a request `distance` sectors from the previous one, `sectors` long.
    pub(super) fn add(&mut self, distance: u64, sectors: u32, rotational: bool) {
        let seeky = distance > SEEK_THRESHOLD && (rotational || sectors < SEEKY_SIZE_NONROT);
        self.0 = (self.0 << 1) | u32::from(seeky);
    }

    /// More than 19 of the last 32 requests were seeky.
    pub(super) fn seeky(&self) -> bool {
        self.0.count_ones() > 19
    }

    /// All of the last 32 were seeky.
    pub(super) fn totally_seeky(&self) -> bool {
        self.0 == u32::MAX
    }
}

/// Whether the device queues commands, learned from how many requests it holds under load.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct HwTag {
    decided: Option<bool>,
    samples: u32,
    max_in_driver: usize,
}

impl HwTag {
    /// Queueing as far as BFQ knows; unknown counts as queueing, as in the kernel.
    pub(super) fn queueing(&self) -> bool {
        self.decided.unwrap_or(true)
    }

    /// A completion: `in_driver` requests at the device, `queued` in BFQ; `shallow` when the
    /// queue in service could not keep the device busy (such samples say nothing).
    pub(super) fn sample(&mut self, in_driver: usize, queued: usize, shallow: bool) {
        self.max_in_driver = self.max_in_driver.max(in_driver);
        if self.decided == Some(true) || in_driver + queued <= QUEUE_THRESHOLD || shallow {
            return;
        }
        self.samples += 1;
        if self.samples <= QUEUE_SAMPLES {
            return;
        }
        self.decided = Some(self.max_in_driver > QUEUE_THRESHOLD);
        self.max_in_driver = 0;
        self.samples = 0;
    }
}

/// What the idling decision looks at.
#[derive(Debug, Clone, Copy)]
pub(super) struct IdleInputs {
    /// `slice_idle` (0 turns idling off).
    pub(super) slice_idle: Nanos,
    /// `strict_guarantees`.
    pub(super) strict: bool,
    /// The device rotates.
    pub(super) rotational: bool,
    /// The device queues commands.
    pub(super) queueing: bool,
    /// The queue is sync.
    pub(super) sync: bool,
    /// The queue is of the IDLE class.
    pub(super) idle_class: bool,
    /// Its process has exited.
    pub(super) process_gone: bool,
    /// It is seeky.
    pub(super) seeky: bool,
    /// It is I/O-bound.
    pub(super) io_bound: bool,
    /// Its think time is short.
    pub(super) short_think_time: bool,
    /// Its weight-raising coefficient.
    pub(super) raising: u64,
    /// Its requests at the device.
    pub(super) dispatched: usize,
    /// Requests at the device.
    pub(super) in_flight: usize,
    /// Busy queues.
    pub(super) busy_queues: usize,
    /// Busy weight-raised queues.
    pub(super) raised_busy_queues: usize,
    /// The scenario is asymmetric (see the module doc).
    pub(super) asymmetric: bool,
}

impl IdleInputs {
    /// Whether to idle for this queue when it runs dry.
    pub(super) fn better_to_idle(&self) -> bool {
        if self.slice_idle == 0 || !self.sync || self.idle_class || self.process_gone {
            return false;
        }
        self.strict || self.boosts_throughput_without_issues() || self.needed_for_guarantees()
    }

    /// Rule (a).
    pub(super) fn boosts_throughput_without_issues(&self) -> bool {
        let rotational_without_queueing = self.rotational && !self.queueing;
        let sequential_and_bound = !self.seeky && self.io_bound && self.short_think_time;
        let boosts = rotational_without_queueing
            || ((self.rotational || !self.queueing) && sequential_and_bound);
        boosts && self.raised_busy_queues == 0
    }

    /// Rule (b). No point for a queue whose process has gone.
    pub(super) fn needed_for_guarantees(&self) -> bool {
        if self.process_gone {
            return false;
        }
        let raised = self.raising > 1
            && (self.raised_busy_queues < self.busy_queues
                || self.in_flight >= self.dispatched + 4);
        raised || self.asymmetric || self.busy_queues == 1
    }

    /// How long to idle.
    pub(super) fn idle_time(&self) -> Nanos {
        if self.seeky && self.raising == 1 && !self.asymmetric {
            self.slice_idle.min(MIN_THINK_TIME)
        } else if self.raising > 1 {
            self.slice_idle.max(RAISED_MIN_IDLE)
        } else {
            self.slice_idle
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequential_reader() -> IdleInputs {
        IdleInputs {
            slice_idle: ms(8),
            strict: false,
            rotational: true,
            queueing: true,
            sync: true,
            idle_class: false,
            process_gone: false,
            seeky: false,
            io_bound: true,
            short_think_time: true,
            raising: 1,
            dispatched: 0,
            in_flight: 0,
            busy_queues: 2,
            raised_busy_queues: 0,
            asymmetric: false,
        }
    }

    #[test]
    fn sequential_io_bound_readers_are_idled_for_on_disks() {
        assert!(sequential_reader().better_to_idle());
        let ssd = IdleInputs {
            rotational: false,
            ..sequential_reader()
        };
        assert!(
            !ssd.better_to_idle(),
            "queueing flash: no idling in symmetry"
        );
        let seeky = IdleInputs {
            seeky: true,
            ..sequential_reader()
        };
        assert!(!seeky.better_to_idle());
        assert!(IdleInputs {
            asymmetric: true,
            ..seeky
        }
        .better_to_idle());
        assert!(IdleInputs {
            strict: true,
            ..seeky
        }
        .better_to_idle());
    }

    #[test]
    fn never_for_async_idle_class_exited_or_slice_idle_zero() {
        let base = IdleInputs {
            strict: true,
            ..sequential_reader()
        };
        for inputs in [
            IdleInputs {
                sync: false,
                ..base
            },
            IdleInputs {
                idle_class: true,
                ..base
            },
            IdleInputs {
                process_gone: true,
                ..base
            },
            IdleInputs {
                slice_idle: 0,
                ..base
            },
        ] {
            assert!(!inputs.better_to_idle(), "{inputs:?}");
        }
    }

    #[test]
    fn raised_queues_idle_while_others_are_not_raised_and_others_do_not() {
        let raised = IdleInputs {
            raising: 30,
            seeky: true,
            raised_busy_queues: 1,
            ..sequential_reader()
        };
        assert!(raised.better_to_idle());
        assert_eq!(raised.idle_time(), ms(20));
        let other = IdleInputs {
            raised_busy_queues: 1,
            ..sequential_reader()
        };
        assert!(
            !other.better_to_idle(),
            "a raised queue is busy: do not delay it"
        );
        let seeky = IdleInputs {
            seeky: true,
            asymmetric: true,
            ..sequential_reader()
        };
        assert_eq!(seeky.idle_time(), ms(8));
        assert_eq!(
            IdleInputs {
                asymmetric: false,
                ..seeky
            }
            .idle_time(),
            ms(2)
        );
    }

    #[test]
    fn think_time_and_seek_history() {
        let mut think = ThinkTime::default();
        for _ in 0..40 {
            think.add(ms(1), ms(16));
        }
        assert!(think.valid());
        // The integer average settles at 249 samples, not 256: the mean reads ~2% high, as
        // the kernel's does.
        assert!(
            think.mean.abs_diff(ms(1)) < ms(1) * 3 / 100,
            "{}",
            think.mean
        );
        let mut history = SeekHistory::new_queue();
        assert!(!history.seeky());
        for _ in 0..32 {
            history.add(10_000, 8, true);
        }
        assert!(history.seeky() && history.totally_seeky());
        history.add(10_000, 128, false);
        assert!(
            !history.totally_seeky(),
            "large requests on flash are not seeky"
        );
    }

    #[test]
    fn queueing_is_decided_after_32_loaded_samples() {
        let mut tag = HwTag::default();
        assert!(tag.queueing(), "unknown counts as queueing");
        for _ in 0..33 {
            tag.sample(1, 8, false);
        }
        assert!(!tag.queueing(), "never more than one in flight");
        let mut deep = HwTag::default();
        for _ in 0..33 {
            deep.sample(8, 8, false);
        }
        assert!(deep.queueing());
    }
}

/// The idle timer: whether BFQ idles for the queue in service, since when and until when
/// (the kernel's `idle_slice_timer` and `last_idling_start`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct IdleTimer {
    until: Option<Nanos>,
    started: Nanos,
}

impl IdleTimer {
    /// Start idling at `now` for `idle`.
    pub(super) fn start(&mut self, now: Nanos, idle: Nanos) {
        self.started = now;
        self.until = Some(now.saturating_add(idle));
    }

    /// Stop idling; whether BFQ was idling.
    pub(super) fn stop(&mut self) -> bool {
        self.until.take().is_some()
    }

    /// When idling ends, if BFQ idles.
    pub(super) fn until(&self) -> Option<Nanos> {
        self.until
    }

    /// BFQ idles for the queue in service.
    pub(super) fn is_idling(&self) -> bool {
        self.until.is_some()
    }

    /// When the current (or last) idling started.
    pub(super) fn started(&self) -> Nanos {
        self.started
    }
}
