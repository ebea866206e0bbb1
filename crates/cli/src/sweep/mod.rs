//! `ioslice sweep`: a study over a grid of settings. Each `--axis NAME=V1,V2,...` is a
//! setting and its values ([`axis`]); every combination, times every seed, is one point
//! ([`grid`]), run as a one-run comparison on every core through `compare`'s execution.
//! Each finished point is stored at once in the output directory ([`store`]); a rerun skips
//! the points stored and runs the rest, and the points are merged into one JSON document
//! and one HTML page ([`page`]) once every point is there (`--merge DIR` merges what a
//! directory holds, wherever its points ran).

use std::path::PathBuf;

use clap::Args;

pub mod axis;
mod cluster;
mod figures;
pub mod grid;
mod page;
mod per_job;
mod store;
pub mod units;
mod view;

use crate::compare::execute::{in_parallel, simulate};
use figures::{figures, PointResult};
use store::{Definition, Layout, Merged};

/// How the page draws the seeds' spread, as the merged document states it.
const SPREAD: &str = "min-max over seeds as error bars and whiskers, lines and bars at the mean";

/// `ioslice sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The fio job file (not with `--merge`).
    pub job_file: Option<PathBuf>,
    /// An axis of the grid, `NAME=V1,V2,...`: `sched`, `sched.TUNABLE`, `device.KEY`,
    /// `host.KEY`, `cgroup.NAME.KEY`, `numjobs` or a fio job option (`iodepth`, `bs`, `rw`).
    /// Repeatable; the first axis is the x axis of the page's charts, the second the lines.
    #[arg(long = "axis", value_name = "NAME=V1,V2,...")]
    pub axis: Vec<String>,
    /// Run every point with seeds 1..=N.
    #[arg(long, value_name = "N")]
    pub seeds: Option<u32>,
    /// Run every point with each of these seeds.
    #[arg(long = "seed-list", value_name = "A,B,...", value_delimiter = ',')]
    pub seed_list: Vec<String>,
    /// The scheduler of every point where no `sched` axis sets it.
    #[arg(long = "sched", value_name = "SCHED", default_value = "noop")]
    pub sched: String,
    /// Tunables for every point: `slice_idle=0,group_idle=8`. Repeatable.
    #[arg(long = "set", value_name = "TUNABLE=VALUE,...")]
    pub set: Vec<String>,
    /// The directory of the point files, `results.json` and `report.html`.
    #[arg(long, value_name = "DIR", required_unless_present = "merge")]
    pub out: Option<PathBuf>,
    /// Merge the point files in DIR into `results.json` and `report.html`; nothing runs.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "axis", "seeds", "seed_list"])]
    pub merge: Option<PathBuf>,
    /// Run the points on a cluster instead: `slurm` writes `DIR/sweep.sbatch`, a job array
    /// with a task per point not yet stored; `sbatch` it, then `--merge DIR`.
    #[arg(long, value_name = "slurm")]
    pub cluster: Option<String>,
    /// Run only the point with this index in grid order (0-based) and store it: what each
    /// task of a cluster's job array runs.
    #[arg(long, value_name = "INDEX", conflicts_with = "cluster")]
    pub task: Option<usize>,
    /// The simulated machine and run (`--seed` is the seed without `--seeds`).
    #[command(flatten)]
    pub simulation: crate::shared::SimulationArgs,
}

