//! The peak-rate estimator: how fast the device serves, learned from dispatches, which sets
//! `max_budget` (in auto mode, the sectors served in `timeout_sync` at the peak rate) and the
//! duration of interactive weight raising.
//!
//! Dispatches are sampled in observation windows. A window needs at least 32 samples and 300 ms
//! and aims at 1 s; it closes early after more than 100 ms without dispatches while nothing is in
//! flight, or after a slow completion: more than 2 ms after the previous one, and slower than
//! 2^-10 sectors per µs for the largest request dispatched since the last multiple of 32 samples
//! (the kernel forgets the largest size every 32 dispatches, so a run of small random reads
//! between large sequential ones closes the window at its first slow completion, and the next
//! window starts without the random reads' time in it).
//! Its rate (sectors/µs, fixed point ×2^16) counts only if at least 3/4 of the samples were
//! sequential or it beats the current peak, and never above 20 M sectors/s. The peak follows
//! through a low-pass filter whose weight grows with the window's sequentiality and length:
//! `w = min(8, 9·seq/samples × interval/1 s)`, `peak = peak·(9−w)/(10−w) + rate/(10−w)`.
//! It starts at 2/3 of the reference rate for the device kind.
//!
//! Source: Linux's `block/bfq-iosched.c`: `bfq_update_peak_rate`, `bfq_update_rate_reset` and
//! `bfq_reset_rate_computation`. Our own code.

use crate::time::{ms, MICROSECOND, SECOND};
use crate::Nanos;

/// Fixed-point shift of rates.
pub(super) const RATE_SHIFT: u32 = 16;
/// Reference rates: rotational and non-rotational, in sectors/µs ×2^16.
const REFERENCE_RATE: [u64; 2] = [14_000, 33_000];
/// Interactive raising lasts this long at the reference rate: rotational, non-rotational.
const REFERENCE_RAISING: [Nanos; 2] = [7 * SECOND, 2_500 * ms(1)];
const MIN_SAMPLES: u32 = 32;
const MIN_INTERVAL: Nanos = ms(300);
const TARGET_INTERVAL: Nanos = SECOND;
const IDLE_GAP: Nanos = ms(100);
/// 20 M sectors/s in sectors/µs ×2^16.
const MAX_RATE: u64 = 20 << RATE_SHIFT;
/// The largest request a slow completion is judged by is forgotten every this many samples,
/// so that after a run of small requests it is theirs.
const LARGEST_REQUEST_SPAN: u32 = 32;

/// The estimator.
#[derive(Debug, Clone)]
pub(super) struct PeakRate {
    /// The peak rate, sectors/µs ×2^16.
    pub(super) rate: u64,
    kind: usize,
    samples: u32,
    sequential_samples: u32,
    sectors: u64,
    first_dispatch: Nanos,
    last_dispatch: Nanos,
    last_completion: Nanos,
    last_position: u64,
    largest_request: u64,
}

impl PeakRate {
    /// A fresh estimator at 2/3 of the reference rate.
    pub(super) fn new(rotational: bool) -> Self {
        let kind = usize::from(!rotational);
        Self {
            rate: REFERENCE_RATE[kind] * 2 / 3,
            kind,
            samples: 0,
            sequential_samples: 0,
            sectors: 0,
            first_dispatch: 0,
            last_dispatch: 0,
            last_completion: 0,
            last_position: 0,
            largest_request: 0,
        }
    }

    /// A request of `sectors` at `sector` goes to the device; `in_flight` before it. Returns
    /// whether the peak rate changed.
    pub(super) fn dispatched(
        &mut self,
        sector: u64,
        sectors: u64,
        in_flight: usize,
        now: Nanos,
    ) -> bool {
        let mut changed = false;
        if self.samples > 0 && in_flight == 0 && now.saturating_sub(self.last_dispatch) > IDLE_GAP {
            changed = self.close_window(now);
        }
        if self.samples == 0 {
            self.first_dispatch = now;
            self.last_completion = now;
        }
        self.samples += 1;
        if sector.abs_diff(self.last_position) < super::idling::SEEK_THRESHOLD {
            self.sequential_samples += 1;
        }
        self.sectors += sectors;
        self.largest_request = if self.samples.is_multiple_of(LARGEST_REQUEST_SPAN) {
            sectors
        } else {
            self.largest_request.max(sectors)
        };
        self.last_dispatch = now;
        self.last_position = sector + sectors;
        if now.saturating_sub(self.first_dispatch) >= TARGET_INTERVAL {
            changed |= self.close_window(now);
        }
        changed
    }

    /// A request completed. Returns whether the peak rate changed (a slow completion closes the window).
    pub(super) fn completed(&mut self, now: Nanos) -> bool {
        let gap_us = now.saturating_sub(self.last_completion) / MICROSECOND;
        let mut changed = false;
        if self.samples > 0
            && gap_us > super::idling::MIN_THINK_TIME / MICROSECOND
            && (self.largest_request << RATE_SHIFT) / gap_us.max(1) < 1 << (RATE_SHIFT - 10)
        {
            changed = self.close_window(now);
        }
        self.last_completion = now;
        changed
    }

