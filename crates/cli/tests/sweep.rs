//! `ioslice sweep`: a grid of settings × seeds written as one JSON document and one page,
//! resumable point by point (a resumed sweep gives the same bytes as one run straight), and
//! bad axes refused in one line naming them.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_user_error, ioslice, stderr};

/// Two random readers for a short simulated time.
const SMALL: &str =
    "[global]\nioengine=libaio\nrw=randread\nbs=4k\nsize=64m\ndirect=1\nruntime=200ms\ntime_based\n[a]\n[b]\n";

fn write_job(dir: &Path, text: &str) -> String {
    let path = dir.join("small.fio");
    std::fs::write(&path, text).expect("job file");
    path.to_str().expect("utf-8 path").to_string()
}

/// `sweep JOB --device sim:ssd --axis sched=cfq,bfq --axis iodepth=1,2,4,8 --seeds 3 --out OUT`.
fn sweep_24(job: &str, out: &Path) -> std::process::Output {
    ioslice(&[
        "sweep",
        job,
        "--device",
        "sim:ssd",
        "--axis",
        "sched=cfq,bfq",
        "--axis",
        "iodepth=1,2,4,8",
        "--seeds",
        "3",
        "--out",
        out.to_str().expect("utf-8 path"),
    ])
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn point_files(out: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(out.join("points"))
        .expect("points directory")
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    files
}

#[test]
fn two_schedulers_by_four_depths_by_three_seeds_is_24_points_and_a_page() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write_job(dir.path(), SMALL);
    let out = dir.path().join("out");
    let output = sweep_24(&job, &out);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value =
        serde_json::from_str(&read(&out.join("results.json"))).expect("JSON");
    let points = doc["points"].as_array().expect("points");
    assert_eq!(points.len(), 24);
    assert_eq!(doc["missing"].as_array().map(Vec::len), Some(0));
    assert_eq!(point_files(&out).len(), 24);
    // Grid order: scheduler outermost, seeds innermost.
    assert_eq!(
        points[0]["axes"],
        serde_json::json!({"sched": "cfq", "iodepth": "1"})
    );
    assert_eq!(
        points[5]["axes"],
        serde_json::json!({"sched": "cfq", "iodepth": "2"})
    );
    assert_eq!(points[5]["seed"], 3);
    assert_eq!(
        points[23]["axes"],
        serde_json::json!({"sched": "bfq", "iodepth": "8"})
    );
    for point in points {
        let jobs = point["jobs"].as_array().expect("jobs");
        assert_eq!(jobs.len(), 2);
        let sum: u64 = jobs
            .iter()
            .map(|j| j["bw_bytes"].as_u64().expect("bw"))
            .sum();
        assert_eq!(point["total"]["bw_bytes"].as_u64(), Some(sum));
        assert!(point["total"]["iops"].as_u64().expect("iops") > 0);
        let clat = &point["total"]["clat_ns"];
        assert!(clat["p50"].as_u64() <= clat["p99"].as_u64(), "{clat}");
    }
    // On the SSD a deeper queue moves more: iodepth 8 beats iodepth 1 under cfq.
    let bw = |i: usize| points[i]["total"]["bw_bytes"].as_u64().expect("bw");
    assert!(bw(9) > 4 * bw(0), "{} vs {}", bw(9), bw(0));
    let page = read(&out.join("report.html"));
    assert!(page.starts_with("<!DOCTYPE html>"));
    // Three figures, each as lines and 3D bars; 8 line points and 8 bars each.
    assert_eq!(
        page.matches("chart-sweep-lines\" data-points=\"8\"")
            .count(),
        3
    );
    assert_eq!(
        page.matches("chart-sweep-bars3d\" data-points=\"8\"")
            .count(),
        3
    );
    // The same sweep again runs nothing and writes the same bytes.
    let json = read(&out.join("results.json"));
    let again = sweep_24(&job, &out);
    assert!(again.status.success());
    assert!(common::stdout(&again).contains("24 of 24 points (24 stored before)"));
    assert_eq!(read(&out.join("results.json")), json);
    assert_eq!(read(&out.join("report.html")), page);
}

