//! A simulated disk on the real clock, inside the process: an engine backend.
//!
//! [`TimedBackend`] hands every operation to the disk thread (the one that times the FUSE
//! file's replies, see `disk`) and completes it when the device model says, on the real
//! clock. A program that drives the engine then meets a 7200 rpm disk, a 2004 IDE disk or an
//! SSD with internal parallelism at the model's speed, without FUSE, a loop device or root:
//! the device is the bottleneck, not the host, which is what a study of latency isolation
//! needs. The model's queue depth applies as on the emulated file: the engine is told it
//! ([`TimedBackend::geometry`]) and operations beyond it wait in the disk thread's FIFO.
//!
//! The bytes live in the emulator's store (`store`: a sparse temporary file as large as the
//! device): what was written reads back, what never was reads as zeros, and only written
//! data takes space; a benchmark that only wants the timing can drop them instead. The data
//! moves when the operation is submitted; its completion waits for the model.
//!
//! Threads: the engine's threads call the backend under the engine's lock (push, submit,
//! reap) and wait through [`Waiter`] outside it; the disk thread answers into the shared
//! completion queue and wakes them.

use std::collections::VecDeque;
use std::io;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use ioslice_core::Direction;
use ioslice_engine::backend::{IoDone, IoOp, Notifier, Waiter};
use ioslice_engine::{AlignedBuffer, Backend, Geometry};
use ioslice_sim::device::{DeviceInfo, DeviceModel};
use ioslice_sim::preset::{self, DeviceSpec};

use crate::disk::{Answer, Arrival, Buffers, Disk, Message};
use crate::fault::Verdict;
use crate::store::Store;
use crate::{EmulateError, Summary};

/// Where a timed device's bytes go.
#[derive(Debug)]
enum Data {
    /// A sparse temporary file as large as the device, as the emulator keeps them: what was
    /// written reads back, what never was reads as zeros, only written data takes space.
    Kept(Store),
    /// Nowhere: writes are dropped and reads return zeros (a benchmark of timing alone).
    Dropped,
}

/// Completions the disk thread has answered and nobody has reaped yet.
#[derive(Debug, Default)]
struct Completions {
    done: VecDeque<IoDone>,
    notified: bool,
}

/// The completion queue, shared by the disk thread (which fills it) and the engine's threads.
#[derive(Debug, Default)]
struct Shared {
    completions: Mutex<Completions>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Completions> {
        self.completions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn finish(&self, done: IoDone) {
        self.lock().done.push_back(done);
        self.wake.notify_all();
    }
}

/// How the disk thread answers one of the engine's operations.
struct Completion {
    token: u64,
    len: usize,
    buffers: Vec<AlignedBuffer>,
    shared: Arc<Shared>,
}

impl Answer for Completion {
    fn complete(self: Box<Self>, _buffers: &Buffers) {
        let Self {
            token,
            len,
            buffers,
            shared,
        } = *self;
        shared.finish(IoDone {
            token,
            result: Ok(len),
            buffers,
        });
    }

    fn fail(self: Box<Self>) {
        let Self {
            token,
            buffers,
            shared,
            ..
        } = *self;
        shared.finish(IoDone {
            token,
            result: Err(io::Error::from_raw_os_error(libc::EIO)),
            buffers,
        });
    }
}

/// A simulated device served on the real clock, as an engine backend.
pub struct TimedBackend {
    disk: Option<Disk>,
    requests: Sender<Message>,
    info: DeviceInfo,
    data: Data,
    queued: Vec<IoOp>,
    /// Pushed and not yet reaped.
    outstanding: usize,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for TimedBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedBackend")
            .field("device", &self.info.name)
            .field("outstanding", &self.outstanding)
            .finish()
    }
}

impl TimedBackend {
    /// The device `spec` names (`sim:ssd`, `sim:sata-7200:rpm=5400`, …), its bytes kept in a
    /// sparse temporary file.
    pub fn new(spec: &DeviceSpec) -> Result<Self, EmulateError> {
        Self::on_model(preset::build(spec)?)
    }

    /// A device model of the caller's.
    pub fn on_model(model: Box<dyn DeviceModel>) -> Result<Self, EmulateError> {
        let info = model.info();
        let store = Store::open(None, info.capacity_sectors * 512)?;
        let disk = Disk::start(
            model,
            Instant::now(),
            Arc::default(),
            None,
            Default::default(),
        )
        .map_err(EmulateError::Spawn)?;
        Ok(Self {
            requests: disk.sender(),
            disk: Some(disk),
            info,
            data: Data::Kept(store),
            queued: Vec::new(),
            outstanding: 0,
            shared: Arc::default(),
        })
    }

