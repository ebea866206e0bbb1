//! The io_uring backend: one ring shared by the threads that drive the engine, plus one ring
//! per *lane* a thread opens for itself.
//!
//! A lane is a ring of its own for a thread that waits for its own requests (a job of
//! `ioslice run`): operations pushed for the lane go to its ring, whoever submits them, and
//! the thread blocks in that ring alone. The kernel then wakes exactly that thread when one of
//! its operations completes, instead of waking whoever polls the shared ring, which would
//! have to wake the owner in turn. Up to [`MAX_LANES`] lanes are open at once.
//!
//! Pushing, submitting and reaping happen under the engine's lock, so there is one producer
//! of submission entries and one consumer of completions at a time; waiting
//! ([`UringWaiter`]) is an `io_uring_enter(GETEVENTS, min_complete = 1)` made without that
//! lock, so a thread can block for completions while another submits on the same ring.
//!
//! - An operation with one buffer becomes an `IORING_OP_READ`/`WRITE`, one with several an
//!   `IORING_OP_READV`/`WRITEV`, at the operation's byte offset. Its buffers and iovec array
//!   stay in a slab slot (keyed by the SQE's `user_data`) until its CQE arrives, so the memory
//!   the kernel reads or fills is owned, alive and unmoved for the whole operation.
//! - At most `sq_entries - 1` operations are in the kernel at once (one entry is kept for the
//!   wake-up poll), so the submission queue never overflows and the completion queue (twice
//!   the size) never does either; operations beyond that wait in a queue, in order, and are
//!   submitted as earlier ones complete. Nothing is dropped.
//! - Waking: an eventfd with a one-shot `IORING_OP_POLL_ADD` armed on the ring. The
//!   [`Notifier`] writes the eventfd, which completes the poll and ends a blocked wait; the
//!   wait drains the eventfd and re-arms the poll. The eventfd counter keeps a notification
//!   made while nobody waits, so the next wait returns at once.
//! - The file is registered with every ring (`IORING_REGISTER_FILES`) and entries name it by
//!   index, which spares the kernel a descriptor lookup and a reference count per operation;
//!   a ring the kernel refuses it to names the descriptor instead.
//! - Deadlines: `io_uring_enter` with `IORING_ENTER_EXT_ARG` and a timeout (Linux 5.11), so no
//!   timeout SQE has to be managed.
//! - Submitting: every entry pushed since the last submission goes to the kernel with one
//!   `io_uring_enter`, and none is made when nothing was pushed.
//! - Completions: the ring is set up with `IORING_SETUP_COOP_TASKRUN` where the kernel has it
//!   (5.19). Any thread may submit, and the kernel finishes an operation on the thread that
//!   submitted it; cooperatively, that happens at that thread's next system call, sleep or
//!   interrupt instead of through an inter-processor interrupt per completion, which cost
//!   half the throughput of a single client at queue depth 32. A thread sleeping anywhere
//!   (a parked future, a lock) is woken to do it, so completions never wait on a sleeper; a
//!   thread computing without system calls delays the completions of the operations it
//!   submitted until its next timer tick at most. A kernel without it is refused at [`UringBackend::new`] and
//!   the engine falls back to the thread pool.
//!
//! All of the engine's `unsafe` for io_uring lives in this file.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Instant;

use io_uring::cqueue::CompletionQueue;
use io_uring::squeue::SubmissionQueue;
use io_uring::{opcode, squeue, types, EnterFlags, IoUring};
use ioslice_core::Direction;

use super::{Backend, Doorbell, IoDone, IoOp, Notifier, Waiter, SHARED_LANE};
use crate::buffer::AlignedBuffer;

/// `user_data` of the wake-up poll on the eventfd.
const WAKE: u64 = u64::MAX;
/// `user_data` of the no-op used to check the ring at start-up.
const PROBE_NOP: u64 = u64::MAX - 1;
/// Largest queue depth asked of the kernel (rings hold at most 32768 entries).
const MAX_DEPTH: u32 = 16 * 1024;

/// The iovec array of a vectored operation. Its heap allocation is made once, with the exact
/// length, and never grown, so the address handed to the kernel stays valid while the slot is
/// occupied, however the slab moves the `Vec` value itself.
struct IoVecs {
    _storage: Vec<libc::iovec>,
}

