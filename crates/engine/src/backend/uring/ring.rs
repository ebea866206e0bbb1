//! One io_uring and what it needs to run: setting the ring up (cooperative task running where
//! the kernel has it, the capability check, the registered file), its wake-up eventfd and the
//! poll armed on it, entering the kernel to submit (a ring's doorbell), and waiting for
//! completions without the engine's lock ([`UringWaiter`]).
//!
//! A ring is made by the thread that builds the engine or opens a lane; its queues are touched
//! under the engine's lock by whichever thread runs a turn; its waiter by the thread blocked in
//! it (the poller, or a lane's own thread); its doorbell by whichever thread rings it after the
//! lock.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Instant;

use io_uring::cqueue::CompletionQueue;
use io_uring::squeue::SubmissionQueue;
use io_uring::{opcode, squeue, types, EnterFlags, IoUring};

use crate::backend::{Doorbell, IoOp, Notifier, Waiter};
use crate::buffer::AlignedBuffer;

/// `user_data` of the wake-up poll on the eventfd.
pub(super) const WAKE: u64 = u64::MAX;

/// `user_data` of the no-op used to check the ring at start-up.
pub(super) const PROBE_NOP: u64 = u64::MAX - 1;

/// Largest queue depth asked of the kernel (rings hold at most 32768 entries).
pub(super) const MAX_DEPTH: u32 = 16 * 1024;

/// The iovec array of a vectored operation. Its heap allocation is made once, with the exact
/// length, and never grown, so the address handed to the kernel stays valid while the slot is
/// occupied, however the slab moves the `Vec` value itself.
pub(super) struct IoVecs {
    pub(super) _storage: Vec<libc::iovec>,
}

// SAFETY: the raw pointers in the iovecs point into the `AlignedBuffer`s stored in the same
// `InFlight` slot; they move between threads together, and the pointers are only dereferenced
// by the kernel, never by Rust code.
unsafe impl Send for IoVecs {}

/// An operation handed to the kernel and not yet completed.
pub(super) struct InFlight {
    pub(super) token: u64,
    pub(super) buffers: Vec<AlignedBuffer>,
    pub(super) _iovecs: IoVecs,
}

/// One ring with its wake-up eventfd and the operations queued for it or in its kernel side.
pub(super) struct Ring {
    /// Shared with the [`UringWaiter`]s handed out, which only ever enter the kernel to wait.
    pub(super) ring: Arc<IoUring>,
    /// Non-blocking eventfd the ring's [`Notifier`] writes.
    pub(super) eventfd: Arc<File>,
    /// Whether the poll on the eventfd is queued or in the kernel.
    pub(super) wake_armed: bool,
    /// Pushed, not yet handed to the kernel.
    pub(super) pending: VecDeque<IoOp>,
    /// Handed to the kernel; index = `user_data`.
    pub(super) slots: Vec<Option<InFlight>>,
    pub(super) free: Vec<usize>,
    /// Occupied slots.
    pub(super) submitted: usize,
    /// Most operations in the kernel at once.
    pub(super) cap: usize,
    /// Entries in the submission queue not yet handed to the kernel.
    pub(super) unsubmitted: usize,
    /// A lane its thread closed: dropped once nothing is queued or in flight on it.
    pub(super) closing: bool,
    /// Submits the ring's queued entries from any thread.
    pub(super) doorbell: Doorbell,
    /// The backend's file is registered with this ring as fixed file 0: entries name it by
    /// index, and the kernel skips looking the descriptor up and counting a reference for
    /// every operation.
    pub(super) fixed_file: bool,
}

pub(super) fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
    )
}

/// The ring's submission queue. Only `UringBackend` calls this, from methods taking `&mut self`
/// (so never two at once: the engine's lock, or plain ownership, serialises them), and drops
/// the queue before returning; `UringWaiter` never touches the queues.
pub(super) fn sq(ring: &IoUring) -> SubmissionQueue<'_> {
    // SAFETY: per the above, no other `SubmissionQueue` of this ring exists while this one
    // lives.
    unsafe { ring.submission_shared() }
}

