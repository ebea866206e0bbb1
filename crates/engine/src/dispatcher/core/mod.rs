//! The engine's state behind its one lock ([`Core`]): the request queue (the policy and its
//! trace, [`RequestQueue`], whose dispatch loop the simulator shares), the backend's non-blocking
//! side, every request pending in the policy or at the device (the in-flight table), the
//! merge bookkeeping of each dispatched request, and the statistics batch; and one turn over
//! it (reap, complete, dispatch, submit), which never blocks.
//!
//! Touched by whichever thread holds the lock: a client's, the poller, a lane's thread or the
//! dispatcher thread. Nothing here knows which one: the roles' state is kept here
//! (`roles::Roles`) but only the `drive` and `timer` modules read or change it; the core
//! only records whose turn it is, to mark the operations the dispatcher thread must reap.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_core::id_map::IdHasher;
use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::request_queue::{run_queue, QueueDevice, RequestQueue};
use ioslice_core::{GroupTree, Nanos, ProcessId, Request, RequestId, Scheduler, TraceSink};

use super::roles::{Role, Roles};
use crate::backend::{Backend, Doorbell, IoDone, IoOp, Notifier, SHARED_LANE};
use crate::completion::{Completer, IoError, IoErrorKind, IoOutcome};
use crate::request::Submission;
use crate::stats::{Recorder, Sample};
use crate::sync::now;

mod complete;
mod regroup;
mod timeout;

/// One client request at the device, part of an operation.
#[derive(Debug)]
pub(crate) struct Part {
    pub(crate) len: usize,
    pub(crate) submission: Submission,
}

/// One backend operation: a contiguous run of parts of one policy request.
#[derive(Debug)]
pub(crate) struct Op {
    pub(crate) request_key: u64,
    pub(crate) parts: Vec<Part>,
    /// The backend lane it completes on.
    pub(crate) lane: usize,
    /// Issued in a turn of the dispatcher thread, which then reaps it before giving up the
    /// poller role (nobody else may be waiting for it).
    pub(crate) by_dispatcher: bool,
    /// Its requests timed out and were completed with `ETIMEDOUT`; the device still has it
    /// (see the `timeout` module).
    pub(crate) timed_out: bool,
}

/// One policy request at the device, until all its operations are back.
#[derive(Debug)]
pub(crate) struct Dispatched {
    pub(crate) request: Request,
    pub(crate) dispatch_time: Nanos,
    pub(crate) ops_left: usize,
    pub(crate) error: Option<i32>,
}

pub(crate) type Outcomes = Vec<(Completer, IoOutcome)>;

/// A map keyed by the engine's own sequential ids: they need no protection against
/// adversarial keys, so the core's multiplicative hash replaces SipHash (three inserts and
/// removals per request).
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Most operations a deferred submission leaves queued: the next one hands them all to the
/// device, so that a job refilling its queue depth does not starve the device meanwhile.
pub(crate) const DEFER_AT_MOST: usize = 4;

/// A backend lane's state in the core (index = lane; the shared lane is 0).
#[derive(Debug, Default, Clone)]
pub(crate) struct LaneState {
    /// Opened by a thread and not closed since.
    pub(crate) open: bool,
    /// Its thread is blocked in the lane's waiter: only that thread reaps the lane.
    pub(crate) waiting: bool,
    /// Operations on the lane not yet reaped.
    pub(crate) ops: usize,
}

