//! Bandwidth (or IOPS) over time, per job and per cgroup: one SVG drawn here (not by
//! plotters, which cannot give each view its own group, nor dash a line) with a layer per
//! view, and two controls above it that pick the layer. A chart counts bytes or requests
//! per window ([`Measure`]).
//!
//! - **bandwidth** (**IOPS**): a moving average over a smoothing window the reader picks
//!   among [`smoothing::levels`], starting at [`smoothing::default_window`]; the layer says
//!   its window on the chart.
//! - **bytes done** (**requests done**): what each line has completed by each moment.
//! - **share of bytes done** (**of requests done**): each line's share of what all lines
//!   have completed by each moment, where weighted shares converge.
//!
//! Without a script the default layer shows; the page's script ([`SCRIPT`]) switches layers.
//! Bandwidth is in MB/s and bytes in MB of 10⁶ bytes (the terminal's tables print KB/s of
//! 1000 bytes); requests are counted whole, IOPS per second. The legend is beside the chart, outside its plotting area; lines take their
//! colour and dash from [`super::palette`].

use std::fmt::Write;

use ioslice_core::Nanos;
use ioslice_timeline::nice_step;

use super::palette::{hex, style, Swatch};
use crate::smoothing::{self, Level};
use crate::text::{escape, latency_label};

/// The SVG's size and its plotting area (left, top, right, bottom).
const WIDTH: u32 = 960;
const HEIGHT: u32 = 380;
const PLOT: (f64, f64, f64, f64) = (72.0, 44.0, 944.0, 330.0);

/// The script that switches a chart's layers: run once per page.
pub const SCRIPT: &str = "document.querySelectorAll('figure.ts').forEach(function (fig) {\
var view = fig.querySelector('select.ts-view'), win = fig.querySelector('select.ts-window');\
if (!view || !win) return;\
function show() {\
win.disabled = view.value !== 'rate';\
fig.querySelectorAll('g.ts-layer').forEach(function (g) {\
var on = g.getAttribute('data-view') === view.value && (view.value !== 'rate' || g.getAttribute('data-window-ns') === win.value);\
g.style.display = on ? '' : 'none';\
});\
}\
view.addEventListener('change', show);\
win.addEventListener('change', show);\
show();\
});";

/// What a chart's lines count per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Bytes: bandwidth in MB/s, MB done.
    Bytes,
    /// Requests: IOPS, requests done.
    Requests,
}

impl Measure {
    /// The rate view's name in the view control.
    fn rate_view(self) -> &'static str {
        match self {
            Measure::Bytes => "bandwidth",
            Measure::Requests => "IOPS",
        }
    }

    /// What is counted, plural (`bytes`, `requests`).
    fn counted(self) -> &'static str {
        match self {
            Measure::Bytes => "bytes",
            Measure::Requests => "requests",
        }
    }

    /// The rate's unit and the count a unit of it is.
    fn rate_unit(self) -> (&'static str, f64) {
        match self {
            Measure::Bytes => ("MB/s", 1e6),
            Measure::Requests => ("IOPS", 1.0),
        }
    }

    /// The cumulative view's unit, its caption and the count a unit of it is.
    fn done_unit(self) -> (&'static str, &'static str, f64) {
        match self {
            Measure::Bytes => ("MB done", "MB completed since the start of the run", 1e6),
            Measure::Requests => (
                "requests done",
                "requests completed since the start of the run",
                1.0,
            ),
        }
    }
}

/// One named series of counts (bytes or requests) per window.
pub struct Line<'a> {
    /// Legend text.
    pub name: String,
    /// Bytes or requests per window.
    pub counts: &'a [u64],
}

impl<'a> Line<'a> {
    /// A line per `(legend, counts per window)` pair, in order.
    pub fn of_pairs(pairs: &'a [(String, Vec<u64>)]) -> Vec<Self> {
        pairs
            .iter()
            .map(|(name, counts)| Line {
                name: name.clone(),
                counts,
            })
            .collect()
    }
}

/// A chart of lines over time, with its smoothing choices.
pub struct TimeChart<'a> {
    /// The figure's element id.
    pub id: String,
    /// `bandwidth` (per job) or `cgroups`: the `chart-` class of the SVG.
    pub kind: &'static str,
    /// Its title.
    pub title: String,
    /// The recorded window, ns.
    pub window_ns: Nanos,
    /// The lines.
    pub lines: Vec<Line<'a>>,
    /// The scheduler's time slice, ns, when it has one (for the default window).
    pub slice_ns: Option<Nanos>,
    /// What the lines count.
    pub measure: Measure,
    /// Whether each line of the unsmoothed layer carries its counts per window as
    /// `data-counts` (for the overlays, whose few lines a reader or a test may check).
    pub counts_attribute: bool,
}

