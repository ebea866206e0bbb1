//! Reading fio's own log files (`write_bw_log`, `write_lat_log`, `write_iops_log`) as runs.
//!
//! fio names its logs `PREFIX_KIND.N.log`, `KIND` one of `bw`, `iops`, `lat`, `clat` and
//! `slat`, `N` the job's number from 1. Each line is `time (ms), value, direction, block
//! size, offset[, priority[, issue time]]` (fio's HOWTO, "Log File Formats"): the value is
//! KiB/s in a bandwidth log, requests per second in an IOPS log, and nanoseconds in a
//! latency log (fio 3.x); the direction is 0 read, 1 write, 2 trim. With `log_avg_msec`
//! each line is a window's average (block size 0); without it, a latency log has a line
//! per request.
//!
//! [`runs`] makes one [`RunRecord`] per prefix, a job per `N`:
//! - a bandwidth log gives the run's [`BandwidthSeries`]: the window is the median gap
//!   between a job's lines of one direction (ms), and a line's bytes (its KiB/s over the
//!   time since the direction's previous line, or since the start, which is what fio
//!   averaged over) are spread over the windows that span overlaps, each its share; a
//!   line of one request (a log without `log_avg_msec`, block size > 0) puts the request's
//!   bytes in the window of its time, and the window is then at least a 1000th of the run;
//! - an IOPS log gives the run's [`RequestSeries`] the same way, in the same windows (the
//!   median gap is taken over the bandwidth and IOPS logs together): a line's requests are
//!   its requests per second over the time since the direction's previous line, a line of
//!   one request (block size > 0) is one request;
//! - a completion latency log (`clat`, else `lat`) gives each job's latency distribution,
//!   one sample per line: the requests' latencies without `log_avg_msec`, the windows'
//!   mean latencies with it (the page says which);
//! - a submission latency log alone draws nothing, and saying so is an error naming the
//!   file, since the other logs hold what the page draws.
//!
//! Errors are one line naming the file, the line and what was expected.

use std::collections::BTreeMap;

use crate::bandwidth::{BandwidthSeries, ProcessSeries};
use crate::model::{DirectionRecord, JobRecord, LatencyRecord, Percentile, RunRecord, PERCENTILES};
use crate::requests::{ProcessRequests, RequestSeries};
use crate::settings::{DeviceSettings, SchedulerSettings, Settings};

/// The kind of a fio log, from its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogKind {
    /// `_bw`: KiB/s.
    Bandwidth,
    /// `_iops`: requests per second.
    Iops,
    /// `_lat`: total latency, ns.
    Latency,
    /// `_clat`: completion latency, ns.
    CompletionLatency,
    /// `_slat`: submission latency, ns.
    SubmissionLatency,
}

/// One line of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Milliseconds since the job started.
    pub time_ms: u64,
    /// The logged value.
    pub value: u64,
    /// 0 read, 1 write, 2 trim.
    pub direction: u8,
    /// The request's size in bytes; 0 for a window's average.
    pub block_size: u64,
}

/// A parsed log file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FioLog {
    /// The prefix (`write_bw_log=PREFIX`, fio's default the job's name).
    pub prefix: String,
    /// Its kind.
    pub kind: LogKind,
    /// The job's number, from 1.
    pub job: u32,
    /// Its lines in order.
    pub samples: Vec<Sample>,
}

const EXPECTED_NAME: &str = "expected a fio log named PREFIX_bw.N.log, _iops, _lat, _clat or _slat";
const EXPECTED_LINE: &str =
    "expected `time, value, direction, block size, offset` (fio's log format)";

/// The prefix (with its directory) of a file named as a fio log, `…/PREFIX_KIND.N.log`:
/// the logs of one prefix make one run, whose [`Settings::job_file`] it is.
pub fn prefix_of(name: &str) -> Option<String> {
    name_parts(name).map(|(prefix, _, _)| prefix)
}

/// `(prefix, kind, job)` of a file named `…/PREFIX_KIND.N.log`.
fn name_parts(name: &str) -> Option<(String, LogKind, u32)> {
    let base = name.rsplit('/').next()?;
    let stem = base.strip_suffix(".log")?;
    let (rest, job) = stem.rsplit_once('.')?;
    let job: u32 = job.parse().ok()?;
    let (prefix, kind) = rest.rsplit_once('_')?;
    let kind = match kind {
        "bw" => LogKind::Bandwidth,
        "iops" => LogKind::Iops,
        "lat" => LogKind::Latency,
        "clat" => LogKind::CompletionLatency,
        "slat" => LogKind::SubmissionLatency,
        _ => return None,
    };
    let directory = &name[..name.len() - base.len()];
    Some((format!("{directory}{prefix}"), kind, job))
}

