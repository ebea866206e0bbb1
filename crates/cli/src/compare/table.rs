//! The comparison as the classic mailing-list tables, one per scheduler.
//!
//! Ungrouped workloads get the 2004 time-sliced CFQ table (clients; max, min and
//! aggregate per-client bandwidth; max latency). Grouped workloads (a job names a
//! cgroup) get the 2010 CFQ group-scheduling table: one row per run with each cgroup's
//! bandwidth and the total. Bandwidths are KB/s of 1000 bytes, rounded to the nearest.
//!
//! Above each table, the cgroups' weights as that scheduler used them (CFQ's default is
//! 500, BFQ's 100; noop, deadline, mq-deadline and anticipatory weigh none) and their
//! limits, from the run reports.

use std::fmt::Write as _;

use ioslice_fio::CgroupSettings;

use super::execute::Finished;
use super::measure::RunResult;
use super::plan::Plan;
use super::sched::ResolvedScheduler;

/// Narrowest cgroup column, wide enough for six-digit KB/s figures.
const MIN_COLUMN: usize = 7;

/// Every scheduler's table and the footnote on units.
pub fn render(plan: &Plan, runs: &[Finished]) -> String {
    let mut out = String::new();
    for (index, scheduler) in plan.schedulers.iter().enumerate() {
        let rows: Vec<&Finished> = runs.iter().filter(|r| r.spec.scheduler == index).collect();
        heading(&mut out, plan, scheduler, &rows);
        if plan.grouped() {
            group_table(&mut out, plan, &rows);
        } else {
            clients_table(&mut out, &rows);
        }
        out.push('\n');
    }
    out.push_str(if plan.grouped() {
        "Bandwidth in KB/s (1000 bytes): a cgroup's column is the sum of its jobs' bandwidths, \
         total the sum of the columns; NR is every job's numjobs.\n"
    } else {
        "Bandwidth in KB/s (1000 bytes) per client; latency is the largest completion latency.\n"
    });
    out
}

/// `Scheduler: cfq:slice_idle=0  Device: sim:sata-7200  Seed: 1`, and the weights and
/// limits of the cgroups as the scheduler's runs used them.
fn heading(out: &mut String, plan: &Plan, scheduler: &ResolvedScheduler, rows: &[&Finished]) {
    let _ = write!(
        out,
        "Scheduler: {}  Device: {}  Seed: {}",
        scheduler.spec, plan.device, plan.inputs.seed
    );
    if !plan.machine.host.is_empty() {
        let _ = write!(out, "  Host: {}", plan.machine.host.join(","));
    }
    out.push('\n');
    // Every run of a scheduler has the same cgroups: client counts change numjobs only.
    if let Some(first) = rows.first() {
        cgroup_lines(out, &scheduler.spec.name, &first.result.cgroups);
    }
    out.push('\n');
}

/// `Weights: grp1=100  grp2=100  grp2/sub=200` (every cgroup, parents first), or that the
/// scheduler weighs none; then `Limits: grp1 rbps=8MiB/s wbps=max riops=max wiops=max
/// burst=100ms`, one line per limited cgroup. Nothing for a run without cgroups.
fn cgroup_lines(out: &mut String, scheduler: &str, cgroups: &[CgroupSettings]) {
    if cgroups.is_empty() {
        return;
    }
    let weights: Vec<String> = cgroups
        .iter()
        .filter_map(|g| Some(format!("{}={}", g.path, g.weight?)))
        .collect();
    if weights.is_empty() {
        let _ = writeln!(out, "Weights: none ({scheduler} does not weigh cgroups)");
    } else {
        let _ = writeln!(out, "Weights: {}", weights.join("  "));
    }
    let mut label = "Limits:";
    for group in cgroups {
        if let Some(limits) = group.limits_text() {
            let _ = writeln!(out, "{label} {} {limits}", group.path);
            label = "       ";
        }
    }
}

/// `Clients   Max bwidth   Min bwidth   Agg bwidth   Max latency` and one row per run.
fn clients_table(out: &mut String, rows: &[&Finished]) {
    let _ = writeln!(
        out,
        "Clients   Max bwidth   Min bwidth   Agg bwidth   Max latency"
    );
    for row in rows {
        let r: &RunResult = &row.result;
        let _ = writeln!(
            out,
            "{:>7}   {:>10}   {:>10}   {:>10}   {:>8.0}msec",
            r.clients.len(),
            kb(r.max_bw()),
            kb(r.min_bw()),
            kb(r.aggregate_bw()),
            r.max_clat_ns() as f64 / 1e6
        );
        job_breakdown(out, r);
    }
}

/// Under a row whose clients come from more than one job section (a reader against a
/// writer, say), each section's bandwidth and worst latency, as the seeds reported them:
/// `         reader: 27985 KB/s (max_lat=34msec)`.
fn job_breakdown(out: &mut String, result: &RunResult) {
    let mut sections: Vec<(&str, u64, u64)> = Vec::new();
    for client in &result.clients {
        match sections
            .iter_mut()
            .find(|(name, _, _)| *name == client.name)
        {
            Some((_, bw, lat)) => {
                *bw += client.bw_bytes;
                *lat = (*lat).max(client.max_clat_ns);
            }
            None => sections.push((&client.name, client.bw_bytes, client.max_clat_ns)),
        }
    }
    if sections.len() < 2 {
        return;
    }
    for (name, bw, lat) in sections {
        let _ = writeln!(
            out,
            "{:>9} {name}: {} KB/s (max_lat={:.0}msec)",
            "",
            kb(bw),
            lat as f64 / 1e6
        );
    }
}

