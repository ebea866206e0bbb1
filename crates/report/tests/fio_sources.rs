//! fio's own output read as runs: its log files (`write_bw_log`, `write_lat_log`) and its
//! `json+` output, from files fio 3.33 wrote (checked in under `tests/fixtures/fio-3.33`)
//! and, when fio is installed, from files it writes now; and the labels that tell such runs
//! apart by their job options.

use std::path::Path;
use std::process::Command;

use ioslice_report::fio_log::{self, LogKind};
use ioslice_report::labels::labels;
use ioslice_report::{Report, RunRecord};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fio-3.33");

/// `(name, text)` of each fixture.
fn fixtures(names: &[&str]) -> Vec<(String, String)> {
    names
        .iter()
        .map(|name| {
            let path = format!("{FIXTURES}/{name}");
            let text = std::fs::read_to_string(&path).expect("fixture");
            (path, text)
        })
        .collect()
}

/// The lines of a log as `(time, value, direction, block size)`, read here apart from the
/// crate's parser.
fn lines(text: &str) -> Vec<[u64; 4]> {
    text.lines()
        .map(|line| {
            let f: Vec<u64> = line
                .split(',')
                .map(|field| field.trim().parse().expect("number"))
                .collect();
            [f[0], f[1], f[2], f[3]]
        })
        .collect()
}

#[test]
fn averaged_logs_give_the_bytes_fio_averaged_and_the_windows_latencies() {
    let files = fixtures(&["x_bw.1.log", "x_clat.1.log"]);
    let runs = fio_log::runs(&files).expect("logs read");
    assert_eq!(runs.len(), 1, "one prefix, one run");
    let run = &runs[0];
    assert!(run
        .title
        .starts_with("x (fio logs: latencies are the log windows' means"));
    let series = run.bandwidth.as_ref().expect("a bandwidth series");
    assert_eq!(series.window_ns, 100_000_000, "log_avg_msec=100");
    // Each line averages since the one before (the first since the start).
    let mut previous = 0;
    let expected: u64 = lines(&files[0].1)
        .iter()
        .map(|&[time, kib_s, _, _]| {
            let span = time - previous;
            previous = time;
            kib_s * 1024 * span / 1000
        })
        .sum();
    let got: u64 = series.series.iter().map(|s| s.total()).sum();
    // Each window's share is truncated apart: at most a byte per window lost.
    assert!(
        expected - got <= series.series[0].bytes.len() as u64,
        "{expected} vs {got}"
    );
    assert_eq!(series.series.len(), 1);
    assert_eq!(series.series[0].direction, "read");
    let clat = lines(&files[1].1);
    let d = &run.jobs[0].directions[0];
    assert_eq!(d.clat.count, clat.len() as u64);
    assert_eq!(
        d.clat.min_ns,
        clat.iter().map(|l| l[1]).min().expect("lines")
    );
    assert_eq!(
        d.clat.max_ns,
        clat.iter().map(|l| l[1]).max().expect("lines")
    );
    assert_eq!(d.total_ios, 0, "window means count no requests");
}

#[test]
fn a_log_of_every_request_gives_each_request_and_its_bytes() {
    let files = fixtures(&["seq_clat.1.log", "seq_bw.1.log"]);
    let runs = fio_log::runs(&files).expect("logs read");
    let run = &runs[0];
    assert!(run.title.contains("a latency per request"), "{}", run.title);
    let d = &run.jobs[0].directions[0];
    assert_eq!(d.io_bytes, 16 * 4096, "16 requests of 4 KiB, 64 KiB read");
    assert_eq!(d.total_ios, 16);
    let mut values: Vec<u64> = lines(&files[0].1).iter().map(|l| l[1]).collect();
    values.sort_unstable();
    let p50 = d
        .clat
        .percentiles
        .iter()
        .find(|p| p.percent == 50.0)
        .expect("p50");
    assert_eq!(p50.value_ns, values[7], "the 8th of 16 by nearest rank");
    assert_eq!(d.clat.cdf().last().map(|p| p.1), Some(1.0));
    // fio's json+ of the same run counts the same requests in its bins.
    let json = fixtures(&["seq.json"]);
    let fio = Report::read(&json[0].1, &json[0].0).expect("json+ read");
    let from_json = &fio.runs[0].jobs[0].directions[0];
    assert_eq!(from_json.total_ios, 16);
    assert_eq!(from_json.io_bytes, d.io_bytes);
    assert_eq!(
        from_json.clat.bins.iter().map(|b| b.1).sum::<u64>(),
        16,
        "json+ has clat bins"
    );
}

#[test]
fn log_names_and_lines_that_are_not_fios_are_one_line_errors() {
    assert_eq!(
        fio_log::prefix_of("out/a_b_bw.2.log").as_deref(),
        Some("out/a_b")
    );
    assert_eq!(fio_log::prefix_of("a_bw.log"), None, "no job number");
    assert_eq!(fio_log::prefix_of("a_foo.1.log"), None);
    let log = fio_log::parse("10, 5, 1, 4096, 0, 0\n", "j_iops.1.log").expect("parses");
    assert_eq!(
        (log.kind, log.job, log.samples[0].direction),
        (LogKind::Iops, 1, 1)
    );
    let error = fio_log::parse("1, 2, 0, 4096, 0\n5, x, 0, 0, 0\n", "j_lat.1.log").unwrap_err();
    assert!(error.starts_with("j_lat.1.log:2: value `x`"), "{error}");
    assert!(!error.contains('\n'));
    let error = fio_log::parse("1, 2, 7, 0, 0\n", "j_lat.1.log").unwrap_err();
    assert!(error.contains("direction `7`"), "{error}");
    let error =
        fio_log::runs(&[("j_slat.1.log".to_string(), "10, 5, 0, 0, 0\n".to_string())]).unwrap_err();
    assert!(error.starts_with("j: only submission latency"), "{error}");
}

