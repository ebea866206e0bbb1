//! How a request's outcome gets back to its client: a one-shot cell shared between the
//! dispatcher (which fills it through a `Completer`) and the client (which holds the
//! [`IoFuture`]).
//!
//! The cell is a `Mutex` + `Condvar` + stored [`Waker`], so the same future can be awaited on
//! any async runtime (nothing here depends on one) or waited for with a blocking call
//! ([`IoFuture::wait`]). A `Completer` is consumed when it fulfils the cell, so a request
//! cannot be completed twice; one dropped unfulfilled (the engine shut down before the
//! request reached it) completes the cell with [`IoErrorKind::ShutDown`], so no future is
//! left hanging.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ioslice_core::Direction;

use crate::buffer::AlignedBuffer;

/// A request that completed successfully.
#[derive(Debug)]
pub struct IoResult {
    /// The request's buffer: the data read, or the data written (handed back for reuse).
    pub buffer: AlignedBuffer,
    /// Bytes transferred (the request's full length).
    pub bytes: usize,
    /// Byte offset of the request.
    pub offset: u64,
    /// From submission to completion.
    pub latency: Duration,
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoErrorKind {
    /// The device returned this errno; the request's bytes are undefined.
    Os(i32),
    /// The device transferred fewer bytes than the operation carrying this request asked
    /// for, and this request's range was not wholly among them (`transferred` of its bytes
    /// were). Reported with errno `EIO`.
    ShortTransfer {
        /// Bytes of this request that were transferred.
        transferred: usize,
    },
    /// Offset, length or buffer address is not a multiple of the alignment the engine
    /// requires (512-byte sectors and the device's logical block size for O_DIRECT).
    /// Refused at submission: the device never saw it.
    Misaligned {
        /// What is misaligned: "offset", "length" or "buffer address".
        what: &'static str,
        /// The alignment required, in bytes.
        alignment: u64,
    },
    /// The request is empty, or too long to describe in 32-bit sector counts.
    BadLength,
    /// The request reaches past the end of the device. Refused at submission.
    OutOfRange {
        /// The device's capacity in bytes.
        capacity: u64,
    },
    /// The engine was shut down (or its dispatcher stopped) before serving the request.
    ShutDown,
    /// The future was polled again after it had already returned its output.
    AlreadyTaken,
}

/// A failed request: what went wrong, and which request it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoError {
    /// Read or write.
    pub direction: Direction,
    /// Byte offset of the request.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// What went wrong.
    pub kind: IoErrorKind,
}

impl IoError {
    /// The errno this failure stands for, as an OS would report it (`EINVAL` for requests
    /// refused at submission, `ESHUTDOWN` for requests the engine never served).
    pub fn errno(&self) -> i32 {
        match self.kind {
            IoErrorKind::Os(errno) => errno,
            IoErrorKind::ShortTransfer { .. } => libc::EIO,
            IoErrorKind::Misaligned { .. }
            | IoErrorKind::BadLength
            | IoErrorKind::OutOfRange { .. }
            | IoErrorKind::AlreadyTaken => libc::EINVAL,
            IoErrorKind::ShutDown => libc::ESHUTDOWN,
        }
    }
}

/// The symbolic name of an errno (`EIO`), for the errors block I/O is likely to meet.
pub fn errno_name(errno: i32) -> Option<&'static str> {
    ioslice_fio::errno::name(errno)
}