/// `NR  grp1  grp2  total` and one row per run.
fn group_table(out: &mut String, plan: &Plan, rows: &[&Finished]) {
    let widths: Vec<usize> = plan
        .columns
        .iter()
        .map(|c| c.len().max(MIN_COLUMN))
        .collect();
    let _ = write!(out, "{:>4}", "NR");
    for (name, width) in plan.columns.iter().zip(&widths) {
        let _ = write!(out, "  {name:>width$}");
    }
    let _ = writeln!(out, "  {:>MIN_COLUMN$}", "total");
    for row in rows {
        let nr = row
            .spec
            .clients
            .or_else(|| common_numjobs(plan))
            .map_or_else(|| "-".to_string(), |n| n.to_string());
        let _ = write!(out, "{nr:>4}");
        let columns: Vec<u64> = row.result.groups.iter().map(|g| kb(g.bw_bytes)).collect();
        for (value, width) in columns.iter().zip(&widths) {
            let _ = write!(out, "  {value:>width$}");
        }
        let total: u64 = columns.iter().sum();
        let _ = writeln!(out, "  {total:>MIN_COLUMN$}");
    }
}

/// The job file's numjobs when every job has the same.
fn common_numjobs(plan: &Plan) -> Option<u32> {
    let mut counts = plan.job_file.jobs.iter().map(|j| j.numjobs.max(1));
    let first = counts.next()?;
    counts.all(|n| n == first).then_some(first)
}

/// Bytes/s as KB/s (1000 bytes), rounded to the nearest.
fn kb(bytes_per_second: u64) -> u64 {
    bytes_per_second.saturating_add(500) / 1000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::measure::ClientResult;
    use ioslice_core::limit::Limits;

    fn client(name: &str, bw_bytes: u64, max_clat_ns: u64) -> ClientResult {
        ClientResult {
            name: name.to_string(),
            pid: 0,
            cgroup: "/".to_string(),
            bw_bytes,
            max_clat_ns,
            runtime_ns: 0,
        }
    }

    #[test]
    fn several_job_sections_get_a_line_each() {
        let result = RunResult {
            clients: vec![
                client("reader", 27_985_000, 34_000_000),
                client("writer", 64_000, 1_042_000_000),
                client("reader", 15_000, 40_000_000),
            ],
            groups: Vec::new(),
            cgroups: Vec::new(),
        };
        let mut out = String::new();
        job_breakdown(&mut out, &result);
        assert_eq!(
            out,
            "          reader: 28000 KB/s (max_lat=40msec)\n          writer: 64 KB/s (max_lat=1042msec)\n"
        );
        let mut single = String::new();
        let clones = RunResult {
            clients: vec![client("c", 1, 1), client("c", 2, 2)],
            groups: Vec::new(),
            cgroups: Vec::new(),
        };
        job_breakdown(&mut single, &clones);
        assert_eq!(single, "", "clones of one section need no breakdown");
    }

    fn settings(path: &str, weight: Option<u32>, limits: Limits) -> CgroupSettings {
        CgroupSettings {
            path: path.to_string(),
            weight,
            weight_set: false,
            limits,
        }
    }

    fn lines_for(scheduler: &str, cgroups: &[CgroupSettings]) -> String {
        let mut out = String::new();
        cgroup_lines(&mut out, scheduler, cgroups);
        out
    }

    #[test]
    fn weights_as_given_and_limits_one_line_per_limited_cgroup() {
        let eight_mib = Limits {
            read_bps: Some(8 << 20),
            ..Limits::default()
        };
        let iops = Limits {
            write_iops: Some(120),
            burst: Some(ioslice_core::time::SECOND),
            ..Limits::default()
        };
        let cgroups = [
            settings("g1", Some(100), eight_mib),
            settings("g2", Some(100), Limits::default()),
            settings("g2/sub", Some(700), iops),
        ];
        assert_eq!(
            lines_for("bfq", &cgroups),
            "Weights: g1=100  g2=100  g2/sub=700\n\
             Limits: g1 rbps=8MiB/s wbps=max riops=max wiops=max burst=100ms\n\
             \x20       g2/sub rbps=max wbps=max riops=max wiops=120 burst=1s\n"
        );
        let unweighted = [settings("g1", None, Limits::default())];
        assert_eq!(
            lines_for("noop", &unweighted),
            "Weights: none (noop does not weigh cgroups)\n"
        );
        assert_eq!(lines_for("cfq", &[]), "", "no cgroups, no lines");
    }

    #[test]
    fn kilobytes_round_to_nearest() {
        assert_eq!(kb(0), 0);
        assert_eq!(kb(499), 0);
        assert_eq!(kb(500), 1);
        assert_eq!(kb(19_837_400), 19_837);
        assert_eq!(kb(u64::MAX), u64::MAX / 1000);
    }
}
