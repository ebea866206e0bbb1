//! Completion latency: fio's percentiles per job (p1 … p99.99 on a log axis) and the CDF
//! per job (log latency axis).
//!
//! # Thinning the CDF
//!
//! A CDF from fio's bins has one point per non-empty bin, up to 1856. Past
//! [`MAX_CDF_POINTS`] (300) it is thinned to every `k`-th point, with
//! `k = ceil((n - 1) / 298)`, plus always the first and the last (where it reaches 1). Each
//! kept point is exact (the share at or below its bin), and the bins are already spaced
//! evenly on the log axis (64 to a power of two), so every `k`-th one keeps the curve's
//! shape at `k / 64` of a power of two.
//!
//! # Below the resolution
//!
//! A request served from the page cache completes within the simulator's clock tick: its
//! latency is recorded as 0 ns, which a log axis cannot show and which is not a measurement
//! of anything. Such points are not drawn (a percentile line has a gap, a CDF starts at its
//! first measured latency), and [`below_resolution`] says so in a sentence under the chart.

use plotters::prelude::*;

use super::{draw, latency_label, log_range, style, Chart, Drawn, Swatch, FONT, HEIGHT, WIDTH};
use crate::model::{LatencyRecord, PERCENTILES};

/// The most points a CDF line keeps.
pub const MAX_CDF_POINTS: usize = 300;

/// `points` thinned to at most [`MAX_CDF_POINTS`] (see the module documentation).
pub fn thin<T: Copy>(points: &[T]) -> Vec<T> {
    let n = points.len();
    if n <= MAX_CDF_POINTS {
        return points.to_vec();
    }
    let step = (n - 1).div_ceil(MAX_CDF_POINTS - 2);
    let mut kept: Vec<T> = points.iter().copied().step_by(step).collect();
    if !(n - 1).is_multiple_of(step) {
        kept.push(points[n - 1]);
    }
    kept
}

/// One line: a name and its latency distribution.
pub struct LatencyLine<'a> {
    /// Legend text.
    pub name: String,
    /// Its distribution.
    pub latency: &'a LatencyRecord,
    /// Its colour and dash, [`super::palette::style`]'s index.
    pub style: usize,
}

/// `p99.9` for 99.9.
fn percent_label(percent: f64) -> String {
    format!("p{percent}")
}

