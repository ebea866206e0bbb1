//! Two fio options that decide how deep a job queues and when it ends, in the simulator:
//! `latency_target`'s depth search (fio's io_u.c `lat_target_*`) and steady-state
//! detection (`ss`, `ss_dur`, `ss_ramp`; fio's steadystate.c). A simulated SSD's latency
//! grows with the depth queued (its channels are busy), so a tighter target settles on a
//! shallower depth; a disk's seek-bound latency grows far faster with depth, so the same
//! kind of target allows it only a few requests. Steady state ends a job whose IOPS hold
//! still at the first second its window is full; a criterion nothing can meet leaves the
//! job to its runtime.

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::output::{json, normal};
use ioslice_fio::JobReport;
use ioslice_sim::simulation::{run, SimConfig, SimOutcome};

fn simulate(text: &str, device: &str) -> SimOutcome {
    let job_file = parse_str(text, "job.fio", &ParseOptions::default()).expect("job parses");
    assert!(job_file.warnings.is_empty(), "{:?}", job_file.warnings);
    let config = SimConfig::new(
        1,
        "mq-deadline".parse().expect("scheduler"),
        device.parse().expect("device"),
    );
    run(&job_file, &config).expect("simulation runs")
}

fn job(outcome: &SimOutcome) -> &JobReport {
    &outcome.report.jobs[0]
}

const RANDREAD: &str = "\
[job]
rw=randread
bs=4k
ioengine=libaio
direct=1
iodepth=32
size=1g
runtime=10
time_based
";

fn latency_job(target: &str, extra: &str) -> String {
    format!(
        "{RANDREAD}latency_target={target}\nlatency_window=500ms\nlatency_percentile=99\n{extra}"
    )
}

/// The depth each target settles on, and the job's runtime: only the final window, which
/// lasts one `latency_window` (the job ends at the first check past it).
#[test]
fn the_depth_found_follows_the_device_and_the_target() {
    let found = |target: &str, device: &str| {
        let outcome = simulate(&latency_job(target, ""), device);
        let job = job(&outcome);
        let search = job.stats.latency_target.expect("a search");
        assert_eq!(
            search.target_ns,
            ioslice_fio::jobfile::values::time(target, 1_000).unwrap()
        );
        (search.depth, job.stats.runtime / 1_000_000)
    };
    assert_eq!(found("100us", "sim:ssd"), (11, 500));
    assert_eq!(found("200us", "sim:ssd"), (21, 500));
    assert_eq!(found("500us", "sim:ssd"), (32, 500));
    assert_eq!(found("20ms", "sim:sata-7200"), (1, 501));
    assert_eq!(found("80ms", "sim:sata-7200"), (5, 527));
}

/// The report gives the search as fio does: JSON `latency_depth`, `latency_target` in ns,
/// `latency_percentile`, `latency_window` in µs, and the normal output's `latency` line;
/// only the final window's I/O is counted, at the depth found.
#[test]
fn the_report_gives_the_search_and_only_the_final_window() {
    let outcome = simulate(&latency_job("200us", ""), "sim:ssd");
    let text = json(&outcome.report);
    for field in [
        "\"latency_depth\" : 21,",
        "\"latency_target\" : 200000,",
        "\"latency_percentile\" : 99.000000,",
        "\"latency_window\" : 500000",
    ] {
        assert!(text.contains(field), "{field} missing");
    }
    let text = normal(&outcome.report);
    assert!(text.contains("latency   : target=200000, window=500000, percentile=99.00%, depth=21"));
    let stats = &job(&outcome).stats;
    // Every submission of the final window found at most 21 in flight, which fio files
    // in the bucket of 16 (16–31): none in 32 or above.
    assert_eq!(stats.depth_counts[5..], [0, 0]);
    assert!(stats.depth_counts[4] > 0);
}

/// Without a target fio reports the job's iodepth and its defaults.
#[test]
fn without_a_target_the_report_keeps_fio_defaults() {
    let outcome = simulate(&format!("{RANDREAD}runtime=1\n"), "sim:ssd");
    assert!(job(&outcome).stats.latency_target.is_none());
    let text = json(&outcome.report);
    assert!(text.contains("\"latency_depth\" : 32,\n      \"latency_target\" : 0,\n      \"latency_percentile\" : 100.000000,\n      \"latency_window\" : 0"));
}

/// `latency_run=1` never settles: the job runs its whole runtime, its statistics never
/// start over, and the depth it ends at is reported.
#[test]
fn latency_run_keeps_searching_to_the_runtime() {
    let outcome = simulate(&latency_job("200us", "latency_run=1\n"), "sim:ssd");
    let job = job(&outcome);
    assert_eq!(job.stats.runtime / 1_000_000, 10_000);
    assert_eq!(job.stats.latency_target.expect("a search").depth, 21);
}