#[test]
fn a_resumed_sweep_gives_the_bytes_of_one_run_straight() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write_job(dir.path(), SMALL);
    let straight = dir.path().join("straight");
    assert!(sweep_24(&job, &straight).status.success());
    let expected = read(&straight.join("results.json"));
    // A sweep interrupted after some points: run part of the grid first ...
    let resumed = dir.path().join("resumed");
    let part = ioslice(&[
        "sweep",
        &job,
        "--device",
        "sim:ssd",
        "--axis",
        "sched=bfq",
        "--axis",
        "iodepth=2,8",
        "--seeds",
        "3",
        "--out",
        resumed.to_str().expect("path"),
    ]);
    assert!(part.status.success(), "{}", stderr(&part));
    assert_eq!(point_files(&resumed).len(), 6);
    // ... then the whole, which runs only the other 18.
    let rest = sweep_24(&job, &resumed);
    assert!(common::stdout(&rest).contains("24 of 24 points (6 stored before)"));
    assert_eq!(read(&resumed.join("results.json")), expected);
    // Point files lost: a rerun makes them again, the same bytes.
    for file in point_files(&resumed).iter().step_by(5) {
        std::fs::remove_file(file).expect("remove");
    }
    let redo = sweep_24(&job, &resumed);
    assert!(common::stdout(&redo).contains("(19 stored before)"));
    assert_eq!(read(&resumed.join("results.json")), expected);
    // Points of other settings are never taken for this sweep's.
    let other = ioslice(&[
        "sweep",
        &job,
        "--device",
        "sim:null",
        "--axis",
        "sched=cfq,bfq",
        "--out",
        resumed.to_str().expect("path"),
    ]);
    assert_user_error(&other, &["resumed", "other settings"]);
    // `--merge` makes the document from the point files alone.
    std::fs::remove_file(resumed.join("results.json")).expect("remove");
    let merged = ioslice(&["sweep", "--merge", resumed.to_str().expect("path")]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert_eq!(read(&resumed.join("results.json")), expected);
}

#[test]
fn merging_a_partial_directory_lists_the_missing_points() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write_job(dir.path(), SMALL);
    let out = dir.path().join("out");
    assert!(sweep_24(&job, &out).status.success());
    let gone = out.join("points").join("sched=bfq_iodepth=4_seed=2.json");
    std::fs::remove_file(&gone).expect("remove");
    let merged = ioslice(&["sweep", "--merge", out.to_str().expect("path")]);
    assert!(merged.status.success());
    assert!(common::stdout(&merged).contains("23 of 24 points"));
    let doc: serde_json::Value =
        serde_json::from_str(&read(&out.join("results.json"))).expect("JSON");
    assert_eq!(
        doc["missing"],
        serde_json::json!(["sched=bfq_iodepth=4_seed=2.json"])
    );
    assert!(read(&out.join("report.html")).contains("1 points are missing"));
}