    /// Drop every write and read zeros: for a benchmark that only wants the device's timing
    /// (and should not fill the disk with what it writes).
    pub fn dropping_data(mut self) -> Self {
        self.data = Data::Dropped;
        self
    }

    /// What the engine should be told about the device: 512-byte blocks, the model's queue
    /// depth, capacity and rotation.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            logical_block_size: 512,
            queue_depth: self.info.queue_depth.max(1),
            capacity: self.info.capacity_sectors * 512,
            rotational: self.info.rotational,
        }
    }

    /// The model's description.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Answer everything outstanding, stop the disk thread, and say what it served (service
    /// times, how late it answered).
    pub fn stop(&mut self) -> Summary {
        self.disk.take().map(Disk::stop).unwrap_or_default()
    }

    /// Move the operation's bytes and hand it to the disk thread, or finish it at once with
    /// the error that keeps it from the device.
    fn start(&mut self, mut op: IoOp) {
        let len: usize = op.buffers.iter().map(AlignedBuffer::len).sum();
        let capacity = self.info.capacity_sectors * 512;
        let moved = if op.offset.saturating_add(len as u64) > capacity {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            self.move_bytes(&mut op)
        };
        if let Err(error) = moved {
            self.shared.finish(IoDone {
                token: op.token,
                result: Err(error),
                buffers: op.buffers,
            });
            return;
        }
        let arrival = Arrival {
            direction: op.direction,
            offset: op.offset,
            len: len as u64,
            answer: Box::new(Completion {
                token: op.token,
                len,
                buffers: op.buffers,
                shared: Arc::clone(&self.shared),
            }),
            arrived: Instant::now(),
            verdict: Verdict::CLEAN,
        };
        // A send fails only once the disk thread is gone (stopped): the operation fails.
        if let Err(unsent) = self.requests.send(Message::Request(arrival)) {
            if let Message::Request(arrival) = unsent.0 {
                arrival.answer.fail();
            }
        }
    }

    fn move_bytes(&mut self, op: &mut IoOp) -> io::Result<()> {
        let mut at = op.offset;
        for buffer in &mut op.buffers {
            match (&self.data, op.direction) {
                (Data::Kept(store), Direction::Write) => {
                    store.write(at, buffer.as_slice())?;
                }
                (Data::Kept(store), Direction::Read) => {
                    store.read(at, buffer.as_mut_slice())?;
                }
                // A discarded range reads back as zeroes.
                (Data::Kept(store), Direction::Discard) => {
                    buffer.as_mut_slice().fill(0);
                    store.write(at, buffer.as_slice())?;
                }
                (Data::Dropped, Direction::Write | Direction::Discard) => {}
                (Data::Dropped, Direction::Read) => buffer.as_mut_slice().fill(0),
            }
            at += buffer.len() as u64;
        }
        Ok(())
    }
}

impl Drop for TimedBackend {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Backend for TimedBackend {
    fn name(&self) -> &'static str {
        "timed"
    }

    fn push(&mut self, op: IoOp) {
        self.outstanding += 1;
        self.queued.push(op);
    }

    fn submit(&mut self) -> io::Result<()> {
        for op in std::mem::take(&mut self.queued) {
            self.start(op);
        }
        Ok(())
    }

    fn reap(&mut self, done: &mut Vec<IoDone>) -> bool {
        let mut completions = self.shared.lock();
        self.outstanding -= completions.done.len();
        done.extend(completions.done.drain(..));
        std::mem::take(&mut completions.notified)
    }

    fn waiter(&self) -> Arc<dyn Waiter> {
        Arc::new(TimedWaiter(Arc::clone(&self.shared)))
    }

    fn notifier(&self) -> Notifier {
        let shared = Arc::clone(&self.shared);
        Notifier::new(move || {
            shared.lock().notified = true;
            shared.wake.notify_all();
        })
    }

    fn in_flight(&self) -> usize {
        self.outstanding
    }
}

/// Blocks until a completion is ready, a notification is pending, or the deadline passes.
struct TimedWaiter(Arc<Shared>);

impl Waiter for TimedWaiter {
    fn wait(&self, deadline: Option<Instant>) -> io::Result<()> {
        let mut completions = self.0.lock();
        while completions.done.is_empty() && !completions.notified {
            completions = match deadline {
                None => self
                    .0
                    .wake
                    .wait(completions)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Ok(());
                    }
                    self.0
                        .wake
                        .wait_timeout(completions, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
        Ok(())
    }
}
