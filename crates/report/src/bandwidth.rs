//! Bandwidth over time: the [`BandwidthRecorder`] that counts, from a run's trace, the bytes
//! each process completes at the device in each time window, and the [`BandwidthSeries`]
//! it leaves. It counts the requests of each window too ([`RequestSeries`], for the IOPS
//! overlay), in the same windows.
//!
//! # Windows: successive halving
//!
//! Every series of a run shares one window length, so the series line up. The window
//! starts at [`FIRST_WINDOW_NS`] (10 ms). When a completion falls in window number
//! [`MAX_POINTS`] (1000) or later, every series merges adjacent pairs of windows (windows
//! `2k` and `2k + 1` become window `k`) and the window doubles, as often as needed. A series
//! therefore never holds more than [`MAX_POINTS`] windows, the memory is at most that many
//! counters per process and direction whatever the run's length, and no byte is lost or
//! moved to another time than its window's. A 30 s run ends with 40 ms windows (750
//! points), a 100 s run with 160 ms windows (625 points). The page states the window used.

use ioslice_core::trace::TraceEvent;
use ioslice_core::{Direction, GroupTree, Nanos, TraceSink};
use serde::{Deserialize, Serialize};

use crate::requests::{ProcessRequests, RequestSeries};

/// The first window length, ns (10 ms).
pub const FIRST_WINDOW_NS: Nanos = 10_000_000;
/// The most windows a series holds.
pub const MAX_POINTS: usize = 1000;

/// The bytes one process completed in one direction, window by window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSeries {
    /// The process's index in the run: 0 is the simulator's flusher of buffered writes,
    /// `i` is the job process `i - 1`.
    pub process: u32,
    /// Its name: the job's, or `flusher`.
    pub name: String,
    /// `read` or `write`.
    pub direction: String,
    /// Bytes completed in each window, from the run's start.
    pub bytes: Vec<u64>,
}

impl ProcessSeries {
    /// Bytes in the whole series.
    pub fn total(&self) -> u64 {
        self.bytes.iter().sum()
    }
}

/// The bytes the job processes completed in one cgroup, both directions, window by window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSeries {
    /// The cgroup's path (`/` for the root).
    pub name: String,
    /// Bytes completed in each window, from the run's start.
    pub bytes: Vec<u64>,
}

/// A run's bandwidth over time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BandwidthSeries {
    /// The window length, ns.
    pub window_ns: Nanos,
    /// Every process and direction that completed any bytes, by process then direction;
    /// every series has the same number of windows.
    pub series: Vec<ProcessSeries>,
    /// The job processes' bytes by the cgroup each request was charged to, in the same
    /// windows: a job moved to another cgroup during the run counts in each for its time
    /// there. Empty where the run's trace was not seen (fio's logs, older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSeries>,
}

impl BandwidthSeries {
    /// The same series with process `i` (for `i ≥ 1`) named `names[i - 1]`.
    pub fn named(mut self, names: &[String]) -> Self {
        for series in &mut self.series {
            if let Some(name) = crate::requests::job_name(series.process, names) {
                series.name.clone_from(name);
            }
        }
        self
    }

    /// The same series with `k` adjacent windows merged into one, for the smallest `k` that
    /// leaves at most `max_points` points over all series together (a chart of many jobs
    /// stays as light as one of a few); no byte is lost.
    pub fn thinned(&self, max_points: usize) -> BandwidthSeries {
        let points = self.series.len() * self.windows();
        let k = points.div_ceil(max_points.max(1)).max(1);
        if k == 1 {
            return self.clone();
        }
        let series = self
            .series
            .iter()
            .map(|one| ProcessSeries {
                bytes: one
                    .bytes
                    .chunks(k)
                    .map(|chunk| chunk.iter().sum())
                    .collect(),
                ..one.clone()
            })
            .collect();
        let groups = self
            .groups
            .iter()
            .map(|one| GroupSeries {
                name: one.name.clone(),
                bytes: one
                    .bytes
                    .chunks(k)
                    .map(|chunk| chunk.iter().sum())
                    .collect(),
            })
            .collect();
        BandwidthSeries {
            window_ns: self.window_ns.saturating_mul(k as u64),
            series,
            groups,
        }
    }

    /// Windows in each series.
    pub fn windows(&self) -> usize {
        self.series.first().map_or(0, |s| s.bytes.len())
    }
}

