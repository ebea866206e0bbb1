//! fio's log files (`write_bw_log=`, `write_iops_log=`, `write_lat_log=`, `write_hist_log=`)
//! and `--output-format json+`, as `ioslice run` writes them: named as fio names them in the
//! current directory, reproducible to the byte in simulation, laid out as fio 3.33 lays them
//! out on a real file, and read by fio's own tools (`fio2gnuplot`, `fio_generate_plots`,
//! `fio_jsonplus_clat2csv`). A test that needs a tool that is missing skips with a printed
//! reason; `fio_generate_plots` and `fio2gnuplot -g` need gnuplot.

mod common;

use common::{assert_user_error, ioslice, stderr, stdout};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// Run `ioslice` with `args` in `dir`, where the logs go.
fn ioslice_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

/// A temporary directory on the target directory's filesystem.
fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

/// Whether `tool` is on the PATH; prints why the test skips when it is not.
fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        eprintln!("skipping: {tool} is not installed");
    }
    found
}

/// Every `.log` file under `dir` (one level of subdirectories too), by relative name.
fn logs_in(dir: &Path) -> BTreeMap<String, String> {
    let mut logs = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(current) = dirs.pop() {
        for entry in std::fs::read_dir(&current).expect("listing") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "log") {
                let name = path.strip_prefix(dir).expect("under dir");
                let text = std::fs::read_to_string(&path).expect("read log");
                logs.insert(name.to_string_lossy().into_owned(), text);
            }
        }
    }
    logs
}

/// A log's lines, each split into its columns.
fn rows(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .map(|line| line.split(", ").collect())
        .collect()
}

/// The values of column `column` of a log, as a set.
fn column(text: &str, column: usize) -> BTreeSet<String> {
    rows(text)
        .iter()
        .map(|row| row[column].to_string())
        .collect()
}

/// Run `job` (a job file's text) in simulation in a fresh directory; the directory and output.
fn simulate(job: &str, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let dir = temp_dir();
    std::fs::write(dir.path().join("job.fio"), job).expect("job file");
    let mut args = vec!["run", "job.fio", "--seed", "3"];
    args.extend_from_slice(extra);
    let output = ioslice_in(dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    (dir, output)
}

const LOGGED: &str = "\
[global]
rw=randrw
bs=4k
size=4m
number_ios=300
write_bw_log=t
write_iops_log=t
write_lat_log=t
write_hist_log=t
log_hist_msec=100
[unit]
numjobs=2
log_offset=1
[avg]
ioengine=libaio
iodepth=4
log_avg_msec=200
prioclass=1
log_prio=1
[shared]
numjobs=2
per_job_logs=0
write_bw_log=sub/s
";

#[test]
fn simulated_logs_are_named_as_fio_names_them_and_the_same_seed_writes_the_same_bytes() {
    let job = LOGGED.replace("write_bw_log=sub/s", "write_bw_log=sub/s\nwrite_hist_log=");
    let run = || {
        let dir = temp_dir();
        std::fs::create_dir(dir.path().join("sub")).expect("sub directory");
        std::fs::write(dir.path().join("job.fio"), &job).expect("job file");
        let output = ioslice_in(dir.path(), &["run", "job.fio", "--seed", "3"]);
        assert!(output.status.success(), "{}", stderr(&output));
        logs_in(dir.path())
    };
    let logs = run();
    let mut expected = BTreeSet::new();
    for number in 1..=3 {
        for kind in ["bw", "iops", "slat", "clat", "lat", "clat_hist"] {
            expected.insert(format!("t_{kind}.{number}.log"));
        }
    }
    // The shared job (processes 4 and 5): one file each, its own prefix for bandwidth and
    // the job's name for an empty write_hist_log=.
    for kind in ["iops", "slat", "clat", "lat"] {
        expected.insert(format!("t_{kind}.log"));
    }
    expected.insert("sub/s_bw.log".to_string());
    expected.insert("shared_clat_hist.log".to_string());
    let names: BTreeSet<String> = logs.keys().cloned().collect();
    assert_eq!(names, expected);
    // Again, in another directory: the same bytes in every file.
    assert_eq!(logs, run());
}

#[test]
fn every_simulated_io_is_an_entry_with_fios_columns() {
    let job = LOGGED.replace(
        "[shared]\nnumjobs=2\nper_job_logs=0\nwrite_bw_log=sub/s\n",
        "",
    );
    let (dir, output) = simulate(&job, &["--output-format", "json"]);
    let report: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let logs = logs_in(dir.path());
    let ios = |job: usize| -> u64 {
        ["read", "write"]
            .iter()
            .map(|dir| {
                report["jobs"][job][dir]["total_ios"]
                    .as_u64()
                    .expect("count")
            })
            .sum()
    };
    for number in [1usize, 2] {
        let clat = &logs[&format!("t_clat.{number}.log")];
        assert_eq!(
            rows(clat).len() as u64,
            ios(number - 1),
            "one entry per I/O"
        );
        // log_offset=1: time, value, direction, block size, offset, priority flag.
        assert!(rows(clat).iter().all(|row| row.len() == 6));
        assert_eq!(column(clat, 2), BTreeSet::from(["0".into(), "1".into()]));
        assert_eq!(column(clat, 3), BTreeSet::from(["4096".into()]));
        assert_eq!(column(clat, 5), BTreeSet::from(["0".into()]));
        assert!(column(clat, 4).len() > 100, "the I/Os' offsets");
        assert_eq!(column(&logs[&format!("t_iops.{number}.log")], 1).len(), 1);
        // psync: fio logs no submission latency.
        assert_eq!(logs[&format!("t_slat.{number}.log")], "");
        // The simulator has no submission latency: total latency is completion latency.
        assert_eq!(clat, &logs[&format!("t_lat.{number}.log")]);
        // As in fio, a per-I/O bandwidth log makes every I/O a bandwidth sample of the report.
        let read = &report["jobs"][number - 1]["read"];
        assert_eq!(read["bw_samples"], read["total_ios"]);
        assert_eq!(read["iops_samples"], read["total_ios"]);
    }
    // The averaged job: block size 0, and priority 0 as log_prio=1 prints it (an averaged
    // entry carries none).
    let clat = &logs["t_clat.3.log"];
    assert!(rows(clat).iter().all(|row| row.len() == 5));
    assert_eq!(column(clat, 3), BTreeSet::from(["0".into()]));
    assert_eq!(column(clat, 4), BTreeSet::from(["0x0000".into()]));
    assert!(rows(&logs["t_slat.3.log"]).iter().all(|row| row[1] == "0"));
    let hist = rows(&logs["t_clat_hist.3.log"]);
    assert!(!hist.is_empty());
    assert!(hist.iter().all(|row| row.len() == 3 + 1856));
}

#[test]
fn a_log_in_a_missing_directory_is_a_one_line_error_naming_it() {
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("job.fio"),
        "[j]\nsize=1m\nwrite_bw_log=nowhere/x\n",
    )
    .expect("job file");
    let output = ioslice_in(dir.path(), &["run", "job.fio"]);
    assert_user_error(&output, &["nowhere/x_bw.1.log"]);
    let device = dir.path().join("data");
    std::fs::write(&device, vec![0u8; 1 << 20]).expect("data file");
    let device = device.to_str().expect("utf-8");
    let output = ioslice_in(dir.path(), &["run", "job.fio", "--device", device]);
    assert_user_error(&output, &["nowhere/x_bw.1.log"]);
}

