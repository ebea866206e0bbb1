//! The `ioslice` binary as a user meets it: output, determinism, and one-line errors with exit 2.

use std::path::PathBuf;
use std::process::{Command, Output};

fn ioslice(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("the binary runs")
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A job file written to a temporary directory.
fn job_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ioslice-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write job file");
    path
}

const SHORT_READERS: &str = "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=4k\nsize=64m\nruntime=1\n[reader]\nnumjobs=4\n";

/// A user error: exit status 2, one line on stderr that says `what`, and no panic.
fn assert_user_error(output: &Output, what: &[&str]) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for needle in what {
        assert!(err.contains(needle), "'{needle}' missing from: {err}");
    }
}

#[test]
fn four_sequential_readers_print_bandwidth_and_latency_per_job() {
    let path = job_file("readers.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        text.matches("reader: (groupid=0, jobs=1)").count(),
        4,
        "{text}"
    );
    assert_eq!(text.matches("  read: IOPS=").count(), 4, "{text}");
    assert!(text.contains("clat ("), "{text}");
    assert!(text.contains("clat percentiles"), "{text}");
    assert!(text.contains("Run status group 0 (all jobs):"), "{text}");
}

#[test]
fn json_is_byte_identical_for_a_seed_and_differs_across_seeds() {
    let path = job_file("readers-json.fio", SHORT_READERS);
    let path = path.to_str().unwrap();
    let run = |seed: &str| {
        let output = ioslice(&["run", path, "--output-format", "json", "--seed", seed]);
        assert!(output.status.success(), "{}", stderr(&output));
        output.stdout
    };
    let first = run("7");
    assert_eq!(first, run("7"));
    assert_ne!(first, run("8"));
    let json = String::from_utf8(first).unwrap();
    for key in [
        "\"fio version\"",
        "\"jobname\" : \"reader\"",
        "\"bw_bytes\"",
        "\"clat_ns\"",
        "\"percentile\"",
    ] {
        assert!(json.contains(key), "{key}");
    }
}

#[test]
fn malformed_job_file_names_file_and_line() {
    let path = job_file(
        "broken.fio",
        "[global]\nrw=read\nthis line is not an option\n[job]\nsize=1m\n",
    );
    let output = ioslice(&["run", path.to_str().unwrap()]);
    assert_user_error(&output, &["broken.fio:3"]);
}

#[test]
fn bad_option_value_names_option_and_line() {
    let path = job_file("badvalue.fio", "[job]\nsize=1m\nbs=fast\n");
    let output = ioslice(&["run", path.to_str().unwrap()]);
    assert_user_error(&output, &["badvalue.fio:3", "bs", "fast"]);
}

#[test]
fn unknown_scheduler_lists_valid_ones() {
    let path = job_file("sched.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap(), "--sched", "elevator9"]);
    assert_user_error(&output, &["elevator9", "noop", "deadline"]);
}

#[test]
fn bad_tunable_names_it_and_its_range() {
    let path = job_file("tunable.fio", SHORT_READERS);
    let output = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--sched",
        "deadline:fifo_batch=-3",
    ]);
    assert_user_error(&output, &["fifo_batch", "-3"]);
    let output = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--sched",
        "deadline:nonsense=1",
    ]);
    assert_user_error(&output, &["nonsense", "read_expire"]);
}

#[test]
fn unknown_preset_and_parameter_list_valid_ones() {
    let path = job_file("preset.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap(), "--device", "sim:floppy"]);
    assert_user_error(&output, &["floppy", "sata-7200"]);
    let output = ioslice(&[
        "run",
        path.to_str().unwrap(),
        "--device",
        "sim:sata-7200:warp=9",
    ]);
    assert_user_error(&output, &["warp"]);
}

#[test]
fn missing_job_file_and_bad_output_format() {
    let output = ioslice(&["run", "/nonexistent/job.fio"]);
    assert_user_error(&output, &["/nonexistent/job.fio"]);
    let path = job_file("format.fio", SHORT_READERS);
    let output = ioslice(&["run", path.to_str().unwrap(), "--output-format", "xml"]);
    assert_user_error(&output, &["xml", "json"]);
}

#[test]
fn unsupported_option_warns_and_strict_refuses() {
    let path = job_file("verify.fio", "[job]\nsize=1m\nverify=md5\n");
    let output = ioslice(&["run", path.to_str().unwrap(), "--device", "sim:null"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("verify"), "{}", stderr(&output));
    let output = ioslice(&["run", path.to_str().unwrap(), "--strict"]);
    assert_user_error(&output, &["verify.fio:3", "verify"]);
}

#[test]
fn devices_and_schedulers_are_listed() {
    let devices = stdout(&ioslice(&["devices"]));
    for preset in [
        "sim:ide-2004",
        "sim:sata-7200",
        "sim:raid5-12",
        "sim:ssd",
        "sim:null",
    ] {
        assert!(devices.contains(preset), "{preset} missing: {devices}");
    }
    let schedulers = stdout(&ioslice(&["schedulers"]));
    for name in [
        "noop",
        "deadline",
        "read_expire",
        "fifo_batch",
        "writes_starved",
    ] {
        assert!(schedulers.contains(name), "{name} missing");
    }
}

#[test]
fn compare_prints_one_table_per_scheduler() {
    let path = job_file("compare.fio", SHORT_READERS);
    let output = ioslice(&[
        "compare",
        path.to_str().unwrap(),
        "--sched",
        "noop,deadline",
        "--clients",
        "1,2",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(text.matches("Clients   Max bwidth").count(), 2, "{text}");
    assert!(text.contains("Scheduler: noop"), "{text}");
    assert!(text.contains("Scheduler: deadline"), "{text}");
}
