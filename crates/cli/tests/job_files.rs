//! Several job files on one command line, run as fio runs them: one after another, each
//! later file's first job a stonewall that starts a new reporting group.

mod common;

use common::{assert_user_error, ioslice, stderr, stdout};
use serde_json::Value;

const READERS: &str = "[global]\nrw=read\nbs=4k\nsize=1m\ndirect=1\n[a]\n[b]\n";
const MIXED: &str =
    "[c]\nrw=write\nbs=4k\nsize=1m\ndirect=1\n[d]\nrw=randread\nbs=4k\nsize=1m\ndirect=1\n";

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write job file");
    path.display().to_string()
}

#[test]
fn later_files_start_new_groups_after_the_earlier_jobs_finish() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = write(&dir, "a.fio", READERS);
    let second = write(&dir, "b.fio", MIXED);
    let trace = dir.path().join("trace.json").display().to_string();
    let output = ioslice(&[
        "run",
        &first,
        &second,
        "--output-format",
        "json",
        "--trace",
        &trace,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let groups: Vec<(String, u64)> = report["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|job| {
            let name = job["jobname"].as_str().expect("name").to_string();
            (name, job["groupid"].as_u64().expect("groupid"))
        })
        .collect();
    let expected = [("a", 0), ("b", 0), ("c", 1), ("d", 1)].map(|(n, g)| (n.to_string(), g));
    assert_eq!(groups, expected);
    assert!(
        report.get("global options").is_none(),
        "fio prints no global options for several files"
    );
    assert_eq!(report["jobs"][2]["write"]["io_bytes"], 1 << 20);
    // The stonewall: the second file's jobs issue nothing before the first file's are done.
    let text = std::fs::read_to_string(&trace).expect("trace");
    let events: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("trace line"))
        .collect();
    let time = |event: &Value| event["time_ns"].as_u64().expect("time");
    let last_first_file = events
        .iter()
        .filter(|e| e["event"] == "complete" && e["process"].as_u64() <= Some(2))
        .map(time)
        .max()
        .expect("first file's completions");
    let first_second_file = events
        .iter()
        .filter(|e| e["event"] == "insert" && e["process"].as_u64() >= Some(3))
        .map(time)
        .min()
        .expect("second file's arrivals");
    assert!(first_second_file >= last_first_file);
}

#[test]
fn files_that_declare_different_devices_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = write(
        &dir,
        "a.fio",
        &format!("; ioslice-device: sim:ssd\n{READERS}"),
    );
    let second = write(
        &dir,
        "b.fio",
        &format!("; ioslice-device: sim:null\n{MIXED}"),
    );
    let output = ioslice(&["run", &first, &second]);
    assert_user_error(
        &output,
        &["b.fio", "sim:null", "a.fio", "sim:ssd", "--device"],
    );
    let same = write(
        &dir,
        "c.fio",
        &format!("; ioslice-device: sim:ssd\n{MIXED}"),
    );
    let output = ioslice(&["run", &first, &same, "--output-format", "terse"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output).lines().count(), 4, "one terse line per job");
}

#[test]
fn a_bad_second_file_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = write(&dir, "a.fio", READERS);
    let second = write(&dir, "b.fio", "[c]\nrw=sideways\n");
    let output = ioslice(&["run", &first, &second]);
    assert_user_error(&output, &["b.fio:2", "sideways"]);
}
