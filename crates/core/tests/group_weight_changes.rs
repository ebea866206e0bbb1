//! Group weights changed while the policy runs (`Scheduler::update_group`), taken when the
//! kernel takes them: bfq at the group entity's next activation (`entity->new_weight`,
//! `__bfq_entity_update_weight_prio`), cfq when the group next joins the group service tree
//! (`cfq_update_group_weight`); a weight the policy refuses changes nothing; policies that
//! weigh no groups ignore the change.

mod common;

use ioslice_core::time::ms;
use ioslice_core::{
    build_scheduler, Completion, Dispatch, GroupId, GroupTree, IoPriority, Nanos, Scheduler,
    SchedulerContext,
};

use common::grouped_read;

/// `sched` for groups g1 and g2, both weighted 100.
fn policy(sched: &str) -> (Box<dyn Scheduler>, GroupTree) {
    let mut groups = GroupTree::default();
    for path in ["g1", "g2"] {
        let id = groups.ensure(path).expect("valid path");
        groups.set_weight(id, 100).expect("valid weight");
    }
    let context = SchedulerContext {
        groups: groups.clone(),
        rotational: true,
        queue_depth: 1,
    };
    let spec = sched.parse().expect("spec");
    (build_scheduler(&spec, &context).expect("builds"), groups)
}

/// Serve everything queued, completing each request at once; the time after.
fn drain(policy: &mut dyn Scheduler, mut now: Nanos) -> Nanos {
    loop {
        match policy.dispatch(now) {
            Dispatch::Request(request) => {
                let completion = Completion {
                    request,
                    dispatch_time: now,
                    error: None,
                };
                now += ms(1);
                policy.complete(&completion, now);
            }
            Dispatch::WaitUntil(at) => now = at,
            Dispatch::Empty => return now,
        }
    }
}

#[test]
fn a_new_weight_waits_for_the_groups_next_activation() {
    for sched in ["bfq", "cfq:slice_idle=0,group_idle=0"] {
        let (mut policy, mut groups) = policy(sched);
        let g1 = GroupId(1);
        groups.set_weight(g1, 400).expect("valid weight");
        // Idle: kept until the group becomes busy.
        policy.update_group(g1, groups.get(g1), 0).expect("taken");
        assert_eq!(policy.group_weight(g1), Some(100), "{sched}");
        policy.insert(grouped_read(1, 1, g1, IoPriority::default()), 0);
        let _ = policy.dispatch(0);
        assert_eq!(policy.group_weight(g1), Some(400), "{sched}");
        // Busy: cfq keeps the weight it has on the tree; taken when the group rejoins it.
        let now = drain(policy.as_mut(), 0);
        policy.insert(grouped_read(2, 1, g1, IoPriority::default()), now);
        groups.set_weight(g1, 800).expect("valid weight");
        policy.update_group(g1, groups.get(g1), now).expect("taken");
        if sched.starts_with("cfq") {
            assert_eq!(policy.group_weight(g1), Some(400), "{sched}");
        }
        // cfq takes it when the group rejoins the tree after leaving it; bfq when the group
        // entity is next activated or requeued.
        let mut now = drain(policy.as_mut(), now);
        let mut requests = 0;
        while policy.group_weight(g1) != Some(800) && requests < 1000 {
            requests += 1;
            policy.insert(
                grouped_read(2 + requests, 1, g1, IoPriority::default()),
                now,
            );
            now = drain(policy.as_mut(), now);
        }
        assert_eq!(policy.group_weight(g1), Some(800), "{sched}");
        // Exact, as the simulator is: cfq's group stays on the tree for its queue's 100 ms
        // slice (a request a millisecond here) and rejoins with the next request; bfq's queue
        // stays in service until its budget is spent, and the requeue takes the weight.
        let expected = if sched.starts_with("cfq") { 100 } else { 127 };
        assert_eq!(requests, expected, "{sched}");
        assert_eq!(policy.group_weight(GroupId(2)), Some(100), "{sched}");
    }
}

#[test]
fn a_weight_bfq_refuses_changes_nothing_and_groupless_policies_ignore_changes() {
    let (mut bfq, mut groups) = policy("bfq");
    let g1 = GroupId(1);
    groups.set_weight(g1, 5000).expect("the tree takes it");
    let error = bfq
        .update_group(g1, groups.get(g1), 0)
        .expect_err("bfq takes 1..=1000");
    assert!(error.to_string().contains("1..=1000"), "{error}");
    bfq.insert(grouped_read(1, 1, g1, IoPriority::default()), 0);
    let _ = bfq.dispatch(0);
    assert_eq!(bfq.group_weight(g1), Some(100));
    let (mut deadline, _) = policy("deadline");
    deadline
        .update_group(g1, groups.get(g1), 0)
        .expect("ignored");
    assert_eq!(deadline.group_weight(g1), None);
}