/// At `latency_percentile=100` one I/O over the target at depth 1 ends the job with
/// ETIMEDOUT, as fio's "latency exceeds specified max".
#[test]
fn an_unreachable_target_at_100_percent_is_an_error() {
    let text = format!("{RANDREAD}latency_target=10us\n");
    let outcome = simulate(&text, "sim:sata-7200");
    let job = job(&outcome);
    assert_eq!(job.stats.error, 110);
    assert_eq!(job.stats.directions[0].total_ios, 1);
}

fn steady_job(criterion: &str) -> String {
    format!("{RANDREAD}iodepth=8\nss={criterion}\nss_dur=3\n")
}

/// On the SSD IOPS hold within 2% of their mean from the first second: the job ends at
/// 3 s, when its three samples are in; the samples and the judged deviation are fio's.
#[test]
fn steady_iops_end_the_job_when_the_window_is_full() {
    let outcome = simulate(&steady_job("iops:2%"), "sim:ssd");
    let job = job(&outcome);
    assert_eq!(job.stats.runtime / 1_000_000, 3_000);
    let ss = job.stats.steady_state.as_ref().expect("steady state");
    assert!(ss.attained);
    assert_eq!(ss.iops, [67_973, 67_978, 67_977]);
    assert_eq!(ss.bw, [278_417_408, 278_437_888, 278_433_792]);
    assert_eq!((ss.iops_mean(), ss.bw_mean()), (67_976, 278_429_696));
    assert_eq!(ss.max_deviation, 3.0);
    let text = json(&outcome.report);
    assert!(text.contains("\"ss\" : \"iops:2.000000%\",\n        \"duration\" : 3,\n        \"attained\" : 1,\n        \"criterion\" : \"0.004413%\""));
    let text = normal(&outcome.report);
    assert!(text.contains(
        "  steadystate  : attained=yes, bw=266MiB/s (278MB/s), iops=68.0k, iops mean dev=0.004%"
    ));
}

/// A slope limit of 0 cannot be met (the judged value must be below it): the job runs to
/// its runtime and reports its last three samples, oldest first, and their slope.
#[test]
fn an_impossible_criterion_runs_to_the_runtime() {
    let outcome = simulate(&steady_job("bw_slope:0"), "sim:sata-7200");
    let job = job(&outcome);
    assert_eq!(job.stats.runtime / 1_000_000, 10_022);
    let ss = job.stats.steady_state.as_ref().expect("steady state");
    assert!(!ss.attained);
    assert_eq!(ss.iops, [383, 375, 377]);
    assert_eq!(ss.slope, -12_288.0);
    assert!(normal(&outcome.report).contains("attained=no"));
}

/// `ss_ramp` waits: with 2 s of ramp the first sample is taken at 3 s, so the job ends
/// at 5 s.
#[test]
fn ramp_delays_the_window() {
    let outcome = simulate(&format!("{}ss_ramp=2\n", steady_job("iops:2%")), "sim:ssd");
    assert_eq!(job(&outcome).stats.runtime / 1_000_000, 5_000);
    assert!(
        job(&outcome)
            .stats
            .steady_state
            .as_ref()
            .expect("ss")
            .attained
    );
}

/// fio's names and aliases read alike; a criterion fio does not know is one line naming
/// the value and what is expected.
#[test]
fn the_options_parse_as_fio_names_them() {
    let parse = |text: &str| parse_str(text, "job.fio", &ParseOptions::default());
    let short = parse("[j]\nss=bw:10m\nss_dur=5\nss_ramp=2s\n").expect("aliases");
    let long = parse("[j]\nsteadystate=bw:10m\nsteadystate_duration=5\nsteadystate_ramp_time=2s\n")
        .expect("names");
    for job_file in [&short, &long] {
        let spec = &job_file.jobs[0];
        assert_eq!(spec.ss_criterion.limit, 10_485_760.0);
        assert_eq!(
            (spec.ss_duration, spec.ss_ramp),
            (5_000_000_000, 2_000_000_000)
        );
    }
    let spec = &parse("[j]\nlatency_target=2ms\nlatency_window=1s\nlatency_run=1\n")
        .expect("latency")
        .jobs[0];
    assert_eq!(
        (spec.latency_target, spec.latency_window),
        (2_000_000, 1_000_000_000)
    );
    assert!(spec.latency_run);
    let error = parse("[j]\nss=lat:1%\n")
        .expect_err("not a criterion")
        .to_string();
    assert!(
        error.contains("lat:1%") && error.contains("iops_slope"),
        "{error}"
    );
    let error = parse("[j]\nlatency_percentile=101\n")
        .expect_err("over 100")
        .to_string();
    assert!(
        error.contains("101") && error.contains("0 to 100"),
        "{error}"
    );
}
