//! The charts, each an inline SVG drawn by plotters into a string: bandwidth over time
//! ([`timeseries`]), latency percentiles and CDFs ([`latency`]), and a comparison's bars
//! ([`bars`]). This module owns what they share: the drawing call, the `<svg>` element's
//! marks (`class="chart"`, `data-points="N"`, the number of data points or bars drawn, which
//! a test reads to know a chart is not empty, and `data-plot="X0 Y0 X1 Y1"`, the plotting
//! area in the SVG's pixels), and the figure that puts the legend beside the chart, outside
//! its plotting area ([`palette`] owns the colours, dashes and legend).

pub mod bars;
pub mod latency;
pub mod palette;
pub mod sweep;
pub mod timeseries;

use std::error::Error;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::text::escape;
pub use crate::text::latency_label;
pub use palette::{colour, lighter, style, Swatch};

/// A drawn chart: its SVG markup, how many data points it drew, and its legend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart {
    /// The `<svg>` element, marked.
    pub svg: String,
    /// Data points (line vertices or bars) drawn.
    pub points: usize,
    /// The legend's entries, drawn beside the chart.
    pub legend: Vec<(String, Swatch)>,
}

impl Chart {
    /// The chart and its legend side by side (`<figure class="chart-box">`).
    pub fn figure(&self) -> String {
        figure(&self.svg, &self.legend, "")
    }
}

/// `svg` with its legend beside it and `caption` under it, in one `<figure>`.
pub fn figure(svg: &str, legend: &[(String, Swatch)], caption: &str) -> String {
    let mut out = String::from("<figure class=\"chart-box\">");
    out.push_str(svg);
    if !legend.is_empty() {
        out.push_str(&palette::legend_html(legend));
    }
    if !caption.is_empty() {
        out.push_str("<figcaption class=\"note\">");
        out.push_str(&escape(caption));
        out.push_str("</figcaption>");
    }
    out.push_str("</figure>\n");
    out
}

/// What a drawing function drew: its points and its plotting area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drawn {
    /// Data points drawn.
    pub points: usize,
    /// The plotting area, SVG pixels: left, top, right, bottom.
    pub plot: (i32, i32, i32, i32),
}

impl Drawn {
    /// `points` drawn in `chart`'s plotting area.
    pub fn of<'a, X, Y>(
        points: usize,
        chart: &ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    ) -> Self
    where
        X: plotters::coord::ranged1d::Ranged,
        Y: plotters::coord::ranged1d::Ranged,
    {
        let (x, y) = chart.plotting_area().get_pixel_range();
        Drawn {
            points,
            plot: (x.start, y.start, x.end, y.end),
        }
    }
}

/// Chart width, pixels (the SVG scales down with the page).
pub const WIDTH: u32 = 960;
/// Chart height, pixels.
pub const HEIGHT: u32 = 380;

/// The font of every label (the browser picks the face; see the crate documentation).
pub const FONT: &str = "sans-serif";

/// What a drawing function returns.
pub type DrawResult = Result<Drawn, Box<dyn Error>>;

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
            .and_then(|drawn| {
                root.present()?;
                Ok(drawn)
            })
    };
    match result {
        Ok(Drawn { points, plot }) => {
            let marks = format!(
                "<svg class=\"chart chart-{kind}\" data-points=\"{points}\" data-plot=\"{} {} {} {}\" role=\"img\" aria-label=\"{}\" ",
                plot.0,
                plot.1,
                plot.2,
                plot.3,
                escape(title)
            );
            Chart {
                svg: markup.replacen("<svg ", &marks, 1),
                points,
                legend: Vec::new(),
            }
        }
        Err(error) => Chart {
            svg: format!(
                "<p class=\"chart-error\">{} could not be drawn: {}</p>",
                escape(title),
                escape(&error.to_string())
            ),
            points: 0,
            legend: Vec::new(),
        },
    }
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
        let chart = draw("test", "a <test>", (200, 100), |_| {
            Ok(Drawn {
                points: 7,
                plot: (10, 5, 190, 80),
            })
        });
        assert!(chart
            .svg
            .starts_with("<svg class=\"chart chart-test\" data-points=\"7\" data-plot=\"10 5 190 80\" role=\"img\" aria-label=\"a &lt;test&gt;\" width=\"200\""));
        assert_eq!(chart.points, 7);
        let failed = draw("test", "t", (200, 100), |_| Err("no data".into()));
        assert_eq!(failed.points, 0);
        assert!(failed.svg.contains("could not be drawn: no data"));
    }
}
