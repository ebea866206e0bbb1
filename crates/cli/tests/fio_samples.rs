//! How many bandwidth and IOPS samples a real run reports, against fio 3.33 on the same job and
//! file: fio's helper thread samples every 500 ms while a job runs, so a window that ends with
//! the job has no sample. Skips, saying so, where fio is not installed.

#[allow(dead_code)]
mod common;

use std::path::Path;
use std::process::Command;

/// `bw_samples` and `iops_samples` of the one job in a fio-style JSON report.
fn samples(stdout: &[u8]) -> (u64, u64) {
    let text = String::from_utf8_lossy(stdout);
    let json: serde_json::Value =
        serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).expect("JSON");
    let read = &json["jobs"][0]["read"];
    (
        read["bw_samples"].as_u64().expect("bw_samples"),
        read["iops_samples"].as_u64().expect("iops_samples"),
    )
}

fn job(dir: &Path, runtime: &str) -> String {
    let data = dir.join("data");
    std::fs::write(&data, vec![0u8; 16 << 20]).expect("data file");
    let path = dir.join("job.fio");
    std::fs::write(
        &path,
        format!(
            "[r]\nfilename={}\nrw=randread\nbs=4k\nioengine=psync\nruntime={runtime}\ntime_based=1\n",
            data.display()
        ),
    )
    .expect("job file");
    path.display().to_string()
}

#[test]
fn a_real_run_reports_as_many_samples_as_fio() {
    if !common::have_fio() {
        return;
    }
    for runtime in ["2s", "1200ms"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let job = job(dir.path(), runtime);
        let fio = Command::new("fio")
            .args([job.as_str(), "--output-format=json"])
            .output()
            .expect("fio runs");
        assert!(
            fio.status.success(),
            "{}",
            String::from_utf8_lossy(&fio.stderr)
        );
        let data = dir.path().join("data");
        let ours = Command::new(env!("CARGO_BIN_EXE_ioslice"))
            .args(["run", job.as_str(), "--output-format", "json", "--device"])
            .arg(&data)
            .output()
            .expect("ioslice runs");
        assert!(
            ours.status.success(),
            "{}",
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_eq!(
            samples(&ours.stdout),
            samples(&fio.stdout),
            "runtime={runtime}"
        );
    }
}