#[test]
fn sigint_stores_finished_points_and_the_rerun_completes_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Points long enough that the sweep is still running when the signal comes.
    let job = write_job(dir.path(), &SMALL.replace("runtime=200ms", "runtime=120"));
    let out = dir.path().join("out");
    let args = [
        "sweep",
        job.as_str(),
        "--device",
        "sim:ssd",
        "--axis",
        "iodepth=1,2,4,8,16,32",
        "--seeds",
        "2",
        "--out",
        out.to_str().expect("path"),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ioslice starts");
    let start = Instant::now();
    while !out.join("points").exists()
        || point_files(&out)
            .iter()
            .all(|f| f.extension().is_some_and(|e| e == "part"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no point finished"
        );
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: `kill` only sends a signal to the child this test started.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let output = child.wait_with_output().expect("wait");
    let stored = point_files(&out).len();
    if output.status.code() == Some(128) {
        assert!(
            stderr(&output).contains("points to run done"),
            "{}",
            stderr(&output)
        );
        assert!(stored < 12, "{stored} points stored");
        assert!(!out.join("results.json").exists());
    } else {
        // The sweep finished before the signal arrived: nothing left to resume.
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let resumed = ioslice(&args);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(point_files(&out).len(), 12);
    let straight = dir.path().join("straight");
    let mut straight_args = args;
    straight_args[9] = straight.to_str().expect("path");
    assert!(ioslice(&straight_args).status.success());
    assert_eq!(
        read(&out.join("results.json")),
        read(&straight.join("results.json"))
    );
}

#[test]
fn bad_axes_are_refused_in_one_line_naming_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write_job(dir.path(), SMALL);
    let out = dir.path().join("out");
    let out = out.to_str().expect("path");
    let cases: [(&str, &[&str]); 7] = [
        ("iodpeth=1,2", &["iodpeth", "unknown axis name"]),
        ("iodepth", &["iodepth", "NAME=V1"]),
        ("sched=cfq,elevator9", &["sched", "elevator9"]),
        ("sched.slice_idel=0,8", &["slice_idel"]),
        ("iodepth=1,x", &["iodepth", "`x`"]),
        ("device.warp=1", &["device.warp", "warp"]),
        ("iodepth=1,,4", &["iodepth", "empty"]),
    ];
    for (axis, what) in cases {
        let output = ioslice(&[
            "sweep", &job, "--device", "sim:ssd", "--sched", "cfq", "--axis", axis, "--out", out,
        ]);
        assert_user_error(&output, what);
    }
    assert!(!Path::new(out).exists(), "nothing written for a bad sweep");
}

/// The `data-values` of the first chart titled `title`: per line, its values.
fn chart_values(page: &str, title: &str) -> Vec<Vec<f64>> {
    let svg = page
        .split("<svg ")
        .find(|svg| svg.contains(&format!("aria-label=\"{title}\"")))
        .unwrap_or_else(|| panic!("no chart {title}"));
    let values = svg
        .split("data-values=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("data-values");
    values
        .split(';')
        .map(|line| {
            line.split(' ')
                .map(|v| v.parse().expect("a mean"))
                .collect()
        })
        .collect()
}

#[test]
fn a_sweep_over_weights_draws_each_groups_share_and_each_job() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write_job(
        dir.path(),
        "[global]\nioengine=libaio\nrw=randread\nbs=4k\nsize=64m\ndirect=1\niodepth=4\nruntime=300ms\ntime_based\n[a]\ncgroup=a\n[b]\ncgroup=b\n",
    );
    let out = dir.path().join("out");
    let output = ioslice(&[
        "sweep",
        &job,
        "--device",
        "sim:ssd",
        "--sched",
        "bfq",
        "--axis",
        "cgroup.a.weight=100,300,900",
        "--seeds",
        "2",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value =
        serde_json::from_str(&read(&out.join("results.json"))).expect("JSON");
    let points = doc["points"].as_array().expect("points");
    // Per weight (two seeds each): each job's MiB/s and each group's share, from the JSON.
    let mut job_mib = vec![vec![0.0; 3]; 2];
    let mut share = vec![vec![0.0; 3]; 2];
    for (i, point) in points.iter().enumerate() {
        let jobs = point["jobs"].as_array().expect("jobs");
        assert_eq!(jobs[0]["cgroup"], "a");
        assert_eq!(jobs[1]["cgroup"], "b");
        let bw: Vec<f64> = jobs
            .iter()
            .map(|j| j["bw_bytes"].as_u64().expect("bw") as f64)
            .collect();
        let total: f64 = bw.iter().sum();
        for job in 0..2 {
            job_mib[job][i / 2] += bw[job] / 1_048_576.0 / 2.0;
            share[job][i / 2] += bw[job] * 100.0 / total / 2.0;
        }
    }
    let page = read(&out.join("report.html"));
    let close = |drawn: &[Vec<f64>], expected: &[Vec<f64>]| {
        assert_eq!(drawn.len(), expected.len());
        for (d, e) in drawn.iter().zip(expected) {
            assert_eq!(d.len(), e.len());
            for (d, e) in d.iter().zip(e) {
                assert!((d - e).abs() < 1e-9, "drawn {d}, from the JSON {e}");
            }
        }
    };
    close(&chart_values(&page, "Bandwidth per job"), &job_mib);
    close(
        &chart_values(&page, "Share of bandwidth per cgroup"),
        &share,
    );
    // bfq divides by weight against b's default 100: a takes 1/2, 3/4, 9/10.
    for (at, expected) in [50.0, 75.0, 90.0].iter().enumerate() {
        assert!(
            (share[0][at] - expected).abs() < 1.0,
            "a's share at point {at}: {}",
            share[0][at]
        );
    }
    assert!(page.contains("cgroup a</li>") || page.contains(">cgroup a<"));
}

#[test]
fn tunable_and_size_axes_are_labelled_with_their_units() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = write_job(dir.path(), SMALL);
    let out = dir.path().join("out");
    let output = ioslice(&[
        "sweep",
        &job,
        "--device",
        "sim:ssd",
        "--sched",
        "cfq",
        "--axis",
        "sched.slice_idle=0,8",
        "--axis",
        "bs=4k,1m",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let page = read(&out.join("report.html"));
    // plotters writes a text element's content on a line of its own.
    for tick in ["0 ms", "8 ms", "4 KiB", "1 MiB"] {
        assert!(page.contains(&format!(">\n{tick}\n</text>")), "{tick}");
    }
    assert!(page.contains("bs=1 MiB"), "line names labelled too");
    // The points table keeps the values as given.
    assert!(page.contains("<td>1m</td>"));
}
