//! The sweep's HTML page: per figure (total bandwidth, IOPS, p99 completion latency), the
//! lines over the first axis with a line per value of the others, and, with two axes or
//! more, the bars over the first two in 3D (one chart per value of any further axes); each
//! value is the mean over seeds with the min–max spread drawn. Then each job's bandwidth and
//! each cgroup's share ([`super::per_job`]), and every point in a table. Axis values are
//! written with their units ([`super::units`]).
//! The charts are the report's ([`ioslice_report::charts::sweep`]).

use std::fmt::Write;

use ioslice_report::charts::sweep::{bars3d, lines, Grid, Spread, SweepLine};
use ioslice_report::text::escape;

use super::figures::PointResult;
use super::store::Merged;
use super::view::{key, View};

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

/// The page.
pub fn render(merged: &Merged) -> String {
    let definition = merged.definition;
    let axes = &definition.axes;
    let view = View::of(merged);
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
    let (x_name, x_values, x_labels) = view.x();
    let rest = view.combinations(1);
    for figure in &FIGURES {
        let value = |p: &PointResult| Some((figure.value)(p));
        let _ = writeln!(body, "<h2>{} ({})</h2>", figure.title, figure.unit);
        let series: Vec<SweepLine> = rest
            .iter()
            .map(|others| SweepLine {
                name: view.name(1, others),
                values: x_values
                    .iter()
                    .map(|x| view.spread(&view.at(x, others), value))
                    .collect(),
            })
            .collect();
        body.push_str(&lines(figure.title, figure.unit, x_name, &x_labels, &series).figure());
        if axes.len() >= 2 {
            let z = &axes[1];
            let z_labels: Vec<String> = z.values.iter().map(|v| view.label(1, v)).collect();
            for further in view.combinations(2) {
                let cells: Vec<Vec<Option<Spread>>> = z
                    .values
                    .iter()
                    .map(|zv| {
                        x_values
                            .iter()
                            .map(|x| {
                                let mut values = vec![x.clone(), zv.clone()];
                                values.extend(further.iter().cloned());
                                view.spread(&values, value)
                            })
                            .collect()
                    })
                    .collect();
                let title = if further.is_empty() {
                    figure.title.to_string()
                } else {
                    format!("{} at {}", figure.title, view.name(2, &further))
                };
                let grid = Grid {
                    x: (x_name, &x_labels),
                    z: (&z.name, &z_labels),
                    cells: &cells,
                };
                body.push_str(&bars3d(&title, figure.unit, &grid).figure());
            }
        }
    }
    body.push_str(&super::per_job::section(&view, &merged.points));
    body.push_str(&table(merged));
    ioslice_report::html::standalone(&format!("ioslice sweep: {}", definition.job_file), &body)
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
