//! `--trace FILE` and `--trace-format text|json` for `run` and `compare`: the arguments, the
//! file each run's trace goes to, the sink that renders events into it
//! ([`ioslice_core::trace::render`]), and [`simulate`], which gives a run's events to that
//! file and to a report's recorders alike.
//!
//! The format is `--trace-format`'s, else JSON lines for a file named `*.json`, `*.jsonl` or
//! `*.ndjson`, else text. `compare` writes one file per run: the scheduler (with its
//! tunables) and, with `--clients`, the client count go before the extension:
//! `--trace out/t.txt` gives `out/t.cfq.c4.txt` and `out/t.bfq-low_latency-0.c4.txt`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use ioslice_core::trace::{render, Tee, TraceFormat, TraceNames};
use ioslice_core::{GroupTree, Nanos, TraceEvent, TraceSink};

/// The trace options `run` and `compare` share.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Write every policy decision and every request's insert, merge, dispatch and completion
    /// to FILE, one line each (`compare`: one file per run, the scheduler and client count
    /// inserted before the extension).
    #[arg(long = "trace", value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The trace's format: text (blktrace-like lines) or json (one JSON object per line).
    /// Default: json for a FILE ending in .json, .jsonl or .ndjson, else text.
    #[arg(long = "trace-format", value_name = "FORMAT")]
    pub trace_format: Option<String>,
}

impl TraceArgs {
    /// The file and format asked for, checked; `None` without `--trace`.
    pub fn resolve(&self) -> Result<Option<(PathBuf, TraceFormat)>, String> {
        let format = match &self.trace_format {
            Some(text) => Some(
                text.parse::<TraceFormat>()
                    .map_err(|e| format!("--trace-format: {e}"))?,
            ),
            None => None,
        };
        let Some(path) = &self.trace else {
            if format.is_some() {
                return Err("--trace-format needs --trace FILE".into());
            }
            return Ok(None);
        };
        if path.as_os_str().is_empty() {
            return Err("--trace: empty file name".into());
        }
        let format = format.unwrap_or_else(|| format_of(path));
        Ok(Some((path.clone(), format)))
    }
}

/// JSON lines for a `.json`, `.jsonl` or `.ndjson` file, else text.
fn format_of(path: &Path) -> TraceFormat {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("json" | "jsonl" | "ndjson") => TraceFormat::Json,
        _ => TraceFormat::Text,
    }
}

/// A `compare` run's file: `label` inserted before the extension of `path`.
pub fn run_path(path: &Path, label: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(extension) => format!("{stem}.{label}.{}", extension.to_string_lossy()),
        None => format!("{stem}.{label}"),
    };
    path.with_file_name(name)
}

/// A scheduler specification as it goes into a file name: `bfq:low_latency=0,slice_idle=0`
/// becomes `bfq-low_latency-0-slice_idle-0`.
pub fn file_label(spec: &str) -> String {
    spec.chars()
        .map(|c| match c {
            ':' | ',' | '=' => '-',
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' => c,
            _ => '_',
        })
        .collect()
}

/// An open trace file: what every sink writing to it shares.
#[derive(Debug)]
struct Shared {
    path: PathBuf,
    writer: BufWriter<File>,
    /// Bytes written so far, against [`TRACE_FILE_LIMIT`].
    written: u64,
    /// The first write error.
    error: Option<std::io::Error>,
}

/// The most one trace file may hold (16 GiB, some 200 million events): past it the run goes
/// on, the trace stops, and the run ends with an error that says so.
pub const TRACE_FILE_LIMIT: u64 = 16 << 30;

/// A trace file, created and ready for a run's events.
#[derive(Debug, Clone)]
pub struct TraceFile {
    shared: Arc<Mutex<Shared>>,
    format: TraceFormat,
}

impl TraceFile {
    /// Create (or truncate) the file.
    pub fn create(path: &Path, format: TraceFormat) -> Result<Self, String> {
        let file = File::create(path)
            .map_err(|e| format!("--trace {}: cannot create it: {e}", path.display()))?;
        Ok(Self {
            shared: Arc::new(Mutex::new(Shared {
                path: path.to_path_buf(),
                writer: BufWriter::with_capacity(1 << 16, file),
                written: 0,
                error: None,
            })),
            format,
        })
    }