/// Parse the log in `text`, read from the file `name`.
pub fn parse(text: &str, name: &str) -> Result<FioLog, String> {
    let (prefix, kind, job) = name_parts(name).ok_or_else(|| format!("{name}: {EXPECTED_NAME}"))?;
    let samples = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            sample(line).map_err(|why| format!("{name}:{}: {why}; {EXPECTED_LINE}", index + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FioLog {
        prefix,
        kind,
        job,
        samples,
    })
}

/// One line.
fn sample(line: &str) -> Result<Sample, String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() < 5 {
        return Err(format!("{} fields in `{line}`", fields.len()));
    }
    let number = |index: usize, what: &str| {
        fields[index]
            .parse::<u64>()
            .map_err(|_| format!("{what} `{}` is not a whole number", fields[index]))
    };
    let direction = number(2, "direction")?;
    if direction > 2 {
        return Err(format!("direction `{direction}` is not 0, 1 or 2"));
    }
    Ok(Sample {
        time_ms: number(0, "time")?,
        value: number(1, "value")?,
        direction: direction as u8,
        block_size: number(3, "block size")?,
    })
}

/// fio's name of a direction.
fn direction_name(direction: u8) -> &'static str {
    match direction {
        0 => "read",
        1 => "write",
        _ => "trim",
    }
}

/// One run per prefix of `logs` (see the module documentation), in order of first
/// appearance. `logs` pairs each file's name with its text.
pub fn runs(logs: &[(String, String)]) -> Result<Vec<RunRecord>, String> {
    let mut by_prefix: Vec<(String, Vec<FioLog>)> = Vec::new();
    for (name, text) in logs {
        let log = parse(text, name)?;
        match by_prefix.iter_mut().find(|(p, _)| *p == log.prefix) {
            Some((_, found)) => found.push(log),
            None => by_prefix.push((log.prefix.clone(), vec![log])),
        }
    }
    by_prefix
        .into_iter()
        .map(|(prefix, logs)| run(&prefix, &logs))
        .collect()
}

/// The run of one prefix's logs.
fn run(prefix: &str, logs: &[FioLog]) -> Result<RunRecord, String> {
    let of = |kind: LogKind| logs.iter().filter(move |log| log.kind == kind);
    let latency_kind = [LogKind::CompletionLatency, LogKind::Latency]
        .into_iter()
        .find(|&kind| of(kind).next().is_some());
    let bandwidth_logs: Vec<&FioLog> = of(LogKind::Bandwidth).collect();
    let iops_logs: Vec<&FioLog> = of(LogKind::Iops).collect();
    if bandwidth_logs.is_empty() && iops_logs.is_empty() && latency_kind.is_none() {
        return Err(format!(
            "{prefix}: only submission latency logs, which the page does not draw; expected its _bw, _iops, _clat or _lat logs"
        ));
    }
    let window = window_ms(&[bandwidth_logs.as_slice(), iops_logs.as_slice()].concat());
    let bandwidth =
        counts(&bandwidth_logs, window, 1024).map(|(window_ns, series)| BandwidthSeries {
            window_ns,
            series: series
                .into_iter()
                .map(|((job, direction), bytes)| ProcessSeries {
                    process: job,
                    name: job_name(job),
                    direction: direction_name(direction).to_string(),
                    bytes,
                })
                .collect(),
            groups: Vec::new(),
        });
    let requests = counts(&iops_logs, window, 1).map(|(window_ns, series)| RequestSeries {
        window_ns,
        series: series
            .into_iter()
            .map(|((job, direction), requests)| ProcessRequests {
                process: job,
                name: job_name(job),
                direction: direction_name(direction).to_string(),
                requests,
            })
            .collect(),
    });
    let latency_logs: Vec<&FioLog> = latency_kind
        .map(|kind| of(kind).collect())
        .unwrap_or_default();
    let averaged = latency_logs
        .iter()
        .flat_map(|log| &log.samples)
        .any(|sample| sample.block_size == 0);
    let numbers: std::collections::BTreeSet<u32> = logs.iter().map(|log| log.job).collect();
    let jobs: Vec<JobRecord> = numbers
        .iter()
        .map(|&number| job(number, &latency_logs, bandwidth.as_ref(), requests.as_ref()))
        .collect();
    let base = prefix.rsplit('/').next().unwrap_or(prefix);
    let what = match (latency_kind, averaged) {
        (None, _) => "no latency log",
        (Some(_), true) => "latencies are the log windows' means",
        (Some(_), false) => "a latency per request",
    };
    Ok(RunRecord {
        title: format!("{base} (fio logs: {what})"),
        settings: Settings {
            job_file: prefix.to_string(),
            device: DeviceSettings {
                spec: "not recorded".to_string(),
                summary: "fio's logs name no device".to_string(),
                params: Vec::new(),
            },
            scheduler: SchedulerSettings {
                spec: "not recorded".to_string(),
                name: None,
                tunables: Vec::new(),
            },
            controller: None,
            host: Vec::new(),
            seed: None,
            version: Some(WRITTEN_BY.to_string()),
            options: Vec::new(),
            job_options: Vec::new(),
            groups: Vec::new(),
        },
        jobs,
        bandwidth,
        requests,
        timeline: None,
    })
}

