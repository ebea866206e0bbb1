//! One job process's logs ([`JobLogs`]): what each completed I/O adds to each of them, and
//! closing them when the process ends.
//!
//! Without `log_avg_msec`, every I/O is an entry of each log: its total latency (`lat`),
//! completion latency (`clat`), submission latency (`slat`, for asynchronous engines only:
//! fio leaves a synchronous engine's file empty), bandwidth (its bytes over its completion
//! latency: bytes × 10^6 / ns, as fio computes it) and 1 in the IOPS log, each with the
//! I/O's direction, size, offset and priority. With it, they are averaged
//! ([`super::average`]). The histogram log has its own windows ([`super::histogram`]).

use ioslice_core::{IoPriority, Nanos};

use super::average::{MeanWindows, Rate, RateWindows};
use super::file::{LogError, LogFile, LogFiles};
use super::histogram::HistogramWindows;
use super::line::{write_entry, write_histogram, Columns, Entry};
use super::names::{log_file_name, LogKind};
use super::options::LogOptions;
use crate::JobSpec;

/// Nanoseconds in a millisecond.
const MILLISECOND: Nanos = 1_000_000;

/// One completed I/O, as the logs see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedIo {
    /// 0 read, 1 write, 2 trim.
    pub direction: usize,
    /// Its size.
    pub bytes: u64,
    /// Its offset in its file.
    pub offset: u64,
    /// Its submission latency (ns).
    pub slat: Nanos,
    /// Its completion latency (ns).
    pub clat: Nanos,
    /// When it completed, since the job's start (its ramp's end).
    pub since_start: Nanos,
}

/// How a value log turns I/Os into entries.
enum Averaging {
    /// An entry per I/O.
    None,
    /// fio's windows of latency values.
    Mean(MeanWindows),
    /// fio's periodic rate samples.
    Rate(RateWindows),
}

/// One value log: its file and its averaging.
struct ValueLog {
    file: LogFile,
    averaging: Averaging,
}

impl ValueLog {
    /// Log `value` for `io`, whose priority is `priority`: as its own entry, or into the
    /// averaging windows.
    fn add(&mut self, io: &LoggedIo, value: u64, priority: u16, columns: Columns) {
        let entry = Entry {
            time_ms: io.since_start / MILLISECOND,
            value,
            direction: io.direction,
            block_size: io.bytes,
            offset: io.offset,
            priority,
        };
        let entries = match &mut self.averaging {
            Averaging::None => vec![entry],
            Averaging::Mean(windows) => windows
                .add(io.direction, value, entry.time_ms)
                .into_iter()
                .collect(),
            Averaging::Rate(windows) => windows.add(io.direction, io.bytes, io.since_start),
        };
        self.write(&entries, columns);
    }

    fn write(&mut self, entries: &[Entry], columns: Columns) {
        for entry in entries {
            self.file.write(|out| write_entry(out, entry, columns));
        }
    }

    /// Log what the windows hold at the end, `since_start`, and flush.
    fn finish(mut self, since_start: Nanos, columns: Columns) -> Result<(), LogError> {
        let entries = match &mut self.averaging {
            Averaging::None => Vec::new(),
            Averaging::Mean(windows) => windows.finish(since_start / MILLISECOND),
            Averaging::Rate(windows) => windows.finish(since_start),
        };
        self.write(&entries, columns);
        self.file.finish()
    }
}

/// The histogram log: its file and windows.
struct HistogramLog {
    file: LogFile,
    windows: HistogramWindows,
    coarseness: u32,
}

impl HistogramLog {
    /// Count `io`'s completion latency, and log the line it ends a window with.
    fn add(&mut self, io: &LoggedIo) {
        let (file, coarseness) = (&mut self.file, self.coarseness);
        let at = (io.direction, io.bytes);
        self.windows
            .add(at, io.clat, io.since_start / MILLISECOND, |line| {
                file.write(|out| write_histogram(out, line.head, line.bins, coarseness));
            });
    }
}

/// The logs of one job process.
pub struct JobLogs {
    columns: Columns,
    /// The job's `ioprio` value (class << 13 | level; 0 when it sets none).
    priority: u16,
    bw: Option<ValueLog>,
    iops: Option<ValueLog>,
    slat: Option<ValueLog>,
    clat: Option<ValueLog>,
    lat: Option<ValueLog>,
    hist: Option<HistogramLog>,
    /// Whether the engine has a submission latency to log (fio logs none for sync engines).
    logs_slat: bool,
}

