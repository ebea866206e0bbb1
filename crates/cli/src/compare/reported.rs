//! `compare --report`: each run's record titled by its scheduler and client count, its cell
//! of the comparison's grid, and the figures the original experiment reported for it (the
//! job file's `ioslice-seed:` lines that give their run no options of its own, matched by
//! scheduler and client count).

use ioslice_core::{SchedSpec, SCHEDULERS};
use ioslice_fio::RunReport;
use ioslice_report::{ComparisonCell, ComparisonRecord, Report, RunRecord, SeedFigures};

use super::plan::Plan;
use crate::scenario::SeedFigure;

/// The record of the run of scheduler `scheduler` (its index in the plan) with `clients`,
/// titled for the page, and its cell with the seed's figures.
pub fn run_and_cell(
    plan: &Plan,
    (scheduler, clients): (usize, Option<u32>),
    record: RunRecord,
    report: &RunReport,
) -> (RunRecord, ComparisonCell) {
    let scheduler = &plan.schedulers[scheduler].spec;
    let mut cell = ComparisonCell::from_report(&scheduler.to_string(), clients, report);
    if let Some(figure) = plan.seed_figures.iter().find(|figure| {
        figure.options.is_empty()
            && figure.clients == clients
            && same_scheduler(&figure.scheduler, scheduler)
    }) {
        cell = cell.with_seed(seed_figures(figure));
    }
    let title = format!("{} — {}", plan.job_path, cell.label());
    (record.titled(title), cell)
}

/// The page: the comparison's grid first, then every run that finished, in plan order.
pub fn report(plan: &Plan, reported: Vec<(RunRecord, ComparisonCell)>) -> Report {
    let (records, cells): (Vec<RunRecord>, Vec<ComparisonCell>) = reported.into_iter().unzip();
    let comparison = ComparisonRecord {
        title: format!("{} on {}", plan.job_path, plan.device),
        job_file: plan.job_path.clone(),
        device: plan.device.to_string(),
        cells,
    };
    Report {
        runs: records,
        comparisons: vec![comparison],
    }
}

/// Whether the seed's scheduler text names `scheduler`: the same policy (aliases
/// resolved) with the same settings, in any order. A seed line that names no `version`
/// stands for the post's own kernel, so it matches whatever release the run models.
pub fn same_scheduler(text: &str, scheduler: &SchedSpec) -> bool {
    let Ok(named) = text.parse::<SchedSpec>() else {
        return false;
    };
    let mut run = scheduler.clone();
    let release = ioslice_core::kernel::TUNABLE;
    if !named.settings.iter().any(|(name, _)| name == release) {
        run.settings.retain(|(name, _)| name != release);
    }
    normalized(&named) == normalized(&run)
}

/// The canonical name and the settings sorted.
fn normalized(spec: &SchedSpec) -> (String, Vec<(String, String)>) {
    let name = SCHEDULERS
        .iter()
        .find(|info| info.name == spec.name || info.aliases.contains(&spec.name.as_str()))
        .map_or(spec.name.as_str(), |info| info.name);
    let mut settings = spec.settings.clone();
    settings.sort();
    (name.to_string(), settings)
}

/// The report's view of a seed line: its aggregate (`aggregate`, else `total`, else the
/// sum of its named jobs or groups) and every named figure but the per-client extremes and
/// the latency, as a group's.
fn seed_figures(figure: &SeedFigure) -> SeedFigures {
    let value = |key: &str| figure.value(key);
    let groups = figure
        .values
        .iter()
        .filter(|(name, _)| {
            crate::seed_figure::is_bandwidth(name)
                && !["aggregate", "total", "max", "min"].contains(&name.as_str())
        })
        .cloned()
        .collect::<Vec<_>>();
    let named = (!groups.is_empty()).then(|| groups.iter().map(|&(_, value)| value).sum());
    SeedFigures {
        aggregate_kb_s: value("aggregate").or_else(|| value("total")).or(named),
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_setting_order_do_not_matter() {
        let resolved: SchedSpec = "anticipatory".parse().expect("spec");
        assert!(same_scheduler("as", &resolved));
        let cfq: SchedSpec = "cfq:group_idle=8,slice_idle=0".parse().expect("spec");
        assert!(same_scheduler("cfq:slice_idle=0,group_idle=8", &cfq));
        assert!(!same_scheduler("cfq:slice_idle=8,group_idle=8", &cfq));
        assert!(!same_scheduler("cfq:", &cfq));
        let era: SchedSpec = "cfq:version=2.6.10".parse().expect("spec");
        assert!(same_scheduler("cfq", &era));
        assert!(!same_scheduler("cfq:version=2.6.28", &era));
    }

    #[test]
    fn the_aggregate_is_the_total_or_the_sum_when_none_is_given() {
        let figure = SeedFigure {
            scheduler: "cfq".into(),
            clients: Some(1),
            options: Vec::new(),
            calibration: false,
            values: vec![("cgrp1".into(), 6120.0), ("total".into(), 212_613.0)],
        };
        let seed = seed_figures(&figure);
        assert_eq!(seed.aggregate_kb_s, Some(212_613.0));
        assert_eq!(seed.groups, vec![("cgrp1".to_string(), 6120.0)]);
        let per_job = SeedFigure {
            scheduler: "as".into(),
            clients: None,
            options: Vec::new(),
            calibration: false,
            values: vec![("reader".into(), 27_985.0), ("writer".into(), 64.0)],
        };
        assert_eq!(seed_figures(&per_job).aggregate_kb_s, Some(28_049.0));
    }
}