#[test]
fn iops_logs_give_requests_per_window_beside_the_bytes() {
    // Averaged (block size 0): 50 IOPS over 0..100 ms, 30 over 100..200, 40 over 200..300.
    let iops = "100, 50, 0, 0, 0\n200, 30, 0, 0, 0\n300, 40, 0, 0, 0\n";
    let bw = "100, 200, 0, 0, 0\n200, 120, 0, 0, 0\n300, 160, 0, 0, 0\n";
    let runs = fio_log::runs(&[
        ("j_iops.1.log".to_string(), iops.to_string()),
        ("j_bw.1.log".to_string(), bw.to_string()),
    ])
    .expect("logs read");
    let requests = runs[0].requests.as_ref().expect("requests");
    assert_eq!(requests.window_ns, 100_000_000);
    assert_eq!(requests.series[0].requests, [5, 3, 4]);
    let bytes = runs[0].bandwidth.as_ref().expect("bytes");
    assert_eq!(bytes.series[0].bytes, [20_480, 12_288, 16_384]);
    let direction = &runs[0].jobs[0].directions[0];
    assert_eq!((direction.total_ios, direction.io_bytes), (12, 49_152));
    // A line per request (block size > 0) is one request, in the window of its time.
    let each = "1, 1, 1, 4096, 0\n2, 1, 1, 4096, 4096\n7, 1, 1, 4096, 8192\n";
    let runs = fio_log::runs(&[("k_iops.1.log".to_string(), each.to_string())]).expect("read");
    let requests = runs[0].requests.as_ref().expect("requests");
    // Windows of the median gap between lines, 5 ms: two requests, then one.
    assert_eq!(requests.window_ns, 5_000_000);
    assert_eq!(requests.series[0].requests, [2, 1]);
    assert!(runs[0].bandwidth.is_none(), "no bandwidth log, no bytes");
}

#[test]
fn fio_runs_are_labelled_by_the_job_options_that_differ() {
    let files = fixtures(&["x.json", "seq.json"]);
    let runs: Vec<RunRecord> = files
        .iter()
        .flat_map(|(name, text)| Report::read(text, name).expect("read").runs)
        .collect();
    let refs: Vec<&RunRecord> = runs.iter().collect();
    // name, filename and the log prefixes differ too, but only name things.
    assert_eq!(labels(&refs), ["rw=randread, size=8m", "rw=read, size=64k"]);
}

/// fio on the PATH, or why not.
fn fio() -> Result<String, String> {
    let output = Command::new("fio")
        .arg("--version")
        .output()
        .map_err(|e| format!("no fio on the PATH ({e})"))?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn run_fio(dir: &Path, args: &[&str]) {
    let status = Command::new("fio")
        .current_dir(dir)
        .args(args)
        .status()
        .expect("fio starts");
    assert!(status.success(), "fio {args:?}");
}

#[test]
fn logs_and_json_that_fio_writes_now_agree() {
    let version = match fio() {
        Ok(version) => version,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).display().to_string();
    run_fio(
        dir.path(),
        &[
            "--name=each",
            "--rw=read",
            "--bs=4k",
            "--size=1m",
            "--filename=data",
            "--write_bw_log=each",
            "--write_lat_log=each",
            "--output-format=json+",
            "--output=each.json",
        ],
    );
    let logs: Vec<(String, String)> = ["each_bw.1.log", "each_clat.1.log"]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(path(name)).expect("log written");
            (path(name), text)
        })
        .collect();
    let from_logs = fio_log::runs(&logs).expect("logs read");
    let json = std::fs::read_to_string(path("each.json")).expect("json written");
    let from_json = Report::read(&json, "each.json").expect("json read");
    let (a, b) = (
        &from_logs[0].jobs[0].directions[0],
        &from_json.runs[0].jobs[0].directions[0],
    );
    assert_eq!(a.total_ios, 256, "{version}: 1 MiB in 4 KiB requests");
    assert_eq!((a.io_bytes, b.io_bytes), (1 << 20, 1 << 20));
    assert_eq!(
        a.clat.count, b.clat.count,
        "{version}: every request logged"
    );
    assert_eq!(
        (a.clat.min_ns, a.clat.max_ns),
        (b.clat.min_ns, b.clat.max_ns)
    );
    run_fio(
        dir.path(),
        &[
            "--name=avg",
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
            "--filename=data2",
            "--runtime=1",
            "--time_based",
            "--write_bw_log=avg",
            "--write_lat_log=avg",
            "--log_avg_msec=50",
            "--output-format=json",
            "--output=avg.json",
        ],
    );
    let text = std::fs::read_to_string(path("avg_bw.1.log")).expect("log written");
    let runs = fio_log::runs(&[(path("avg_bw.1.log"), text)]).expect("log read");
    let series = runs[0].bandwidth.as_ref().expect("series");
    assert_eq!(series.window_ns, 50_000_000, "{version}: log_avg_msec=50");
    let logged: u64 = series.series.iter().map(|s| s.total()).sum();
    let json = std::fs::read_to_string(path("avg.json")).expect("json written");
    let done =
        Report::read(&json, "avg.json").expect("json read").runs[0].jobs[0].directions[0].io_bytes;
    // The log's last window ends before the job does; fio's averages are of whole windows.
    let ratio = logged as f64 / done as f64;
    assert!(
        (0.8..=1.05).contains(&ratio),
        "{version}: log {logged} B vs JSON {done} B"
    );
}
