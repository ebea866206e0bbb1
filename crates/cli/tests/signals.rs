//! SIGINT and SIGTERM as fio takes them: the first stops the run and prints what it
//! measured, with exit status 128 and a line naming the signal. A second one close behind
//! the first (coreutils `timeout` signals the child and then its process group) is
//! absorbed; one a second or more later ends the process at once.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Two readers that would run for a simulated day.
const LONG: &str =
    "[global]\nrw=randread\nbs=4k\nsize=1g\ndirect=1\nruntime=86400\ntime_based\n[a]\n[b]\n";

fn start(dir: &Path, args: &[&str]) -> Child {
    std::fs::write(dir.join("long.fio"), LONG).expect("job file");
    Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ioslice starts")
}

fn signal(child: &Child, signal: i32) {
    let pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: `kill` only sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

/// Wait for the child, at most `limit`; its status code, stdout and stderr.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut out = String::new();
            let mut err = String::new();
            child
                .stdout
                .take()
                .expect("stdout")
                .read_to_string(&mut out)
                .expect("read");
            child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut err)
                .expect("read");
            return (status.code(), out, err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Run ioslice with `args` in `dir` for 0.7 s, send it `signals` one after the other, and
/// give it a second to end: its status code, stdout and stderr.
fn interrupt(dir: &Path, args: &[&str], signals: &[i32]) -> (Option<i32>, String, String) {
    let child = start(dir, args);
    std::thread::sleep(Duration::from_millis(700));
    for &sig in signals {
        signal(&child, sig);
    }
    finish(child, Duration::from_secs(1))
}

#[test]
fn sigint_prints_what_a_simulation_measured_within_a_second() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = [
        "run",
        "long.fio",
        "--device",
        "sim:ssd",
        "--output-format",
        "json",
    ];
    let (code, out, err) = interrupt(dir.path(), &args, &[libc::SIGINT]);
    assert_eq!(code, Some(128), "{err}");
    assert_eq!(err.trim(), "ioslice: terminating on signal 2");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the report is whole JSON");
    for job in report["jobs"].as_array().expect("jobs") {
        assert!(job["read"]["total_ios"].as_u64() > Some(0), "{job}");
    }
}

#[test]
fn sigterm_ends_a_comparison_with_the_runs_it_did() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = [
        "compare",
        "long.fio",
        "--device",
        "sim:ssd",
        "--sched",
        "noop,bfq",
        "--clients",
        "1,2",
    ];
    let (code, out, err) = interrupt(dir.path(), &args, &[libc::SIGTERM]);
    assert_eq!(code, Some(128), "{err}");
    assert!(
        err.starts_with("ioslice: terminating on signal 15: "),
        "{err}"
    );
    assert!(
        out.contains("Agg bwidth"),
        "a table of the runs done: {out}"
    );
}

#[test]
fn a_second_signal_close_behind_the_first_still_gets_the_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = ["run", "long.fio", "--device", "sim:ssd"];
    // Two of one signal may merge into one pending signal; two different ones cannot.
    for pair in [
        [libc::SIGTERM, libc::SIGTERM],
        [libc::SIGINT, libc::SIGTERM],
    ] {
        let (code, out, err) = interrupt(dir.path(), &args, &pair);
        assert_eq!(code, Some(128), "{pair:?}: {err}");
        assert_eq!(
            err.trim(),
            format!("ioslice: terminating on signal {}", pair[0]),
            "{pair:?}"
        );
        assert!(out.contains("Run status group 0"), "{pair:?}: {out}");
    }
}

#[test]
fn a_second_signal_a_second_later_ends_the_process_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 64 jobs' JSON is far more than a pipe holds: with stdout unread, the process stays
    // blocked writing its report, as it would piped into a pager nobody reads.
    let job = "[global]\nrw=randread\nbs=4k\nsize=1g\nruntime=86400\ntime_based\nnumjobs=64\n[a]\n";
    std::fs::write(dir.path().join("many.fio"), job).expect("job file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .args([
            "run",
            "many.fio",
            "--device",
            "sim:ssd",
            "--output-format",
            "json",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ioslice starts");
    std::thread::sleep(Duration::from_millis(700));
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(1300));
    assert_eq!(
        child.try_wait().expect("wait"),
        None,
        "blocked on its report"
    );
    signal(&child, libc::SIGINT);
    let (code, _, err) = finish(child, Duration::from_secs(1));
    assert_eq!(code, Some(128 + libc::SIGINT), "{err}");
}

