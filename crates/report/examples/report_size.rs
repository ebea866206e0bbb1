//! How long the report of a 30 s, 4-job simulated run takes to make and how large it is:
//! the simulation runs first (not timed) with the bandwidth and timeline recorders on its
//! trace; then the record is built and the page rendered, timed over several rounds.
//!
//!     cargo run --release -p ioslice-report --example report_size [-- OUT.html]
//!
//! `bench/report-size.sh` runs it.

use std::time::Instant;

use ioslice_core::trace::Tee;
use ioslice_fio::jobfile::{parse_str, ParseOptions};
use ioslice_report::{render_html, BandwidthRecorder, Report, RunRecord, Settings};
use ioslice_sim::simulation::{run_traced, SimConfig};
use ioslice_timeline::TimelineRecorder;

const JOB: &str = "\
[global]
ioengine=psync
direct=1
size=1g
runtime=30
time_based

[seq-a]
rw=read
bs=64k
[seq-b]
rw=read
bs=64k
[rand-c]
rw=randread
bs=16k
[rand-d]
rw=randread
bs=4k
";

fn main() -> Result<(), String> {
    let out = std::env::args().nth(1);
    let job_file =
        parse_str(JOB, "four-30s.fio", &ParseOptions::default()).map_err(|e| e.to_string())?;
    let config = SimConfig::new(
        1,
        "cfq".parse().map_err(|e| format!("{e}"))?,
        "sim:sata-7200".parse().map_err(|e| format!("{e}"))?,
    );
    let names: Vec<String> = job_file.jobs.iter().map(|j| j.name.clone()).collect();
    let mut bandwidth = BandwidthRecorder::new(names.len());
    let mut timeline = TimelineRecorder::new(names);
    let started = Instant::now();
    let outcome = run_traced(
        &job_file,
        &config,
        &mut Tee::both(&mut bandwidth, &mut timeline),
    )
    .map_err(|e| e.to_string())?;
    let simulated = started.elapsed();
    let series = bandwidth.finish();
    let timeline = timeline.finish();
    let rounds = 5;
    let mut best = f64::MAX;
    let mut html = String::new();
    for _ in 0..rounds {
        let started = Instant::now();
        let record = RunRecord::new(
            &outcome.report,
            Settings::simulated("four-30s.fio", &config),
            series.clone(),
            Some(timeline.clone()),
        );
        html = render_html(&Report {
            runs: vec![record],
            comparisons: Vec::new(),
        });
        best = best.min(started.elapsed().as_secs_f64());
    }
    let charts = html.matches("<svg class=\"chart chart-").count();
    println!(
        "simulation {:.2} s (not counted); report: best of {rounds} {:.1} ms, {} bytes ({:.1} KiB), {charts} charts, {} timeline marks, {} bandwidth windows of {} ms",
        simulated.as_secs_f64(),
        best * 1e3,
        html.len(),
        html.len() as f64 / 1024.0,
        timeline.marks.len(),
        series.windows(),
        series.window_ns / 1_000_000
    );
    if let Some(path) = out {
        std::fs::write(&path, &html).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}