/// One layer's y axis and values, per line: `(x in s, y)`.
struct Layer {
    view: &'static str,
    window_ns: Nanos,
    caption: String,
    unit: &'static str,
    y_max: f64,
    percent: bool,
    lines: Vec<Vec<(f64, f64)>>,
}

/// The chart as a `<figure>`: controls, SVG, legend.
pub fn render(chart: &TimeChart) -> String {
    let windows = chart
        .lines
        .iter()
        .map(|l| l.counts.len())
        .max()
        .unwrap_or(0);
    if windows == 0 || chart.window_ns == 0 {
        return format!(
            "<p class=\"chart-error\">{} could not be drawn: no completed I/O was recorded</p>\n",
            escape(&chart.title)
        );
    }
    let levels = smoothing::levels(chart.window_ns, windows);
    let default = smoothing::default_window(&levels, chart.slice_ns, chart.lines.len());
    let mut layers: Vec<Layer> = levels
        .iter()
        .map(|level| rate_layer(chart, level))
        .collect();
    layers.push(bytes_layer(chart));
    layers.push(share_layer(chart));
    let run_s = windows as f64 * chart.window_ns as f64 / 1e9;

    let mut out = String::new();
    let _ = write!(
        out,
        "<figure class=\"chart-box ts\" id=\"{}\"><div class=\"ts-controls\"><label>view <select class=\"ts-view\">\
         <option value=\"rate\" selected>{rate}</option><option value=\"bytes\">{counted} done</option>\
         <option value=\"share\">share of {counted} done</option></select></label> \
         <label>smoothing window <select class=\"ts-window\">",
        escape(&chart.id),
        rate = chart.measure.rate_view(),
        counted = chart.measure.counted()
    );
    for level in &levels {
        let _ = write!(
            out,
            "<option value=\"{}\"{}>{}</option>",
            level.span_ns(),
            if *level == default { " selected" } else { "" },
            escape(&level_name(level))
        );
    }
    out.push_str("</select></label></div>");
    let default_points: usize = layers
        .iter()
        .find(|l| l.view == "rate" && l.window_ns == default.span_ns())
        .map_or(0, |l| l.lines.iter().map(Vec::len).sum());
    let _ = write!(
        out,
        "<svg class=\"chart chart-{}\" data-points=\"{default_points}\" data-plot=\"{} {} {} {}\" role=\"img\" aria-label=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         font-family=\"sans-serif\"><rect width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#fff\"/>",
        chart.kind,
        PLOT.0,
        PLOT.1,
        PLOT.2,
        PLOT.3,
        escape(&chart.title)
    );
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"17\">{}</text>",
        (PLOT.0 + PLOT.2) / 2.0,
        escape(&chart.title)
    );
    x_axis(&mut out, run_s);
    for layer in &layers {
        let shown = if layer.view == "rate" {
            layer.window_ns == default.span_ns()
        } else {
            false
        };
        let counts =
            (chart.counts_attribute && layer.view == "rate" && layer.window_ns == chart.window_ns)
                .then_some(&chart.lines);
        draw_layer(&mut out, layer, run_s, shown, counts);
    }
    let _ = write!(
        out,
        "<rect class=\"ts-frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#555\"/></svg>",
        PLOT.0,
        PLOT.1,
        PLOT.2 - PLOT.0,
        PLOT.3 - PLOT.1
    );
    let legend: Vec<(String, Swatch)> = chart
        .lines
        .iter()
        .enumerate()
        .map(|(i, line)| (line.name.clone(), Swatch::Line(i)))
        .collect();
    out.push_str(&super::palette::legend_html(&legend));
    out.push_str("</figure>\n");
    out
}

/// `520 ms (13 × 40 ms)`, or `40 ms (as recorded)`.
fn level_name(level: &Level) -> String {
    if level.windows == 1 {
        format!("{} (as recorded)", latency_label(level.window_ns as f64))
    } else {
        format!(
            "{} ({} × {})",
            latency_label(level.span_ns() as f64),
            level.windows,
            latency_label(level.window_ns as f64)
        )
    }
}