// SAFETY: the raw pointers in the iovecs point into the `AlignedBuffer`s stored in the same
// `InFlight` slot; they move between threads together, and the pointers are only dereferenced
// by the kernel, never by Rust code.
unsafe impl Send for IoVecs {}

/// An operation handed to the kernel and not yet completed.
struct InFlight {
    token: u64,
    buffers: Vec<AlignedBuffer>,
    _iovecs: IoVecs,
}

/// One ring with its wake-up eventfd and the operations queued for it or in its kernel side.
struct Ring {
    /// Shared with the [`UringWaiter`]s handed out, which only ever enter the kernel to wait.
    ring: Arc<IoUring>,
    /// Non-blocking eventfd the ring's [`Notifier`] writes.
    eventfd: Arc<File>,
    /// Whether the poll on the eventfd is queued or in the kernel.
    wake_armed: bool,
    /// Pushed, not yet handed to the kernel.
    pending: VecDeque<IoOp>,
    /// Handed to the kernel; index = `user_data`.
    slots: Vec<Option<InFlight>>,
    free: Vec<usize>,
    /// Occupied slots.
    submitted: usize,
    /// Most operations in the kernel at once.
    cap: usize,
    /// Entries in the submission queue not yet handed to the kernel.
    unsubmitted: usize,
    /// A lane its thread closed: dropped once nothing is queued or in flight on it.
    closing: bool,
    /// Submits the ring's queued entries from any thread.
    doorbell: Doorbell,
    /// The backend's file is registered with this ring as fixed file 0: entries name it by
    /// index, and the kernel skips looking the descriptor up and counting a reference for
    /// every operation.
    fixed_file: bool,
}

/// io_uring backend; see the module documentation.
pub struct UringBackend {
    /// Lane 0 is the shared ring; the others are lanes opened for threads (`None`: free).
    /// Declared before `file`, so the rings (which wait for their operations) drop first.
    rings: Vec<Option<Ring>>,
    file: Arc<File>,
    /// Entries each lane's ring is made with.
    entries: u32,
    /// Finished without the kernel (no buffers, an impossible offset), with their lane;
    /// returned at the next reap of that lane.
    ready: Vec<(usize, IoDone)>,
    /// Operations pushed and not yet returned, on every lane.
    in_flight: usize,
}

impl std::fmt::Debug for UringBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringBackend")
            .field("sq_entries", &self.ring_entries())
            .field("lanes", &self.rings.iter().flatten().count())
            .field("in_flight", &self.in_flight)
            .finish_non_exhaustive()
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
    )
}

/// The ring's submission queue. Only `UringBackend` calls this, from methods taking `&mut self`
/// (so never two at once: the engine's lock, or plain ownership, serialises them), and drops
/// the queue before returning; `UringWaiter` never touches the queues.
fn sq(ring: &IoUring) -> SubmissionQueue<'_> {
    // SAFETY: per the above, no other `SubmissionQueue` of this ring exists while this one
    // lives.
    unsafe { ring.submission_shared() }
}

/// The ring's completion queue; the same discipline as [`sq`].
fn cq(ring: &IoUring) -> CompletionQueue<'_> {
    // SAFETY: only `UringBackend` makes completion queues, one at a time under `&mut self`,
    // and `UringWaiter` never does, so no other `CompletionQueue` of this ring exists.
    unsafe { ring.completion_shared() }
}

/// Most times a submission refused for a passing reason (`EINTR`, `EAGAIN`, `EBUSY`) is
/// tried again before it counts as the ring failing.
const SUBMIT_RETRIES: u32 = 1000;

