//! Bandwidth and IOPS samples as fio takes them: what a job completed in each
//! [`SAMPLE_WINDOW`] since it started, summarised as the windows close (count, sum, sum of
//! squares, smallest and largest), so the memory is the same for a second or a year of
//! simulated time. fio's helper thread takes a sample at the end of each window while the job
//! runs (`calc_log_samples`, a little after the window's end), so a window that ends with
//! the job has none, and a window in which nothing completed gives no sample (`__add_samples`
//! skips a direction whose byte count did not move). Group reporting adds jobs' summaries as fio does (`sum_stat` with
//! `pure_sum`: minimums, maximums, means, samples and squared deviations each summed).
//!
//! A job that writes a bandwidth or IOPS log samples as the log does, as in fio (whose
//! `bwavgtime` and `iopsavgtime` take the log's `log_avg_msec`): over windows of that length
//! ([`WindowSeries::every`]), or with `log_avg_msec=0` once per I/O, each I/O's value one
//! sample (its bandwidth, bytes × 10^6 / completion ns, or 1 for IOPS).

use ioslice_core::Nanos;

/// Bandwidth/IOPS sampling window, fio's `bwavgtime`/`iopsavgtime` default.
pub const SAMPLE_WINDOW: Nanos = 500_000_000;

/// fio's `LOG_MSEC_SLACK` (1 ms on Linux): a window that ends within it of the job's end has no
/// sample.
const LOG_SLACK: Nanos = 1_000_000;

/// Summary of bandwidth or IOPS samples taken over full [`SAMPLE_WINDOW`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Samples {
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    /// Number of samples.
    pub count: u64,
}

impl Samples {
    /// Fold another job's samples in as fio's group reporting does: the group's bandwidth
    /// is the sum of its jobs', so minimums, maximums, means and squared deviations add.
    pub fn add(&mut self, other: &Samples) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let squares = |s: &Samples| s.stddev * s.stddev * s.count.saturating_sub(1) as f64;
        let total_squares = squares(self) + squares(other);
        self.min += other.min;
        self.max += other.max;
        self.mean += other.mean;
        self.count += other.count;
        self.stddev = (total_squares / (self.count - 1) as f64).sqrt();
    }
}

/// Running summary of whole windows: exact integers, turned into [`Samples`] at the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Summary {
    windows: u64,
    sum: u128,
    squares: u128,
    min: u64,
    max: u64,
}

impl Summary {
    /// `times` windows of `value` each.
    fn add(&mut self, value: u64, times: u64) {
        if times == 0 {
            return;
        }
        if self.windows == 0 {
            (self.min, self.max) = (value, value);
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        let value = u128::from(value);
        self.windows += times;
        self.sum = self.sum.saturating_add(value * u128::from(times));
        let square = value.saturating_mul(value);
        self.squares = self
            .squares
            .saturating_add(square.saturating_mul(u128::from(times)));
    }

    /// The samples, each value times `per_second`.
    fn samples(&self, per_second: f64) -> Samples {
        let n = self.windows;
        if n == 0 {
            return Samples::default();
        }
        let variance = match n {
            1 => 0.0,
            _ => self.variance(),
        };
        Samples {
            min: (self.min as f64 * per_second) as u64,
            max: (self.max as f64 * per_second) as u64,
            mean: self.sum as f64 / n as f64 * per_second,
            stddev: variance.sqrt() * per_second,
            count: n,
        }
    }

    /// Sample variance of the window values, exact while the integers fit.
    fn variance(&self) -> f64 {
        let n = u128::from(self.windows);
        let exact = self
            .squares
            .checked_mul(n)
            .zip(self.sum.checked_mul(self.sum))
            .and_then(|(a, b)| a.checked_sub(b));
        match exact {
            Some(numerator) => numerator as f64 / (n * (n - 1)) as f64,
            None => {
                let (n, sum) = (n as f64, self.sum as f64);
                ((self.squares as f64 - sum * sum / n) / (n - 1.0)).max(0.0)
            }
        }
    }
}

/// One quantity (bytes or requests) per window since the job started, or per I/O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowSeries {
    /// Every window with a completion before the last two (or every I/O's value).
    closed: Summary,
    /// The last window closed, kept apart: a run can end within the slack after it, in which
    /// case fio took no sample of it.
    last_closed: Option<(u64, u64)>,
    /// The window being filled: its index and what it holds so far.
    open: Option<(u64, u64)>,
    /// The windows' length; 0 takes a sample per I/O.
    window: Nanos,
}

impl Default for WindowSeries {
    /// fio's default windows, [`SAMPLE_WINDOW`].
    fn default() -> Self {
        Self::every(SAMPLE_WINDOW)
    }
}

impl WindowSeries {
    /// Samples over windows of `window` ns; 0 takes each I/O's value as a sample.
    pub fn every(window: Nanos) -> Self {
        Self {
            closed: Summary::default(),
            last_closed: None,
            open: None,
            window,
        }
    }

    /// Whether each I/O is a sample.
    pub fn per_io(&self) -> bool {
        self.window == 0
    }