/// The ring's completion queue; the same discipline as [`sq`].
pub(super) fn cq(ring: &IoUring) -> CompletionQueue<'_> {
    // SAFETY: only `UringBackend` makes completion queues, one at a time under `&mut self`,
    // and `UringWaiter` never does, so no other `CompletionQueue` of this ring exists.
    unsafe { ring.completion_shared() }
}

/// Most times a submission refused for a passing reason (`EINTR`, `EAGAIN`, `EBUSY`) is
/// tried again before it counts as the ring failing.
pub(super) const SUBMIT_RETRIES: u32 = 1000;

/// Hand the kernel the entries in `ring`'s submission queue (one `io_uring_enter`, more only
/// if the kernel refuses them for a passing reason; then it yields between tries). Nobody
/// else would: waiters never submit (see [`UringWaiter`]), so entries left queued here would
/// never reach the kernel.
pub(super) fn enter(ring: &IoUring) -> io::Result<()> {
    let mut tries = 0;
    loop {
        match ring.submit() {
            Ok(_) => return Ok(()),
            Err(e) if is_transient(&e) && tries < SUBMIT_RETRIES => {
                tries += 1;
                std::thread::yield_now();
            }
            Err(e) => return Err(e),
        }
    }
}

/// A ring of `entries` with cooperative task running where the kernel has it.
pub(super) fn setup_ring(entries: u32) -> io::Result<IoUring> {
    // Cooperative task running (Linux 5.19): a completion does not interrupt the thread
    // that submitted the operation with an IPI; it is posted when that thread next enters
    // or leaves the kernel (a sleeping thread is woken for it, so nothing waits on a
    // thread that sleeps elsewhere). Older kernels refuse the flag: plain ring then.
    match IoUring::builder().setup_coop_taskrun().build(entries) {
        Ok(ring) => Ok(ring),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::new(entries),
        Err(e) => Err(e),
    }
}

/// Checks that `ring` really works: the kernel supports `IORING_ENTER_EXT_ARG` (Linux 5.11)
/// and the read, write, vectored and poll opcodes, and a no-op goes round.
pub(super) fn check_ring(ring: &mut IoUring) -> io::Result<()> {
    if !ring.params().is_feature_ext_arg() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "kernel lacks IORING_ENTER_EXT_ARG (Linux 5.11)",
        ));
    }
    let mut probe = io_uring::Probe::new();
    ring.submitter().register_probe(&mut probe)?;
    for (code, name) in [
        (opcode::Read::CODE, "READ"),
        (opcode::Write::CODE, "WRITE"),
        (opcode::Readv::CODE, "READV"),
        (opcode::Writev::CODE, "WRITEV"),
        (opcode::PollAdd::CODE, "POLL_ADD"),
    ] {
        if !probe.is_supported(code) {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("kernel lacks IORING_OP_{name}"),
            ));
        }
    }
    let nop = opcode::Nop::new().build().user_data(PROBE_NOP);
    // SAFETY: a no-op references no memory.
    unsafe { ring.submission().push(&nop) }
        .map_err(|_| io::Error::other("fresh io_uring submission queue is full"))?;
    loop {
        match ring.submit_and_wait(1) {
            Ok(_) => break,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
    match ring.completion().next() {
        Some(cqe) if cqe.user_data() == PROBE_NOP && cqe.result() >= 0 => Ok(()),
        Some(cqe) if cqe.result() < 0 => Err(io::Error::from_raw_os_error(-cqe.result())),
        _ => Err(io::Error::other("io_uring no-op did not complete")),
    }
}

impl Ring {
    pub(super) fn new(mut ring: IoUring, check: bool) -> io::Result<Self> {
        if check {
            check_ring(&mut ring)?;
        }
        // SAFETY: eventfd(2) takes no pointers; the result is checked below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
        let eventfd = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let cap = ring.params().sq_entries() as usize - 1;
        let ring = Arc::new(ring);
        let doorbell = {
            let ring = Arc::clone(&ring);
            // The kernel takes each entry once, under its own lock, whichever thread enters:
            // entering without the backend's lock is safe.
            Doorbell::new(move || enter(&ring))
        };
        Ok(Self {
            doorbell,
            ring,
            eventfd: Arc::new(eventfd),
            wake_armed: false,
            pending: VecDeque::new(),
            slots: Vec::new(),
            free: Vec::new(),
            submitted: 0,
            cap,
            unsubmitted: 0,
            closing: false,
            fixed_file: false,
        })
    }

    /// Register `file` as the ring's fixed file 0 (Linux 5.1). Where the kernel refuses (a
    /// limit on open files, a seccomp filter), entries keep naming the descriptor.
    pub(super) fn register_file(&mut self, file: &File) {
        self.fixed_file = self
            .ring
            .submitter()
            .register_files(&[file.as_raw_fd()])
            .is_ok();
    }

    /// How entries name the file: fixed file 0 with `IOSQE_FIXED_FILE` (what `types::Fixed(0)`
    /// builds), or the descriptor.
    pub(super) fn file_target(&self, file: &File) -> (types::Fd, squeue::Flags) {
        if self.fixed_file {
            (types::Fd(0), squeue::Flags::FIXED_FILE)
        } else {
            (types::Fd(file.as_raw_fd()), squeue::Flags::empty())
        }
    }

    /// Nothing queued for this ring or in its kernel side.
    pub(super) fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.submitted == 0
    }

    /// Queue the wake-up poll on the eventfd if it is not already.
    pub(super) fn arm_wake(&mut self) {
        if self.wake_armed {
            return;
        }
        let poll = opcode::PollAdd::new(types::Fd(self.eventfd.as_raw_fd()), libc::POLLIN as u32)
            .build()
            .user_data(WAKE);
        // SAFETY: a poll references no user memory, and the kernel holds its own reference to
        // the polled eventfd for as long as the poll is armed (even if a `UringWaiter` keeps
        // the ring alive after this backend and the eventfd are gone).
        if unsafe { sq(&self.ring).push(&poll) }.is_ok() {
            self.wake_armed = true;
            self.unsubmitted += 1;
        }
        // A full queue is impossible (one entry is reserved for this poll); if it happened
        // anyway, the poll is armed at the next wait.
    }

    pub(super) fn waiter(&self) -> Arc<dyn Waiter> {
        Arc::new(UringWaiter {
            ring: Arc::clone(&self.ring),
        })
    }

    pub(super) fn notifier(&self) -> Notifier {
        let eventfd = Arc::clone(&self.eventfd);
        Notifier::new(move || {
            // `WouldBlock` means the counter is saturated: a wake-up is pending anyway.
            let _ = (&*eventfd).write(&1u64.to_ne_bytes());
        })
    }
}

