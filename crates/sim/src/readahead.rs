//! The page cache's read side for buffered sequential reads: the kernel's read-ahead.
//!
//! A buffered reader that goes through a file in order never waits for the device request
//! by request: Linux's on-demand read-ahead (`mm/readahead.c`) reads the file in windows of
//! up to `read_ahead_kb` (128 KiB by default) and starts reading the next window
//! asynchronously when the reader enters the current one. This module keeps, per file of a
//! process, the range already in memory and the windows being read, and says for each read
//! whether it is a hit, must wait for a window in flight, or needs new windows issued.
//! The ramp-up of the first windows (16, 32, 64 KiB…) is left out: windows start at full size.
//!
//! Reads that do not continue where the last one ended are cold-cache reads of exactly the
//! requested bytes, with no read-ahead: the kernel's heuristics treat them as random.

use std::collections::BTreeMap;

/// What a buffered read needs. `issue` lists new read-ahead windows to read from the
/// device, as byte ranges `[start, end)` of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadPlan {
    /// Not part of a sequential stream: read exactly these bytes from the device.
    Random,
    /// The data is in memory.
    Hit {
        /// Windows to start reading.
        issue: Vec<(u64, u64)>,
    },
    /// The data is being read: wait for the window ending at `window_end`.
    Wait {
        /// Windows to start reading.
        issue: Vec<(u64, u64)>,
        /// End of the window that holds the read's last byte.
        window_end: u64,
    },
}

/// Read-ahead state of one file of one process.
#[derive(Debug, Clone, Default)]
pub struct FileReadahead {
    /// Where the previous read ended (the sequential-stream detector).
    last_end: Option<u64>,
    /// Bytes `[cached_start, cached_end)` are in memory.
    cached_start: u64,
    cached_end: u64,
    /// Windows being read, by end offset, with their start.
    in_flight: BTreeMap<u64, u64>,
    /// Windows that completed while an earlier one is still in flight, by end, with start.
    completed_early: BTreeMap<u64, u64>,
}

impl FileReadahead {
    /// Plan a read of `[start, end)` in a file of `file_size` bytes with windows of `window`.
    pub fn read(&mut self, start: u64, end: u64, file_size: u64, window: u64) -> ReadPlan {
        let sequential = window > 0 && (self.last_end == Some(start) || self.covers(start));
        self.last_end = Some(end);
        if !sequential {
            self.reset(end);
            return ReadPlan::Random;
        }
        if !self.covers(start) {
            self.reset(start);
        }
        self.cached_start = self.cached_start.max(start.min(self.cached_end));
        let issue = self.extend_to(end.saturating_add(window), file_size, window);
        if end <= self.cached_end {
            return ReadPlan::Hit { issue };
        }
        match self.in_flight.range(end..).next() {
            Some((&window_end, _)) => ReadPlan::Wait { issue, window_end },
            None => ReadPlan::Random,
        }
    }

    /// Whether `offset` is in memory or in a window being read.
    fn covers(&self, offset: u64) -> bool {
        offset >= self.cached_start && offset < self.reach()
    }

    /// Everything up to here is in memory or being read.
    fn reach(&self) -> u64 {
        self.in_flight
            .keys()
            .next_back()
            .copied()
            .unwrap_or(0)
            .max(self.cached_end)
    }

    fn reset(&mut self, at: u64) {
        self.cached_start = at;
        self.cached_end = at;
        // Windows in flight still complete; they are forgotten here and ignored when they do.
        self.in_flight.clear();
        self.completed_early.clear();
    }

    /// Issue windows until memory plus windows in flight reach `target` (or the file's end).
    fn extend_to(&mut self, target: u64, file_size: u64, window: u64) -> Vec<(u64, u64)> {
        let mut issue = Vec::new();
        let mut reach = self.reach();
        while reach < target.min(file_size) {
            let window_end = (reach + window).min(file_size);
            self.in_flight.insert(window_end, reach);
            issue.push((reach, window_end));
            reach = window_end;
        }
        issue
    }

