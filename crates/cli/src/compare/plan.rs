//! Everything `compare` needs, checked before the first run starts: the job file, the
//! schedulers with their tunables, the device, the client counts, the cgroup weights and
//! limits, and the output format. Every mistake is one line naming the value.

use ioslice_fio::jobfile::check_supported;
use ioslice_fio::JobFile;
use ioslice_sim::preset::{build as build_device, DeviceSpec};
use ioslice_sim::simulation::SimConfig;

use super::measure::ROOT_GROUP;
use super::sched::{self, ResolvedScheduler};
use super::CompareArgs;
use crate::cgroup_arg;
use crate::shared::{apply_host, load_job_file, warn_unused_cgroups, Machine, RunInputs};

/// Largest client count: the job-file parser's limit on `numjobs`.
const MAX_CLIENTS: u32 = 1_000_000;

/// How the comparison is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    /// The mailing-list tables.
    Table,
    /// One JSON document with every run.
    Json,
}

/// A comparison ready to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The job file as given (for the JSON document).
    pub job_path: String,
    /// The parsed job file, shared by every run.
    pub job_file: JobFile,
    /// Schedulers in the order listed.
    pub schedulers: Vec<ResolvedScheduler>,
    /// The device of every run.
    pub device: DeviceSpec,
    /// Client counts (each replaces every job's numjobs); `None` keeps the job file's.
    pub clients: Vec<Option<u32>>,
    /// The seed, cgroups, controller and job limit of every run.
    pub inputs: RunInputs,
    /// The machine every run has: its device as given, host settings and changes to groups.
    pub machine: Machine,
    /// Cgroup columns in order of first appearance; empty for an ungrouped workload.
    pub columns: Vec<String>,
    /// Tables or JSON.
    pub format: CompareFormat,
    /// `--trace`: the file name each run's trace file is made from, and the format.
    pub trace: Option<(std::path::PathBuf, ioslice_core::trace::TraceFormat)>,
    /// `--report`: where the HTML report (or its data) goes.
    pub report: Option<std::path::PathBuf>,
    /// What the original experiment reported, from the job file's `ioslice-seed:` lines.
    pub seed_figures: Vec<crate::scenario::SeedFigure>,
}

impl Plan {
    /// Check every argument; nothing runs yet.
    pub fn new(args: &CompareArgs) -> Result<Self, String> {
        let format = parse_format(&args.output_format)?;
        let trace = args.trace.resolve()?;
        let set = sched::parse_set(&args.set)?;
        let job_paths = std::slice::from_ref(&args.job_file);
        let defaults = crate::scenario::ScenarioDefaults::read_all(job_paths)?;
        let machine = args.simulation.machine(&defaults)?;
        let schedulers = sched::resolve(&args.sched, &set, machine.kernel.as_deref())?;
        let seed_figures = defaults.seed_figures;
        let device = parse_device(&machine.device)?;
        let mut probe = SimConfig::new(
            args.simulation.seed,
            "noop".parse().map_err(|e| format!("{e}"))?,
            device.clone(),
        );
        apply_host(&mut probe, &machine.host)?;
        let clients = parse_clients(&args.clients)?;
        let inputs = RunInputs::of(&args.simulation)?;
        let job_file = load_job_file(&args.job_file, args.simulation.strict)?;
        check_supported(&job_file).map_err(|e| e.to_string())?;
        check_job_count(&job_file, &clients, args.simulation.max_jobs)?;
        cgroup_arg::check_groups(&job_file, &inputs.cgroups)?;
        warn_unused_cgroups(&job_file, &inputs.cgroups);
        Ok(Self {
            job_path: args.job_file.display().to_string(),
            columns: group_columns(&job_file),
            job_file,
            schedulers,
            device,
            clients,
            inputs,
            machine,
            format,
            trace,
            report: args.report.report.clone(),
            seed_figures,
        })
    }

    /// Whether any job names a cgroup.
    pub fn grouped(&self) -> bool {
        !self.columns.is_empty()
    }
}

