//! A group's think time: cfq's decaying mean of the gap between a group's last completion
//! (nothing of the group left at the device or queued) and its next request
//! (`cfq_update_io_thinktime`, Linux 2.6.30 `block/cfq-iosched.c`; our own code).

use crate::Nanos;

/// Fixed-point weight of a new sample (cfq's 256 of 2048 once decayed).
const SAMPLE: u64 = 256;
/// Samples below this (in the decayed fixed-point count) do not yet say anything
/// (cfq's `sample_valid`: more than 80).
const VALID: u64 = 80;

/// The decaying think-time statistics of one group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ThinkTime {
    samples: u64,
    total: u64,
}

impl ThinkTime {
    /// A gap of `gap`, capped at `cap` (cfq caps at twice its idle window).
    pub(super) fn record(&mut self, gap: Nanos, cap: Nanos) {
        let gap = gap.min(cap);
        self.samples = (7 * self.samples + SAMPLE) / 8;
        self.total = (7 * self.total).saturating_add(SAMPLE.saturating_mul(gap)) / 8;
    }

    /// The mean gap, once enough samples say it.
    pub(super) fn mean(&self) -> Option<Nanos> {
        (self.samples > VALID).then(|| (self.total + SAMPLE / 2) / self.samples)
    }

    /// Whether waiting `window` for the next request is likely to pay: the mean gap is
    /// within it, or too few samples say otherwise.
    pub(super) fn worth_waiting(&self, window: Nanos) -> bool {
        self.mean().is_none_or(|mean| mean <= window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_after_enough_samples_and_capped() {
        let mut think = ThinkTime::default();
        think.record(1_000, 16_000);
        assert_eq!(think.mean(), None);
        assert!(think.worth_waiting(8_000));
        for _ in 0..10 {
            think.record(100_000, 16_000);
        }
        let mean = think.mean().expect("valid after 11 samples");
        assert!((15_000..=16_000).contains(&mean), "{mean}");
        assert!(!think.worth_waiting(8_000));
        for _ in 0..30 {
            think.record(500, 16_000);
        }
        assert!(think.worth_waiting(8_000));
    }
}
