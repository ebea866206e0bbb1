//! How a post's figure and ioslice's are judged, line by line of `; ioslice-seed:`.
//!
//! | the line gives | judged | holds when |
//! |---|---|---|
//! | `aggregate` (with `max` and `min`) | the cell | aggregate within 0.75–1.33× of the post's, and the same fairness: min/max ≥ 0.8 in both or in neither |
//! | `total` and cgroups' figures | the total | within ±15 % of the post's |
//! | | each cgroup's share of the total | within ±3 points of the post's share |
//! | jobs' or cgroups' bandwidths, no aggregate or total | each | within 0.5–2× of the post's, or both below 200 KiB/s (a starved writer held as starved) |
//! | `….runtime_ms`, `….runtime_max_ms`, `….runtime_min_ms` | each | within 0.5–2× of the post's |
//!
//! `max`, `min` and `max_latency_ms` are shown beside the cell, not judged.

use crate::compare::measure::RunResult;
use crate::seed_figure::SeedFigure;

/// Fairness: a run is fair when its slowest client gets at least this share of its fastest's.
const FAIR: f64 = 0.8;
/// A cell holds when its aggregate is within these ratios of the post's.
const CELL: (f64, f64) = (0.75, 1.33);
/// A total holds within this relative difference.
const TOTAL: f64 = 0.15;
/// A cgroup's share holds within this many percentage points.
const SHARE_POINTS: f64 = 3.0;
/// A bandwidth or a runtime holds within these ratios.
const LOOSE: (f64, f64) = (0.5, 2.0);
/// Below this (KB/s; 200 KiB/s) both the post's and ioslice's bandwidth count as starved.
const STARVED_KB: f64 = 204.8;

/// One figure judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// What is compared: `aggregate`, `total`, `cgrp3 share`, a job's name, …
    pub figure: String,
    /// The post's value (KB/s, ms, or percent for a share).
    pub post: f64,
    /// ioslice's.
    pub ioslice: f64,
    /// Whether it holds by its rule.
    pub holds: bool,
    /// Context: the fairness of each, the extremes and latencies.
    pub note: String,
}

/// Judge one line's figures against what its run measured.
pub fn judge(figure: &SeedFigure, run: &RunResult) -> Result<Vec<Judged>, String> {
    if let Some(post) = figure.value("aggregate") {
        return Ok(vec![cell(figure, post, run)]);
    }
    if let Some(total) = figure.value("total") {
        return shares(figure, total, run);
    }
    figure
        .values
        .iter()
        .filter(|(key, _)| !["max", "min", "max_latency_ms"].contains(&key.as_str()))
        .map(|(key, post)| {
            let measured = measured(key, run)?;
            let holds = if key.ends_with("_ms") {
                within(measured / post, LOOSE)
            } else {
                within(measured / post, LOOSE) || (*post < STARVED_KB && measured < STARVED_KB)
            };
            Ok(Judged {
                figure: key.clone(),
                post: *post,
                ioslice: measured,
                holds,
                note: String::new(),
            })
        })
        .collect()
}

/// A clients-table cell: the aggregate and the fairness class.
fn cell(figure: &SeedFigure, post: f64, run: &RunResult) -> Judged {
    let kb = |bytes: u64| bytes as f64 / 1000.0;
    let ioslice = kb(run.aggregate_bw());
    let ours = fairness(kb(run.max_bw()), kb(run.min_bw()));
    let theirs = match (figure.value("max"), figure.value("min")) {
        (Some(max), Some(min)) => Some(fairness(max, min)),
        _ => None,
    };
    let same_class = theirs.is_none_or(|theirs| (theirs >= FAIR) == (ours >= FAIR));
    let mut note = match theirs {
        Some(theirs) => format!("min/max {theirs:.2} / {ours:.2}"),
        None => format!("min/max {ours:.2}"),
    };
    if let Some(latency) = figure.value("max_latency_ms") {
        let ours = run.max_clat_ns() as f64 / 1e6;
        note.push_str(&format!(", max latency {latency:.0} / {ours:.0} ms"));
    }
    Judged {
        figure: "aggregate".into(),
        post,
        ioslice,
        holds: within(ioslice / post, CELL) && same_class,
        note,
    }
}

/// The total, then each cgroup's share of it.
fn shares(figure: &SeedFigure, post_total: f64, run: &RunResult) -> Result<Vec<Judged>, String> {
    let total = run.aggregate_bw() as f64 / 1000.0;
    let mut judged = vec![Judged {
        figure: "total".into(),
        post: post_total,
        ioslice: total,
        holds: ((total - post_total) / post_total).abs() <= TOTAL,
        note: String::new(),
    }];
    for (name, post) in figure
        .values
        .iter()
        .filter(|(key, _)| key != "total" && crate::seed_figure::is_bandwidth(key))
    {
        let theirs = 100.0 * post / post_total;
        let ours = if total > 0.0 {
            100.0 * measured(name, run)? / total
        } else {
            0.0
        };
        judged.push(Judged {
            figure: format!("{name} share %"),
            post: theirs,
            ioslice: ours,
            holds: (ours - theirs).abs() <= SHARE_POINTS,
            note: String::new(),
        });
    }
    Ok(judged)
}

