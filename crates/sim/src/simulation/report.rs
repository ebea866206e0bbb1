//! A simulation's start and end: the processes built from the job file, with their files
//! placed on the disk, and the report fio would print once they are done.

use ioslice_core::{GroupTree, ProcessId};
use ioslice_fio::logs::{JobLogs, LogFiles};
use ioslice_fio::plan::plan_run;
use ioslice_fio::workload::JobClock;
use ioslice_fio::{DiskUtil, IoEngine, JobDescription, JobFile, JobReport, JobStats, RunReport};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{
    job_error, Lifecycle, Process, SimConfig, SimError, SimOutcome, Simulation, WritebackCounts,
};
use crate::layout::Layout;
use crate::readahead::FileReadahead;

impl Simulation<'_> {
    pub(super) fn finish(mut self, config: &SimConfig) -> Result<SimOutcome, SimError> {
        if let Some(failure) = self.failure.take() {
            return Err(failure);
        }
        let elapsed = self.now - self.epoch;
        let mut jobs = Vec::with_capacity(self.processes.len());
        for process in &mut self.processes {
            let spec = &self.job_file.jobs[process.spec_index];
            let ramp_end = process
                .clock
                .as_ref()
                .map_or(process.end, JobClock::ramp_end);
            process.stats.runtime = process.end.saturating_sub(ramp_end);
            if let Some(clock) = &process.clock {
                process.stats.latency_target = clock.latency_report();
                process.stats.steady_state = clock.steady_state_report();
                if process.stats.error == 0 {
                    process.stats.error = clock.error().unwrap_or(0);
                }
            }
            if let Some(logs) = process.logs.take() {
                logs.finish(process.stats.runtime)?;
            }
            for direction in &mut process.stats.directions {
                direction.settle();
            }
            jobs.push(JobReport {
                description: JobDescription::of(
                    spec,
                    process.groupid,
                    process.pid.0,
                    process.priority,
                ),
                stats: std::mem::take(&mut process.stats),
            });
        }
        let disk = &self.disk;
        let to_ms = |ns: u64| ns / 1_000_000;
        let disk_util = DiskUtil {
            name: self.device.info().name,
            ios: disk.ios,
            merges: disk.merges,
            ticks: [to_ms(disk.service_ns[0]), to_ms(disk.service_ns[1])],
            in_queue: u64::try_from(disk.in_queue_ns / 1_000_000).unwrap_or(u64::MAX),
            util: if elapsed == 0 {
                0.0
            } else {
                100.0 * disk.busy_ns as f64 / elapsed as f64
            },
        };
        Ok(SimOutcome {
            report: RunReport {
                version: ioslice_core::VERSION.to_string(),
                timestamp: 0,
                elapsed,
                global_options: self.job_file.global_options.clone(),
                jobs,
                disk_util: vec![disk_util],
                scheduler: config.run.scheduler.to_string(),
                device: self.device.info().name,
                cgroups: std::mem::take(&mut self.cgroups),
            },
            submitted: self.submitted,
            completed: self.completed,
            duplicate_completions: self.duplicates,
            elapsed,
            writeback: WritebackCounts {
                bytes_dirtied: self.cache.bytes_dirtied,
                bytes_written: self.cache.bytes_written,
                ..self.writeback_counts
            },
            readahead: self.readahead_counts,
        })
    }
}

/// One process per job clone, from the plan both drivers share (`ioslice_fio::plan`), with
/// its files placed on the disk and its group. Returns the processes and the number of phases.
pub(super) fn build_processes(
    job_file: &JobFile,
    groups: &GroupTree,
    capacity: u64,
    config: &SimConfig,
) -> Result<(Vec<Process>, usize), SimError> {
    let mut layout = Layout::new(capacity);
    let (seed, max_jobs) = (config.run.seed, config.run.max_jobs);
    let plan = plan_run(&job_file.jobs, seed, max_jobs, |_, _| capacity).map_err(job_error)?;
    let mut log_files = config.run.logs.as_ref().map(LogFiles::new);
    let mut processes = Vec::with_capacity(plan.processes.len());
    for process in plan.processes {
        let spec = process.spec;
        let file_sectors = process
            .files
            .iter()
            .map(|file| layout.place(&file.name, file.size))
            .collect::<Result<Vec<_>, _>>()?;
        processes.push(Process {
            spec_index: process.spec_index,
            pid: ProcessId(process.index + 1),
            group: groups.of_job(spec.cgroup.as_deref()),
            priority: spec.priority.unwrap_or_default(),
            phase: process.phase,
            sync_writes: spec.direct || spec.sync_writes,
            buffered_reads: !spec.direct,
            reaps_in_batches: spec.reaps_in_batches(),
            direct_writes_async: false,
            file_sizes: process.files.iter().map(|file| file.size).collect(),
            readahead: vec![FileReadahead::default(); process.files.len()],
            file_sectors,
            pattern: Some(process.pattern),
            clock: None,
            rng: ChaCha8Rng::seed_from_u64(process.seed),
            stats: JobStats::for_job(spec),
            logs: match &mut log_files {
                Some(files) => JobLogs::open(files, spec, process.index + 1)?,
                None => None,
            },
            lifecycle: Lifecycle::Waiting,
            wake_at: None,
            end: 0,
            groupid: process.groupid,
            null_engine: spec.ioengine == IoEngine::Null,
            cpu_free_at: 0,
            zbd: Default::default(),
        });
    }
    Ok((processes, plan.phases))
}
