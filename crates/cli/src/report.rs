//! The HTML report from the command line: `--report FILE` on `run` and `compare` (HTML, or
//! the report's data as JSON when FILE ends in `.json`), and `ioslice report FILE... -o
//! OUT.html`, which puts runs and comparisons written apart (or fio's own JSON output) on
//! one page ([`ioslice_report`]).
//!
//! A reported run is traced into two recorders beside any `--trace` file: the bandwidth
//! and requests each process got at the device over time ([`BandwidthRecorder`]) and the decision
//! timeline ([`TimelineRecorder`]), whose marks are capped so that the page stays under
//! [`PAGE_BUDGET`] bytes however many runs it shows, with a finer record of each for
//! zooming in, compressed, under [`DETAIL_BUDGET`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use ioslice_core::{GroupTree, Nanos, TraceEvent, TraceSink};
use ioslice_fio::JobFile;
use ioslice_report::{fio_log, BandwidthRecorder, Report, RunRecord, Settings};
use ioslice_timeline::{cap_for, detail_cap_for, TimelineRecorder};

/// What the timelines of one page may take, in bytes of HTML.
pub const PAGE_BUDGET: usize = 3_000_000;

/// What the timelines' finer records (drawn when zoomed in) of one page may take, in bytes
/// of compressed data: enough for seed 000's 30 s runs to keep every mark at the base
/// resolution up to four runs to a page, and to keep group turns apart at a one-second
/// zoom with eight.
pub const DETAIL_BUDGET: usize = 6_000_000;

/// The most a file given to `ioslice report` may hold: 256 MiB, far beyond any report.
const REPORT_FILE_LIMIT: u64 = 256 << 20;

/// `--report FILE` on `run` and `compare`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Write a self-contained HTML report (bandwidth over time, latency percentiles and CDF,
    /// the decision timeline, the settings; `compare`: the grid as bars, with the original
    /// post's figures where the job file states them) to FILE; FILE ending in `.json` gets
    /// the report's data instead, for `ioslice report` to combine.
    #[arg(long = "report", value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// `ioslice report`.
#[derive(Debug, Args)]
pub struct ReportCommandArgs {
    /// Reports or run records written by `--report FILE.json`, fio-format JSON output
    /// (ioslice's or fio's own, `json` or `json+`), or fio's log files (`NAME_bw.1.log`,
    /// `_iops`, `_clat`, `_lat`: one run per NAME), in the order they are to appear. Two runs or more
    /// are also drawn together, each labelled by the settings that differ.
    #[arg(required = true, value_name = "RESULT.json|NAME_KIND.N.log")]
    pub inputs: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    pub output: PathBuf,
}

/// The recorders a reported run is traced into.
pub struct Recorders {
    names: Vec<String>,
    bandwidth: BandwidthRecorder,
    timeline: TimelineRecorder,
}

impl Recorders {
    /// Recorders for a run of `job_file`, one of `runs` on the page.
    pub fn new(job_file: &JobFile, runs: usize) -> Self {
        let names = process_names(job_file);
        Self {
            bandwidth: BandwidthRecorder::new(names.len()),
            timeline: TimelineRecorder::with_cap(names.clone(), cap_for(PAGE_BUDGET, runs))
                .with_detail(detail_cap_for(DETAIL_BUDGET, runs)),
            names,
        }
    }

    /// The run's record, from its report and settings; `numjobs` clones are told apart
    /// by their number, as the timeline names them.
    pub fn finish(self, report: &ioslice_fio::RunReport, settings: Settings) -> RunRecord {
        let timeline = self.timeline.finish();
        let (bandwidth, requests) = self.bandwidth.finish_with_requests();
        let mut record =
            RunRecord::new(report, settings, bandwidth, Some(timeline)).with_requests(requests);
        if record.jobs.len() == self.names.len() {
            for (job, name) in record.jobs.iter_mut().zip(&self.names) {
                job.name.clone_from(name);
            }
            record.bandwidth = record.bandwidth.map(|series| series.named(&self.names));
            record.requests = record.requests.map(|series| series.named(&self.names));
        }
        record
    }
}

