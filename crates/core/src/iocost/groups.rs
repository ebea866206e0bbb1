//! The groups iocost weighs, as the layer keeps them: each group's `io.weight`, whether it
//! is active, its vtime account and cursor, the requests it holds for want of budget, and
//! its shares, `hweight_active` from the tree of active groups and `hweight_inuse` after
//! donation (`block/blk-iocost.c`, 5.4 to 5.9: `propagate_active_weights`,
//! `current_hweight`, `transfer_surpluses`).
//!
//! A group is active from its first request until a period in which it issued nothing,
//! held nothing and had nothing at the device. Only active groups count among their
//! siblings, so an idle group's share goes to the others at once. The root group's own
//! requests are charged at the whole device, as the kernel's root iocg is. Donation is
//! computed as 5.10 on computes it: donors keep their reduced share, and what they give up
//! goes to every active group that does not donate, in proportion to its `hweight_active`,
//! at any depth (the global rate gamma = (1 - t_r') / (1 - t_r) of `transfer_surpluses`);
//! 5.4 to 5.9 walked the tree and gave a donor's surplus to its siblings first. Groups with
//! requests of their own are leaves here, as cgroup v2 keeps processes out of inner groups.

use std::collections::VecDeque;

use super::budget::Account;
use super::donation::redistribute;
use super::hweight::{hweight, Level, WEIGHT_DEFAULT, WEIGHT_ONE};
use crate::{GroupTree, Nanos, Request};

/// A request held for budget, with the absolute cost it was charged when it arrived.
#[derive(Debug, Clone)]
pub(super) struct Held {
    /// The request.
    pub request: Request,
    /// Its cost at hweight 100%.
    pub abs_cost: u64,
}

/// One group (the kernel's iocg).
#[derive(Debug, Clone)]
pub(super) struct Iocg {
    /// `io.weight`.
    pub weight: u64,
    /// Its parent's index.
    pub parent: Option<usize>,
    /// Counts among its siblings.
    pub active: bool,
    /// Its vtime and debt.
    pub account: Account,
    /// Where its last request ended (sector).
    pub cursor: Option<u64>,
    /// Requests waiting for budget, in arrival order.
    pub held: VecDeque<Held>,
    /// When its first held request may go, as last worked out.
    pub wake: Nanos,
    /// Released and not completed.
    pub in_flight: usize,
    /// Share of the device by weight among active groups.
    pub hw_active: u64,
    /// Share it is charged at, after donation.
    pub hw_inuse: u64,
    /// Its share of the device's vtime in the last period, when it may donate: `None` while
    /// it is short of budget, came back this period or took its share back.
    pub usage: Option<u64>,
    /// Absolute cost issued this period.
    pub usage_abs: u64,
    /// Issued or asked to this period.
    pub busy: bool,
}

/// Every group of the tree, by index.
#[derive(Debug, Clone)]
pub(super) struct Groups {
    /// The groups, the root first, each after its parent.
    pub list: Vec<Iocg>,
}

/// `io.weight` of a tree group: its weight if set, else the default.
pub(super) fn io_weight(weight: u32, set: bool) -> u64 {
    u64::from(if set { weight } else { WEIGHT_DEFAULT })
}

impl Iocg {
    /// A group's state before its first request: idle, with the whole device as its share.
    fn idle(group: &crate::Group) -> Self {
        Iocg {
            weight: io_weight(group.weight, group.weight_set),
            parent: group.parent.map(|p| p.index()),
            active: false,
            account: Account::default(),
            cursor: None,
            held: VecDeque::new(),
            wake: 0,
            in_flight: 0,
            hw_active: WEIGHT_ONE,
            hw_inuse: WEIGHT_ONE,
            usage: None,
            usage_abs: 0,
            busy: false,
        }
    }
}

impl Groups {
    /// The groups of `tree`, all idle.
    pub fn new(tree: &GroupTree) -> Groups {
        let list = tree.iter().map(|(_, group)| Iocg::idle(group)).collect();
        Groups { list }
    }

    /// Take the groups of `tree` this list lacks (added while the run goes on), idle.
    pub fn grow(&mut self, tree: &GroupTree) {
        let known = self.list.len();
        self.list
            .extend(tree.iter().skip(known).map(|(_, group)| Iocg::idle(group)));
    }

