//! fio's `exec` engine in a real run: a job that moves no data and runs a program for its
//! runtime, on a thread of its own with no file and no I/O engine.
//!
//! As fio 3.33's `engines/exec.c` does ([`ioslice_fio::exec`]): the first I/O starts the
//! program (its standard output and error to `JOBNAME.stdout`/`.stderr` in the working
//! directory with `std_redirect`, else the run's own); every later one sleeps 50 ms after a
//! think time of 50 ms, and the first to end past the runtime sends SIGTERM and sleeps
//! `grace_time` seconds inside itself. At the job's end a program still running gets SIGKILL
//! (fio's `fio_exec_cleanup`) and is reaped. Each I/O counts as a read of no bytes, timed
//! from its start to its end, as fio counts them. A program that cannot be started fails
//! the job with its errno, where fio's forked child would report `execvp`'s failure.
//! `wait_for` and `startdelay` apply as to any job; `ramp_time` does not (nothing to ramp).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;

use ioslice_core::{Nanos, StopSignal};
use ioslice_fio::exec::POLL_US;
use ioslice_fio::{JobSpec, JobStats};

use crate::waitee::Waitees;
use crate::worker::{await_start, thread_id, thread_usage, usage_since};
use crate::ProcessResult;

/// One `exec` job process on its thread; `started` is the run's start.
pub(crate) struct ExecJob {
    pub(crate) spec: JobSpec,
    pub(crate) started: Instant,
    pub(crate) stop: StopSignal,
    /// Where the job waits for the job it names in `wait_for=`, and says when it is done.
    pub(crate) waitees: Arc<Waitees>,
    /// The process's random stream (for a `startdelay` range).
    pub(crate) rng: ChaCha8Rng,
}

impl ExecJob {
    fn now(&self) -> Nanos {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Run the program for the job's runtime; the job's result.
    pub(crate) fn run(mut self) -> ProcessResult {
        let usage_at_start = thread_usage();
        await_start(
            &self.spec,
            &self.waitees,
            &self.stop,
            self.started,
            &mut self.rng,
        );
        let mut stats = JobStats::for_job(&self.spec);
        let start = self.now();
        let runtime = self.spec.runtime.unwrap_or(0);
        let mut first_error = None;
        let mut error = 0;
        match self.spawn() {
            Ok(mut child) => {
                let spawned = self.now() - start;
                stats.directions[0].record_without_slat(0, spawned, spawned);
                self.poll_until_runtime(&mut child, &mut stats, start, runtime);
                // fio's cleanup: SIGKILL to what still runs; reaped here so none is left.
                if matches!(child.try_wait(), Ok(None)) {
                    let _ = child.kill();
                }
                let _ = child.wait();
            }
            Err(e) => {
                error = e.raw_os_error().unwrap_or(libc::EINVAL);
                first_error = Some(format!(
                    "fio: job {}: cannot execute {}: {e}",
                    self.spec.name,
                    self.spec.exec.program.as_deref().unwrap_or_default()
                ));
            }
        }
        stats.error = error;
        self.waitees.finished(&self.spec.name);
        stats.cpu = usage_since(&usage_at_start);
        ProcessResult {
            stats,
            end: self.now(),
            ramp_end: start,
            stopped_by_error: first_error.is_some(),
            first_error,
            verify_reports: Vec::new(),
            log_error: None,
            thread_id: thread_id(),
        }
    }

    /// The program started as fio starts it.
    fn spawn(&self) -> std::io::Result<Child> {
        let argv = self
            .spec
            .exec
            .argv(&self.spec.name, self.spec.runtime.unwrap_or(0) / 1_000);
        let mut command = Command::new(argv.first().map_or("", String::as_str));
        command.args(argv.iter().skip(1)).stdin(Stdio::null());
        if let Some((out, err)) = self.spec.exec.output_files(&self.spec.name) {
            command
                .stdout(output_file(&out)?)
                .stderr(output_file(&err)?);
        }
        command.spawn()
    }

    /// The I/Os after the first: think, sleep, look at the clock; past the runtime (or on a
    /// stop request), SIGTERM and the grace time, which ends the job.
    fn poll_until_runtime(
        &self,
        child: &mut Child,
        stats: &mut JobStats,
        start: Nanos,
        runtime: Nanos,
    ) {
        let poll = Duration::from_micros(POLL_US);
        loop {
            std::thread::sleep(poll);
            let issued = self.now();
            std::thread::sleep(poll);
            let over = self.now() - start > runtime || self.stop.is_set();
            if over {
                terminate(child);
                std::thread::sleep(Duration::from_secs(self.spec.exec.grace_time_s));
            }
            let now = self.now();
            stats.directions[0].record_without_slat(0, now - issued, now - start);
            if over {
                return;
            }
        }
    }
}

/// A program's output file as fio makes it: created or truncated, mode 0644.
fn output_file(name: &str) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(name)
}

/// SIGTERM to the program, if it still runs.
fn terminate(child: &mut Child) {
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill only sends a signal to the child this job started and has not reaped.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}
