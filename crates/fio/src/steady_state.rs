//! fio's steady-state detection (`steadystate`/`ss`, `ss_dur`, `ss_ramp`): once a second
//! the job's IOPS and bandwidth over the last second are sampled; once `ss_dur` samples
//! are in, either their largest distance from their mean or the slope of their least
//! squares line is compared with the limit, and the job ends when it is below it.
//!
//! Learned from fio's steadystate.c (`steadystate_check`, `steadystate_slope`,
//! `steadystate_deviation`, `steadystate_bw_mean`, `steadystate_iops_mean`), options.c
//! (`str_steadystate_cb`) and stat.c (`show_ss_normal`, the `steadystate` JSON object),
//! fio 3.33, and written afresh. Samples fall one second apart from the job's start (fio's
//! helper thread ticks once a second); with `ss_ramp` the first sample is taken at the
//! first tick at least `ss_ramp` plus one second after the start and covers the second
//! before it. A sample is the job's completed I/Os and bytes (every direction) since the
//! previous tick. The judged quantities are computed as fio computes them: the slope's
//! percentage is of the integer mean, and the deviation's of the real mean.

use std::collections::VecDeque;

use ioslice_core::Nanos;

const SECOND: Nanos = 1_000_000_000;

/// What the criterion measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    Bandwidth,
}

/// `steadystate=METRIC[_slope]:LIMIT[%]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    /// IOPS or bandwidth.
    pub metric: Metric,
    /// Judge the slope of the samples (`_slope`) rather than their largest deviation from
    /// their mean.
    pub slope: bool,
    /// The limit is a percentage of the mean (`%`) rather than an absolute value.
    pub percent: bool,
    /// The limit (IOPS, bytes/s, or percent).
    pub limit: f64,
}

impl Default for Criterion {
    /// fio's default, `iops_slope:0.01%`.
    fn default() -> Self {
        Criterion {
            metric: Metric::Iops,
            slope: true,
            percent: true,
            limit: 0.01,
        }
    }
}

impl Criterion {
    /// The criterion's name: `iops`, `iops_slope`, `bw` or `bw_slope`.
    pub fn name(&self) -> &'static str {
        match (self.metric, self.slope) {
            (Metric::Iops, false) => "iops",
            (Metric::Iops, true) => "iops_slope",
            (Metric::Bandwidth, false) => "bw",
            (Metric::Bandwidth, true) => "bw_slope",
        }
    }

    /// Parses `METRIC:LIMIT` with `size` reading an absolute bandwidth limit; the error
    /// says what was expected.
    pub fn parse(text: &str, size: impl Fn(&str) -> Option<u64>) -> Result<Criterion, String> {
        let expected = "iops, iops_slope, bw or bw_slope, then ':' and a limit such as 2% or 10 (e.g. iops_slope:0.1%)";
        let (name, limit) = text.trim().split_once(':').ok_or(expected)?;
        let (metric, slope) = match name.trim() {
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "bw" => (Metric::Bandwidth, false),
            "bw_slope" => (Metric::Bandwidth, true),
            _ => return Err(expected.to_string()),
        };
        let limit = limit.trim();
        let (limit, percent) = match limit.split_once('%') {
            Some((number, _)) => (number.trim().parse::<f64>().ok(), true),
            None if metric == Metric::Iops => (limit.parse::<f64>().ok(), false),
            None => (size(limit).map(|b| b as f64), false),
        };
        match limit {
            Some(limit) if limit.is_finite() && limit >= 0.0 => Ok(Criterion {
                metric,
                slope,
                percent,
                limit,
            }),
            _ => Err(expected.to_string()),
        }
    }
}

/// A job's steady-state options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyStateOptions {
    /// What is judged, against which limit.
    pub criterion: Criterion,
    /// `ss_dur`, in whole seconds: how many samples are judged together.
    pub duration_s: u64,
    /// `ss_ramp`: how long after the start sampling waits.
    pub ramp: Nanos,
}

impl SteadyStateOptions {
    /// The detection `spec` asks for: when `ss_dur` is at least a second (fio keeps whole
    /// seconds of it).
    pub fn of(spec: &crate::JobSpec) -> Option<SteadyStateOptions> {
        let duration_s = spec.ss_duration / SECOND;
        (duration_s > 0).then_some(SteadyStateOptions {
            criterion: spec.ss_criterion,
            duration_s,
            ramp: spec.ss_ramp,
        })
    }
}

