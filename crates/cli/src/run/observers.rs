//! What watches a run of either driver and what keeps it: the status line on stderr, the
//! `--trace` file and the recorders of `--report`, started before the run; at its end the
//! status line stopped, the trace file closed, the report dated and the HTML report written.
//!
//! Both drivers trace through sinks made here, one per thread of the run: the simulator
//! asks for one, the real-I/O driver for one per engine. The recorders behind them are
//! shared, so that every engine of a real run records into the same page.

use std::path::PathBuf;

use ioslice_core::trace::Tee;
use ioslice_core::{Progress, TraceSink};
use ioslice_fio::{JobFile, RunReport};
use ioslice_report::{Report, Settings};

use super::RunArgs;
use crate::report::{self, Recorders, SharedRecorders};
use crate::status::StatusLine;
use crate::trace::TraceFile;

/// The status line, trace file and recorders of one run.
pub struct Observers {
    status: StatusLine,
    file: Option<TraceFile>,
    recorders: Option<SharedRecorders>,
    report: Option<PathBuf>,
}

/// What is left of a run's observers once it has ended: the report still to be written.
pub struct Ended {
    recorders: Option<SharedRecorders>,
    report: Option<PathBuf>,
}

impl Observers {
    /// Observers of a run of `job_file` that publishes its progress to `progress`;
    /// `simulated` says whose clock the status line reads.
    pub fn start(
        args: &RunArgs,
        job_file: &JobFile,
        progress: &Progress,
        simulated: bool,
    ) -> Result<Self, String> {
        let file = match args.trace.resolve()? {
            Some((path, format)) => Some(TraceFile::create(&path, format)?),
            None => None,
        };
        let report = args.report.report.clone();
        let recorders = report
            .as_ref()
            .map(|_| SharedRecorders::new(Recorders::new(job_file, 1)));
        Ok(Self {
            status: StatusLine::start_as(progress, simulated, args.eta.as_deref()),
            file,
            recorders,
            report,
        })
    }

    /// Whether anything follows the run's trace.
    pub fn traced(&self) -> bool {
        self.file.is_some() || self.recorders.is_some()
    }

    /// A sink for one thread's trace (`label`: the engine's file on a real run, none in
    /// simulation), into the trace file and the recorders.
    pub fn sink(&self, label: Option<&str>) -> Box<dyn TraceSink + Send> {
        Box::new(Tee {
            first: self.file.as_ref().map(|file| file.sink(label)),
            second: self.recorders.clone(),
        })
    }

    /// The run is over: the status line stops and the trace file is written out, whether
    /// the run succeeded or not.
    pub fn end(self) -> Result<Ended, String> {
        self.status.finish();
        if let Some(file) = &self.file {
            file.finish()?;
        }
        Ok(Ended {
            recorders: self.recorders,
            report: self.report,
        })
    }
}

impl Ended {
    /// Date the run's `report` and write the HTML report of it, with `settings`, if one was
    /// asked for.
    pub fn keep(self, report: &mut RunReport, settings: Settings) -> Result<(), String> {
        report.timestamp = run_date()?;
        if let (Some(path), Some(recorders)) = (&self.report, self.recorders) {
            let record = recorders.into_inner()?.finish(report, settings);
            report::write(path, &Report::of_run(record))?;
        }
        Ok(())
    }
}

/// The date a run's report carries, in seconds since 1970: now, or `SOURCE_DATE_EPOCH` when
/// set, as reproducible builds fix theirs. The date is not part of what a seed determines, so
/// two runs of a seed differ in it alone; a byte-for-byte comparison sets the variable.
fn run_date() -> Result<u64, String> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text.trim().parse().map_err(|_| {
            format!("SOURCE_DATE_EPOCH={text}: expected whole seconds since 1970-01-01")
        }),
        Err(_) => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs())),
    }
}
