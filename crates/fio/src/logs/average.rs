//! fio's averaging under `log_avg_msec=N`, per direction.
//!
//! Latency logs ([`MeanWindows`]) add each I/O's value to its direction's window; the I/O
//! that comes `N` ms or more after the window's start closes it, and the window's mean
//! (rounded half up) or, with `log_max_value=1`, its largest value is logged at that I/O's
//! time. The next window starts at that time rounded down to a multiple of `N`. When the
//! job ends, every window holding values is logged at the end's time.
//!
//! Bandwidth and IOPS logs ([`RateWindows`]) are fio's periodic samples instead: at every
//! multiple of `N` ms since the job's start, each direction that completed anything in the
//! `N` ms before logs its rate over them, in KiB/s (bytes × 1000 / N / 1024, rounded down)
//! or I/Os per second; a window without completions logs nothing, and the window the job
//! ends in, not being whole, neither. fio takes these samples from a helper thread whose
//! ticks drift by a millisecond or so; here they are exact.

use ioslice_core::Nanos;

use super::line::Entry;

/// Nanoseconds in a millisecond.
const MILLISECOND: Nanos = 1_000_000;

/// One direction's open window of a latency log.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    count: u64,
    sum: u128,
    max: u64,
    /// Where the window started (ms).
    start: u64,
}

/// The averaging windows of a latency log, per direction.
#[derive(Debug, Clone)]
pub(crate) struct MeanWindows {
    avg_msec: u64,
    log_max: bool,
    windows: [Window; 3],
}

impl MeanWindows {
    /// Windows of `avg_msec` (above 0), logging maxima with `log_max`.
    pub(crate) fn new(avg_msec: u64, log_max: bool) -> Self {
        Self {
            avg_msec: avg_msec.max(1),
            log_max,
            windows: [Window::default(); 3],
        }
    }

    /// Add `value` for `direction` at `elapsed` ms; the entry to log if it closed the window.
    pub(crate) fn add(&mut self, direction: usize, value: u64, elapsed: u64) -> Option<Entry> {
        let window = &mut self.windows[direction];
        window.max = if window.count == 0 {
            value
        } else {
            window.max.max(value)
        };
        window.count += 1;
        window.sum += u128::from(value);
        if elapsed < window.start || elapsed - window.start < self.avg_msec {
            return None;
        }
        let entry = self.close(direction, elapsed);
        self.windows[direction].start = elapsed - elapsed % self.avg_msec;
        entry
    }

    /// The entries of every window holding values, at `elapsed` ms (the job's end).
    pub(crate) fn finish(&mut self, elapsed: u64) -> Vec<Entry> {
        (0..self.windows.len())
            .filter_map(|direction| self.close(direction, elapsed))
            .collect()
    }

    /// The entry of a direction's window (none when empty), which starts over.
    fn close(&mut self, direction: usize, elapsed: u64) -> Option<Entry> {
        let window = &mut self.windows[direction];
        if window.count == 0 {
            return None;
        }
        let value = if self.log_max {
            window.max
        } else {
            (window.sum as f64 / window.count as f64 + 0.5) as u64
        };
        *window = Window {
            start: window.start,
            ..Window::default()
        };
        Some(Entry {
            time_ms: elapsed,
            value,
            direction,
            ..Entry::default()
        })
    }
}

/// What a rate log counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rate {
    /// Bytes, logged in KiB/s.
    Bandwidth,
    /// I/Os, logged per second.
    Iops,
}

/// The periodic samples of a bandwidth or IOPS log.
#[derive(Debug, Clone)]
pub(crate) struct RateWindows {
    rate: Rate,
    avg_msec: u64,
    /// The window being filled (its index since the job's start).
    open: u64,
    /// What each direction completed in it.
    amounts: [u64; 3],
}

impl RateWindows {
    /// Samples of `rate` every `avg_msec` (above 0).
    pub(crate) fn new(rate: Rate, avg_msec: u64) -> Self {
        Self {
            rate,
            avg_msec: avg_msec.max(1),
            open: 0,
            amounts: [0; 3],
        }
    }

    fn window_of(&self, since_start: Nanos) -> u64 {
        since_start / (self.avg_msec * MILLISECOND)
    }

    /// Count `bytes` of one I/O of `direction` completed at `since_start`; the entries of the
    /// windows it closed.
    pub(crate) fn add(&mut self, direction: usize, bytes: u64, since_start: Nanos) -> Vec<Entry> {
        let entries = self.close_before(since_start);
        self.amounts[direction] += match self.rate {
            Rate::Bandwidth => bytes,
            Rate::Iops => 1,
        };
        entries
    }

