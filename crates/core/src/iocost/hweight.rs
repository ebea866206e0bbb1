//! `io.weight` and hierarchical weights.
//!
//! A group's share of the device is the product, from the root down, of its weight over
//! the sum of its active siblings' weights: `hweight_active`. Groups lend what they do not
//! use by lowering their `inuse` weight below their `active` one; the same product over
//! `inuse` weights is `hweight_inuse`, which is what a group's requests are charged at
//! (`block/blk-iocost.c`, 5.4 to 6.x). Fixed point with [`WEIGHT_ONE`] as 100%.

use std::fmt;

/// Hierarchical weight 100%.
pub const WEIGHT_ONE: u64 = 1 << 16;
/// `io.weight` when none is set.
pub const WEIGHT_DEFAULT: u32 = 100;
/// Smallest `io.weight`.
pub const WEIGHT_MIN: u32 = 1;
/// Largest `io.weight`.
pub const WEIGHT_MAX: u32 = 10_000;

/// One level of a group's path from the root: its own weight and the sum over its active
/// siblings (itself included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// The group's (active or inuse) weight at this level.
    pub weight: u64,
    /// Sum of the same weight over the active children of the parent.
    pub sibling_sum: u64,
}

/// The hierarchical weight of a path (root's child first), never below one unit.
pub fn hweight(path: &[Level]) -> u64 {
    path.iter().fold(WEIGHT_ONE, |hw, level| {
        (hw * level.weight)
            .checked_div(level.sibling_sum)
            .map_or(hw, |share| share.max(1))
    })
}

/// Charge for a request of absolute cost `abs_cost` by a group at `hweight_inuse`: the
/// smaller the share, the dearer each request in the group's own vtime (rounded up).
pub fn charge(abs_cost: u64, hweight_inuse: u64) -> u64 {
    (abs_cost * WEIGHT_ONE).div_ceil(hweight_inuse.max(1))
}

/// Parses an `io.weight` value: `N` or `default N`, N in 1..=10000.
pub fn parse_weight(text: &str) -> Result<u32, WeightError> {
    let value = text.trim();
    let value = value.strip_prefix("default").map_or(value, str::trim);
    match value.parse::<u32>() {
        Ok(w) if (WEIGHT_MIN..=WEIGHT_MAX).contains(&w) => Ok(w),
        _ => Err(WeightError(text.to_string())),
    }
}

/// A malformed `io.weight` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightError(pub String);

impl fmt::Display for WeightError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "io.weight `{}`: expected a weight 1..10000, optionally after `default`",
            self.0
        )
    }
}

impl std::error::Error for WeightError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_shares_multiply() {
        // Parent 200 of (200 + 100), child 100 of (100 + 300): 2/3 * 1/4 = 1/6.
        let hw = hweight(&[
            Level {
                weight: 200,
                sibling_sum: 300,
            },
            Level {
                weight: 100,
                sibling_sum: 400,
            },
        ]);
        assert_eq!(hw, 10_922);
        assert_eq!(hweight(&[]), WEIGHT_ONE);
    }

    #[test]
    fn charge_scales_inversely_with_share() {
        assert_eq!(charge(1_000, WEIGHT_ONE), 1_000);
        assert_eq!(charge(1_000, WEIGHT_ONE / 4), 4_000);
        assert_eq!(charge(1, 3), 21_846);
    }

    #[test]
    fn weight_syntax() {
        assert_eq!(parse_weight("250"), Ok(250));
        assert_eq!(parse_weight("default 10000"), Ok(10_000));
        assert_eq!(
            parse_weight("0").unwrap_err().to_string(),
            "io.weight `0`: expected a weight 1..10000, optionally after `default`"
        );
        assert!(parse_weight("10001").is_err());
    }
}