/// Counts completed bytes per process, direction and window from a run's trace
/// ([`TraceEvent::Complete`]; failed requests move no data and are left out). See the
/// module documentation for the windows.
#[derive(Debug, Clone)]
pub struct BandwidthRecorder {
    window_ns: Nanos,
    /// `[read, write]` bytes per window, by process index.
    bytes: Vec<[Vec<u64>; 2]>,
    /// `[read, write]` requests per window, by process index.
    requests: Vec<[Vec<u64>; 2]>,
    /// Windows covered so far (one past the last window with a completion).
    windows: usize,
    /// The job processes' bytes per window, by the index of the group charged.
    group_bytes: Vec<Vec<u64>>,
    /// The groups' paths by index, from the trace's start (and its changes).
    group_names: Vec<String>,
}

impl BandwidthRecorder {
    /// A recorder for a run of `process_count` job processes (indices 1 to
    /// `process_count`, and 0 for the flusher).
    pub fn new(process_count: usize) -> Self {
        Self {
            window_ns: FIRST_WINDOW_NS,
            bytes: vec![[Vec::new(), Vec::new()]; process_count + 1],
            requests: vec![[Vec::new(), Vec::new()]; process_count + 1],
            windows: 0,
            group_bytes: Vec::new(),
            group_names: Vec::new(),
        }
    }

    /// Count `bytes` completed at `time` in the group with this index.
    fn add_to_group(&mut self, time: Nanos, group: usize, bytes: u64) {
        let window = (time / self.window_ns) as usize;
        if self.group_bytes.len() <= group {
            self.group_bytes.resize(group + 1, Vec::new());
        }
        let series = &mut self.group_bytes[group];
        if series.len() <= window {
            series.resize(window + 1, 0);
        }
        series[window] += bytes;
    }

    /// Count one request of `bytes` completed by `process` in `direction` at `time`.
    pub fn add(&mut self, time: Nanos, process: usize, direction: Direction, bytes: u64) {
        let mut window = (time / self.window_ns) as usize;
        while window >= MAX_POINTS {
            self.halve();
            window = (time / self.window_ns) as usize;
        }
        if process >= self.bytes.len() {
            self.bytes.resize(process + 1, [Vec::new(), Vec::new()]);
            self.requests.resize(process + 1, [Vec::new(), Vec::new()]);
        }
        let d = direction.index();
        for (series, count) in [
            (&mut self.bytes[process][d], bytes),
            (&mut self.requests[process][d], 1),
        ] {
            if series.len() <= window {
                series.resize(window + 1, 0);
            }
            series[window] += count;
        }
        self.windows = self.windows.max(window + 1);
    }

    /// Merge adjacent pairs of windows in every series and double the window.
    fn halve(&mut self) {
        let halved = |series: &mut Vec<u64>| {
            *series = series.chunks(2).map(|pair| pair.iter().sum()).collect();
        };
        for directions in self.bytes.iter_mut().chain(&mut self.requests) {
            directions.iter_mut().for_each(halved);
        }
        self.group_bytes.iter_mut().for_each(halved);
        self.windows = self.windows.div_ceil(2);
        self.window_ns *= 2;
    }

    /// The series: every process and direction with any bytes, each padded to the same
    /// number of windows; processes named `flusher` (0) and `process N` until
    /// [`BandwidthSeries::named`] names them.
    pub fn finish(self) -> BandwidthSeries {
        self.finish_with_requests().0
    }

    /// The bytes' series and the requests' series, in the same windows and with the same
    /// names; each has every process and direction with any bytes (requests).
    pub fn finish_with_requests(self) -> (BandwidthSeries, RequestSeries) {
        let windows = self.windows;
        let groups = self
            .group_bytes
            .into_iter()
            .enumerate()
            .filter(|(_, bytes)| bytes.iter().any(|&b| b > 0))
            .map(|(index, mut bytes)| {
                bytes.resize(windows, 0);
                let name = self.group_names.get(index).cloned();
                GroupSeries {
                    name: name.unwrap_or_else(|| format!("group {index}")),
                    bytes,
                }
            })
            .collect();
        let mut bytes_series = Vec::new();
        let mut request_series = Vec::new();
        let processes = self.bytes.into_iter().zip(self.requests).enumerate();
        for (process, (bytes, requests)) in processes {
            for (direction, (mut bytes, mut requests)) in
                bytes.into_iter().zip(requests).enumerate()
            {
                let process = u32::try_from(process).unwrap_or(u32::MAX);
                let name = if process == 0 {
                    "flusher".to_string()
                } else {
                    format!("process {process}")
                };
                let direction = if direction == 0 { "read" } else { "write" }.to_string();
                if requests.iter().any(|&r| r > 0) {
                    requests.resize(windows, 0);
                    request_series.push(ProcessRequests {
                        process,
                        name: name.clone(),
                        direction: direction.clone(),
                        requests,
                    });
                }
                if bytes.iter().any(|&b| b > 0) {
                    bytes.resize(windows, 0);
                    bytes_series.push(ProcessSeries {
                        process,
                        name,
                        direction,
                        bytes,
                    });
                }
            }
        }
        (
            BandwidthSeries {
                window_ns: self.window_ns,
                series: bytes_series,
                groups,
            },
            RequestSeries {
                window_ns: self.window_ns,
                series: request_series,
            },
        )
    }
}