/// The engine's state behind the lock.
pub(crate) struct Core {
    /// Who holds which role (see the `drive` module); the core only keeps them.
    pub(crate) roles: Roles,
    pub(crate) backend: Box<dyn Backend>,
    /// The policy, and where its decisions and the requests' arrivals, dispatches and
    /// completions go when the engine is traced.
    pub(crate) queue: RequestQueue<Box<dyn TraceSink + Send>>,
    /// The groups with their weights and limits as they now are (changed at run time by
    /// [`Core::update_group`]).
    pub(crate) groups: GroupTree,
    /// Whether the policy runs under the limit layer: some group had a limit at the start.
    pub(crate) limit_layer: bool,
    /// Whether io.latency runs: some group had a latency target at the start.
    pub(crate) latency_layer: bool,
    pub(crate) recorder: Arc<Recorder>,
    pub(crate) started: Instant,
    pub(crate) depth: usize,
    pub(crate) next_id: u64,
    pub(crate) next_token: u64,
    pub(crate) pending: IdMap<RequestId, Submission>,
    pub(crate) ops: IdMap<u64, Op>,
    pub(crate) dispatched: IdMap<u64, Dispatched>,
    pub(crate) parts_in_flight: usize,
    /// Every backend lane by id (0: the shared lane).
    pub(crate) lanes: Vec<LaneState>,
    /// The current turn leaves its system calls for after the lock.
    pub(crate) defer_syscalls: bool,
    /// Doorbells to ring once the lock is released.
    pub(crate) doorbells: Vec<Doorbell>,
    /// Waiters to wake once the lock is released.
    pub(crate) wakes: Vec<Notifier>,
    pub(crate) processes: BTreeSet<ProcessId>,
    pub(crate) submitted: u64,
    pub(crate) double_completions: u64,
    pub(crate) last_now: Nanos,
    pub(crate) done: Vec<IoDone>,
    /// Completions not yet taken for the statistics (see the `stats` module).
    pub(crate) samples: Vec<Sample>,
    /// A turn ran since the statistics batch and gauges were last taken.
    pub(crate) unpublished: bool,
    /// Statistics batches taken so far (numbers their gauges).
    pub(crate) batches: u64,
    pub(crate) outcomes: Outcomes,
    /// The policy's last "wait until", from the last dispatch.
    pub(crate) timer: Option<Instant>,
    /// This turn leaves what it dispatches queued at the backend (see [`Shared::submit_as`]).
    ///
    /// [`Shared::submit_as`]: crate::dispatcher::Shared::submit_as
    pub(crate) defer_submit: bool,
    /// A turn left operations queued at the backend.
    pub(crate) deferred: bool,
    /// Operations pushed to the backend since it last submitted.
    pub(crate) unsubmitted: usize,
    /// Whose turn it is (the dispatcher marks the operations it issues).
    pub(crate) turn_role: Option<Role>,
    /// Operations the dispatcher thread issued that are still at the device.
    pub(crate) dispatcher_ops: usize,
    /// Times the dispatcher thread took the poller role (what the tests check it is spared).
    #[cfg(test)]
    pub(crate) dispatcher_polls: u64,
    pub(crate) stopping: bool,
    pub(crate) exits_told: bool,
    /// Drained after a shutdown, or failed: takes no more requests.
    pub(crate) closed: bool,
    /// A thread panicked while holding the lock; the engine stopped.
    pub(crate) panicked: bool,
    /// The backend error that ended the engine.
    pub(crate) failure: Option<io::Error>,
    /// How long an operation may stay at the device before its requests fail with
    /// `ETIMEDOUT` (nanoseconds; `None`: for ever).
    pub(crate) io_timeout: Option<Nanos>,
    /// (deadline, token) of the operations at the device, in dispatch order.
    pub(crate) deadlines: VecDeque<(Nanos, u64)>,
    /// Operations that timed out and are still at the device.
    pub(crate) timed_out_ops: usize,
    /// Requests completed with `ETIMEDOUT`.
    pub(crate) timed_out: u64,
    /// Answers the device gave to operations after they had timed out.
    pub(crate) late_completions: u64,
}

impl Core {
    /// The state behind a new engine's lock: nothing pending, at the device or polling.
    pub(crate) fn new(
        backend: Box<dyn Backend>,
        policy: Box<dyn Scheduler>,
        trace: Option<Box<dyn TraceSink + Send>>,
        groups: &GroupTree,
        recorder: Arc<Recorder>,
        started: Instant,
        depth: usize,
    ) -> Self {
        Core {
            backend,
            // Engine time starts at 0 with the engine: the trace's times are engine times.
            queue: RequestQueue::new(policy, trace, 0, groups),
            groups: groups.clone(),
            limit_layer: groups.has_limits(),
            latency_layer: ioslice_core::iolatency::has_targets(groups),
            recorder,
            started,
            depth,
            next_id: 0,
            next_token: 0,
            pending: IdMap::default(),
            ops: IdMap::default(),
            dispatched: IdMap::default(),
            parts_in_flight: 0,
            lanes: vec![LaneState::default()],
            defer_syscalls: false,
            doorbells: Vec::new(),
            wakes: Vec::new(),
            processes: BTreeSet::new(),
            roles: Roles::default(),
            submitted: 0,
            double_completions: 0,
            last_now: 0,
            done: Vec::new(),
            samples: Vec::new(),
            unpublished: false,
            batches: 0,
            outcomes: Vec::new(),
            timer: None,
            turn_role: None,
            defer_submit: false,
            deferred: false,
            unsubmitted: 0,
            dispatcher_ops: 0,
            #[cfg(test)]
            dispatcher_polls: 0,
            stopping: false,
            exits_told: false,
            closed: false,
            panicked: false,
            failure: None,
            io_timeout: None,
            deadlines: VecDeque::new(),
            timed_out_ops: 0,
            timed_out: 0,
            late_completions: 0,
        }
    }

