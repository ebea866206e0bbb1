//! `latency_target` and steady state in a real run, against fio 3.33 on the same job and
//! file: the same JSON fields with the same meaning (the depth found, the target in ns and
//! the window in µs, the statistics of the final window only; the `steadystate` object,
//! its samples, and whether the criterion was met). Timings differ run to run, so a
//! target or criterion every run meets (or none can) is what is compared. Skips, saying
//! so, where fio is not installed.

#[allow(dead_code)]
mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// The one job of a fio-style JSON report.
fn job_of(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let json: Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).expect("JSON");
    json["jobs"][0].clone()
}

/// fio's and ioslice's report of `options` run on a 16 MiB file.
fn both(dir: &Path, options: &str) -> (Value, Value) {
    let data = dir.join("data");
    std::fs::write(&data, vec![0u8; 16 << 20]).expect("data file");
    let job = dir.join("job.fio");
    let text = format!(
        "[j]\nfilename={}\nrw=randread\nbs=4k\n{options}",
        data.display()
    );
    std::fs::write(&job, text).expect("job file");
    let fio = Command::new("fio")
        .arg(&job)
        .arg("--output-format=json")
        .output()
        .expect("fio runs");
    let ours = Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .arg("run")
        .arg(&job)
        .args(["--output-format", "json", "--device"])
        .arg(&data)
        .output()
        .expect("ioslice runs");
    assert_eq!(
        fio.status.success(),
        ours.status.success(),
        "fio: {}\nioslice: {}",
        String::from_utf8_lossy(&fio.stderr),
        String::from_utf8_lossy(&ours.stderr)
    );
    (job_of(&fio), job_of(&ours))
}

fn int(job: &Value, key: &str) -> u64 {
    job[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} in {job}"))
}

/// A target every I/O meets: both double the depth to iodepth, settle, and report only
/// the final window (one `latency_window`, well short of the runtime).
#[test]
fn a_met_target_settles_at_iodepth_and_reports_the_final_window() {
    if !common::have_fio() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let options = "ioengine=libaio\niodepth=16\nruntime=10\ntime_based=1\n\
                   latency_target=1s\nlatency_window=200ms\nlatency_percentile=90\n";
    let (fio, ours) = both(dir.path(), options);
    for job in [&fio, &ours] {
        assert_eq!(int(job, "latency_depth"), 16, "{job}");
        assert_eq!(int(job, "latency_target"), 1_000_000_000);
        assert_eq!(int(job, "latency_window"), 200_000);
        assert_eq!(job["latency_percentile"].as_f64(), Some(90.0));
        let runtime = int(job, "job_runtime");
        assert!((200..2_000).contains(&runtime), "job_runtime {runtime}");
    }
}

/// A target no I/O meets at `latency_percentile=100`: the first I/O ends the job with
/// ETIMEDOUT at depth 1, and the run fails.
#[test]
fn an_unmet_target_at_100_percent_ends_the_job_with_etimedout() {
    if !common::have_fio() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let options = "ioengine=libaio\niodepth=8\nruntime=3\ntime_based=1\nlatency_target=1us\n";
    let (fio, ours) = both(dir.path(), options);
    for job in [&fio, &ours] {
        assert_eq!(int(job, "error"), 110, "{job}");
        assert_eq!(int(job, "latency_depth"), 1);
        assert_eq!(int(job, "latency_target"), 1_000);
        assert_eq!(job["latency_percentile"].as_f64(), Some(100.0));
    }
}

/// The keys of an object, in order.
fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// Both reports' `steadystate` object: same keys, same criterion and duration, a sample
/// per second of it; the means are the samples' (rounded down).
fn steady_states(options: &str) -> (Value, Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (fio, ours) = both(dir.path(), options);
    let (fio_ss, ours_ss) = (fio["steadystate"].clone(), ours["steadystate"].clone());
    assert_eq!(keys(&fio_ss), keys(&ours_ss), "{fio_ss}\n{ours_ss}");
    assert_eq!(keys(&fio_ss["data"]), keys(&ours_ss["data"]));
    for ss in [&fio_ss, &ours_ss] {
        assert_eq!(ss["ss"], fio_ss["ss"]);
        assert_eq!(int(ss, "duration"), 2);
        let data = &ss["data"];
        for (samples, mean) in [("iops", "iops_mean"), ("bw", "bw_mean")] {
            let values: Vec<u64> = data[samples]
                .as_array()
                .expect("samples")
                .iter()
                .filter_map(Value::as_u64)
                .collect();
            assert_eq!(values.len(), 2, "{ss}");
            assert_eq!(int(data, mean), values.iter().sum::<u64>() / 2);
        }
    }
    (fio, ours)
}

/// A criterion every run meets (IOPS within 1000% of their mean): steady state is
/// reached when the window is full and the job ends long before its runtime.
#[test]
fn a_met_criterion_ends_the_job_early() {
    if !common::have_fio() {
        return;
    }
    let options = "ioengine=psync\nruntime=20\ntime_based=1\nss=iops:1000%\nss_dur=2\n";
    let (fio, ours) = steady_states(options);
    for job in [&fio, &ours] {
        assert_eq!(int(&job["steadystate"], "attained"), 1, "{job}");
        let runtime = int(job, "job_runtime");
        assert!((1_000..5_000).contains(&runtime), "job_runtime {runtime}");
    }
    assert_eq!(fio["steadystate"]["ss"], "iops:1000.000000%");
}

/// A slope limit of 0 cannot be met: both run their whole runtime and say so.
#[test]
fn an_unmet_criterion_runs_to_the_runtime() {
    if !common::have_fio() {
        return;
    }
    let options = "ioengine=psync\nruntime=3\ntime_based=1\nss=bw_slope:0\nss_dur=2\n";
    let (fio, ours) = steady_states(options);
    for job in [&fio, &ours] {
        assert_eq!(int(&job["steadystate"], "attained"), 0, "{job}");
        assert!(int(job, "job_runtime") >= 2_900);
    }
}