/// What a chart leaves out of `lines` for being below the clock's resolution (0 ns), as a
/// sentence; `None` when it leaves out nothing.
pub fn below_resolution(lines: &[LatencyLine]) -> Option<String> {
    let parts: Vec<String> = lines
        .iter()
        .filter_map(|line| {
            let zero: Vec<&crate::model::Percentile> = line
                .latency
                .percentiles
                .iter()
                .filter(|p| p.value_ns == 0)
                .collect();
            let last = zero.last()?;
            Some(format!(
                "{} up to p{} ({:.1}% of its requests by its CDF)",
                line.name,
                last.percent,
                100.0
                    * line
                        .latency
                        .cdf()
                        .first()
                        .filter(|p| p.0 == 0)
                        .map_or(last.percent / 100.0, |p| p.1)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Below the clock's resolution (recorded as 0 ns, served from the page cache) and not drawn: {}. Percentile lines have a gap there and CDFs start at the first measured latency.",
            parts.join("; ")
        )
    })
}

/// The legend of `lines`.
fn legend(lines: &[LatencyLine]) -> Vec<(String, Swatch)> {
    lines
        .iter()
        .map(|line| (line.name.clone(), Swatch::Line(line.style)))
        .collect()
}

/// Draw `points` as series `index`'s line (its colour and dash).
macro_rules! styled_line {
    ($chart:expr, $points:expr, $index:expr) => {{
        let (colour, dash) = style($index);
        match dash.plotters() {
            None => {
                $chart.draw_series(LineSeries::new($points, colour.stroke_width(2)))?;
            }
            Some((size, gap)) => {
                $chart.draw_series(DashedLineSeries::new(
                    $points,
                    size,
                    gap,
                    colour.stroke_width(2),
                ))?;
            }
        }
    }};
}

/// fio's percentiles, one line per job and direction.
pub fn percentiles(title: &str, lines: &[LatencyLine]) -> Chart {
    let mut chart = draw("percentiles", title, (WIDTH, HEIGHT), |root| {
        let values = || {
            lines
                .iter()
                .flat_map(|l| l.latency.percentiles.iter())
                .filter(|p| p.value_ns > 0)
                .map(|p| p.value_ns as f64)
        };
        let (min, max) = values().fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if max == 0.0 {
            return Err("no latency percentile above the clock's resolution was recorded".into());
        }
        let count = PERCENTILES.len() as i32;
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(72)
            .build_cartesian_2d(-1i32..count, log_range(min, max).log_scale())?;
        chart
            .configure_mesh()
            .x_labels(PERCENTILES.len() + 2)
            .x_label_formatter(&|i| {
                usize::try_from(*i)
                    .ok()
                    .and_then(|i| PERCENTILES.get(i))
                    .map_or_else(String::new, |&p| percent_label(p))
            })
            .y_label_formatter(&|ns| latency_label(*ns))
            .x_desc("percentile")
            .y_desc("completion latency")
            .label_style((FONT, 12))
            .draw()?;
        let mut points = 0;
        for line in lines {
            let (colour, _) = style(line.style);
            // The standard list's positions; a source with other percentiles keeps those
            // that are on it. A value below the resolution breaks the line.
            let mut runs: Vec<Vec<(i32, f64)>> = vec![Vec::new()];
            for p in &line.latency.percentiles {
                let Some(at) = PERCENTILES
                    .iter()
                    .position(|&q| (q - p.percent).abs() < 1e-9)
                else {
                    continue;
                };
                match runs.last_mut() {
                    Some(run) if p.value_ns > 0 => run.push((at as i32, p.value_ns as f64)),
                    _ => runs.push(Vec::new()),
                }
            }
            for run in runs.into_iter().filter(|run| !run.is_empty()) {
                points += run.len();
                styled_line!(chart, run.clone(), line.style);
                chart.draw_series(
                    run.into_iter()
                        .map(|point| Circle::new(point, 3, colour.filled())),
                )?;
            }
        }
        Ok(Drawn::of(points, &chart))
    });
    chart.legend = legend(lines);
    chart
}

/// The CDF, one line per job and direction, thinned.
pub fn cdf(title: &str, lines: &[LatencyLine]) -> Chart {
    let curves: Vec<Vec<(f64, f64)>> = lines
        .iter()
        .map(|line| {
            thin(&line.latency.cdf())
                .into_iter()
                .filter(|&(ns, _)| ns > 0)
                .map(|(ns, share)| (ns as f64, share))
                .collect()
        })
        .collect();
    let mut chart = draw("cdf", title, (WIDTH, HEIGHT), |root| {
        let (min, max) = curves
            .iter()
            .flatten()
            .fold((f64::MAX, 0.0f64), |(lo, hi), &(x, _)| {
                (lo.min(x), hi.max(x))
            });
        if max == 0.0 {
            return Err("no latency above the clock's resolution was recorded".into());
        }
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(log_range(min, max).log_scale(), 0f64..1.02)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|ns| latency_label(*ns))
            .y_label_formatter(&|share| format!("{:.0}%", share * 100.0))
            .x_desc("completion latency (log)")
            .y_desc("requests at or below")
            .label_style((FONT, 12))
            .draw()?;
        let mut points = 0;
        for (index, curve) in curves.iter().enumerate() {
            // A step: each share holds from its latency to the next one's; a curve whose
            // first requests were below the resolution starts at its first measured one.
            let mut steps = Vec::with_capacity(curve.len() * 2);
            let mut previous = None;
            for &(x, share) in curve {
                if let Some(previous) = previous {
                    steps.push((x, previous));
                }
                steps.push((x, share));
                previous = Some(share);
            }
            let below = lines[index].latency.cdf().first().is_some_and(|p| p.0 == 0);
            if let (Some(&(x, _)), false) = (curve.first(), below) {
                steps.insert(0, (x, 0.0));
            }
            points += curve.len();
            if !steps.is_empty() {
                styled_line!(chart, steps, lines[index].style);
            }
        }
        Ok(Drawn::of(points, &chart))
    });
    chart.legend = legend(lines);
    chart
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_the_ends_and_at_most_300_points() {
        for n in [0usize, 1, 2, 300, 301, 599, 600, 1000, 1855, 1856] {
            let points: Vec<usize> = (0..n).collect();
            let kept = thin(&points);
            assert!(kept.len() <= MAX_CDF_POINTS, "{n}: {}", kept.len());
            if n > 0 {
                assert_eq!(kept.first(), Some(&0));
                assert_eq!(kept.last(), Some(&(n - 1)));
            }
            assert!(kept.windows(2).all(|w| w[0] < w[1]));
            if n <= MAX_CDF_POINTS {
                assert_eq!(kept.len(), n);
            }
        }
    }
}
