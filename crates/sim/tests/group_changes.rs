//! Weights and limits changed during a run (`; ioslice-at: … cgroup NAME …`,
//! `SimConfig::group_changes`): two groups of O_DIRECT sequential 128 KiB readers at depth 2
//! on `sim:sata-7200` share the disk by their old weights before the change and by the new
//! ones after it, under bfq and cfq; a limit set during the run holds the group to the new
//! rate from then on (a lone reader exactly; beside a greedy reader bfq gives it no more than
//! it gives the same limit set from the start). Shares are measured over windows that leave the second after a change
//! out (the policy takes a new weight at the group's next activation). dm-ioband and elv-fq
//! above noop follow a new weight as well.

use ioslice_core::elvfq::ElvFqSettings;
use ioslice_core::ioband::{Controller, IobandSettings};
use ioslice_core::limit::Limits;
use ioslice_core::trace::TraceLog;
use ioslice_core::TraceEvent;
mod common;

use ioslice_sim::simulation::{GroupAction, GroupChange};

const SECOND: u64 = 1_000_000_000;

/// Two groups, `g1` and `g2`, of one sequential reader each, for 20 s.
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

[g1]
cgroup=g1
cgroup_weight=100

[g2]
cgroup=g2
cgroup_weight=100
offset=200g
";

fn change(at_s: u64, group: &str, weight: Option<u32>, limits: Option<Limits>) -> GroupChange {
    GroupChange {
        at: at_s * SECOND,
        group: group.to_string(),
        action: GroupAction::Set,
        weight,
        limits,
        origin: "job.fio:1".to_string(),
    }
}

/// One sequential reader in `g1`, for 20 s.
const LONE: &str = "[g1]
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
";

/// Run `job` under `sched` with `changes` and the groups' starting `limits`; every request
/// completes exactly once.
fn run(
    job: &str,
    sched: &str,
    changes: Vec<GroupChange>,
    limits: Vec<(String, Limits)>,
) -> TraceLog {
    run_under(job, sched, Controller::Elevator, changes, limits)
}

/// As [`run`], the groups' weights enforced by `controller`.
fn run_under(
    job: &str,
    sched: &str,
    controller: Controller,
    changes: Vec<GroupChange>,
    limits: Vec<(String, Limits)>,
) -> TraceLog {
    let mut config = common::config(sched, "sim:sata-7200", 1);
    config.run.group_changes = changes;
    config.run.group_limits = limits;
    config.run.controller = controller;
    common::traced(job, &config).expect("job runs")
}

/// Bytes each group (g1, g2) completed in `[from, to)` seconds.
fn bytes(log: &TraceLog, from: u64, to: u64) -> [u64; 2] {
    let mut out = [0; 2];
    for (at, event) in &log.events {
        if let TraceEvent::Complete { request, .. } = event {
            if (from * SECOND..to * SECOND).contains(at) {
                if let Some(slot) = (request.group.0 as usize).checked_sub(1) {
                    out[slot.min(1)] += u64::from(request.sectors) * 512;
                }
            }
        }
    }
    out
}

/// g2's share of the two groups' bytes in `[from, to)` seconds.
fn share_of_g2(log: &TraceLog, from: u64, to: u64) -> f64 {
    let [g1, g2] = bytes(log, from, to);
    g2 as f64 / (g1 + g2) as f64
}

fn shares_follow_the_change(sched: &str) {
    let log = run(
        READERS,
        sched,
        vec![change(10, "g2", Some(500), None)],
        Vec::new(),
    );
    let before = share_of_g2(&log, 1, 10);
    let after = share_of_g2(&log, 11, 20);
    assert!(
        (before - 0.5).abs() <= 0.5 * 0.05,
        "{sched}: g2's share before the change {before:.3}, expected 0.5 within 5 %"
    );
    let expected = 500.0 / 600.0;
    assert!(
        (after - expected).abs() <= expected * 0.05,
        "{sched}: g2's share after the change {after:.3}, expected {expected:.3} within 5 %"
    );
}

#[test]
fn bfq_shares_follow_the_new_weight() {
    shares_follow_the_change("bfq");
}

#[test]
fn cfq_shares_follow_the_new_weight() {
    shares_follow_the_change("cfq");
}

