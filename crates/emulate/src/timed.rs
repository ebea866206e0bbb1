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
//! The bytes live in memory ([`PageStore`]): what was written reads back, what never was
//! reads as zeros, and only written pages take space, up to a limit past which a write fails
//! with `ENOSPC` (a benchmark that only wants the timing can drop the data instead). The data
//! moves when the operation is submitted; its completion waits for the model.
//!
//! Threads: the engine's threads call the backend under the engine's lock (push, submit,
//! reap) and wait through [`Waiter`] outside it; the disk thread answers into the shared
//! completion queue and wakes them.

use std::collections::{HashMap, VecDeque};
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
use crate::{EmulateError, Summary};

/// Bytes of written data a [`TimedBackend`] keeps by default: 1 GiB.
pub const DEFAULT_DATA_LIMIT: u64 = 1 << 30;

/// Size of a page of the store.
const PAGE: u64 = 4096;

/// The device's bytes in memory: 4 KiB pages, present once written.
#[derive(Debug)]
pub struct PageStore {
    pages: HashMap<u64, Box<[u8]>>,
    /// Most bytes of pages kept; `None`: writes are dropped and everything reads as zeros.
    limit: Option<u64>,
}

impl PageStore {
    /// A store keeping up to `limit` bytes of written pages (`None`: keeping nothing).
    pub fn new(limit: Option<u64>) -> Self {
        Self {
            pages: HashMap::new(),
            limit,
        }
    }

    /// Copy `bytes` to `offset`; `ENOSPC` if that needs more pages than the limit allows
    /// (nothing is written then).
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let end = offset + bytes.len() as u64;
        let new_pages = (offset / PAGE..end.div_ceil(PAGE))
            .filter(|page| !self.pages.contains_key(page))
            .count() as u64;
        if (self.pages.len() as u64 + new_pages) * PAGE > limit {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let mut at = offset;
        for chunk in split(offset, bytes.len()) {
            let page = self
                .pages
                .entry(at / PAGE)
                .or_insert_with(|| vec![0; PAGE as usize].into_boxed_slice());
            let from = (at - offset) as usize;
            page[chunk.clone()].copy_from_slice(&bytes[from..from + chunk.len()]);
            at += chunk.len() as u64;
        }
        Ok(())
    }

    /// Fill `bytes` from `offset` (zeros where nothing was written).
    pub fn read(&self, offset: u64, bytes: &mut [u8]) {
        let mut at = offset;
        for chunk in split(offset, bytes.len()) {
            let from = (at - offset) as usize;
            let to = &mut bytes[from..from + chunk.len()];
            match self.pages.get(&(at / PAGE)) {
                Some(page) => to.copy_from_slice(&page[chunk.clone()]),
                None => to.fill(0),
            }
            at += chunk.len() as u64;
        }
    }

    /// Bytes of pages held.
    pub fn held(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }
}

/// The in-page ranges `len` bytes from `offset` cover, page by page.
fn split(offset: u64, len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let end = offset + len as u64;
    let mut at = offset;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let start = (at % PAGE) as usize;
        let stop = (PAGE as usize).min(start + (end - at) as usize);
        at += (stop - start) as u64;
        Some(start..stop)
    })
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
    store: PageStore,
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
    /// The device `spec` names (`sim:ssd`, `sim:sata-7200:rpm=5400`, …), keeping up to
    /// [`DEFAULT_DATA_LIMIT`] of written data.
    pub fn new(spec: &DeviceSpec) -> Result<Self, EmulateError> {
        Self::on_model(preset::build(spec)?)
    }

    /// A device model of the caller's.
    pub fn on_model(model: Box<dyn DeviceModel>) -> Result<Self, EmulateError> {
        let info = model.info();
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
            store: PageStore::new(Some(DEFAULT_DATA_LIMIT)),
            queued: Vec::new(),
            outstanding: 0,
            shared: Arc::default(),
        })
    }

    /// Keep up to `bytes` of written data (`None`: drop every write and read zeros, for a
    /// benchmark that only wants the device's timing).
    pub fn with_data_limit(mut self, bytes: Option<u64>) -> Self {
        self.store = PageStore::new(bytes);
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
        let error = match moved {
            Ok(()) => {
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
                match self.requests.send(Message::Request(arrival)) {
                    Ok(()) => return,
                    Err(unsent) => {
                        // The disk thread is gone (stopped): the operation fails.
                        if let Message::Request(arrival) = unsent.0 {
                            arrival.answer.fail();
                        }
                        return;
                    }
                }
            }
            Err(error) => error,
        };
        self.shared.finish(IoDone {
            token: op.token,
            result: Err(error),
            buffers: op.buffers,
        });
    }

    fn move_bytes(&mut self, op: &mut IoOp) -> io::Result<()> {
        let mut at = op.offset;
        match op.direction {
            Direction::Write => {
                for buffer in &op.buffers {
                    self.store.write(at, buffer.as_slice())?;
                    at += buffer.len() as u64;
                }
            }
            Direction::Read => {
                for buffer in &mut op.buffers {
                    self.store.read(at, buffer.as_mut_slice());
                    at += buffer.len() as u64;
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_read_back_what_was_written_across_page_boundaries() {
        let mut store = PageStore::new(Some(1 << 20));
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        store.write(3000, &bytes).expect("within the limit");
        let mut back = vec![0xff; 10_000];
        store.read(3000, &mut back);
        assert_eq!(back, bytes);
        // Around it, zeros: never written.
        let mut edge = vec![0xff; 8];
        store.read(2992, &mut edge);
        assert_eq!(edge, [0; 8]);
        assert_eq!(store.held(), 4 * PAGE);
    }

    #[test]
    fn a_write_past_the_limit_fails_and_changes_nothing() {
        let mut store = PageStore::new(Some(2 * PAGE));
        store.write(0, &[1; 4096]).expect("one page");
        let error = store.write(8192, &[2; 8192]).expect_err("two more pages");
        assert_eq!(error.raw_os_error(), Some(libc::ENOSPC));
        assert_eq!(store.held(), PAGE);
        // Rewriting a page it holds needs no new one.
        store.write(0, &[3; 4096]).expect("the same page");
    }

    #[test]
    fn a_store_without_data_reads_zeros() {
        let mut store = PageStore::new(None);
        store.write(0, &[7; 512]).expect("dropped");
        let mut back = [1u8; 512];
        store.read(0, &mut back);
        assert_eq!(back, [0; 512]);
    }
}
