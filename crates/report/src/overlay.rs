//! The overlay: a page of two or more runs opens with their figures on shared axes, each
//! run labelled by what differs between them ([`crate::labels`]).
//!
//! - **Latency percentiles** and **latency CDF**: one line per run, job and direction
//!   (named by the run's label alone when the run has one job and one direction), drawn by
//!   [`crate::charts::latency`] as a run's own charts are, a run's lines in its colour with
//!   a dash each (up to four lines a run and twenty runs).
//! - **Bandwidth over time**: one line per run, the bytes of all its jobs and directions,
//!   drawn by [`crate::charts::timeseries`]. Runs record windows of different lengths (ioslice's
//!   10 ms doubled, fio's `log_avg_msec`), so every run is put on the longest: each
//!   recorded window's bytes are shared among the common windows it overlaps, in
//!   proportion. Runs without a bandwidth record are named under the chart.
//! - **IOPS over time**: the same, one line per run of the requests all its jobs completed
//!   ([`crate::requests`]: ioslice's runs count them at the device, fio's `write_iops_log`
//!   files give them), in common windows of the longest any run recorded; each line of the
//!   unsmoothed view carries its counts per window (`data-counts`).

use std::fmt::Write;

use ioslice_core::Nanos;

use crate::charts::latency::{self, LatencyLine};
use crate::charts::timeseries::{self, Line, Measure, TimeChart};
use crate::labels::labels;

/// The palette's colours.
const COLOURS: usize = crate::charts::palette::PALETTE.len();
/// Its dashes: solid, dashed, dotted, dash-dot ([`crate::charts::palette::style`]).
const DASHES: usize = 4;
use crate::model::RunRecord;
use crate::text::{escape, latency_label, BANDWIDTH_UNIT};

/// The overlay section of `runs` (nothing for fewer than two).
pub fn section(out: &mut String, runs: &[RunRecord]) {
    if runs.len() < 2 {
        return;
    }
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let labels = labels(&refs);
    out.push_str("<section class=\"overlay\" id=\"overlay\">\n<h2>The runs together</h2>\n");
    out.push_str("<table class=\"labels\"><tr><th>label</th><th>run</th></tr>\n");
    for (label, run) in labels.iter().zip(runs) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(label),
            escape(&run.title)
        );
    }
    out.push_str("</table>\n<p class=\"note\">Each run is labelled by the settings that differ between the runs (scheduler, device, tunables, job options; the file read when no setting differs).</p>\n");
    latency_overlay(out, runs, &labels);
    let bytes: Vec<Option<Counts>> = runs
        .iter()
        .map(|run| {
            let series = run.bandwidth.as_ref()?;
            Some((
                series.window_ns,
                series.series.iter().map(|s| s.bytes.as_slice()).collect(),
            ))
        })
        .collect();
    time_overlay(out, &bytes, &labels, Measure::Bytes);
    let requests: Vec<Option<Counts>> = runs
        .iter()
        .map(|run| {
            let series = run.requests.as_ref()?;
            Some((
                series.window_ns,
                series
                    .series
                    .iter()
                    .map(|s| s.requests.as_slice())
                    .collect(),
            ))
        })
        .collect();
    time_overlay(out, &requests, &labels, Measure::Requests);
    out.push_str("</section>\n");
}

/// One line per run, job and direction with a recorded latency. A run's lines take its
/// colour (the colour of its bandwidth line) and differ by dash, when no run has more lines
/// than there are dashes; else every line takes the next style.
fn latency_lines<'a>(runs: &'a [RunRecord], labels: &[String]) -> Vec<LatencyLine<'a>> {
    let per_run: Vec<Vec<(&str, &crate::model::DirectionRecord)>> = runs
        .iter()
        .map(|run| {
            run.jobs
                .iter()
                .flat_map(|job| job.directions.iter().map(move |d| (job.name.as_str(), d)))
                .filter(|(_, d)| d.clat.count > 0 || !d.clat.percentiles.is_empty())
                .collect()
        })
        .collect();
    let by_run = runs.len() <= COLOURS && per_run.iter().all(|lines| lines.len() <= DASHES);
    let mut lines = Vec::new();
    for (run, (measured, label)) in per_run.into_iter().zip(labels).enumerate() {
        let alone = measured.len() == 1;
        for (j, (job, d)) in measured.into_iter().enumerate() {
            lines.push(LatencyLine {
                name: if alone {
                    label.clone()
                } else {
                    format!("{label}: {job} ({})", d.direction)
                },
                latency: &d.clat,
                style: if by_run {
                    run + COLOURS * j
                } else {
                    lines.len()
                },
            });
        }
    }
    lines
}