    /// The window `[start, end)` finished reading. Returns how far memory now reaches, or
    /// None if the window was forgotten (the reader jumped away meanwhile).
    pub fn window_done(&mut self, start: u64, end: u64) -> Option<u64> {
        if self.in_flight.get(&end) != Some(&start) {
            return None;
        }
        self.in_flight.remove(&end);
        self.completed_early.insert(end, start);
        while let Some((&end, &start)) = self.completed_early.iter().next() {
            if start > self.cached_end {
                break;
            }
            self.completed_early.remove(&end);
            self.cached_end = self.cached_end.max(end);
        }
        Some(self.cached_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const WINDOW: u64 = 128 * KIB;
    const FILE: u64 = 1024 * KIB;

    #[test]
    fn a_first_sequential_read_is_a_random_read() {
        let mut file = FileReadahead::default();
        assert_eq!(file.read(0, 4 * KIB, FILE, WINDOW), ReadPlan::Random);
    }

    #[test]
    fn a_sequential_stream_reads_a_window_ahead_and_hits() {
        let mut file = FileReadahead::default();
        file.read(0, 4 * KIB, FILE, WINDOW);
        // The second read continues the first: read-ahead starts from it and reaches one
        // window past it.
        assert_eq!(
            file.read(4 * KIB, 8 * KIB, FILE, WINDOW),
            ReadPlan::Wait {
                issue: vec![(4 * KIB, 132 * KIB), (132 * KIB, 260 * KIB)],
                window_end: 132 * KIB
            }
        );
        assert_eq!(file.window_done(4 * KIB, 132 * KIB), Some(132 * KIB));
        assert_eq!(
            file.read(8 * KIB, 12 * KIB, FILE, WINDOW),
            ReadPlan::Hit { issue: vec![] },
            "already a window ahead"
        );
        assert_eq!(
            file.read(132 * KIB, 136 * KIB, FILE, WINDOW),
            ReadPlan::Wait {
                issue: vec![(260 * KIB, 388 * KIB)],
                window_end: 260 * KIB
            },
            "the second window is still being read; one more keeps a window ahead"
        );
    }

    #[test]
    fn windows_completing_out_of_order_extend_memory_in_order() {
        let mut file = FileReadahead::default();
        file.read(0, 4 * KIB, FILE, WINDOW);
        file.read(4 * KIB, 8 * KIB, FILE, WINDOW);
        assert_eq!(file.window_done(132 * KIB, 260 * KIB), Some(4 * KIB));
        assert_eq!(file.window_done(4 * KIB, 132 * KIB), Some(260 * KIB));
    }

    #[test]
    fn a_jump_is_a_random_read_and_forgets_the_windows() {
        let mut file = FileReadahead::default();
        file.read(0, 4 * KIB, FILE, WINDOW);
        file.read(4 * KIB, 8 * KIB, FILE, WINDOW);
        assert_eq!(
            file.read(600 * KIB, 604 * KIB, FILE, WINDOW),
            ReadPlan::Random
        );
        assert_eq!(file.window_done(4 * KIB, 132 * KIB), None, "forgotten");
    }

    #[test]
    fn windows_stop_at_the_end_of_the_file() {
        let mut file = FileReadahead::default();
        file.read(FILE - 8 * KIB, FILE - 4 * KIB, FILE, WINDOW);
        let plan = file.read(FILE - 4 * KIB, FILE, FILE, WINDOW);
        let ReadPlan::Wait { .. } = plan else {
            panic!("expected a wait, got {plan:?}");
        };
        assert_eq!(
            plan,
            ReadPlan::Wait {
                issue: vec![(FILE - 4 * KIB, FILE)],
                window_end: FILE
            }
        );
    }

    #[test]
    fn no_window_means_no_read_ahead() {
        let mut file = FileReadahead::default();
        file.read(0, 4 * KIB, FILE, 0);
        assert_eq!(file.read(4 * KIB, 8 * KIB, FILE, 0), ReadPlan::Random);
    }
}
