//! Kyber's latency feedback: per-domain histograms of completed requests' latencies, and
//! the timer that reads their percentiles and resizes the domains' token depths.
//!
//! Each measured domain (read, write, discard) keeps two histograms of eight buckets: the
//! *total* latency (from the request's submission to its completion) and the *I/O* latency
//! (from its dispatch to the device to its completion). A bucket is a quarter of the
//! domain's target wide: buckets 0 to 3 hold latencies up to the target ("good"), 4 to 6
//! up to 1¾ targets, and 7 everything longer.
//!
//! A completion arms the timer to fire 100 ms later unless it is already due sooner. When
//! it fires:
//! 1. each measured domain's I/O-latency p90 bucket is read; if any is past the target the
//!    device is *congested*;
//! 2. each measured domain's total-latency p99 bucket is read. Under congestion a domain
//!    without a fresh p99 uses the one it remembered from an earlier window, and forgets it;
//!    without congestion a fresh p99 is remembered. A domain with a p99 that is past its
//!    target, or any domain with a p99 under congestion, has its depth scaled by
//!    `(p99 + 1) / 4` (a p99 in the last bucket doubles it, one in the first quarters it),
//!    kept within 1 and the domain's starting depth.
//!
//! A percentile is read only from a histogram with at least 500 samples, or once a second
//! has passed since the domain's first attempt with too few; reading one empties that
//! histogram. The second's wait is one per domain, shared by its two histograms, as in the
//! kernel: when the second runs out, the I/O p90 is read and clears the wait, the total p99
//! read right after starts a new second and, below 500 samples, is not read in that window.
//!
//! Source: Linux's `block/kyber-iosched.c` (6.x): `add_latency_sample`,
//! `kyber_completed_request`, `calculate_percentile`, `kyber_timer_fn` and
//! `kyber_resize_domain`. Our own code, written from that source.

use super::domain::{Domain, DOMAINS, MEASURED};
use crate::time::{ms, SECOND};
use crate::trace::TraceBuffer;
use crate::{Nanos, TraceEvent};

/// Buckets per histogram.
pub const BUCKETS: usize = 8;

/// Buckets at or under the target: a percentile in a later one is "bad".
pub const GOOD_BUCKETS: usize = 4;

/// Bucket width as a shift of the target (a quarter).
const BUCKET_SHIFT: u32 = 2;

/// How long after a completion the timer fires (the kernel's `HZ / 10`).
pub const TIMER_WINDOW: Nanos = ms(100);

/// How long a domain with too few samples waits before its percentiles are read anyway.
pub const PERCENTILE_TIMEOUT: Nanos = SECOND;

/// Samples after which a percentile is read without waiting.
pub const MIN_SAMPLES: u64 = 500;

/// Which of a domain's two latencies a histogram holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Submission to completion.
    Total = 0,
    /// Dispatch to completion.
    Io = 1,
}

/// The bucket a latency falls in for a domain with this target.
pub fn bucket(target: Nanos, latency: Nanos) -> usize {
    if latency == 0 {
        return 0;
    }
    let width = (target >> BUCKET_SHIFT).max(1);
    usize::try_from((latency - 1) / width).map_or(BUCKETS - 1, |b| b.min(BUCKETS - 1))
}

/// Counts of samples per bucket.
type Histogram = [u64; BUCKETS];

/// The latency histograms, the percentile waits, the remembered p99s and the timer.
#[derive(Debug, Clone)]
pub struct LatencyFeedback {
    /// Target latency per measured domain.
    targets: [Nanos; MEASURED],
    /// Per measured domain, the total and the I/O latency histograms.
    histograms: [[Histogram; 2]; MEASURED],
    /// Per measured domain, when its wait for enough samples runs out, if one is running.
    timeouts: [Option<Nanos>; MEASURED],
    /// Per measured domain, the p99 bucket kept from a window without congestion.
    remembered_p99: [Option<usize>; MEASURED],
    /// When the timer fires, if armed.
    timer: Option<Nanos>,
}

