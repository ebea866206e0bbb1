//! The charts, each an inline SVG drawn by plotters into a string: bandwidth over time
//! ([`timeseries`]), latency percentiles and CDFs ([`latency`]), and a comparison's bars
//! ([`bars`]). This module owns what they share: the drawing call, the palette, and the
//! `<svg>` element's marks (`class="chart"` and `data-points="N"`, the number of data
//! points or bars drawn, which a test reads to know a chart is not empty).

pub mod bars;
pub mod latency;
pub mod timeseries;

use std::error::Error;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::text::escape;
pub use crate::text::latency_label;

/// A drawn chart: its SVG markup and how many data points it drew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    /// The `<svg>` element, marked.
    pub svg: String,
    /// Data points (line vertices or bars) drawn.
    pub points: usize,
}

/// Chart width, pixels (the SVG scales down with the page).
pub const WIDTH: u32 = 960;
/// Chart height, pixels.
pub const HEIGHT: u32 = 380;

/// Line and bar colours, in series order; they repeat past the end.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of series `index`.
pub fn colour(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// `colour` mixed with white: `amount` 0 is the colour, 1 is white; opaque, so that
/// overlapping shapes do not blend into other hues.
pub fn lighter(colour: RGBColor, amount: f64) -> RGBColor {
    let mix =
        |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount.clamp(0.0, 1.0)).round() as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// The font of every label (the browser picks the face; see the crate documentation).
pub const FONT: &str = "sans-serif";

/// What a drawing function returns.
pub type DrawResult = Result<usize, Box<dyn Error>>;

/// Draw a chart of `size` with `draw`, which returns the number of points it drew, and mark
/// the `<svg>` with `kind` (`bandwidth`, `cgroups`, `percentiles`, `cdf`, `bars`). A chart
/// that fails to draw becomes a paragraph saying why.
pub fn draw(
    kind: &str,
    title: &str,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult,
) -> Chart {
    let mut markup = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut markup, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| Box::new(e) as Box<dyn Error>)
            .and_then(|()| draw(&root))
            .and_then(|points| {
                root.present()?;
                Ok(points)
            })
    };
    match result {
        Ok(points) => {
            let marks = format!(
                "<svg class=\"chart chart-{kind}\" data-points=\"{points}\" role=\"img\" aria-label=\"{}\" ",
                escape(title)
            );
            Chart {
                svg: markup.replacen("<svg ", &marks, 1),
                points,
            }
        }
        Err(error) => Chart {
            svg: format!(
                "<p class=\"chart-error\">{} could not be drawn: {}</p>",
                escape(title),
                escape(&error.to_string())
            ),
            points: 0,
        },
    }
}

/// Draw `chart`'s legend at `position`, in the same box on every chart.
pub fn legend<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()?;
    Ok(0)
}

/// A log axis's range around `[min, max]` (both > 0), widened to whole powers of ten so
/// that its ticks fall on round values (plotters crowds the labels of a range that stops
/// just past a power of ten).
pub fn log_range(min: f64, max: f64) -> std::ops::Range<f64> {
    let min = min.max(1e-3);
    let max = max.max(min);
    let low = 10f64.powf(min.log10().floor());
    let mut high = 10f64.powf(max.log10().ceil());
    if high <= low {
        high = low * 10.0;
    }
    low..high
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ranges_cover_whole_powers_of_ten() {
        assert_eq!(log_range(12_000.0, 180_000.0), 10_000.0..1_000_000.0);
        assert_eq!(log_range(100.0, 100.0), 100.0..1000.0);
        assert_eq!(log_range(0.0, 5.0), 0.001..10.0);
    }

    #[test]
    fn a_drawn_chart_is_marked_with_its_points() {
        let chart = draw("test", "a <test>", (200, 100), |_| Ok(7));
        assert!(chart
            .svg
            .starts_with("<svg class=\"chart chart-test\" data-points=\"7\" role=\"img\" aria-label=\"a &lt;test&gt;\" width=\"200\""));
        assert_eq!(chart.points, 7);
        let failed = draw("test", "t", (200, 100), |_| Err("no data".into()));
        assert_eq!(failed.points, 0);
        assert!(failed.svg.contains("could not be drawn: no data"));
    }
}
