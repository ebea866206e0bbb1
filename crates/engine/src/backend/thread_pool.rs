//! The fallback backend: worker threads doing `pread`/`pwrite` (std's `FileExt::read_at` /
//! `write_at`), for where io_uring is unavailable or refused. Safe code only.
//!
//! Operations go to the workers over one shared job channel. Workers put completions in a
//! shared list and signal a condition variable; the [`Notifier`] sets a flag there too. The
//! [`Waiter`] blocks on that condition variable (with the deadline) until the list is not
//! empty or the flag is set, and [`Backend::reap`] takes the list and the flag. A wake-up sent
//! while nobody waits stays set for the next wait. An operation with several buffers is done
//! as consecutive transfers at consecutive offsets, stopping at the first short transfer or
//! error (like `preadv`, an error after some bytes were moved reports those bytes).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use ioslice_core::Direction;

use super::{Backend, IoDone, IoOp, Notifier, Waiter};
use crate::buffer::AlignedBuffer;

/// What the workers and notifiers leave for the engine.
#[derive(Debug, Default)]
pub(super) struct Events {
    pub(super) done: Vec<IoDone>,
    pub(super) woken: bool,
    /// Threads blocked in the [`Waiter`]: a delivery with none wakes nobody, and makes no
    /// system call (a condition variable's notify is one, waiters or not).
    waiting: usize,
}

#[derive(Debug, Default)]
pub(super) struct Mailbox {
    events: Mutex<Events>,
    ready: Condvar,
}

impl Mailbox {
    pub(super) fn lock(&self) -> MutexGuard<'_, Events> {
        // A poisoned lock only means a worker panicked while holding it; the list is sound.
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Leave completions and wake whoever waits.
    pub(super) fn deliver(&self, done: &mut Vec<IoDone>) {
        let mut events = self.lock();
        events.done.append(done);
        if events.waiting > 0 {
            self.ready.notify_all();
        }
    }

    /// Set the wake-up flag and wake whoever waits.
    pub(super) fn wake(&self) {
        let mut events = self.lock();
        events.woken = true;
        if events.waiting > 0 {
            self.ready.notify_all();
        }
    }
}

/// Thread-pool backend; see the module documentation.
#[derive(Debug)]
pub struct ThreadPoolBackend {
    /// For transfers done inline when no worker could be spawned.
    file: Arc<File>,
    /// `None` only while dropping (closing it stops the workers).
    jobs: Option<Sender<IoOp>>,
    mailbox: Arc<Mailbox>,
    workers: Vec<JoinHandle<()>>,
    pending: VecDeque<IoOp>,
    /// Sent to the workers, completion not yet returned.
    submitted: usize,
}

impl ThreadPoolBackend {
    /// `threads` workers (at least one) doing positioned reads and writes on `file`.
    ///
    /// If the system refuses to spawn threads, the pool keeps those it got; with none at all,
    /// [`Backend::submit`] does the transfers itself, one at a time, on the caller's thread.
    pub fn new(file: Arc<File>, threads: usize) -> Self {
        let (jobs_tx, jobs_rx) = mpsc::channel::<IoOp>();
        let jobs_rx = Arc::new(Mutex::new(jobs_rx));
        let mailbox = Arc::new(Mailbox::default());
        let mut workers = Vec::new();
        for index in 0..threads.max(1) {
            let jobs = Arc::clone(&jobs_rx);
            let mailbox = Arc::clone(&mailbox);
            let file = Arc::clone(&file);
            match std::thread::Builder::new()
                .name(format!("ioslice-psync-{index}"))
                .spawn(move || work(&file, &jobs, &mailbox))
            {
                Ok(worker) => workers.push(worker),
                Err(_) => break,
            }
        }
        Self {
            file,
            jobs: Some(jobs_tx),
            mailbox,
            workers,
            pending: VecDeque::new(),
            submitted: 0,
        }
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }
}

/// A worker: take jobs until the job channel closes.
fn work(file: &File, jobs: &Mutex<Receiver<IoOp>>, mailbox: &Mailbox) {
    loop {
        // A poisoned lock only means another worker panicked while holding it; the receiver
        // itself is still sound.
        let job = {
            let guard = jobs.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            guard.recv()
        };
        let Ok(mut op) = job else {
            return;
        };
        let result = transfer(file, op.direction, op.offset, &mut op.buffers);
        let done = IoDone {
            token: op.token,
            result,
            buffers: op.buffers,
        };
        mailbox.deliver(&mut vec![done]);
    }
}

