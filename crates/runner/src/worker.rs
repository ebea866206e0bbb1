//! A job process's thread in a real run: it drives the job's [`JobClock`] on the real clock,
//! submits each request through its [`Batch`] (one client per file), reaps and times the
//! completions, and applies fio's error rules.

use std::time::{Duration, Instant};

use ioslice_core::{Direction, Nanos, StopSignal};
use ioslice_fio::pattern::{DataDirection, IoUnit};
use ioslice_fio::workload::{direction_index, JobClock, Step};
use ioslice_fio::{JobSpec, JobStats};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ioslice_engine::{AlignedBuffer, Batch, IoOutcome, Transfer};

use crate::plan::ProcessPlan;
use crate::ProcessResult;

/// A request in flight.
struct Pending {
    direction: DataDirection,
    file: usize,
    offset: u64,
    length: u64,
    /// Time spent handing it to the engine (fio's submission latency).
    slat: Nanos,
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
        let (low, high) = self.spec.startdelay;
        let delay = if high > low {
            process.rng.gen_range(low..=high)
        } else {
            low
        };
        let start = self.now() + delay;
        self.sleep_until(start);
        let mut clock = JobClock::new(&self.spec, process.pattern.clone(), self.now());
        let mut fill = vec![0u8; self.spec.block_size[1].max().max(1) as usize];
        ChaCha8Rng::seed_from_u64(process.fill_seed).fill_bytes(&mut fill);

        let mut state = State {
            stats: JobStats::default(),
            first_error: None,
            stopped_by_error: false,
            pending: Vec::new(),
            free: Vec::new(),
            arrived: Vec::new(),
            spare: Vec::new(),
        };
        self.open_lane();
        let end = loop {
            self.reap(&mut state, &mut clock);
            if self.stop.is_set() {
                clock.abort();
            }
            let now = self.now();
            match clock.poll(now, &mut process.rng) {
                Step::Submit(unit) => self.submit(&unit, &fill, now, &clock, &mut state),
                Step::WaitUntil(at) => self.wait(&mut state, &mut clock, Some(at)),
                Step::AwaitCompletion => self.wait(&mut state, &mut clock, None),
                Step::Done => break self.now(),
            }
        };
        for client in self.batch.finish() {
            client.exit();
        }
        ProcessResult {
            stats: state.stats,
            end,
            ramp_end: clock.ramp_end(),
            first_error: state.first_error,
            stopped_by_error: state.stopped_by_error,
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
        loop {
            let now = self.now();
            if at <= now || self.stop.is_set() {
                return;
            }
            std::thread::sleep(Duration::from_nanos((at - now).min(STOP_CHECK)));
        }
    }

    /// Submit `unit`, asked for at `now` (job time, just read).
    fn submit(
        &mut self,
        unit: &IoUnit,
        fill: &[u8],
        now: Nanos,
        clock: &JobClock,
        state: &mut State,
    ) {
        let d = direction_index(unit.direction);
        state.stats.record_depth(clock.in_flight());
        state.stats.issued[d] += 1;
        let length = usize::try_from(unit.length).unwrap_or(usize::MAX);
        let pending = Pending {
            direction: unit.direction,
            file: unit.file,
            offset: unit.offset,
            length: unit.length,
            slat: 0,
        };
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
                for chunk in buffer.as_mut_slice().chunks_mut(fill.len()) {
                    chunk.copy_from_slice(&fill[..chunk.len()]);
                }
                Direction::Write
            }
            // Trim jobs are refused by `check_supported` before the run.
            DataDirection::Read | DataDirection::Trim => Direction::Read,
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
        clock.on_complete(now);
        let d = direction_index(pending.direction);
        match outcome {
            Ok(result) => {
                if state.spare.len() < MAX_SPARE_BUFFERS {
                    state.spare.push(result.buffer);
                }
                if now >= clock.ramp_end() {
                    state.stats.directions[d].record(
                        pending.length,
                        pending.slat,
                        nanos(result.latency),
                        now - clock.ramp_end(),
                    );
                }
            }
            Err(error) => {
                let errno = error.errno();
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
                    state.stopped_by_error = true;
                    clock.abort();
                }
            }
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
}

/// Most buffers a job keeps for reuse.
const MAX_SPARE_BUFFERS: usize = 256;