/// Hand the kernel the entries in `ring`'s submission queue (one `io_uring_enter`, more only
/// if the kernel refuses them for a passing reason; then it yields between tries). Nobody
/// else would: waiters never submit (see [`UringWaiter`]), so entries left queued here would
/// never reach the kernel.
fn enter(ring: &IoUring) -> io::Result<()> {
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
fn setup_ring(entries: u32) -> io::Result<IoUring> {
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
fn check_ring(ring: &mut IoUring) -> io::Result<()> {
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
    fn new(mut ring: IoUring, check: bool) -> io::Result<Self> {
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
    fn register_file(&mut self, file: &File) {
        self.fixed_file = self
            .ring
            .submitter()
            .register_files(&[file.as_raw_fd()])
            .is_ok();
    }

    /// How entries name the file: fixed file 0 with `IOSQE_FIXED_FILE` (what `types::Fixed(0)`
    /// builds), or the descriptor.
    fn file_target(&self, file: &File) -> (types::Fd, squeue::Flags) {
        if self.fixed_file {
            (types::Fd(0), squeue::Flags::FIXED_FILE)
        } else {
            (types::Fd(file.as_raw_fd()), squeue::Flags::empty())
        }
    }

    /// Nothing queued for this ring or in its kernel side.
    fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.submitted == 0
    }

    /// Queue the wake-up poll on the eventfd if it is not already.
    fn arm_wake(&mut self) {
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

    /// Hand queued operations to the submission queue, up to the in-kernel cap. Operations
    /// the kernel must not see finish at once, into `ready` under `lane`.
    fn fill_sq(&mut self, file: &File, lane: usize, ready: &mut Vec<(usize, IoDone)>) {
        while self.submitted < self.cap {
            let Some(op) = self.pending.pop_front() else {
                break;
            };
            if op.buffers.is_empty() {
                let done = IoDone {
                    token: op.token,
                    result: Ok(0),
                    buffers: op.buffers,
                };
                ready.push((lane, done));
                continue;
            }
            // The kernel reads an offset of -1 as "the file position": refuse what is not a
            // valid file offset instead.
            if op.offset > i64::MAX as u64 || op.buffers.len() > u32::MAX as usize {
                let done = IoDone {
                    token: op.token,
                    result: Err(io::Error::from_raw_os_error(libc::EINVAL)),
                    buffers: op.buffers,
                };
                ready.push((lane, done));
                continue;
            }
            if !self.put_in_sq(file, op) {
                break;
            }
        }
    }

    /// Put one operation in a slot and its entry in the submission queue; `false` if it had
    /// to be queued again (the submission queue is full).
    fn put_in_sq(&mut self, file: &File, op: IoOp) -> bool {
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        let (fd, fd_flags) = self.file_target(file);
        let IoOp {
            token,
            direction,
            offset,
            mut buffers,
            lane,
        } = op;
        let mut iovecs = Vec::new();
        let entry: squeue::Entry = match (buffers.as_mut_slice(), direction) {
            ([one], Direction::Read) if one.len() <= u32::MAX as usize => {
                let len = one.len() as u32;
                opcode::Read::new(fd, one.as_mut_slice().as_mut_ptr(), len)
                    .offset(offset)
                    .build()
            }
            ([one], Direction::Write) if one.len() <= u32::MAX as usize => {
                let len = one.len() as u32;
                opcode::Write::new(fd, one.as_slice().as_ptr(), len)
                    .offset(offset)
                    .build()
            }
            (many, direction) => {
                iovecs = many
                    .iter_mut()
                    .map(|buffer| libc::iovec {
                        iov_base: buffer.as_mut_slice().as_mut_ptr().cast(),
                        iov_len: buffer.len(),
                    })
                    .collect();
                // Checked by the caller: fits in u32.
                let count = iovecs.len() as u32;
                match direction {
                    Direction::Read => opcode::Readv::new(fd, iovecs.as_ptr(), count)
                        .offset(offset)
                        .build(),
                    Direction::Write => opcode::Writev::new(fd, iovecs.as_ptr(), count)
                        .offset(offset)
                        .build(),
                }
            }
        }
        .flags(fd_flags)
        .user_data(index as u64);
        // Moving `buffers` and `iovecs` into the slot moves only the `Vec` headers; the
        // heap memory the entry points at stays where it is.
        self.slots[index] = Some(InFlight {
            token,
            buffers,
            _iovecs: IoVecs { _storage: iovecs },
        });
        self.submitted += 1;
        // SAFETY: every address in `entry` (the buffer, or the iovec array and the buffers
        // it names) points into heap memory owned by `self.slots[index]`, which is neither
        // dropped nor modified until this entry's CQE is reaped (`reap_cq`), or until `Drop`
        // has waited for it. The file descriptor is kept open by the backend's `file`, and
        // the backend drops its rings (which wait for their operations) before the file.
        if unsafe { sq(&self.ring).push(&entry) }.is_ok() {
            self.unsubmitted += 1;
            return true;
        }
        // Cannot happen (see `cap`), but never drop an operation: submit and retry.
        let retried = self.ring.submit().is_ok()
            // SAFETY: as above, the same entry and the same owned memory.
            && unsafe { sq(&self.ring).push(&entry) }.is_ok();
        if retried {
            self.unsubmitted = 1;
            return true;
        }
        // Take the operation back and try again at the next submission.
        if let Some(inflight) = self.slots[index].take() {
            self.submitted -= 1;
            self.free.push(index);
            self.pending.push_front(IoOp {
                token: inflight.token,
                direction,
                offset,
                buffers: inflight.buffers,
                lane,
            });
        }
        false
    }

    /// Hand the kernel every entry queued since the last submission (one system call).
    fn submit(&mut self) -> io::Result<()> {
        self.arm_wake();
        if self.unsubmitted == 0 {
            return Ok(());
        }
        enter(&self.ring)?;
        self.unsubmitted = 0;
        Ok(())
    }

    /// Move completions from the completion queue to `done`; returns whether the wake-up
    /// poll fired (in which case the eventfd has been drained and the poll must be re-armed).
    fn reap_cq(&mut self, done: &mut Vec<IoDone>) -> bool {
        let mut woke = false;
        for cqe in cq(&self.ring) {
            let user_data = cqe.user_data();
            if user_data == WAKE {
                woke = true;
                self.wake_armed = false;
                continue;
            }
            let Some(inflight) = self
                .slots
                .get_mut(user_data as usize)
                .and_then(Option::take)
            else {
                continue; // the start-up no-op, or nothing we know: ignore
            };
            self.submitted -= 1;
            self.free.push(user_data as usize);
            let res = cqe.result();
            done.push(IoDone {
                token: inflight.token,
                result: if res >= 0 {
                    Ok(res as usize)
                } else {
                    Err(io::Error::from_raw_os_error(-res))
                },
                buffers: inflight.buffers,
            });
        }
        if woke {
            let mut counter = [0u8; 8];
            // Resets the counter; `WouldBlock` just means it was already drained.
            let _ = (&*self.eventfd).read(&mut counter);
        }
        woke
    }

    fn waiter(&self) -> Arc<dyn Waiter> {
        Arc::new(UringWaiter {
            ring: Arc::clone(&self.ring),
        })
    }

    fn notifier(&self) -> Notifier {
        let eventfd = Arc::clone(&self.eventfd);
        Notifier::new(move || {
            // `WouldBlock` means the counter is saturated: a wake-up is pending anyway.
            let _ = (&*eventfd).write(&1u64.to_ne_bytes());
        })
    }
}

/// Most lanes open at once besides the shared one (each is a ring and an eventfd).
pub const MAX_LANES: usize = 64;

impl UringBackend {
    /// A ring for `file` sized for `entries` operations in flight (clamped to 1..=16384; the
    /// ring gets the next power of two above, plus one entry for the wake-up poll).
    ///
    /// Checks that the ring really works: that the kernel supports `IORING_ENTER_EXT_ARG`
    /// (Linux 5.11) and the read, write, vectored and poll opcodes, and that a no-op goes
    /// round. Any failure (`EPERM` under seccomp or `io_uring_disabled`, `ENOSYS` on old
    /// kernels, `Unsupported` for a missing feature) is returned so the caller can fall back.
    pub fn new(file: Arc<File>, entries: u32) -> io::Result<Self> {
        let depth = entries.clamp(1, MAX_DEPTH);
        let ring_entries = (depth + 1).next_power_of_two();
        let mut shared = Ring::new(setup_ring(ring_entries)?, true)?;
        shared.register_file(&file);
        Ok(Self {
            file,
            rings: vec![Some(shared)],
            entries: ring_entries,
            ready: Vec::new(),
            in_flight: 0,
        })
    }

    /// Entries in the submission queue the ring was given.
    pub fn ring_entries(&self) -> u32 {
        self.entries
    }

    /// Whether `lane`'s ring names the file by its fixed-file index (registered at the ring's
    /// creation) rather than by its descriptor; `false` for a lane that is not open.
    pub fn uses_fixed_file(&self, lane: usize) -> bool {
        matches!(self.rings.get(lane), Some(Some(ring)) if ring.fixed_file)
    }

    /// Drop a closed lane's ring once nothing is left on it.
    fn retire_if_done(&mut self, lane: usize) {
        let done = match self.rings.get(lane) {
            Some(Some(ring)) => {
                ring.closing && ring.is_idle() && !self.ready.iter().any(|(l, _)| *l == lane)
            }
            _ => false,
        };
        if done {
            self.rings[lane] = None;
        }
    }
}

impl Backend for UringBackend {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn push(&mut self, op: IoOp) {
        self.in_flight += 1;
        let lane = match self.rings.get(op.lane) {
            Some(Some(_)) => op.lane,
            _ => SHARED_LANE,
        };
        if let Some(Some(ring)) = self.rings.get_mut(lane) {
            ring.pending.push_back(IoOp { lane, ..op });
        }
    }

    fn submit(&mut self) -> io::Result<()> {
        for (lane, ring) in self.rings.iter_mut().enumerate() {
            if let Some(ring) = ring.as_mut() {
                ring.fill_sq(&self.file, lane, &mut self.ready);
                ring.submit()?;
            }
        }
        Ok(())
    }

    fn submit_later(&mut self, doorbells: &mut Vec<Doorbell>) -> io::Result<()> {
        for (lane, ring) in self.rings.iter_mut().enumerate() {
            if let Some(ring) = ring.as_mut() {
                ring.fill_sq(&self.file, lane, &mut self.ready);
                ring.arm_wake();
                if ring.unsubmitted > 0 {
                    ring.unsubmitted = 0;
                    doorbells.push(ring.doorbell.clone());
                }
            }
        }
        Ok(())
    }

    fn reap(&mut self, done: &mut Vec<IoDone>) -> bool {
        self.reap_lane(SHARED_LANE, done)
    }

    fn open_lane(&mut self) -> io::Result<Option<usize>> {
        let index = match self.rings.iter().skip(1).position(Option::is_none) {
            Some(free) => free + 1,
            None if self.rings.len() <= MAX_LANES => {
                self.rings.push(None);
                self.rings.len() - 1
            }
            None => return Ok(None),
        };
        let mut ring = Ring::new(setup_ring(self.entries)?, false)?;
        ring.register_file(&self.file);
        self.rings[index] = Some(ring);
        Ok(Some(index))
    }

    fn close_lane(&mut self, lane: usize) {
        if lane == SHARED_LANE {
            return;
        }
        if let Some(Some(ring)) = self.rings.get_mut(lane) {
            ring.closing = true;
        }
        self.retire_if_done(lane);
    }

    fn reap_lane(&mut self, lane: usize, done: &mut Vec<IoDone>) -> bool {
        let before = done.len();
        if !self.ready.is_empty() {
            let mut index = 0;
            while index < self.ready.len() {
                if self.ready[index].0 == lane {
                    done.push(self.ready.remove(index).1);
                } else {
                    index += 1;
                }
            }
        }
        let woke = match self.rings.get_mut(lane) {
            Some(Some(ring)) => ring.reap_cq(done),
            _ => false,
        };
        self.in_flight -= (done.len() - before).min(self.in_flight);
        if lane != SHARED_LANE {
            self.retire_if_done(lane);
        }
        woke
    }

    fn lane_waiter(&self, lane: usize) -> Option<Arc<dyn Waiter>> {
        match self.rings.get(lane) {
            Some(Some(ring)) => Some(ring.waiter()),
            _ => None,
        }
    }

    fn lane_notifier(&self, lane: usize) -> Option<Notifier> {
        match self.rings.get(lane) {
            Some(Some(ring)) => Some(ring.notifier()),
            _ => None,
        }
    }

    fn waiter(&self) -> Arc<dyn Waiter> {
        match self.rings.first() {
            Some(Some(ring)) => ring.waiter(),
            // Lane 0 is made in `new` and never dropped.
            _ => unreachable!("the shared ring is always there"),
        }
    }

    fn notifier(&self) -> Notifier {
        match self.rings.first() {
            Some(Some(ring)) => ring.notifier(),
            _ => unreachable!("the shared ring is always there"),
        }
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn ties_operations_to_submitter(&self) -> bool {
        true
    }
}

/// Blocks in `io_uring_enter` until the ring's completion queue holds an entry (a completion,
/// or the wake-up poll firing) or a deadline passes. It never reads or writes the queues, and
/// it never submits (its enter asks for completions only, `to_submit` 0): the kernel ties a
/// request to the thread that submitted it and cancels it if that thread exits first, so
/// only threads the engine knows to have submitted may do it (see
/// [`Backend::ties_operations_to_submitter`]).
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

impl Drop for Ring {
    /// Waits for every operation in the kernel before the buffers are freed: the kernel may
    /// still be writing into them (closing the ring does not wait for block I/O). If the ring
    /// fails while draining, the remaining buffers are leaked rather than freed under the
    /// kernel's feet.
    fn drop(&mut self) {
        self.pending.clear();
        let mut scratch = Vec::new();
        while self.submitted > 0 {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if is_transient(&e) => {}
                Err(_) => {
                    for slot in self.slots.drain(..) {
                        std::mem::forget(slot);
                    }
                    return;
                }
            }
            self.reap_cq(&mut scratch);
            scratch.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    use super::*;

    /// A ring-backed backend on a temporary file of 8 KiB, the second 4 KiB filled with 7s.
    fn backend() -> Option<(tempfile::NamedTempFile, UringBackend)> {
        let mut temp = tempfile::NamedTempFile::new().expect("temp file");
        temp.write_all(&[0u8; 4096]).expect("write");
        temp.write_all(&[7u8; 4096]).expect("write");
        let file = Arc::new(temp.reopen().expect("reopen"));
        match UringBackend::new(file, 4) {
            Ok(backend) => Some((temp, backend)),
            Err(e) => {
                eprintln!("skipping: cannot create an io_uring ({e})");
                None
            }
        }
    }

    fn read_second_block(backend: &mut UringBackend, lane: usize) -> Vec<u8> {
        backend.push(IoOp {
            token: 9,
            direction: Direction::Read,
            offset: 4096,
            buffers: vec![AlignedBuffer::new(4096, 4096)],
            lane,
        });
        let mut done = Vec::new();
        let give_up = Instant::now() + std::time::Duration::from_secs(10);
        while done.is_empty() {
            assert!(Instant::now() < give_up, "the read never completed");
            backend.submit().expect("submit");
            backend
                .lane_waiter(lane)
                .expect("lane")
                .wait(None)
                .expect("wait");
            backend.reap_lane(lane, &mut done);
        }
        let IoDone {
            token,
            result,
            buffers,
        } = done.remove(0);
        assert_eq!((token, result.expect("read")), (9, 4096));
        buffers[0].as_slice().to_vec()
    }

    #[test]
    fn every_ring_names_the_file_by_its_fixed_index() {
        let Some((temp, mut backend)) = backend() else {
            return;
        };
        let lane = backend.open_lane().expect("open").expect("a lane");
        assert!(backend.uses_fixed_file(SHARED_LANE));
        assert!(backend.uses_fixed_file(lane));
        assert!(!backend.uses_fixed_file(lane + 1), "not open");
        assert_eq!(
            read_second_block(&mut backend, SHARED_LANE),
            vec![7u8; 4096]
        );
        assert_eq!(read_second_block(&mut backend, lane), vec![7u8; 4096]);
        // The registered file is the backend's own: a write to it shows in the next read.
        temp.as_file()
            .write_all_at(&[5u8; 4096], 4096)
            .expect("write");
        assert_eq!(read_second_block(&mut backend, lane), vec![5u8; 4096]);
    }

    #[test]
    fn a_ring_without_the_registered_file_names_the_descriptor() {
        let Some((_temp, mut backend)) = backend() else {
            return;
        };
        if let Some(Some(ring)) = backend.rings.get_mut(SHARED_LANE) {
            ring.fixed_file = false;
        }
        assert!(!backend.uses_fixed_file(SHARED_LANE));
        assert_eq!(
            read_second_block(&mut backend, SHARED_LANE),
            vec![7u8; 4096]
        );
    }
}
