//! Seed 002's third controller, dm-ioband above the elevator (`--controller ioband`), on the
//! simulator, against the elevator's own groups: it keeps a group's share in requests under
//! any elevator, it loses the priorities inside a group (held requests reach cfq from its
//! worker thread), and a seeky group gets as many requests as a sequential one of the same
//! weight, so the sequential one loses most of its bandwidth. Every request completes once.

mod common;

use ioslice_core::ioband::{Controller, IobandSettings, TokenPolicy};
use ioslice_sim::simulation::SimOutcome;

/// Run `scenarios/seed-002/<scenario>` under `sched` with `controller`, seed 1, on the
/// default disk, checking every request completed exactly once.
fn simulate(scenario: &str, sched: &str, controller: Controller) -> SimOutcome {
    let scenario = format!("seed-002/{scenario}");
    common::run_scenario_with(&scenario, sched, "sim:sata-7200", |config| {
        config.run.controller = controller;
    })
}

fn ioband() -> Controller {
    Controller::Ioband(IobandSettings::default())
}

#[test]
fn dm_ioband_shares_requests_by_weight_under_any_elevator() {
    for policy in [TokenPolicy::Weight, TokenPolicy::WeightIosize] {
        let controller = Controller::Ioband(IobandSettings {
            policy,
            ..IobandSettings::default()
        });
        for sched in ["cfq", "bfq", "deadline", "noop"] {
            let jobs = common::by_job(&simulate("ioband-weights.fio", sched, controller));
            let ratio = jobs["heavy"].1 as f64 / jobs["light"].1 as f64;
            println!("{} under {sched}: heavy/light {ratio:.2}", policy.name());
            assert!(
                (1.8..=2.3).contains(&ratio),
                "{} under {sched}: heavy/light requests {ratio:.2}, weights 2:1",
                policy.name()
            );
        }
    }
}

#[test]
fn dm_ioband_is_fair_in_requests_and_so_unfair_in_disk_time() {
    let elevator = common::by_job(&simulate(
        "ioband-seq-vs-seeky.fio",
        "cfq",
        Controller::Elevator,
    ));
    let banded = common::by_job(&simulate("ioband-seq-vs-seeky.fio", "cfq", ioband()));
    println!("cfq's groups: {elevator:?}; dm-ioband: {banded:?}");
    // cfq's groups share time: the sequential group moves many times the seeky one's bytes.
    assert!(elevator["seq"].0 > 5 * elevator["seeky"].0);
    // dm-ioband shares requests: about as many each, so the sequential group falls to a
    // fraction of what it had.
    let requests = banded["seq"].1 as f64 / banded["seeky"].1 as f64;
    assert!(
        (0.8..=1.6).contains(&requests),
        "seq/seeky requests {requests:.2}"
    );
    assert!(banded["seq"].0 * 3 < elevator["seq"].0);
}

#[test]
fn dm_ioband_loses_the_priorities_inside_a_group() {
    let elevator = common::by_job(&simulate(
        "ioband-priorities.fio",
        "cfq",
        Controller::Elevator,
    ));
    let banded = common::by_job(&simulate("ioband-priorities.fio", "cfq", ioband()));
    println!("cfq's groups: {elevator:?}; dm-ioband: {banded:?}");
    // cfq alone: the RT reader takes nearly everything the group gets.
    assert!(elevator["be7"].0 * 100 < elevator["rt0"].0);
    // dm-ioband: held requests reach cfq as its worker's, and BE7 gets a real share.
    assert!(banded["be7"].0 * 10 > banded["rt0"].0);
}