    /// Engine time: nanoseconds since start, never going backwards.
    pub(crate) fn now(&mut self) -> Nanos {
        let elapsed = now().saturating_duration_since(self.started);
        let elapsed = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.last_now = self.last_now.max(elapsed);
        self.last_now
    }

    /// A turn left system calls, outcomes or statistics for after the lock.
    pub(crate) fn has_after_unlock(&self) -> bool {
        !self.outcomes.is_empty()
            || !self.doorbells.is_empty()
            || !self.wakes.is_empty()
            || self.has_unpublished()
    }

    /// Nothing pending or in flight.
    pub(crate) fn drained(&self) -> bool {
        self.pending.is_empty() && self.ops.is_empty() && self.backend.in_flight() == 0
    }

    /// Put a submission into the policy under a fresh id.
    pub(crate) fn insert(&mut self, submission: Submission) {
        // The client read the clock an instant ago: no need to read it again.
        let submitted = u64::try_from(
            submission
                .submitted
                .saturating_duration_since(self.started)
                .as_nanos(),
        )
        .unwrap_or(u64::MAX);
        self.last_now = self.last_now.max(submitted);
        let now = self.last_now;
        self.submitted += 1;
        self.processes.insert(submission.process);
        let id = RequestId(self.next_id);
        self.next_id += 1;
        let submit_time = submitted.min(now);
        let request = Request {
            id,
            process: submission.process,
            group: submission.group,
            priority: submission.priority,
            direction: submission.direction,
            // O_DIRECT: the client waits for every read and write. A discard is never sync
            // (the kernel's `op_is_sync`; `BLKDISCARD` sets no `REQ_SYNC`).
            sync: submission.direction != ioslice_core::Direction::Discard,
            sector: submission.offset / SECTOR_SIZE,
            sectors: u32::try_from(submission.buffer.len() as u64 / SECTOR_SIZE)
                .unwrap_or(u32::MAX),
            submit_time,
            merged: Vec::new(),
        };
        self.pending.insert(id, submission);
        // Merged or queued, the request stays pending under its own id; the carrier's
        // `merged` list names it when the policy dispatches it.
        let _ = self.queue.insert(request, now);
    }

    /// One turn: reap (if `reap`), complete, dispatch while there is room, submit; the
    /// statistics batch is left for whoever releases the lock to take.
    /// A backend failure fails every request and closes the engine.
    pub(crate) fn turn(&mut self, reap: bool) {
        if self.closed {
            return;
        }
        self.reap(reap);
        self.complete_batch();
        self.fail_lost_requests();
        self.pump();
        if self.expire_timeouts() {
            self.pump();
        }
        if let Err(error) = self.hand_over() {
            self.fail_everything(error);
            return;
        }
        self.unpublished = true;
    }

    /// Take what the backend has finished: the shared lane's (if `shared`) and that of every
    /// thread's lane whose thread is not blocked on it (anyone reaps it then).
    fn reap(&mut self, shared: bool) {
        let mut done = std::mem::take(&mut self.done);
        if shared {
            self.backend.reap(&mut done);
        }
        for (lane, state) in self.lanes.iter().enumerate().skip(1) {
            if state.ops > 0 && !state.waiting {
                self.backend.reap_lane(lane, &mut done);
            }
        }
        self.done = done;
    }

    /// Stopping, with nothing at the device, the policy holds nothing yet requests are
    /// pending: it lost them. Fail them rather than wait forever.
    fn fail_lost_requests(&mut self) {
        if !(self.stopping
            && self.ops.is_empty()
            && self.backend.in_flight() == 0
            && !self.pending.is_empty()
            && self.queue.policy().queued() == 0)
        {
            return;
        }
        for (_, submission) in self.pending.drain() {
            self.double_completions += 1;
            self.outcomes.push((
                submission.completer,
                Err(IoError {
                    direction: submission.direction,
                    offset: submission.offset,
                    len: submission.buffer.len() as u64,
                    kind: IoErrorKind::ShutDown,
                }),
            ));
        }
    }