    /// The entries of the window open at the job's end, `since_start`, if it is whole.
    pub(crate) fn finish(&mut self, since_start: Nanos) -> Vec<Entry> {
        let whole = self.open + 1;
        if since_start >= whole * self.avg_msec * MILLISECOND {
            self.close_before(whole * self.avg_msec * MILLISECOND)
        } else {
            Vec::new()
        }
    }

    /// Close the open window if `since_start` is past it.
    fn close_before(&mut self, since_start: Nanos) -> Vec<Entry> {
        let window = self.window_of(since_start);
        if window <= self.open {
            return Vec::new();
        }
        let time_ms = (self.open + 1) * self.avg_msec;
        let entries = (0..self.amounts.len())
            .filter(|&direction| self.amounts[direction] > 0)
            .map(|direction| Entry {
                time_ms,
                value: self.per_second(self.amounts[direction]),
                direction,
                ..Entry::default()
            })
            .collect();
        self.amounts = [0; 3];
        self.open = window;
        entries
    }

    /// fio's rate over one window: integer arithmetic, rounded down at each step.
    fn per_second(&self, amount: u64) -> u64 {
        let per_second = amount.saturating_mul(1000) / self.avg_msec;
        match self.rate {
            Rate::Bandwidth => per_second / 1024,
            Rate::Iops => per_second,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(entries: &[Entry]) -> Vec<(u64, u64, usize)> {
        entries
            .iter()
            .map(|e| (e.time_ms, e.value, e.direction))
            .collect()
    }

    #[test]
    fn a_latency_window_closes_at_the_first_value_past_it() {
        let mut windows = MeanWindows::new(500, false);
        assert_eq!(windows.add(0, 100, 10), None);
        assert_eq!(windows.add(0, 201, 499), None);
        // 500 ms after the start: the window (100, 201, 300) is logged at 501, rounded up.
        let entry = windows.add(0, 300, 501).expect("closed");
        assert_eq!(
            (entry.time_ms, entry.value, entry.block_size),
            (501, 200, 0)
        );
        // The next window starts at 500: 1000 closes it.
        assert_eq!(windows.add(0, 7, 999), None);
        assert_eq!(windows.add(0, 8, 1000).map(|e| e.value), Some(8));
        // The writes' window started at 0, as every direction's does: their first value
        // closes it at once.
        let first_write = windows.add(1, 40, 1100).map(|e| (e.time_ms, e.value));
        assert_eq!(first_write, Some((1100, 40)));
        // The end logs what is left, every direction holding values.
        windows.add(1, 50, 1150);
        windows.add(0, 2, 1200);
        assert_eq!(values(&windows.finish(1234)), [(1234, 2, 0), (1234, 50, 1)]);
        assert!(windows.finish(1300).is_empty());
    }

    #[test]
    fn log_max_value_logs_the_largest() {
        let mut windows = MeanWindows::new(100, true);
        windows.add(2, 5, 1);
        windows.add(2, 90, 2);
        assert_eq!(windows.add(2, 7, 100).map(|e| e.value), Some(90));
    }

    #[test]
    fn rates_are_sampled_at_every_multiple_of_the_window() {
        let ms = MILLISECOND;
        let mut bw = RateWindows::new(Rate::Bandwidth, 500);
        assert!(bw.add(0, 4096, 10 * ms).is_empty());
        assert!(bw.add(1, 8192, 400 * ms).is_empty());
        // 4096 B in 500 ms: 8192 B/s, 8 KiB/s; the write: 16 KiB/s.
        assert_eq!(
            values(&bw.add(0, 4096, 700 * ms)),
            [(500, 8, 0), (500, 16, 1)]
        );
        // Nothing from 1000 to 2000: no entries; 2000..2500 is logged at 2500.
        assert_eq!(values(&bw.add(0, 1024 * 1024, 2100 * ms)), [(1000, 8, 0)]);
        // The job ends at 2400: the window is not whole.
        assert!(bw.clone().finish(2400 * ms).is_empty());
        assert_eq!(values(&bw.finish(2500 * ms)), [(2500, 2048, 0)]);
        let mut iops = RateWindows::new(Rate::Iops, 1000);
        for i in 0..5 {
            iops.add(0, 4096, i * 100 * ms);
        }
        assert_eq!(values(&iops.finish(1000 * ms)), [(1000, 5, 0)]);
    }
}
