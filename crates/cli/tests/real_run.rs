//! `ioslice run --device PATH`: job files run for real through the engine, on temporary
//! regular files and directories (under Cargo's target directory, a disk filesystem where
//! O_DIRECT works). Tests that need root or a loop device skip with a printed reason.

mod common;

use common::{assert_user_error, ioslice, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A temporary directory on the target directory's filesystem.
fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

/// An empty file named `name` in `dir`, for a run to write to or read from.
fn empty_file(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, b"").expect("create the data file");
    path
}

/// Write a job file into `dir`, named after a hash of its text (so two differ).
fn job_file(dir: &Path, text: &str) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    let path = dir.join(format!("job-{:016x}.fio", hasher.finish()));
    std::fs::write(&path, text).expect("write job file");
    path
}

fn run(job: &Path, device: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        job.to_str().expect("utf-8 path"),
        "--device",
        device.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    ioslice(&args)
}

fn json(output: &Output) -> Value {
    serde_json::from_str(&stdout(output))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

/// Whether O_DIRECT opens in `dir`; prints why a test skips when it does not.
fn direct_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join("direct-probe");
    std::fs::write(&probe, [0u8; 4096]).expect("write probe");
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    if !opened {
        eprintln!("skipping: O_DIRECT is refused in {}", dir.display());
    }
    opened
}

const WRITE_THEN_READ: &str = "\
[global]
ioengine=psync
bs=4k
size=256k
[writer]
rw=write
[reader]
stonewall
rw=randread
";

#[test]
fn a_write_then_a_read_on_a_file_report_exact_bytes_under_noop_and_bfq() {
    for sched in ["noop", "bfq"] {
        let dir = temp_dir();
        let job = job_file(dir.path(), WRITE_THEN_READ);
        let data = empty_file(dir.path(), "data");

        let output = run(&job, &data, &["--sched", sched, "--output-format", "json"]);
        assert!(output.status.success(), "{sched}: {}", stderr(&output));
        let report = json(&output);
        let jobs = report["jobs"].as_array().expect("jobs");
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0]["jobname"], "writer");
        assert_eq!(jobs[0]["write"]["io_bytes"], 262_144, "{sched}");
        assert_eq!(jobs[0]["write"]["total_ios"], 64, "{sched}");
        assert_eq!(jobs[0]["read"]["total_ios"], 0, "{sched}");
        assert_eq!(jobs[1]["read"]["io_bytes"], 262_144, "{sched}");
        assert_eq!(jobs[1]["read"]["total_ios"], 64, "{sched}");
        assert_eq!(jobs[0]["error"], 0);
        assert!(report["disk_util"].is_array());

        // The data is on disk: every 4 KiB block is the writer's (non-zero) fill.
        let bytes = std::fs::read(&data).expect("read back");
        assert_eq!(bytes.len(), 262_144);
        assert!(bytes.iter().any(|&b| b != 0), "{sched}: nothing written");
        let first = &bytes[..4096];
        assert!(bytes.chunks(4096).all(|block| block == first), "{sched}");

        // Normal output, same run again: same totals.
        let output = run(&job, &data, &["--sched", sched]);
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        assert!(
            text.contains("writer: (groupid=0, jobs=1): err= 0"),
            "{text}"
        );
        assert!(text.contains("(256KiB/"), "{text}");
        assert!(text.contains("issued rwts: total=0,64,0,0"), "{text}");
        assert!(text.contains("issued rwts: total=64,0,0,0"), "{text}");
        assert!(text.contains("Run status group 1 (all jobs):"), "{text}");
    }
}

