//! Drawing a timeline: a self-contained HTML fragment (a `<section>` with its style, an SVG,
//! a legend and a small script for zooming), with no external resource.
//!
//! The SVG has the lane labels and the time axis on the outside, and the marks in a nested
//! SVG whose `viewBox` is in microseconds of the run, stretched to the plot's width
//! (`preserveAspectRatio="none"`): zooming and panning change only that `viewBox` (and redraw
//! the axis), so nothing is laid out again. Each mark is one `<rect>` with a `<title>` (the
//! browser's tooltip); a stroke that does not scale keeps instants and short spans at least a
//! pixel wide at any zoom. A mark merged across gaps is drawn paler the less of it its parts
//! cover (from opaque when they cover it all to half opaque when they cover none of it).

use std::fmt::Write as _;

use ioslice_core::Nanos;

use crate::kind::{Band, MarkKind};
use crate::text::{escape, escape_into, instant};
use crate::Timeline;

/// The zoom, pan and axis script; wrapped in a function of the fragment's id, the run's
/// length in microseconds and the layout (the labels' and the plot's widths, the axis'
/// height).
const SCRIPT: &str = include_str!("script.js");

/// The SVG's width, in its own units (it scales to the page's width).
const WIDTH: u32 = 1000;
/// The lane labels' column.
const LABELS: u32 = 150;
/// The plot's width.
const PLOT: u32 = WIDTH - LABELS - 24;
/// Room for the axis above the lanes.
const TOP: u32 = 22;
/// One lane's height.
const LANE: u32 = 28;
/// The longest lane label shown in full.
const LABEL_CHARS: usize = 22;

/// The timeline as a self-contained HTML fragment (a `<section>` with its SVG and script);
/// every element id it uses starts with `id`.
pub fn render_html(timeline: &Timeline, id: &str) -> String {
    let lanes = u32::try_from(timeline.lanes.len())
        .unwrap_or(u32::MAX)
        .max(1);
    let height = lanes.saturating_mul(LANE);
    let total = micros(timeline.duration.max(1_000));
    let attr_id = escape(id);
    let mut out = String::with_capacity(4096 + timeline.marks.len() * 160);

    let _ = write!(
        out,
        "<section id=\"{attr_id}\" class=\"ioslice-tl\">\n<style>{}</style>\n",
        style()
    );
    let _ = writeln!(
        out,
        "<div class=\"ioslice-tl-bar\"><button type=\"button\" id=\"{attr_id}-in\">zoom in</button> \
         <button type=\"button\" id=\"{attr_id}-out\">zoom out</button> \
         <button type=\"button\" id=\"{attr_id}-reset\">reset</button> \
         <span id=\"{attr_id}-range\" class=\"ioslice-tl-range\">0 s – {}</span> \
         <span class=\"ioslice-tl-hint\">wheel to zoom, drag to pan, hover a mark for why</span></div>",
        escape(&crate::text::duration(timeline.duration))
    );
    out.push_str("<p class=\"ioslice-tl-note\">");
    escape_into(&mut out, &timeline.sampling_note());
    if let Some(detail) = &timeline.detail {
        let _ = write!(
            out,
            " <span id=\"{attr_id}-detail-note\">Zoomed in, the marks in view come from a finer record: "
        );
        escape_into(&mut out, &detail.sampling.note(detail.marks.len()));
        out.push_str("</span>");
    }
    out.push_str("</p>\n");

    let _ = writeln!(
        out,
        "<svg id=\"{attr_id}-svg\" class=\"ioslice-tl-svg\" xmlns=\"http://www.w3.org/2000/svg\" \
         viewBox=\"0 0 {WIDTH} {}\" width=\"100%\" role=\"img\">",
        TOP + height + 4
    );
    lane_labels(&mut out, timeline);
    let _ = write!(out, "<g id=\"{attr_id}-axis\" class=\"ioslice-tl-axis\">");
    axis(&mut out, 0.0, total, height);
    out.push_str("</g>\n");
    let _ = writeln!(
        out,
        "<svg id=\"{attr_id}-plot\" class=\"ioslice-tl-plot\" x=\"{LABELS}\" y=\"{TOP}\" \
         width=\"{PLOT}\" height=\"{height}\" viewBox=\"0 0 {} {height}\" \
         preserveAspectRatio=\"none\">",
        number(total)
    );
    let _ = writeln!(out, "<g id=\"{attr_id}-coarse\">");
    marks(&mut out, timeline);
    let _ = writeln!(out, "</g><g id=\"{attr_id}-fine\"></g>");
    out.push_str("</svg>\n</svg>\n");
    legend(&mut out, timeline);
    if let Some(detail) = &timeline.detail {
        let _ = writeln!(
            out,
            "<script type=\"application/octet-stream\" id=\"{attr_id}-detail\" data-marks=\"{}\">{}</script>",
            detail.marks.len(),
            crate::detail::encode(detail, LANE)
        );
    }
    let _ = write!(
        out,
        "<script>(function (ID, TOTAL, LABELS, PLOT, TOP, LANE) {{\n{SCRIPT}}})({}, {}, {LABELS}, \
         {PLOT}, {TOP}, {LANE});</script>\n</section>\n",
        js_string(id),
        number(total)
    );
    out
}