#[test]
fn fio2gnuplot_and_fio_generate_plots_accept_the_logs() {
    if !have("fio2gnuplot") || !have("fio_generate_plots") || !have("gnuplot") {
        return;
    }
    let job = "[global]\nrw=randread\nbs=4k\nsize=4m\nnumber_ios=400\n\
               write_bw_log=p\nwrite_iops_log=p\nwrite_lat_log=p\n[a]\n[b]\nioengine=libaio\nlog_avg_msec=50\n";
    let (dir, _) = simulate(job, &[]);
    let run = |program: &str, args: &[&str]| {
        let output = Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("the tool runs");
        assert!(output.status.success(), "{program}: {}", stderr(&output));
    };
    run("fio2gnuplot", &["-p", "*_bw*.log", "-g"]);
    run("fio_generate_plots", &["plots"]);
    for made in ["p_bw.1-2Draw.png", "p_bw.2-2Dtrend.png"] {
        assert!(dir.path().join(made).exists(), "fio2gnuplot made {made}");
    }
    for kind in ["bw", "iops", "clat", "lat", "slat"] {
        let svg = dir.path().join(format!("plots-{kind}.svg"));
        let size = std::fs::metadata(&svg).map_or(0, |m| m.len());
        assert!(size > 0, "fio_generate_plots made {}", svg.display());
    }
}

#[test]
fn an_unknown_output_format_names_json_plus_among_the_valid_ones() {
    let job = "scenarios/four-sequential-readers.fio";
    let output = ioslice(&["run", job, "--output-format", "xml"]);
    assert_user_error(&output, &["xml", "normal, json, json+, terse"]);
}