/// Blocks in `io_uring_enter` until the ring's completion queue holds an entry (a completion,
/// or the wake-up poll firing) or a deadline passes. It never reads or writes the queues, and
/// it never submits (its enter asks for completions only, `to_submit` 0): the kernel ties a
/// request to the thread that submitted it and cancels it if that thread exits first, so
/// only threads the engine knows to have submitted may do it (see
/// [`Backend::ties_operations_to_submitter`]).
///
/// [`Backend::ties_operations_to_submitter`]: crate::backend::Backend::ties_operations_to_submitter
pub struct UringWaiter {
    ring: Arc<IoUring>,
}

impl std::fmt::Debug for UringWaiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UringWaiter")
    }
}

impl Waiter for UringWaiter {
    fn wait(&self, deadline: Option<Instant>) -> io::Result<()> {
        let submitter = self.ring.submitter();
        let entered = match deadline {
            // SAFETY: no argument: the kernel reads no memory of ours.
            None => unsafe {
                submitter.enter::<libc::sigset_t>(0, 1, EnterFlags::GETEVENTS.bits(), None)
            },
            Some(deadline) => {
                let now = Instant::now();
                if deadline <= now {
                    return Ok(());
                }
                let timeout = types::Timespec::from(deadline - now);
                let args = types::SubmitArgs::new().timespec(&timeout);
                let flags = EnterFlags::GETEVENTS | EnterFlags::EXT_ARG;
                // SAFETY: `args` is the `io_uring_getevents_arg` that `EXT_ARG` announces
                // (`SubmitArgs` is `repr(transparent)` over it), and it and the timespec it
                // points to live until the call returns.
                unsafe { submitter.enter(0, 1, flags.bits(), Some(&args)) }
            }
        };
        match entered {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ETIME) || is_transient(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