/// Run (or merge) the sweep.
pub fn sweep(args: &SweepArgs) -> Result<crate::shared::Printed, String> {
    if let Some(dir) = &args.merge {
        let layout = Layout::new(dir);
        let definition = layout
            .read_definition()
            .map_err(|e| format!("--merge: {e}"))?;
        return merge(&layout, &definition, 0);
    }
    let job_file = args
        .job_file
        .as_ref()
        .ok_or("sweep: expected a job file (or --merge DIR)")?;
    let dir = args.out.as_ref().ok_or("sweep: expected --out DIR")?;
    let axes = axis::parse_all(&args.axis)?;
    let seeds = axis::seeds(args.seeds, &args.seed_list, args.simulation.seed)?;
    let base = grid::Base {
        job_file,
        sched: &args.sched,
        set: &args.set,
        simulation: &args.simulation,
    };
    check_values(&base, &axes)?;
    let layout = Layout::new(dir);
    let settings = settings(args, job_file)?;
    layout.check_resume(&settings)?;
    if let Some(name) = &args.cluster {
        cluster::check(name)?;
    }
    let points = grid::points(&axes, &seeds);
    let pending_index: Vec<usize> = match args.task {
        Some(index) if index >= points.len() => {
            return Err(format!(
                "--task {index}: expected a point index below {}",
                points.len()
            ))
        }
        Some(index) => vec![index],
        None => (0..points.len()).collect(),
    };
    let pending_index: Vec<usize> = pending_index
        .into_iter()
        .filter(|&i| layout.finished(&points[i]).is_none())
        .collect();
    let pending: Vec<grid::Point> = pending_index.iter().map(|&i| points[i].clone()).collect();
    let plans = pending
        .iter()
        .map(|point| grid::plan(&base, point).map_err(|e| format!("{}: {e}", point.describe())))
        .collect::<Result<Vec<_>, _>>()?;
    let definition = Definition {
        job_file: job_file.display().to_string(),
        axes,
        seeds,
        settings,
    };
    if args.task.is_some() {
        layout.start_points()?;
    } else {
        layout.start(&definition)?;
    }
    if args.cluster.is_some() && !pending.is_empty() {
        let script = cluster::slurm_script(dir, &pending_index)?;
        let path = layout.script();
        store::write_atomically(&path, script.as_bytes())?;
        return Ok(crate::shared::Printed::from(format!(
            "{} of {} points to run: sbatch {}, then ioslice sweep --merge {}\n",
            pending.len(),
            points.len(),
            path.display(),
            dir.display()
        )));
    }
    let stop = crate::signals::stop_on_signals()?;
    let work: Vec<_> = pending.iter().zip(&plans).collect();
    let results = in_parallel(&work, &stop, |(point, (plan, spec))| {
        let report =
            simulate(plan, *spec, &stop).map_err(|e| format!("{}: {e}", point.describe()))?;
        if stop.is_set() {
            // Ended early: not a finished point.
            return Ok(None);
        }
        let result: PointResult = figures(&point.values, point.seed, &report);
        layout.store(point, &result)?;
        Ok(Some(()))
    });
    let mut done = 0;
    for result in results.into_iter().flatten() {
        let finished: Result<Option<()>, String> = result;
        done += usize::from(finished?.is_some());
    }
    if let Some((line, status)) = crate::signals::interrupted(&stop) {
        eprintln!(
            "{line}: {done} of {} points to run done, stored in {}; the same command resumes",
            pending.len(),
            dir.display()
        );
        let mut printed = crate::shared::Printed::from(String::new());
        printed.status = status;
        return Ok(printed);
    }
    if let Some(index) = args.task {
        return Ok(crate::shared::Printed::from(format!(
            "point {index} ({}) stored\n",
            points[index].describe()
        )));
    }
    merge(&layout, &definition, points.len() - pending.len())
}

/// What the points share besides axes and seeds.
fn settings(args: &SweepArgs, job_file: &std::path::Path) -> Result<store::Settings, String> {
    let bytes =
        std::fs::read(job_file).map_err(|e| format!("{}: cannot read: {e}", job_file.display()))?;
    let sim = &args.simulation;
    let mut machine: Vec<String> = sim.device.iter().map(|d| format!("device={d}")).collect();
    machine.extend(sim.host.iter().map(|h| format!("host={h}")));
    machine.extend(sim.cgroup.iter().map(|c| format!("cgroup={c}")));
    machine.extend(sim.controller.iter().map(|c| format!("controller={c}")));
    machine.extend(sim.kernel.iter().map(|k| format!("kernel={k}")));
    Ok(store::Settings {
        job_file_fnv1a: store::fnv1a(&bytes),
        sched: args.sched.clone(),
        set: args.set.clone(),
        machine,
    })
}

/// Check each axis value alone on the base settings, so that a bad value is named.
fn check_values(base: &grid::Base, axes: &[axis::Axis]) -> Result<(), String> {
    for axis in axes {
        for value in &axis.values {
            let point = grid::Point {
                values: vec![(axis.name.clone(), value.clone())],
                seed: base.simulation.seed,
            };
            grid::plan(base, &point)
                .map_err(|e| format!("--axis {}: bad value `{value}`: {e}", axis.name))?;
        }
    }
    Ok(())
}

/// Merge the point files into `results.json` and `report.html`; `skipped` points were
/// already stored before this run.
fn merge(
    layout: &Layout,
    definition: &Definition,
    skipped: usize,
) -> Result<crate::shared::Printed, String> {
    let (points, missing) = layout.merge(definition);
    let merged = Merged {
        definition,
        spread: SPREAD,
        points,
        missing,
    };
    store::write_json(&layout.results(), &merged)?;
    store::write_atomically(&layout.page(), page::render(&merged).as_bytes())?;
    let total = merged.points.len() + merged.missing.len();
    let mut text = format!(
        "{} of {total} points ({skipped} stored before): {} and {}\n",
        merged.points.len(),
        layout.results().display(),
        layout.page().display()
    );
    if !merged.missing.is_empty() {
        text.push_str(&format!(
            "{} points missing, first {}\n",
            merged.missing.len(),
            merged.missing[0]
        ));
    }
    Ok(crate::shared::Printed::from(text))
}
