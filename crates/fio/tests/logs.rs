//! fio's log files from a job's options to the bytes in its files: the options as fio reads
//! them, and every kind of log fed requests by hand.

use ioslice_core::Nanos;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_fio::logs::{JobLogs, LogFiles, LogOptions, LoggedIo};
use ioslice_fio::JobSpec;

const MILLISECOND: Nanos = 1_000_000;

fn parse_strict(text: &str) -> ioslice_fio::JobFile {
    let strict = ParseOptions {
        strict: true,
        ..ParseOptions::default()
    };
    parse_str(text, "logs.fio", &strict).expect("every log option is known")
}

#[test]
fn the_log_options_are_read_with_fios_defaults() {
    let file = parse_strict(
        "[global]\nwrite_bw_log=out/bw\nlog_avg_msec=500\n\
         [a]\nwrite_iops_log\nwrite_lat_log=lat\nwrite_hist_log=h\nlog_hist_msec=100\n\
         log_hist_coarseness=2\nper_job_logs=0\nlog_offset=1\nlog_prio=1\nlog_max_value=1\n\
         [b]\n",
    );
    let a = &file.jobs[0].logs;
    assert_eq!(a.bw.as_deref(), Some("out/bw"));
    assert_eq!(a.iops.as_deref(), Some(""), "a bare key: the job's name");
    assert_eq!(
        (a.lat.as_deref(), a.hist.as_deref()),
        (Some("lat"), Some("h"))
    );
    assert_eq!((a.avg_msec, a.hist_msec, a.hist_coarseness), (500, 100, 2));
    assert!(!a.per_job && a.offset && a.prio && a.max_value);
    let b = &file.jobs[1].logs;
    assert_eq!(
        *b,
        LogOptions {
            bw: Some("out/bw".into()),
            avg_msec: 500,
            ..LogOptions::default()
        }
    );
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
}

#[test]
fn a_coarseness_past_six_is_refused() {
    let strict = ParseOptions::default();
    let error = parse_str("[a]\nlog_hist_coarseness=7\n", "c.fio", &strict).expect_err("refused");
    assert!(error.to_string().contains("log_hist_coarseness"), "{error}");
}

fn spec(options: &str) -> JobSpec {
    let text = format!("[j]\n{options}");
    let file = parse_str(&text, "j.fio", &ParseOptions::default()).expect("parses");
    file.jobs[0].clone()
}

fn io(direction: usize, clat: Nanos, since_start_ms: u64) -> LoggedIo {
    LoggedIo {
        direction,
        bytes: 4096,
        offset: 8192 * since_start_ms,
        slat: 1000,
        clat,
        since_start: since_start_ms * MILLISECOND + 123,
    }
}

/// Run `ios` through the logs of `spec` in a fresh directory; each file's text by name.
fn logged(spec: &JobSpec, ios: &[LoggedIo], end_ms: u64) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().expect("scratch directory");
    let mut files = LogFiles::new(dir.path());
    let mut logs = JobLogs::open(&mut files, spec, 2)
        .expect("open")
        .expect("logs");
    for io in ios {
        logs.record(io);
    }
    logs.finish(end_ms * MILLISECOND).expect("flushed");
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("listing")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.path().join(&name)).expect("read");
            (name, text)
        })
        .collect()
}

#[test]
fn every_io_is_an_entry_of_every_log() {
    let spec = spec(
        "ioengine=libaio\nprioclass=1\nprio=3\nlog_offset=1\n\
         write_bw_log=x\nwrite_iops_log=x\nwrite_lat_log=x\n",
    );
    let got = logged(&spec, &[io(0, 169_005, 0), io(1, 100_000, 7)], 9);
    let expected = [
        (
            "x_bw.2.log",
            "0, 24235, 0, 4096, 0, 1\n7, 40960, 1, 4096, 57344, 1\n",
        ),
        (
            "x_clat.2.log",
            "0, 169005, 0, 4096, 0, 1\n7, 100000, 1, 4096, 57344, 1\n",
        ),
        (
            "x_iops.2.log",
            "0, 1, 0, 4096, 0, 1\n7, 1, 1, 4096, 57344, 1\n",
        ),
        (
            "x_lat.2.log",
            "0, 170005, 0, 4096, 0, 1\n7, 101000, 1, 4096, 57344, 1\n",
        ),
        (
            "x_slat.2.log",
            "0, 1000, 0, 4096, 0, 1\n7, 1000, 1, 4096, 57344, 1\n",
        ),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn a_sync_engine_leaves_the_slat_log_empty_and_windows_average() {
    let spec = spec("write_lat_log=w\nwrite_bw_log=w\nlog_avg_msec=10\nlog_prio=1\n");
    let ios: Vec<LoggedIo> = (0..25).map(|ms| io(0, 1_000 * (ms + 1), ms)).collect();
    let got = logged(&spec, &ios, 29);
    let text = |name: &str| {
        got.iter()
            .find(|(n, _)| n == name)
            .map(|(_, text)| text.clone())
            .expect(name)
    };
    assert_eq!(text("w_slat.2.log"), "");
    // clat 1..=11 µs close the first window at 10 ms; 12..=21 the next at 20; the rest,
    // 22..=25, at the end (29 ms).
    assert_eq!(
        text("w_clat.2.log"),
        "10, 6000, 0, 0, 0x0000\n20, 16500, 0, 0, 0x0000\n29, 23500, 0, 0, 0x0000\n"
    );
    // 10 I/Os of 4 KiB in each whole 10 ms window: 4000 KiB/s; 20..29 is not whole.
    assert_eq!(
        text("w_bw.2.log"),
        "10, 4000, 0, 0, 0x0000\n20, 4000, 0, 0, 0x0000\n"
    );
}

#[test]
fn the_histogram_log_has_a_line_per_window_and_the_same_ios_give_the_same_bytes() {
    let spec = spec("write_hist_log=h\nlog_hist_msec=5\nlog_hist_coarseness=1\n");
    let ios: Vec<LoggedIo> = (0..20).map(|ms| io(ms as usize % 2, 50 + ms, ms)).collect();
    let first = logged(&spec, &ios, 20);
    assert_eq!(first, logged(&spec, &ios, 20));
    let (name, text) = &first[0];
    assert_eq!(name, "h_clat_hist.2.log");
    let lines: Vec<&str> = text.lines().collect();
    let heads: Vec<String> = lines
        .iter()
        .map(|line| line.split(", ").take(3).collect::<Vec<_>>().join(", "))
        .collect();
    // Reads at 0, 2, 4, …: the window starts at 2 (not 0) and ends at 8; the next starts
    // 5 ms after the last, at 7, and ends at 12, the next at 18. Writes at 1, 3, …: at 7,
    // 11 and 17.
    let expected = ["7, 1", "8, 0", "11, 1", "12, 0", "17, 1", "18, 0"];
    assert_eq!(heads, expected.map(|head| format!("{head}, 4096")));
    for line in &lines {
        assert_eq!(
            line.split(", ").count(),
            3 + ioslice_fio::latency_bins::BINS / 2
        );
    }
}