fn latency_overlay(out: &mut String, runs: &[RunRecord], labels: &[String]) {
    out.push_str("<h3>Completion latency</h3>\n");
    let lines = latency_lines(runs, labels);
    if lines.is_empty() {
        out.push_str("<p class=\"missing\">No run recorded a completion latency.</p>\n");
        return;
    }
    out.push_str(&latency::percentiles("Latency percentiles per run", &lines).figure());
    if let Some(note) = latency::below_resolution(&lines) {
        let _ = writeln!(
            out,
            "<p class=\"note below-resolution\">{}</p>",
            escape(&note)
        );
    }
    out.push_str(&latency::cdf("Latency CDF per run", &lines).figure());
}

/// A run's counts over time: its window, ns, and each of its series' counts per window.
type Counts<'a> = (Nanos, Vec<&'a [u64]>);

/// What the time overlay of a measure says and names.
struct Wording {
    heading: &'static str,
    what: &'static str,
    unit: &'static str,
    id: &'static str,
    kind: &'static str,
    title: &'static str,
}

fn wording(measure: Measure) -> Wording {
    match measure {
        Measure::Bytes => Wording {
            heading: "Bandwidth over time",
            what: "bandwidth",
            unit: BANDWIDTH_UNIT,
            id: "overlay-bandwidth",
            kind: "overlay",
            title: "Bandwidth per run",
        },
        Measure::Requests => Wording {
            heading: "IOPS over time",
            what: "requests",
            unit: "IOPS are completed requests per second",
            id: "overlay-iops",
            kind: "overlay-iops",
            title: "IOPS per run",
        },
    }
}

/// One line per run with counts (`per_run[i]` of run `i`), its series summed and put on
/// the longest window any run recorded.
fn time_overlay(out: &mut String, per_run: &[Option<Counts>], labels: &[String], measure: Measure) {
    let words = wording(measure);
    let _ = writeln!(out, "<h3>{}</h3>", words.heading);
    let window_ns = per_run
        .iter()
        .flatten()
        .map(|(window, _)| *window)
        .max()
        .unwrap_or(0);
    let totals: Vec<(String, Vec<u64>)> = per_run
        .iter()
        .zip(labels)
        .filter_map(|(counts, label)| {
            let (from, lines) = counts.as_ref()?;
            Some((label.clone(), rebinned(*from, lines, window_ns)))
        })
        .collect();
    let without: Vec<&str> = per_run
        .iter()
        .zip(labels)
        .filter(|(counts, _)| counts.is_none())
        .map(|(_, label)| label.as_str())
        .collect();
    if totals.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"missing\">No run recorded its {} over time.</p>",
            words.what
        );
        return;
    }
    let _ = writeln!(
        out,
        "<p class=\"note\">Each run's {} over all its jobs and directions, in common windows of {} (the longest any run recorded). {}.</p>",
        match measure {
            Measure::Bytes => "bytes",
            Measure::Requests => "requests",
        },
        escape(&latency_label(window_ns as f64)),
        escape(words.unit)
    );
    let lines = Line::of_pairs(&totals);
    out.push_str(&timeseries::render(&TimeChart {
        id: words.id.to_string(),
        kind: words.kind,
        title: words.title.to_string(),
        window_ns,
        lines,
        slice_ns: None,
        measure,
        counts_attribute: measure == Measure::Requests,
    }));
    if !without.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"missing\">Not drawn, no {} over time recorded: {}.</p>",
            words.what,
            escape(&without.join("; "))
        );
    }
}

/// The sum of `lines` (counts per window of `from` ns) in windows of `window_ns`, each
/// recorded window's count shared among the windows it overlaps in proportion to the
/// overlap (truncated).
pub fn rebinned(from: Nanos, lines: &[&[u64]], window_ns: Nanos) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    if from == 0 || window_ns == 0 {
        return out;
    }
    for line in lines {
        for (i, &bytes) in line.iter().enumerate() {
            let (start, end) = (i as u64 * from, (i as u64 + 1) * from);
            let mut at = start;
            while at < end {
                let index = usize::try_from(at / window_ns).unwrap_or(usize::MAX - 1);
                let until = ((at / window_ns + 1) * window_ns).min(end);
                if out.len() <= index {
                    out.resize(index + 1, 0);
                }
                let share = u128::from(bytes) * u128::from(until - at) / u128::from(from);
                out[index] += u64::try_from(share).unwrap_or(u64::MAX);
                at = until;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_goes_onto_longer_windows_summed_over_its_lines() {
        let lines: [&[u64]; 2] = [&[1, 2, 3, 4, 5], &[10, 20, 30, 40, 50]];
        assert_eq!(rebinned(10, &lines, 20), [33, 77, 55]);
        assert_eq!(rebinned(10, &lines, 10), [11, 22, 33, 44, 55]);
    }

    #[test]
    fn windows_that_do_not_divide_share_their_bytes_by_overlap() {
        // 40 ns windows onto 100 ns: the third (80..120) gives half to each.
        assert_eq!(rebinned(40, &[&[400, 400, 400, 400]], 100), [1000, 600]);
    }
}