    /// A sink into this file; its lines carry `label` when given (several engines writing
    /// one file).
    pub fn sink(&self, label: Option<&str>) -> TraceFileSink {
        TraceFileSink {
            shared: Arc::clone(&self.shared),
            format: self.format,
            label: label.map(str::to_string),
            names: TraceNames::default(),
            line: String::new(),
        }
    }

    /// Write out what is buffered; the first error of the run, naming the file.
    pub fn finish(&self) -> Result<(), String> {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let flushed = shared.writer.flush();
        let error = shared.error.take().map_or(flushed, Err);
        error.map_err(|e| format!("--trace {}: write failed: {e}", shared.path.display()))
    }
}

/// Renders each event as a line into a [`TraceFile`].
#[derive(Debug)]
pub struct TraceFileSink {
    shared: Arc<Mutex<Shared>>,
    format: TraceFormat,
    label: Option<String>,
    names: TraceNames,
    line: String,
}

impl TraceSink for TraceFileSink {
    fn start(&mut self, groups: &GroupTree) {
        self.names = TraceNames::of(groups);
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        self.line.clear();
        render::render(
            self.format,
            time,
            event,
            &self.names,
            self.label.as_deref(),
            &mut self.line,
        );
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.error.is_none() {
            shared.written += self.line.len() as u64;
            let result = if shared.written > TRACE_FILE_LIMIT {
                Err(std::io::Error::other(format!(
                    "the trace reached {} GiB, the most a trace file may hold: trace a shorter run",
                    TRACE_FILE_LIMIT >> 30
                )))
            } else {
                shared.writer.write_all(self.line.as_bytes())
            };
            if let Err(error) = result {
                shared.error = Some(error);
            }
        }
    }
}

/// Simulate `job_file` with its events going to the trace `file` and to `recorders`, when it
/// has them; with neither, the run is not traced at all (and runs at full speed). The file
/// is not flushed here: [`TraceFile::finish`] says whether it was written whole.
pub fn simulate(
    job_file: &ioslice_fio::JobFile,
    config: &ioslice_sim::simulation::SimConfig,
    file: Option<&TraceFile>,
    recorders: Option<&mut dyn TraceSink>,
) -> Result<ioslice_sim::simulation::SimOutcome, ioslice_sim::simulation::SimError> {
    if file.is_none() && recorders.is_none() {
        return ioslice_sim::simulation::run(job_file, config);
    }
    let mut tee = Tee {
        first: file.map(|file| file.sink(None)),
        second: recorders,
    };
    ioslice_sim::simulation::run_traced(job_file, config, &mut tee)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(trace: Option<&str>, format: Option<&str>) -> TraceArgs {
        TraceArgs {
            trace: trace.map(PathBuf::from),
            trace_format: format.map(str::to_string),
        }
    }

    #[test]
    fn the_format_follows_the_flag_else_the_extension() {
        let resolved = |trace, format| args(trace, format).resolve().map(|r| r.map(|r| r.1));
        assert_eq!(resolved(None, None), Ok(None));
        assert_eq!(resolved(Some("t.txt"), None), Ok(Some(TraceFormat::Text)));
        assert_eq!(resolved(Some("t"), None), Ok(Some(TraceFormat::Text)));
        assert_eq!(resolved(Some("t.JSONL"), None), Ok(Some(TraceFormat::Json)));
        assert_eq!(
            resolved(Some("t.json"), Some("text")),
            Ok(Some(TraceFormat::Text))
        );
        let bad = resolved(Some("t"), Some("xml")).unwrap_err();
        assert!(
            bad.contains("--trace-format") && bad.contains("'xml'"),
            "{bad}"
        );
        let alone = resolved(None, Some("json")).unwrap_err();
        assert!(alone.contains("--trace FILE"), "{alone}");
    }

    #[test]
    fn compare_runs_get_their_own_files() {
        assert_eq!(
            run_path(Path::new("out/t.txt"), "cfq.c4"),
            PathBuf::from("out/t.cfq.c4.txt")
        );
        assert_eq!(run_path(Path::new("t"), "noop"), PathBuf::from("t.noop"));
        assert_eq!(
            file_label("bfq:low_latency=0,slice_idle=0"),
            "bfq-low_latency-0-slice_idle-0"
        );
        assert_eq!(file_label("a/b c"), "a_b_c");
    }
}
