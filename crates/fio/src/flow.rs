//! fio's flow control between jobs (`flow_id=`, `flow=`, `flow_sleep=`), as pure state shared
//! by the jobs of a run; the simulator and the real-run workers consult it before each I/O.
//!
//! After fio 3.33's `flow.c`: the jobs with the same `flow_id` and a `flow` weight above 0 form
//! a group with one counter (starting at 1) and the sum of their weights. Before each I/O a
//! job compares its own count of I/Os with the group's counter: if its share of the counter
//! is above its share of the weights it is held back (it sleeps `flow_sleep` µs after its
//! I/O in flight completes, or with `flow_sleep=0` retries at once, which fio does by
//! spinning); otherwise both counts go up by one and the I/O is issued. A job joins its group
//! when it starts and leaves when it ends, taking its count and weight with it. So the jobs
//! of a group issue I/Os in the ratio of their weights for as long as they run together.

use std::collections::BTreeMap;

/// fio's largest `flow` weight (`FLOW_MAX_WEIGHT`).
pub const MAX_WEIGHT: u64 = 1000;

/// The flow groups of a run.
#[derive(Debug, Clone, Default)]
pub struct FlowGroups {
    groups: BTreeMap<u32, Group>,
}

#[derive(Debug, Clone, Copy)]
struct Group {
    /// I/Os its members issued, plus 1 (fio's counter starts at 1).
    counter: u64,
    /// Sum of its members' weights.
    weight: u64,
}

/// One job's place in its flow group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowMember {
    /// Its `flow_id`.
    pub id: u32,
    weight: u64,
    /// I/Os it issued.
    counter: u64,
}

impl FlowGroups {
    /// A job with `flow_id=id` and `flow=weight` starts: its membership, or `None` for a
    /// weight of 0 (no flow control, fio's default).
    pub fn join(&mut self, id: u32, weight: u32) -> Option<FlowMember> {
        if weight == 0 {
            return None;
        }
        let group = self.groups.entry(id).or_insert(Group {
            counter: 1,
            weight: 0,
        });
        group.weight += u64::from(weight);
        Some(FlowMember {
            id,
            weight: u64::from(weight),
            counter: 0,
        })
    }

    /// The job ends: its I/Os and weight leave the group.
    pub fn leave(&mut self, member: &FlowMember) {
        if let Some(group) = self.groups.get_mut(&member.id) {
            group.counter = group.counter.saturating_sub(member.counter).max(1);
            group.weight = group.weight.saturating_sub(member.weight);
            if group.weight == 0 {
                self.groups.remove(&member.id);
            }
        }
    }

    /// Whether the job must hold its next I/O back: its share of the group's counter is above
    /// its share of the weights.
    pub fn holds_back(&self, member: &FlowMember) -> bool {
        self.groups.get(&member.id).is_some_and(|group| {
            u128::from(member.counter) * u128::from(group.weight)
                > u128::from(member.weight) * u128::from(group.counter)
        })
    }

    /// The job issues an I/O: its count and the group's go up by one.
    pub fn issue(&mut self, member: &mut FlowMember) {
        if let Some(group) = self.groups.get_mut(&member.id) {
            group.counter += 1;
            member.counter += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two jobs that always want to issue, weights 3 and 1, taking turns as fio's loop would:
    /// each issues whenever it is not held back.
    #[test]
    fn weights_three_to_one_issue_three_to_one() {
        let mut groups = FlowGroups::default();
        let mut a = groups.join(7, 3).expect("a joins");
        let mut b = groups.join(7, 1).expect("b joins");
        let mut order = String::new();
        for _ in 0..8 {
            for (name, member) in [('a', &mut a), ('b', &mut b)] {
                if !groups.holds_back(member) {
                    groups.issue(member);
                    order.push(name);
                }
            }
        }
        // b (weight 1/4) goes while its count is at most a quarter of the counter: 0 of 2,
        // 1 of 4, then 2 of 8 and 3 of 12; a never passes 3/4.
        assert_eq!(order, "ababaaabaaab");
        assert_eq!((a.counter, b.counter), (8, 4));
    }

    #[test]
    fn a_job_alone_or_without_weight_is_never_held() {
        let mut groups = FlowGroups::default();
        assert_eq!(groups.join(0, 0), None);
        let mut alone = groups.join(0, 5).expect("joins");
        for _ in 0..100 {
            assert!(!groups.holds_back(&alone));
            groups.issue(&mut alone);
        }
    }

    #[test]
    fn leaving_takes_the_count_and_weight_away() {
        let mut groups = FlowGroups::default();
        let mut a = groups.join(1, 1).expect("a");
        let b = groups.join(1, 1).expect("b");
        groups.issue(&mut a);
        assert!(!groups.holds_back(&a), "1 of 2 is a half");
        groups.issue(&mut a);
        assert!(groups.holds_back(&a), "2 of 3 is above a half");
        groups.leave(&b);
        assert!(!groups.holds_back(&a), "alone again");
        groups.leave(&a);
        assert!(groups.groups.is_empty());
    }
}
