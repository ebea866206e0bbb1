//! A run's record from a real simulation: the bandwidth series stays within its cap and
//! accounts for the jobs' bytes, the record survives JSON, fio-format JSON (ioslice's and
//! real fio 3.33's) reads back, and the page draws every chart, the same bytes each time.

mod common;

use std::path::Path;
use std::process::Command;

use common::{comparisons, simulate, FOUR_READERS, TWO_GROUPS};
use ioslice_report::bandwidth::MAX_POINTS;
use ioslice_report::{render_html, Report, RunRecord};

fn four_readers() -> (ioslice_fio::RunReport, RunRecord) {
    simulate(FOUR_READERS, "four.fio", "cfq", "sim:sata-7200")
}

#[test]
fn series_stay_within_the_cap_and_account_for_every_job_byte() {
    let (report, record) = four_readers();
    let series = record.bandwidth.as_ref().expect("recorded");
    assert!(series.windows() <= MAX_POINTS, "{}", series.windows());
    assert!(series.windows() > 10, "a 3 s run in 10 ms windows");
    assert_eq!(
        series.window_ns, 10_000_000,
        "3 s fits 1000 windows of 10 ms"
    );
    assert!(series
        .series
        .iter()
        .all(|s| s.bytes.len() == series.windows()));
    assert!(
        series.series.iter().all(|s| s.process != 0),
        "O_DIRECT readers: the flusher did nothing"
    );
    for (index, job) in report.jobs.iter().enumerate() {
        let in_series: u64 = series
            .series
            .iter()
            .filter(|s| s.process as usize == index + 1)
            .map(|s| s.total())
            .sum();
        let io_bytes: u64 = job.stats.directions.iter().map(|d| d.io_bytes).sum();
        // The device may complete what the job had in flight when its runtime ended (one
        // request of a psync job) after the job stopped counting; nothing else may differ.
        let in_flight = 64 * 1024;
        assert!(
            in_series.abs_diff(io_bytes) <= in_flight,
            "{}: series {in_series} bytes, job {io_bytes}",
            job.description.name
        );
        assert_eq!(
            series
                .series
                .iter()
                .find(|s| s.process as usize == index + 1)
                .map(|s| s.name.as_str()),
            Some(job.description.name.as_str())
        );
    }
}

#[test]
fn a_long_run_halves_its_windows_and_keeps_its_bytes() {
    let job = FOUR_READERS.replace("runtime=3", "runtime=25");
    let (report, record) = simulate(&job, "long.fio", "deadline", "sim:ssd");
    let series = record.bandwidth.expect("recorded");
    assert!(series.windows() <= MAX_POINTS);
    assert_eq!(
        series.window_ns, 40_000_000,
        "25 s: 10 → 20 → 40 ms windows"
    );
    let total: u64 = series.series.iter().map(|s| s.total()).sum();
    let io_bytes: u64 = report
        .jobs
        .iter()
        .flat_map(|j| j.stats.directions.iter().map(|d| d.io_bytes))
        .sum();
    assert!(
        total.abs_diff(io_bytes) <= 4 * 64 * 1024,
        "{total} vs {io_bytes}"
    );
}

#[test]
fn a_record_survives_json() {
    let (_, record) = simulate(TWO_GROUPS, "groups.fio", "bfq", "sim:sata-7200:ncq=1");
    let report = Report {
        runs: vec![record],
        comparisons: comparisons(),
    };
    let text = serde_json::to_string(&report).expect("serializes");
    let back: Report = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back, report);
}

#[test]
fn settings_list_every_parameter_and_tunable() {
    let (_, record) = simulate(
        TWO_GROUPS,
        "groups.fio",
        "bfq:low_latency=0",
        "sim:sata-7200:ncq=1",
    );
    let s = &record.settings;
    let presets = ioslice_sim::preset::presets();
    let sata = presets
        .iter()
        .find(|p| p.name == "sata-7200")
        .expect("preset");
    assert_eq!(s.device.params.len(), sata.params.len());
    let ncq = s
        .device
        .params
        .iter()
        .find(|p| p.name == "ncq")
        .expect("ncq");
    assert!(ncq.set && ncq.value == "1");
    let bfq = ioslice_core::registry::lookup("bfq").expect("bfq");
    assert_eq!(s.scheduler.tunables.len(), bfq.tunables.len());
    let low = s
        .scheduler
        .tunables
        .iter()
        .find(|t| t.name == "low_latency")
        .expect("tunable");
    assert_eq!(
        (low.value.as_str(), low.default.as_deref(), low.set),
        ("0", Some("1"), true)
    );
    assert_eq!(s.seed, Some(7));
    assert_eq!(s.controller.as_deref(), Some("elevator"));
    assert!(s
        .host
        .iter()
        .any(|h| h.name == "block_layer" && h.value == "blk-mq"));
}

