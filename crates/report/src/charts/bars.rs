//! A comparison's grouped bars: one category per run (or per cgroup), ioslice's bar and,
//! beside it, the original post's figure in a lighter shade of the same colour.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{colour, draw, lighter, Chart, Drawn, Swatch, FONT, HEIGHT, WIDTH};

/// One category on the x axis.
pub struct Bar {
    /// Its label under the axis.
    pub label: String,
    /// Which colour (series) it belongs to.
    pub series: usize,
    /// ioslice's value.
    pub value: f64,
    /// The original post's value, if any.
    pub seed: Option<f64>,
}

/// Bars of `bars`, with `series_names[i]` in the legend for colour `i`, valued in `unit`;
/// the legend names the original post's bars only when the chart has one.
pub fn grouped(title: &str, unit: &str, series_names: &[String], bars: &[Bar]) -> Chart {
    let mut chart = draw("bars", title, (WIDTH, HEIGHT), |root| {
        if bars.is_empty() {
            return Err("the comparison has no runs".into());
        }
        let with_seed = bars.iter().any(|b| b.seed.is_some());
        // Several series: each one's name under its bars, below their own labels.
        let group_labels = bars.iter().any(|b| b.series != bars[0].series);
        let y_max = bars
            .iter()
            .flat_map(|b| [b.value, b.seed.unwrap_or(0.0)])
            .fold(0.0, f64::max)
            .max(1e-3)
            * 1.08;
        let n = bars.len() as f64;
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(if group_labels { 52 } else { 36 })
            .y_label_area_size(72)
            .build_cartesian_2d(-0.6f64..n - 0.4, 0f64..y_max)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&|v| format!("{v:.0}"))
            .y_desc(unit)
            .label_style((FONT, 12))
            .draw()?;
        let (own_span, seed_span) = if with_seed {
            ((-0.4, -0.02), (0.02, 0.4))
        } else {
            ((-0.35, 0.35), (0.0, 0.0))
        };
        let mut points = 0;
        let series_count = bars.iter().map(|b| b.series + 1).max().unwrap_or(0);
        for series in 0..series_count {
            let colour = colour(series);
            let own: Vec<Rectangle<(f64, f64)>> = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.series == series)
                .map(|(i, b)| {
                    let x = i as f64;
                    Rectangle::new(
                        [(x + own_span.0, 0.0), (x + own_span.1, b.value)],
                        colour.filled(),
                    )
                })
                .collect();
            if own.is_empty() {
                continue;
            }
            points += own.len();
            chart.draw_series(own)?;
            let seeds: Vec<[(f64, f64); 2]> = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| b.series == series)
                .filter_map(|(i, b)| {
                    let x = i as f64;
                    Some([(x + seed_span.0, 0.0), (x + seed_span.1, b.seed?)])
                })
                .collect();
            points += seeds.len();
            chart.draw_series(
                seeds
                    .iter()
                    .map(|&corners| Rectangle::new(corners, lighter(colour, 0.6).filled())),
            )?;
            // An outline keeps the lighter bar visible on white.
            chart.draw_series(
                seeds
                    .iter()
                    .map(|&corners| Rectangle::new(corners, colour.stroke_width(1))),
            )?;
        }
        let label_style = TextStyle::from((FONT, 12).into_font())
            .pos(Pos::new(HPos::Center, VPos::Top))
            .color(&BLACK);
        chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
            EmptyElement::at((i as f64, 0.0))
                + Text::new(b.label.clone(), (0, 8), label_style.clone())
        }))?;
        if group_labels {
            let name_style = TextStyle::from((FONT, 13).into_font())
                .pos(Pos::new(HPos::Center, VPos::Top))
                .color(&BLACK);
            let mut names = Vec::new();
            for series in 0..series_count {
                let at: Vec<f64> = bars
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.series == series)
                    .map(|(i, _)| i as f64)
                    .collect();
                if let (Some(first), Some(last)) = (at.first(), at.last()) {
                    let name = series_names.get(series).cloned().unwrap_or_default();
                    names.push(((first + last) / 2.0, name));
                }
            }
            chart.draw_series(names.into_iter().map(|(x, name)| {
                EmptyElement::at((x, 0.0)) + Text::new(name, (0, 26), name_style.clone())
            }))?;
        }
        Ok(Drawn::of(points, &chart))
    });
    chart.legend = legend(series_names, bars);
    chart
}

/// One entry per series that has bars, then the original post's when a bar has one.
fn legend(series_names: &[String], bars: &[Bar]) -> Vec<(String, Swatch)> {
    let series_count = bars.iter().map(|b| b.series + 1).max().unwrap_or(0);
    let mut entries: Vec<(String, Swatch)> = (0..series_count)
        .filter(|&series| bars.iter().any(|b| b.series == series))
        .map(|series| {
            let name = series_names
                .get(series)
                .cloned()
                .unwrap_or_else(|| format!("series {series}"));
            (name, Swatch::Box(colour(series), colour(series)))
        })
        .collect();
    if bars.iter().any(|b| b.seed.is_some()) {
        let grey = RGBColor(110, 110, 110);
        entries.push((
            "original post (lighter, beside)".to_string(),
            Swatch::Box(lighter(grey, 0.6), grey),
        ));
    }
    entries
}