/// What the job's report says of its steady state (fio's `steadystate` JSON object).
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyStateReport {
    /// The options.
    pub criterion: Criterion,
    /// `ss_dur` in seconds.
    pub duration: u64,
    /// Whether steady state was reached (and ended the job).
    pub attained: bool,
    /// The last judged value (percent or absolute, as the limit).
    pub value: f64,
    /// The last largest deviation from the mean (deviation criteria, else 0).
    pub max_deviation: f64,
    /// The last slope (slope criteria, else 0).
    pub slope: f64,
    /// The last `ss_dur` IOPS samples, oldest first; zeros after them while fewer.
    pub iops: Vec<u64>,
    /// The bandwidth samples (bytes/s) taken with them.
    pub bw: Vec<u64>,
}

impl SteadyStateReport {
    /// The mean of the bandwidth samples, bytes/s, rounded down (zeros included).
    pub fn bw_mean(&self) -> u64 {
        self.bw.iter().sum::<u64>() / self.duration.max(1)
    }

    /// The mean of the IOPS samples, rounded down (zeros included).
    pub fn iops_mean(&self) -> u64 {
        self.iops.iter().sum::<u64>() / self.duration.max(1)
    }
}

/// The detector of one job.
#[derive(Debug, Clone)]
pub struct SteadyState {
    options: SteadyStateOptions,
    start: Nanos,
    /// The next tick, as a count of seconds since the start.
    next_tick: u64,
    ramp_over: bool,
    prev_ios: u64,
    prev_bytes: u64,
    /// (IOPS, bytes/s), oldest first, at most `duration_s`.
    samples: VecDeque<(u64, u64)>,
    attained: bool,
    value: f64,
    max_deviation: f64,
    slope: f64,
}

impl SteadyState {
    /// A detector for a job that started at `start`.
    pub fn new(options: SteadyStateOptions, start: Nanos) -> SteadyState {
        SteadyState {
            options,
            start,
            next_tick: 1,
            ramp_over: options.ramp == 0,
            prev_ios: 0,
            prev_bytes: 0,
            samples: VecDeque::new(),
            attained: false,
            value: 0.0,
            max_deviation: 0.0,
            slope: 0.0,
        }
    }

    /// When the next sample is due; None once steady state is reached.
    pub fn next_tick(&self) -> Option<Nanos> {
        (!self.attained).then(|| self.tick_time(self.next_tick))
    }

    /// Whether steady state was reached.
    pub fn attained(&self) -> bool {
        self.attained
    }

    /// Takes every sample due at or before `now`, with `ios` and `bytes` completed since
    /// the start as they stood then; true once steady state is reached.
    pub fn advance(&mut self, now: Nanos, ios: u64, bytes: u64) -> bool {
        while !self.attained && self.tick_time(self.next_tick) <= now {
            let since_start = self.next_tick.saturating_mul(SECOND);
            self.next_tick += 1;
            if !self.ramp_over && since_start >= self.options.ramp.saturating_add(SECOND) {
                self.ramp_over = true;
            }
            let sample = (ios - self.prev_ios, bytes - self.prev_bytes);
            (self.prev_ios, self.prev_bytes) = (ios, bytes);
            if self.ramp_over {
                self.attained = self.judge(sample);
            }
        }
        self.attained
    }

    /// The job's steady-state report.
    pub fn report(&self) -> SteadyStateReport {
        let duration = self.options.duration_s;
        let mut iops: Vec<u64> = self.samples.iter().map(|s| s.0).collect();
        let mut bw: Vec<u64> = self.samples.iter().map(|s| s.1).collect();
        iops.resize(duration as usize, 0);
        bw.resize(duration as usize, 0);
        SteadyStateReport {
            criterion: self.options.criterion,
            duration,
            attained: self.attained,
            value: self.value,
            max_deviation: self.max_deviation,
            slope: self.slope,
            iops,
            bw,
        }
    }

    fn tick_time(&self, tick: u64) -> Nanos {
        self.start.saturating_add(tick.saturating_mul(SECOND))
    }

    /// Adds a sample; once the window is full, whether it meets the criterion.
    fn judge(&mut self, sample: (u64, u64)) -> bool {
        let n = self.options.duration_s as usize;
        self.samples.push_back(sample);
        while self.samples.len() > n {
            self.samples.pop_front();
        }
        if self.samples.len() < n || n == 0 {
            return false;
        }
        let criterion = self.options.criterion;
        let ys: Vec<u64> = self
            .samples
            .iter()
            .map(|&(iops, bw)| match criterion.metric {
                Metric::Iops => iops,
                Metric::Bandwidth => bw,
            })
            .collect();
        if criterion.slope {
            self.judge_slope(&ys)
        } else {
            self.judge_deviation(&ys)
        }
    }