#[test]
fn the_same_seed_writes_the_same_bytes() {
    let dir = temp_dir();
    let job = job_file(
        dir.path(),
        "[w]\nioengine=io_uring\niodepth=4\nrw=randwrite\nbs=4k\nsize=128k\n",
    );
    let mut images = Vec::new();
    for run_index in 0..2 {
        let data = empty_file(dir.path(), &format!("data{run_index}"));
        let output = run(&job, &data, &["--seed", "7", "--sched", "deadline"]);
        assert!(output.status.success(), "{}", stderr(&output));
        images.push(std::fs::read(&data).expect("read back"));
    }
    assert_eq!(images[0], images[1]);
}

#[test]
fn a_directory_path_holds_each_jobs_file() {
    let dir = temp_dir();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).expect("mkdir");
    let job = job_file(
        dir.path(),
        "[global]\nioengine=psync\nbs=4k\n[a]\nfilename=a\nrw=write\nsize=64k\n[b]\nfilename=b\nrw=read\nsize=128k\n",
    );
    let output = run(
        &job,
        &files,
        &["--sched", "noop", "--output-format", "json"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::metadata(files.join("a")).expect("a").len(), 65_536);
    assert_eq!(
        std::fs::metadata(files.join("b")).expect("b").len(),
        131_072
    );
    let report = json(&output);
    assert_eq!(report["jobs"][0]["write"]["io_bytes"], 65_536);
    assert_eq!(report["jobs"][1]["read"]["io_bytes"], 131_072);
    assert!(
        stderr(&output).contains("one engine"),
        "the per-file engines are said: {}",
        stderr(&output)
    );
}

#[test]
fn a_job_without_size_on_a_missing_file_asks_for_size() {
    let dir = temp_dir();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).expect("mkdir");
    let job = job_file(dir.path(), "[j]\nrw=read\nbs=4k\nfilename=missing\n");
    let output = run(&job, &files, &["--sched", "noop"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("job j: missing is empty or missing: give size="),
        "{message}"
    );
    assert_eq!(message.trim().lines().count(), 1, "{message}");
}

