//! I/O backends: what actually moves the bytes. Under the engine's lock, a backend is pushed
//! operations, submits them and reaps what has completed, never blocking. Waiting goes
//! through its shared [`Waiter`], outside the lock: until a completion is ready, a wake-up
//! comes from another thread, or a deadline (a policy's "wait until t") passes.
//!
//! - [`uring`]: one io_uring shared by the threads that drive the engine (the default).
//! - [`inline`]: `pread`/`pwrite` on the threads that drive the engine, for jobs with one
//!   request in flight each (`ioengine=psync`, `sync`, `pvsync`).
//! - [`thread_pool`]: worker threads doing `pread`/`pwrite`, chosen automatically, with a log
//!   line, where io_uring is unavailable or refused (old kernels, seccomp, containers).

use std::fs::File;
use std::io;
use std::sync::Arc;
use std::time::Instant;

use ioslice_core::Direction;

pub mod discard;
pub mod inline;
pub mod memory;

use crate::buffer::AlignedBuffer;

pub mod thread_pool;
pub mod uring;

pub use inline::InlineBackend;
pub use thread_pool::ThreadPoolBackend;
pub use uring::UringBackend;

/// One read, write or discard at a byte offset, into or from one or more buffers in order (a
/// request the policy merged from several clients' requests is one vectored operation).
#[derive(Debug)]
pub struct IoOp {
    /// Returned with the completion; the dispatcher's key for the operation.
    pub token: u64,
    /// Read, write or discard (a discard's buffers only give its length).
    pub direction: Direction,
    /// Byte offset in the file or device.
    pub offset: u64,
    /// The buffers, contiguous on the device in this order.
    pub buffers: Vec<AlignedBuffer>,
    /// Where it completes: [`SHARED_LANE`], or a lane from [`Backend::open_lane`] (a backend
    /// without lanes, or a lane that is not open, takes it as the shared lane).
    pub lane: usize,
}

/// The lane every backend has: completions any thread may reap and the shared [`Waiter`]
/// waits for.
pub const SHARED_LANE: usize = 0;

/// A finished operation.
#[derive(Debug)]
pub struct IoDone {
    /// The operation's token.
    pub token: u64,
    /// Bytes transferred, or the error (an `io::Error` carrying the errno).
    pub result: io::Result<usize>,
    /// The operation's buffers, handed back (filled, for a read).
    pub buffers: Vec<AlignedBuffer>,
}

/// Wakes whoever is blocked in a [`Waiter`] (or [`Backend::wait`]); cheap to clone, callable
/// from any thread.
#[derive(Clone)]
pub struct Notifier(Arc<dyn Fn() + Send + Sync>);

impl Notifier {
    /// A notifier that calls `wake`.
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Arc::new(wake))
    }

    /// Wake the waiter.
    pub fn notify(&self) {
        (self.0)();
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notifier")
    }
}

/// Hands the kernel what was queued on one ring, from any thread and without the engine's
/// lock ([`Backend::submit_later`]); cheap to clone.
#[derive(Clone)]
pub struct Doorbell(Arc<dyn Fn() -> io::Result<()> + Send + Sync>);

impl Doorbell {
    /// A doorbell that calls `ring`.
    pub fn new(ring: impl Fn() -> io::Result<()> + Send + Sync + 'static) -> Self {
        Self(Arc::new(ring))
    }

    /// Hand the queued entries over (a system call).
    pub fn ring(&self) -> io::Result<()> {
        (self.0)()
    }
}

impl std::fmt::Debug for Doorbell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Doorbell")
    }
}

/// The blocking half of a backend, shared: the engine calls it *without* holding the lock
/// that guards the [`Backend`], so other threads can push, submit and reap meanwhile.
pub trait Waiter: Send + Sync {
    /// Block until at least one completion is ready for [`Backend::reap`], a notification is
    /// pending, or `deadline` passes (`None`: no deadline). Returns at once if one of these is
    /// already so. Takes nothing: the next `reap` does. May return early (spuriously).
    fn wait(&self, deadline: Option<Instant>) -> io::Result<()>;
}

/// What the engine needs from a backend. Every method but [`Backend::wait`] is non-blocking,
/// and the engine calls them under one lock; blocking goes through the shared [`Waiter`].
pub trait Backend: Send {
    /// Its name for logs and reports: `io_uring` or `psync`.
    fn name(&self) -> &'static str;

    /// Queue an operation; it goes to the device at the next [`Backend::submit`].
    fn push(&mut self, op: IoOp);

    /// Hand every queued operation the device has room for to it (io_uring: one system call
    /// for all of them). Never blocks.
    fn submit(&mut self) -> io::Result<()>;

    /// [`Backend::submit`] without the system call: queue everything for the kernel and
    /// append to `doorbells` what the caller must ring, once it has released the lock that
    /// guards the backend, for the kernel to take it. Backends whose submission is cheap just
    /// submit (the default).
    fn submit_later(&mut self, _doorbells: &mut Vec<Doorbell>) -> io::Result<()> {
        self.submit()
    }

    /// Append the completions available now to `done`, and consume a pending notification.
    /// Returns whether a notification was consumed. Never blocks.
    fn reap(&mut self, done: &mut Vec<IoDone>) -> bool;

    /// The blocking half, shareable across threads.
    fn waiter(&self) -> Arc<dyn Waiter>;

