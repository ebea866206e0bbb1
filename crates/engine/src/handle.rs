//! The client side: a cheap cloneable [`Handle`] onto a running engine, and the per-process
//! [`Client`]s made from it that submit reads and writes.
//!
//! A client checks a request against the device's geometry before anything else (offset,
//! length and buffer address aligned to 512-byte sectors and the logical block size, range
//! inside the device), so a request the device would refuse never reaches it. An accepted
//! request goes into the policy on the submitting thread, which then runs the engine's turn
//! itself (dispatch, submit, reap what is ready; see the `dispatcher` module). When the
//! policy already holds as many requests as the engine allows, the submitting thread blocks
//! until completions make room (push-back: the queue does not grow without bound).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use ioslice_core::limit::Limits;
use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::{Direction, GroupId, GroupTree, IoPriority, ProcessId};

use crate::backend::SHARED_LANE;
use crate::buffer::AlignedBuffer;
use crate::completion::{Completer, CompletionQueue, IoError, IoErrorKind, IoFuture, IoOutcome};
use crate::counters::Counters;
use crate::dispatcher::{Lane, Shared};
use crate::error::EngineError;
use crate::members::Members;
use crate::request::{Message, Submission, Transfer};
use crate::stats::Snapshot;

/// A cheap, cloneable reference to a running [`Engine`](crate::Engine), usable from any thread.
#[derive(Debug, Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    /// A client for `process` (its queue in the policy) in the group at path `group` (`""`
    /// or `"/"` for the root), submitting at `priority`. The group must have been declared
    /// on the builder or added since ([`Handle::add_group`]); it is resolved once, here.
    /// Another client for the same process in another group moves the process there
    /// ([`Client::moved_to`]).
    pub fn client(
        &self,
        process: u32,
        group: &str,
        priority: IoPriority,
    ) -> Result<Client, EngineError> {
        let shared = &self.shared;
        let mut members = shared.members.lock();
        let (id, label) = {
            let core = shared.lock();
            let id = find(&core.groups, group)?;
            (id, core.groups.get(id).label())
        };
        Members::join(&mut members, id);
        Ok(Client {
            shared: Arc::clone(shared),
            process: ProcessId(process),
            group: id,
            group_path: Arc::from(label),
            priority,
        })
    }

    /// The group at path `group`, or an error naming the engine's groups.
    pub(crate) fn group_id(&self, group: &str) -> Result<GroupId, EngineError> {
        find(&self.shared.lock().groups, group)
    }

    /// Statistics now: totals, per group, per process, in flight.
    pub fn stats(&self) -> Snapshot {
        self.shared.recorder.snapshot()
    }

    /// The device's logical block size: offsets, lengths and buffer addresses must be
    /// multiples of it.
    pub fn logical_block_size(&self) -> u64 {
        self.shared.logical_block_size
    }

    /// The device's capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.shared.capacity
    }

    /// The weight the policy gives the group at path `group` against its siblings, as it
    /// uses it ([`Scheduler::group_weight`](ioslice_core::Scheduler::group_weight)): the
    /// weight set, or the policy's own default, clamped to its range. `None` for the root,
    /// an unknown group, and every group of a policy that does not weigh groups (noop,
    /// deadline, anticipatory).
    pub fn group_weight(&self, group: &str) -> Option<u32> {
        let core = self.shared.lock();
        let id = core.groups.find(group)?;
        core.queue.policy().group_weight(id)
    }

    /// Change the weight and/or the limits of the group at path `group` while requests are
    /// in flight, as writing its cgroup files (`io.bfq.weight`, `blkio.weight`, `io.max`)
    /// does; `None` keeps what it has. Taken under the engine's lock and handed to the
    /// policy ([`Scheduler::update_group`](ioslice_core::Scheduler::update_group)) with the
    /// engine's time. The policy applies it as the kernel does: BFQ and CFQ take the weight
    /// at the group's next activation, the limit layer makes the new limits govern from the
    /// next request it releases (a fresh budget, as blk-throttle restarts the group's slice).
    /// Limits bind only where the policy runs under the limit layer, that is when some
    /// group had a limit when the engine was built. An unknown group, a weight outside
    /// 1..=10000 or one the policy refuses (BFQ takes 1..=1000), and the root group, are
    /// errors and change nothing.
    pub fn set_group(
        &self,
        group: &str,
        weight: Option<u32>,
        limits: Option<Limits>,
    ) -> Result<(), EngineError> {
        let shared = &self.shared;
        let id = self.group_id(group)?;
        if id == GroupId::ROOT {
            return Err(EngineError::Config(
                "the root group takes no weight or limit: name one of the engine's groups".into(),
            ));
        }
        shared.update_group(id, weight, limits)
    }
}

