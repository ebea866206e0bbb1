//! Groups made and removed, and jobs moved between them, during a simulated run
//! (`; ioslice-at: 5s cgroup NAME create …`, `… cgroup NAME remove`, `… job NAME
//! cgroup=PATH`): two sequential readers on `sim:sata-7200` share one group until a second
//! group weighted five times as much is made and one of them moved into it, from when the
//! moved one gets about five sixths of the disk, under bfq and cfq; a group is removed once
//! its job has ended, and removing one while its job runs stops the run with an error naming
//! the job. Every request completes exactly once.

use ioslice_core::trace::TraceLog;
use ioslice_core::TraceEvent;
mod common;

use ioslice_sim::simulation::{GroupAction, GroupChange, SimError};

const SECOND: u64 = 1_000_000_000;

/// Two sequential readers, `a` and `b`, in group `g1` for 20 s.
const READERS: &str = "[global]
filename=/dev/sdb
direct=1
ioengine=libaio
iodepth=2
rw=read
bs=128k
size=100g
runtime=20
time_based
cgroup=g1
cgroup_weight=100

[a]

[b]
offset=200g
";

fn change(at_s: u64, group: &str, action: GroupAction, weight: Option<u32>) -> GroupChange {
    GroupChange {
        at: at_s * SECOND,
        group: group.to_string(),
        action,
        weight,
        limits: None,
        origin: "job.fio:1".to_string(),
    }
}

/// Run `job` under `sched` with `changes`; every request completes exactly once.
fn run(job: &str, sched: &str, changes: Vec<GroupChange>) -> Result<TraceLog, SimError> {
    let mut config = common::config(sched, "sim:sata-7200", 1);
    config.run.group_changes = changes;
    common::traced(job, &config)
}

/// Bytes each process (a, b) completed in `[from, to)` seconds, and the groups they were
/// charged to.
fn bytes(log: &TraceLog, from: u64, to: u64) -> ([u64; 2], Vec<u32>) {
    let mut out = [0; 2];
    let mut groups = Vec::new();
    for (at, event) in &log.events {
        if let TraceEvent::Complete { request, .. } = event {
            if (from * SECOND..to * SECOND).contains(at) {
                // Processes are numbered from 1 in job order: a, b.
                let process = (request.process.0 as usize).saturating_sub(1).min(1);
                out[process] += u64::from(request.sectors) * 512;
                if !groups.contains(&request.group.0) {
                    groups.push(request.group.0);
                }
            }
        }
    }
    groups.sort_unstable();
    (out, groups)
}

#[test]
fn a_job_moved_into_a_new_group_gets_its_weights_share() {
    for sched in ["bfq", "cfq"] {
        let log = run(
            READERS,
            sched,
            vec![
                change(5, "g2", GroupAction::Create, Some(500)),
                change(5, "g2", GroupAction::Move { job: "b".into() }, None),
            ],
        )
        .expect("runs");
        let ([a, b], groups) = bytes(&log, 1, 5);
        let before = b as f64 / (a + b) as f64;
        assert_eq!(groups, vec![1], "{sched}: one group before the change");
        assert!(
            (0.35..0.65).contains(&before),
            "{sched}: b's share before {before:.3}"
        );
        let ([a, b], groups) = bytes(&log, 6, 20);
        let after = b as f64 / (a + b) as f64;
        assert_eq!(groups, vec![1, 2], "{sched}: both groups after the change");
        assert!(
            (0.75..0.92).contains(&after),
            "{sched}: b's share after {after:.3}, expected about 5/6"
        );
    }
}

/// bfq moves a moved process's queue with it, as 6.x's `bfq_bfqq_move` does: b's first turn
/// in g2 has the budget its last turn in g1 left it (a sequential reader's grown budget), not
/// the two thirds of the largest budget a new queue starts with, and b's requests are served
/// from one queue throughout (its turns never overlap a's in g1 after the move).
#[test]
fn bfq_moves_the_moved_processs_queue_with_its_state() {
    // b starts a second after a: not in a's burst of queue creations, so bfq does not merge
    // the two queues stably, and b's queue is its own.
    let apart = READERS.replace("[b]\n", "[b]\nstartdelay=1\n");
    let log = run(
        &apart,
        "bfq",
        vec![
            change(5, "g2", GroupAction::Create, Some(500)),
            change(5, "g2", GroupAction::Move { job: "b".into() }, None),
        ],
    )
    .expect("runs");
    // b is process 2; its turns' (group, budget, next budget), in order.
    let turns: Vec<(u32, u64, u64)> = log
        .events
        .iter()
        .filter_map(|(_, event)| match event {
            TraceEvent::BudgetEnd {
                queue,
                budget,
                next_budget,
                ..
            } if queue.process.map(|p| p.0) == Some(2) => {
                Some((queue.group.0, *budget, *next_budget))
            }
            _ => None,
        })
        .collect();
    let first_in_g2 = turns
        .iter()
        .position(|&(group, _, _)| group == 2)
        .expect("b is served in g2");
    assert!(first_in_g2 > 0, "b was served in g1 first");
    let (_, _, left) = turns[first_in_g2 - 1];
    let (_, budget, _) = turns[first_in_g2];
    assert_eq!(
        budget, left,
        "b's first budget in g2 is what its last turn in g1 left it"
    );
    assert!(
        turns[first_in_g2..].iter().all(|&(group, _, _)| group == 2),
        "b is served in g2 only after the move"
    );
}

#[test]
fn a_group_is_removed_after_its_job_ends_and_not_while_it_runs() {
    let short_b = READERS.replace("[b]\n", "[b]\nruntime=4\ncgroup=g2\n");
    let log = run(
        &short_b,
        "bfq",
        vec![change(6, "g2", GroupAction::Remove, None)],
    )
    .expect("b ended at 4 s: g2 can go at 6 s");
    let (_, groups) = bytes(&log, 5, 20);
    assert_eq!(groups, vec![1]);
    let error = run(
        &short_b,
        "bfq",
        vec![change(2, "g2", GroupAction::Remove, None)],
    )
    .expect_err("b still runs at 2 s");
    assert_eq!(
        error.to_string(),
        "job.fio:1: cgroup 'g2' is busy at 2000 ms: job 'b' still runs in it (remove it after the job ends, or move the job out first)"
    );
}

#[test]
fn changes_that_cannot_happen_are_refused_before_the_run() {
    for (changes, says) in [
        (
            vec![change(1, "g1", GroupAction::Create, None)],
            "job.fio:1: group '/g1' already exists",
        ),
        (
            vec![change(1, "x/y", GroupAction::Create, None)],
            "job.fio:1: cannot add group '/x/y': its parent group does not exist",
        ),
        (
            vec![change(1, "g2", GroupAction::Move { job: "a".into() }, None)],
            "job.fio:1: no group 'g2' in the run then",
        ),
        (
            vec![
                change(1, "g2", GroupAction::Create, None),
                change(2, "g2", GroupAction::Move { job: "c".into() }, None),
            ],
            "job.fio:1: no job 'c' in the job file",
        ),
        (
            vec![change(1, "g3", GroupAction::Create, Some(5000))],
            "job.fio:1: group weight 5000 for 'g3' is out of range for bfq",
        ),
    ] {
        let error = run(READERS, "bfq", changes).expect_err(says);
        assert!(error.to_string().starts_with(says), "{error}");
    }
}
