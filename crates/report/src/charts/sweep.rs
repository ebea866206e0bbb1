//! A sweep's charts, as fio-plot draws a study: lines over one axis with a line per value
//! of the others ([`lines`]), and bars over two axes drawn in an oblique 3D projection
//! ([`bars3d`]). Each value is the mean over seeds; the seeds' spread (min to max) is an
//! error bar on each line point and a whisker on each bar. A chart of lines carries their
//! means as `data-values` ([`values_attribute`]), for a reader or a test to check.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{colour, draw, lighter, style, Chart, Drawn, Swatch, FONT, HEIGHT, WIDTH};

/// One value over seeds: the mean and the spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Mean over seeds.
    pub mean: f64,
    /// Smallest seed's value.
    pub min: f64,
    /// Largest seed's value.
    pub max: f64,
}

impl Spread {
    /// The mean, min and max of `values`; `None` for none.
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        Some(Spread {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// One line: its name and a value per x label (`None` where the point is missing).
pub struct SweepLine {
    /// Legend name.
    pub name: String,
    /// One per x label.
    pub values: Vec<Option<Spread>>,
}

/// The largest max of every value, at least a little above 0.
fn top(values: impl Iterator<Item = Spread>) -> f64 {
    values.map(|s| s.max).fold(0.0, f64::max).max(1e-3) * 1.08
}

/// A tick label with as many decimals as a scale up to `top` needs.
fn tick(value: f64, top: f64) -> String {
    match top {
        t if t < 10.0 => format!("{value:.2}"),
        t if t < 100.0 => format!("{value:.1}"),
        _ => format!("{value:.0}"),
    }
}

/// Lines over `x_labels` (the axis `x_name`), one per entry of `lines`, with min–max bars.
pub fn lines(
    title: &str,
    unit: &str,
    x_name: &str,
    x_labels: &[String],
    lines: &[SweepLine],
) -> Chart {
    let mut chart = draw("sweep-lines", title, (WIDTH, HEIGHT), |root| {
        if x_labels.is_empty() || lines.is_empty() {
            return Err("the sweep has no points".into());
        }
        let y_max = top(lines
            .iter()
            .flat_map(|l| l.values.iter().flatten().copied()));
        let n = x_labels.len() as f64;
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(72)
            .build_cartesian_2d(-0.3f64..n - 0.7, 0f64..y_max)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|v| tick(*v, y_max))
            .y_desc(unit)
            .x_desc(x_name)
            .label_style((FONT, 12))
            .draw()?;
        let label_style = TextStyle::from((FONT, 12).into_font())
            .pos(Pos::new(HPos::Center, VPos::Top))
            .color(&BLACK);
        chart.draw_series(x_labels.iter().enumerate().map(|(i, label)| {
            EmptyElement::at((i as f64, 0.0))
                + Text::new(label.clone(), (0, 6), label_style.clone())
        }))?;
        let mut points = 0;
        for (index, line) in lines.iter().enumerate() {
            let (colour, dash) = style(index);
            let at: Vec<(f64, Spread)> = line
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| Some((i as f64, (*v)?)))
                .collect();
            let path: Vec<(f64, f64)> = at.iter().map(|(x, s)| (*x, s.mean)).collect();
            let stroke = colour.stroke_width(2);
            match dash.plotters() {
                Some((size, spacing)) => {
                    chart.draw_series(DashedLineSeries::new(
                        path.clone(),
                        size,
                        spacing,
                        stroke,
                    ))?;
                }
                None => {
                    chart.draw_series(LineSeries::new(path.clone(), stroke))?;
                }
            }
            chart.draw_series(path.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            let whiskers = at.iter().filter(|(_, s)| s.max > s.min).flat_map(|(x, s)| {
                [
                    PathElement::new(vec![(*x, s.min), (*x, s.max)], colour.stroke_width(1)),
                    PathElement::new(
                        vec![(x - 0.04, s.min), (x + 0.04, s.min)],
                        colour.stroke_width(1),
                    ),
                    PathElement::new(
                        vec![(x - 0.04, s.max), (x + 0.04, s.max)],
                        colour.stroke_width(1),
                    ),
                ]
            });
            chart.draw_series(whiskers)?;
            points += at.len();
        }
        Ok(Drawn::of(points, &chart))
    });
    chart.legend = lines
        .iter()
        .enumerate()
        .map(|(i, line)| (line.name.clone(), Swatch::Line(i)))
        .collect();
    if chart.points > 0 {
        let marks = format!("<svg data-values=\"{}\" ", values_attribute(lines));
        chart.svg = chart.svg.replacen("<svg ", &marks, 1);
    }
    chart
}

/// The lines' means as the chart's `data-values`: a line's values separated by spaces, `-`
/// where a point is missing, lines separated by `;`, in legend order.
pub fn values_attribute(lines: &[SweepLine]) -> String {
    lines
        .iter()
        .map(|line| {
            line.values
                .iter()
                .map(|v| v.map_or_else(|| "-".to_string(), |s| s.mean.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// The bars of a 3D chart: `cells[z][x]` over `x_labels` (across) and `z_labels` (into the
/// page).
pub struct Grid<'a> {
    /// The across axis's name and values.
    pub x: (&'a str, &'a [String]),
    /// The depth axis's name and values.
    pub z: (&'a str, &'a [String]),
    /// One row per depth value, one cell per across value.
    pub cells: &'a [Vec<Option<Spread>>],
}

/// Pixels of the oblique projection.
struct Projection {
    origin: (f64, f64),
    column: f64,
    depth: (f64, f64),
    height: f64,
    y_max: f64,
}

impl Projection {
    fn at(&self, x: f64, z: f64, y: f64) -> (i32, i32) {
        let px = self.origin.0 + x * self.column + z * self.depth.0;
        let py = self.origin.1 - z * self.depth.1 - y / self.y_max * self.height;
        (px.round() as i32, py.round() as i32)
    }
}

/// Bars over two axes in an oblique projection, a row per depth value in its own colour,
/// each bar's min–max over seeds as a whisker on its front face.
pub fn bars3d(title: &str, unit: &str, grid: &Grid) -> Chart {
    let (x_name, x_labels) = grid.x;
    let (z_name, z_labels) = grid.z;
    let mut chart = draw("sweep-bars3d", title, (WIDTH, 460), |root| {
        if x_labels.is_empty() || z_labels.is_empty() {
            return Err("the sweep has no points".into());
        }
        let y_max = top(grid
            .cells
            .iter()
            .flat_map(|row| row.iter().flatten().copied()));
        let depth_room = 160.0;
        let column = (f64::from(WIDTH) - 260.0 - depth_room) / x_labels.len() as f64;
        let depth = depth_room / z_labels.len() as f64;
        let projection = Projection {
            origin: (110.0, 400.0),
            column,
            depth: (depth, depth * 0.6),
            height: 400.0 - 60.0 - depth_room * 0.6,
            y_max,
        };
        let text = |size: i32, h: HPos| {
            TextStyle::from((FONT, size).into_font())
                .pos(Pos::new(h, VPos::Center))
                .color(&BLACK)
        };
        root.draw(&Text::new(
            title.to_string(),
            ((WIDTH / 2) as i32, 14),
            text(18, HPos::Center),
        ))?;
        // The floor's outline and the value axis with its ticks.
        let (nx, nz) = (x_labels.len() as f64, z_labels.len() as f64);
        let floor = [(0.0, 0.0), (nx, 0.0), (nx, nz), (0.0, nz), (0.0, 0.0)];
        let grey = RGBColor(150, 150, 150);
        root.draw(&PathElement::new(
            floor
                .iter()
                .map(|&(x, z)| projection.at(x, z, 0.0))
                .collect::<Vec<_>>(),
            grey.stroke_width(1),
        ))?;
        for step in 0..=4 {
            let value = y_max / 1.08 * f64::from(step) / 4.0;
            let (bx, by) = projection.at(0.0, nz, value);
            let (fx, fy) = projection.at(0.0, 0.0, value);
            let (rx, ry) = projection.at(nx, nz, value);
            root.draw(&PathElement::new(
                vec![(fx, fy), (bx, by), (rx, ry)],
                lighter(grey, 0.5).stroke_width(1),
            ))?;
            root.draw(&Text::new(
                tick(value, y_max),
                (fx - 6, fy),
                text(11, HPos::Right),
            ))?;
        }
        root.draw(&Text::new(unit.to_string(), (12, 40), text(12, HPos::Left)))?;
        for (i, label) in x_labels.iter().enumerate() {
            let (px, py) = projection.at(i as f64 + 0.5, 0.0, 0.0);
            root.draw(&Text::new(
                label.clone(),
                (px, py + 12),
                text(12, HPos::Center),
            ))?;
        }
        let (px, py) = projection.at(nx / 2.0, 0.0, 0.0);
        root.draw(&Text::new(
            x_name.to_string(),
            (px, py + 32),
            text(13, HPos::Center),
        ))?;
        for (k, label) in z_labels.iter().enumerate() {
            let (px, py) = projection.at(nx, k as f64 + 0.5, 0.0);
            root.draw(&Text::new(
                label.clone(),
                (px + 8, py),
                text(12, HPos::Left),
            ))?;
        }
        let (px, py) = projection.at(nx, nz, 0.0);
        root.draw(&Text::new(
            z_name.to_string(),
            (px + 8, py - 14),
            text(13, HPos::Left),
        ))?;
        let mut points = 0;
        // Back rows first, so that the front rows hide them.
        for (k, row) in grid.cells.iter().enumerate().rev() {
            let colour = colour(k);
            for (i, cell) in row.iter().enumerate() {
                let Some(spread) = cell else { continue };
                draw_bar(root, &projection, (i as f64, k as f64), *spread, colour)?;
                points += 1;
            }
        }
        Ok(Drawn {
            points,
            plot: (
                projection.at(0.0, 0.0, 0.0).0,
                projection.at(0.0, nz, y_max).1,
                projection.at(nx, nz, 0.0).0,
                projection.at(0.0, 0.0, 0.0).1,
            ),
        })
    });
    chart.legend = z_labels
        .iter()
        .enumerate()
        .map(|(k, label)| {
            (
                format!("{z_name}={label}"),
                Swatch::Box(colour(k), colour(k)),
            )
        })
        .collect();
    chart
}

type Area<'a, 'b> = plotters::drawing::DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// One bar: its front face, its side and its top, and the seeds' whisker on the front.
fn draw_bar(
    root: &Area,
    projection: &Projection,
    (x, z): (f64, f64),
    spread: Spread,
    colour: RGBColor,
) -> Result<(), Box<dyn std::error::Error>> {
    let (x0, x1, z0, z1, h) = (x + 0.15, x + 0.85, z + 0.15, z + 0.85, spread.mean);
    let p = |x: f64, z: f64, y: f64| projection.at(x, z, y);
    let outline = lighter(colour, 0.0).stroke_width(1);
    let faces = [
        (
            vec![p(x0, z0, 0.0), p(x1, z0, 0.0), p(x1, z0, h), p(x0, z0, h)],
            colour,
        ),
        (
            vec![p(x1, z0, 0.0), p(x1, z1, 0.0), p(x1, z1, h), p(x1, z0, h)],
            lighter(colour, 0.25),
        ),
        (
            vec![p(x0, z0, h), p(x1, z0, h), p(x1, z1, h), p(x0, z1, h)],
            lighter(colour, 0.45),
        ),
    ];
    for (corners, fill) in faces {
        root.draw(&Polygon::new(corners.clone(), fill.filled()))?;
        let mut closed = corners;
        closed.push(closed[0]);
        root.draw(&PathElement::new(closed, outline))?;
    }
    if spread.max > spread.min {
        let mid = (x0 + x1) / 2.0;
        let black = BLACK.stroke_width(1);
        let (lo, hi) = (p(mid, z0, spread.min), p(mid, z0, spread.max));
        root.draw(&PathElement::new(vec![lo, hi], black))?;
        root.draw(&PathElement::new(
            vec![(lo.0 - 4, lo.1), (lo.0 + 4, lo.1)],
            black,
        ))?;
        root.draw(&PathElement::new(
            vec![(hi.0 - 4, hi.1), (hi.0 + 4, hi.1)],
            black,
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(mean: f64) -> Option<Spread> {
        Spread::of(&[mean - 1.0, mean, mean + 1.0])
    }

    #[test]
    fn spreads_are_mean_min_and_max() {
        assert_eq!(
            Spread::of(&[1.0, 5.0, 3.0]),
            Some(Spread {
                mean: 3.0,
                min: 1.0,
                max: 5.0
            })
        );
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn lines_and_bars_draw_every_point() {
        let labels: Vec<String> = ["1", "2", "4"].iter().map(|s| s.to_string()).collect();
        let rows = vec![
            vec![spread(10.0), spread(20.0), None],
            vec![spread(12.0), spread(25.0), spread(30.0)],
        ];
        let lines_chart = lines(
            "bw",
            "MiB/s",
            "iodepth",
            &labels,
            &[
                SweepLine {
                    name: "cfq".into(),
                    values: rows[0].clone(),
                },
                SweepLine {
                    name: "bfq".into(),
                    values: rows[1].clone(),
                },
            ],
        );
        assert_eq!(lines_chart.points, 5);
        assert!(lines_chart.svg.contains("chart-sweep-lines"));
        assert_eq!(lines_chart.legend.len(), 2);
        let names: Vec<String> = vec!["cfq".into(), "bfq".into()];
        let bars = bars3d(
            "bw",
            "MiB/s",
            &Grid {
                x: ("iodepth", &labels),
                z: ("sched", &names),
                cells: &rows,
            },
        );
        assert_eq!(bars.points, 5);
        assert!(
            bars.svg.contains("data-points=\"5\""),
            "{}",
            &bars.svg[..200]
        );
        assert!(bars.svg.contains("<polygon"));
    }
}