    /// A handle that wakes the [`Waiter`] (and [`Backend::wait`]) from another thread.
    fn notifier(&self) -> Notifier;

    /// Operations pushed or submitted and not yet returned as completions, on every lane.
    fn in_flight(&self) -> usize;

    /// Whether an operation needs the thread that handed it to the kernel to live until it
    /// completes. io_uring ties each request to the task that submitted it: when that task
    /// exits, a request still in the kernel's hands (queued for an io-wq worker, or waiting
    /// to be retried from task work, as buffered writes are) completes with `ECANCELED`
    /// instead of being done. The engine then keeps every thread that submitted from exiting
    /// until the operations in flight when it exits are complete. `false` by default.
    fn ties_operations_to_submitter(&self) -> bool {
        false
    }

    /// Open a lane: a completion channel of its own, for one thread that waits for the
    /// operations pushed on it ([`Backend::lane_waiter`]) and reaps them
    /// ([`Backend::reap_lane`]). `Ok(None)` if the backend has no lanes or no more.
    fn open_lane(&mut self) -> io::Result<Option<usize>> {
        Ok(None)
    }

    /// Close a lane: it is let go once every operation on it has been reaped.
    fn close_lane(&mut self, _lane: usize) {}

    /// [`Backend::reap`] for one lane; the shared lane is [`Backend::reap`] itself.
    fn reap_lane(&mut self, lane: usize, done: &mut Vec<IoDone>) -> bool {
        lane == SHARED_LANE && self.reap(done)
    }

    /// The [`Waiter`] of an open lane: it waits for completions on that lane only.
    fn lane_waiter(&self, _lane: usize) -> Option<Arc<dyn Waiter>> {
        None
    }

    /// The [`Notifier`] that wakes whoever waits on an open lane.
    fn lane_notifier(&self, _lane: usize) -> Option<Notifier> {
        None
    }

    /// Submit what was pushed, then block until at least one operation completes, the
    /// [`Notifier`] is called, or `deadline` passes (`None`: no deadline). Completions are
    /// appended to `done`. Returns at once if completions are already available or a
    /// notification is pending. A notification that arrives while nobody waits is kept for the
    /// next call. (For a single thread driving a backend bare; the engine uses the parts.)
    fn wait(&mut self, deadline: Option<Instant>, done: &mut Vec<IoDone>) -> io::Result<()> {
        self.submit()?;
        let before = done.len();
        if !self.reap(done) && done.len() == before {
            self.waiter().wait(deadline)?;
            self.reap(done);
        }
        // Slots may have freed up, and a consumed wake-up may need re-arming.
        self.submit()
    }
}

/// Environment variable forcing a backend: `io_uring` or `psync`.
pub const BACKEND_ENV: &str = "IOSLICE_BACKEND";

/// Most worker threads of the fallback thread pool.
pub(crate) const MAX_THREADS: u32 = 64;

/// The backend for `file` with up to `depth` operations in flight: io_uring when a ring can be
/// created and a no-op goes round, else a thread pool of `depth` workers (at most 64) doing
/// `pread`/`pwrite`. The second value is a one-line log message when the choice is worth
/// telling (a fallback, or a backend forced by `IOSLICE_BACKEND`).
///
/// `IOSLICE_BACKEND=psync` forces the thread pool; `IOSLICE_BACKEND=io_uring` forces io_uring
/// and still falls back, saying so, if the ring cannot be made (the thread pool always works).
/// An unknown value is ignored, with a message.
pub fn open_backend(file: Arc<File>, depth: u32) -> (Box<dyn Backend>, Option<String>) {
    let threads = depth.clamp(1, MAX_THREADS);
    let forced = std::env::var(BACKEND_ENV).ok();
    let mut note = None;
    match forced.as_deref() {
        Some("psync") => {
            return (
                psync(file, threads),
                Some(format!(
                    "{BACKEND_ENV}=psync: using a thread pool of {threads} with pread/pwrite"
                )),
            );
        }
        Some("io_uring") | None => {}
        Some(other) => {
            note = Some(format!(
                "{BACKEND_ENV}={other:?} is not io_uring or psync: ignored; "
            ));
        }
    }
    match UringBackend::new(Arc::clone(&file), depth) {
        Ok(ring) => {
            let message = note.map(|note| format!("{note}using io_uring"));
            (Box::new(ring), message)
        }
        Err(e) => (
            psync(file, threads),
            Some(format!(
                "{}io_uring unavailable ({e}): using a thread pool of {threads} with pread/pwrite",
                note.unwrap_or_default()
            )),
        ),
    }
}

/// The backend for jobs that each wait for one request before issuing the next (fio's
/// `psync`, `sync`, `pvsync`): [`InlineBackend`], transferring on the jobs' own threads,
/// unless [`BACKEND_ENV`] forces one (then as [`open_backend`]).
pub fn open_synchronous_backend(file: Arc<File>, depth: u32) -> (Box<dyn Backend>, Option<String>) {
    if std::env::var_os(BACKEND_ENV).is_some() {
        return open_backend(file, depth);
    }
    (Box::new(InlineBackend::new(file)), None)
}

fn psync(file: Arc<File>, threads: u32) -> Box<dyn Backend> {
    Box::new(ThreadPoolBackend::new(file, threads as usize))
}