fn rate_layer(chart: &TimeChart, level: &Level) -> Layer {
    let window_s = chart.window_ns as f64 / 1e9;
    let (unit, per_unit) = chart.measure.rate_unit();
    let lines: Vec<Vec<(f64, f64)>> = chart
        .lines
        .iter()
        .map(|line| {
            smoothing::moving_average(
                line.counts,
                level.windows,
                chart.window_ns,
                smoothing::line_points(chart.lines.len()),
            )
            .into_iter()
            .map(|(i, per_s)| ((i as f64 + 0.5) * window_s, per_s / per_unit))
            .collect()
        })
        .collect();
    let caption = if level.windows == 1 {
        format!(
            "{unit} in each {} window as recorded (no smoothing)",
            latency_label(chart.window_ns as f64)
        )
    } else {
        format!(
            "{unit}, moving average over {} ({} windows of {})",
            latency_label(level.span_ns() as f64),
            level.windows,
            latency_label(chart.window_ns as f64)
        )
    };
    Layer {
        view: "rate",
        window_ns: level.span_ns(),
        caption,
        unit,
        y_max: max_of(&lines),
        percent: false,
        lines,
    }
}

/// Every `stride`-th window's value of `values`, and the last, as `(x in s, y)`, for a
/// chart of `lines` lines.
fn sampled(values: &[f64], window_s: f64, lines: usize) -> Vec<(f64, f64)> {
    let n = values.len();
    let step = smoothing::stride(n, 1, smoothing::line_points(lines));
    let mut at: Vec<usize> = (0..n).step_by(step).collect();
    if n > 0 && at.last() != Some(&(n - 1)) {
        at.push(n - 1);
    }
    at.into_iter()
        .map(|i| ((i as f64 + 1.0) * window_s, values[i]))
        .collect()
}

fn bytes_layer(chart: &TimeChart) -> Layer {
    let window_s = chart.window_ns as f64 / 1e9;
    let (unit, caption, per_unit) = chart.measure.done_unit();
    let lines: Vec<Vec<(f64, f64)>> = chart
        .lines
        .iter()
        .map(|line| {
            let done: Vec<f64> = smoothing::cumulative(line.counts)
                .into_iter()
                .map(|b| b as f64 / per_unit)
                .collect();
            sampled(&done, window_s, chart.lines.len())
        })
        .collect();
    Layer {
        view: "bytes",
        window_ns: 0,
        caption: caption.to_string(),
        unit,
        y_max: max_of(&lines),
        percent: false,
        lines,
    }
}

fn share_layer(chart: &TimeChart) -> Layer {
    let window_s = chart.window_ns as f64 / 1e9;
    let counts: Vec<&[u64]> = chart.lines.iter().map(|l| l.counts).collect();
    let lines: Vec<Vec<(f64, f64)>> = smoothing::shares(&counts)
        .into_iter()
        .map(|share| {
            let percent: Vec<f64> = share.into_iter().map(|s| s * 100.0).collect();
            sampled(&percent, window_s, chart.lines.len())
        })
        .collect();
    Layer {
        view: "share",
        window_ns: 0,
        caption: format!(
            "share of all the {} these lines completed since the start",
            chart.measure.counted()
        ),
        unit: match chart.measure {
            Measure::Bytes => "% of bytes done",
            Measure::Requests => "% of requests done",
        },
        y_max: 100.0,
        percent: true,
        lines,
    }
}

fn max_of(lines: &[Vec<(f64, f64)>]) -> f64 {
    lines
        .iter()
        .flatten()
        .map(|&(_, y)| y)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.08
}

/// `v` with as many decimals as `step` needs.
fn tick_text(v: f64, step: f64) -> String {
    let decimals = (-(step.log10().floor())).clamp(0.0, 6.0) as usize;
    format!("{v:.decimals$}")
}

fn x_axis(out: &mut String, run_s: f64) {
    let step = nice_step(run_s, 10.0);
    let mut i = 0u32;
    loop {
        let t = f64::from(i) * step;
        if t > run_s * 1.000_001 || i > 100 {
            break;
        }
        let x = PLOT.0 + t / run_s * (PLOT.2 - PLOT.0);
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"#e6e6e6\"/>\
             <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
            PLOT.1,
            PLOT.3,
            PLOT.3 + 16.0,
            tick_text(t, step)
        );
        i += 1;
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">seconds into the run</text>",
        (PLOT.0 + PLOT.2) / 2.0,
        PLOT.3 + 38.0
    );
}