    /// Add `amount` to the window holding `since_start` (per I/O: take it as a sample).
    /// Completions come in time order; one that comes late for a closed window counts in the
    /// open one.
    pub fn add(&mut self, since_start: Nanos, amount: u64) {
        if self.per_io() {
            return self.closed.add(amount, 1);
        }
        let window = since_start / self.window;
        match self.open {
            Some((index, value)) if window <= index => self.open = Some((index, value + amount)),
            Some(closing) => {
                if let Some((_, value)) = self.last_closed.replace(closing) {
                    self.closed.add(value, 1);
                }
                self.open = Some((window, amount));
            }
            None => self.open = Some((window, amount)),
        }
    }

    /// The samples of the windows that end before a run of `runtime` does and saw a
    /// completion, each scaled by `scale` to a per-second rate; per I/O, every value as it is.
    pub fn samples(&self, runtime: Nanos, scale: f64) -> Samples {
        if self.per_io() {
            return self.closed.samples(1.0);
        }
        // Windows 0..ended end more than fio's LOG_MSEC_SLACK before the run does: the
        // helper thread wakes a little after a window's end, and a job that ends by then is
        // no longer sampled.
        let ended = runtime.saturating_sub(LOG_SLACK + 1) / self.window;
        let mut summary = self.closed;
        for (index, value) in self.last_closed.into_iter().chain(self.open) {
            if index < ended {
                summary.add(value, 1);
            }
        }
        if summary.windows == 0 {
            return Samples::default();
        }
        summary.samples(1e9 / self.window as f64 * scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Nanos = SAMPLE_WINDOW;

    /// The samples straight from a list of window values, as a two-pass computation.
    fn direct(values: &[u64], scale: f64) -> Samples {
        let per_second = 1e9 / W as f64 * scale;
        let scaled: Vec<f64> = values.iter().map(|&v| v as f64 * per_second).collect();
        let n = scaled.len() as f64;
        let mean = scaled.iter().sum::<f64>() / n;
        let squares: f64 = scaled.iter().map(|v| (v - mean).powi(2)).sum();
        Samples {
            min: scaled.iter().copied().fold(f64::INFINITY, f64::min) as u64,
            max: scaled.iter().copied().fold(0.0, f64::max) as u64,
            mean,
            stddev: (squares / (n - 1.0)).sqrt(),
            count: values.len() as u64,
        }
    }

    fn close(a: &Samples, b: &Samples) -> bool {
        a.min == b.min
            && a.max == b.max
            && a.count == b.count
            && (a.mean - b.mean).abs() <= 1e-9 * b.mean.abs().max(1.0)
            && (a.stddev - b.stddev).abs() <= 1e-9 * b.stddev.abs().max(1.0)
    }

    #[test]
    fn windows_are_summarised_as_they_close() {
        let mut series = WindowSeries::default();
        series.add(0, 4096);
        series.add(W / 2, 4096);
        series.add(2 * W + 1, 8192);
        series.add(3 * W, 4096);
        // Windows 0..4 hold 8192, nothing, 8192, 4096: the empty one gives no sample.
        let got = series.samples(4 * W + 2 * LOG_SLACK, 1.0 / 1024.0);
        assert!(close(&got, &direct(&[8192, 8192, 4096], 1.0 / 1024.0)));
        assert_eq!(got.min, 8);
        assert_eq!(got.max, 16);
        // A run that ends with window 3, or within the slack after it, has no sample of it.
        let got = series.samples(4 * W, 1.0);
        assert!(close(&got, &direct(&[8192, 8192], 1.0)));
        let got = series.samples(4 * W + LOG_SLACK / 2, 1.0);
        assert!(close(&got, &direct(&[8192, 8192], 1.0)));
        // Nor when a completion came after the window (the run's last, past its deadline).
        let mut late = series.clone();
        late.add(4 * W + 1000, 4096);
        let got = late.samples(4 * W + 2000, 1.0);
        assert!(close(&got, &direct(&[8192, 8192], 1.0)));
        let got = series.samples(4 * W - 1, 1.0);
        assert!(close(&got, &direct(&[8192, 8192], 1.0)));
        // Nothing completed after window 3: no samples for the windows after it.
        let got = series.samples(6 * W, 1.0);
        assert!(close(&got, &direct(&[8192, 8192, 4096], 1.0)));
        // A run no longer than a window has none.
        let mut short = WindowSeries::default();
        short.add(W / 2, 4096);
        assert_eq!(short.samples(W, 1.0), Samples::default());
    }

    #[test]
    fn a_long_idle_run_takes_no_memory_per_window() {
        let mut series = WindowSeries::default();
        series.add(1_000_000 * W, 1);
        series.add(2_000_000 * W, 1);
        let got = series.samples(2_000_002 * W, 1.0);
        assert_eq!(got.count, 2);
        assert_eq!(got.max, 2);
    }

    #[test]
    fn group_samples_add_as_fio_adds_them() {
        let a = direct(&[10, 20, 30], 1.0);
        let b = direct(&[5, 5], 1.0);
        let mut sum = a;
        sum.add(&b);
        assert_eq!(
            (sum.min, sum.max, sum.count),
            (a.min + b.min, a.max + b.max, 5)
        );
        assert!((sum.mean - (a.mean + b.mean)).abs() < 1e-9);
        let squares = a.stddev.powi(2) * 2.0 + b.stddev.powi(2);
        assert!((sum.stddev - (squares / 4.0).sqrt()).abs() < 1e-9);
        let mut empty = Samples::default();
        empty.add(&b);
        assert_eq!(empty, b);
    }
}