/// What the run measured for figure `key`: a cgroup's or job's bandwidth (KB/s, clones
/// summed), or a runtime (ms).
fn measured(key: &str, run: &RunResult) -> Result<f64, String> {
    if let Some((jobs, what)) = key.rsplit_once('.') {
        let runtimes = matching(jobs, run).map(|client| client.runtime_ns as f64 / 1e6);
        let value = match what {
            "runtime_ms" | "runtime_max_ms" => runtimes.reduce(f64::max),
            "runtime_min_ms" => runtimes.reduce(f64::min),
            _ => None,
        };
        return value.ok_or_else(|| unknown(key));
    }
    if let Some(group) = run.groups.iter().find(|group| group.name == key) {
        return Ok(group.bw_bytes as f64 / 1000.0);
    }
    let mut clients = matching(key, run).peekable();
    if clients.peek().is_none() {
        return Err(unknown(key));
    }
    Ok(clients.map(|client| client.bw_bytes as f64 / 1000.0).sum())
}

/// The run's clients named `pattern`, or starting with it when it ends in `*`.
fn matching<'a>(
    pattern: &'a str,
    run: &'a RunResult,
) -> impl Iterator<Item = &'a crate::compare::measure::ClientResult> + 'a {
    run.clients
        .iter()
        .filter(move |client| match pattern.strip_suffix('*') {
            Some(prefix) => client.name.starts_with(prefix),
            None => client.name == pattern,
        })
}

fn unknown(key: &str) -> String {
    format!("figure '{key}' names no job or cgroup of the run (expected a job's or cgroup's name, NAME.runtime_ms, or PREFIX*.runtime_max_ms / runtime_min_ms)")
}

/// min/max, 1 for a run whose fastest client moved nothing.
fn fairness(max: f64, min: f64) -> f64 {
    if max > 0.0 {
        min / max
    } else {
        1.0
    }
}

fn within(ratio: f64, (low, high): (f64, f64)) -> bool {
    ratio.is_finite() && (low..=high).contains(&ratio)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::measure::{ClientResult, GroupResult};

    fn client(name: &str, group: &str, kb: u64, runtime_ms: u64) -> ClientResult {
        ClientResult {
            name: name.into(),
            pid: 1,
            cgroup: group.into(),
            bw_bytes: kb * 1000,
            max_clat_ns: 30_000_000,
            runtime_ns: runtime_ms * 1_000_000,
        }
    }

    fn line(text: &str) -> SeedFigure {
        SeedFigure::parse(text, "t.fio:1").expect("valid line")
    }

    #[test]
    fn a_cell_needs_the_aggregate_and_the_fairness_class() {
        let run = RunResult {
            clients: vec![client("c", "/", 900, 0), client("c", "/", 100, 0)],
            groups: Vec::new(),
            cgroups: Vec::new(),
        };
        let fair = line("as clients=2 max=600 min=590 aggregate=1190 max_latency_ms=20");
        let judged = judge(&fair, &run).expect("judged");
        assert_eq!(judged.len(), 1);
        assert_eq!(judged[0].ioslice, 1000.0);
        assert!(!judged[0].holds, "unfair where the post was fair");
        assert_eq!(
            judged[0].note,
            "min/max 0.98 / 0.11, max latency 20 / 30 ms"
        );
        let unfair = line("as clients=2 max=1000 min=200 aggregate=1200");
        assert!(judge(&unfair, &run).expect("judged")[0].holds);
        let far = line("as clients=2 max=1000 min=200 aggregate=1400");
        assert!(!judge(&far, &run).expect("judged")[0].holds, "0.71x");
    }

    #[test]
    fn totals_and_shares() {
        let group = |name: &str, kb: u64| GroupResult {
            name: name.into(),
            weight: None,
            limits: Default::default(),
            jobs: 1,
            bw_bytes: kb * 1000,
        };
        let run = RunResult {
            clients: vec![client("a", "a", 300, 0), client("b", "b", 700, 0)],
            groups: vec![group("a", 300), group("b", 700)],
            cgroups: Vec::new(),
        };
        let judged = judge(&line("cfq a=280 b=620 total=1000"), &run).expect("judged");
        let holds: Vec<(String, bool)> =
            judged.iter().map(|j| (j.figure.clone(), j.holds)).collect();
        assert_eq!(
            holds,
            [
                ("total".to_string(), true),
                ("a share %".to_string(), true),
                ("b share %".to_string(), false),
            ]
        );
        assert_eq!(judged[2].post, 62.0);
        assert_eq!(judged[2].ioslice, 70.0);
    }

    #[test]
    fn rates_runtimes_and_starved_writers() {
        let run = RunResult {
            clients: vec![
                client("reader", "/", 50_000, 30_000),
                client("writer", "/", 100, 30_000),
                client("file1", "/", 10, 400),
                client("file2", "/", 10, 9000),
            ],
            groups: Vec::new(),
            cgroups: Vec::new(),
        };
        let judged = judge(
            &line("as reader=28000 writer=65 file*.runtime_max_ms=26942 file*.runtime_min_ms=531"),
            &run,
        )
        .expect("judged");
        let verdicts: Vec<(f64, bool)> = judged.iter().map(|j| (j.ioslice, j.holds)).collect();
        assert_eq!(
            verdicts,
            [
                (50_000.0, true),
                (100.0, true),
                (9000.0, false),
                (400.0, true)
            ]
        );
        let error = judge(&line("as nobody=1"), &run).expect_err("unknown job");
        assert!(error.contains("'nobody'"), "{error}");
    }
}
