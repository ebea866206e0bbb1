//! A comparison's section: its bars and its table.
//!
//! A job file without cgroups gets one chart of the aggregate bandwidth, a bar per run
//! (scheduler × clients), coloured by scheduler; a job file with cgroups gets a chart per
//! run with a bar per cgroup. Where the scenario carries the original post's figures, each
//! bar has the post's beside it in a lighter shade, and the table gives both.

use std::fmt::Write;

use crate::charts::bars::{self, Bar};
use crate::model::{ComparisonCell, ComparisonRecord};
use crate::text::{escape, kb_per_s, latency_label};

/// KB/s (1000 bytes) of bytes/s, as the terminal's tables and the posts print bandwidth.
fn kb(bw_bytes: u64) -> f64 {
    kb_per_s(bw_bytes) as f64
}

/// The section of comparison `index`.
pub fn section(out: &mut String, index: usize, comparison: &ComparisonRecord) {
    let _ = writeln!(
        out,
        "<section class=\"comparison\" id=\"comparison-{index}\">\n<h2>{}</h2>",
        escape(&comparison.title)
    );
    let with_post = comparison.cells.iter().any(|c| c.seed.is_some());
    let _ = writeln!(
        out,
        "<p class=\"note\">Job file {} on {}. Bandwidths in KB/s of 1000 bytes, the figures of the terminal's table{}.</p>",
        escape(&comparison.job_file),
        escape(&comparison.device),
        if with_post {
            "; the original post's figures (KB/s as posted) are the lighter bars and the figures in parentheses"
        } else {
            ""
        }
    );
    if comparison.cells.is_empty() {
        out.push_str("<p class=\"missing\">The comparison has no runs.</p>\n</section>\n");
        return;
    }
    if comparison.cells.iter().any(|c| !c.group_bw.is_empty()) {
        grouped(out, comparison);
    } else {
        ungrouped(out, comparison);
    }
    out.push_str("</section>\n");
}

/// Schedulers in order of first appearance.
fn schedulers(cells: &[ComparisonCell]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for cell in cells {
        if !names.contains(&cell.scheduler) {
            names.push(cell.scheduler.clone());
        }
    }
    names
}

/// ` (post)` in a column's heading when some cell has the original post's figures.
fn post_mark(comparison: &ComparisonRecord) -> &'static str {
    if comparison.cells.iter().any(|c| c.seed.is_some()) {
        " (post)"
    } else {
        ""
    }
}

fn seed_text(value: Option<f64>) -> String {
    value.map_or_else(String::new, |v| format!(" ({v:.0})"))
}

fn ungrouped(out: &mut String, comparison: &ComparisonRecord) {
    let names = schedulers(&comparison.cells);
    let bars: Vec<Bar> = comparison
        .cells
        .iter()
        .map(|cell| Bar {
            label: cell
                .clients
                .map_or_else(|| "own".to_string(), |n| format!("×{n}")),
            series: names.iter().position(|n| *n == cell.scheduler).unwrap_or(0),
            value: kb(cell.aggregate_bw_bytes),
            seed: cell.seed.as_ref().and_then(|s| s.aggregate_kb_s),
        })
        .collect();
    let chart = bars::grouped(
        "Aggregate bandwidth by scheduler and clients",
        "KB/s",
        &names,
        &bars,
    );
    out.push_str(&chart.figure());
    let _ = writeln!(
        out,
        "<table><tr><th>scheduler</th><th>clients</th><th>aggregate KB/s{}</th><th>max client KB/s</th><th>min client KB/s</th><th>max latency</th></tr>",
        post_mark(comparison)
    );
    for cell in &comparison.cells {
        let max = cell.client_bw.iter().map(|c| c.bw_bytes).max().unwrap_or(0);
        let min = cell.client_bw.iter().map(|c| c.bw_bytes).min().unwrap_or(0);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.0}{}</td><td class=\"n\">{:.0}</td><td class=\"n\">{:.0}</td><td class=\"n\">{}</td></tr>",
            escape(&cell.scheduler),
            cell.clients.map_or_else(|| "job file's".to_string(), |n| n.to_string()),
            kb(cell.aggregate_bw_bytes),
            escape(&seed_text(cell.seed.as_ref().and_then(|s| s.aggregate_kb_s))),
            kb(max),
            kb(min),
            escape(&latency_label(cell.max_clat_ns as f64)),
        );
    }
    out.push_str("</table>\n");
}

fn grouped(out: &mut String, comparison: &ComparisonRecord) {
    let mut columns: Vec<String> = Vec::new();
    for cell in &comparison.cells {
        for group in &cell.group_bw {
            if !columns.contains(&group.name) {
                columns.push(group.name.clone());
            }
        }
    }
    let seed_of = |cell: &ComparisonCell, group: &str| {
        cell.seed
            .as_ref()
            .and_then(|s| s.groups.iter().find(|(name, _)| name == group))
            .map(|&(_, v)| v)
    };
    for cell in &comparison.cells {
        let bars: Vec<Bar> = columns
            .iter()
            .map(|name| Bar {
                label: name.clone(),
                series: 0,
                value: cell
                    .group_bw
                    .iter()
                    .find(|g| g.name == *name)
                    .map_or(0.0, |g| kb(g.bw_bytes)),
                seed: seed_of(cell, name),
            })
            .collect();
        let title = format!("Bandwidth per cgroup: {}", cell.label());
        let chart = bars::grouped(&title, "KB/s", &[cell.label()], &bars);
        out.push_str(&chart.figure());
    }
    out.push_str("<table><tr><th>scheduler</th><th>clients</th>");
    for name in &columns {
        let _ = write!(out, "<th>{}</th>", escape(name));
    }
    let _ = writeln!(
        out,
        "<th>total KB/s{}</th><th>max latency</th></tr>",
        post_mark(comparison)
    );
    for cell in &comparison.cells {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td>",
            escape(&cell.scheduler),
            cell.clients
                .map_or_else(|| "job file's".to_string(), |n| n.to_string()),
        );
        for name in &columns {
            let value = cell
                .group_bw
                .iter()
                .find(|g| g.name == *name)
                .map_or(0.0, |g| kb(g.bw_bytes));
            let _ = write!(
                out,
                "<td class=\"n\">{value:.0}{}</td>",
                escape(&seed_text(seed_of(cell, name)))
            );
        }
        let _ = writeln!(
            out,
            "<td class=\"n\">{:.0}{}</td><td class=\"n\">{}</td></tr>",
            kb(cell.aggregate_bw_bytes),
            escape(&seed_text(
                cell.seed.as_ref().and_then(|s| s.aggregate_kb_s)
            )),
            escape(&latency_label(cell.max_clat_ns as f64)),
        );
    }
    out.push_str("</table>\n");
}
