//! An in-memory backend: a `Vec<u8>` stands in for the device, and every pushed operation
//! completes at the next [`Backend::reap`] of its lane (the engine reaps right after
//! submitting, so it completes inline unless the device is held). It is meant for examples and
//! tests, so it can also inject faults (an errno or a short transfer for operations covering
//! an offset), hold completions back until released (a stalled device), and count what
//! happened.
//!
//! Two options make it behave as io_uring does where the engine's threads meet it:
//! [`MemoryBackend::with_lanes`] gives it lanes (a queue, waiter and notifier per lane, as
//! io_uring's ring per lane), and [`MemoryBackend::tied_to_submitter`] ties each operation to
//! the thread that submitted it: once a test says that thread has exited
//! ([`MemoryProbe::thread_exited`]), its operations not yet done complete with `ECANCELED`,
//! as the kernel cancels what it still owes an exiting task.
//!
//! Everything a test wants to look at after the backend has moved into an engine goes
//! through a [`MemoryProbe`], a cloneable handle onto the same shared state.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use ioslice_core::Direction;

use super::{Backend, IoDone, IoOp, Notifier, Waiter, SHARED_LANE};
use crate::sync::thread::{self, ThreadId};
use crate::sync::{Condvar, Mutex, MutexGuard};

/// A fault injected for every operation whose byte range covers an offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The operation fails with this errno (`libc::EIO`, `libc::ENOSPC`, …); no byte moves.
    Errno(i32),
    /// The operation transfers only this many bytes from its start, then reports success.
    Short(usize),
}

/// One operation as the memory device executed it, in execution order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedOp {
    /// Read, write or discard.
    pub direction: Direction,
    /// Byte offset.
    pub offset: u64,
    /// Bytes asked for (all buffers together).
    pub len: usize,
    /// How many buffers the operation carried (more than one: a merged request).
    pub buffers: usize,
}

/// An operation pushed and not yet executed, with the thread that submitted it (once it has
/// been submitted, if the backend ties operations to their submitter).
#[derive(Debug)]
struct Queued {
    op: IoOp,
    submitter: Option<ThreadId>,
}

/// One lane's queue (index 0: the shared lane, always open).
#[derive(Debug, Default)]
struct LaneQueue {
    open: bool,
    queue: VecDeque<Queued>,
    notified: bool,
}

#[derive(Debug)]
struct State {
    data: Vec<u8>,
    held: bool,
    faults: Vec<(u64, Fault)>,
    wait_calls: u64,
    log: Vec<LoggedOp>,
    /// Pushed, not yet executed, per lane.
    lanes: Vec<LaneQueue>,
    /// Most lanes open at once besides the shared one (0: no lanes).
    max_lanes: usize,
    /// Operations are tied to the thread that submitted them.
    tied: bool,
    /// Threads the test said have exited.
    exited: Vec<ThreadId>,
}

