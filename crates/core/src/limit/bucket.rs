//! A token bucket refilled continuously at a fixed rate, in exact integer arithmetic.
//!
//! Tokens (bytes or I/Os) are counted in nano-tokens: a rate of `r` tokens per second adds
//! exactly `r` nano-tokens per nanosecond, so refilling never rounds and never drifts, however
//! often or seldom it is asked.

use crate::time::SECOND;
use crate::Nanos;

/// Nano-tokens per token.
const NANO: i128 = SECOND as i128;

/// A bucket of `rate × burst` tokens, refilled at `rate` tokens per second. It starts full,
/// and a charge may take it below zero (a debt later refills repay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBucket {
    /// Tokens per second, at least 1.
    rate: u64,
    /// Capacity in nano-tokens.
    depth: i128,
    /// Content in nano-tokens at `updated`; negative when in debt.
    level: i128,
    /// When `level` was last brought up to date.
    updated: Nanos,
}

impl TokenBucket {
    /// A full bucket for `rate` tokens per second (0 is taken as 1) holding `burst` worth of them.
    pub fn new(rate: u64, burst: Nanos) -> Self {
        let rate = rate.max(1);
        let depth = i128::try_from(u128::from(rate) * u128::from(burst)).unwrap_or(i128::MAX);
        Self {
            rate,
            depth,
            level: depth,
            updated: 0,
        }
    }

    /// Tokens per second.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// The content at `now` (not before the last charge), in nano-tokens.
    fn level_at(&self, now: Nanos) -> i128 {
        let elapsed = now.saturating_sub(self.updated);
        let refill =
            i128::try_from(u128::from(self.rate) * u128::from(elapsed)).unwrap_or(i128::MAX);
        self.level.saturating_add(refill).min(self.depth)
    }

    /// What a request of `tokens` must find in the bucket: all of them, or a full bucket
    /// when it is larger than the bucket.
    fn needed(&self, tokens: u64) -> i128 {
        (i128::from(tokens) * NANO).min(self.depth)
    }

    /// The earliest time, `now` or later, at which a request of `tokens` may pass.
    pub fn ready_at(&self, tokens: u64, now: Nanos) -> Nanos {
        let missing = self.needed(tokens) - self.level_at(now);
        if missing <= 0 {
            return now;
        }
        let rate = i128::from(self.rate);
        let wait = (missing + rate - 1) / rate;
        now.saturating_add(u64::try_from(wait).unwrap_or(u64::MAX))
    }

    /// Whether a request of `tokens` may pass at `now`.
    pub fn allows(&self, tokens: u64, now: Nanos) -> bool {
        self.ready_at(tokens, now) <= now
    }

    /// Take `tokens` out at `now`; the bucket may go into debt.
    pub fn charge(&mut self, tokens: u64, now: Nanos) {
        let now = now.max(self.updated);
        self.level = self.level_at(now) - i128::from(tokens) * NANO;
        self.updated = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn starts_full_refills_exactly_and_lets_big_requests_through_when_full() {
        // 1000 tokens/s, 100 ms burst: 100 tokens deep.
        let mut bucket = TokenBucket::new(1000, ms(100));
        assert!(bucket.allows(100, 0));
        bucket.charge(100, 0);
        assert_eq!(bucket.ready_at(1, 0), ms(1));
        assert_eq!(bucket.ready_at(10, 0), ms(10));
        // Larger than the bucket: passes once the bucket is full, then leaves a debt.
        assert_eq!(bucket.ready_at(500, 0), ms(100));
        bucket.charge(500, ms(100));
        assert_eq!(bucket.ready_at(1, ms(100)), ms(501));
        // A refill asked for in many small steps lands where one big step does.
        let mut stepped = bucket.clone();
        for t in (ms(100)..ms(300)).step_by(7_777) {
            stepped.charge(0, t);
        }
        assert_eq!(stepped.ready_at(1, ms(300)), ms(501));
    }

    #[test]
    fn zero_burst_paces_without_a_head_start() {
        let mut bucket = TokenBucket::new(4, 0);
        assert!(bucket.allows(1, 0));
        bucket.charge(1, 0);
        assert_eq!(bucket.ready_at(1, 0), ms(250));
    }
}
