//! The per-request I/O timeout: an operation at the device longer than the engine's
//! `io_timeout` completes its requests once, with `ETIMEDOUT`, as the kernel's block layer
//! fails a request its driver did not answer in time. The operation stays in the in-flight
//! table, marked timed out, with its buffers still the device's: its late answer, if it ever
//! comes, is taken and dropped (counted as a late completion), never completed again.
//!
//! A timed-out operation no longer counts against the queue depth (as a command the kernel
//! aborted frees its tag), so a device that stops answering does not stop the engine: later
//! requests are dispatched, and time out in turn. The backend still counts it in flight until
//! it is back, so shutdown and an exiting submitter wait for the device's answer: its buffers
//! cannot be given back before.
//!
//! Deadlines are kept in dispatch order, which is deadline order (one timeout, and the
//! engine's clock never goes back): the earliest live one is at the front, found without a
//! search; entries of operations already back are dropped there, or in a compaction once they
//! outnumber the live ones. No clock is read for it: a turn uses the time its dispatch read.
//!
//! Touched under the lock by whichever thread runs a turn (see the `core` module); the
//! waiting threads read [`Core::next_timeout`] to block no later than it.

use std::time::{Duration, Instant};

use ioslice_core::Nanos;

use super::{Core, Part};
use crate::backend::IoDone;
use crate::completion::{IoError, IoErrorKind};

impl Core {
    /// Note the deadline of operation `token`, pushed now.
    pub(crate) fn arm_timeout(&mut self, token: u64) {
        if let Some(timeout) = self.io_timeout {
            let deadline = self.last_now.saturating_add(timeout);
            self.deadlines.push_back((deadline, token));
        }
    }

    /// Whether operation `token` is at the device and has not timed out.
    fn live(&self, token: u64) -> bool {
        self.ops.get(&token).is_some_and(|op| !op.timed_out)
    }

    /// When the earliest operation at the device times out, if one can.
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        let &(deadline, _) = self
            .deadlines
            .iter()
            .find(|&&(_, token)| self.live(token))?;
        Some(self.started + Duration::from_nanos(deadline))
    }

    /// Time out every operation whose deadline has passed (by the turn's clock); returns
    /// whether one did (its slot is free: the caller dispatches again).
    pub(crate) fn expire_timeouts(&mut self) -> bool {
        let now = self.last_now;
        let mut expired = false;
        while let Some(&(deadline, token)) = self.deadlines.front() {
            if !self.live(token) {
                self.deadlines.pop_front();
                continue;
            }
            if deadline > now {
                break;
            }
            self.deadlines.pop_front();
            self.time_out(token, now);
            expired = true;
        }
        if self.deadlines.len() > 2 * self.ops.len() + 64 {
            let ops = &self.ops;
            self.deadlines
                .retain(|(_, token)| ops.get(token).is_some_and(|op| !op.timed_out));
        }
        expired
    }

    /// Fail every part of operation `token` with `ETIMEDOUT`, once; the operation stays in
    /// flight, empty, until the device answers.
    fn time_out(&mut self, token: u64, now: Nanos) {
        let Some(op) = self.ops.get_mut(&token) else {
            return;
        };
        op.timed_out = true;
        let parts = std::mem::take(&mut op.parts);
        let key = op.request_key;
        // Nobody waits for it any more: the dispatcher thread need not stay for it.
        self.dispatcher_ops -= usize::from(std::mem::take(&mut op.by_dispatcher));
        self.timed_out_ops += 1;
        self.parts_in_flight -= parts.len();
        self.timed_out += parts.len() as u64;
        let finished = self.started + Duration::from_nanos(now);
        for part in parts {
            self.fail_timed_out(part, finished);
        }
        self.op_done(key, Some(libc::ETIMEDOUT), finished);
    }

    fn fail_timed_out(&mut self, part: Part, finished: Instant) {
        let Part { len, submission } = part;
        let latency = finished.saturating_duration_since(submission.submitted);
        self.samples.push(submission.sample(len, false, latency));
        let error = IoError {
            direction: submission.direction,
            offset: submission.offset,
            len: len as u64,
            kind: IoErrorKind::Os(libc::ETIMEDOUT),
        };
        self.outcomes.push((submission.completer, Err(error)));
    }

    /// The device's late answer to an operation that timed out: its slot accounting ends
    /// here; nothing is completed again.
    pub(crate) fn absorb_late(&mut self, io_done: IoDone, lane: usize) {
        drop(io_done);
        self.uncount_lane_op(lane);
        self.timed_out_ops -= 1;
        self.late_completions += 1;
    }

    /// Operations at the device that count against the queue depth.
    pub(crate) fn live_in_flight(&self) -> usize {
        self.backend.in_flight().saturating_sub(self.timed_out_ops)
    }
}
