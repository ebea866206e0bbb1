//! How series are told apart: twenty colours that stay distinct on white, then, past twenty
//! series, the same colours dashed, dotted and dash-dotted, so that 80 series each get a
//! style of their own; and the legend, an HTML list beside the chart (never over its data)
//! whose swatches are drawn as the series are.

use std::fmt::Write;

use plotters::style::RGBColor;

use crate::text::escape;

/// Line and bar colours, in series order: Tableau's ten, then ten darker or more saturated
/// hues that differ from them and from each other.
pub const PALETTE: [RGBColor; 20] = [
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
    RGBColor(0, 0, 0),
    RGBColor(0, 0, 140),
    RGBColor(130, 0, 60),
    RGBColor(0, 100, 0),
    RGBColor(255, 215, 0),
    RGBColor(90, 40, 0),
    RGBColor(240, 0, 240),
    RGBColor(0, 128, 128),
    RGBColor(160, 160, 255),
    RGBColor(150, 255, 150),
];

/// How a line is stroked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// A solid line (the first twenty series).
    Solid,
    /// Dashes.
    Dashed,
    /// Dots.
    Dotted,
    /// Dash, dot.
    DashDot,
}

impl Dash {
    const ALL: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::DashDot];

    /// SVG's `stroke-dasharray`, `None` for a solid line.
    pub fn dasharray(self) -> Option<&'static str> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some("8 4"),
            Dash::Dotted => Some("2 3"),
            Dash::DashDot => Some("9 3 2 3"),
        }
    }

    /// plotters' dash: (dash length, gap), px.
    pub fn plotters(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((8, 4)),
            Dash::Dotted => Some((2, 3)),
            Dash::DashDot => Some((6, 3)),
        }
    }
}

/// Series `index`'s colour and dash: colour `index % 20`, dash `index / 20` (repeating past
/// 80 series).
pub fn style(index: usize) -> (RGBColor, Dash) {
    (
        PALETTE[index % PALETTE.len()],
        Dash::ALL[(index / PALETTE.len()) % Dash::ALL.len()],
    )
}

/// The colour of series `index` (bars and areas, which are not dashed).
pub fn colour(index: usize) -> RGBColor {
    style(index).0
}

/// `#rrggbb`.
pub fn hex(colour: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", colour.0, colour.1, colour.2)
}

/// `colour` mixed with white: `amount` 0 is the colour, 1 is white; opaque, so that
/// overlapping shapes do not blend into other hues.
pub fn lighter(colour: RGBColor, amount: f64) -> RGBColor {
    let mix =
        |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount.clamp(0.0, 1.0)).round() as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// What a legend entry's swatch shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swatch {
    /// Series `index`'s line (its colour and dash).
    Line(usize),
    /// A filled box of a colour, with an outline of another.
    Box(RGBColor, RGBColor),
}

/// The legend as an HTML list (`<ul class="legend">`), for beside the chart.
pub fn legend_html(entries: &[(String, Swatch)]) -> String {
    let mut out = String::from("<ul class=\"legend\">");
    for (name, swatch) in entries {
        out.push_str("<li><svg width=\"26\" height=\"12\" aria-hidden=\"true\">");
        match swatch {
            Swatch::Line(index) => {
                let (colour, dash) = style(*index);
                let _ = write!(
                    out,
                    "<line x1=\"1\" y1=\"6\" x2=\"25\" y2=\"6\" stroke=\"{}\" stroke-width=\"2.5\"{}/>",
                    hex(colour),
                    dash.dasharray()
                        .map_or_else(String::new, |d| format!(" stroke-dasharray=\"{d}\""))
                );
            }
            Swatch::Box(fill, stroke) => {
                let _ = write!(
                    out,
                    "<rect x=\"6\" y=\"1\" width=\"14\" height=\"10\" fill=\"{}\" stroke=\"{}\"/>",
                    hex(*fill),
                    hex(*stroke)
                );
            }
        }
        let _ = write!(out, "</svg>{}</li>", escape(name));
    }
    out.push_str("</ul>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rough perceptual distance (the "redmean" weighting of RGB).
    fn distance(a: RGBColor, b: RGBColor) -> f64 {
        let r = (f64::from(a.0) + f64::from(b.0)) / 2.0;
        let (dr, dg, db) = (
            f64::from(a.0) - f64::from(b.0),
            f64::from(a.1) - f64::from(b.1),
            f64::from(a.2) - f64::from(b.2),
        );
        ((2.0 + r / 256.0) * dr * dr + 4.0 * dg * dg + (2.0 + (255.0 - r) / 256.0) * db * db).sqrt()
    }

    #[test]
    fn the_twenty_colours_are_distinct_and_visible_on_white() {
        for (i, &a) in PALETTE.iter().enumerate() {
            assert!(
                distance(a, RGBColor(255, 255, 255)) > 150.0,
                "colour {i} is too pale"
            );
            for (j, &b) in PALETTE.iter().enumerate().skip(i + 1) {
                assert!(distance(a, b) > 100.0, "colours {i} and {j} are too alike");
            }
        }
    }

    #[test]
    fn eighty_series_have_eighty_styles() {
        let styles: Vec<(RGBColor, Dash)> = (0..80).map(style).collect();
        for (i, a) in styles.iter().enumerate() {
            assert!(styles[i + 1..].iter().all(|b| b != a), "style {i} repeats");
        }
        assert_eq!(style(3), (PALETTE[3], Dash::Solid));
        assert_eq!(style(23), (PALETTE[3], Dash::Dashed));
        assert_eq!(style(80), style(0));
    }

    #[test]
    fn the_legend_draws_each_series_as_drawn() {
        let html = legend_html(&[
            ("a<".to_string(), Swatch::Line(0)),
            ("b".to_string(), Swatch::Line(20)),
        ]);
        assert!(html.contains("stroke=\"#1f77b4\" stroke-width=\"2.5\"/>"));
        assert!(html.contains("stroke-dasharray=\"8 4\"/></svg>b</li>"));
        assert!(html.contains("a&lt;</li>"));
    }
}