impl LatencyFeedback {
    /// Feedback with these read and write targets (discard keeps the kernel's 5 s).
    pub fn new(read_target: Nanos, write_target: Nanos) -> Self {
        let discard = Domain::Discard.default_target().unwrap_or(5 * SECOND);
        Self {
            targets: [read_target, write_target, discard],
            histograms: [[[0; BUCKETS]; 2]; MEASURED],
            timeouts: [None; MEASURED],
            remembered_p99: [None; MEASURED],
            timer: None,
        }
    }

    /// The target latency of a measured domain; `None` for [`Domain::Other`].
    pub fn target(&self, domain: Domain) -> Option<Nanos> {
        self.targets.get(domain.index()).copied()
    }

    /// When the timer fires next, if it is armed.
    pub fn timer(&self) -> Option<Nanos> {
        self.timer
    }

    /// A request of `domain` completed `now`, submitted at `submitted` and dispatched at
    /// `dispatched`: add its latencies (a domain without a target records nothing) and arm
    /// the timer for a window from now unless it fires sooner.
    pub fn record(&mut self, domain: Domain, submitted: Nanos, dispatched: Nanos, now: Nanos) {
        let Some(target) = self.target(domain) else {
            return;
        };
        let histograms = &mut self.histograms[domain.index()];
        histograms[Kind::Total as usize][bucket(target, now.saturating_sub(submitted))] += 1;
        histograms[Kind::Io as usize][bucket(target, now.saturating_sub(dispatched))] += 1;
        let due = now + TIMER_WINDOW;
        self.timer = Some(self.timer.map_or(due, |armed| armed.min(due)));
    }

    /// Fire the timer if it is due by `now`, at its own time, resizing `depths` (token
    /// depths per domain in rotation order) and recording each change in `trace`. Returns
    /// whether it fired.
    pub fn fire_if_due(
        &mut self,
        now: Nanos,
        depths: &mut [usize; DOMAINS],
        trace: &mut TraceBuffer,
    ) -> bool {
        match self.timer {
            Some(due) if due <= now => {
                self.timer = None;
                self.adjust(due, depths, trace);
                true
            }
            _ => false,
        }
    }

    /// The timer's work at time `now`: judge congestion by the I/O p90s, then scale each
    /// domain's depth by its total p99.
    fn adjust(&mut self, now: Nanos, depths: &mut [usize; DOMAINS], trace: &mut TraceBuffer) {
        let mut congested = false;
        for domain in 0..MEASURED {
            if self
                .percentile(domain, Kind::Io, 90, now)
                .is_some_and(|p90| p90 >= GOOD_BUCKETS)
            {
                congested = true;
            }
        }
        for domain in Domain::ALL.into_iter().take(MEASURED) {
            let index = domain.index();
            let mut p99 = self.percentile(index, Kind::Total, 99, now);
            if congested {
                p99 = p99.or(self.remembered_p99[index]);
                self.remembered_p99[index] = None;
            } else if p99.is_some() {
                self.remembered_p99[index] = p99;
            }
            let Some(p99) = p99 else {
                continue;
            };
            if congested || p99 >= GOOD_BUCKETS {
                let from = depths[index];
                let scaled = (from * (p99 + 1)) >> BUCKET_SHIFT;
                depths[index] = scaled.clamp(1, domain.max_depth());
                if depths[index] != from {
                    trace.emit(|| TraceEvent::DomainDepth {
                        domain: domain.name(),
                        from: u32::try_from(from).unwrap_or(u32::MAX),
                        depth: u32::try_from(depths[index]).unwrap_or(u32::MAX),
                        p99: p99 as u8,
                        congested,
                    });
                }
            }
        }
    }

