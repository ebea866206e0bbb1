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

use plotters::prelude::*;

use super::{colour, draw, latency_label, legend, log_range, Chart, FONT, HEIGHT, WIDTH};
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
}

/// `p99.9` for 99.9.
fn percent_label(percent: f64) -> String {
    format!("p{percent}")
}

/// fio's percentiles, one line per job and direction.
pub fn percentiles(title: &str, lines: &[LatencyLine]) -> Chart {
    draw("percentiles", title, (WIDTH, HEIGHT), |root| {
        let values = || {
            lines
                .iter()
                .flat_map(|l| l.latency.percentiles.iter())
                .map(|p| p.value_ns.max(1) as f64)
        };
        let (min, max) = values().fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if max == 0.0 {
            return Err("no latency percentiles were recorded".into());
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
        for (index, line) in lines.iter().enumerate() {
            let colour = colour(index);
            // The standard list's positions; a source with other percentiles keeps those
            // that are on it.
            let data: Vec<(i32, f64)> = line
                .latency
                .percentiles
                .iter()
                .filter_map(|p| {
                    let at = PERCENTILES
                        .iter()
                        .position(|&q| (q - p.percent).abs() < 1e-9)?;
                    Some((at as i32, p.value_ns.max(1) as f64))
                })
                .collect();
            points += data.len();
            chart
                .draw_series(LineSeries::new(data.clone(), colour.stroke_width(2)))?
                .label(line.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour));
            chart.draw_series(
                data.into_iter()
                    .map(|point| Circle::new(point, 3, colour.filled())),
            )?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(points)
    })
}

/// The CDF, one line per job and direction, thinned.
pub fn cdf(title: &str, lines: &[LatencyLine]) -> Chart {
    let curves: Vec<Vec<(f64, f64)>> = lines
        .iter()
        .map(|line| {
            thin(&line.latency.cdf())
                .into_iter()
                .map(|(ns, share)| (ns.max(1) as f64, share))
                .collect()
        })
        .collect();
    draw("cdf", title, (WIDTH, HEIGHT), |root| {
        let (min, max) = curves
            .iter()
            .flatten()
            .fold((f64::MAX, 0.0f64), |(lo, hi), &(x, _)| {
                (lo.min(x), hi.max(x))
            });
        if max == 0.0 {
            return Err("no latency distribution was recorded".into());
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
        for (index, (line, curve)) in lines.iter().zip(&curves).enumerate() {
            let colour = colour(index);
            // A step: each share holds from its latency to the next one's.
            let mut steps = Vec::with_capacity(curve.len() * 2);
            let mut previous = 0.0;
            for &(x, share) in curve {
                steps.push((x, previous));
                steps.push((x, share));
                previous = share;
            }
            points += curve.len();
            chart
                .draw_series(LineSeries::new(steps, colour.stroke_width(2)))?
                .label(line.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour));
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(points)
    })
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
