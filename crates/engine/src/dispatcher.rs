//! The dispatcher thread: owns the policy and the backend, and is the only code that talks
//! to either.
//!
//! One turn of its loop:
//!
//! 1. **Receive.** Take submissions from the channel and insert each into the policy with a
//!    fresh [`RequestId`], until the channel is empty or the policy holds `max_queued`
//!    requests (then the channel fills and clients block: push-back). The dispatcher keeps
//!    each request's buffer and completer in `pending`, by id.
//! 2. **Dispatch.** While the backend has fewer than `depth` operations in flight, ask the
//!    policy: a [`Dispatch::Request`] becomes one vectored [`IoOp`] carrying the buffers of
//!    the request and of every request merged into it ([`Request::ids`]), sorted by offset;
//!    a [`Dispatch::WaitUntil`] becomes the deadline of the next backend wait;
//!    [`Dispatch::Empty`] ends the turn. (Should a policy ever hand over parts that are
//!    not contiguous, each contiguous run becomes its own operation and the policy still
//!    hears of one completion, once all of them are done.)
//! 3. **Wait** on the backend until a completion, a client's wake-up, or the deadline.
//! 4. **Complete.** Split each operation's result among its parts (below), tell the policy
//!    with the errno, fulfil each client's future exactly once, and fold the batch into the
//!    statistics under one lock.
//!
//! # Splitting a result among merged parts
//!
//! Parts are laid out in offset order. On success with `n` bytes, a part that lies wholly
//! within the first `n` bytes succeeds; every other part fails with
//! [`IoErrorKind::ShortTransfer`] (errno `EIO`), and the policy hears `EIO`. An operation of
//! several parts that fails with an errno is sent again part by part (briefly exceeding the
//! queue depth), so the error fails only the requests whose range it lies in; a single part
//! fails with the errno. The policy hears of the merged request once, with the first errno.
//! A failed request never stops the others.
//!
//! # Exactly once
//!
//! A request id is in exactly one place: `pending` (in the policy) or an operation in
//! `ops` (at the device). It leaves `pending` when dispatched and leaves `ops` when
//! completed; a dispatch naming an id not pending, or a completion for a token not in
//! flight, is counted in [`Snapshot::double_completions`](crate::Snapshot) (and asserts in
//! debug builds) instead of being completed again.
//!
//! # Shutdown
//!
//! Once asked to stop, the dispatcher tells the policy every process it has seen has
//! exited (so no idling delays the drain), then keeps turning until nothing is pending or in
//! flight, and returns. Requests that reach the channel after that are dropped with it, and
//! their completers fail them with a shutdown error.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::{Completion, Dispatch, Nanos, ProcessId, Request, RequestId, Scheduler};

use crate::backend::{Backend, IoDone, IoOp};
use crate::completion::{Completer, IoError, IoErrorKind, IoOutcome, IoResult};
use crate::handle::{Message, Submission};
use crate::stats::{Recorder, Sample};

/// One client request at the device, part of an operation.
#[derive(Debug)]
struct Part {
    len: usize,
    submission: Submission,
}

/// One backend operation: a contiguous run of parts of one policy request.
#[derive(Debug)]
struct Op {
    request_key: u64,
    parts: Vec<Part>,
}

/// One policy request at the device, until all its operations are back.
#[derive(Debug)]
struct Dispatched {
    request: Request,
    dispatch_time: Nanos,
    ops_left: usize,
    error: Option<i32>,
}

/// What the dispatcher thread owns.
pub(crate) struct Dispatcher {
    pub backend: Box<dyn Backend>,
    pub policy: Box<dyn Scheduler>,
    pub receiver: Receiver<Message>,
    /// Set while the dispatcher sleeps in the backend's wait (see `Shared::dispatcher_asleep`).
    pub asleep: Arc<AtomicBool>,
    /// A message taken from the channel while deciding whether to sleep.
    stash: Option<Message>,
    pub stopping: Arc<AtomicBool>,
    pub recorder: Arc<Recorder>,
    pub started: Instant,
    pub depth: usize,
    pub max_queued: usize,
    next_id: u64,
    next_token: u64,
    pending: HashMap<RequestId, Submission>,
    ops: HashMap<u64, Op>,
    dispatched: HashMap<u64, Dispatched>,
    parts_in_flight: usize,
    processes: BTreeSet<ProcessId>,
    submitted: u64,
    double_completions: u64,
    last_now: Nanos,
    done: Vec<IoDone>,
    samples: Vec<Sample>,
    outcomes: Vec<(Completer, IoOutcome)>,
}

