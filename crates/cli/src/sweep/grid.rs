//! A sweep's points: every combination of the axes' values (the first axis outermost) times
//! every seed (innermost), and each point turned into the one-run comparison plan it runs
//! ([`crate::compare`]'s, so that a point runs exactly as `compare` would run it).

use std::path::{Path, PathBuf};

use ioslice_fio::jobfile::ini::Entry;
use ioslice_fio::jobfile::options::{apply, Outcome};
use ioslice_fio::Origin;

use super::axis::{Axis, Setting};
use crate::compare::execute::RunSpec;
use crate::compare::plan::Plan;
use crate::compare::CompareArgs;
use crate::shared::SimulationArgs;

/// One point of the grid: a value index per axis and a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// The axes' values at this point, in axis order.
    pub values: Vec<(String, String)>,
    /// The seed.
    pub seed: u64,
}

impl Point {
    /// The point file's name: `NAME=VALUE` per axis then `seed=N`, joined by `_`, with any
    /// character outside `[A-Za-z0-9.=-]` written as `+`.
    pub fn file_name(&self) -> String {
        let label: String = self
            .parts()
            .join("_")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._=-".contains(c) {
                    c
                } else {
                    '+'
                }
            })
            .collect();
        format!("{label}.json")
    }

    /// `sched=bfq iodepth=4 seed=2`, for messages.
    pub fn describe(&self) -> String {
        self.parts().join(" ")
    }

    /// `NAME=VALUE` per axis, then `seed=N`.
    fn parts(&self) -> Vec<String> {
        let mut parts: Vec<String> = self
            .values
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        parts.push(format!("seed={}", self.seed));
        parts
    }
}

/// Every point, first axis outermost, seeds innermost.
pub fn points(axes: &[Axis], seeds: &[u64]) -> Vec<Point> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in axes {
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                axis.values.iter().map(move |value| {
                    let mut next = combo.clone();
                    next.push((axis.name.clone(), value.clone()));
                    next
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .flat_map(|values| {
            seeds.iter().map(move |&seed| Point {
                values: values.clone(),
                seed,
            })
        })
        .collect()
}

/// What every point starts from: the job file, the scheduler and the simulated machine.
pub struct Base<'a> {
    /// The job file.
    pub job_file: &'a Path,
    /// The scheduler where no axis sets it.
    pub sched: &'a str,
    /// `--set` tunables for every point.
    pub set: &'a [String],
    /// The machine and run options.
    pub simulation: &'a SimulationArgs,
}

/// The plan of one point, checked, and the run it is.
pub fn plan(base: &Base, point: &Point) -> Result<(Plan, RunSpec), String> {
    let mut args = compare_args(base, point.seed)?;
    let mut job_options = Vec::new();
    for (name, value) in &point.values {
        match super::axis::setting(name)? {
            Setting::Scheduler => args.sched = value.clone(),
            Setting::Tunable(tunable) => args.set.push(format!("{tunable}={value}")),
            Setting::Device(key) => {
                let device = args.simulation.device.take().unwrap_or_default();
                args.simulation.device = Some(with_device_parameter(&device, &key, value));
            }
            Setting::Host(key) => args.simulation.host.push(format!("{key}={value}")),
            Setting::Cgroup(group, key) => args
                .simulation
                .cgroup
                .push(format!("{group}:{key}={value}")),
            Setting::Numjobs => args.clients = vec![value.clone()],
            Setting::JobOption(option) => job_options.push((option, value.clone())),
        }
    }
    let mut plan = Plan::new(&args)?;
    for (option, value) in &job_options {
        set_job_option(&mut plan, option, value)?;
    }
    let spec = RunSpec {
        scheduler: 0,
        clients: plan.clients[0],
    };
    Ok((plan, spec))
}

/// `compare`'s arguments for one seed, the device resolved so that axes can change it.
fn compare_args(base: &Base, seed: u64) -> Result<CompareArgs, String> {
    let sim = base.simulation;
    let defaults = crate::scenario::ScenarioDefaults::read(base.job_file)?;
    let machine = sim.machine(&defaults)?;
    Ok(CompareArgs {
        job_file: PathBuf::from(base.job_file),
        sched: base.sched.to_string(),
        set: base.set.to_vec(),
        clients: Vec::new(),
        simulation: SimulationArgs {
            device: Some(machine.device),
            host: sim.host.clone(),
            kernel: sim.kernel.clone(),
            seed,
            cgroup: sim.cgroup.clone(),
            controller: sim.controller.clone(),
            strict: sim.strict,
            max_jobs: sim.max_jobs,
        },
        output_format: "json".into(),
        trace: crate::trace::TraceArgs {
            trace: None,
            trace_format: None,
        },
        report: crate::report::ReportArgs { report: None },
    })
}

/// `sim:PRESET[:k=v,...]` with `key` set to `value` (replacing any value it had).
fn with_device_parameter(device: &str, key: &str, value: &str) -> String {
    let (head, params) = match device.match_indices(':').nth(1) {
        Some((at, _)) => (&device[..at], &device[at + 1..]),
        None => (device, ""),
    };
    let mut kept: Vec<&str> = params
        .split(',')
        .filter(|p| !p.is_empty() && p.split('=').next() != Some(key))
        .collect();
    let set = format!("{key}={value}");
    kept.push(&set);
    format!("{head}:{}", kept.join(","))
}

/// Set fio option `option` to `value` in every job of the plan.
fn set_job_option(plan: &mut Plan, option: &str, value: &str) -> Result<(), String> {
    let entry = Entry {
        key: option.to_string(),
        value: Some(value.to_string()),
        origin: Origin {
            file: format!("--axis {option}"),
            line: 0,
        },
    };
    for job in &mut plan.job_file.jobs {
        match apply(job, &entry) {
            Ok(Outcome::Applied) => {}
            Ok(_) => {
                return Err(format!(
                    "--axis {option}: ioslice does not simulate option `{option}`: expected an option that changes the I/O (iodepth, bs, rw, ...)"
                ))
            }
            Err(e) => {
                let text = e.to_string();
                let prefix = format!("{}:0: ", entry.origin.file);
                return Err(text.strip_prefix(&prefix).unwrap_or(&text).to_string());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_order_and_file_names() {
        let axes = vec![
            Axis {
                name: "sched".into(),
                values: vec!["cfq".into(), "bfq".into()],
            },
            Axis {
                name: "iodepth".into(),
                values: vec!["1".into(), "4".into()],
            },
        ];
        let points = points(&axes, &[1, 2]);
        assert_eq!(points.len(), 8);
        assert_eq!(points[1].describe(), "sched=cfq iodepth=1 seed=2");
        assert_eq!(points[7].describe(), "sched=bfq iodepth=4 seed=2");
        let odd = Point {
            values: vec![("sched".into(), "cfq:slice_idle=0".into())],
            seed: 3,
        };
        assert_eq!(odd.file_name(), "sched=cfq+slice_idle=0_seed=3.json");
    }

    #[test]
    fn device_parameters_replace_their_value() {
        assert_eq!(with_device_parameter("sim:ssd", "k", "1"), "sim:ssd:k=1");
        assert_eq!(
            with_device_parameter("sim:ssd:k=2,j=3", "k", "1"),
            "sim:ssd:j=3,k=1"
        );
    }
}