    /// Hand the device what the turn pushed: now, after the lock (`defer_syscalls`), or not
    /// yet if this turn defers its submission and fewer than [`DEFER_AT_MOST`] are queued.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.defer_submit && self.unsubmitted < DEFER_AT_MOST {
            self.deferred = true;
            return Ok(());
        }
        self.deferred = false;
        self.unsubmitted = 0;
        if self.defer_syscalls {
            self.backend.submit_later(&mut self.doorbells)
        } else {
            self.backend.submit()
        }
    }

    /// Hand the backend what the policy gives while there is room ([`run_queue`]); remember
    /// a policy's "wait until" as the timer.
    pub(crate) fn pump(&mut self) {
        // One clock read per turn: its dispatches are one instant to the policy.
        let now = self.now();
        self.timer = run_queue(self, now).map(|at| self.started + Duration::from_nanos(at));
    }

    pub(crate) fn issue(&mut self, request: Request, now: Nanos) {
        let mut parts: Vec<Part> = Vec::with_capacity(1 + request.merged.len());
        for id in request.ids() {
            match self.pending.remove(&id) {
                Some(submission) => parts.push(Part {
                    len: submission.buffer.len(),
                    submission,
                }),
                None => {
                    debug_assert!(false, "policy dispatched {id:?}, which is not pending");
                    self.double_completions += 1;
                }
            }
        }
        parts.sort_by_key(|part| part.submission.offset);
        let key = self.next_token;
        let runs = contiguous_runs(parts);
        self.dispatched.insert(
            key,
            Dispatched {
                request,
                dispatch_time: now,
                ops_left: runs.len(),
                error: None,
            },
        );
        if runs.is_empty() {
            // Every id was bogus: the policy still expects a completion.
            self.finish_request(key, now);
            return;
        }
        for run in runs {
            self.issue_run(key, run);
        }
    }

    /// One contiguous run of parts of the policy request `key` becomes one backend operation,
    /// pushed on the lane its first part names (if still open).
    fn issue_run(&mut self, key: u64, mut run: Vec<Part>) {
        let token = self.next_token;
        self.next_token += 1;
        let offset = run[0].submission.offset;
        let direction = run[0].submission.direction;
        let lane = self.lane_for(run[0].submission.lane);
        let buffers = run
            .iter_mut()
            .map(|part| std::mem::replace(&mut part.submission.buffer, empty_buffer()))
            .collect();
        self.parts_in_flight += run.len();
        // The dispatcher thread waits for its own operations on the shared lane only; a
        // lane's operations are reaped by the thread waiting on it.
        let by_dispatcher = self.turn_role == Some(Role::Dispatcher) && lane == SHARED_LANE;
        self.dispatcher_ops += usize::from(by_dispatcher);
        self.count_lane_op(lane);
        self.ops.insert(
            token,
            Op {
                request_key: key,
                parts: run,
                lane,
                by_dispatcher,
                timed_out: false,
            },
        );
        self.arm_timeout(token);
        self.unsubmitted += 1;
        self.backend.push(IoOp {
            token,
            direction,
            offset,
            buffers,
            lane,
        });
    }

    /// The lane a submission tagged `lane` goes to: its own while it is open, else the
    /// shared lane (its thread closed it, or never had one).
    pub(crate) fn lane_for(&self, lane: usize) -> usize {
        match self.lanes.get(lane) {
            Some(state) if state.open => lane,
            _ => SHARED_LANE,
        }
    }

    pub(crate) fn count_lane_op(&mut self, lane: usize) {
        if let Some(state) = self.lanes.get_mut(lane).filter(|_| lane != SHARED_LANE) {
            state.ops += 1;
        }
    }

    pub(crate) fn uncount_lane_op(&mut self, lane: usize) {
        if let Some(state) = self.lanes.get_mut(lane).filter(|_| lane != SHARED_LANE) {
            state.ops = state.ops.saturating_sub(1);
        }
    }
}

/// The engine's side of the dispatch loop: room while fewer than the queue depth are live at
/// the backend; a dispatched request becomes backend operations.
impl QueueDevice for Core {
    type Sink = Box<dyn TraceSink + Send>;

    fn queue(&mut self) -> &mut RequestQueue<Self::Sink> {
        &mut self.queue
    }

    #[inline]
    fn has_room(&self) -> bool {
        self.live_in_flight() < self.depth
    }

    #[inline]
    fn issue(&mut self, request: Request, now: Nanos) {
        Core::issue(self, request, now);
    }
}

/// A zero-length placeholder left in a submission whose buffer went to the device.
pub(crate) fn empty_buffer() -> crate::AlignedBuffer {
    crate::AlignedBuffer::empty()
}

/// Split parts sorted by offset into contiguous runs, one operation each: a single run (the
/// parts themselves, no copy) whenever the policy merged correctly, as it always should.
pub(crate) fn contiguous_runs(parts: Vec<Part>) -> Vec<Vec<Part>> {
    let end = |part: &Part| part.submission.offset + part.len as u64;
    if parts
        .windows(2)
        .all(|pair| end(&pair[0]) == pair[1].submission.offset)
    {
        return if parts.is_empty() {
            Vec::new()
        } else {
            vec![parts]
        };
    }
    debug_assert!(false, "policy merged requests that are not contiguous");
    let mut runs: Vec<Vec<Part>> = Vec::new();
    for part in parts {
        match runs.last_mut() {
            Some(run) if run.last().map(end) == Some(part.submission.offset) => run.push(part),
            _ => runs.push(vec![part]),
        }
    }
    runs
}
