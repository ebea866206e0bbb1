//! What the bandwidth charts draw from a series of bytes per window: moving averages over a
//! choice of smoothing windows, the bytes done so far, and each line's share of the bytes
//! all lines have done so far.
//!
//! # Why smooth
//!
//! A time-sliced scheduler (cfq's slices and group turns, bfq's budgets) gives the device to
//! one queue at a time for tens to hundreds of milliseconds, so bandwidth in windows of 20
//! to 80 ms swings between nothing and the whole device: the weighted shares it keeps over
//! a round cannot be read off. A moving average over a few slices shows them. The page
//! offers the [`levels`] below and starts at [`default_window`], two rounds of slices; the
//! cumulative views
//! ([`cumulative`], [`shares`]) show the shares converging whatever the window.
//!
//! # The moving average
//!
//! Centred: the point of window `i` averages windows `i - m/2 .. i - m/2 + m` (`m` windows
//! of the recorded length), and near the run's ends only the windows that exist, so no
//! point is pulled down by windows outside the run. A line keeps at most about
//! [`line_points`] points (300 for a chart of up to 8 lines, fewer past that, so that a
//! layer holds about [`LAYER_POINTS`]): every `s`-th window, with `s` at least a quarter
//! of `m` (an average over `m` windows changes little from one window to the next).

use ioslice_core::Nanos;

/// The most points a drawn line keeps (about).
pub const LINE_POINTS: usize = 300;

/// About the most points a chart's layer keeps over all its lines.
pub const LAYER_POINTS: usize = 2400;

/// The fewest points a line keeps, however many lines share its layer.
const FEWEST_LINE_POINTS: usize = 40;

/// The most points each of `lines` lines keeps.
pub fn line_points(lines: usize) -> usize {
    (LAYER_POINTS / lines.max(1)).clamp(FEWEST_LINE_POINTS, LINE_POINTS)
}

/// Smoothing windows the page offers, ns, before rounding to whole recorded windows.
const NICE_WINDOWS_NS: [Nanos; 11] = [
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
    20_000_000_000,
];

/// The shortest default smoothing window, ns: for a scheduler without time slices.
const SHORTEST_DEFAULT_NS: Nanos = 100_000_000;

/// How many slices the default smoothing window spans at least.
const SLICES_PER_WINDOW: u64 = 4;
/// How many rounds (a slice for each line) the default smoothing window spans at least.
const ROUNDS_PER_WINDOW: u64 = 2;

/// A smoothing level: a moving average over `windows` recorded windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// Recorded windows averaged.
    pub windows: usize,
    /// Their length, ns.
    pub window_ns: Nanos,
}

impl Level {
    /// The smoothing window's length, ns.
    pub fn span_ns(&self) -> Nanos {
        self.window_ns.saturating_mul(self.windows as u64)
    }
}

/// The levels offered for a series of `windows` windows of `window_ns`: the recorded window
/// itself, then each of 10 ms, 20 ms, 50 ms … 20 s rounded to whole windows, as long as it
/// is at most half the run; no two alike.
pub fn levels(window_ns: Nanos, windows: usize) -> Vec<Level> {
    let window_ns = window_ns.max(1);
    let run = window_ns.saturating_mul(windows as u64);
    let mut out = vec![Level {
        windows: 1,
        window_ns,
    }];
    for nice in NICE_WINDOWS_NS {
        let m = ((nice + window_ns / 2) / window_ns).max(1) as usize;
        let level = Level {
            windows: m,
            window_ns,
        };
        if level.span_ns() > run / 2 {
            break;
        }
        if out.iter().all(|known| known.windows != m) {
            out.push(level);
        }
    }
    out
}