    /// Works out every active group's `hweight_active` from the tree of active groups and
    /// `hweight_inuse` from the donors' usage.
    pub fn recompute(&mut self) {
        let n = self.list.len();
        // Whether a group or any of its descendants is active; children come after parents.
        let mut live: Vec<bool> = self.list.iter().map(|g| g.active).collect();
        for i in (1..n).rev() {
            if let Some(p) = self.list[i].parent {
                live[p] |= live[i];
            }
        }
        let mut child_sum = vec![0u64; n];
        for (g, _) in self.list.iter().zip(&live).filter(|(_, &live)| live) {
            if let Some(p) = g.parent {
                child_sum[p] += g.weight;
            }
        }
        for i in 0..n {
            let mut path = Vec::new();
            let mut at = i;
            while let Some(p) = self.list[at].parent {
                path.push(Level {
                    weight: self.list[at].weight,
                    sibling_sum: child_sum[p],
                });
                at = p;
            }
            path.reverse();
            self.list[i].hw_active = hweight(&path);
        }
        self.donate();
    }

    /// `hweight_inuse` of the active groups below the root: donors keep their usage plus a
    /// margin, the others share the rest by `hweight_active`.
    fn donate(&mut self) {
        let members: Vec<usize> = (1..self.list.len())
            .filter(|&i| self.list[i].active)
            .collect();
        let shares: Vec<(u64, u64)> = members
            .iter()
            .map(|&i| {
                let g = &self.list[i];
                (g.hw_active, g.usage.unwrap_or(g.hw_active))
            })
            .collect();
        for (&i, inuse) in members.iter().zip(redistribute(&shares)) {
            self.list[i].hw_inuse = inuse.max(1);
        }
        self.list[0].hw_active = WEIGHT_ONE;
        self.list[0].hw_inuse = WEIGHT_ONE;
    }

    /// Whether any group is active.
    pub fn any_active(&self) -> bool {
        self.list.iter().any(|g| g.active)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(weights: &[(&str, u32)]) -> Groups {
        let mut tree = GroupTree::default();
        for (path, weight) in weights {
            let id = tree.ensure(path).expect("path");
            tree.set_weight(id, *weight).expect("weight");
        }
        Groups::new(&tree)
    }

    #[test]
    fn only_active_siblings_share_and_nesting_multiplies() {
        let mut g = tree(&[("a", 200), ("b", 100), ("b/c", 100), ("b/d", 300)]);
        for i in [1, 3, 4] {
            g.list[i].active = true;
        }
        g.recompute();
        // a: 200/300; b/c: 100/300 * 100/400; b/d: 100/300 * 300/400.
        assert_eq!(g.list[1].hw_active, 43_690);
        assert_eq!(g.list[3].hw_active, 5_461);
        assert_eq!(g.list[4].hw_active, 16_383);
        g.list[1].active = false;
        g.recompute();
        assert_eq!(g.list[4].hw_active, WEIGHT_ONE * 3 / 4);
    }

    #[test]
    fn a_nested_donors_share_goes_to_every_taker_by_its_active_share() {
        // a (100) holds a/x and a/y (100 each) beside b (100): a/x idle gives up all but the
        // 2% floor, and b and a/y take the rest 2:1, by hweight_active (1/2 and 1/4), not
        // a/y first. The kernel's round-ups give 42818 and 21409.
        let mut g = tree(&[("a", 100), ("b", 100), ("a/x", 100), ("a/y", 100)]);
        for i in [2, 3, 4] {
            g.list[i].active = true;
        }
        g.list[3].usage = Some(0);
        g.recompute();
        assert_eq!(g.list[3].hw_inuse, WEIGHT_ONE / 50);
        assert_eq!(g.list[2].hw_inuse, 42_817);
        assert_eq!(g.list[4].hw_inuse, 21_408);
    }

    #[test]
    fn an_idle_groups_share_goes_to_the_busy_one() {
        let mut g = tree(&[("a", 100), ("b", 100)]);
        g.list[1].active = true;
        g.list[2].active = true;
        g.list[2].usage = Some(0);
        g.recompute();
        assert_eq!(g.list[1].hw_inuse, WEIGHT_ONE - WEIGHT_ONE / 50);
        assert_eq!(g.list[2].hw_inuse, WEIGHT_ONE / 50);
        assert_eq!(g.list[2].hw_active, WEIGHT_ONE / 2);
    }
}
