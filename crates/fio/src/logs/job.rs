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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::{parse_str, ParseOptions};

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
            assert_eq!(line.split(", ").count(), 3 + crate::latency_bins::BINS / 2);
        }
    }
}