fn style() -> String {
    let mut css = String::from(
        ".ioslice-tl{font:12px system-ui,sans-serif;margin:1em 0}\
         .ioslice-tl-bar button{font:inherit;padding:1px 8px}\
         .ioslice-tl-range{margin:0 1em;font-variant-numeric:tabular-nums}\
         .ioslice-tl-hint,.ioslice-tl-note{color:#666}\
         .ioslice-tl-note{margin:4px 0}\
         .ioslice-tl-svg{display:block;user-select:none;font-size:11px;cursor:grab;\
         background:#fafafa}\
         .ioslice-tl-sep{stroke:#ddd;stroke-width:1}\
         .ioslice-tl-tick{stroke:#e4e4e4;stroke-width:1}\
         .ioslice-tl-axis text{fill:#444;text-anchor:middle}\
         .ioslice-tl-lane{fill:#222;text-anchor:end;dominant-baseline:middle}\
         .ioslice-tl-svg rect{vector-effect:non-scaling-stroke}\
         .ioslice-tl-legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin-top:4px}\
         .ioslice-tl-legend i{display:inline-block;width:12px;height:10px;margin-right:4px;\
         vertical-align:middle;border:1px solid #0003}",
    );
    for kind in MarkKind::ALL {
        let colour = kind.colour();
        let (stroke, width) = match kind.band() {
            Band::Instant => (colour, 2),
            Band::Background => ("#fff", 1),
            Band::Strip | Band::Service | Band::Wait => (colour, 1),
        };
        let _ = write!(
            css,
            ".ioslice-tl-svg rect.tl-{}{{fill:{colour};stroke:{stroke};stroke-width:{width}px}}",
            kind.name()
        );
    }
    css
}

fn lane_labels(out: &mut String, timeline: &Timeline) {
    out.push_str("<g class=\"ioslice-tl-lanes\">");
    for (index, lane) in timeline.lanes.iter().enumerate() {
        let top = TOP
            + u32::try_from(index)
                .unwrap_or(u32::MAX)
                .saturating_mul(LANE);
        let shown: String = if lane.name.chars().count() > LABEL_CHARS {
            let mut cut: String = lane.name.chars().take(LABEL_CHARS - 1).collect();
            cut.push('…');
            cut
        } else {
            lane.name.clone()
        };
        let _ = write!(
            out,
            "<text class=\"ioslice-tl-lane\" x=\"{}\" y=\"{}\"><title>",
            LABELS - 6,
            top + LANE / 2
        );
        escape_into(out, &lane.name);
        if let Some(group) = &lane.group {
            out.push_str(" in ");
            escape_into(out, group);
        }
        out.push_str("</title>");
        escape_into(out, &shown);
        out.push_str("</text>");
        let _ = write!(
            out,
            "<line class=\"ioslice-tl-sep\" x1=\"0\" x2=\"{WIDTH}\" y1=\"{0}\" y2=\"{0}\"/>",
            top + LANE
        );
    }
    out.push_str("</g>\n");
}

/// Ticks for the window `[from, from + width)` microseconds, as the script draws them.
fn axis(out: &mut String, from: f64, width: f64, height: u32) {
    let step = tick_step(width);
    let first = (from / step).ceil() * step;
    let mut index = 0u32;
    loop {
        let at = first + f64::from(index) * step;
        if at > from + width || index > 100 {
            break;
        }
        let x = f64::from(LABELS) + (at - from) / width * f64::from(PLOT);
        let _ = write!(
            out,
            "<line class=\"ioslice-tl-tick\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{}\"/>\
             <text x=\"{x:.1}\" y=\"{}\">{}</text>",
            TOP - 4,
            TOP + height,
            TOP - 8,
            tick_label(at, step)
        );
        index += 1;
    }
}

