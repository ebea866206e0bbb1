//! iocost on the engine, on a real file: two groups of io.weight 200 and 100, four readers
//! each, under a cost model of 2000 random 4 KiB reads a second with vrate pinned at 100%, far
//! below what a file in the page cache can do, so the budget alone decides what each group
//! gets: two thirds and one third of it. Timing comes from the real clock, so the shares are
//! checked within tolerances; every request completes.

use ioslice_core::ioband::Controller;
use ioslice_core::iocost::settings::{ModelKeys, QosKeys};
use ioslice_core::iocost::IocostSettings;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_runner::{run, RunConfig};

const JOBS: &str = "[global]
ioengine=psync
rw=randread
bs=4k
size=8m
runtime=1
time_based
numjobs=4

[heavy]
cgroup=heavy
cgroup_weight=200

[light]
cgroup=light
cgroup_weight=100
offset=8m
";

#[test]
fn groups_share_the_models_budget_by_io_weight_on_a_real_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::File::create(&path).expect("data file");
    file.set_len(16 << 20).expect("a sparse 16 MiB file");
    let job_file = parse_str(JOBS, "iocost.fio", &ParseOptions::default()).expect("job parses");
    let mut config = RunConfig::new(1, "mq-deadline".parse().expect("scheduler"), path);
    config.run.controller = Controller::Iocost(IocostSettings {
        model: ModelKeys {
            rseqiops: Some(2_000),
            rrandiops: Some(2_000),
            ..ModelKeys::default()
        },
        qos: QosKeys {
            min_ppm: Some(1_000_000),
            max_ppm: Some(1_000_000),
            ..QosKeys::default()
        },
    });
    let outcome = run(&job_file, &config).expect("run");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
    let total = |name: &str| -> u64 {
        outcome
            .report
            .jobs
            .iter()
            .filter(|job| job.description.name == name)
            .map(|job| job.stats.directions[0].total_ios)
            .sum()
    };
    let (heavy, light) = (total("heavy"), total("light"));
    println!("heavy {heavy}, light {light}");
    let ratio = heavy as f64 / light.max(1) as f64;
    assert!((1.6..=2.4).contains(&ratio), "heavy/light {ratio:.2}");
    // A second of a 2000-a-second budget, plus each group's starting margin (half a 50 ms
    // period) and the time the jobs take to start and stop.
    assert!(
        (1_500..=2_600).contains(&(heavy + light)),
        "{}",
        heavy + light
    );
}
