//! The sweep's HTML page: per figure (total bandwidth, IOPS, p99 completion latency), the
//! lines over the first axis with a line per value of the others, and, with two axes or
//! more, the bars over the first two in 3D (one chart per value of any further axes); each
//! value is the mean over seeds with the min–max spread drawn. Then every point in a table.
//! The charts are the report's ([`ioslice_report::charts::sweep`]).

use std::collections::HashMap;
use std::fmt::Write;

use ioslice_report::charts::sweep::{bars3d, lines, Grid, Spread, SweepLine};
use ioslice_report::text::escape;

use super::figures::PointResult;
use super::store::Merged;

/// A figure the page charts: its title, unit and how to read it from a point.
struct Figure {
    title: &'static str,
    unit: &'static str,
    value: fn(&PointResult) -> f64,
}

const FIGURES: [Figure; 3] = [
    Figure {
        title: "Total bandwidth",
        unit: "MiB/s",
        value: |p| p.total.bw_bytes as f64 / 1_048_576.0,
    },
    Figure {
        title: "Total IOPS",
        unit: "IOPS",
        value: |p| p.total.iops as f64,
    },
    Figure {
        title: "p99 completion latency",
        unit: "ms",
        value: |p| p.total.clat_ns.p99 as f64 / 1e6,
    },
];

/// Axis values of a point, in axis order.
fn key(point: &PointResult) -> Vec<String> {
    point
        .axes
        .values()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// The page.
pub fn render(merged: &Merged) -> String {
    let definition = merged.definition;
    let axes = &definition.axes;
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<p>Job file <code>{}</code>; {} axes; seeds {:?}; {} points. Spread over seeds: {}.</p>",
        escape(&definition.job_file),
        axes.len(),
        definition.seeds,
        merged.points.len(),
        escape(merged.spread)
    );
    if !merged.missing.is_empty() {
        let _ = writeln!(
            body,
            "<p class=\"missing\">{} points are missing (not run yet), e.g. {}.</p>",
            merged.missing.len(),
            escape(&merged.missing[0])
        );
    }
    let mut by_key: HashMap<Vec<String>, Vec<&PointResult>> = HashMap::new();
    for point in &merged.points {
        by_key.entry(key(point)).or_default().push(point);
    }
    let spread = |values: &[String], figure: &Figure| {
        by_key.get(values).and_then(|points| {
            Spread::of(&points.iter().map(|p| (figure.value)(p)).collect::<Vec<_>>())
        })
    };
    let one = vec!["all".to_string()];
    let (x_name, x_values) = axes
        .first()
        .map_or(("point", &one), |a| (a.name.as_str(), &a.values));
    let rest = combinations(axes.iter().skip(1).map(|a| a.values.as_slice()));
    for figure in &FIGURES {
        let _ = writeln!(body, "<h2>{} ({})</h2>", figure.title, figure.unit);
        let series: Vec<SweepLine> = rest
            .iter()
            .map(|others| SweepLine {
                name: line_name(axes.iter().skip(1).map(|a| a.name.as_str()), others),
                values: x_values
                    .iter()
                    .map(|x| {
                        let mut values = Vec::new();
                        if !axes.is_empty() {
                            values.push(x.clone());
                        }
                        values.extend(others.iter().cloned());
                        spread(&values, figure)
                    })
                    .collect(),
            })
            .collect();
        body.push_str(&lines(figure.title, figure.unit, x_name, x_values, &series).figure());
        if axes.len() >= 2 {
            let z = &axes[1];
            for further in combinations(axes.iter().skip(2).map(|a| a.values.as_slice())) {
                let cells: Vec<Vec<Option<Spread>>> = z
                    .values
                    .iter()
                    .map(|zv| {
                        x_values
                            .iter()
                            .map(|x| {
                                let mut values = vec![x.clone(), zv.clone()];
                                values.extend(further.iter().cloned());
                                spread(&values, figure)
                            })
                            .collect()
                    })
                    .collect();
                let suffix = line_name(axes.iter().skip(2).map(|a| a.name.as_str()), &further);
                let title = if further.is_empty() {
                    figure.title.to_string()
                } else {
                    format!("{} at {suffix}", figure.title)
                };
                let grid = Grid {
                    x: (x_name, x_values),
                    z: (&z.name, &z.values),
                    cells: &cells,
                };
                body.push_str(&bars3d(&title, figure.unit, &grid).figure());
            }
        }
    }
    body.push_str(&table(merged));
    ioslice_report::html::standalone(&format!("ioslice sweep: {}", definition.job_file), &body)
}

/// Every combination of the lists' values, the first list outermost; one empty one for none.
fn combinations<'a>(lists: impl Iterator<Item = &'a [String]>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for list in lists {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                list.iter().map(move |value| {
                    let mut next = prefix.clone();
                    next.push(value.clone());
                    next
                })
            })
            .collect();
    }
    out
}

/// `sched=bfq iodepth=4`, or `all` for no axes.
fn line_name<'a>(names: impl Iterator<Item = &'a str>, values: &[String]) -> String {
    let parts: Vec<String> = names
        .zip(values)
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if parts.is_empty() {
        "all".to_string()
    } else {
        parts.join(" ")
    }
}

/// Every point: its axes, seed and total figures.
fn table(merged: &Merged) -> String {
    let mut out = String::from("<h2>Points</h2>\n<table>\n<tr>");
    for axis in &merged.definition.axes {
        let _ = write!(out, "<th>{}</th>", escape(&axis.name));
    }
    out.push_str("<th>seed</th><th>MiB/s</th><th>IOPS</th><th>clat p50 (µs)</th><th>clat p99 (µs)</th><th>clat max (µs)</th></tr>\n");
    for point in &merged.points {
        out.push_str("<tr>");
        for value in key(point) {
            let _ = write!(out, "<td>{}</td>", escape(&value));
        }
        let t = &point.total;
        let _ = writeln!(
            out,
            "<td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td class=\"n\">{:.1}</td><td class=\"n\">{:.1}</td></tr>",
            point.seed,
            t.bw_bytes as f64 / 1_048_576.0,
            t.iops,
            t.clat_ns.p50 as f64 / 1e3,
            t.clat_ns.p99 as f64 / 1e3,
            t.clat_ns.max as f64 / 1e3
        );
    }
    out.push_str("</table>\n");
    out
}
