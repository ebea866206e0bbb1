//! Bandwidth over time: one line per job and direction, and the cgroups' bandwidth stacked
//! as areas. Each window's bytes are drawn as MiB/s at the window's middle.

use plotters::prelude::*;

use super::{colour, draw, legend, lighter, Chart, FONT, HEIGHT, WIDTH};
use crate::bandwidth::BandwidthSeries;

/// MiB/s of `bytes` over a window of `window_s` seconds.
fn mib_per_s(bytes: u64, window_s: f64) -> f64 {
    bytes as f64 / window_s / 1_048_576.0
}

/// One named series of bytes per window.
pub struct Layer<'a> {
    /// Legend text.
    pub name: String,
    /// Bytes per window.
    pub bytes: &'a [u64],
}

/// Lines: one per job and direction.
pub fn bandwidth_lines(title: &str, series: &BandwidthSeries) -> Chart {
    let window_s = series.window_ns as f64 / 1e9;
    let layers: Vec<Layer> = series
        .series
        .iter()
        .map(|s| Layer {
            name: format!("{} ({})", s.name, s.direction),
            bytes: &s.bytes,
        })
        .collect();
    draw("bandwidth", title, (WIDTH, HEIGHT), |root| {
        let windows = series.windows();
        if windows == 0 || window_s <= 0.0 {
            return Err("no completed I/O was recorded".into());
        }
        let x_max = windows as f64 * window_s;
        let y_max = layers
            .iter()
            .flat_map(|l| l.bytes.iter())
            .map(|&b| mib_per_s(b, window_s))
            .fold(0.0, f64::max)
            .max(1e-3)
            * 1.1;
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        chart
            .configure_mesh()
            .x_desc("seconds into the run")
            .y_desc("MiB/s")
            .label_style((FONT, 13))
            .draw()?;
        let mut points = 0;
        for (index, layer) in layers.iter().enumerate() {
            let colour = colour(index);
            let line: Vec<(f64, f64)> = layer
                .bytes
                .iter()
                .enumerate()
                .map(|(i, &b)| ((i as f64 + 0.5) * window_s, mib_per_s(b, window_s)))
                .collect();
            points += line.len();
            chart
                .draw_series(LineSeries::new(line, colour.stroke_width(2)))?
                .label(layer.name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour));
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(points)
    })
}

/// Areas: the layers stacked bottom to top in the order given.
pub fn stacked_areas(title: &str, window_ns: u64, layers: &[Layer]) -> Chart {
    let window_s = window_ns as f64 / 1e9;
    draw("cgroups", title, (WIDTH, HEIGHT), |root| {
        let windows = layers.iter().map(|l| l.bytes.len()).max().unwrap_or(0);
        if windows == 0 || window_s <= 0.0 {
            return Err("no completed I/O was recorded".into());
        }
        // Running sums, bottom layer first.
        let mut tops: Vec<Vec<f64>> = Vec::with_capacity(layers.len());
        for layer in layers {
            let below = tops.last();
            let top: Vec<f64> = (0..windows)
                .map(|i| {
                    let own = mib_per_s(layer.bytes.get(i).copied().unwrap_or(0), window_s);
                    own + below.map_or(0.0, |b| b[i])
                })
                .collect();
            tops.push(top);
        }
        let y_max = tops
            .last()
            .map_or(0.0, |top| top.iter().copied().fold(0.0, f64::max))
            .max(1e-3)
            * 1.1;
        let x_max = windows as f64 * window_s;
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        chart
            .configure_mesh()
            .x_desc("seconds into the run")
            .y_desc("MiB/s, stacked")
            .label_style((FONT, 13))
            .draw()?;
        let mut points = 0;
        // Top layer first, so that each lower one is drawn over the area above it.
        for (index, (layer, top)) in layers.iter().zip(&tops).enumerate().rev() {
            let colour = colour(index);
            let area: Vec<(f64, f64)> = top
                .iter()
                .enumerate()
                .map(|(i, &y)| ((i as f64 + 0.5) * window_s, y))
                .collect();
            points += area.len();
            chart
                .draw_series(
                    AreaSeries::new(area, 0.0, lighter(colour, 0.25).filled())
                        .border_style(colour.stroke_width(1)),
                )?
                .label(layer.name.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled())
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(points)
    })
}