/// The level the page starts at, for a chart of `lines` lines: the shortest that spans at
/// least four of the scheduler's time slices (`slice_ns`, when it has
/// slices) and two rounds in which each line has a slice, and at least
/// 100 ms; the longest offered when none is that long.
pub fn default_window(levels: &[Level], slice_ns: Option<Nanos>, lines: usize) -> Level {
    let slices = SLICES_PER_WINDOW.max(ROUNDS_PER_WINDOW.saturating_mul(lines as u64));
    let wanted = slice_ns
        .map_or(0, |slice| slice.saturating_mul(slices))
        .max(SHORTEST_DEFAULT_NS);
    levels
        .iter()
        .find(|level| level.span_ns() >= wanted)
        .or(levels.last())
        .copied()
        .unwrap_or(Level {
            windows: 1,
            window_ns: 1,
        })
}

/// The stride between drawn points for `windows` windows averaged `m` at a time, keeping
/// at most about `points`.
pub fn stride(windows: usize, m: usize, points: usize) -> usize {
    windows.div_ceil(points.max(1)).max(m / 4).max(1)
}

/// The centred moving average of `bytes` over `m` windows of `window_ns`, in bytes per
/// second, as `(window index, value)` at every [`stride`]-th window (and the last), about
/// `points` at most.
pub fn moving_average(
    bytes: &[u64],
    m: usize,
    window_ns: Nanos,
    points: usize,
) -> Vec<(usize, f64)> {
    let n = bytes.len();
    if n == 0 || window_ns == 0 {
        return Vec::new();
    }
    let m = m.clamp(1, n);
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0u128);
    for &b in bytes {
        let last = prefix.last().copied().unwrap_or(0);
        prefix.push(last + u128::from(b));
    }
    let seconds = window_ns as f64 / 1e9;
    let step = stride(n, m, points);
    let mut points: Vec<usize> = (0..n).step_by(step).collect();
    if points.last() != Some(&(n - 1)) {
        points.push(n - 1);
    }
    points
        .into_iter()
        .map(|i| {
            let from = i.saturating_sub(m / 2);
            let to = (from + m).min(n);
            let from = to.saturating_sub(m);
            let sum = prefix[to] - prefix[from];
            (i, sum as f64 / ((to - from) as f64 * seconds))
        })
        .collect()
}

/// Bytes done by the end of each window.
pub fn cumulative(bytes: &[u64]) -> Vec<u64> {
    let mut total = 0u64;
    bytes
        .iter()
        .map(|&b| {
            total = total.saturating_add(b);
            total
        })
        .collect()
}

/// Each line's share (0 to 1) of the bytes all `lines` have done by the end of each window;
/// 0 before any byte is done.
pub fn shares(lines: &[&[u64]]) -> Vec<Vec<f64>> {
    let totals: Vec<Vec<u64>> = lines.iter().map(|line| cumulative(line)).collect();
    let windows = totals.iter().map(Vec::len).max().unwrap_or(0);
    let all: Vec<u64> = (0..windows)
        .map(|i| totals.iter().map(|t| t.get(i).copied().unwrap_or(0)).sum())
        .collect();
    totals
        .iter()
        .map(|own| {
            all.iter()
                .enumerate()
                .map(|(i, &sum)| {
                    let mine = own.get(i).copied().unwrap_or(0);
                    if sum == 0 {
                        0.0
                    } else {
                        mine as f64 / sum as f64
                    }
                })
                .collect()
        })
        .collect()
}

