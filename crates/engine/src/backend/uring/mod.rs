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
//! All of the engine's `unsafe` for io_uring lives in this module: `ring` sets a ring up,
//! enters the kernel and waits; `queue` puts operations in a ring and takes completions back;
//! here, the backend over the shared ring and the lanes' rings.

use std::fs::File;
use std::io;
use std::sync::Arc;

use super::{Backend, Doorbell, IoDone, IoOp, Notifier, Waiter, SHARED_LANE};

mod queue;
mod ring;

pub use ring::UringWaiter;
use ring::{setup_ring, Ring, MAX_DEPTH};

// What the tests below take from this module's scope (`use super::*`).
#[cfg(test)]
use {crate::buffer::AlignedBuffer, ioslice_core::Direction, std::time::Instant};

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