#[test]
fn two_weighted_cgroups_under_bfq_both_complete() {
    let dir = temp_dir();
    let data = empty_file(dir.path(), "data");
    let job = job_file(
        dir.path(),
        "[global]\nioengine=psync\nrw=randread\nbs=4k\nsize=256k\n\
         [light]\ncgroup=light\ncgroup_weight=100\n[heavy]\ncgroup=heavy\ncgroup_weight=300\n",
    );
    let output = run(
        &job,
        &data,
        &["--sched", "bfq:slice_idle=0", "--output-format", "json"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report = json(&output);
    for index in 0..2 {
        assert_eq!(report["jobs"][index]["read"]["total_ios"], 64);
    }
    let cgroups = report["cgroups"].as_array().expect("a cgroups block");
    let names: Vec<&str> = cgroups.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["light", "heavy"]);
    assert_eq!(cgroups[0]["weight"], 100);
    assert_eq!(cgroups[1]["weight"], 300);
}

/// Four psync jobs (each on a lane of its own: one request in flight) under every policy,
/// including those that hold one job's request while another's is at the device and release
/// it from another thread's turn or at a timer: every request completes exactly once.
#[test]
fn psync_jobs_complete_every_request_under_every_policy() {
    let dir = temp_dir();
    let data = empty_file(dir.path(), "data");
    let job = job_file(
        dir.path(),
        "[global]\nioengine=psync\nrw=randread\nbs=4k\nsize=256k\n\
         [a]\ncgroup=a\ncgroup_weight=100\n[b]\ncgroup=b\ncgroup_weight=200\n\
         [c]\ncgroup=c\ncgroup_weight=300\n[d]\ncgroup=d\ncgroup_weight=400\n",
    );
    for sched in ["noop", "deadline", "as", "cfq", "bfq", "bfq:parallel=0"] {
        let output = run(&job, &data, &["--sched", sched, "--output-format", "json"]);
        assert!(output.status.success(), "{sched}: {}", stderr(&output));
        let report = json(&output);
        for index in 0..4 {
            let read = &report["jobs"][index]["read"];
            assert_eq!(read["total_ios"], 64, "{sched}, job {index}");
            assert_eq!(read["io_bytes"], 256 * 1024, "{sched}, job {index}");
            assert_eq!(report["jobs"][index]["error"], 0, "{sched}, job {index}");
        }
    }
}

const MISALIGNED: &str = "\
[bad]
ioengine=io_uring
iodepth=4
direct=1
rw=write
bs=1000
size=100000
";

#[test]
fn a_misaligned_direct_job_fails_with_einval_and_stops_unless_that_error_is_ignored() {
    let dir = temp_dir();
    if !direct_works(dir.path()) {
        return;
    }
    let data = empty_file(dir.path(), "data");

    // continue_on_error=none (the default): the first error stops the job; exit status 1.
    let job = job_file(dir.path(), MISALIGNED);
    let output = run(&job, &data, &["--output-format", "json"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("fio: io_u error on file")
            && err.contains("Invalid argument: write offset=0, buflen=1000"),
        "{err}"
    );
    let report = json(&output);
    let bad = &report["jobs"][0];
    assert_eq!(bad["error"], libc_einval());
    assert_eq!(bad["write"]["total_ios"], 0);
    let errors = bad["total_err"].as_u64().expect("total_err");
    assert!(
        (1..=4).contains(&errors),
        "at most the depth in flight: {errors}"
    );

    // continue_on_error=all alone: as in fio, only EIO and EILSEQ are non-fatal, so EINVAL
    // still stops the job.
    let job = job_file(dir.path(), &format!("{MISALIGNED}continue_on_error=all\n"));
    let output = run(&job, &data, &["--output-format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let errors = json(&output)["jobs"][0]["total_err"]
        .as_u64()
        .expect("total_err");
    assert!((1..=4).contains(&errors), "{errors}");

    // With EINVAL listed for writes (fio's syntax: READ,WRITE,VERIFY): every request fails and
    // the job runs to the end; exit 0.
    let job = job_file(
        dir.path(),
        &format!("{MISALIGNED}continue_on_error=all\nignore_error=,EINVAL\n"),
    );
    let output = run(&job, &data, &["--output-format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["jobs"][0]["total_err"], 100);
    assert_eq!(report["jobs"][0]["first_error"], libc_einval());

    let output = run(&job, &data, &[]);
    let text = stdout(&output);
    assert!(
        text.contains("errors    : total=100, first_error=22/<Invalid argument>"),
        "{text}"
    );
    assert!(text.contains("err=22"), "{text}");
}

fn libc_einval() -> i64 {
    i64::from(libc::EINVAL)
}

/// A missing file is created and laid out before the run, with fio's line on stderr: written
/// out when a job reads it, sparse for a job that only writes it with `fallocate=none`.
#[test]
fn a_missing_file_is_created_and_laid_out_as_fio_does() {
    let dir = temp_dir();
    let job = job_file(dir.path(), WRITE_THEN_READ);
    let data = dir.path().join("data");
    let output = run(&job, &data, &[]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains("writer: Laying out IO file (1 file / 256KiB)"),
        "{err}"
    );
    let metadata = std::fs::metadata(&data).expect("created");
    assert_eq!(metadata.len(), 256 << 10);

    let sparse_job = job_file(
        dir.path(),
        "[w]\nrw=randwrite\nbs=4k\nsize=1m\nnumber_ios=1\nfallocate=none\n",
    );
    let sparse = dir.path().join("sparse");
    let output = run(&sparse_job, &sparse, &[]);
    assert_eq!(output.status.code(), Some(0));
    let metadata = std::fs::metadata(&sparse).expect("created");
    assert_eq!(metadata.len(), 1 << 20);
    use std::os::unix::fs::MetadataExt;
    assert!(
        metadata.blocks() * 512 < 1 << 20,
        "sparse: {} blocks",
        metadata.blocks()
    );

    // fio's default, fallocate=native: the space is allocated though only one block is written.
    let allocated_job = job_file(
        dir.path(),
        "[w]\nrw=randwrite\nbs=4k\nsize=1m\nnumber_ios=1\n",
    );
    let allocated = dir.path().join("allocated");
    let output = run(&allocated_job, &allocated, &[]);
    assert_eq!(output.status.code(), Some(0));
    let metadata = std::fs::metadata(&allocated).expect("created");
    assert_eq!(metadata.len(), 1 << 20);
    assert!(
        metadata.blocks() * 512 >= 1 << 20,
        "allocated: {} blocks",
        metadata.blocks()
    );
}

/// A corrupted block found by `verify_only`: fio's message on stderr and exit status 1.
#[test]
fn a_verify_failure_is_reported_on_stderr_and_fails_the_run() {
    let dir = temp_dir();
    let write = "[w]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\n";
    let data = dir.path().join("data");
    let output = run(&job_file(dir.path(), write), &data, &[]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut bytes = std::fs::read(&data).expect("read");
    bytes[4096 + 1000] ^= 1;
    std::fs::write(&data, bytes).expect("write");
    let check = job_file(dir.path(), &format!("{write}verify_only=1\n"));
    let output = run(&check, &data, &[]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    let place = format!(
        "crc32c: verify failed at file {} offset 4096, length 4096",
        data.display()
    );
    assert!(err.contains(&place), "{err}");
    assert!(
        err.contains("       Expected CRC: ") && err.contains("       Received CRC: "),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("err=84"));
}

#[test]
fn a_missing_path_or_a_character_device_is_one_line() {
    let dir = temp_dir();
    let job = job_file(dir.path(), WRITE_THEN_READ);
    let missing = dir.path().join("no-such-directory").join("data");
    assert_user_error(
        &run(&job, &missing, &[]),
        &[
            "no-such-directory/data: cannot create the file: directory",
            "no-such-directory does not exist",
        ],
    );
    assert_user_error(
        &run(&job, Path::new("/dev/ioslice-no-such-device"), &[]),
        &["/dev/ioslice-no-such-device: no such block device (ioslice creates regular files, never under /dev)"],
    );
    assert_user_error(
        &run(&job, Path::new("/dev/null"), &[]),
        &["/dev/null: is a character device"],
    );
    let data = empty_file(dir.path(), "data");
    assert_user_error(
        &run(&job, &data, &["--sched", "elevator-of-doom"]),
        &["unknown scheduler"],
    );
    assert_user_error(
        &ioslice(&["run", job.to_str().expect("utf-8"), "--allow-mounted-write"]),
        &["--allow-mounted-write is for a real --device"],
    );
}

/// A loop device over an image holding an ext4 superblock magic; detached on drop.
struct LoopDevice(String);

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// Whether the tests run as root: the effective uid, from /proc (no unsafe call needed).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1))
                .map(|euid| euid == "0")
        })
        .unwrap_or(false)
}

fn loop_device(image: &Path) -> Option<LoopDevice> {
    if !is_root() {
        eprintln!("skipping: attaching a loop device needs root");
        return None;
    }
    let output = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(image)
        .output();
    match output {
        Ok(output) if output.status.success() => {
            Some(LoopDevice(stdout(&output).trim().to_string()))
        }
        Ok(output) => {
            eprintln!("skipping: losetup failed: {}", stderr(&output).trim());
            None
        }
        Err(e) => {
            eprintln!("skipping: no losetup ({e})");
            None
        }
    }
}

#[test]
fn writing_to_a_formatted_block_device_needs_allow_mounted_write() {
    let dir = temp_dir();
    let image = dir.path().join("image");
    let mut bytes = vec![0u8; 4 << 20];
    bytes[1080..1082].copy_from_slice(&[0x53, 0xef]); // ext2/3/4 superblock magic
    std::fs::write(&image, &bytes).expect("image");
    let Some(device) = loop_device(&image) else {
        return;
    };
    let device_path = PathBuf::from(&device.0);

    let job = job_file(
        dir.path(),
        "[w]\nioengine=psync\nrw=write\nbs=4k\nsize=64k\noffset=1m\n",
    );
    assert_user_error(
        &run(&job, &device_path, &[]),
        &["refusing to write to", "ext2/3/4", "--allow-mounted-write"],
    );
    // Reading is allowed, as in fio.
    let read = job_file(
        dir.path(),
        "[r]\nioengine=psync\nrw=read\nbs=4k\nsize=64k\n",
    );
    let output = run(&read, &device_path, &["--output-format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json(&output)["jobs"][0]["read"]["io_bytes"], 65_536);
    // With the flag, the write goes ahead and says so.
    let output = run(
        &job,
        &device_path,
        &["--allow-mounted-write", "--output-format", "json"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("writing anyway"),
        "{}",
        stderr(&output)
    );
    assert_eq!(json(&output)["jobs"][0]["write"]["io_bytes"], 65_536);
}

/// A 2 MiB tmpfs mounted on a temporary directory, where writes run out of space for real;
/// unmounted on drop (before the directory is removed), when a test fails too.
struct SmallTmpfs {
    dir: tempfile::TempDir,
}

impl SmallTmpfs {
    /// Mounts one, or prints why a test skips (not root, or the mount refused) and gives `None`.
    fn mount() -> Option<Self> {
        if !is_root() {
            eprintln!("skipping: mounting a tmpfs needs root");
            return None;
        }
        let dir = temp_dir();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m", "ioslice-test"])
            .arg(dir.path())
            .output();
        match output {
            Ok(output) if output.status.success() => Some(Self { dir }),
            Ok(output) => {
                eprintln!("skipping: mount failed: {}", stderr(&output).trim());
                None
            }
            Err(e) => {
                eprintln!("skipping: no mount command ({e})");
                None
            }
        }
    }

    /// A fresh, sparse 4 MiB file `f` on the empty tmpfs: ioslice leaves a file of the job's
    /// size as it is, so the job's writes allocate the pages and fail with ENOSPC after the
    /// first 2 MiB, as fio's writes to `/mnt/x/f` did.
    fn sparse_file(&self) -> PathBuf {
        let path = self.dir.path().join("f");
        let file = std::fs::File::create(&path).expect("create f on the tmpfs");
        file.set_len(4 << 20).expect("size f");
        path
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        // An exited run's io_uring lets go of its files a moment later (the kernel tears the
        // ring down in the background), so the tmpfs can be busy for a few milliseconds.
        let unmount = |flags: &[&str]| {
            Command::new("umount")
                .args(flags)
                .arg(self.dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        };
        for _ in 0..100 {
            if unmount(&[]) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Still busy: detach it, and the kernel frees it when the last user lets go.
        if !unmount(&["-l"]) {
            eprintln!("cannot unmount the tmpfs on {}", self.dir.path().display());
        }
    }
}

/// The writer of the `ignore_error=` tests: 4 MiB of 4 KiB writes onto a 2 MiB tmpfs, the job
/// run with fio 3.33 (`filename=/mnt/x/f` on `mount -t tmpfs -o size=2m none /mnt/x`).
const FILL_TMPFS: &str = "\
[j]
rw=write
bs=4k
size=4m
ioengine=psync
";

/// What one run of `FILL_TMPFS` plus `options` said: it runs twice, each time on a fresh file
/// of `tmpfs`, once for JSON and once for fio's normal output.
struct Filled {
    /// The JSON run's exit status.
    status: Option<i32>,
    /// The JSON run's only job.
    job: Value,
    /// The normal run's exit status, standard output and standard error.
    normal: (Option<i32>, String, String),
}

fn fill_tmpfs(tmpfs: &SmallTmpfs, jobs: &Path, options: &str) -> Filled {
    let job = job_file(jobs, &format!("{FILL_TMPFS}{options}"));
    let output = run(&job, &tmpfs.sparse_file(), &["--output-format", "json"]);
    let status = output.status.code();
    let job_report = json(&output)["jobs"][0].clone();
    let output = run(&job, &tmpfs.sparse_file(), &[]);
    Filled {
        status,
        job: job_report,
        normal: (output.status.code(), stdout(&output), stderr(&output)),
    }
}

/// What fio 3.33 reported for a write job filling the 2 MiB tmpfs: exit status, `total_err`,
/// the writes issued, and whether the `io_u error` line went to stderr.
struct FioFill {
    status: i32,
    total_err: u64,
    issued_writes: u64,
    io_u_error_line: bool,
}

/// Run the filling job with each of `options` and check ioslice reports what fio did.
fn assert_fills_as_fio(options: &[&str], fio: &FioFill) {
    let Some(tmpfs) = SmallTmpfs::mount() else {
        return;
    };
    let jobs = temp_dir();
    for options in options {
        let filled = fill_tmpfs(&tmpfs, jobs.path(), options);
        let (status, text, err) = &filled.normal;
        assert_eq!(filled.status, Some(fio.status), "{options}");
        assert_eq!(*status, Some(fio.status), "{options}: {err}");
        let job = &filled.job;
        assert_eq!(
            [
                &job["error"],
                &job["total_err"],
                &job["first_error"],
                &job["write"]["io_bytes"]
            ],
            [28, fio.total_err, 28, 2_097_152],
            "{options}"
        );
        if fio.io_u_error_line {
            assert!(
                err.contains("No space left on device: write offset=2097152, buflen=4096"),
                "{options}: {err}"
            );
        }
        for line in [
            "j: (groupid=0, jobs=1): err=28".to_string(),
            format!("issued rwts: total=0,{},0,0", fio.issued_writes),
            format!(
                "errors    : total={}, first_error=28/<No space left on device>",
                fio.total_err
            ),
        ] {
            assert!(text.contains(&line), "{options}: {line} in {text}");
        }
    }
}

#[test]
fn ignore_error_eagain_enospc_122_goes_on_past_enospc_on_writes_as_fio_does() {
    // fio's documented example names EAGAIN for reads and ENOSPC and 122 for writes. fio 3.33,
    // with and without continue_on_error=write (a kind given errors is continued on): exit 0,
    // "err=28", "issued rwts: total=0,1024,0,0", "errors    : total=512,
    // first_error=28/<No space left on device>"; JSON error 28, total_err 512, first_error 28,
    // write io_bytes 2097152.
    let fio = FioFill {
        status: 0,
        total_err: 512,
        issued_writes: 1024,
        io_u_error_line: false,
    };
    assert_fills_as_fio(
        &[
            "continue_on_error=write\nignore_error=EAGAIN,ENOSPC:122\n",
            "ignore_error=EAGAIN,ENOSPC:122\n",
        ],
        &fio,
    );
}

#[test]
fn ignore_error_enospc_is_for_reads_and_a_write_stops_at_enospc_as_fio_does() {
    // One list is the READ list, so under continue_on_error=write ENOSPC on a write is fatal,
    // as with no ignore_error= at all. fio 3.33, both: exit 1, stderr "fio: io_u error on file
    // /mnt/x/f: No space left on device: write offset=2097152, buflen=4096", "err=28",
    // "issued rwts: total=0,513,0,0", "errors    : total=1, first_error=28/<No space left on
    // device>"; JSON error 28, total_err 1, first_error 28, write io_bytes 2097152.
    let fio = FioFill {
        status: 1,
        total_err: 1,
        issued_writes: 513,
        io_u_error_line: true,
    };
    assert_fills_as_fio(
        &[
            "continue_on_error=write\nignore_error=ENOSPC\n",
            "continue_on_error=write\n",
        ],
        &fio,
    );
}