impl State {
    /// The open lane `lane`, or the shared lane.
    fn lane_or_shared(&self, lane: usize) -> usize {
        match self.lanes.get(lane) {
            Some(queue) if queue.open => lane,
            _ => 0,
        }
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A device held in memory; see the [module documentation](self).
#[derive(Debug)]
pub struct MemoryBackend {
    shared: Arc<Shared>,
}

impl MemoryBackend {
    /// A zeroed device of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        let shared_lane = LaneQueue {
            open: true,
            ..LaneQueue::default()
        };
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    data: vec![0; capacity],
                    held: false,
                    faults: Vec::new(),
                    wait_calls: 0,
                    log: Vec::new(),
                    lanes: vec![shared_lane],
                    max_lanes: 0,
                    tied: false,
                    exited: Vec::new(),
                }),
                wake: Condvar::new(),
            }),
        }
    }

    /// Up to `max` lanes open at once besides the shared one, as io_uring has (builder
    /// style; none by default).
    pub fn with_lanes(self, max: usize) -> Self {
        self.shared.lock().max_lanes = max;
        self
    }

    /// Tie each operation to the thread that submits it, as io_uring does (builder style):
    /// see [`MemoryProbe::thread_exited`].
    pub fn tied_to_submitter(self) -> Self {
        self.shared.lock().tied = true;
        self
    }

    /// Every operation covering byte `offset` gets `fault` (builder style).
    pub fn with_fault(self, offset: u64, fault: Fault) -> Self {
        self.shared.lock().faults.push((offset, fault));
        self
    }

    /// A handle to inspect and steer this backend after it has moved into an engine.
    pub fn probe(&self) -> MemoryProbe {
        MemoryProbe {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// Inspects and steers a [`MemoryBackend`] from any thread.
#[derive(Debug, Clone)]
pub struct MemoryProbe {
    shared: Arc<Shared>,
}

impl MemoryProbe {
    /// A copy of `len` device bytes from `offset` (clipped to the device's end).
    pub fn read(&self, offset: u64, len: usize) -> Vec<u8> {
        let state = self.shared.lock();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(state.data.len());
        let end = start.saturating_add(len).min(state.data.len());
        state.data[start..end].to_vec()
    }

    /// Write device bytes directly, bypassing any engine (clipped to the device's end).
    pub fn fill(&self, offset: u64, bytes: &[u8]) {
        let mut state = self.shared.lock();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(state.data.len());
        let end = start.saturating_add(bytes.len()).min(state.data.len());
        let n = end - start;
        state.data[start..end].copy_from_slice(&bytes[..n]);
    }

    /// Stall the device: pushed operations stay in flight until [`MemoryProbe::release`].
    pub fn hold(&self) {
        self.shared.lock().held = true;
    }

    /// Let a stalled device complete its operations again.
    pub fn release(&self) {
        self.shared.lock().held = false;
        self.shared.wake.notify_all();
    }

    /// How many times a thread went to block in the backend's [`Waiter`] (each
    /// [`Backend::wait`] that found nothing ready counts once too).
    pub fn wait_calls(&self) -> u64 {
        self.shared.lock().wait_calls
    }

    /// Every operation executed so far, in order.
    pub fn log(&self) -> Vec<LoggedOp> {
        self.shared.lock().log.clone()
    }

    /// The thread `thread` has exited (call it once the thread is joined, which is after its
    /// thread-local destructors, as the kernel sees a task exit): on a backend
    /// [tied to the submitter](MemoryBackend::tied_to_submitter), the operations that thread
    /// submitted and the device has not done yet complete with `ECANCELED`.
    pub fn thread_exited(&self, thread: ThreadId) {
        self.shared.lock().exited.push(thread);
    }

    /// Move the engine's virtual clock forward and wake every waiter, as time passing would
    /// (a model's clock thread).
    #[cfg(ioslice_model)]
    pub fn advance_clock(&self, by: std::time::Duration) {
        let _state = self.shared.lock();
        crate::sync::advance_clock(by);
        self.shared.wake.notify_all();
    }
}

/// Execute one operation against the device bytes, or cancel it if the thread that submitted
/// it has exited (a backend tied to its submitters).
fn execute(state: &mut State, queued: Queued) -> IoDone {
    let cancelled = queued
        .submitter
        .is_some_and(|thread| state.exited.contains(&thread));
    if cancelled {
        return IoDone {
            token: queued.op.token,
            result: Err(io::Error::from_raw_os_error(libc::ECANCELED)),
            buffers: queued.op.buffers,
        };
    }
    execute_op(state, queued.op)
}

fn execute_op(state: &mut State, mut op: IoOp) -> IoDone {
    let total: usize = op.buffers.iter().map(|b| b.len()).sum();
    state.log.push(LoggedOp {
        direction: op.direction,
        offset: op.offset,
        len: total,
        buffers: op.buffers.len(),
    });
    let start = usize::try_from(op.offset).ok();
    let range = start.and_then(|s| s.checked_add(total).map(|e| (s, e)));
    let Some((start, end)) = range.filter(|&(_, e)| e <= state.data.len()) else {
        return IoDone {
            token: op.token,
            result: Err(io::Error::from_raw_os_error(libc::EINVAL)),
            buffers: op.buffers,
        };
    };
    let fault = state
        .faults
        .iter()
        .find(|(at, _)| (op.offset..op.offset + total as u64).contains(at))
        .map(|&(_, fault)| fault);
    let transfer = match fault {
        Some(Fault::Errno(errno)) => {
            return IoDone {
                token: op.token,
                result: Err(io::Error::from_raw_os_error(errno)),
                buffers: op.buffers,
            }
        }
        Some(Fault::Short(bytes)) => bytes.min(total),
        None => total,
    };
    let mut position = start;
    let stop = start + transfer;
    for buffer in &mut op.buffers {
        if position >= stop {
            break;
        }
        let n = buffer.len().min(stop - position);
        match op.direction {
            Direction::Read => {
                buffer.as_mut_slice()[..n].copy_from_slice(&state.data[position..position + n])
            }
            Direction::Write => {
                state.data[position..position + n].copy_from_slice(&buffer.as_slice()[..n])
            }
            // A discarded range reads back as zeroes, as a punched file does.
            Direction::Discard => state.data[position..position + n].fill(0),
        }
        position += n;
    }
    debug_assert!(position <= end);
    IoDone {
        token: op.token,
        result: Ok(transfer),
        buffers: op.buffers,
    }
}

impl Backend for MemoryBackend {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn push(&mut self, op: IoOp) {
        let mut state = self.shared.lock();
        let lane = state.lane_or_shared(op.lane);
        state.lanes[lane].queue.push_back(Queued {
            op,
            submitter: None,
        });
        drop(state);
        // The operation can complete at once: a thread blocked in a waiter must reap it.
        self.shared.wake.notify_all();
    }

    fn submit(&mut self) -> io::Result<()> {
        let mut state = self.shared.lock();
        if state.tied {
            let me = thread::current().id();
            for lane in &mut state.lanes {
                for queued in lane.queue.iter_mut().filter(|q| q.submitter.is_none()) {
                    queued.submitter = Some(me);
                }
            }
        }
        Ok(())
    }

    fn reap(&mut self, done: &mut Vec<IoDone>) -> bool {
        self.reap_lane(SHARED_LANE, done)
    }

    fn reap_lane(&mut self, lane: usize, done: &mut Vec<IoDone>) -> bool {
        let mut state = self.shared.lock();
        if lane >= state.lanes.len() {
            return false;
        }
        if !state.held {
            while let Some(queued) = state.lanes[lane].queue.pop_front() {
                let io_done = execute(&mut state, queued);
                done.push(io_done);
            }
        }
        std::mem::take(&mut state.lanes[lane].notified)
    }

    fn waiter(&self) -> Arc<dyn Waiter> {
        self.lane_waiter(SHARED_LANE)
            .unwrap_or_else(|| unreachable!("the shared lane always has a waiter"))
    }

    fn notifier(&self) -> Notifier {
        self.lane_notifier(SHARED_LANE)
            .unwrap_or_else(|| unreachable!("the shared lane always has a notifier"))
    }

    fn in_flight(&self) -> usize {
        let state = self.shared.lock();
        state.lanes.iter().map(|lane| lane.queue.len()).sum()
    }

    fn ties_operations_to_submitter(&self) -> bool {
        self.shared.lock().tied
    }

    fn open_lane(&mut self) -> io::Result<Option<usize>> {
        let mut state = self.shared.lock();
        let open = state.lanes.iter().skip(1).filter(|lane| lane.open).count();
        if open >= state.max_lanes {
            return Ok(None);
        }
        let free = state
            .lanes
            .iter()
            .skip(1)
            .position(|lane| !lane.open && lane.queue.is_empty());
        let lane = match free {
            Some(index) => index + 1,
            None => {
                state.lanes.push(LaneQueue::default());
                state.lanes.len() - 1
            }
        };
        state.lanes[lane] = LaneQueue {
            open: true,
            ..LaneQueue::default()
        };
        Ok(Some(lane))
    }

    fn close_lane(&mut self, lane: usize) {
        if lane != SHARED_LANE {
            if let Some(queue) = self.shared.lock().lanes.get_mut(lane) {
                queue.open = false;
            }
        }
    }

    fn lane_waiter(&self, lane: usize) -> Option<Arc<dyn Waiter>> {
        let open = self.shared.lock().lanes.get(lane).is_some_and(|q| q.open);
        open.then(|| {
            let waiter: Arc<dyn Waiter> = Arc::new(MemoryWaiter {
                shared: Arc::clone(&self.shared),
                lane,
            });
            waiter
        })
    }

    fn lane_notifier(&self, lane: usize) -> Option<Notifier> {
        let open = self.shared.lock().lanes.get(lane).is_some_and(|q| q.open);
        let shared = Arc::clone(&self.shared);
        open.then(|| {
            Notifier::new(move || {
                if let Some(queue) = shared.lock().lanes.get_mut(lane) {
                    queue.notified = true;
                }
                shared.wake.notify_all();
            })
        })
    }
}

/// Blocks until the device has operations to execute on its lane and is not held, a
/// notification for the lane is pending, or a deadline passes (on the engine's clock).
#[derive(Debug)]
struct MemoryWaiter {
    shared: Arc<Shared>,
    lane: usize,
}

impl Waiter for MemoryWaiter {
    fn wait(&self, deadline: Option<Instant>) -> io::Result<()> {
        let mut state = self.shared.lock();
        state.wait_calls += 1;
        loop {
            let Some(lane) = state.lanes.get(self.lane) else {
                return Ok(());
            };
            if (!state.held && !lane.queue.is_empty()) || lane.notified {
                return Ok(());
            }
            state = match deadline {
                None => self
                    .shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let now = crate::sync::now();
                    if now >= deadline {
                        return Ok(());
                    }
                    self.shared
                        .wake
                        .wait_timeout(state, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AlignedBuffer;

    #[test]
    fn writes_then_reads_back_and_faults() {
        let mut backend = MemoryBackend::new(8192).with_fault(4096, Fault::Errno(libc::EIO));
        let probe = backend.probe();
        let mut buffer = AlignedBuffer::new(512, 512);
        buffer.as_mut_slice().fill(7);
        backend.push(IoOp {
            token: 1,
            direction: Direction::Write,
            offset: 512,
            buffers: vec![buffer],
            lane: 0,
        });
        backend.push(IoOp {
            token: 2,
            direction: Direction::Read,
            offset: 4096,
            buffers: vec![AlignedBuffer::new(512, 512)],
            lane: 0,
        });
        assert_eq!(backend.in_flight(), 2);
        let mut done = Vec::new();
        backend.wait(None, &mut done).unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(done[0].result.as_ref().ok(), Some(&512));
        assert_eq!(
            done[1].result.as_ref().err().and_then(|e| e.raw_os_error()),
            Some(libc::EIO)
        );
        assert_eq!(probe.read(512, 512), vec![7; 512]);
        assert_eq!(backend.in_flight(), 0);
        // The first wait found its completions ready and never blocked.
        assert_eq!(probe.wait_calls(), 0);
        // Nothing in flight, a deadline in the past: returns at once.
        backend.wait(Some(Instant::now()), &mut done).unwrap();
        assert_eq!(probe.wait_calls(), 1);
    }
}