impl Dispatcher {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        backend: Box<dyn Backend>,
        policy: Box<dyn Scheduler>,
        receiver: Receiver<Message>,
        asleep: Arc<AtomicBool>,
        stopping: Arc<AtomicBool>,
        recorder: Arc<Recorder>,
        started: Instant,
        depth: usize,
        max_queued: usize,
    ) -> Self {
        Self {
            backend,
            policy,
            receiver,
            asleep,
            stash: None,
            stopping,
            recorder,
            started,
            depth,
            max_queued,
            next_id: 0,
            next_token: 0,
            pending: HashMap::new(),
            ops: HashMap::new(),
            dispatched: HashMap::new(),
            parts_in_flight: 0,
            processes: BTreeSet::new(),
            submitted: 0,
            double_completions: 0,
            last_now: 0,
            done: Vec::new(),
            samples: Vec::new(),
            outcomes: Vec::new(),
        }
    }

    /// Engine time: nanoseconds since start, never going backwards.
    fn now(&mut self) -> Nanos {
        let elapsed = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last_now = self.last_now.max(elapsed);
        self.last_now
    }

    /// Run until asked to stop and drained. An error is a backend failure that ended the
    /// engine; every request still held has been failed with it.
    pub(crate) fn run(mut self) -> io::Result<()> {
        let mut exits_told = false;
        loop {
            let throttled = self.receive();
            let stopping = self.stopping.load(Ordering::Acquire);
            if stopping && !exits_told {
                exits_told = true;
                let now = self.now();
                for &process in &self.processes {
                    self.policy.process_exited(process, now);
                }
            }
            let deadline = self.pump();
            if stopping && self.ops.is_empty() && self.backend.in_flight() == 0 {
                if self.pending.is_empty() {
                    self.publish();
                    return Ok(());
                }
                if self.policy.queued() == 0 {
                    // The policy holds nothing yet requests are pending: it lost them.
                    // Fail them rather than wait forever.
                    for (_, submission) in self.pending.drain() {
                        self.double_completions += 1;
                        submission.completer.fail(IoErrorKind::ShutDown);
                    }
                    continue;
                }
            }
            self.publish();
            if throttled && self.pending.len() < self.max_queued {
                // The channel may hold more than we took; take it before sleeping.
                continue;
            }
            if !self.may_sleep() {
                continue;
            }
            let waited = self.backend.wait(deadline, &mut self.done);
            self.asleep.store(false, Ordering::SeqCst);
            if let Err(error) = waited {
                if matches!(
                    error.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) {
                    continue;
                }
                self.fail_everything(&error);
                return Err(error);
            }
            self.complete_batch();
        }
    }

    /// Announce sleep, then look at the channel once more: a message that arrived meanwhile
    /// was sent by a client that saw the dispatcher awake and did not wake it, so it must be
    /// taken now. Returns whether the dispatcher may block in the backend's wait.
    fn may_sleep(&mut self) -> bool {
        if self.stash.is_some() {
            // The policy is full; a completion or a deadline wakes the dispatcher.
            return true;
        }
        self.asleep.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        match self.receiver.try_recv() {
            Ok(message) => {
                self.asleep.store(false, Ordering::SeqCst);
                self.stash = Some(message);
                false
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => true,
        }
    }

    /// Move submissions from the channel into the policy. Returns whether it stopped
    /// because the policy holds `max_queued` requests.
    fn receive(&mut self) -> bool {
        loop {
            if self.pending.len() >= self.max_queued {
                return true;
            }
            let next = match self.stash.take() {
                Some(message) => Ok(message),
                None => self.receiver.try_recv(),
            };
            let message = match next {
                Ok(message) => message,
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return false,
            };
            let now = self.now();
            match message {
                Message::Exit(process) => self.policy.process_exited(process, now),
                Message::Submit(submission) => {
                    self.submitted += 1;
                    self.processes.insert(submission.process);
                    let id = RequestId(self.next_id);
                    self.next_id += 1;
                    let submit_time = u64::try_from(
                        submission
                            .submitted
                            .saturating_duration_since(self.started)
                            .as_nanos(),
                    )
                    .unwrap_or(u64::MAX)
                    .min(now);
                    let request = Request {
                        id,
                        process: submission.process,
                        group: submission.group,
                        priority: submission.priority,
                        direction: submission.direction,
                        // O_DIRECT: the client waits for every request, reads and writes alike.
                        sync: true,
                        sector: submission.offset / SECTOR_SIZE,
                        sectors: u32::try_from(submission.buffer.len() as u64 / SECTOR_SIZE)
                            .unwrap_or(u32::MAX),
                        submit_time,
                        merged: Vec::new(),
                    };
                    self.pending.insert(id, submission);
                    // Merged or queued, the request stays pending under its own id; the
                    // carrier's `merged` list names it when the policy dispatches it.
                    let _ = self.policy.insert(request, now);
                }
            }
        }
    }

    /// Hand the backend what the policy gives while there is room. Returns the deadline
    /// of a policy's "wait until".
    fn pump(&mut self) -> Option<Instant> {
        while self.backend.in_flight() < self.depth {
            let now = self.now();
            match self.policy.dispatch(now) {
                Dispatch::Request(request) => self.issue(request, now),
                Dispatch::WaitUntil(at) => {
                    // A time now or past is taken as the next nanosecond, as the simulator does.
                    let at = at.max(now + 1);
                    return Some(self.started + Duration::from_nanos(at));
                }
                Dispatch::Empty => return None,
            }
        }
        None
    }

    fn issue(&mut self, request: Request, now: Nanos) {
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
        // Contiguous runs: one run (one operation) whenever the policy merged correctly.
        let mut runs: Vec<Vec<Part>> = Vec::new();
        for part in parts {
            let end_of_last = runs
                .last()
                .and_then(|run| run.last())
                .map(|last: &Part| last.submission.offset + last.len as u64);
            match runs.last_mut() {
                Some(run) if end_of_last == Some(part.submission.offset) => run.push(part),
                _ => runs.push(vec![part]),
            }
        }
        debug_assert!(
            runs.len() <= 1,
            "policy merged requests that are not contiguous"
        );
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
        for mut run in runs {
            let token = self.next_token;
            self.next_token += 1;
            let offset = run[0].submission.offset;
            let direction = run[0].submission.direction;
            let buffers = run
                .iter_mut()
                .map(|part| std::mem::replace(&mut part.submission.buffer, empty_buffer()))
                .collect();
            self.parts_in_flight += run.len();
            self.ops.insert(
                token,
                Op {
                    request_key: key,
                    parts: run,
                },
            );
            self.backend.push(IoOp {
                token,
                direction,
                offset,
                buffers,
            });
        }
    }

    fn complete_batch(&mut self) {
        if self.done.is_empty() {
            return;
        }
        let finished = Instant::now();
        let mut done = std::mem::take(&mut self.done);
        for io_done in done.drain(..) {
            self.complete_op(io_done, finished);
        }
        self.done = done;
        // Statistics first, so a client whose future has resolved finds its request counted.
        self.publish();
        for (completer, outcome) in self.outcomes.drain(..) {
            completer.complete(outcome);
        }
    }

    fn complete_op(&mut self, io_done: IoDone, finished: Instant) {
        let Some(op) = self.ops.remove(&io_done.token) else {
            debug_assert!(
                false,
                "completion for token {} not in flight",
                io_done.token
            );
            self.double_completions += 1;
            return;
        };
        let (transferred, errno) = match &io_done.result {
            Ok(bytes) => (*bytes, None),
            Err(error) => (0, Some(error.raw_os_error().unwrap_or(libc::EIO))),
        };
        if errno.is_some() && op.parts.len() > 1 && io_done.buffers.len() == op.parts.len() {
            self.retry_parts(op, io_done.buffers);
            return;
        }
        self.parts_in_flight -= op.parts.len();
        let mut buffers = io_done.buffers.into_iter();
        let mut position = 0usize;
        let mut op_error = errno;
        for part in op.parts {
            let Part { len, submission } = part;
            let buffer = buffers.next();
            let start = position;
            position += len;
            let latency = finished.saturating_duration_since(submission.submitted);
            let kind = match (errno, buffer.is_some()) {
                (Some(errno), _) => Some(IoErrorKind::Os(errno)),
                (None, false) => Some(IoErrorKind::Os(libc::EIO)),
                (None, true) if position <= transferred => None,
                (None, true) => Some(IoErrorKind::ShortTransfer {
                    transferred: transferred.saturating_sub(start).min(len),
                }),
            };
            self.samples.push(Sample {
                group: Arc::clone(&submission.group_path),
                process: submission.process.0,
                direction: submission.direction,
                bytes: len as u64,
                ok: kind.is_none(),
                latency,
            });
            let outcome = match (kind, buffer) {
                (None, Some(buffer)) => Ok(IoResult {
                    buffer,
                    bytes: len,
                    offset: submission.offset,
                    latency,
                }),
                (kind, _) => {
                    op_error = op_error.or(Some(libc::EIO));
                    Err(IoError {
                        direction: submission.direction,
                        offset: submission.offset,
                        len: len as u64,
                        kind: kind.unwrap_or(IoErrorKind::Os(libc::EIO)),
                    })
                }
            };
            self.outcomes.push((submission.completer, outcome));
        }
        let key = op.request_key;
        let now = self.now();
        if let Some(dispatched) = self.dispatched.get_mut(&key) {
            dispatched.ops_left = dispatched.ops_left.saturating_sub(1);
            dispatched.error = dispatched.error.or(op_error);
            if dispatched.ops_left == 0 {
                self.finish_request(key, now);
            }
        }
    }

    /// A merged operation failed: send each part again on its own, so that the error
    /// fails only the requests whose range it lies in. The policy hears of the request
    /// once every part is back.
    fn retry_parts(&mut self, op: Op, buffers: Vec<crate::AlignedBuffer>) {
        if let Some(dispatched) = self.dispatched.get_mut(&op.request_key) {
            dispatched.ops_left += op.parts.len() - 1;
        }
        for (part, buffer) in op.parts.into_iter().zip(buffers) {
            let token = self.next_token;
            self.next_token += 1;
            let offset = part.submission.offset;
            let direction = part.submission.direction;
            self.ops.insert(
                token,
                Op {
                    request_key: op.request_key,
                    parts: vec![part],
                },
            );
            self.backend.push(IoOp {
                token,
                direction,
                offset,
                buffers: vec![buffer],
            });
        }
    }

    /// Every operation of a policy request is back: tell the policy, once.
    fn finish_request(&mut self, key: u64, now: Nanos) {
        if let Some(dispatched) = self.dispatched.remove(&key) {
            let completion = Completion {
                request: dispatched.request,
                dispatch_time: dispatched.dispatch_time,
                error: dispatched.error,
            };
            self.policy.complete(&completion, now);
        }
    }

    fn publish(&mut self) {
        self.recorder.record(
            &self.samples,
            self.submitted,
            self.pending.len(),
            self.parts_in_flight,
            self.double_completions,
        );
        self.samples.clear();
    }

    /// The backend failed for good: fail every request still held with its errno.
    fn fail_everything(&mut self, error: &io::Error) {
        let errno = error.raw_os_error().unwrap_or(libc::EIO);
        for (_, submission) in self.pending.drain() {
            submission.completer.fail(IoErrorKind::Os(errno));
        }
        for (_, op) in self.ops.drain() {
            for part in op.parts {
                part.submission.completer.fail(IoErrorKind::Os(errno));
            }
        }
        self.parts_in_flight = 0;
        self.publish();
    }
}

/// A zero-length placeholder left in a submission whose buffer went to the device.
fn empty_buffer() -> crate::AlignedBuffer {
    crate::AlignedBuffer::new(0, 1)
}