/// `EIO (Input/output error)`: an errno's name and the system's description of it.
pub fn describe_errno(errno: i32) -> String {
    let text = io::Error::from_raw_os_error(errno).to_string();
    let description = match text.find(" (os error") {
        Some(end) => &text[..end],
        None => &text,
    };
    match errno_name(errno) {
        Some(name) => format!("{name} ({description})"),
        None => format!("errno {errno} ({description})"),
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.direction {
            Direction::Read => "read",
            Direction::Write => "write",
        };
        write!(
            f,
            "{what} of {} bytes at offset {} failed: ",
            self.len, self.offset
        )?;
        match &self.kind {
            IoErrorKind::Os(errno) => {
                f.write_str(&describe_errno(*errno))?;
                if *errno == libc::EINVAL {
                    f.write_str(" — misaligned O_DIRECT request?")?;
                }
                Ok(())
            }
            IoErrorKind::ShortTransfer { transferred } => write!(
                f,
                "{} — short transfer, {transferred} of its bytes moved",
                describe_errno(libc::EIO)
            ),
            IoErrorKind::Misaligned { what, alignment } => write!(
                f,
                "{} — {what} is not a multiple of {alignment} bytes (512-byte sectors and the \
                 device's logical block size, for O_DIRECT)",
                describe_errno(libc::EINVAL)
            ),
            IoErrorKind::BadLength => write!(
                f,
                "{} — length must be at least one sector and at most 2 TiB",
                describe_errno(libc::EINVAL)
            ),
            IoErrorKind::OutOfRange { capacity } => write!(
                f,
                "{} — past the end of the device ({capacity} bytes)",
                describe_errno(libc::EINVAL)
            ),
            IoErrorKind::ShutDown => write!(
                f,
                "{} — the engine shut down before serving it",
                describe_errno(libc::ESHUTDOWN)
            ),
            IoErrorKind::AlreadyTaken => f.write_str("the future already returned its result"),
        }
    }
}

impl std::error::Error for IoError {}

/// The output of an [`IoFuture`].
pub type IoOutcome = Result<IoResult, IoError>;

#[derive(Debug, Default)]
struct State {
    outcome: Option<IoOutcome>,
    taken: bool,
    waker: Option<Waker>,
}

#[derive(Debug, Default)]
struct Cell {
    state: Mutex<State>,
    ready: Condvar,
}

impl Cell {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A request's eventual outcome: `.await` it on any runtime, or block on [`IoFuture::wait`].
#[derive(Debug)]
#[must_use = "a request's outcome is only known through its future"]
pub struct IoFuture {
    cell: Arc<Cell>,
    direction: Direction,
    offset: u64,
    len: u64,
}

impl IoFuture {
    /// A future already completed with `outcome` (a request refused at submission).
    pub(crate) fn ready(outcome: IoOutcome, direction: Direction, offset: u64, len: u64) -> Self {
        let cell = Arc::new(Cell::default());
        cell.lock().outcome = Some(outcome);
        Self {
            cell,
            direction,
            offset,
            len,
        }
    }

    /// An empty future and the completer that fills it. `cancelled` counts completers
    /// dropped unfulfilled.
    pub(crate) fn pair(
        direction: Direction,
        offset: u64,
        len: u64,
        cancelled: Arc<AtomicU64>,
    ) -> (Self, Completer) {
        let cell = Arc::new(Cell::default());
        let completer = Completer {
            cell: Some(Arc::clone(&cell)),
            direction,
            offset,
            len,
            cancelled,
        };
        (
            Self {
                cell,
                direction,
                offset,
                len,
            },
            completer,
        )
    }