/// Refuse, before anything runs, a client count that would give a run more job processes
/// than `max_jobs` (each count replaces every job's numjobs).
fn check_job_count(
    job_file: &JobFile,
    clients: &[Option<u32>],
    max_jobs: u32,
) -> Result<(), String> {
    for count in clients {
        let total: u64 = job_file
            .jobs
            .iter()
            .map(|job| u64::from(count.unwrap_or(job.numjobs).max(1)))
            .sum();
        if total > u64::from(max_jobs) {
            let given = count.map_or("the job file's numjobs".to_string(), |n| {
                format!("--clients {n}")
            });
            return Err(format!(
                "{given} gives {total} job processes in one run: expected at most {max_jobs}, the maximum number of jobs (fio's limit is 4096 too; --max-jobs raises it)"
            ));
        }
    }
    Ok(())
}

/// `--output-format` for compare: `normal` (tables) or `json`.
pub fn parse_format(text: &str) -> Result<CompareFormat, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "normal" | "table" => Ok(CompareFormat::Table),
        "json" => Ok(CompareFormat::Json),
        _ => Err(format!(
            "unknown output format `{text}` for compare: valid values are normal (tables), json"
        )),
    }
}

/// A device spec, with its preset and parameters checked by building it once.
fn parse_device(text: &str) -> Result<DeviceSpec, String> {
    let device: DeviceSpec = text.parse().map_err(|e| format!("--device: {e}"))?;
    build_device(&device).map_err(|e| format!("--device: {e}"))?;
    Ok(device)
}

/// `--clients 1,2,4,8` (already split at commas); none given keeps the job file's numjobs.
pub fn parse_clients(values: &[String]) -> Result<Vec<Option<u32>>, String> {
    if values.is_empty() {
        return Ok(vec![None]);
    }
    values
        .iter()
        .map(|text| {
            text.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_CLIENTS).contains(n))
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "--clients: invalid client count '{text}': expected whole numbers in 1..={MAX_CLIENTS}, comma-separated (e.g. 1,2,4,8)"
                    )
                })
        })
        .collect()
}

/// The cgroups the jobs name, in order of first appearance, with the root (`/`) where a
/// job names none; empty when no job names a cgroup.
pub fn group_columns(job_file: &JobFile) -> Vec<String> {
    if cgroup_arg::job_cgroups(job_file).is_empty() {
        return Vec::new();
    }
    let mut columns: Vec<String> = Vec::new();
    for job in &job_file.jobs {
        let path = job.cgroup.as_deref().unwrap_or("").trim_matches('/');
        let name = if path.is_empty() { ROOT_GROUP } else { path };
        if !columns.iter().any(|c| c == name) {
            columns.push(name.to_string());
        }
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn client_counts() {
        assert_eq!(parse_clients(&[]), Ok(vec![None]));
        assert_eq!(
            parse_clients(&strings(&["1", " 2", "8"])),
            Ok(vec![Some(1), Some(2), Some(8)])
        );
        for bad in ["0", "x", "", "-1", "1.5", "1000001"] {
            let message = parse_clients(&strings(&["1", bad])).unwrap_err();
            assert!(message.contains(&format!("'{bad}'")), "{message}");
            assert!(message.contains("1..=1000000"), "{message}");
        }
    }

    #[test]
    fn formats() {
        assert_eq!(parse_format("normal"), Ok(CompareFormat::Table));
        assert_eq!(parse_format("JSON"), Ok(CompareFormat::Json));
        let message = parse_format("terse").unwrap_err();
        assert!(
            message.contains("terse") && message.contains("json"),
            "{message}"
        );
    }

    #[test]
    fn group_columns_in_job_file_order_with_the_root() {
        let parse = |text: &str| {
            ioslice_fio::jobfile::parse_str(text, "t.fio", &Default::default()).unwrap()
        };
        let grouped = parse("[a]\ncgroup=g2\n[b]\n[c]\ncgroup=/g1/x/\n[d]\ncgroup=g2\n");
        assert_eq!(group_columns(&grouped), ["g2", "/", "g1/x"]);
        assert!(group_columns(&parse("[a]\n[b]\n")).is_empty());
    }

    #[test]
    fn devices_are_checked_before_any_run() {
        assert!(parse_device("sim:null").is_ok());
        assert!(parse_device("sim:floppy").unwrap_err().contains("floppy"));
        assert!(parse_device("sim:sata-7200:warp=9")
            .unwrap_err()
            .contains("warp"));
    }
}