impl std::fmt::Debug for JobLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobLogs")
            .field("columns", &self.columns)
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

/// The `ioprio` value of a job's I/O: 0 when the job sets no priority, as in fio.
fn ioprio(priority: Option<IoPriority>) -> u16 {
    priority.map_or(0, |p| (p.class.number() as u16) << 13 | u16::from(p.level))
}

impl JobLogs {
    /// The logs `spec` asks for, for its job process `number` (1-based in the run), opened
    /// in `files`; `None` when it asks for none.
    ///
    /// # Errors
    /// A file that cannot be created.
    pub fn open(
        files: &mut LogFiles,
        spec: &JobSpec,
        number: u32,
    ) -> Result<Option<JobLogs>, LogError> {
        let options = &spec.logs;
        if !options.any() {
            return Ok(None);
        }
        let mut open = |prefix: &Option<String>, kind: LogKind| -> Result<_, LogError> {
            let Some(prefix) = prefix else {
                return Ok(None);
            };
            let name = log_file_name(prefix, &spec.name, kind, number, options.per_job);
            let file = files.open(&name, !options.per_job)?;
            Ok(Some(ValueLog {
                file,
                averaging: averaging(options, kind),
            }))
        };
        let bw = open(&options.bw, LogKind::Bw)?;
        let iops = open(&options.iops, LogKind::Iops)?;
        let slat = open(&options.lat, LogKind::Slat)?;
        let clat = open(&options.lat, LogKind::Clat)?;
        let lat = open(&options.lat, LogKind::Lat)?;
        let hist = open(&options.hist, LogKind::ClatHist)?.map(|log| HistogramLog {
            file: log.file,
            windows: HistogramWindows::new(options.hist_msec),
            coarseness: options.hist_coarseness,
        });
        Ok(Some(JobLogs {
            columns: Columns {
                offset: options.offset,
                prio: options.prio,
            },
            priority: ioprio(spec.priority),
            bw,
            iops,
            slat,
            clat,
            lat,
            hist,
            logs_slat: !spec.ioengine.is_synchronous(),
        }))
    }

    /// Log a completed I/O.
    pub fn record(&mut self, io: &LoggedIo) {
        let (columns, priority) = (self.columns, self.priority);
        // fio's per-I/O bandwidth: bytes over the completion latency.
        let rate = io
            .bytes
            .saturating_mul(1_000_000)
            .checked_div(io.clat)
            .unwrap_or(0);
        let slat = self.slat.as_mut().filter(|_| self.logs_slat);
        let logs = [
            (self.lat.as_mut(), io.slat + io.clat),
            (slat, io.slat),
            (self.clat.as_mut(), io.clat),
            (self.bw.as_mut(), rate),
            (self.iops.as_mut(), 1),
        ];
        for (log, value) in logs {
            if let Some(log) = log {
                log.add(io, value, priority, columns);
            }
        }
        if let Some(hist) = &mut self.hist {
            hist.add(io);
        }
    }

    /// Close the logs of a process that ended `since_start` after its start: log what the
    /// averaging windows hold and flush every file.
    ///
    /// # Errors
    /// The first file that could not be written.
    pub fn finish(self, since_start: Nanos) -> Result<(), LogError> {
        let columns = self.columns;
        let mut result = Ok(());
        for log in [self.bw, self.iops, self.slat, self.clat, self.lat]
            .into_iter()
            .flatten()
        {
            let finished = log.finish(since_start, columns);
            result = result.and(finished);
        }
        match self.hist {
            Some(hist) => result.and(hist.file.finish()),
            None => result,
        }
    }
}

/// How a log of `kind` averages under `options`.
fn averaging(options: &LogOptions, kind: LogKind) -> Averaging {
    let avg = options.avg_msec;
    match kind {
        _ if avg == 0 => Averaging::None,
        LogKind::Bw => Averaging::Rate(RateWindows::new(Rate::Bandwidth, avg)),
        LogKind::Iops => Averaging::Rate(RateWindows::new(Rate::Iops, avg)),
        _ => Averaging::Mean(MeanWindows::new(avg, options.max_value)),
    }
}