#[test]
fn ioslice_json_output_reads_back() {
    let (report, record) = four_readers();
    let text = ioslice_fio::output::json(&report);
    let back = RunRecord::from_fio_json(&text, "four.json").expect("reads");
    assert_eq!(back.jobs.len(), record.jobs.len());
    for (read, made) in back.jobs.iter().zip(&record.jobs) {
        assert_eq!(read.name, made.name);
        assert_eq!(read.directions.len(), made.directions.len());
        let (r, m) = (&read.directions[0], &made.directions[0]);
        assert_eq!(
            (r.io_bytes, r.total_ios, r.bw_bytes),
            (m.io_bytes, m.total_ios, m.bw_bytes)
        );
        assert_eq!(r.clat.percentiles, m.clat.percentiles);
        assert!(r.clat.bins.is_empty(), "plain json has percentiles only");
    }
    assert!(back.bandwidth.is_none() && back.timeline.is_none());
    let html = render_html(&Report {
        runs: vec![back],
        comparisons: Vec::new(),
    });
    assert!(html.contains("Not in this run: bandwidth over time"));
    assert!(html.contains("class=\"chart chart-cdf\""));
}

#[test]
fn real_fio_json_plus_reads_back_with_its_bins() {
    let fio_found = Command::new("fio").arg("--version").output().is_ok();
    if !fio_found {
        eprintln!("skipped: fio is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("data");
    let output = Command::new("fio")
        .args([
            "--name=reader",
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
            "--ioengine=psync",
        ])
        .arg(format!("--filename={}", file.display()))
        .arg("--output-format=json+")
        .output()
        .expect("fio runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    check_fio_plus(&String::from_utf8_lossy(&output.stdout));
}

fn check_fio_plus(text: &str) {
    let record = RunRecord::from_fio_json(text, "fio.json").expect("reads");
    assert!(
        record.title.starts_with("fio.json (fio-3"),
        "{}",
        record.title
    );
    let read = &record.jobs[0].directions[0];
    assert_eq!(read.direction, "read");
    assert_eq!(read.io_bytes, 4 << 20);
    assert_eq!(read.total_ios, 1024);
    assert!(!read.clat.bins.is_empty(), "json+ has bins");
    let in_bins: u64 = read.clat.bins.iter().map(|&(_, n)| n).sum();
    assert_eq!(in_bins, 1024);
    assert_eq!(read.clat.cdf().last().map(|&(_, share)| share), Some(1.0));
    let html = render_html(&Report {
        runs: vec![record],
        comparisons: Vec::new(),
    });
    assert!(
        html.contains("from fio&#39;s latency bins") || html.contains("from fio's latency bins")
    );
}

#[test]
fn the_corpus_fio_3_33_json_reads_back() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/fio-json/fio-3.33-two-jobs.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {} is not there", path.display());
        return;
    };
    let record = RunRecord::from_fio_json(&text, "fio-3.33-two-jobs.json").expect("reads");
    assert_eq!(record.settings.version.as_deref(), Some("fio-3.33"));
    assert_eq!(record.jobs.len(), 2);
    let read = &record.jobs[0].directions[0];
    assert_eq!((read.io_bytes, read.total_ios), (16_777_216, 4096));
    assert_eq!(read.clat.percentiles.len(), 17);
    assert_eq!(read.clat.percentiles[16].value_ns, 160_768);
    assert!(!record.settings.options.is_empty());
}

#[test]
fn the_page_draws_every_chart_with_data() {
    let (_, four) = four_readers();
    let (_, groups) = simulate(TWO_GROUPS, "groups.fio", "cfq", "sim:sata-7200");
    let report = Report {
        runs: vec![four, groups],
        comparisons: comparisons(),
    };
    let html = render_html(&report);
    for kind in [
        "bandwidth",
        "cgroups",
        "percentiles",
        "cdf",
        "bars",
        "overlay",
        "overlay-iops",
    ] {
        assert!(
            html.contains(&format!("class=\"chart chart-{kind}\"")),
            "no {kind} chart"
        );
    }
    let charts: Vec<&str> = html.split("<svg class=\"chart chart-").skip(1).collect();
    // Two runs × (bandwidth, percentiles, cdf) + one cgroup stack + one plain comparison
    // chart + one chart per cell of the cgroup comparison + the two runs together
    // (percentiles, cdf, bandwidth, IOPS).
    assert_eq!(charts.len(), 2 * 3 + 1 + 1 + 1 + 4);
    for chart in &charts {
        let points: usize = chart
            .split("data-points=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|n| n.parse().ok())
            .expect("data-points");
        assert!(points > 0, "an empty chart: {}", &chart[..80]);
    }
    assert!(!html.contains("class=\"chart-error\""));
    assert!(
        html.contains("two groups &lt;weighted&gt;"),
        "titles are escaped"
    );
    assert!(
        !html.contains("<script src") && !html.contains("<link"),
        "nothing is fetched"
    );
    assert!(html.contains("id=\"tl-0"), "the timeline of the first run");
    assert!(html.contains("17134"), "the post's figure is in the table");
}

#[test]
fn the_same_report_gives_the_same_bytes() {
    let build = || {
        let (_, run) = simulate(TWO_GROUPS, "groups.fio", "bfq", "sim:sata-7200");
        render_html(&Report {
            runs: vec![run],
            comparisons: comparisons(),
        })
    };
    assert_eq!(build(), build());
}

#[test]
fn buffered_writes_reach_the_device_as_the_flusher() {
    let job = "\
[global]
ioengine=psync
direct=0
rw=write
bs=64k
size=64m
end_fsync=1

[writer]
";
    let (_, record) = simulate(job, "writer.fio", "deadline", "sim:sata-7200");
    let series = record.bandwidth.expect("recorded");
    let flusher: Vec<_> = series.series.iter().filter(|s| s.process == 0).collect();
    assert_eq!(
        flusher.len(),
        1,
        "{:?}",
        series.series.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    assert_eq!(
        (flusher[0].name.as_str(), flusher[0].direction.as_str()),
        ("flusher", "write")
    );
    assert!(flusher[0].total() > 0);
}

#[test]
fn a_real_device_is_its_path_and_records_read_back_from_files() {
    let mut run =
        ioslice_fio::run_spec::RunSpec::new(3, "bfq:slice_idle_us=2000".parse().expect("spec"));
    run.group_weights = vec![("fast".into(), 300)];
    let settings = ioslice_report::Settings::real("job.fio", "/dev/sdz", &run);
    assert_eq!(settings.groups.len(), 1);
    assert_eq!(
        (
            settings.groups[0].name.as_str(),
            settings.groups[0].value.as_str()
        ),
        ("/fast", "weight=300")
    );
    assert_eq!(settings.device.spec, "/dev/sdz");
    assert!(settings.device.params.is_empty() && settings.host.is_empty());
    let idle = settings
        .scheduler
        .tunables
        .iter()
        .find(|t| t.name == "slice_idle_us")
        .expect("bfq's tunable");
    assert!(idle.set && idle.value == "2000");

    let (_, record) = four_readers();
    let text = serde_json::to_string_pretty(&record).expect("serializes");
    let read = Report::read(&text, "run.json").expect("reads a run record");
    assert_eq!(read.runs, [record]);
    let mut all = read;
    all.extend(Report {
        runs: Vec::new(),
        comparisons: comparisons(),
    });
    assert_eq!((all.runs.len(), all.comparisons.len()), (1, 2));
}

#[test]
fn a_comparison_cell_measures_as_compare_does() {
    let (report, _) = simulate(TWO_GROUPS, "groups.fio", "cfq", "sim:sata-7200");
    let cell = ioslice_report::ComparisonCell::from_report("cfq", Some(1), &report);
    let names: Vec<&str> = cell.group_bw.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        names,
        ["light", "heavy"],
        "groups in order of first appearance"
    );
    let clients: u64 = cell.client_bw.iter().map(|c| c.bw_bytes).sum();
    let groups: u64 = cell.group_bw.iter().map(|g| g.bw_bytes).sum();
    assert_eq!(
        (clients, groups),
        (cell.aggregate_bw_bytes, cell.aggregate_bw_bytes)
    );
    for (client, job) in cell.client_bw.iter().zip(&report.jobs) {
        let bytes: u64 = job.stats.directions.iter().map(|d| d.io_bytes).sum();
        assert_eq!(client.bw_bytes, bytes * 1_000_000_000 / job.stats.runtime);
    }
    assert!(cell.max_clat_ns > 0);
    assert_eq!(cell.label(), "cfq ×1");
    let (plain, _) = simulate(FOUR_READERS, "four.fio", "noop", "sim:ssd");
    assert!(
        ioslice_report::ComparisonCell::from_report("noop", None, &plain)
            .group_bw
            .is_empty()
    );
}