impl TraceSink for Recorders {
    fn start(&mut self, groups: &GroupTree) {
        self.bandwidth.start(groups);
        self.timeline.start(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        self.bandwidth.record(time, event);
        self.timeline.record(time, event);
    }
}

/// A real run's recorders, which the sinks of every engine share.
#[derive(Clone)]
pub struct SharedRecorders(pub Arc<Mutex<Recorders>>);

impl SharedRecorders {
    /// `recorders`, to be shared.
    pub fn new(recorders: Recorders) -> Self {
        Self(Arc::new(Mutex::new(recorders)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Recorders> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The recorders back, once the run (and every sink) is over.
    pub fn into_inner(self) -> Result<Recorders, String> {
        Arc::try_unwrap(self.0)
            .map(|mutex| mutex.into_inner().unwrap_or_else(PoisonError::into_inner))
            .map_err(|_| "the report's recorders are still in use".to_string())
    }
}

impl TraceSink for SharedRecorders {
    fn start(&mut self, groups: &GroupTree) {
        self.lock().start(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        self.lock().record(time, event);
    }
}

/// Each process's name, in the order the simulator and the runner number them: every
/// job's `numjobs` clones in turn, `NAME.N` when a job has more than one.
pub fn process_names(job_file: &JobFile) -> Vec<String> {
    job_file
        .jobs
        .iter()
        .flat_map(|job| {
            let clones = job.numjobs.max(1);
            (0..clones).map(move |clone| match clones {
                1 => job.name.clone(),
                _ => format!("{}.{clone}", job.name),
            })
        })
        .collect()
}

/// Write `report` to `path`: its data as JSON for a `.json` file, else the HTML page.
pub fn write(path: &Path, report: &Report) -> Result<(), String> {
    let is_json = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("json"));
    let text = if is_json {
        serde_json::to_string(report).map_err(|e| format!("--report: {e}"))?
    } else {
        ioslice_report::render_html(report)
    };
    save(path, &text)
}

/// Write a report's text to `path`, an error naming it.
fn save(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text)
        .map_err(|e| format!("{}: cannot write the report: {e}", path.display()))
}

/// One input's place on the page: a file's report, or the run of a prefix's fio logs.
enum Slot {
    Read(Report),
    Logs(String),
}

/// `ioslice report FILE... -o OUT.html`; it prints nothing. fio's log files
/// (`PREFIX_bw.N.log`, …) of one prefix make one run, placed where its first file is.
pub fn report_command(args: &ReportCommandArgs) -> Result<String, String> {
    let mut slots = Vec::new();
    let mut logs: Vec<(String, String)> = Vec::new();
    for input in &args.inputs {
        let name = input.display().to_string();
        let text = read_report_file(input).map_err(|reason| format!("{name}: {reason}"))?;
        match fio_log::prefix_of(&name) {
            Some(prefix) => {
                if !slots
                    .iter()
                    .any(|slot| matches!(slot, Slot::Logs(p) if *p == prefix))
                {
                    slots.push(Slot::Logs(prefix));
                }
                logs.push((name, text));
            }
            None => slots.push(Slot::Read(Report::read(&text, &name)?)),
        }
    }
    let mut log_runs = fio_log::runs(&logs)?;
    let mut report = Report::default();
    for slot in slots {
        match slot {
            Slot::Read(read) => report.extend(read),
            Slot::Logs(prefix) => {
                if let Some(at) = log_runs
                    .iter()
                    .position(|run| run.settings.job_file == prefix)
                {
                    report.extend(Report::of_run(log_runs.remove(at)));
                }
            }
        }
    }
    save(&args.output, &ioslice_report::render_html(&report))?;
    Ok(String::new())
}

/// The text of a regular file of at most [`REPORT_FILE_LIMIT`] bytes, outside `/proc` and
/// `/sys`.
fn read_report_file(path: &Path) -> Result<String, String> {
    use ioslice_fio::jobfile::source::{read_bounded, Refusal};
    read_bounded(path, REPORT_FILE_LIMIT).map_err(|refusal| match refusal {
        Refusal::Kind(kind) => format!("a {kind}: expected a JSON or fio log file"),
        Refusal::PseudoFilesystem(area) => {
            format!("a file of the kernel's {area}: expected a JSON or fio log file")
        }
        Refusal::TooLarge(_) => format!(
            "expected a JSON or fio log file of at most {} MiB",
            REPORT_FILE_LIMIT >> 20
        ),
        Refusal::NotText => "not UTF-8 text: expected a JSON or fio log file".to_string(),
        Refusal::Unreadable(reason) => reason,
    })
}
