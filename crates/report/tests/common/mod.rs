//! What the report's tests share: simulated runs recorded as the CLI records them (the
//! bandwidth recorder and the timeline recorder on one trace), and a comparison with the
//! original post's figures.
#![allow(dead_code)]

pub mod browser;

use ioslice_core::trace::Tee;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::RunReport;
use ioslice_report::{
    BandwidthRecorder, ComparisonCell, ComparisonRecord, RunRecord, SeedFigures, Settings,
};
use ioslice_sim::simulation::{run_traced, SimConfig};
use ioslice_timeline::TimelineRecorder;

/// Four O_DIRECT readers, each on its own file: no request of one merges with another's,
/// so the bytes each completes at the device are its own.
pub const FOUR_READERS: &str = "\
[global]
ioengine=psync
direct=1
bs=64k
size=256m
runtime=3
time_based

[seq-a]
rw=read
[seq-b]
rw=read
[rand-c]
rw=randread
bs=16k
[rand-d]
rw=randread
bs=4k
";

/// Two weighted cgroups of O_DIRECT readers.
pub const TWO_GROUPS: &str = "\
[global]
ioengine=psync
direct=1
rw=read
bs=64k
size=256m
runtime=3
time_based

[light]
cgroup=light
cgroup_weight=100
[heavy]
cgroup=heavy
cgroup_weight=300
[heavy2]
cgroup=heavy
cgroup_weight=300
";

/// A simulated run recorded for the report: its fio report and its record (with the
/// bandwidth series and the timeline).
pub fn simulate(job: &str, name: &str, sched: &str, device: &str) -> (RunReport, RunRecord) {
    simulate_with(job, name, sched, device, TimelineRecorder::new)
}

/// As [`simulate`], with a timeline of at most `cap` marks and a finer record of at most
/// `detail_cap`, as a page of many runs records each.
pub fn simulate_capped(
    job: &str,
    name: &str,
    sched: &str,
    device: &str,
    (cap, detail_cap): (usize, usize),
) -> (RunReport, RunRecord) {
    simulate_with(job, name, sched, device, |names| {
        TimelineRecorder::with_cap(names, cap).with_detail(detail_cap)
    })
}

fn simulate_with(
    job: &str,
    name: &str,
    sched: &str,
    device: &str,
    recorder: impl FnOnce(Vec<String>) -> TimelineRecorder,
) -> (RunReport, RunRecord) {
    let job_file = parse_str(job, name, &ParseOptions::default()).expect("job parses");
    let config = SimConfig::new(
        7,
        sched.parse().expect("scheduler spec"),
        device.parse().expect("device spec"),
    );
    let names: Vec<String> = job_file.jobs.iter().map(|j| j.name.clone()).collect();
    let mut bandwidth = BandwidthRecorder::new(names.len());
    let mut timeline = recorder(names);
    let outcome = run_traced(
        &job_file,
        &config,
        &mut Tee::both(&mut bandwidth, &mut timeline),
    )
    .expect("job runs");
    let (bytes, requests) = bandwidth.finish_with_requests();
    let record = RunRecord::new(
        &outcome.report,
        Settings::simulated(name, &config),
        bytes,
        Some(timeline.finish()),
    )
    .with_requests(requests);
    (outcome.report, record)
}

/// A comparison of the four readers under two schedulers, with made-up post figures for
/// one of them, and a cgroup comparison with figures per group.
pub fn comparisons() -> Vec<ComparisonRecord> {
    let mut plain = ComparisonRecord {
        title: "four readers".into(),
        job_file: "four.fio".into(),
        device: "sim:sata-7200".into(),
        cells: Vec::new(),
    };
    for sched in ["deadline", "cfq"] {
        let (report, _) = simulate(FOUR_READERS, "four.fio", sched, "sim:sata-7200");
        let mut cell = ComparisonCell::from_report(sched, Some(4), &report);
        if sched == "cfq" {
            cell = cell.with_seed(SeedFigures {
                aggregate_kb_s: Some(17134.0),
                groups: Vec::new(),
            });
        }
        plain.cells.push(cell);
    }
    let (report, _) = simulate(TWO_GROUPS, "groups.fio", "cfq", "sim:sata-7200");
    let groups = ComparisonRecord {
        title: "two groups <weighted>".into(),
        job_file: "groups.fio".into(),
        device: "sim:sata-7200".into(),
        cells: vec![
            ComparisonCell::from_report("cfq", None, &report).with_seed(SeedFigures {
                aggregate_kb_s: Some(212613.0),
                groups: vec![("light".into(), 6120.0), ("heavy".into(), 12596.0)],
            }),
        ],
    };
    vec![plain, groups]
}