/// What a run of logs says wrote it ([`Settings::version`]).
pub const WRITTEN_BY: &str = "fio log files";

/// The most windows a run of logs is put in.
const MAX_WINDOWS: u64 = 1000;

/// The median gap between consecutive lines of one direction of `logs`, ms, but at least
/// 1 ms and a [`MAX_WINDOWS`]th of the logs' span (a log of every request has lines
/// milliseconds apart or less).
fn window_ms(logs: &[&FioLog]) -> u64 {
    let mut gaps: Vec<u64> = Vec::new();
    for log in logs {
        for direction in 0..3u8 {
            let times: Vec<u64> = log
                .samples
                .iter()
                .filter(|s| s.direction == direction)
                .map(|s| s.time_ms)
                .collect();
            gaps.extend(times.windows(2).map(|pair| pair[1].saturating_sub(pair[0])));
        }
    }
    gaps.sort_unstable();
    let span = logs
        .iter()
        .flat_map(|log| &log.samples)
        .map(|s| s.time_ms)
        .max()
        .unwrap_or(0);
    let median = gaps.get(gaps.len() / 2).copied().unwrap_or(1);
    median.max(span.div_ceil(MAX_WINDOWS)).max(1)
}

/// One series per job and direction of `logs` (bandwidth or IOPS logs), in windows of
/// `window` ms, with the window in ns; `None` without any log. A line of a window's
/// average adds its value × `unit` per second over the time since the direction's line
/// before (KiB/s × 1024 gives bytes, IOPS × 1 requests); a line of one request adds its
/// block size (bytes) or 1 (requests), as `unit` says.
#[allow(clippy::type_complexity)]
fn counts(
    logs: &[&FioLog],
    window: u64,
    unit: u64,
) -> Option<(u64, BTreeMap<(u32, u8), Vec<u64>>)> {
    if logs.is_empty() {
        return None;
    }
    let mut series: BTreeMap<(u32, u8), Vec<u64>> = BTreeMap::new();
    for log in logs {
        let mut since: BTreeMap<u8, u64> = BTreeMap::new();
        for s in &log.samples {
            let from = since.insert(s.direction, s.time_ms).unwrap_or(0);
            let counts = series.entry((log.job, s.direction)).or_default();
            if s.block_size > 0 {
                let one = if unit == 1 { 1 } else { s.block_size };
                spread_request(counts, s.time_ms, one, window);
            } else {
                spread(
                    counts,
                    from,
                    s.time_ms,
                    u128::from(s.value) * u128::from(unit),
                    window,
                );
            }
        }
    }
    let windows = series.values().map(Vec::len).max().unwrap_or(0);
    for counts in series.values_mut() {
        counts.resize(windows, 0);
    }
    Some((window * 1_000_000, series))
}

/// Add one request's `count` (its bytes, or 1) to the window of `time_ms`.
fn spread_request(counts: &mut Vec<u64>, time_ms: u64, count: u64, window_ms: u64) {
    let index = (time_ms / window_ms) as usize;
    if counts.len() <= index {
        counts.resize(index + 1, 0);
    }
    counts[index] = counts[index].saturating_add(count);
}