/// Run `ioslice run job --device device` under `timeout --preserve-status 0.5` 20 times:
/// every try must end with fio's status for a run stopped by SIGTERM and the whole report.
fn survives_timeout_20_times(dir: &Path, job: &str, device: &str) {
    let mut printed = 0;
    for attempt in 0..20 {
        let output = Command::new("timeout")
            .args(["--preserve-status", "0.5"])
            .arg(env!("CARGO_BIN_EXE_ioslice"))
            .args(["run", job, "--device", device])
            .current_dir(dir)
            .output()
            .expect("timeout (coreutils) runs");
        let out = String::from_utf8_lossy(&output.stdout);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(128), "try {attempt}: {err}");
        assert!(
            err.contains("ioslice: terminating on signal 15"),
            "try {attempt}: {err}"
        );
        assert!(out.contains("Run status group 0"), "try {attempt}: {out}");
        printed += 1;
    }
    assert_eq!(printed, 20);
}

#[test]
fn a_simulation_under_timeout_prints_its_report_every_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("long.fio"), LONG).expect("job file");
    survives_timeout_20_times(dir.path(), "long.fio", "sim:ssd");
}

#[test]
fn a_real_run_under_timeout_prints_its_report_every_time() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let data = dir.path().join("data");
    std::fs::File::create(&data)
        .and_then(|file| file.set_len(64 << 20))
        .expect("a sparse 64 MiB file");
    let job =
        "[j]\nrw=randread\nbs=4k\nioengine=io_uring\niodepth=8\nsize=64m\nruntime=30\ntime_based\n";
    std::fs::write(dir.path().join("real.fio"), job).expect("job file");
    survives_timeout_20_times(dir.path(), "real.fio", data.to_str().expect("path"));
}

#[test]
fn sigint_prints_what_a_real_run_measured_within_a_second() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let data = dir.path().join("data");
    std::fs::File::create(&data)
        .and_then(|file| file.set_len(64 << 20))
        .expect("a sparse 64 MiB file");
    let job = "[j]\nrw=randwrite\nbs=4k\nioengine=io_uring\niodepth=8\nsize=64m\nruntime=30\ntime_based\n";
    std::fs::write(dir.path().join("real.fio"), job).expect("job file");
    let device = data.to_str().expect("path");
    let args = [
        "run",
        "real.fio",
        "--device",
        device,
        "--output-format",
        "json",
    ];
    let (code, out, err) = interrupt(dir.path(), &args, &[libc::SIGINT]);
    assert_eq!(code, Some(128), "{err}");
    assert!(err.contains("ioslice: terminating on signal 2"), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("the report is whole JSON");
    let write = &report["jobs"][0]["write"];
    assert!(write["total_ios"].as_u64() > Some(0), "{write}");
    assert_eq!(
        write["io_bytes"].as_u64(),
        write["total_ios"].as_u64().map(|n| n * 4096)
    );
}

/// Whether `dir` is a mountpoint now.
fn mounted(dir: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let dir = dir.to_string_lossy();
    mounts
        .lines()
        .any(|line| line.split(' ').nth(1) == Some(&dir))
}

#[test]
fn emulate_unmounts_on_sigint_and_on_sigterm() {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    });
    if !root || !Path::new("/dev/fuse").exists() {
        eprintln!("skipping: mounting the emulator needs root and /dev/fuse");
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().expect("temp dir");
        let mountpoint = dir.path().join("mnt");
        std::fs::create_dir(&mountpoint).expect("mountpoint");
        let point = mountpoint.to_str().expect("path");
        let child = start(dir.path(), &["emulate", point, "--device", "sim:ssd"]);
        let start = Instant::now();
        while !mountpoint.join("disk").exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the disk appears"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(&child, sig);
        let (code, _, err) = finish(child, Duration::from_secs(5));
        assert_eq!(code, Some(0), "signal {sig}: {err}");
        assert!(!mounted(&mountpoint), "signal {sig}: unmounted");
    }
}
