//! A job process's thread in a real run: it drives the job's [`JobClock`] on the real clock,
//! submits each request through its clients, reaps and times the completions, and applies
//! fio's error rules.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_core::{Direction, Nanos};
use ioslice_fio::pattern::{DataDirection, IoUnit};
use ioslice_fio::workload::{direction_index, JobClock, Step};
use ioslice_fio::{JobSpec, JobStats};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{ProcessPlan, ProcessResult};
use crate::buffer::AlignedBuffer;
use crate::completion::{park_until, park_waker, CompletionQueue, IoOutcome, Slot};
use crate::counters::Counters;
use crate::dispatcher::Lane;
use crate::handle::Client;
use crate::request::Transfer;

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
pub(super) struct Worker {
    pub(super) spec: JobSpec,
    /// Where every request of the job completes.
    pub(super) queue: Arc<CompletionQueue>,
    /// One client per file of the job.
    pub(super) clients: Vec<Client>,
    /// Each file's path (for error messages) and buffer alignment.
    pub(super) files: Vec<(String, usize)>,
    pub(super) started: Instant,
}

fn nanos(duration: Duration) -> Nanos {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl Worker {
    fn now(&self) -> Nanos {
        nanos(self.started.elapsed())
    }

    pub(super) fn run(self, mut process: ProcessPlan) -> ProcessResult {
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
            in_flight: 0,
            arrived: Vec::new(),
            spare: Vec::new(),
            lane: self.open_lane(),
        };
        let end = loop {
            self.reap(&mut state, &mut clock);
            let now = self.now();
            match clock.poll(now, &mut process.rng) {
                Step::Submit(unit) => self.submit(&unit, &fill, now, &clock, &mut state),
                Step::WaitUntil(at) => self.wait(&mut state, &mut clock, Some(at)),
                Step::AwaitCompletion => self.wait(&mut state, &mut clock, None),
                Step::Done => break self.now(),
            }
        };
        for client in &self.clients {
            client.flush();
        }
        if let (Some(lane), Some(client)) = (state.lane.take(), self.clients.first()) {
            client.close_lane(lane);
        }
        for client in self.clients {
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
    fn open_lane(&self) -> Option<Lane> {
        if self.spec.iodepth > 1 {
            return None;
        }
        let (first, rest) = self.clients.split_first()?;
        if rest.iter().all(|client| first.same_engine(client)) {
            first.open_lane()
        } else {
            None
        }
    }

    fn sleep_until(&self, at: Nanos) {
        let now = self.now();
        if at > now {
            std::thread::sleep(Duration::from_nanos(at - now));
        }
    }

    /// Submit `unit`, asked for at `now` (job time, just read).
    fn submit(&self, unit: &IoUnit, fill: &[u8], now: Nanos, clock: &JobClock, state: &mut State) {
        let client = &self.clients[unit.file];
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
        state.in_flight += 1;
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
        client.transfer_to(transfer, &self.queue, tag as u64, state.lane.as_ref());
        // The request may already be complete (and reaped at the next turn); its slot is
        // only freed by `reap`, so it is still there.
        if let Some(Some(pending)) = state.pending.get_mut(tag) {
            pending.slat = nanos(before.elapsed());
        }
    }

    /// Take every completed request; returns whether there was any. Costs one lock when
    /// nothing completed.
    fn reap(&self, state: &mut State, clock: &mut JobClock) -> bool {
        let mut arrived = std::mem::take(&mut state.arrived);
        self.queue.take_all(&mut arrived);
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
            state.in_flight -= 1;
            self.complete(state, clock, &pending, outcome, now);
        }
        state.arrived = arrived;
        any
    }

    /// Wait for a completion, or until `deadline` (job time) if there is one. First hands
    /// the device what was submitted since the last wait, in one system call per engine.
    fn wait(&self, state: &mut State, clock: &mut JobClock, deadline: Option<Nanos>) {
        for client in &self.clients {
            client.flush();
        }
        loop {
            if self.reap(state, clock) {
                return;
            }
            let now = self.now();
            let until = match deadline {
                Some(at) if at <= now => return,
                Some(at) => Some(Instant::now() + Duration::from_nanos(at - now)),
                // Nothing in flight cannot complete: poll the clock again.
                None if state.in_flight == 0 => return,
                None => None,
            };
            match self.clients.split_first() {
                Some((first, rest)) if rest.iter().all(|c| first.same_engine(c)) => {
                    // One engine: poll it on this thread unless another thread does.
                    first.wait_queue(&self.queue, until, state.lane.as_ref());
                }
                Some(_) => {
                    // Several engines: park, counted as waiting in each, so that each one's
                    // dispatcher thread polls for this job.
                    if self.queue.register(&park_waker(), &Counters::default()) {
                        for client in &self.clients {
                            client.ensure_poller();
                        }
                        park_until(&*self.queue, until, &Counters::default());
                    }
                }
                None => return,
            }
        }
    }

    /// Account a completed request, reaped at `now` (job time).
    fn complete(
        &self,
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
    in_flight: usize,
    /// Outcomes taken from the queue (kept to reuse its allocation).
    arrived: Vec<(u64, IoOutcome)>,
    /// Buffers of completed requests, for the next ones.
    spare: Vec<AlignedBuffer>,
    /// This job's lane of its engine, if it has one.
    lane: Option<Lane>,
}

/// Most buffers a job keeps for reuse.
const MAX_SPARE_BUFFERS: usize = 256;