#[test]
fn a_change_is_deterministic_and_one_after_the_end_changes_nothing() {
    let changed = || {
        run(
            READERS,
            "bfq",
            vec![change(10, "g2", Some(500), None)],
            Vec::new(),
        )
    };
    assert_eq!(changed().events, changed().events);
    let plain = run(READERS, "bfq", Vec::new(), Vec::new());
    let late = run(
        READERS,
        "bfq",
        vec![change(100, "g2", Some(500), None)],
        Vec::new(),
    );
    assert_eq!(plain.events, late.events);
}

/// 4 MiB/s of reads.
fn four_mib() -> Limits {
    Limits {
        read_bps: Some(4 << 20),
        ..Limits::default()
    }
}

#[test]
fn a_limit_set_during_the_run_holds_a_lone_reader_to_the_new_rate() {
    let log = run(
        LONE,
        "bfq",
        vec![change(10, "g1", None, Some(four_mib()))],
        Vec::new(),
    );
    let before = bytes(&log, 1, 10)[0] as f64 / 9.0;
    let after = bytes(&log, 11, 20)[0] as f64 / 9.0;
    let rate = f64::from(4u32 << 20);
    assert!(before > 10.0 * rate, "unlimited before: {before:.0} B/s");
    assert!(
        (after - rate).abs() <= rate * 0.02,
        "after the change: {after:.0} B/s, expected 4 MiB/s within 2 %"
    );
}

#[test]
fn a_tightened_limit_acts_as_the_same_limit_from_the_start() {
    // Unlimited at first (the limit layer is added for the change), or loosely limited.
    let loose = Limits {
        read_bps: Some(400 << 20),
        ..Limits::default()
    };
    let from_start = run(READERS, "bfq", Vec::new(), vec![("g1".into(), four_mib())]);
    for initial in [Vec::new(), vec![("g1".to_string(), loose)]] {
        let changed = run(
            READERS,
            "bfq",
            vec![change(10, "g1", None, Some(four_mib()))],
            initial,
        );
        let before = bytes(&changed, 1, 10)[0];
        assert!(before > bytes(&from_start, 1, 10)[0] * 10, "{before}");
        // From a second after the change, g1 gets exactly what the limit from the start gives it.
        assert_eq!(bytes(&changed, 11, 20)[0], bytes(&from_start, 11, 20)[0]);
        assert!(bytes(&changed, 11, 20)[0] <= 9 * (4 << 20));
    }
}

#[test]
fn a_change_the_run_cannot_take_is_an_error_naming_it() {
    for (sched, bad, says) in [
        (
            "bfq",
            change(5, "g3", Some(200), None),
            "job.fio:1: no group 'g3' in the run",
        ),
        ("bfq", change(5, "g1", Some(2000), None), "job.fio:1: "),
        (
            "cfq",
            change(5, "g1", Some(20_000), None),
            "job.fio:1: group weight 20000",
        ),
    ] {
        let mut config = common::config(sched, "sim:sata-7200", 1);
        config.run.group_changes = vec![bad];
        let error = common::traced(READERS, &config)
            .expect_err("refused")
            .to_string();
        assert!(error.starts_with(says), "{error}");
        assert!(!error.contains('\n'), "{error}");
    }
}

/// dm-ioband and elv-fq above noop take the new weight too: with 128 requests of each
/// reader outstanding (dm-ioband lets everything through below its `io_limit` of 128),
/// g2's share goes from a half to 5/6 within 5 %.
#[test]
fn ioband_and_elvfq_shares_follow_the_new_weight() {
    let deep = READERS.replace("iodepth=2", "iodepth=128");
    for controller in [
        Controller::Ioband(IobandSettings::default()),
        Controller::ElvFq(ElvFqSettings::default()),
    ] {
        let log = run_under(
            &deep,
            "noop",
            controller,
            vec![change(10, "g2", Some(500), None)],
            Vec::new(),
        );
        let (before, after) = (share_of_g2(&log, 1, 10), share_of_g2(&log, 11, 20));
        let expected = 500.0 / 600.0;
        assert!(
            (before - 0.5).abs() <= 0.5 * 0.05 && (after - expected).abs() <= expected * 0.05,
            "{controller:?}: g2's share {before:.3} before, {after:.3} after"
        );
    }
}
