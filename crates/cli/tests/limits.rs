//! Hostile inputs under a memory limit: each either stops at once with a one-line error
//! naming the limit, or runs in memory that follows the work done, not what was declared
//! or how much simulated time passes. The binary runs with its address space capped
//! (`setrlimit(RLIMIT_AS)`), so a run that tried to allocate by declaration would abort
//! instead of passing.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// The address-space cap of every run here.
const ADDRESS_SPACE: u64 = 1 << 30;

fn ioslice(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ioslice"));
    command.args(args).current_dir(dir);
    // SAFETY: between fork and exec the closure only calls `setrlimit`, which is
    // async-signal-safe, on a struct it owns.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().expect("ioslice starts")
}

fn job(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).expect("write job file");
    name.to_string()
}

/// The run failed with exit status 2 and exactly one line on stderr containing `expected`.
fn refused(output: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(expected), "{expected:?} in {stderr}");
}

/// The run finished normally.
fn ran(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
}

#[test]
fn an_include_of_a_device_a_fifo_or_proc_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zero = job(dir.path(), "zero.fio", "[j]\ninclude /dev/zero\n");
    let output = ioslice(dir.path(), &["run", &zero]);
    refused(&output, "zero.fio:2: cannot read included file '/dev/zero': a character device: expected a regular file");
    let proc_file = job(dir.path(), "proc.fio", "[j]\ninclude /proc/self/status\n");
    let output = ioslice(dir.path(), &["run", &proc_file]);
    refused(&output, "a file of the kernel's /proc: expected a job file");
    let fifo = dir.path().join("fifo.fio");
    let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: `mkfifo` reads the NUL-terminated path it is given.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let output = ioslice(dir.path(), &["run", "fifo.fio"]);
    refused(
        &output,
        "fifo.fio: cannot read: a FIFO: expected a regular file",
    );
}

#[test]
fn too_many_jobs_files_or_requests_in_flight_are_refused_with_the_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let many = job(
        dir.path(),
        "many.fio",
        "[j]\nrw=read\nsize=1m\nnumjobs=100000\n",
    );
    refused(
        &ioslice(dir.path(), &["run", &many]),
        "100000 jobs (numjobs clones counted): expected at most 4096, the maximum number of jobs",
    );
    let clients = job(dir.path(), "one.fio", "[j]\nrw=read\nsize=64k\n");
    refused(
        &ioslice(dir.path(), &["compare", &clients, "--clients", "1,100000"]),
        "--clients 100000 gives 100000 job processes in one run: expected at most 4096",
    );
    let files = job(
        dir.path(),
        "files.fio",
        "[j]\nrw=read\nsize=1m\nnrfiles=1000000\n",
    );
    refused(
        &ioslice(dir.path(), &["run", &files]),
        "size=1048576 split over 1000000 files leaves 1 bytes each: expected at least one 4096-byte block per file",
    );
    let deep = job(
        dir.path(),
        "deep.fio",
        "[j]\nrw=randread\nioengine=libaio\niodepth=65536\nsize=1m\nnumjobs=4000\n",
    );
    refused(
        &ioslice(dir.path(), &["run", &deep]),
        "262144000 requests in flight (iodepth times numjobs): expected at most 1048576",
    );
}

#[test]
fn simulated_time_costs_no_memory_of_its_own() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 256 requests 11.6 days apart: about 3 × 10^8 simulated seconds.
    let think = job(
        dir.path(),
        "think.fio",
        "[j]\nrw=read\nsize=1m\nthinktime=999999999999\n",
    );
    let output = ioslice(dir.path(), &["run", &think, "--output-format", "json"]);
    ran(&output);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["jobs"][0]["read"]["total_ios"], 256);
}

#[test]
fn a_slow_rate_over_a_long_time_costs_per_request_not_per_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    // One request a second for 2 × 10^5 simulated seconds: 4 × 10^5 bandwidth windows, half
    // of them with a completion (the others give no sample, as in fio).
    let slow = job(
        dir.path(),
        "slow.fio",
        "[j]\nrw=randread\nsize=1g\nrate_iops=1\nruntime=200000\ntime_based\n",
    );
    let output = ioslice(dir.path(), &["run", &slow, "--output-format", "json"]);
    ran(&output);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let read = &report["jobs"][0]["read"];
    assert_eq!(read["total_ios"], 200_000);
    assert_eq!(read["iops_samples"], 200_000);
    assert_eq!(read["iops_min"], 2);
}

#[test]
fn thousands_of_queues_fit_well_within_the_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let queues = job(
        dir.path(),
        "queues.fio",
        "[global]\nrw=randread\nbs=4k\nsize=16k\ndirect=1\n[g]\ncgroup=g\nnumjobs=6000\n",
    );
    let output = ioslice(
        dir.path(),
        &[
            "run",
            &queues,
            "--sched",
            "bfq",
            "--device",
            "sim:ssd",
            "--max-jobs",
            "6000",
            "--output-format",
            "terse",
        ],
    );
    ran(&output);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).lines().count(),
        6000
    );
}