    /// End the window: fold its rate in if it counts, and start a new one.
    fn close_window(&mut self, now: Nanos) -> bool {
        let interval = self
            .last_dispatch
            .saturating_sub(self.first_dispatch)
            .max(self.last_completion.saturating_sub(self.first_dispatch));
        let changed =
            self.samples >= MIN_SAMPLES && interval >= MIN_INTERVAL && self.fold(interval);
        self.reset(now);
        changed
    }

    fn fold(&mut self, interval: Nanos) -> bool {
        let usecs = (interval / MICROSECOND).max(1);
        let rate = (self.sectors << RATE_SHIFT) / usecs;
        let sequential = self.sequential_samples * 4 >= self.samples * 3;
        if (!sequential && rate <= self.rate) || rate > MAX_RATE {
            return false;
        }
        let weight = u64::from(9 * self.sequential_samples / self.samples);
        let weight = (weight * interval / TARGET_INTERVAL).min(8);
        let divisor = 10 - weight;
        self.rate = (self.rate * (divisor - 1) / divisor + rate / divisor).max(1);
        true
    }

    fn reset(&mut self, now: Nanos) {
        self.samples = 0;
        self.sequential_samples = 0;
        self.sectors = 0;
        self.largest_request = 0;
        self.first_dispatch = now;
        self.last_dispatch = now;
    }

    /// `max_budget` in auto mode: sectors served in `timeout` at the peak rate.
    pub(super) fn max_budget(&self, timeout: Nanos) -> u64 {
        (self.rate * (timeout / MICROSECOND)) >> RATE_SHIFT
    }

    /// How long interactive weight raising lasts: longer on slower devices, 3–25 s.
    pub(super) fn raising_duration(&self) -> Nanos {
        let product =
            u128::from(REFERENCE_RATE[self.kind]) * u128::from(REFERENCE_RAISING[self.kind]);
        let duration = (product / u128::from(self.rate.max(1))) as u64;
        duration.clamp(3 * SECOND, 25 * SECOND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_two_thirds_of_the_reference() {
        let disk = PeakRate::new(true);
        assert_eq!(disk.rate, 9333);
        // 9333 / 2^16 sectors/µs for 125 ms.
        assert_eq!(disk.max_budget(ms(125)), 17_801);
        assert_eq!(disk.raising_duration(), 10_500_375_013);
    }

    #[test]
    fn a_sequential_window_moves_the_peak_towards_the_device_rate() {
        let mut estimator = PeakRate::new(true);
        // 256-sector requests every 2 ms: 128 sectors/ms = 0.128 sectors/µs = 8388 ×2^-16.
        let mut now = 0;
        let mut sector = 0;
        let mut changed = false;
        for _ in 0..600 {
            changed |= estimator.dispatched(sector, 256, 1, now);
            sector += 256;
            now += ms(2);
            estimator.completed(now);
        }
        assert!(changed);
        assert!(
            estimator.rate < 9333 && estimator.rate > 8388,
            "{}",
            estimator.rate
        );
    }

    #[test]
    fn short_or_random_windows_do_not_count() {
        let mut estimator = PeakRate::new(false);
        let before = estimator.rate;
        for i in 0..20 {
            estimator.dispatched(i * 100_000, 8, 0, i * ms(1));
        }
        estimator.dispatched(0, 8, 0, ms(500));
        assert_eq!(estimator.rate, before, "20 samples are too few");
    }

    /// 400 ms of 128-sector sequential reads (one every 0.5 ms), then small random reads
    /// 10 ms apart: the window closes at the first slow completion once the 32-sample span
    /// holding the large reads has passed, so the random reads' time never dilutes the rate.
    #[test]
    fn a_slow_completion_after_small_requests_closes_the_window() {
        let mut estimator = PeakRate::new(true);
        let (mut now, mut sector) = (0, 0);
        // 800 large samples: the span boundary falls at sample 800, a large one.
        for _ in 0..800 {
            estimator.dispatched(sector, 128, 0, now);
            sector += 128;
            now += MICROSECOND * 500;
            estimator.completed(now);
        }
        // Samples 801..=831 are small but the span still holds the large reads: a 10 ms gap
        // (128 sectors in 10 ms beats 2^-10 sectors/µs) keeps the window open.
        let mut closed_at = None;
        for i in 801..=840 {
            let changed = estimator.dispatched(i * 1_000_000, 8, 0, now);
            now += ms(10);
            if estimator.completed(now) || changed {
                closed_at.get_or_insert(i);
            }
        }
        // Sample 832 starts a new span of 8-sector reads; its completion 10 ms later is slow
        // and folds the window that ended at the previous completion.
        assert_eq!(closed_at, Some(832));
        // The window folded is the sequential reads' and the first 32 random reads' service,
        // 800 × 128 + 32 × 8 sectors over 710 ms: 9475 ×2^-16 sectors/µs, above the starting
        // peak of 9333, so the peak rises (weight 9 · 800/832 → 8, × 0.71 s → 5, divisor 5). Had the window run
        // on to 1 s through the random reads, its rate would have been about 6 800 and the
        // peak would have fallen.
        let window_rate = ((800 * 128 + 32 * 8_u64) << RATE_SHIFT) / 710_000;
        assert_eq!(window_rate, 9475);
        assert_eq!(estimator.rate, 9333 * 4 / 5 + 9475 / 5);
    }
}