impl TraceSink for BandwidthRecorder {
    fn start(&mut self, groups: &GroupTree) {
        self.group_names = groups.iter().map(|(_, group)| group.label()).collect();
    }

    fn record(&mut self, time: Nanos, event: &TraceEvent) {
        if let TraceEvent::Complete {
            request,
            error: None,
            ..
        } = event
        {
            let bytes = u64::from(request.sectors) * 512;
            let process = request.process.0 as usize;
            self.add(time, process, request.direction, bytes);
            // The flusher's writeback is drawn as its own layer, as before.
            if process > 0 {
                self.add_to_group(time, request.group.index(), bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_merges_windows_until_the_points_fit_and_keeps_every_byte() {
        let mut recorder = BandwidthRecorder::new(3);
        for window in 0..900u64 {
            for process in 1..=3 {
                recorder.add(
                    window * FIRST_WINDOW_NS,
                    process,
                    Direction::Read,
                    4096 * process as u64,
                );
            }
        }
        let series = recorder.finish();
        assert_eq!(series.windows(), 900);
        let thin = series.thinned(1000);
        assert_eq!(thin.windows(), 300, "3 series × 300 windows of three");
        assert_eq!(thin.window_ns, series.window_ns * 3);
        for (one, whole) in thin.series.iter().zip(&series.series) {
            assert_eq!(one.total(), whole.total());
        }
        assert_eq!(series.thinned(10_000), series, "already light enough");
    }

    /// A completed request of `process` in `group`, `sectors` long.
    fn done(process: u32, group: u32, sectors: u32) -> TraceEvent {
        let mut request = ioslice_core::Request::new(
            ioslice_core::RequestId(u64::from(process)),
            ioslice_core::ProcessId(process),
            Direction::Read,
            0,
            sectors,
        );
        request.group = ioslice_core::GroupId(group);
        TraceEvent::complete(
            &ioslice_core::Completion {
                request,
                dispatch_time: 0,
                error: None,
            },
            0,
        )
    }

    #[test]
    fn bytes_count_in_the_group_each_request_was_charged_to() {
        let mut groups = GroupTree::default();
        let a = groups.ensure("a").expect("path");
        let mut recorder = BandwidthRecorder::new(1);
        recorder.start(&groups);
        recorder.record(0, &done(1, a.0, 8));
        // The process moves to a group made during the run; the trace learns it.
        let b = groups.add("b").expect("path");
        recorder.start(&groups);
        recorder.record(FIRST_WINDOW_NS, &done(1, b.0, 16));
        // The flusher's writeback is drawn apart, not in a group.
        recorder.record(FIRST_WINDOW_NS, &done(0, a.0, 32));
        let series = recorder.finish();
        let groups: Vec<(&str, &[u64])> = series
            .groups
            .iter()
            .map(|g| (g.name.as_str(), g.bytes.as_slice()))
            .collect();
        assert_eq!(groups, [("a", &[4096, 0][..]), ("b", &[0, 8192][..])]);
        assert_eq!(series.thinned(2).groups[1].bytes, [8192]);
    }

    #[test]
    fn windows_double_and_bytes_are_kept() {
        let mut recorder = BandwidthRecorder::new(1);
        let mut total = 0;
        // 30 s of one completion every 3 ms.
        for i in 0..10_000u64 {
            recorder.add(i * 3_000_000, 1, Direction::Read, 4096);
            total += 4096;
        }
        let series = recorder.finish();
        assert_eq!(series.window_ns, 40_000_000, "10 ms → 20 ms → 40 ms");
        assert_eq!(series.series.len(), 1);
        assert!(series.windows() <= MAX_POINTS);
        assert_eq!(series.windows(), 750);
        assert_eq!(series.series[0].total(), total);
    }

    #[test]
    fn every_series_has_the_same_windows_and_names_follow_processes() {
        let mut recorder = BandwidthRecorder::new(2);
        recorder.add(5_000_000, 0, Direction::Write, 512);
        recorder.add(35_000_000, 2, Direction::Read, 1024);
        recorder.add(36_000_000, 7, Direction::Read, 1024);
        let series = recorder.finish().named(&["a".to_string(), "b".to_string()]);
        let names: Vec<&str> = series.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["flusher", "b", "process 7"]);
        assert!(series.series.iter().all(|s| s.bytes.len() == 4));
        assert_eq!(series.series[0].bytes, [512, 0, 0, 0]);
    }
}
