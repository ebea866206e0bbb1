//! Donation: groups using less than their share lend the rest (work conservation).
//!
//! At each period a group whose usage (share of the device's vtime it consumed) sits
//! well under its `hweight_inuse` lowers that weight to its usage plus a margin (125% of
//! usage plus 2%), provided the drop is worth it (at least 3%); what it gives up goes to
//! the groups that are not donating, in proportion to their active shares. A group that
//! becomes busy again takes its weight back at once. Learnt from `block/blk-iocost.c`
//! (`surplus_adjusted_hweight_inuse` and `transfer_surpluses` in 5.5 to 5.9; 5.10 on
//! computes the targets in one pass over the tree with a global rate for the takers,
//! gamma = (1 - t_r') / (1 - t_r), which is what [`redistribute`] computes for the groups
//! that have requests of their own).

use super::hweight::WEIGHT_ONE;

/// Usage is scaled by this percentage...
pub const SURPLUS_SCALE_PCT: u64 = 125;
/// ...plus this absolute share...
pub const SURPLUS_SCALE_ABS: u64 = WEIGHT_ONE / 50;
/// ...and the result must be at least this far under the current share to donate.
pub const SURPLUS_MIN_ADJ_DELTA: u64 = WEIGHT_ONE / 33;

/// The reduced `hweight_inuse` of a group using `usage` of `hweight_inuse`, or `None`
/// when the surplus is too small to give.
pub fn donated_share(usage: u64, hweight_inuse: u64) -> Option<u64> {
    let target = (usage * SURPLUS_SCALE_PCT).div_ceil(100) + SURPLUS_SCALE_ABS;
    (target + SURPLUS_MIN_ADJ_DELTA <= hweight_inuse).then_some(target)
}

/// New `hweight_inuse` of sibling groups given their `(hweight_active, usage)`: donors
/// keep their reduced share, everyone else shares the rest by `hweight_active`.
pub fn redistribute(groups: &[(u64, u64)]) -> Vec<u64> {
    let targets: Vec<Option<u64>> = groups
        .iter()
        .map(|&(active, usage)| donated_share(usage, active))
        .collect();
    let given: u64 = targets.iter().flatten().sum();
    let takers: u64 = groups
        .iter()
        .zip(&targets)
        .filter(|(_, t)| t.is_none())
        .map(|(g, _)| g.0)
        .sum();
    let total: u64 = groups.iter().map(|g| g.0).sum();
    let pool = total.saturating_sub(given);
    groups
        .iter()
        .zip(&targets)
        .map(|(&(active, _), t)| match t {
            Some(share) => *share,
            None => (active * pool).checked_div(takers).unwrap_or(active),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_sibling_gives_nearly_everything_away() {
        let half = WEIGHT_ONE / 2;
        let shares = redistribute(&[(half, half), (half, 0)]);
        // The idle group keeps the 2% floor; the busy one gets the other 98%.
        assert_eq!(shares, vec![WEIGHT_ONE - WEIGHT_ONE / 50, WEIGHT_ONE / 50]);
    }

    #[test]
    fn small_surpluses_are_kept() {
        let half = WEIGHT_ONE / 2;
        assert_eq!(donated_share(half * 78 / 100, half), None);
        assert_eq!(donated_share(half / 2, half), Some(20_480 + 1_310));
        assert_eq!(
            redistribute(&[(half, half), (half, half)]),
            vec![half, half]
        );
    }
}
