//! The run plan both drivers share: one process per job clone, in job order, with its files,
//! its I/O pattern, its stonewall phase, its reporting group and its random streams.
//!
//! The simulator and the engine each build their processes from this plan, so the same job
//! file and seed issue the same I/O in simulation and on a real device: the same files of the
//! same sizes, the same offsets and lengths in the same order, the same data written. Where a
//! file's size comes from (the simulated disk's capacity, or what is on the real device
//! already) is the driver's to say.

use crate::job::{phases_and_groups, JobSpec};
pub use crate::pattern::mix;
use crate::pattern::{plan_files, FilePlan, IoPattern, PatternError};

/// The plan of one process (one clone of one job).
#[derive(Debug)]
pub struct ProcessPlan<'a> {
    /// The job it clones.
    pub spec: &'a JobSpec,
    /// The job's index in the job file.
    pub spec_index: usize,
    /// Its index among all processes, from 0 (its process id is this plus one).
    pub index: u32,
    /// Which clone of its job it is, from 0.
    pub clone: u32,
    /// The stonewall phase it runs in.
    pub phase: usize,
    /// Its reporting group (fio's `groupid`).
    pub groupid: u32,
    /// Its files, named and sized.
    pub files: Vec<FilePlan>,
    /// The offsets, lengths and directions it issues.
    pub pattern: IoPattern,
    /// The seed of its random stream (think-time jitter, random choices of the workload).
    pub seed: u64,
}

impl ProcessPlan<'_> {
    /// The seed of the data it writes, derived from its stream.
    pub fn fill_seed(&self) -> u64 {
        mix(self.seed ^ 0x5752_4954_4546_494c)
    }
}

/// The whole plan: every process, and the number of stonewall phases.
#[derive(Debug)]
pub struct RunPlan<'a> {
    /// One per job clone, in job order.
    pub processes: Vec<ProcessPlan<'a>>,
    /// How many stonewall phases the run has (at least 1).
    pub phases: usize,
}

/// fio's limit on the job processes of one run (`REAL_MAX_JOBS`), which its `--max-jobs`
/// raises; ioslice's `--max-jobs` does the same.
pub const DEFAULT_MAX_JOBS: u32 = 4096;

/// The most requests one run may keep in flight, `iodepth` times `numjobs` summed over the
/// jobs: each in-flight request holds its state (and, on a real device, its buffer).
pub const MAX_IN_FLIGHT: u64 = 1 << 20;

/// The most files one run may plan, every job clone's counted: each costs its name, its
/// size and its place on the disk, so a million is about 100 MB.
pub const MAX_FILES: u64 = 1 << 20;

/// Plan the run of `jobs` with `seed` (a job's `randseed` replaces it for that job's clones).
/// `capacity` says how many bytes a file of a job clone may take when the job gives no size:
/// the simulated disk's capacity, or the size of a real file already there. More than
/// `max_jobs` processes in all (every `numjobs` clone counted) is refused before anything
/// is allocated for them.
pub fn plan_run<'a>(
    jobs: &'a [JobSpec],
    seed: u64,
    max_jobs: u32,
    mut capacity: impl FnMut(&JobSpec, u32) -> u64,
) -> Result<RunPlan<'a>, PatternError> {
    check_run_size(jobs, max_jobs)?;
    let slots = phases_and_groups(jobs);
    let mut processes = Vec::new();
    for (spec_index, (spec, &(phase, groupid))) in jobs.iter().zip(&slots).enumerate() {
        for clone in 0..spec.numjobs.max(1) {
            let index = processes.len() as u32;
            let files = plan_files(spec, clone, capacity(spec, clone))?;
            let pattern = IoPattern::new(spec, &files, clone)?;
            let stream = spec.randseed.unwrap_or(seed);
            processes.push(ProcessPlan {
                spec,
                spec_index,
                index,
                clone,
                phase,
                groupid,
                files,
                pattern,
                seed: mix(stream ^ mix(u64::from(index))),
            });
        }
    }
    let phases = slots.last().map_or(1, |&(phase, _)| phase + 1);
    Ok(RunPlan { processes, phases })
}

/// Refuse a run bigger than its limits: `max_jobs` processes, [`MAX_FILES`] files and
/// [`MAX_IN_FLIGHT`] requests in flight, each summed over every job's `numjobs` clones.
fn check_run_size(jobs: &[JobSpec], max_jobs: u32) -> Result<(), PatternError> {
    let Some(first) = jobs.first() else {
        return Ok(());
    };
    let sum = |per_clone: &dyn Fn(&JobSpec) -> u64| -> u64 {
        jobs.iter()
            .map(|job| u64::from(job.numjobs.max(1)).saturating_mul(per_clone(job)))
            .fold(0, u64::saturating_add)
    };
    let file = || first.origin.file.clone();
    let total = sum(&|_| 1);
    if total > u64::from(max_jobs) {
        let limit = max_jobs;
        return Err(PatternError::TooManyJobs {
            file: file(),
            total,
            limit,
        });
    }
    let total = sum(&files_of);
    if total > MAX_FILES {
        let limit = MAX_FILES;
        return Err(PatternError::TooManyFiles {
            file: file(),
            total,
            limit,
        });
    }
    let total = sum(&|job| u64::from(job.iodepth.max(1)));
    if total > MAX_IN_FLIGHT {
        let limit = MAX_IN_FLIGHT;
        return Err(PatternError::TooDeep {
            file: file(),
            total,
            limit,
        });
    }
    Ok(())
}

/// Files one clone of `job` opens: its `filename=` list, else `nrfiles=`.
fn files_of(job: &JobSpec) -> u64 {
    match &job.filename {
        Some(list) => crate::pattern::split_filenames(list).len().max(1) as u64,
        None => u64::from(job.nrfiles.max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::{parse_str, ParseOptions};

    fn jobs(text: &str) -> Vec<JobSpec> {
        parse_str(text, "plan.fio", &ParseOptions::default())
            .expect("job parses")
            .jobs
    }

    #[test]
    fn one_process_per_clone_in_job_order_with_phases_and_distinct_streams() {
        let jobs = jobs("[a]\nrw=read\nsize=1m\nnumjobs=2\n[b]\nstonewall\nrw=randread\nsize=1m\n");
        let plan = plan_run(&jobs, 7, DEFAULT_MAX_JOBS, |_, _| 1 << 30).expect("plans");
        let shape: Vec<_> = plan
            .processes
            .iter()
            .map(|p| (p.spec_index, p.index, p.clone, p.phase))
            .collect();
        assert_eq!(shape, vec![(0, 0, 0, 0), (0, 1, 1, 0), (1, 2, 0, 1)]);
        assert_eq!(plan.phases, 2);
        let seeds: std::collections::BTreeSet<_> = plan.processes.iter().map(|p| p.seed).collect();
        assert_eq!(seeds.len(), 3);
        assert_eq!(plan.processes[0].seed, mix(7 ^ mix(0)));
    }

    #[test]
    fn randseed_replaces_the_run_seed_for_its_job() {
        let jobs = jobs("[a]\nrw=read\nsize=1m\nrandseed=42\n");
        let one = plan_run(&jobs, 1, DEFAULT_MAX_JOBS, |_, _| 1 << 30).expect("plans");
        let two = plan_run(&jobs, 2, DEFAULT_MAX_JOBS, |_, _| 1 << 30).expect("plans");
        assert_eq!(one.processes[0].seed, two.processes[0].seed);
        assert_eq!(one.processes[0].seed, mix(42 ^ mix(0)));
    }
}