    /// The least-squares slope over x = 0, 1, … (oldest first), in units per second.
    fn judge_slope(&mut self, ys: &[u64]) -> bool {
        let n = ys.len() as u64;
        let sum_y: u64 = ys.iter().sum();
        let sum_xy: u64 = ys.iter().zip(0u64..).map(|(y, x)| x * y).sum();
        let sum_x = n * (n - 1) / 2;
        let sum_x_sq = (n - 1) * n * (2 * n - 1) / 6;
        let (sum_x, n_f) = (sum_x as f64, n as f64);
        self.slope =
            (sum_xy as f64 - sum_x * sum_y as f64 / n_f) / (sum_x_sq as f64 - sum_x * sum_x / n_f);
        self.value = if self.options.criterion.percent {
            100.0 * self.slope / (sum_y / n) as f64
        } else {
            self.slope
        };
        self.value.abs() < self.options.criterion.limit
    }

    /// The largest distance of a sample from the samples' mean.
    fn judge_deviation(&mut self, ys: &[u64]) -> bool {
        let mean = ys.iter().sum::<u64>() as f64 / ys.len() as f64;
        self.max_deviation = ys
            .iter()
            .map(|&y| (y as f64 - mean).abs())
            .fold(0.0, f64::max);
        self.value = if self.options.criterion.percent {
            100.0 * self.max_deviation / mean
        } else {
            self.max_deviation
        };
        self.value < self.options.criterion.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(text: &str, duration_s: u64, ramp: Nanos) -> SteadyStateOptions {
        SteadyStateOptions {
            criterion: Criterion::parse(text, |t| t.parse().ok()).expect("criterion"),
            duration_s,
            ramp,
        }
    }

    #[test]
    fn criteria_parse_as_fio_reads_them() {
        let size = |t: &str| (t == "10m").then_some(10 << 20);
        let c = Criterion::parse("bw_slope:10m", size).expect("bw");
        assert_eq!(
            (c.name(), c.percent, c.limit),
            ("bw_slope", false, 10_485_760.0)
        );
        let c = Criterion::parse("iops:2.5%", size).expect("iops");
        assert_eq!((c.name(), c.percent, c.limit), ("iops", true, 2.5));
        assert!(Criterion::parse("iops", size).is_err());
        assert!(Criterion::parse("lat:1%", size).is_err());
    }

    /// Deviation: 100, 110, 90 have mean 100 and largest deviation 10 (10%), under 11%.
    #[test]
    fn deviation_within_the_limit_is_steady() {
        let mut ss = SteadyState::new(options("iops:11%", 3, 0), 0);
        let mut ios = 0;
        let mut attained = Vec::new();
        for (second, rate) in [100u64, 110, 90].into_iter().enumerate() {
            ios += rate;
            attained.push(ss.advance((second as u64 + 1) * SECOND, ios, ios * 4096));
        }
        assert_eq!(attained, [false, false, true]);
        let report = ss.report();
        assert_eq!(report.iops, [100, 110, 90]);
        assert_eq!(report.max_deviation, 10.0);
        assert_eq!(report.value, 10.0);
        assert_eq!(report.iops_mean(), 100);
    }

    /// Slope of 10, 20, 30 is 10 per second: 50% of the integer mean 20; the window then
    /// slides and keeps the newest samples, oldest first.
    #[test]
    fn slope_is_judged_over_the_newest_samples() {
        let mut ss = SteadyState::new(options("iops_slope:1%", 3, 0), 0);
        let mut ios = 0;
        for (second, rate) in [10u64, 20, 30, 30].into_iter().enumerate() {
            ios += rate;
            assert!(!ss.advance((second as u64 + 1) * SECOND, ios, 0));
            if second == 2 {
                assert_eq!((ss.report().slope, ss.report().value), (10.0, 50.0));
            }
        }
        ios += 30;
        assert!(ss.advance(5 * SECOND, ios, 0));
        assert_eq!(ss.report().iops, [30, 30, 30]);
        assert_eq!(ss.report().slope, 0.0);
    }

    /// With ss_ramp=2s the first sample is at 3 s and covers the second before it; ticks
    /// are taken late with the totals as they stood.
    #[test]
    fn ramp_delays_the_first_sample() {
        let mut ss = SteadyState::new(options("iops:50%", 2, 2 * SECOND), 0);
        assert!(!ss.advance(2 * SECOND, 200, 0));
        assert_eq!(ss.report().iops, [0, 0]);
        assert!(!ss.advance(3 * SECOND, 300, 0));
        assert_eq!(ss.report().iops, [100, 0]);
        assert_eq!(ss.next_tick(), Some(4 * SECOND));
        assert!(ss.advance(5 * SECOND + 1, 400, 0));
        assert_eq!(ss.report().iops, [100, 100]);
        assert_eq!(ss.next_tick(), None);
    }
}
