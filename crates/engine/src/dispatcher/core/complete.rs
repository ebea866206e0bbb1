//! A finished operation's way back: its result split among the parts merged into it (in
//! offset order: a part wholly within the bytes transferred succeeds, any other fails), a
//! merged operation that failed sent again part by part, the policy told once per request,
//! the statistics batch taken (to be folded after the lock) or published, and everything failed when the backend or the engine
//! fails.
//!
//! Touched under the lock by whichever thread runs a turn (see the `core` module).

use std::io;
use std::time::Instant;

use ioslice_core::{Completion, Nanos};

use super::{Core, Op, Part};
use crate::backend::{IoDone, IoOp};
use crate::buffer::AlignedBuffer;
use crate::completion::{IoError, IoErrorKind, IoResult};
use crate::stats::{Gauges, Sample};
use crate::sync::now;

impl Core {
    pub(crate) fn complete_batch(&mut self) {
        if self.done.is_empty() {
            return;
        }
        let finished = now();
        let mut done = std::mem::take(&mut self.done);
        for io_done in done.drain(..) {
            self.complete_op(io_done, finished);
        }
        self.done = done;
    }

    pub(crate) fn complete_op(&mut self, io_done: IoDone, finished: Instant) {
        let Some(op) = self.ops.remove(&io_done.token) else {
            debug_assert!(
                false,
                "completion for token {} not in flight",
                io_done.token
            );
            self.double_completions += 1;
            return;
        };
        if op.timed_out {
            return self.absorb_late(io_done, op.lane);
        }
        self.dispatcher_ops -= usize::from(op.by_dispatcher);
        self.uncount_lane_op(op.lane);
        let (transferred, errno) = match &io_done.result {
            Ok(bytes) => (*bytes, None),
            Err(error) => (0, Some(error.raw_os_error().unwrap_or(libc::EIO))),
        };
        if errno.is_some() && op.parts.len() > 1 && io_done.buffers.len() == op.parts.len() {
            self.retry_parts(op, io_done.buffers);
            return;
        }
        self.parts_in_flight -= op.parts.len();
        let key = op.request_key;
        let op_error = self.complete_parts(op.parts, io_done.buffers, transferred, errno, finished);
        self.op_done(key, op_error, finished);
    }

    /// Hand each part of an operation its outcome (in offset order, `transferred` bytes
    /// done or failed with `errno`) and sample it; returns the errno the policy hears.
    fn complete_parts(
        &mut self,
        parts: Vec<Part>,
        buffers: Vec<AlignedBuffer>,
        transferred: usize,
        errno: Option<i32>,
        finished: Instant,
    ) -> Option<i32> {
        let mut buffers = buffers.into_iter();
        let mut position = 0usize;
        let mut op_error = errno;
        for part in parts {
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
            self.samples
                .push(submission.sample(len, kind.is_none(), latency));
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
        op_error
    }

    /// One operation of the policy request `key` is back, `finished` (failed with
    /// `op_error`, if so): once all of them are, tell the policy.
    pub(super) fn op_done(&mut self, key: u64, op_error: Option<i32>, finished: Instant) {
        // The batch's completion time, not another clock read per operation.
        let finished_at =
            u64::try_from(finished.saturating_duration_since(self.started).as_nanos())
                .unwrap_or(u64::MAX);
        self.last_now = self.last_now.max(finished_at);
        let now = self.last_now;
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
    pub(crate) fn retry_parts(&mut self, op: Op, buffers: Vec<AlignedBuffer>) {
        if let Some(dispatched) = self.dispatched.get_mut(&op.request_key) {
            dispatched.ops_left += op.parts.len() - 1;
        }
        for (part, buffer) in op.parts.into_iter().zip(buffers) {
            let token = self.next_token;
            self.next_token += 1;
            let offset = part.submission.offset;
            let direction = part.submission.direction;
            self.dispatcher_ops += usize::from(op.by_dispatcher);
            self.count_lane_op(op.lane);
            self.ops.insert(
                token,
                Op {
                    request_key: op.request_key,
                    parts: vec![part],
                    lane: op.lane,
                    by_dispatcher: op.by_dispatcher,
                    timed_out: false,
                },
            );
            self.arm_timeout(token);
            self.backend.push(IoOp {
                token,
                direction,
                offset,
                buffers: vec![buffer],
                lane: op.lane,
            });
        }
    }

    /// Every operation of a policy request is back: tell the policy, once.
    pub(crate) fn finish_request(&mut self, key: u64, now: Nanos) {
        if let Some(dispatched) = self.dispatched.remove(&key) {
            let completion = Completion {
                request: dispatched.request,
                dispatch_time: dispatched.dispatch_time,
                error: dispatched.error,
            };
            self.queue.complete(&completion, now);
        }
    }

    /// Whether the statistics batch or the gauges changed since they were last taken.
    pub(crate) fn has_unpublished(&self) -> bool {
        self.unpublished || !self.samples.is_empty()
    }

    /// Take the statistics batch (swapped into the empty `into`) with the gauges of this
    /// moment, to be folded into the recorder once the lock is released.
    pub(crate) fn take_samples(&mut self, into: &mut Vec<Sample>) -> Gauges {
        std::mem::swap(into, &mut self.samples);
        self.unpublished = false;
        self.batches += 1;
        self.recorder.take();
        Gauges {
            batch: self.batches,
            submitted: self.submitted,
            queued: self.pending.len(),
            in_flight: self.parts_in_flight,
            double_completions: self.double_completions,
            timed_out: self.timed_out,
            late_completions: self.late_completions,
        }
    }

    /// Fold the statistics batch in now, under the lock: for the rare paths (closing, a
    /// failure, a panic) that end without a turn's hand-over after the lock.
    pub(crate) fn publish(&mut self) {
        let mut samples = Vec::new();
        let gauges = self.take_samples(&mut samples);
        self.recorder.fold(&samples, gauges);
        samples.clear();
        self.samples = samples;
    }

    /// The backend failed for good: fail every request still held with its errno, and close.
    pub(crate) fn fail_everything(&mut self, error: io::Error) {
        let errno = error.raw_os_error().unwrap_or(libc::EIO);
        self.fail_all(IoErrorKind::Os(errno));
        self.closed = true;
        self.failure = Some(error);
        self.publish();
    }

    /// Fail every request pending or at the device with `kind`.
    pub(crate) fn fail_all(&mut self, kind: IoErrorKind) {
        for (_, submission) in self.pending.drain() {
            submission.completer.fail(kind.clone());
        }
        for (_, op) in self.ops.drain() {
            for part in op.parts {
                part.submission.completer.fail(kind.clone());
            }
        }
        self.dispatched.clear();
        self.deadlines.clear();
        self.timed_out_ops = 0;
        self.parts_in_flight = 0;
        self.dispatcher_ops = 0;
        for lane in &mut self.lanes {
            lane.ops = 0;
        }
    }
}
