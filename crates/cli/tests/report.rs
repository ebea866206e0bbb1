//! `--report` on `run` and `compare`, and `ioslice report`: the page a user opens, its data
//! as JSON, several files on one page, and one-line errors for what is not a report.

#[allow(dead_code)]
mod common;

use common::{assert_user_error, ioslice, stderr};

const READERS: &str = "[global]\nioengine=psync\ndirect=1\nruntime=3\ntime_based\n[client]\nrw=read\nbs=4k\nsize=1g\nnumjobs=2\n";

fn charts_with_data(html: &str) -> usize {
    html.match_indices("data-points=\"")
        .filter(|(at, needle)| !html[at + needle.len()..].starts_with('0'))
        .count()
}

/// The counts per window each line of the overlay chart `id` carries, in line order.
fn overlay_counts(html: &str, id: &str) -> Vec<Vec<u64>> {
    let figure = html
        .split(&format!("id=\"{id}\""))
        .nth(1)
        .and_then(|rest| rest.split("</figure>").next())
        .unwrap_or_else(|| panic!("no chart {id}"));
    figure
        .split("data-counts=\"")
        .skip(1)
        .map(|rest| {
            rest.split('"')
                .next()
                .unwrap_or_default()
                .split(' ')
                .map(|n| n.parse().expect("a count"))
                .collect()
        })
        .collect()
}