    /// Block the calling thread until the request completes.
    pub fn wait(self) -> IoOutcome {
        let mut state = self.cell.lock();
        loop {
            if let Some(outcome) = state.outcome.take() {
                state.taken = true;
                return outcome;
            }
            if state.taken {
                return Err(self.error(IoErrorKind::AlreadyTaken));
            }
            state = self
                .cell
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Whether the outcome is available (a later `wait` returns at once).
    pub fn is_ready(&self) -> bool {
        self.cell.lock().outcome.is_some()
    }

    fn error(&self, kind: IoErrorKind) -> IoError {
        IoError {
            direction: self.direction,
            offset: self.offset,
            len: self.len,
            kind,
        }
    }
}

impl Future for IoFuture {
    type Output = IoOutcome;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<IoOutcome> {
        let mut state = self.cell.lock();
        if let Some(outcome) = state.outcome.take() {
            state.taken = true;
            return Poll::Ready(outcome);
        }
        if state.taken {
            drop(state);
            return Poll::Ready(Err(self.error(IoErrorKind::AlreadyTaken)));
        }
        match &state.waker {
            Some(waker) if waker.will_wake(context.waker()) => {}
            _ => state.waker = Some(context.waker().clone()),
        }
        Poll::Pending
    }
}

/// The dispatcher's end of a request's cell: fulfils it exactly once.
#[derive(Debug)]
pub(crate) struct Completer {
    cell: Option<Arc<Cell>>,
    direction: Direction,
    offset: u64,
    len: u64,
    cancelled: Arc<AtomicU64>,
}

impl Completer {
    /// Complete the request; wakes a blocked `wait` and a stored waker.
    pub(crate) fn complete(mut self, outcome: IoOutcome) {
        if let Some(cell) = self.cell.take() {
            fulfil(&cell, outcome);
        }
    }

    /// Complete the request with an error of this kind.
    pub(crate) fn fail(self, kind: IoErrorKind) {
        let error = IoError {
            direction: self.direction,
            offset: self.offset,
            len: self.len,
            kind,
        };
        self.complete(Err(error));
    }
}

fn fulfil(cell: &Cell, outcome: IoOutcome) {
    let waker = {
        let mut state = cell.lock();
        state.outcome = Some(outcome);
        state.waker.take()
    };
    cell.ready.notify_all();
    if let Some(waker) = waker {
        waker.wake();
    }
}

impl Drop for Completer {
    fn drop(&mut self) {
        if let Some(cell) = self.cell.take() {
            self.cancelled.fetch_add(1, Ordering::Relaxed);
            fulfil(
                &cell,
                Err(IoError {
                    direction: self.direction,
                    offset: self.offset,
                    len: self.len,
                    kind: IoErrorKind::ShutDown,
                }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_errnos_are_this_systems() {
        let libc_values = [
            ("EPERM", libc::EPERM),
            ("ENOENT", libc::ENOENT),
            ("EINTR", libc::EINTR),
            ("EIO", libc::EIO),
            ("ENXIO", libc::ENXIO),
            ("EBADF", libc::EBADF),
            ("EAGAIN", libc::EAGAIN),
            ("ENOMEM", libc::ENOMEM),
            ("EACCES", libc::EACCES),
            ("EFAULT", libc::EFAULT),
            ("EBUSY", libc::EBUSY),
            ("ENODEV", libc::ENODEV),
            ("EINVAL", libc::EINVAL),
            ("EFBIG", libc::EFBIG),
            ("ENOSPC", libc::ENOSPC),
            ("EROFS", libc::EROFS),
            ("ENODATA", libc::ENODATA),
            ("ETIME", libc::ETIME),
            ("ENOLINK", libc::ENOLINK),
            ("EOVERFLOW", libc::EOVERFLOW),
            ("EILSEQ", libc::EILSEQ),
            ("EOPNOTSUPP", libc::EOPNOTSUPP),
            ("ESHUTDOWN", libc::ESHUTDOWN),
            ("ETIMEDOUT", libc::ETIMEDOUT),
            ("EREMOTEIO", libc::EREMOTEIO),
            ("EDQUOT", libc::EDQUOT),
            ("ENOMEDIUM", libc::ENOMEDIUM),
            ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
            ("ECANCELED", libc::ECANCELED),
        ];
        assert_eq!(ioslice_fio::errno::ERRNOS, libc_values.as_slice());
    }

    #[test]
    fn errno_names_and_descriptions() {
        assert_eq!(describe_errno(libc::EIO), "EIO (Input/output error)");
        let error = IoError {
            direction: Direction::Write,
            offset: 4096,
            len: 512,
            kind: IoErrorKind::Os(libc::EINVAL),
        };
        assert_eq!(
            error.to_string(),
            "write of 512 bytes at offset 4096 failed: EINVAL (Invalid argument) — misaligned O_DIRECT request?"
        );
    }

    #[test]
    fn a_dropped_completer_fails_the_future() {
        let cancelled = Arc::new(AtomicU64::new(0));
        let (future, completer) = IoFuture::pair(Direction::Read, 0, 512, Arc::clone(&cancelled));
        drop(completer);
        let error = future.wait().err().map(|e| e.kind);
        assert_eq!(error, Some(IoErrorKind::ShutDown));
        assert_eq!(cancelled.load(Ordering::Relaxed), 1);
    }
}
