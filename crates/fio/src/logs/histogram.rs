//! The windows of the completion latency histogram log (`write_hist_log` with
//! `log_hist_msec=N`), per direction, as fio keeps them.
//!
//! Each completion goes to its direction's bins (fio's latency bins, [`crate::latency_bins`]).
//! The direction's first completion after the job's first millisecond starts its window;
//! the first completion `N` ms or more after the window's start ends it: the line is logged
//! at that completion's time with its block size and the counts since the direction's
//! previous line, and the next window starts `N` ms after the one that ended, so lines
//! keep to the `N` ms grid. The window open at the job's end is not
//! logged, as in fio. Each direction's bins (14.5 KiB) are made at its first completion.

use crate::latency_bins::{bin_of, BINS};

/// One direction's histogram window.
#[derive(Debug, Clone, Default)]
struct HistogramWindow {
    /// Where the window started (ms); 0 until a completion after the first millisecond.
    start: u64,
    bins: Option<Box<[u64; BINS]>>,
}

/// A histogram line to log: its time (ms), direction and block size, and the counts.
pub(crate) struct HistogramLine<'a> {
    pub(crate) head: (u64, usize, u64),
    pub(crate) bins: &'a [u64; BINS],
}

/// The histogram windows of a job's log.
#[derive(Debug, Clone)]
pub(crate) struct HistogramWindows {
    hist_msec: u64,
    windows: [HistogramWindow; 3],
}

impl HistogramWindows {
    /// Windows of `hist_msec` ms; 0 logs nothing, as in fio.
    pub(crate) fn new(hist_msec: u64) -> Self {
        Self {
            hist_msec,
            windows: Default::default(),
        }
    }

    /// Count a completion of `direction` that took `clat` ns, of `block_size` bytes, at
    /// `elapsed` ms; `log` gets the line when it ends the window.
    pub(crate) fn add(
        &mut self,
        (direction, block_size): (usize, u64),
        clat: u64,
        elapsed: u64,
        log: impl FnOnce(HistogramLine<'_>),
    ) {
        if self.hist_msec == 0 {
            return;
        }
        let window = &mut self.windows[direction];
        let bins = window.bins.get_or_insert_with(|| Box::new([0; BINS]));
        bins[bin_of(clat)] += 1;
        if window.start == 0 {
            window.start = elapsed;
        }
        let length = elapsed.saturating_sub(window.start);
        if length < self.hist_msec {
            return;
        }
        log(HistogramLine {
            head: (elapsed, direction, block_size),
            bins,
        });
        bins.fill(0);
        window.start = elapsed - (length - self.hist_msec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line's time and total count.
    fn lines(windows: &mut HistogramWindows, completions: &[(usize, u64)]) -> Vec<(u64, u64)> {
        let mut logged = Vec::new();
        for &(direction, elapsed) in completions {
            windows.add((direction, 4096), 100_000, elapsed, |line| {
                logged.push((line.head.0, line.bins.iter().sum()));
            });
        }
        logged
    }

    #[test]
    fn lines_keep_to_the_grid_from_the_first_millisecond() {
        let mut windows = HistogramWindows::new(100);
        // As fio: a completion at 0 ms does not start the window; the one at 1 ms does.
        let got = lines(
            &mut windows,
            &[
                (0, 0),
                (0, 1),
                (0, 50),
                (0, 101),
                (0, 150),
                (0, 203),
                (0, 301),
            ],
        );
        // 101 ends [1, 101): four completions; 203 ends [101, 201) and the next starts at 201.
        assert_eq!(got, [(101, 4), (203, 2), (301, 1)]);
    }

    #[test]
    fn directions_have_their_own_windows_and_zero_logs_nothing() {
        let mut windows = HistogramWindows::new(10);
        let got = lines(&mut windows, &[(0, 5), (1, 6), (0, 15), (1, 17)]);
        assert_eq!(got, [(15, 2), (17, 2)]);
        let mut none = HistogramWindows::new(0);
        assert!(lines(&mut none, &[(0, 5), (0, 500)]).is_empty());
    }
}
