//! What a request comes to: its result ([`IoResult`]) or its error ([`IoError`], whose
//! [`IoErrorKind`] names the errno), and the errno names both use. Re-exported by the
//! `completion` module, whose futures and completers carry them.
//!
//! Made under the engine's lock by whichever thread completes a request, read by the client
//! that waits for it.

use std::fmt;
use std::io;
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
    /// A thread panicked while running the engine (a bug in a policy, a backend or the
    /// engine itself), so the engine stopped: its state could no longer be trusted. Every
    /// request it held and every later one fails so. Reported with errno `ENOTRECOVERABLE`.
    EnginePanicked,
    /// The future was polled again after it had already returned its output.
    AlreadyTaken,
}

/// A failed request: what went wrong, and which request it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoError {
    /// Read, write or discard.
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
            IoErrorKind::EnginePanicked => libc::ENOTRECOVERABLE,
        }
    }
}

/// The symbolic name of an errno (`EIO`), for the errors block I/O is likely to meet.
pub fn errno_name(errno: i32) -> Option<&'static str> {
    ioslice_core::errno::name(errno)
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
            Direction::Discard => "discard",
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
            IoErrorKind::EnginePanicked => write!(
                f,
                "{} — the engine stopped after a thread panicked while running it (a bug); \
                 its state could not be trusted, so no request is served",
                describe_errno(libc::ENOTRECOVERABLE)
            ),
            IoErrorKind::AlreadyTaken => f.write_str("the future already returned its result"),
        }
    }
}

impl std::error::Error for IoError {}

/// The output of an [`IoFuture`](crate::IoFuture).
pub type IoOutcome = Result<IoResult, IoError>;