/// Draw `layer`; with `counts`, each line carries its line's counts per window.
fn draw_layer(
    out: &mut String,
    layer: &Layer,
    run_s: f64,
    shown: bool,
    counts: Option<&Vec<Line>>,
) {
    let _ = write!(
        out,
        "<g class=\"ts-layer\" data-view=\"{}\" data-window-ns=\"{}\"{}>",
        layer.view,
        layer.window_ns,
        if shown { "" } else { " style=\"display:none\"" }
    );
    let _ = write!(
        out,
        "<text class=\"ts-window-label\" x=\"{}\" y=\"36\" text-anchor=\"middle\" font-size=\"13\" fill=\"#333\">{}</text>",
        (PLOT.0 + PLOT.2) / 2.0,
        escape(&layer.caption)
    );
    let step = nice_step(layer.y_max, 6.0);
    let height = PLOT.3 - PLOT.1;
    let mut i = 0u32;
    loop {
        let v = f64::from(i) * step;
        if v > layer.y_max || i > 50 {
            break;
        }
        let y = PLOT.3 - v / layer.y_max * height;
        let _ = write!(
            out,
            "<line x1=\"{}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e6e6e6\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\">{}{}</text>",
            PLOT.0,
            PLOT.2,
            PLOT.0 - 6.0,
            y + 4.0,
            tick_text(v, step),
            if layer.percent { "%" } else { "" }
        );
        i += 1;
    }
    let _ = write!(
        out,
        "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
        (PLOT.1 + PLOT.3) / 2.0,
        layer.unit
    );
    for (index, line) in layer.lines.iter().enumerate() {
        let (colour, dash) = style(index);
        let data = counts
            .and_then(|lines| lines.get(index))
            .map_or_else(String::new, |line| {
                let values: Vec<String> = line.counts.iter().map(u64::to_string).collect();
                format!(" data-counts=\"{}\"", values.join(" "))
            });
        let _ = write!(
            out,
            "<polyline class=\"ts-line\" data-series=\"{index}\"{data} fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"",
            hex(colour),
            dash.dasharray()
                .map_or_else(String::new, |d| format!(" stroke-dasharray=\"{d}\""))
        );
        for (n, &(t, v)) in line.iter().enumerate() {
            let x = PLOT.0 + t / run_s * (PLOT.2 - PLOT.0);
            let y = PLOT.3 - (v / layer.y_max).clamp(0.0, 1.0) * height;
            if n > 0 {
                out.push(' ');
            }
            // Whole pixels: finer than the chart is drawn at, and half the bytes.
            let _ = write!(out, "{x:.0},{y:.0}");
        }
        out.push_str("\"/>");
    }
    out.push_str("</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(bytes: &[u64]) -> String {
        render(&TimeChart {
            id: "c".into(),
            kind: "bandwidth",
            title: "t".into(),
            window_ns: 40_000_000,
            lines: vec![Line {
                name: "a".into(),
                counts: bytes,
            }],
            slice_ns: Some(100_000_000),
            measure: Measure::Bytes,
            counts_attribute: false,
        })
    }

    #[test]
    fn the_default_layer_shows_and_says_its_window() {
        let bytes: Vec<u64> = (0..500)
            .map(|i| if i % 4 == 0 { 4_000_000 } else { 0 })
            .collect();
        let html = chart(&bytes);
        // One line with 100 ms slices: four slices, 400 ms, rounded up to 13 windows.
        let shown: Vec<&str> = html
            .split("<g class=\"ts-layer\"")
            .skip(1)
            .filter(|layer| !layer.contains("display:none"))
            .collect();
        assert_eq!(shown.len(), 1);
        assert!(shown[0].starts_with(" data-view=\"rate\" data-window-ns=\"520000000\">"));
        assert!(shown[0].contains("moving average over 520ms (13 windows of 40ms)"));
        assert!(html.contains("<option value=\"520000000\" selected>520ms (13 × 40ms)</option>"));
        assert_eq!(html.matches("<g class=\"ts-layer\"").count(), 8 + 2);
        assert!(html.contains("<ul class=\"legend\">"));
    }

    #[test]
    fn an_empty_series_is_said() {
        assert!(chart(&[]).contains("could not be drawn"));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(20.0, 10.0), 2.0);
        assert_eq!(nice_step(108.0, 6.0), 20.0);
        assert_eq!(tick_text(2.5, 0.5), "2.5");
        assert_eq!(tick_text(40.0, 20.0), "40");
    }
}
