//! A job process's thread in a real run: it drives the job's [`JobClock`] on the real clock,
//! submits each request through its [`Batch`] (one client per file), reaps and times the
//! completions, and applies fio's error rules. With `verify=`, its [`Verifier`] fills the
//! writes and checks what is read back (the read-back phases are in this file, the blocks'
//! contents in `crate::verify`). A job with `ioengine=null` hands nothing to the engine: as
//! fio's null engine, each request is queued in the job itself and completes, with no system
//! call, when the job next waits. A job with `ioengine=cpuio` (`cpumode=noop`) has no file:
//! each request spins the thread for `cpuchunks` and completes as a null one does; its think
//! time, which fio's engine sets to hold `cpuload`, is a sleep.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_core::{Direction, Nanos, StopSignal};
use ioslice_fio::errno::{goes_on, EILSEQ};
use ioslice_fio::logs::{JobLogs, LoggedIo};
use ioslice_fio::pattern::{DataDirection, IoUnit};
use ioslice_fio::workload::{direction_index, JobClock, Step};
use ioslice_fio::{CpuUsage, IoEngine, JobSpec, JobStats};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ioslice_engine::{AlignedBuffer, Batch, IoOutcome, Transfer};

use crate::file_ops::range::RangeFiles;
use crate::flow::FlowGate;
use crate::plan::ProcessPlan;
use crate::progress::JobProgress;
use crate::regroup::MoveSlot;
use crate::verify::{Verifier, Written};
use crate::waitee::Waitees;
use crate::ProcessResult;

/// What a request is for, as verification sees it.
#[derive(Debug, Clone, Copy)]
enum Check {
    /// Nothing to check.
    None,
    /// A write of a block with verify headers: remembered once it completes.
    Wrote(Written),
    /// Reading back a block this job wrote (not issued by the job's clock).
    ReadBack(Written),
    /// A read of the workload, checked against the headers it finds.
    Read,
}

/// A request in flight.
struct Pending {
    direction: DataDirection,
    file: usize,
    offset: u64,
    length: u64,
    /// Time spent handing it to the engine (fio's submission latency).
    slat: Nanos,
    check: Check,
}

/// A job process on its thread.
pub(crate) struct Worker {
    pub(crate) spec: JobSpec,
    /// One client per file of the job; every request completes into the batch.
    pub(crate) batch: Batch,
    /// Each file's path (for error messages) and buffer alignment.
    pub(crate) files: Vec<(String, usize)>,
    pub(crate) started: Instant,
    /// Asked to end the run early (SIGINT): stop issuing, let what is in flight complete.
    pub(crate) stop: StopSignal,
    /// The job's place in its flow group (`flow_id`, `flow`), if it has one.
    pub(crate) flow: FlowGate,
    /// Where the job waits for the job it names in `wait_for=`, and says when it is done.
    pub(crate) waitees: Arc<Waitees>,
    /// The job's `verify=`, if it verifies.
    pub(crate) verifier: Option<Verifier>,
    /// Where the job publishes its progress, if anyone follows the run's.
    pub(crate) progress: Option<JobProgress>,
    /// Where the run's scheduled changes tell this process to move to another group.
    pub(crate) moves: Arc<MoveSlot>,
    /// The group the process starts in when its job was moved before it started.
    pub(crate) starts_moved_to: Option<String>,
}

/// The longest a job thread sleeps (a think time, a rate limit, a start delay) before it
/// looks at the stop request again.
const STOP_CHECK: Nanos = 50_000_000;

