//! I/O backends: what actually moves the bytes. The dispatcher pushes operations, then waits
//! for completions, for a wake-up from a client (new work), or for a deadline (a policy's
//! "wait until t"), whichever comes first.
//!
//! - [`uring`]: one io_uring owned by the dispatcher thread (the default).
//! - [`thread_pool`]: worker threads doing `pread`/`pwrite`, chosen automatically, with a log
//!   line, where io_uring is unavailable or refused (old kernels, seccomp, containers).

use std::io;
use std::sync::Arc;
use std::time::Instant;

use ioslice_core::Direction;

pub mod memory;

use crate::buffer::AlignedBuffer;

/// One read or write at a byte offset, into or from one or more buffers in order (a request the
/// policy merged from several clients' requests is one vectored operation).
#[derive(Debug)]
pub struct IoOp {
    /// Returned with the completion; the dispatcher's key for the operation.
    pub token: u64,
    /// Read or write.
    pub direction: Direction,
    /// Byte offset in the file or device.
    pub offset: u64,
    /// The buffers, contiguous on the device in this order.
    pub buffers: Vec<AlignedBuffer>,
}

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

/// Wakes a dispatcher blocked in [`Backend::wait`]; cheap to clone, callable from any thread.
#[derive(Clone)]
pub struct Notifier(Arc<dyn Fn() + Send + Sync>);

impl Notifier {
    /// A notifier that calls `wake`.
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Arc::new(wake))
    }

    /// Wake the dispatcher.
    pub fn notify(&self) {
        (self.0)();
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notifier")
    }
}

/// What the dispatcher needs from a backend.
pub trait Backend: Send {
    /// Its name for logs and reports: `io_uring` or `psync`.
    fn name(&self) -> &'static str;

    /// Queue an operation; it is submitted at the next [`Backend::wait`].
    fn push(&mut self, op: IoOp);

    /// Submit what was pushed, then block until at least one operation completes, the
    /// [`Notifier`] is called, or `deadline` passes (`None`: no deadline). Completions are
    /// appended to `done`. Returns at once if completions are already available or a
    /// notification is pending. A notification that arrives while nobody waits is kept for the
    /// next call.
    fn wait(&mut self, deadline: Option<Instant>, done: &mut Vec<IoDone>) -> io::Result<()>;

    /// A handle that wakes [`Backend::wait`] from another thread.
    fn notifier(&self) -> Notifier;

    /// Operations pushed or submitted and not yet returned as completions.
    fn in_flight(&self) -> usize;
}