/// One positioned transfer, retried on `EINTR`; `Ok(n)` may be short (0 at end of file).
fn transfer_one(
    file: &File,
    direction: Direction,
    offset: u64,
    buffer: &mut AlignedBuffer,
) -> io::Result<usize> {
    loop {
        let result = match direction {
            Direction::Read => file.read_at(buffer.as_mut_slice(), offset),
            Direction::Write => file.write_at(buffer.as_slice(), offset),
            Direction::Discard => super::discard::discard(file, offset, buffer.len()),
        };
        match result {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The buffers in order at consecutive offsets; stops at a short transfer or an error.
pub(super) fn transfer(
    file: &File,
    direction: Direction,
    offset: u64,
    buffers: &mut [AlignedBuffer],
) -> io::Result<usize> {
    if direction == Direction::Discard {
        let len = buffers.iter().map(AlignedBuffer::len).sum();
        return super::discard::discard(file, offset, len);
    }
    let mut total = 0usize;
    for buffer in buffers {
        let at = offset
            .checked_add(total as u64)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
        match transfer_one(file, direction, at, buffer) {
            Ok(n) => {
                total += n;
                if n < buffer.len() {
                    break;
                }
            }
            Err(e) if total == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(total)
}

impl Backend for ThreadPoolBackend {
    fn name(&self) -> &'static str {
        "psync"
    }

    fn push(&mut self, op: IoOp) {
        self.pending.push_back(op);
    }

    fn submit(&mut self) -> io::Result<()> {
        if self.workers.is_empty() {
            let mut finished = Vec::new();
            while let Some(mut op) = self.pending.pop_front() {
                let result = transfer(&self.file, op.direction, op.offset, &mut op.buffers);
                finished.push(IoDone {
                    token: op.token,
                    result,
                    buffers: op.buffers,
                });
            }
            if !finished.is_empty() {
                self.submitted += finished.len();
                self.mailbox.lock().done.append(&mut finished);
            }
        } else if let Some(jobs) = &self.jobs {
            while let Some(op) = self.pending.pop_front() {
                if let Err(mpsc::SendError(op)) = jobs.send(op) {
                    // Every worker is gone (they only exit when the channel closes, or
                    // by a panic): keep the operation and report.
                    self.pending.push_front(op);
                    return Err(io::Error::other("psync backend: all worker threads exited"));
                }
                self.submitted += 1;
            }
        }
        Ok(())
    }

    fn reap(&mut self, done: &mut Vec<IoDone>) -> bool {
        let mut events = self.mailbox.lock();
        self.submitted -= events.done.len().min(self.submitted);
        done.append(&mut events.done);
        std::mem::take(&mut events.woken)
    }

    fn waiter(&self) -> Arc<dyn Waiter> {
        Arc::new(PoolWaiter {
            mailbox: Arc::clone(&self.mailbox),
        })
    }

    fn notifier(&self) -> Notifier {
        let mailbox = Arc::clone(&self.mailbox);
        Notifier::new(move || mailbox.wake())
    }

    fn in_flight(&self) -> usize {
        self.pending.len() + self.submitted
    }
}

/// Blocks until the workers have left a completion, a wake-up is set, or a deadline passes.
#[derive(Debug)]
pub(super) struct PoolWaiter {
    pub(super) mailbox: Arc<Mailbox>,
}

impl Waiter for PoolWaiter {
    fn wait(&self, deadline: Option<Instant>) -> io::Result<()> {
        let mut events = self.mailbox.lock();
        events.waiting += 1;
        while events.done.is_empty() && !events.woken {
            events = match deadline {
                None => self
                    .mailbox
                    .ready
                    .wait(events)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let now = Instant::now();
                    if deadline <= now {
                        break;
                    }
                    self.mailbox
                        .ready
                        .wait_timeout(events, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
        events.waiting -= 1;
        Ok(())
    }
}

impl Drop for ThreadPoolBackend {
    /// Closes the job channel and joins the workers (each finishes the transfer it is in).
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}