fn nanos(duration: Duration) -> Nanos {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl Worker {
    fn now(&self) -> Nanos {
        nanos(self.started.elapsed())
    }

    pub(crate) fn run(mut self, mut process: ProcessPlan) -> ProcessResult {
        let usage_at_start = thread_usage();
        await_start(
            &self.spec,
            &self.waitees,
            &self.stop,
            self.started,
            &mut process.rng,
        );
        let mut clock = JobClock::new(&self.spec, process.pattern.clone(), self.now());
        if let Some(progress) = &self.progress {
            progress.running(&clock, self.now());
        }
        let mut fill = vec![0u8; self.spec.block_size[1].max().max(1) as usize];
        ChaCha8Rng::seed_from_u64(process.fill_seed).fill_bytes(&mut fill);

        let mut state = State::new(&self.spec);
        if let Some(group) = &self.starts_moved_to {
            state.stats.moved_to(group, 0);
        }
        state.logs = process.logs.take();
        self.open_lane();
        if self.verifier.as_ref().is_some_and(Verifier::verify_only) {
            self.dry_run(&mut process);
        } else {
            self.flow.join(&self.spec);
            self.run_workload(&mut process, &mut clock, &fill, &mut state);
            self.flow.leave();
        }
        // The read-back phase, unless an error or a stop ended the job (as in fio).
        let ended_early = state.stopped_by_error || self.stop.is_set();
        if let Some(verifier) = self.verifier.as_mut().filter(|_| !ended_early) {
            verifier.queue_all();
            self.read_back(&mut state, &mut clock);
        }
        let end = self.now();
        if let Some(progress) = &self.progress {
            progress.done();
        }
        self.moves.ended();
        for client in self.batch.finish() {
            client.exit();
        }
        let since_start = end.saturating_sub(clock.ramp_end());
        let log_error = state
            .logs
            .take()
            .and_then(|logs| logs.finish(since_start).err());
        state.stats.cpu = usage_since(&usage_at_start);
        state.stats.latency_target = clock.latency_report();
        state.stats.steady_state = clock.steady_state_report();
        if let (0, Some(errno)) = (state.stats.error, clock.error()) {
            state.stats.error = errno;
            state.first_error = clock.error_message().map(str::to_string);
            state.stopped_by_error = true;
        }
        self.waitees.finished(&self.spec.name);
        ProcessResult {
            stats: state.stats,
            end,
            ramp_end: clock.ramp_end(),
            first_error: state.first_error,
            stopped_by_error: state.stopped_by_error,
            verify_reports: self.verifier.map(|v| v.reports).unwrap_or_default(),
            log_error,
            thread_id: thread_id(),
        }
    }

    /// The job's I/O as its clock issues it, with the backlog's checks between.
    fn run_workload(
        &mut self,
        process: &mut ProcessPlan,
        clock: &mut JobClock,
        fill: &[u8],
        state: &mut State,
    ) {
        loop {
            self.reap(state, clock);
            if self.stop.is_set() {
                clock.abort();
            }
            if self.verifier.as_ref().is_some_and(Verifier::backlog_due) {
                self.check_backlog(state, clock);
            }
            if !self.stop.is_set() && self.flow.holds_back() {
                self.held_back(state, clock);
                continue;
            }
            let now = self.now();
            match clock.poll(now, &mut process.rng) {
                Step::Submit(unit) => {
                    self.follow_move(state, clock);
                    self.flow.issued();
                    let check = self.check_of(&unit);
                    self.submit(&unit, fill, now, clock.in_flight(), check, state);
                }
                Step::WaitUntil(at) => self.wait(state, clock, Some(at)),
                Step::AwaitCompletion => self.wait(state, clock, None),
                Step::ResetStatistics => state.stats = state.stats.restarted(&self.spec),
                Step::Done => return,
            }
        }
    }

    /// Move the process's clients to the group a scheduled change named, if one did since
    /// the last request. The changes thread made the group before it posted the move, so
    /// only an engine shutting down can refuse it: the job then ends with that error.
    fn follow_move(&mut self, state: &mut State, clock: &mut JobClock) {
        let Some(group) = self.moves.take() else {
            return;
        };
        if let Err(error) = self.batch.move_to(&group) {
            if state.first_error.is_none() {
                state.first_error = Some(format!("ioslice: moving to cgroup '{group}': {error}"));
            }
            state.stopped_by_error = true;
            clock.abort();
            return;
        }
        let at = self.now().saturating_sub(clock.ramp_end());
        state.stats.moved_to(&group, at);
    }

    /// Held back by the flow group: with `flow_sleep`, let what is in flight complete, then
    /// sleep; without, give the CPU up for a moment (fio spins).
    fn held_back(&mut self, state: &mut State, clock: &mut JobClock) {
        if self.flow.sleep == 0 {
            std::thread::yield_now();
            return;
        }
        while clock.in_flight() > 0 && !self.stop.is_set() {
            self.wait(state, clock, None);
        }
        let until = self.now() + self.flow.sleep;
        self.sleep_until(until);
    }

    /// What verification makes of a unit the clock issues.
    fn check_of(&mut self, unit: &IoUnit) -> Check {
        let Some(verifier) = self.verifier.as_mut() else {
            return Check::None;
        };
        match unit.direction {
            DataDirection::Write => Check::Wrote(verifier.next_written(unit)),
            _ if verifier.checks_workload_reads() => Check::Read,
            _ => Check::None,
        }
    }

    /// `verify_only`: the writes the job would issue, remembered without issuing them, to be
    /// read back and checked.
    fn dry_run(&mut self, process: &mut ProcessPlan) {
        let Some(verifier) = self.verifier.as_mut() else {
            return;
        };
        while let Some(unit) = process.pattern.next(&mut process.rng) {
            if unit.direction == DataDirection::Write {
                let written = verifier.next_written(&unit);
                verifier.wrote(written);
            }
        }
    }

    /// `verify_backlog`: let the writes in flight finish, then read back the batch.
    fn check_backlog(&mut self, state: &mut State, clock: &mut JobClock) {
        while self.batch.in_flight() > 0 {
            self.wait(state, clock, None);
        }
        if let Some(verifier) = self.verifier.as_mut() {
            verifier.queue_backlog();
        }
        self.read_back(state, clock);
    }

    /// Read back and check what the verifier queued, keeping the job's depth in flight.
    fn read_back(&mut self, state: &mut State, clock: &mut JobClock) {
        let depth = self.spec.effective_depth().max(1) as usize;
        loop {
            while self.batch.in_flight() < depth && !self.stop.is_set() {
                let Some(written) = self.verifier.as_mut().and_then(Verifier::next_check) else {
                    break;
                };
                let unit = IoUnit {
                    direction: DataDirection::Read,
                    file: written.file,
                    offset: written.offset,
                    length: written.length,
                };
                let now = self.now();
                let depth_now = u32::try_from(self.batch.in_flight()).unwrap_or(u32::MAX);
                self.submit(&unit, &[], now, depth_now, Check::ReadBack(written), state);
            }
            if self.batch.in_flight() == 0 {
                return;
            }
            self.wait(state, clock, None);
        }
    }

    /// A lane of the job's engine for this thread, if the job keeps one request in flight
    /// (`iodepth=1`, as every psync job), all its files are on one engine and the backend has
    /// lanes: the job's requests complete there, and the kernel wakes this thread for them
    /// directly instead of through whichever thread polls the shared ring.
    ///
    /// Deeper jobs stay on the shared ring: there the poller reaps everybody's completions in
    /// one batch, which matters to a policy that holds requests (BFQ dispatching a queue's
    /// held request as soon as another's completes); with lanes, each completion waits for
    /// its own thread to run before the policy hears of it (measured in docs/engine.md).
    fn open_lane(&mut self) {
        if self.spec.iodepth <= 1 {
            self.batch.open_lane();
        }
    }

    /// Sleep until `at` (job time), or until a stop is asked.
    fn sleep_until(&self, at: Nanos) {
        sleep_until(self.started, at, &self.stop);
    }

    /// Submit `unit`, asked for at `now` (job time, just read) with `depth` requests in
    /// flight.
    fn submit(
        &mut self,
        unit: &IoUnit,
        fill: &[u8],
        now: Nanos,
        depth: u32,
        check: Check,
        state: &mut State,
    ) {
        let d = direction_index(unit.direction);
        let depth = self
            .spec
            .reported_depth(depth, || state.stats.issued.iter().sum());
        state.stats.record_depth(depth);
        state.stats.issued[d] += 1;
        let length = usize::try_from(unit.length).unwrap_or(usize::MAX);
        let pending = Pending {
            direction: unit.direction,
            file: unit.file,
            offset: unit.offset,
            length: unit.length,
            slat: 0,
            check,
        };
        if self.spec.ioengine == IoEngine::Null {
            state.null_queued.push((pending, now));
            return;
        }
        if self.spec.ioengine == IoEngine::CpuIo {
            // fio's `cpuio` in `noop` mode (`engines/cpu.c`): spin for the cycle, in the
            // job's thread; the cycle completes, as a null request does, at the next wait.
            let until = Instant::now() + Duration::from_nanos(self.spec.cpu.burn());
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            // A cycle moves no data (the simulator's `cpu_engine` completes it with none).
            state.null_queued.push((
                Pending {
                    length: 0,
                    ..pending
                },
                now,
            ));
            return;
        }
        if let IoEngine::Range(op) = self.spec.ioengine {
            let outcome = state.range.apply(op, unit, &self.files[unit.file].0);
            state.range_done.push((pending, outcome));
            return;
        }
        let tag = match state.free.pop() {
            Some(tag) => {
                state.pending[tag] = Some(pending);
                tag
            }
            None => {
                state.pending.push(Some(pending));
                state.pending.len() - 1
            }
        };
        let before = self.started + Duration::from_nanos(now);
        let alignment = self.files[unit.file].1.max(1);
        // A buffer back from an earlier request, else a fresh one (zeroing 4 KiB for every
        // read cost more than the rest of the submission).
        let reused = state.spare.iter().rposition(|buffer| {
            buffer.len() == length
                && (buffer.as_slice().as_ptr() as usize).is_multiple_of(alignment)
        });
        let mut buffer = match reused {
            Some(index) => state.spare.swap_remove(index),
            None => AlignedBuffer::new(length, alignment),
        };
        let direction = match unit.direction {
            DataDirection::Write => {
                match (&check, &self.verifier) {
                    (Check::Wrote(written), Some(verifier)) => {
                        verifier.fill(buffer.as_mut_slice(), written, now);
                    }
                    _ => {
                        for chunk in buffer.as_mut_slice().chunks_mut(fill.len().max(1)) {
                            chunk.copy_from_slice(&fill[..chunk.len()]);
                        }
                    }
                }
                Direction::Write
            }
            DataDirection::Read => Direction::Read,
            // The buffer only gives the discard its length.
            DataDirection::Trim => Direction::Discard,
        };
        let transfer = Transfer {
            direction,
            offset: unit.offset,
            buffer,
            submitted: before,
        };
        self.batch.submit(unit.file, transfer, tag as u64);
        // The request may already be complete (and reaped at the next turn); its slot is
        // only freed by `reap`, so it is still there.
        if let Some(Some(pending)) = state.pending.get_mut(tag) {
            pending.slat = nanos(before.elapsed());
        }
    }

    /// Take every completed request; returns whether there was any. Costs one lock when
    /// nothing completed.
    fn reap(&mut self, state: &mut State, clock: &mut JobClock) -> bool {
        let mut arrived = std::mem::take(&mut state.arrived);
        self.batch.take_completions(&mut arrived);
        let any = !arrived.is_empty();
        // One clock read for the batch.
        let now = if any { self.now() } else { 0 };
        for (tag, outcome) in arrived.drain(..) {
            let tag = usize::try_from(tag).unwrap_or(usize::MAX);
            let Some(pending) = state.pending.get_mut(tag).and_then(Option::take) else {
                debug_assert!(false, "completion for tag {tag}, not in flight");
                continue;
            };
            state.free.push(tag);
            self.complete(state, clock, &pending, outcome, now);
        }
        state.arrived = arrived;
        any
    }

    /// Wait for a completion, or until `deadline` (job time) if there is one. The batch
    /// first hands the device what was submitted since the last wait, in one system call
    /// per engine.
    fn wait(&mut self, state: &mut State, clock: &mut JobClock, deadline: Option<Nanos>) {
        if self.complete_null_queue(state, clock) || self.complete_range_ops(state, clock) {
            return;
        }
        if self.spec.ioengine == IoEngine::CpuIo {
            // No file and nothing in flight: a think time is a sleep.
            if let Some(at) = deadline {
                self.sleep_until(at);
            }
            return;
        }
        // Once here: the batch's own wait flushes whatever is submitted after.
        self.batch.flush();
        loop {
            if self.reap(state, clock) {
                return;
            }
            // A stop ends a think time or a rate limit's wait; a completion still comes.
            if deadline.is_some() && self.stop.is_set() {
                return;
            }
            let now = self.now();
            let until = match deadline {
                Some(at) if at <= now => return,
                // A long sleep comes back to the job's loop now and then to see a stop.
                Some(at) => Some(Instant::now() + Duration::from_nanos((at - now).min(STOP_CHECK))),
                // Nothing in flight cannot complete: poll the clock again.
                None if self.batch.in_flight() == 0 => return,
                None => None,
            };
            self.batch.wait(until);
        }
    }

    /// Account a completed request, reaped at `now` (job time).
    fn complete(
        &mut self,
        state: &mut State,
        clock: &mut JobClock,
        pending: &Pending,
        outcome: IoOutcome,
        now: Nanos,
    ) {
        if !matches!(pending.check, Check::ReadBack(_)) {
            // The depth search judges the total latency, submission included (fio's tnsec).
            let latency = outcome
                .as_ref()
                .map_or(0, |result| nanos(result.latency) + pending.slat);
            clock.on_io_done(now, pending.direction, pending.length, latency);
            clock.on_complete(now);
        }
        match outcome {
            Ok(result) => {
                let verified = self.verify_completed(pending, result.buffer.as_slice());
                if state.spare.len() < MAX_SPARE_BUFFERS {
                    state.spare.push(result.buffer);
                }
                self.account_done(state, clock, pending, nanos(result.latency), now);
                if !verified {
                    self.verify_failed(state, clock);
                }
            }
            Err(error) => self.failed(state, clock, pending, error.errno()),
        }
    }

    /// A request that failed with `errno`: counted, fio's line for the job's first error,
    /// and the job stopped unless fio's rules let it go on.
    fn failed(&mut self, state: &mut State, clock: &mut JobClock, pending: &Pending, errno: i32) {
        let d = direction_index(pending.direction);
        state.stats.directions[d].errors += 1;
        if state.stats.error == 0 {
            state.stats.error = errno;
            let text = ioslice_fio::stats::error_text(errno);
            let direction = match pending.direction {
                DataDirection::Read => "read",
                DataDirection::Write => "write",
                DataDirection::Trim => "trim",
            };
            state.first_error = Some(format!(
                "fio: io_u error on file {}: {text}: {direction} offset={}, buflen={}",
                self.files[pending.file].0, pending.offset, pending.length
            ));
        }
        let spec = &self.spec;
        let goes_on = ioslice_fio::errno::goes_on(
            &spec.continue_on_error,
            &spec.ignore_error,
            pending.direction,
            errno,
        );
        if !goes_on {
            self.stop(state, clock);
        }
    }

    /// A request done at `now` (job time), `clat` after it was handed over: the progress,
    /// the statistics (past the ramp) and the logs hear of it.
    fn account_done(
        &self,
        state: &mut State,
        clock: &JobClock,
        pending: &Pending,
        clat: Nanos,
        now: Nanos,
    ) {
        let d = direction_index(pending.direction);
        if let Some(progress) = &self.progress {
            progress.completed(d, pending.length, clock, now);
        }
        if now < clock.ramp_end() {
            return;
        }
        let since_start = now - clock.ramp_end();
        let (bytes, slat) = (pending.length, pending.slat);
        state.stats.directions[d].record(bytes, slat, clat, since_start);
        if let Some(logs) = &mut state.logs {
            logs.record(&LoggedIo {
                direction: d,
                bytes,
                offset: pending.offset,
                slat,
                clat,
                since_start,
            });
        }
    }

    /// `ioengine=ftruncate` or `falloc`: account the system calls made since the last wait,
    /// each done when its call returned (`crate::file_ops::range`); whether there was any.
    fn complete_range_ops(&mut self, state: &mut State, clock: &mut JobClock) -> bool {
        if state.range_done.is_empty() {
            return false;
        }
        let done = std::mem::take(&mut state.range_done);
        let now = self.now();
        for (pending, outcome) in &done {
            clock.on_complete(now);
            match *outcome {
                Ok(clat) => self.account_done(state, clock, pending, clat, now),
                Err(errno) => self.failed(state, clock, pending, errno),
            }
        }
        state.range_done = done;
        state.range_done.clear();
        true
    }

    /// `ioengine=null`: complete every request the job queued, at once; whether there was
    /// any.
    fn complete_null_queue(&mut self, state: &mut State, clock: &mut JobClock) -> bool {
        if state.null_queued.is_empty() {
            return false;
        }
        let queued = std::mem::take(&mut state.null_queued);
        let now = self.now();
        for (pending, submitted) in &queued {
            let latency = now.saturating_sub(*submitted);
            clock.on_io_done(now, pending.direction, pending.length, latency);
            clock.on_complete(now);
            self.account_done(state, clock, pending, now.saturating_sub(*submitted), now);
        }
        state.null_queued = queued;
        state.null_queued.clear();
        true
    }

    /// Stop the job at once: no more I/O from its clock, nothing more to read back.
    fn stop(&mut self, state: &mut State, clock: &mut JobClock) {
        state.stopped_by_error = true;
        clock.abort();
        if let Some(verifier) = self.verifier.as_mut() {
            verifier.clear();
        }
    }

    /// Remember a completed write, or check a completed read; false if the check failed.
    fn verify_completed(&mut self, pending: &Pending, data: &[u8]) -> bool {
        let Some(verifier) = self.verifier.as_mut() else {
            return true;
        };
        let file = &self.files[pending.file].0;
        match pending.check {
            Check::None => true,
            Check::Wrote(written) => {
                verifier.wrote(written);
                true
            }
            Check::ReadBack(written) => {
                let expect = verifier.expect(pending.offset, pending.length, Some(&written));
                verifier.check(data, file, &expect)
            }
            Check::Read => {
                let expect = verifier.expect(pending.offset, pending.length, None);
                verifier.check(data, file, &expect)
            }
        }
    }

    /// A verify failure: an `EILSEQ` on the read, which stops the job unless fio's rules
    /// let it go on (and `verify_fatal` is off).
    fn verify_failed(&mut self, state: &mut State, clock: &mut JobClock) {
        let d = direction_index(DataDirection::Read);
        state.stats.directions[d].errors += 1;
        if state.stats.error == 0 {
            state.stats.error = EILSEQ;
        }
        let spec = &self.spec;
        let goes_on = goes_on(
            &spec.continue_on_error,
            &spec.ignore_error,
            DataDirection::Read,
            EILSEQ,
        );
        if !goes_on || self.verifier.as_ref().is_some_and(Verifier::fatal) {
            self.stop(state, clock);
        }
    }
}

/// A job's mutable state on its thread.
struct State {
    stats: JobStats,
    first_error: Option<String>,
    stopped_by_error: bool,
    /// Requests in flight by tag (the index); `None` is a free tag, listed in `free`.
    pending: Vec<Option<Pending>>,
    free: Vec<usize>,
    /// Outcomes taken from the queue (kept to reuse its allocation).
    arrived: Vec<(u64, IoOutcome)>,
    /// Buffers of completed requests, for the next ones.
    spare: Vec<AlignedBuffer>,
    /// The job's log files, if it writes any.
    logs: Option<JobLogs>,
    /// `ioengine=null`: the requests queued, with when each was asked for (job time).
    null_queued: Vec<(Pending, Nanos)>,
    /// `ioengine=ftruncate`/`falloc`: the job's files, opened for their system calls.
    range: RangeFiles,
    /// The system calls made since the last wait: how long each took, or its errno.
    range_done: Vec<(Pending, Result<Nanos, i32>)>,
}

impl State {
    fn new(spec: &JobSpec) -> Self {
        Self {
            stats: JobStats::for_job(spec),
            first_error: None,
            stopped_by_error: false,
            pending: Vec::new(),
            free: Vec::new(),
            arrived: Vec::new(),
            spare: Vec::new(),
            logs: None,
            null_queued: Vec::new(),
            range: RangeFiles::default(),
            range_done: Vec::new(),
        }
    }
}

/// Most buffers a job keeps for reuse.
const MAX_SPARE_BUFFERS: usize = 256;

/// The calling thread's resource usage so far (zeros if the kernel will not say).
pub(crate) fn thread_usage() -> libc::rusage {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage into the struct it is given, which lives on this
    // stack for the call.
    let _ = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    usage
}

/// Sleep until `at` (from `started`), waking at least every [`STOP_CHECK`] to look at
/// `stop`; return early once a stop is asked.
fn sleep_until(started: Instant, at: Nanos, stop: &StopSignal) {
    loop {
        let now = nanos(started.elapsed());
        if at <= now || stop.is_set() {
            return;
        }
        std::thread::sleep(Duration::from_nanos((at - now).min(STOP_CHECK)));
    }
}

/// A job process's start, as fio's: it waits for the job it names in `wait_for=`, then
/// sleeps a start delay drawn from `startdelay=`'s range (from `started`, the run's start),
/// both cut short by a stop request.
pub(crate) fn await_start(
    spec: &JobSpec,
    waitees: &Waitees,
    stop: &StopSignal,
    started: Instant,
    rng: &mut impl Rng,
) {
    if let Some(waitee) = &spec.wait_for {
        waitees.wait_for(waitee, stop);
    }
    let (low, high) = spec.startdelay;
    let delay = if high > low {
        rng.gen_range(low..=high)
    } else {
        low
    };
    sleep_until(started, nanos(started.elapsed()) + delay, stop);
}

/// The calling thread's id, which fio reports as a threaded job's `pid`.
pub(crate) fn thread_id() -> u32 {
    // SAFETY: gettid takes nothing and only returns the calling thread's id.
    u32::try_from(unsafe { libc::gettid() }).unwrap_or(0)
}

/// What this thread used since `start`, as fio's `cpu` line counts it.
pub(crate) fn usage_since(start: &libc::rusage) -> CpuUsage {
    let now = thread_usage();
    let time = |t: libc::timeval| {
        u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000
            + u64::try_from(t.tv_usec).unwrap_or(0) * 1_000
    };
    let count = |after: libc::c_long, before: libc::c_long| {
        u64::try_from(after.saturating_sub(before)).unwrap_or(0)
    };
    CpuUsage {
        user: time(now.ru_utime).saturating_sub(time(start.ru_utime)),
        system: time(now.ru_stime).saturating_sub(time(start.ru_stime)),
        ctx: count(now.ru_nvcsw, start.ru_nvcsw) + count(now.ru_nivcsw, start.ru_nivcsw),
        majf: count(now.ru_majflt, start.ru_majflt),
        minf: count(now.ru_minflt, start.ru_minflt),
    }
}
