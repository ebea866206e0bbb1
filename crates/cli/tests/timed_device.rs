//! `run --device timed:sim:PRESET`: the real engine on the device model served on the real
//! clock inside the process. Data written reads back (fio's verify), and no request completes
//! before the model could have served it.

use std::path::Path;
use std::process::Command;

fn ioslice(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("ioslice runs")
}

#[test]
fn what_a_job_writes_on_a_timed_ssd_it_reads_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("verify.fio"),
        "[w]\nrw=write\nbs=64k\nsize=4m\ndirect=1\nverify=crc32c\ndo_verify=1\n",
    )
    .expect("job file");
    let out = ioslice(
        dir.path(),
        &[
            "run",
            "verify.fio",
            "--device",
            "timed:sim:ssd",
            "--output-format",
            "json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("verify failed"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let job = &report["jobs"][0];
    assert_eq!(job["write"]["io_bytes"], 4 << 20, "{job}");
    assert_eq!(
        job["read"]["io_bytes"],
        4 << 20,
        "verify read it all back: {job}"
    );
    // Nothing of the run touched the filesystem: no file named after the device.
    assert!(std::fs::read_dir(dir.path()).expect("dir").count() == 1);
}

#[test]
fn no_read_completes_before_the_model_could_serve_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("qd1.fio"),
        "[r]\nrw=randread\nbs=4k\ndirect=1\nsize=1g\nruntime=500ms\ntime_based=1\n",
    )
    .expect("job file");
    let out = ioslice(
        dir.path(),
        &[
            "run",
            "qd1.fio",
            "--device",
            "timed:sim:ssd",
            "--output-format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let read = &report["jobs"][0]["read"];
    assert!(read["total_ios"].as_u64().expect("ios") > 100, "{read}");
    // sim:ssd serves a 4 KiB read in its 10 µs command overhead plus 70 µs of page read.
    let fastest = read["clat_ns"]["min"].as_u64().expect("min");
    assert!(fastest >= 80_000, "a read completed in {fastest} ns");
}

#[test]
fn a_timed_device_needs_a_simulated_preset() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("r.fio"), "[r]\nrw=read\nsize=1m\n").expect("job file");
    let out = ioslice(dir.path(), &["run", "r.fio", "--device", "timed:ssd"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("timed:ssd"), "{stderr}");
}
