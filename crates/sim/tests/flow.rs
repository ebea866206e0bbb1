//! fio's flow control between jobs (`flow_id`, `flow`, `flow_sleep`) in the simulator: jobs
//! of one flow group issue I/Os in the ratio of their weights (fio 3.33 itself gave 1227449
//! and 409151 I/Os, 3.0 to 1, for weights 3 and 1 on its null engine in a second), jobs of
//! other groups or without a weight are not held, and a job that ends lets the others go on.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_sim::simulation::{run, SimConfig};

/// Each job's completed reads.
fn reads(text: &str, device: &str) -> Vec<u64> {
    let job_file = parse_str(text, "flow.fio", &ParseOptions::default()).expect("job parses");
    assert!(job_file.warnings.is_empty(), "{:?}", job_file.warnings);
    let config = SimConfig::new(
        3,
        "mq-deadline".parse().expect("scheduler"),
        device.parse().expect("device"),
    );
    let outcome = run(&job_file, &config).expect("simulation runs");
    outcome
        .report
        .jobs
        .iter()
        .map(|job| job.stats.directions[0].total_ios)
        .collect()
}

const DISK: &str = "\
[global]
filename=/dev/sdb
direct=1
ioengine=psync
rw=randread
size=1g
time_based
runtime=2
";

#[test]
fn weights_three_and_one_share_a_disk_three_to_one() {
    let flows = format!("{DISK}flow_id=1\n[a]\nflow=3\n[b]\nflow=1\n[c]\n");
    let got = reads(&flows, "sim:sata-7200");
    assert_eq!(got, [216, 73, 216]);
    let ratio = got[0] as f64 / got[1] as f64;
    assert!((ratio - 3.0).abs() < 0.1, "{got:?}");
}

#[test]
fn other_groups_and_unweighted_jobs_are_not_held() {
    let plain = reads(&format!("{DISK}[a]\n[b]\n"), "sim:sata-7200");
    let apart = format!("{DISK}[a]\nflow_id=1\nflow=3\n[b]\nflow_id=2\nflow=1\n");
    assert_eq!(reads(&apart, "sim:sata-7200"), plain);
}

#[test]
fn flow_sleep_holds_a_job_back_by_sleeping() {
    let null = "[global]\nioengine=null\nsize=1g\nrw=randread\ntime_based\nruntime=1\nflow_id=1\n";
    let spinning = reads(&format!("{null}[a]\nflow=3\n[b]\nflow=1\n"), "sim:null");
    let sleeping = reads(
        &format!("{null}flow_sleep=100\n[a]\nflow=3\n[b]\nflow=1\n"),
        "sim:null",
    );
    for got in [&spinning, &sleeping] {
        let ratio = got[0] as f64 / got[1] as f64;
        assert!((ratio - 3.0).abs() < 0.01, "{got:?}");
    }
    // Held back a quarter of the time for 100 µs each, the pair issues far less.
    assert!(sleeping[0] * 50 < spinning[0], "{sleeping:?} {spinning:?}");
}

#[test]
fn a_job_that_ends_lets_the_rest_of_its_group_go_on() {
    let text = "[global]\nfilename=/dev/sdb\ndirect=1\nrw=randread\nflow=1\n[short]\nsize=64k\n[long]\nsize=1m\n";
    assert_eq!(reads(text, "sim:sata-7200"), [16, 256]);
}