/// A 1, 2 or 5 times a power of ten, in microseconds, giving about ten ticks over `width`.
fn tick_step(width: f64) -> f64 {
    nice_step(width.max(1e-2), 10.0)
}

/// An axis step of 1, 2 or 5 times a power of ten giving about `ticks` steps over `span`: the
/// timeline's and the report's charts' ticks alike.
pub fn nice_step(span: f64, ticks: f64) -> f64 {
    let raw = (span / ticks).max(1e-9);
    let power = 10f64.powf(raw.log10().floor());
    let mantissa = raw / power;
    let nice = if mantissa <= 1.0 {
        1.0
    } else if mantissa <= 2.0 {
        2.0
    } else if mantissa <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// A tick's time: in seconds for steps of a tenth of a second or more, else in
/// milliseconds, with as many decimals as the step needs.
fn tick_label(at: f64, step: f64) -> String {
    let (value, unit_step, unit) = if step >= 1e5 {
        (at / 1e6, step / 1e6, "s")
    } else {
        (at / 1e3, step / 1e3, "ms")
    };
    let decimals = (-(unit_step.log10().floor())).clamp(0.0, 6.0) as usize;
    format!("{value:.decimals$} {unit}")
}

fn marks(out: &mut String, timeline: &Timeline) {
    let mut order: Vec<(Band, usize)> = timeline
        .marks
        .iter()
        .enumerate()
        .map(|(index, mark)| {
            let band = MarkKind::from_name(&mark.kind).map_or(Band::Instant, MarkKind::band);
            (band, index)
        })
        .collect();
    order.sort_by_key(|&(band, index)| (band, index));
    for (band, index) in order {
        let Some(mark) = timeline.marks.get(index) else {
            continue;
        };
        let (offset, height) = band.geometry(LANE);
        let y = mark.lane.saturating_mul(LANE).saturating_add(offset);
        out.push_str("<rect class=\"tl-");
        escape_into(out, &mark.kind);
        let _ = write!(
            out,
            "\" x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{height}\"",
            micros_text(mark.start),
            micros_text(mark.end.saturating_sub(mark.start).max(1)),
        );
        if mark.coverage < 1000 {
            let opacity = 0.5 + 0.5 * f64::from(mark.coverage) / 1000.0;
            let _ = write!(out, " fill-opacity=\"{opacity:.2}\"");
        }
        out.push_str("><title>");
        escape_into(out, &mark.label);
        out.push_str(" (at ");
        out.push_str(&instant(mark.start));
        out.push_str(")</title></rect>\n");
    }
}

fn legend(out: &mut String, timeline: &Timeline) {
    out.push_str("<div class=\"ioslice-tl-legend\">");
    for kind in timeline.kinds() {
        let _ = write!(
            out,
            "<span><i style=\"background:{}\"></i>{}</span>",
            kind.colour(),
            escape(kind.describe())
        );
    }
    out.push_str("</div>\n");
}

fn micros(nanos: Nanos) -> f64 {
    nanos as f64 / 1e3
}

/// Nanoseconds as microseconds with up to three decimals, exactly.
fn micros_text(nanos: Nanos) -> String {
    let whole = nanos / 1_000;
    let part = nanos % 1_000;
    if part == 0 {
        whole.to_string()
    } else {
        let digits = format!("{part:03}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}

fn number(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

/// `text` as a JavaScript string literal that is safe inside a `<script>` element.
fn js_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_exact() {
        assert_eq!(micros_text(0), "0");
        assert_eq!(micros_text(1_500), "1.5");
        assert_eq!(micros_text(123_456_789), "123456.789");
        assert_eq!(number(3_000_000.0), "3000000");
        assert_eq!(number(1.25), "1.25");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(3_000_000.0), 500_000.0);
        assert_eq!(tick_step(30_000_000.0), 5_000_000.0);
        assert_eq!(tick_label(1_500_000.0, 500_000.0), "1.5 s");
        assert_eq!(tick_label(20_000.0, 10_000.0), "20 ms");
        assert_eq!(tick_label(15_000_250.0, 50.0), "15000.25 ms");
    }

    #[test]
    fn ids_are_safe_in_scripts() {
        assert_eq!(js_string("a\"</script>"), "\"a\\\"\\u003c/script\\u003e\"");
    }
}