    /// The bucket holding the `percentile`th sample of one histogram, emptying it, or
    /// `None` when it is empty or still waiting for samples.
    fn percentile(
        &mut self,
        domain: usize,
        kind: Kind,
        percentile: u64,
        now: Nanos,
    ) -> Option<usize> {
        let histogram = &mut self.histograms[domain][kind as usize];
        let samples: u64 = histogram.iter().sum();
        if samples == 0 {
            return None;
        }
        let timeout = *self.timeouts[domain].get_or_insert(now + PERCENTILE_TIMEOUT);
        if samples < MIN_SAMPLES && timeout > now {
            return None;
        }
        self.timeouts[domain] = None;
        let mut rank = (samples * percentile).div_ceil(100);
        let mut found = BUCKETS - 1;
        for (index, &count) in histogram.iter().enumerate().take(BUCKETS - 1) {
            if count >= rank {
                found = index;
                break;
            }
            rank -= count;
        }
        *histogram = [0; BUCKETS];
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_quarters_of_the_target() {
        let target = ms(2);
        assert_eq!(bucket(target, 0), 0);
        assert_eq!(bucket(target, 1), 0);
        assert_eq!(bucket(target, ms(2) / 4), 0);
        assert_eq!(bucket(target, ms(2) / 4 + 1), 1);
        assert_eq!(bucket(target, ms(2)), 3);
        assert_eq!(bucket(target, ms(2) + 1), 4);
        assert_eq!(bucket(target, ms(100)), 7);
        // A zero target still divides: every latency past a nanosecond is bad.
        assert_eq!(bucket(0, 1), 0);
        assert_eq!(bucket(0, 2), 1);
    }

    /// 500 reads at half the target and writes over it: congestion, so the read depth
    /// halves ((1 + 1) / 4) and write's doubling is capped at its starting 128.
    #[test]
    fn congestion_throttles_good_domains_and_eases_bad_ones() {
        let mut feedback = LatencyFeedback::new(ms(2), ms(10));
        for _ in 0..500 {
            feedback.record(Domain::Read, 0, 0, ms(1) - 1);
            feedback.record(Domain::Write, 0, 0, ms(30));
        }
        assert_eq!(feedback.timer(), Some(ms(1) - 1 + TIMER_WINDOW));
        let mut depths = [256, 128, 64, 16];
        let mut trace = TraceBuffer::default();
        trace.set_enabled(true);
        assert!(!feedback.fire_if_due(ms(50), &mut depths, &mut trace));
        assert!(feedback.fire_if_due(ms(200), &mut depths, &mut trace));
        assert_eq!(depths, [128, 128, 64, 16]);
        assert_eq!(feedback.timer(), None);
        let mut events = Vec::new();
        trace.drain_into(&mut events);
        assert_eq!(
            events,
            vec![TraceEvent::DomainDepth {
                domain: "read",
                from: 256,
                depth: 128,
                p99: 1,
                congested: true
            }]
        );
    }

    /// Too few samples wait a second from the first look; then the I/O p90 is read and the
    /// total p99, starting a new second of its own, is not.
    #[test]
    fn few_samples_wait_a_second_and_the_wait_is_shared() {
        let mut feedback = LatencyFeedback::new(ms(2), ms(10));
        let mut depths = [256, 128, 64, 16];
        let mut trace = TraceBuffer::default();
        feedback.record(Domain::Read, 0, 0, ms(10));
        assert!(feedback.fire_if_due(ms(110), &mut depths, &mut trace));
        assert_eq!(depths[0], 256, "one sample, the wait starts");
        feedback.record(Domain::Read, ms(1200), ms(1200), ms(1210));
        assert!(feedback.fire_if_due(ms(1310), &mut depths, &mut trace));
        // The I/O p90 was bad: congestion. The total p99 waits anew, and nothing was
        // remembered, so no depth changes.
        assert_eq!(depths, [256, 128, 64, 16]);
        assert_eq!(feedback.timeouts[0], Some(ms(1310) + SECOND));
    }
}
