//! Trim jobs in a real run: on a file a trim punches the range out (it reads back as
//! zeroes, the file keeps its size), and on a loop device the same job's trim and write
//! counts and bytes are fio's own, held against fio's JSON when fio and a loop device are
//! at hand.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::JobStats;
use ioslice_runner::{run, RunConfig};

/// Run `job` for real on `path`; the stats of its one job.
fn run_on(job: &str, path: &Path) -> JobStats {
    let job_file = parse_str(job, "trim.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "mq-deadline".parse().expect("scheduler"), path.into());
    let outcome = run(&job_file, &config).expect("run");
    assert!(outcome.failed_jobs.is_empty(), "{:?}", outcome.io_errors);
    outcome.report.jobs[0].stats.clone()
}

#[test]
fn a_trimmed_file_range_reads_back_as_zeroes() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("data");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .expect("data file");
    file.write_all_at(&vec![0x5A; 1 << 20], 0).expect("fill");
    let job = "[t]\nrw=trim\nbs=64k\nsize=512k\nioengine=psync\n";
    let job_file = parse_str(job, "trim.fio", &ParseOptions::default()).expect("job parses");
    let config = RunConfig::new(1, "none".parse().expect("scheduler"), path.clone());
    let outcome = run(&job_file, &config).expect("run");
    if let Some(error) = outcome.io_errors.first() {
        println!("skipped: the target directory's file system cannot punch holes: {error:?}");
        return;
    }
    let stats = &outcome.report.jobs[0].stats;
    assert_eq!(stats.issued, [0, 0, 8]);
    assert_eq!(stats.directions[2].io_bytes, 512 << 10);
    let mut back = vec![0u8; 1 << 20];
    file.read_exact_at(&mut back, 0).expect("read back");
    assert!(back[..512 << 10].iter().all(|&b| b == 0), "trimmed half");
    assert!(
        back[512 << 10..].iter().all(|&b| b == 0x5A),
        "untouched half"
    );
    assert_eq!(file.metadata().expect("metadata").len(), 1 << 20);
}

/// A loop device over a file in tmpfs, detached when dropped.
struct LoopDevice {
    device: PathBuf,
    backing: PathBuf,
}

impl LoopDevice {
    fn attach(size: u64) -> Result<Self, String> {
        let backing = PathBuf::from(format!("/dev/shm/ioslice-trim-{}", std::process::id()));
        let file = std::fs::File::create(&backing).map_err(|e| format!("{backing:?}: {e}"))?;
        file.set_len(size).map_err(|e| e.to_string())?;
        let output = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !output.status.success() {
            let _ = std::fs::remove_file(&backing);
            return Err(format!(
                "losetup: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        let device = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        Ok(Self { device, backing })
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.device).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

/// fio's (total_ios, io_bytes) for write and trim of the job in `args`, from its JSON.
fn fio_counts(args: &[String]) -> Result<[(u64, u64); 2], String> {
    let output = Command::new("fio")
        .args(args)
        .arg("--output-format=json")
        .output()
        .map_err(|e| format!("fio: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("fio's JSON: {e}"))?;
    let job = &json["jobs"][0];
    if job["error"].as_u64() != Some(0) {
        return Err(format!("fio's job failed with error {}", job["error"]));
    }
    let pair = |dir: &str| {
        (
            job[dir]["total_ios"].as_u64().unwrap_or(u64::MAX),
            job[dir]["io_bytes"].as_u64().unwrap_or(u64::MAX),
        )
    };
    Ok([pair("write"), pair("trim")])
}

#[test]
fn trim_counts_and_bytes_match_fio_on_a_loop_device() {
    let device = match LoopDevice::attach(64 << 20) {
        Ok(device) => device,
        Err(why) => {
            println!("skipped: no loop device ({why})");
            return;
        }
    };
    let jobs = [
        ("randtrim", "4k", "16m"),
        ("trim", "64k", "32m"),
        ("trimwrite", "4k", "1m"),
        ("trimwrite", "4k,8k,16k", "1m"),
        ("trimwrite", "4k,16k,8k", "1m"),
        ("randtrimwrite", "8k", "1m"),
    ];
    for (rw, bs, size) in jobs {
        let args: Vec<String> = [
            "--name=t".to_string(),
            format!("--filename={}", device.device.display()),
            format!("--rw={rw}"),
            format!("--bs={bs}"),
            format!("--size={size}"),
            "--ioengine=psync".to_string(),
            "--direct=1".to_string(),
        ]
        .into();
        let fio = match fio_counts(&args) {
            Ok(counts) => counts,
            Err(why) => {
                println!("skipped: fio does not run the job ({why})");
                return;
            }
        };
        let job = format!("[t]\nrw={rw}\nbs={bs}\nsize={size}\nioengine=psync\ndirect=1\n");
        let stats = run_on(&job, &device.device);
        let ours = [1, 2].map(|d| (stats.directions[d].total_ios, stats.directions[d].io_bytes));
        assert_eq!(ours, fio, "rw={rw} bs={bs} size={size}: (write, trim)");
        println!("rw={rw} bs={bs} size={size}: (write, trim) (ios, bytes) {ours:?}, as fio's");
    }
}
