//! The fallback backend: worker threads doing `pread`/`pwrite` (std's `FileExt::read_at` /
//! `write_at`), for where io_uring is unavailable or refused. Safe code only.
//!
//! Operations go to the workers over one shared job channel; completions, and the
//! [`Notifier`]'s wake-ups, come back over one event channel that [`Backend::wait`] blocks on
//! with the deadline. A wake-up sent while nobody waits stays in the channel for the next wait.
//! An operation with several buffers is done as consecutive transfers at consecutive offsets,
//! stopping at the first short transfer or error (like `preadv`, an error after some bytes
//! were moved reports those bytes).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use ioslice_core::Direction;

use super::{Backend, IoDone, IoOp, Notifier};
use crate::buffer::AlignedBuffer;

/// What the workers and notifiers send to the waiting dispatcher.
enum Event {
    Done(IoDone),
    Wake,
}

/// Thread-pool backend; see the module documentation.
#[derive(Debug)]
pub struct ThreadPoolBackend {
    /// For transfers done inline when no worker could be spawned.
    file: Arc<File>,
    /// `None` only while dropping (closing it stops the workers).
    jobs: Option<Sender<IoOp>>,
    events_tx: Sender<Event>,
    events: Receiver<Event>,
    workers: Vec<JoinHandle<()>>,
    pending: VecDeque<IoOp>,
    /// Sent to the workers, completion not yet returned.
    submitted: usize,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Done(done) => write!(f, "Done({})", done.token),
            Event::Wake => f.write_str("Wake"),
        }
    }
}

impl ThreadPoolBackend {
    /// `threads` workers (at least one) doing positioned reads and writes on `file`.
    ///
    /// If the system refuses to spawn threads, the pool keeps those it got; with none at all,
    /// [`Backend::wait`] does the transfers itself, one at a time, on the caller's thread.
    pub fn new(file: Arc<File>, threads: usize) -> Self {
        let (jobs_tx, jobs_rx) = mpsc::channel::<IoOp>();
        let jobs_rx = Arc::new(Mutex::new(jobs_rx));
        let (events_tx, events) = mpsc::channel();
        let mut workers = Vec::new();
        for index in 0..threads.max(1) {
            let jobs = Arc::clone(&jobs_rx);
            let events = events_tx.clone();
            let file = Arc::clone(&file);
            match std::thread::Builder::new()
                .name(format!("ioslice-psync-{index}"))
                .spawn(move || work(&file, &jobs, &events))
            {
                Ok(worker) => workers.push(worker),
                Err(_) => break,
            }
        }
        Self {
            file,
            jobs: Some(jobs_tx),
            events_tx,
            events,
            workers,
            pending: VecDeque::new(),
            submitted: 0,
        }
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// Take one event: a completion goes to `done`, a wake-up only ends the wait.
    fn take(&mut self, event: Event, done: &mut Vec<IoDone>) {
        if let Event::Done(io_done) = event {
            self.submitted -= 1;
            done.push(io_done);
        }
    }
}

/// A worker: take jobs until the job channel closes.
fn work(file: &File, jobs: &Mutex<Receiver<IoOp>>, events: &Sender<Event>) {
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
        if events.send(Event::Done(done)).is_err() {
            return;
        }
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
        };
        match result {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// The buffers in order at consecutive offsets; stops at a short transfer or an error.
fn transfer(
    file: &File,
    direction: Direction,
    offset: u64,
    buffers: &mut [AlignedBuffer],
) -> io::Result<usize> {
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

    fn wait(&mut self, deadline: Option<Instant>, done: &mut Vec<IoDone>) -> io::Result<()> {
        let before = done.len();
        if self.workers.is_empty() {
            while let Some(mut op) = self.pending.pop_front() {
                let result = transfer(&self.file, op.direction, op.offset, &mut op.buffers);
                done.push(IoDone {
                    token: op.token,
                    result,
                    buffers: op.buffers,
                });
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
        // Block for the first event (or the deadline), then take whatever else is there.
        let first = match deadline {
            _ if done.len() > before => None,
            None => self.events.recv().ok(),
            Some(deadline) => {
                let timeout = deadline.saturating_duration_since(Instant::now());
                // Timeout, or (impossible while `self` holds a sender) disconnected.
                self.events.recv_timeout(timeout).ok()
            }
        };
        if let Some(event) = first {
            self.take(event, done);
        }
        while let Ok(event) = self.events.try_recv() {
            self.take(event, done);
        }
        Ok(())
    }

    fn notifier(&self) -> Notifier {
        let events = self.events_tx.clone();
        Notifier::new(move || {
            // Fails only once the backend is gone: nobody is left to wake.
            let _ = events.send(Event::Wake);
        })
    }

    fn in_flight(&self) -> usize {
        self.pending.len() + self.submitted
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