/// The scheduler's time slice, ns, from its name and tunables (`slice_sync` for cfq,
/// `timeout_sync` for bfq, in ms), when it has one.
pub fn slice_of(scheduler: &str, tunables: &[(String, String)]) -> Option<Nanos> {
    let name = match scheduler {
        "cfq" => "slice_sync",
        "bfq" => "timeout_sync",
        _ => return None,
    };
    let ms: u64 = tunables
        .iter()
        .find(|(tunable, _)| tunable == name)?
        .1
        .parse()
        .ok()?;
    (ms > 0).then(|| ms.saturating_mul(1_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn levels_are_whole_windows_up_to_half_the_run() {
        let offered = levels(40 * MS, 500); // 20 s of 40 ms windows
        let spans: Vec<Nanos> = offered.iter().map(|l| l.span_ns() / MS).collect();
        assert_eq!(spans, [40, 120, 200, 520, 1000, 2000, 5000, 10_000]);
        assert_eq!(offered[0].windows, 1);
        let short = levels(10 * MS, 10); // 100 ms
        assert_eq!(short.len(), 3, "10, 20 and 50 ms");
    }

    #[test]
    fn the_default_spans_four_slices_and_two_rounds() {
        let offered = levels(40 * MS, 500);
        assert_eq!(
            default_window(&offered, Some(100 * MS), 1).span_ns(),
            520 * MS
        );
        assert_eq!(
            default_window(&offered, Some(100 * MS), 4).span_ns(),
            1000 * MS
        );
        assert_eq!(
            default_window(&offered, Some(100 * MS), 8).span_ns(),
            2000 * MS
        );
        assert_eq!(
            default_window(&offered, Some(250 * MS), 2).span_ns(),
            1000 * MS
        );
        assert_eq!(default_window(&offered, None, 8).span_ns(), 120 * MS);
        let short = levels(10 * MS, 10);
        assert_eq!(default_window(&short, Some(100 * MS), 1).span_ns(), 50 * MS);
    }

    #[test]
    fn a_time_sliced_pattern_averages_to_its_share() {
        // One queue served for 3 windows of every 4 at 4 bytes a window: 3 bytes a window on
        // average. 1 ms windows make bytes per window bytes per ms.
        let bytes: Vec<u64> = (0..400).map(|i| if i % 4 < 3 { 4 } else { 0 }).collect();
        let raw = moving_average(&bytes, 1, MS, LINE_POINTS);
        assert!(raw.iter().any(|&(_, v)| v == 0.0));
        let smooth = moving_average(&bytes, 8, MS, LINE_POINTS);
        for &(i, value) in &smooth {
            assert!((value - 3000.0).abs() < 1e-9, "window {i}: {value}");
        }
        assert_eq!(smooth.last().map(|p| p.0), Some(399));
        assert!(smooth.len() <= LINE_POINTS + 1);
    }

    #[test]
    fn the_ends_average_only_windows_of_the_run() {
        let bytes = [10u64, 10, 10, 10];
        let points = moving_average(&bytes, 3, 1_000_000_000, LINE_POINTS);
        assert_eq!(points, [(0, 10.0), (1, 10.0), (2, 10.0), (3, 10.0)]);
        assert!(moving_average(&[], 3, MS, LINE_POINTS).is_empty());
    }

    #[test]
    fn long_series_keep_few_points() {
        let bytes = vec![1u64; 5000];
        assert!(moving_average(&bytes, 1, MS, LINE_POINTS).len() <= LINE_POINTS + 1);
        assert_eq!(
            moving_average(&bytes, 100, MS, LINE_POINTS).len(),
            5000 / 25 + 1
        );
        assert_eq!(line_points(4), LINE_POINTS);
        assert_eq!(line_points(64), 40);
        assert_eq!(line_points(20), 120);
        assert_eq!(
            moving_average(&bytes, 1, MS, line_points(20)).len(),
            5000usize.div_ceil(42) + 1
        );
    }

    #[test]
    fn cumulative_views_sum_and_share() {
        assert_eq!(cumulative(&[1, 0, 2]), [1, 1, 3]);
        let shares = shares(&[&[0, 1, 3], &[0, 3, 1]]);
        assert_eq!(shares[0], [0.0, 0.25, 0.5]);
        assert_eq!(shares[1], [0.0, 0.75, 0.5]);
    }

    #[test]
    fn slices_come_from_the_tunables() {
        let tunables = vec![("slice_sync".to_string(), "100".to_string())];
        assert_eq!(slice_of("cfq", &tunables), Some(100 * MS));
        assert_eq!(slice_of("bfq", &tunables), None);
        assert_eq!(slice_of("deadline", &tunables), None);
    }
}