/// The group at path `group` in `groups`, or an error naming them.
fn find(groups: &GroupTree, group: &str) -> Result<GroupId, EngineError> {
    groups.find(group).ok_or_else(|| EngineError::UnknownGroup {
        group: group.to_string(),
        known: known_groups(groups),
    })
}

fn known_groups(groups: &GroupTree) -> String {
    groups
        .iter()
        .filter(|&(id, _)| !groups.is_removed(id))
        .map(|(_, group)| group.label())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Submits I/O for one process, in one group, at one priority. Cloneable; every clone is
/// the same process to the policy. While a client (or a clone) lives, its group cannot be
/// removed.
#[derive(Debug)]
pub struct Client {
    shared: Arc<Shared>,
    process: ProcessId,
    group: GroupId,
    group_path: Arc<str>,
    priority: IoPriority,
}

impl Clone for Client {
    fn clone(&self) -> Self {
        Members::join(&mut self.shared.members.lock(), self.group);
        Client {
            shared: Arc::clone(&self.shared),
            process: self.process,
            group: self.group,
            group_path: Arc::clone(&self.group_path),
            priority: self.priority,
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.shared.members.leave(self.group);
    }
}

impl Client {
    /// The engine this client submits to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The process this client submits for.
    pub fn process(&self) -> u32 {
        self.process.0
    }

    /// The path of its group (`/` for the root).
    pub fn group(&self) -> &str {
        &self.group_path
    }

    /// Its I/O priority.
    pub fn priority(&self) -> IoPriority {
        self.priority
    }

    /// Read `len` bytes at byte `offset` into a fresh aligned buffer, handed back in the
    /// [`IoResult`](crate::IoResult). Blocks while the submission queue is full.
    pub fn read(&self, offset: u64, len: usize) -> IoFuture {
        if let Err(kind) = self.check(offset, len) {
            return self.refuse(Direction::Read, offset, len, kind);
        }
        let alignment = usize::try_from(self.shared.logical_block_size).unwrap_or(512);
        let buffer = AlignedBuffer::new(len, alignment);
        self.submit(Direction::Read, offset, buffer)
    }

    /// Read `buffer.len()` bytes at byte `offset` into `buffer` (one back from an earlier
    /// request, say), handed back in the [`IoResult`](crate::IoResult): no allocation and
    /// no zeroing: what the buffer held is overwritten by the data read. Blocks while the
    /// submission queue is full.
    pub fn read_into(&self, offset: u64, buffer: AlignedBuffer) -> IoFuture {
        self.transfer_buffer(Direction::Read, offset, buffer)
    }

    /// Write `buffer` at byte `offset`; the buffer comes back in the
    /// [`IoResult`](crate::IoResult). Blocks while the submission queue is full.
    pub fn write(&self, offset: u64, buffer: AlignedBuffer) -> IoFuture {
        self.transfer_buffer(Direction::Write, offset, buffer)
    }

    /// A read or write of a caller's buffer, once its offset, length and address are checked.
    fn transfer_buffer(
        &self,
        direction: Direction,
        offset: u64,
        buffer: AlignedBuffer,
    ) -> IoFuture {
        let len = buffer.len();
        if let Err(kind) = self.check(offset, len) {
            return self.refuse(direction, offset, len, kind);
        }
        let address = buffer.as_slice().as_ptr() as u64;
        if !address.is_multiple_of(self.shared.logical_block_size) {
            let kind = IoErrorKind::Misaligned {
                what: "buffer address",
                alignment: self.shared.logical_block_size,
            };
            return self.refuse(direction, offset, len, kind);
        }
        self.submit(direction, offset, buffer)
    }

    /// Tell the policy this process will submit nothing more (it stops idling for it).
    /// Requests already submitted still complete.
    pub fn exit(self) {
        if self.shared.accepting.load(Ordering::Acquire) {
            self.shared.submit(Message::Exit(self.process));
        }
    }

    fn check(&self, offset: u64, len: usize) -> Result<(), IoErrorKind> {
        let alignment = self.shared.logical_block_size.max(SECTOR_SIZE);
        if !offset.is_multiple_of(alignment) {
            return Err(IoErrorKind::Misaligned {
                what: "offset",
                alignment,
            });
        }
        let len = len as u64;
        if len == 0 || u32::try_from(len / SECTOR_SIZE).is_err() {
            return Err(IoErrorKind::BadLength);
        }
        if !len.is_multiple_of(alignment) {
            return Err(IoErrorKind::Misaligned {
                what: "length",
                alignment,
            });
        }
        match offset.checked_add(len) {
            Some(end) if end <= self.shared.capacity => Ok(()),
            _ => Err(IoErrorKind::OutOfRange {
                capacity: self.shared.capacity,
            }),
        }
    }

    fn refuse(&self, direction: Direction, offset: u64, len: usize, kind: IoErrorKind) -> IoFuture {
        let error = refusal(direction, offset, len, kind);
        IoFuture::ready(Err(error), direction, offset, len as u64)
    }

    fn submit(&self, direction: Direction, offset: u64, buffer: AlignedBuffer) -> IoFuture {
        let len = buffer.len() as u64;
        if !self.shared.accepting.load(Ordering::Acquire) {
            let error = refusal(direction, offset, len as usize, self.shared.refusal());
            return IoFuture::ready(Err(error), direction, offset, len);
        }
        let (future, completer) = IoFuture::pair(&self.shared, direction, offset, len);
        let transfer = Transfer {
            direction,
            offset,
            buffer,
            submitted: crate::sync::now(),
        };
        self.send(transfer, completer, true, SHARED_LANE);
        future
    }

    fn send(&self, transfer: Transfer, completer: Completer, flush: bool, lane: usize) {
        let message = Message::Submit(Submission {
            process: self.process,
            group: self.group,
            group_path: Arc::clone(&self.group_path),
            priority: self.priority,
            direction: transfer.direction,
            offset: transfer.offset,
            buffer: transfer.buffer,
            submitted: transfer.submitted,
            completer,
            lane,
        });
        self.shared.submit_as(message, flush);
    }

    /// Read into, or write from, the transfer's buffer (its length is the request's); the
    /// outcome, with the buffer, goes to `queue` under `tag` (a [`Batch`](crate::Batch)'s
    /// path: one queue for all of a thread's requests, no future per request). The
    /// request may stay queued at the backend until [`Client::flush`], so that several go to
    /// the device with one system call: flush before waiting or stopping. `lane` is this
    /// thread's lane of this client's engine, if it opened one ([`Client::open_lane`]).
    pub(crate) fn transfer_to(
        &self,
        transfer: Transfer,
        queue: &Arc<CompletionQueue>,
        tag: u64,
        lane: Option<&Lane>,
    ) {
        let (direction, offset) = (transfer.direction, transfer.offset);
        let len = transfer.buffer.len();
        let address = transfer.buffer.as_slice().as_ptr() as u64;
        let checked = self.check(offset, len).and_then(|()| {
            if address.is_multiple_of(self.shared.logical_block_size) {
                Ok(())
            } else {
                Err(IoErrorKind::Misaligned {
                    what: "buffer address",
                    alignment: self.shared.logical_block_size,
                })
            }
        });
        if let Err(kind) = checked {
            let error = refusal(direction, offset, len, kind);
            return queue.push_ready(tag, Err(error));
        }
        if !self.shared.accepting.load(Ordering::Acquire) {
            let outcome: IoOutcome = Err(refusal(direction, offset, len, self.shared.refusal()));
            return queue.push_ready(tag, outcome);
        }
        let len = len as u64;
        let completer =
            Completer::to_queue(&self.shared.counters, queue, tag, direction, offset, len);
        self.send(
            transfer,
            completer,
            false,
            lane.map_or(SHARED_LANE, Lane::id),
        );
    }

    /// Block until `queue` holds an outcome or `deadline` passes, polling the engine's
    /// backend on this thread if no other thread does. Only for a queue whose requests all
    /// go to this client's engine.
    /// With `lane`, every request the queue waits for was submitted on that lane (this
    /// thread's, of this engine), and the thread blocks on the lane alone.
    pub(crate) fn wait_queue(
        &self,
        queue: &CompletionQueue,
        deadline: Option<Instant>,
        lane: Option<&Lane>,
    ) {
        match lane {
            Some(lane) => self.shared.block_on_lane(queue, deadline, lane),
            None => self.shared.block_on(queue, deadline),
        }
    }

    /// A lane of this client's engine for the calling thread: requests submitted with it
    /// complete on a completion channel that this thread alone waits on, so the kernel wakes
    /// it directly (io_uring: a ring of its own). `None` where the backend has no lanes.
    pub(crate) fn open_lane(&self) -> Option<Lane> {
        self.shared.open_lane()
    }

    /// Give a lane back (requests still in flight on it are reaped by the engine).
    pub(crate) fn close_lane(&self, lane: Lane) {
        self.shared.close_lane(lane);
    }

    /// Hand the device the requests [`Client::transfer_to`] left queued.
    pub(crate) fn flush(&self) {
        self.shared.flush();
    }

    /// The engine's counters (for a [`CompletionQueue`] on several engines).
    pub(crate) fn counters(&self) -> Arc<Counters> {
        Arc::clone(&self.shared.counters)
    }

    /// Whether `other` submits to the same engine.
    pub(crate) fn same_engine(&self, other: &Client) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Make sure some thread polls this client's engine (a waker is registered on a queue
    /// this thread parks on).
    pub(crate) fn ensure_poller(&self) {
        self.shared.ensure_poller();
    }
}

fn refusal(direction: Direction, offset: u64, len: usize, kind: IoErrorKind) -> IoError {
    IoError {
        direction,
        offset,
        len: len as u64,
        kind,
    }
}