#[test]
fn fio_jsonplus_clat2csv_turns_json_plus_into_a_row_per_bin() {
    if !have("fio_jsonplus_clat2csv") {
        return;
    }
    let job = "[global]\nrw=randread\nbs=4k\nsize=4m\nnumber_ios=300\n[a]\n[b]\nrw=randwrite\n";
    let (dir, output) = simulate(job, &["--output-format", "json+"]);
    std::fs::write(dir.path().join("plus.json"), &output.stdout).expect("json+");
    let converted = Command::new("fio_jsonplus_clat2csv")
        .args(["plus.json", "out.csv"])
        .current_dir(dir.path())
        .output()
        .expect("the tool runs");
    assert!(converted.status.success(), "{}", stderr(&converted));
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    for (job, direction) in [(0, "read"), (1, "write")] {
        let bins = report["jobs"][job][direction]["clat_ns"]["bins"]
            .as_object()
            .expect("bins")
            .len();
        let csv = std::fs::read_to_string(dir.path().join(format!("out_job{job}.csv")))
            .expect("the job's CSV");
        assert_eq!(csv.lines().count(), 1 + bins, "a header and a row per bin");
    }
}

/// The job both fio and ioslice run on a real file: rate-limited, so that bandwidth is the
/// same on any machine.
const REAL: &str = "\
[global]
bs=4k
size=4m
rw=randrw
time_based
runtime=1
rate_iops=200
write_bw_log=r
write_iops_log=r
write_lat_log=r
write_hist_log=r
log_hist_msec=250
[avg]
log_avg_msec=250
[unit]
ioengine=libaio
iodepth=2
log_offset=1
log_prio=1
prioclass=2
prio=5
";

/// The mean of column 1 of a log.
fn mean_value(text: &str) -> f64 {
    let values: Vec<f64> = rows(text)
        .iter()
        .map(|row| row[1].parse::<f64>().expect("a number"))
        .collect();
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// Check that ioslice's log `name` is laid out as fio's: the same columns with the same
/// meaning, values of the same kind.
fn assert_same_layout(name: &str, fio: &str, ours: &str) {
    let (fio_rows, our_rows) = (rows(fio), rows(ours));
    assert_eq!(
        fio_rows.is_empty(),
        our_rows.is_empty(),
        "{name}: empty in one only"
    );
    let Some(width) = fio_rows.first().map(Vec::len) else {
        return;
    };
    assert!(
        our_rows.iter().all(|row| row.len() == width),
        "{name}: {width} columns"
    );
    let histogram = name.contains("clat_hist");
    // Direction and block size (a histogram line has no value column).
    for col in if histogram { [1, 2] } else { [2, 3] } {
        assert_eq!(column(fio, col), column(ours, col), "{name}: column {col}");
    }
    if !histogram {
        let last = width - 1;
        assert_eq!(column(fio, last), column(ours, last), "{name}: priority");
    }
    let ratio = (fio_rows.len() as f64) / (our_rows.len() as f64);
    assert!(
        (0.4..2.5).contains(&ratio),
        "{name}: {} lines, fio {}",
        our_rows.len(),
        fio_rows.len()
    );
}

#[test]
fn a_real_run_writes_the_logs_fio_3_33_writes() {
    if !have("fio") {
        return;
    }
    let fio_dir = temp_dir();
    let our_dir = temp_dir();
    let data = fio_dir.path().join("data");
    std::fs::write(&data, vec![0u8; 4 << 20]).expect("data file");
    let data = data.to_str().expect("utf-8");
    std::fs::write(
        fio_dir.path().join("job.fio"),
        format!("[global]\nfilename={data}\n{REAL}"),
    )
    .expect("fio's job file");
    std::fs::write(our_dir.path().join("job.fio"), REAL).expect("our job file");
    let fio = Command::new("fio")
        .args(["job.fio", "--output=/dev/null"])
        .current_dir(fio_dir.path())
        .output()
        .expect("fio runs");
    assert!(fio.status.success(), "fio: {}", stderr(&fio));
    let ours = ioslice_in(our_dir.path(), &["run", "job.fio", "--device", data]);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let (fio_logs, our_logs) = (logs_in(fio_dir.path()), logs_in(our_dir.path()));
    let names = |logs: &BTreeMap<String, String>| logs.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&our_logs), names(&fio_logs));
    for (name, fio_text) in &fio_logs {
        assert_same_layout(name, fio_text, &our_logs[name]);
    }
    // The rate limit sets the averaged bandwidth: 200 I/Os of 4 KiB a second, each way.
    for name in ["r_bw.1.log", "r_iops.1.log"] {
        let (fio, ours) = (mean_value(&fio_logs[name]), mean_value(&our_logs[name]));
        assert!(
            ours > fio / 2.0 && ours < fio * 2.0,
            "{name}: {ours} against fio's {fio}"
        );
    }
    let offsets = column(&our_logs["r_clat.2.log"], 4);
    assert!(offsets
        .iter()
        .all(|o| o.parse::<u64>().is_ok_and(|o| o % 4096 == 0 && o < 4 << 20)));
}