/// Add `per_s` a second from `from_ms` to `to_ms` to the windows of `window_ms` they
/// overlap, each its share of the span (truncated).
fn spread(counts: &mut Vec<u64>, from_ms: u64, to_ms: u64, per_s: u128, window_ms: u64) {
    let to_ms = to_ms.max(from_ms);
    let last = (to_ms.saturating_sub(1) / window_ms) as usize;
    if counts.len() <= last {
        counts.resize(last + 1, 0);
    }
    let mut at = from_ms;
    while at < to_ms {
        let index = (at / window_ms) as usize;
        let end = ((at / window_ms + 1) * window_ms).min(to_ms);
        let share = per_s * u128::from(end - at) / 1000;
        counts[index] = counts[index].saturating_add(u64::try_from(share).unwrap_or(u64::MAX));
        at = end;
    }
}

/// `job N`.
fn job_name(number: u32) -> String {
    format!("job {number}")
}

/// Job `number`: per direction, its bytes from the bandwidth series, its latency from its
/// latency log, and its requests from that log when it has a line per request, else from
/// the requests series.
fn job(
    number: u32,
    latency_logs: &[&FioLog],
    bandwidth: Option<&BandwidthSeries>,
    requests: Option<&RequestSeries>,
) -> JobRecord {
    let samples: Vec<&Sample> = latency_logs
        .iter()
        .filter(|log| log.job == number)
        .flat_map(|log| &log.samples)
        .collect();
    let directions = (0..3u8)
        .filter_map(|direction| {
            let name = direction_name(direction);
            let values: Vec<u64> = samples
                .iter()
                .filter(|s| s.direction == direction)
                .map(|s| s.value)
                .collect();
            let series = bandwidth.and_then(|b| {
                b.series
                    .iter()
                    .find(|s| s.process == number && s.direction == name)
                    .map(|s| (s, b.window_ns))
            });
            let counted = requests.and_then(|r| {
                r.series
                    .iter()
                    .find(|s| s.process == number && s.direction == name)
                    .map(|s| (s, r.window_ns))
            });
            if values.is_empty() && series.is_none() && counted.is_none() {
                return None;
            }
            let io_bytes = series.map_or(0, |(s, _)| s.total());
            let runtime_ns = match (series, counted) {
                (Some((s, window_ns)), _) => s.bytes.len() as u64 * window_ns,
                (None, Some((s, window_ns))) => s.requests.len() as u64 * window_ns,
                (None, None) => samples.iter().map(|s| s.time_ms).max().unwrap_or(0) * 1_000_000,
            };
            let per_request = !values.is_empty() && samples.iter().all(|s| s.block_size > 0);
            Some(DirectionRecord {
                direction: name.to_string(),
                io_bytes,
                bw_bytes: crate::model::per_second(io_bytes, runtime_ns),
                total_ios: if per_request {
                    values.len() as u64
                } else {
                    counted.map_or(0, |(s, _)| s.total())
                },
                runtime_ns,
                clat: distribution(values),
            })
        })
        .collect();
    JobRecord {
        name: job_name(number),
        cgroup: String::new(),
        directions,
    }
}

/// The distribution of `values`: moments, fio's percentiles (nearest rank) and every
/// distinct value as a bin.
pub fn distribution(mut values: Vec<u64>) -> LatencyRecord {
    if values.is_empty() {
        return LatencyRecord::default();
    }
    values.sort_unstable();
    let n = values.len();
    let mut bins: Vec<(u64, u64)> = Vec::new();
    for &value in &values {
        match bins.last_mut() {
            Some((last, count)) if *last == value => *count += 1,
            _ => bins.push((value, 1)),
        }
    }
    let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
    let percentiles = PERCENTILES
        .iter()
        .map(|&percent| {
            let rank = ((percent / 100.0 * n as f64).ceil() as usize).clamp(1, n);
            Percentile {
                percent,
                value_ns: values[rank - 1],
            }
        })
        .collect();
    LatencyRecord {
        count: n as u64,
        min_ns: values[0],
        max_ns: values[n - 1],
        mean_ns: u64::try_from((sum + n as u128 / 2) / n as u128).unwrap_or(u64::MAX),
        percentiles,
        bins,
    }
}
