//! The inline backend: no thread of its own; each `pread`/`pwrite` runs on the thread that
//! drove the engine's turn which dispatched it, as fio's `psync`, `sync` and `pvsync` engines
//! transfer on the job's own thread. For jobs with one request in flight on storage that
//! needs no queue (tmpfs, the page cache), where handing each request to another thread
//! (an io-wq worker, a pool thread) costs more than the transfer.
//!
//! The policy still sees every request: the engine inserts it, the policy dispatches it, the
//! backend transfers it and the engine completes it, as with any backend. What runs where:
//!
//! - **a client's or job's thread** that submitted (its turn runs under the engine's lock
//!   with system calls deferred): the turn pushes what the policy dispatched here and
//!   [`Backend::submit_later`] moves it to a hand-off list and asks for a [`Doorbell`]; the
//!   thread rings it once it has released the lock, and the ring does the transfers there,
//!   on that thread, then leaves the completions in the mailbox and wakes the [`Waiter`].
//!   The operation transferred is whatever the policy dispatched, not necessarily the
//!   ringing thread's own request; several threads ringing at once transfer in parallel,
//!   but one turn that dispatches several requests has them transferred one after another
//!   on one thread. So `ioslice run` uses this backend for a run of one synchronous job only,
//!   and several jobs keep io_uring, each on its lane.
//! - **any other thread driving a turn** (the dispatcher thread at a policy's timer, a
//!   poller): [`Backend::submit`] does the transfers on that thread, under the lock.
//!
//! Completions are reaped under the lock by whichever thread runs the next turn, as for the
//! thread pool, whose mailbox, waiter and transfer loop this backend shares.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use super::thread_pool::{transfer, Mailbox, PoolWaiter};
use super::{Backend, Doorbell, IoDone, IoOp, Notifier, Waiter};

/// What moves from the engine's lock to the thread that rings the doorbell.
#[derive(Debug)]
struct Handoff {
    file: Arc<File>,
    queue: Mutex<Vec<IoOp>>,
    mailbox: Arc<Mailbox>,
}

impl Handoff {
    /// Transfer every operation in `ops` on this thread and leave the completions.
    fn run(&self, ops: Vec<IoOp>) {
        if ops.is_empty() {
            return;
        }
        let mut finished = Vec::with_capacity(ops.len());
        for mut op in ops {
            let result = transfer(&self.file, op.direction, op.offset, &mut op.buffers);
            finished.push(IoDone {
                token: op.token,
                result,
                buffers: op.buffers,
            });
        }
        self.mailbox.deliver(&mut finished);
    }

    /// Take the hand-off list and transfer it.
    fn ring(&self) {
        let ops = std::mem::take(&mut *self.queue.lock().unwrap_or_else(PoisonError::into_inner));
        self.run(ops);
    }
}

/// Inline backend; see the module documentation.
#[derive(Debug)]
pub struct InlineBackend {
    handoff: Arc<Handoff>,
    doorbell: Doorbell,
    pending: VecDeque<IoOp>,
    /// Handed over (to the hand-off list or transferred), completion not yet reaped.
    submitted: usize,
}

impl InlineBackend {
    /// Positioned reads and writes on `file`, on the threads that drive the engine.
    pub fn new(file: Arc<File>) -> Self {
        let handoff = Arc::new(Handoff {
            file,
            queue: Mutex::new(Vec::new()),
            mailbox: Arc::new(Mailbox::default()),
        });
        let ringer = Arc::clone(&handoff);
        let doorbell = Doorbell::new(move || {
            ringer.ring();
            Ok(())
        });
        Self {
            handoff,
            doorbell,
            pending: VecDeque::new(),
            submitted: 0,
        }
    }
}

impl Backend for InlineBackend {
    fn name(&self) -> &'static str {
        "psync-inline"
    }

    fn push(&mut self, op: IoOp) {
        self.pending.push_back(op);
    }

    fn submit(&mut self) -> io::Result<()> {
        // What an earlier deferred submission left unrung goes first, in order.
        self.handoff.ring();
        let ops: Vec<IoOp> = self.pending.drain(..).collect();
        self.submitted += ops.len();
        self.handoff.run(ops);
        Ok(())
    }

    fn submit_later(&mut self, doorbells: &mut Vec<Doorbell>) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.submitted += self.pending.len();
        self.handoff
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(self.pending.drain(..));
        doorbells.push(self.doorbell.clone());
        Ok(())
    }

    fn reap(&mut self, done: &mut Vec<IoDone>) -> bool {
        let mut events = self.handoff.mailbox.lock();
        self.submitted -= events.done.len().min(self.submitted);
        done.append(&mut events.done);
        std::mem::take(&mut events.woken)
    }

    fn waiter(&self) -> Arc<dyn Waiter> {
        Arc::new(PoolWaiter {
            mailbox: Arc::clone(&self.handoff.mailbox),
        })
    }

    fn notifier(&self) -> Notifier {
        let mailbox = Arc::clone(&self.handoff.mailbox);
        Notifier::new(move || mailbox.wake())
    }

    fn in_flight(&self) -> usize {
        self.pending.len() + self.submitted
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use ioslice_core::Direction;

    use super::*;
    use crate::buffer::AlignedBuffer;

    fn file_of(bytes: &[u8]) -> Arc<File> {
        let mut file = tempfile::tempfile().expect("temporary file");
        file.write_all(bytes).expect("write");
        Arc::new(file)
    }

    fn read_op(token: u64, offset: u64) -> IoOp {
        IoOp {
            token,
            direction: Direction::Read,
            offset,
            buffers: vec![AlignedBuffer::new(4, 4)],
            lane: super::super::SHARED_LANE,
        }
    }

    #[test]
    fn a_deferred_submission_transfers_when_its_doorbell_rings() {
        let mut backend = InlineBackend::new(file_of(b"abcdefgh"));
        backend.push(read_op(1, 4));
        let mut doorbells = Vec::new();
        backend.submit_later(&mut doorbells).expect("submit");
        assert_eq!(backend.in_flight(), 1);
        let mut done = Vec::new();
        backend.reap(&mut done);
        assert!(done.is_empty(), "nothing moves before the ring");
        assert_eq!(doorbells.len(), 1);
        doorbells[0].ring().expect("ring");
        backend.reap(&mut done);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].token, 1);
        assert_eq!(done[0].result.as_ref().ok(), Some(&4));
        assert_eq!(done[0].buffers[0].as_slice(), b"efgh");
        assert_eq!(backend.in_flight(), 0);
    }

    #[test]
    fn submit_transfers_what_is_pushed_and_what_waits_for_a_ring_in_order() {
        let mut backend = InlineBackend::new(file_of(b"abcdefgh"));
        backend.push(read_op(1, 0));
        let mut doorbells = Vec::new();
        backend.submit_later(&mut doorbells).expect("submit");
        backend.push(read_op(2, 4));
        backend.submit().expect("submit");
        let mut done = Vec::new();
        backend.reap(&mut done);
        let tokens: Vec<u64> = done.iter().map(|d| d.token).collect();
        assert_eq!(tokens, [1, 2]);
        assert_eq!(done[0].buffers[0].as_slice(), b"abcd");
        assert_eq!(done[1].buffers[0].as_slice(), b"efgh");
        // The doorbell left over finds nothing to do.
        doorbells[0].ring().expect("ring");
        backend.reap(&mut done);
        assert_eq!(done.len(), 2);
        assert_eq!(backend.in_flight(), 0);
    }
}