#[test]
fn a_run_writes_a_page_with_its_charts_and_its_timeline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("readers.fio");
    std::fs::write(&job, READERS).expect("job file");
    let page = dir.path().join("run.html");
    let output = ioslice(&[
        "run",
        job.to_str().expect("path"),
        "--device",
        "sim:ide-2004",
        "--sched",
        "as",
        "--report",
        page.to_str().expect("path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.starts_with("<!DOCTYPE html>"));
    for fetch in ["src=\"http", "href=\"http", "url(http", "<link", "@import"] {
        assert!(!html.contains(fetch), "nothing fetched: {fetch}");
    }
    assert_eq!(charts_with_data(&html), 3, "bandwidth, percentiles and CDF");
    assert!(html.contains("id=\"tl-0\""), "the decision timeline");
    assert!(
        html.contains("anticipation wait"),
        "as's waits in the legend"
    );
    assert!(
        html.contains("client.0") && html.contains("client.1"),
        "clones told apart"
    );
    assert!(
        html.contains("antic_expire"),
        "every tunable of the scheduler"
    );
    assert!(
        html.contains("seek_avg_ms"),
        "every parameter of the device"
    );
}

#[test]
fn report_data_from_two_runs_renders_on_one_page() {
    let dir = tempfile::tempdir().expect("temp dir");
    let job = dir.path().join("readers.fio");
    std::fs::write(&job, READERS).expect("job file");
    let mut records = Vec::new();
    for sched in ["deadline", "cfq"] {
        let record = dir.path().join(format!("{sched}.json"));
        let output = ioslice(&[
            "run",
            job.to_str().expect("path"),
            "--sched",
            sched,
            "--report",
            record.to_str().expect("path"),
            "--output-format",
            "terse",
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        let data: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&record).expect("data")).expect("JSON");
        assert_eq!(data["runs"].as_array().map(Vec::len), Some(1));
        records.push(record.display().to_string());
    }
    let page = dir.path().join("both.html");
    let output = ioslice(&[
        "report",
        &records[0],
        &records[1],
        "-o",
        page.to_str().expect("path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert_eq!(
        charts_with_data(&html),
        10,
        "each run's three, and the overlay's percentiles, CDF, bandwidth and IOPS"
    );
    // The IOPS overlay's lines count every request each run's record says it completed.
    let records_ios: Vec<u64> = records
        .iter()
        .map(|record| {
            let data: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(record).expect("data"))
                    .expect("JSON");
            data["runs"][0]["jobs"]
                .as_array()
                .expect("jobs")
                .iter()
                .flat_map(|job| job["directions"].as_array().expect("directions").clone())
                .map(|d| d["total_ios"].as_u64().expect("total_ios"))
                .sum()
        })
        .collect();
    let drawn: Vec<u64> = overlay_counts(&html, "overlay-iops")
        .iter()
        .map(|counts| counts.iter().sum())
        .collect();
    assert_eq!(drawn, records_ios, "every request of each run, once");
    for label in ["<td>deadline</td>", "<td>cfq</td>"] {
        assert!(
            html.contains(label),
            "the runs labelled by scheduler: {label}"
        );
    }
    assert!(html.contains("id=\"tl-0\"") && html.contains("id=\"tl-1\""));
    let again = dir.path().join("again.html");
    let output = ioslice(&[
        "report",
        &records[0],
        &records[1],
        "-o",
        again.to_str().expect("path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        std::fs::read(&page).ok(),
        std::fs::read(&again).ok(),
        "same input, same bytes"
    );
}

#[test]
fn a_comparison_puts_the_seeds_figures_beside_ioslices() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("seed003.html");
    let output = ioslice(&[
        "compare",
        "scenarios/seed-003/read-sequential-4k.fio",
        "--sched",
        "deadline,as,cfq",
        "--device",
        "sim:ide-2004",
        "--clients",
        "2",
        "--report",
        page.to_str().expect("path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).expect("the page");
    // The page's table gives the terminal's figures, in its unit (KB/s of 1000 bytes).
    let terminal = String::from_utf8_lossy(&output.stdout);
    assert!(terminal.contains("Bandwidth in KB/s (1000 bytes)"));
    assert!(html.contains("Bandwidths in KB/s of 1000 bytes, the figures of the terminal's table"));
    let rows: Vec<&str> = terminal
        .lines()
        .filter(|line| line.trim_start().starts_with("2 "))
        .collect();
    assert_eq!(rows.len(), 3, "a row a scheduler:\n{terminal}");
    for row in rows {
        let figures: Vec<&str> = row.split_whitespace().collect();
        let (max, min, aggregate) = (figures[1], figures[2], figures[3]);
        assert!(
            html.contains(&format!("<td class=\"n\">{aggregate} ("))
                && html.contains(&format!(
                    "<td class=\"n\">{max}</td><td class=\"n\">{min}</td>"
                )),
            "the terminal's row {row:?} on the page"
        );
    }
    for seed in ["(4230)", "(18434)", "(17312)"] {
        assert!(
            html.contains(seed),
            "the seed's aggregate {seed} beside ioslice's"
        );
    }
    assert!(html.contains("id=\"comparison-0\""));
    for run in 0..3 {
        assert!(
            html.contains(&format!("id=\"tl-{run}\"")),
            "run {run}'s timeline"
        );
    }
    assert!(html.len() < 5_000_000, "{} bytes", html.len());
}

#[test]
fn a_comparison_without_the_posts_figures_does_not_speak_of_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("groups.html");
    let output = ioslice(&[
        "compare",
        "scenarios/bfq/weighted-readers-2-groups.fio",
        "--sched",
        "cfq,bfq",
        "--report",
        page.to_str().expect("path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.contains("chart-bars"));
    assert!(!html.contains("original post"), "no post, no post legend");
    assert!(!html.contains("(post)"));
}

#[test]
fn what_is_not_a_report_is_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.html");
    let out = out.to_str().expect("path");
    let missing = dir.path().join("missing.json");
    assert_user_error(
        &ioslice(&["report", missing.to_str().expect("path"), "-o", out]),
        &["missing.json"],
    );
    assert_user_error(
        &ioslice(&["report", dir.path().to_str().expect("path"), "-o", out]),
        &["directory", "expected a JSON or fio log file"],
    );
    assert_user_error(
        &ioslice(&["report", "/proc/self/status", "-o", out]),
        &[
            "/proc/self/status",
            "kernel's /proc",
            "expected a JSON or fio log file",
        ],
    );
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").expect("junk");
    assert_user_error(
        &ioslice(&["report", junk.to_str().expect("path"), "-o", out]),
        &["junk.json"],
    );
    let job = dir.path().join("j.fio");
    std::fs::write(&job, "[j]\nrw=read\nsize=1m\n").expect("job");
    let nowhere = dir.path().join("no/such/dir/r.html");
    assert_user_error(
        &ioslice(&[
            "run",
            job.to_str().expect("path"),
            "--report",
            nowhere.to_str().expect("path"),
        ]),
        &["r.html", "cannot write the report"],
    );
}

#[test]
fn fios_logs_and_json_are_drawn_together_labelled_by_what_differs() {
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../report/tests/fixtures/fio-3.33"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("fio.html");
    let file = |name: &str| format!("{fixtures}/{name}");
    let output = ioslice(&[
        "report",
        &file("x.json"),
        &file("seq_bw.1.log"),
        &file("seq.json"),
        &file("seq_clat.1.log"),
        "-o",
        page.to_str().expect("path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).expect("the page");
    let labels = html
        .split("<table class=\"labels\">")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .expect("the labels' table");
    let cells: Vec<&str> = labels
        .split("<tr><td>")
        .skip(1)
        .filter_map(|row| row.split("</td>").next())
        .collect();
    // The logs of one prefix are one run, where its first file is; fio's logs record no
    // job option, so the run is named by its prefix.
    assert_eq!(cells, ["rw=randread, size=8m", "seq", "rw=read, size=64k"]);
    assert!(html.contains("chart chart-overlay"), "the logs' bandwidth");
    assert!(
        html.contains("Bytes from fio&#39;s bandwidth log"),
        "the log run's chart says where its bytes come from"
    );
    let bad = dir.path().join("j_clat.1.log");
    std::fs::write(&bad, "10, 5\n").expect("log");
    assert_user_error(
        &ioslice(&[
            "report",
            bad.to_str().expect("path"),
            "-o",
            page.to_str().expect("path"),
        ]),
        &["j_clat.1.log:1: 2 fields", "fio's log format"],
    );
}

/// fio on the PATH, or why not.
fn fio_version() -> Result<String, String> {
    let output = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .map_err(|e| format!("no fio on the PATH ({e})"))?;
    if !output.status.success() {
        return Err("fio --version failed".to_string());
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// An averaged fio log's lines: (time ms, value), each value held since the line before
/// (or the start).
fn log_lines(log: &str) -> Vec<(u64, f64)> {
    log.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let fields: Vec<u64> = line
                .split(',')
                .take(2)
                .map(|f| f.trim().parse().expect("a number"))
                .collect();
            (fields[0], fields[1] as f64)
        })
        .collect()
}

/// The window the page records a run of logs in, as the page documents it: the median gap
/// between consecutive lines of its bandwidth and IOPS logs.
fn recorded_window_ms(logs: &[&[(u64, f64)]]) -> u64 {
    let mut gaps: Vec<u64> = logs
        .iter()
        .flat_map(|lines| lines.windows(2).map(|pair| pair[1].0 - pair[0].0))
        .collect();
    gaps.sort_unstable();
    gaps[gaps.len() / 2].max(1)
}

/// The requests an averaged IOPS log says were done in each recorded window of
/// `window_ms`, with how many pieces (a line's span within a window) each is made of.
fn logged_requests(lines: &[(u64, f64)], window_ms: u64) -> Vec<(f64, u32)> {
    let mut out: Vec<(f64, u32)> = Vec::new();
    let mut since = 0u64;
    for &(time, iops) in lines {
        let mut last = usize::MAX;
        for ms in since..time {
            let window = (ms / window_ms) as usize;
            if out.len() <= window {
                out.resize(window + 1, (0.0, 0));
            }
            out[window].0 += iops / 1000.0;
            if window != last {
                out[window].1 += 1;
                last = window;
            }
        }
        since = time;
    }
    out
}

/// `recorded` (requests and pieces per window of `from_ms`) put on windows of `to_ms`, each
/// recorded window shared in proportion to its overlap: per window, the requests and the
/// bound on what truncating each piece and each share can lose.
fn on_common_windows(recorded: &[(f64, u32)], from_ms: u64, to_ms: u64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &(requests, pieces)) in recorded.iter().enumerate() {
        let (start, end) = (i as u64 * from_ms, (i as u64 + 1) * from_ms);
        let mut at = start;
        while at < end {
            let index = (at / to_ms) as usize;
            let until = ((at / to_ms + 1) * to_ms).min(end);
            if out.len() <= index {
                out.resize(index + 1, (0.0, 0.0));
            }
            let share = (until - at) as f64 / from_ms as f64;
            out[index].0 += requests * share;
            out[index].1 += f64::from(pieces) * share + 1.0;
            at = until;
        }
    }
    out
}

#[test]
fn fios_own_iops_logs_are_drawn_as_they_count() {
    let version = match fio_version() {
        Ok(version) => version,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut inputs = Vec::new();
    for (name, rw) in [("rand", "randread"), ("seq", "read")] {
        let status = std::process::Command::new("fio")
            .current_dir(dir.path())
            .args([
                &format!("--name={name}"),
                &format!("--rw={rw}"),
                "--bs=4k",
                "--size=4m",
                &format!("--filename={name}.data"),
                "--runtime=1",
                "--time_based",
                &format!("--write_bw_log={name}"),
                &format!("--write_iops_log={name}"),
                &format!("--write_lat_log={name}"),
                "--log_avg_msec=100",
                "--output-format=json",
                &format!("--output={name}.json"),
            ])
            .status()
            .expect("fio starts");
        assert!(status.success(), "{version}: fio ran");
        inputs.push(format!("{name}_iops.1.log"));
        inputs.push(format!("{name}_bw.1.log"));
    }
    let page = dir.path().join("iops.html");
    let paths: Vec<String> = inputs
        .iter()
        .map(|name| dir.path().join(name).display().to_string())
        .collect();
    let mut args: Vec<&str> = vec!["report"];
    args.extend(paths.iter().map(String::as_str));
    args.extend(["-o", page.to_str().expect("path")]);
    let output = ioslice(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).expect("the page");
    let lines = overlay_counts(&html, "overlay-iops");
    assert_eq!(lines.len(), 2, "{version}: a line per prefix");
    let window_ms: u64 = html
        .split("id=\"overlay-iops\"")
        .nth(1)
        .and_then(|rest| {
            rest.split("<select class=\"ts-window\"><option value=\"")
                .nth(1)
        })
        .and_then(|rest| rest.split('"').next())
        .and_then(|ns| ns.parse::<u64>().ok())
        .expect("the recorded window")
        / 1_000_000;
    let read_log = |name: &str, kind: &str| {
        log_lines(
            &std::fs::read_to_string(dir.path().join(format!("{name}_{kind}.1.log")))
                .expect("the log"),
        )
    };
    for (name, counts) in ["rand", "seq"].into_iter().zip(&lines) {
        let (iops, bandwidth) = (read_log(name, "iops"), read_log(name, "bw"));
        // Each run is recorded in its own window, then put on the longest any run has.
        let own_ms = recorded_window_ms(&[&iops, &bandwidth]);
        let expected = on_common_windows(&logged_requests(&iops, own_ms), own_ms, window_ms);
        assert_eq!(counts.len(), expected.len(), "{version} {name}: windows");
        for (window, (&got, &(want, bound))) in counts.iter().zip(&expected).enumerate() {
            assert!(
                (got as f64 - want).abs() <= bound,
                "{version} {name}: window {window} of {window_ms} ms (recorded in {own_ms} ms): drawn {got}, logged {want:.1}, within {bound:.1}"
            );
        }
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("{name}.json"))).expect("json"),
        )
        .expect("fio's JSON");
        let done = json["jobs"][0]["read"]["total_ios"]
            .as_u64()
            .expect("total_ios");
        let drawn: u64 = counts.iter().sum();
        // The log's last line comes before the job ends; fio's averages are of whole windows.
        let ratio = drawn as f64 / done as f64;
        assert!(
            (0.7..=1.05).contains(&ratio),
            "{version} {name}: drawn {drawn} requests, fio's JSON {done}"
        );
    }
}
