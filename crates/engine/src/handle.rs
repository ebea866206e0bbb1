//! The client side: a cheap cloneable [`Handle`] onto a running engine, and the per-process
//! [`Client`]s made from it that submit reads and writes.
//!
//! A client checks a request against the device's geometry before anything else (offset,
//! length and buffer address aligned to 512-byte sectors and the logical block size, range
//! inside the device), so a request the device would refuse never reaches it. An accepted
//! request travels to the dispatcher through a bounded channel; when the channel is full the
//! submitting thread blocks until the dispatcher takes requests out (push-back: the queue
//! does not grow without bound). The client then wakes the dispatcher with the backend's
//! [`Notifier`].

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::time::Instant;

use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::{Direction, GroupId, GroupTree, IoPriority, ProcessId};

use crate::backend::Notifier;
use crate::buffer::AlignedBuffer;
use crate::completion::{Completer, IoErrorKind, IoFuture};
use crate::engine::EngineError;
use crate::stats::{Recorder, Snapshot};

/// A request on its way to the dispatcher.
#[derive(Debug)]
pub(crate) struct Submission {
    pub process: ProcessId,
    pub group: GroupId,
    pub group_path: Arc<str>,
    pub priority: IoPriority,
    pub direction: Direction,
    pub offset: u64,
    pub buffer: AlignedBuffer,
    pub submitted: Instant,
    pub completer: Completer,
}

/// What clients send the dispatcher.
#[derive(Debug)]
pub(crate) enum Message {
    /// A read or write.
    Submit(Submission),
    /// A process will submit nothing more.
    Exit(ProcessId),
}

/// What every handle and client of one engine share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub sender: SyncSender<Message>,
    pub notifier: Notifier,
    pub accepting: AtomicBool,
    pub groups: GroupTree,
    pub logical_block_size: u64,
    pub capacity: u64,
    pub recorder: Arc<Recorder>,
    /// The dispatcher is about to block, or blocked, in the backend's wait: a submission must
    /// wake it. While it is awake it drains the channel before it next sleeps, so clients
    /// skip the wake-up (a system call) then.
    pub dispatcher_asleep: Arc<AtomicBool>,
}

impl Shared {
    /// Send a message, blocking while the submission queue is full, then wake the
    /// dispatcher. A message the dispatcher can no longer take is dropped, which fails its
    /// request with a shutdown error.
    fn send(&self, message: Message) {
        if self.sender.send(message).is_ok() {
            // Pairs with the dispatcher's fence between announcing sleep and looking at the
            // channel: either it sees this message, or this sees it asleep and wakes it.
            fence(Ordering::SeqCst);
            if self.dispatcher_asleep.swap(false, Ordering::SeqCst) {
                self.notifier.notify();
            }
        }
    }
}

/// A cheap, cloneable reference to a running [`Engine`](crate::Engine), usable from any thread.
#[derive(Debug, Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    /// A client for `process` (its queue in the policy) in the group at path `group` (`""`
    /// or `"/"` for the root), submitting at `priority`. The group must have been declared
    /// on the builder; it is resolved once, here.
    pub fn client(
        &self,
        process: u32,
        group: &str,
        priority: IoPriority,
    ) -> Result<Client, EngineError> {
        let shared = &self.shared;
        let id = shared
            .groups
            .find(group)
            .ok_or_else(|| EngineError::UnknownGroup {
                group: group.to_string(),
                known: known_groups(&shared.groups),
            })?;
        Ok(Client {
            shared: Arc::clone(shared),
            process: ProcessId(process),
            group: id,
            group_path: Arc::from(group_label(&shared.groups, id)),
            priority,
        })
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
}

/// How a group is named in statistics: its path, `/` for the root.
pub(crate) fn group_label(groups: &GroupTree, id: GroupId) -> String {
    let path = &groups.get(id).path;
    if path.is_empty() {
        "/".to_string()
    } else {
        path.clone()
    }
}

fn known_groups(groups: &GroupTree) -> String {
    groups
        .iter()
        .map(|(id, _)| group_label(groups, id))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Submits I/O for one process, in one group, at one priority. Cloneable; every clone is
/// the same process to the policy.
#[derive(Debug, Clone)]
pub struct Client {
    shared: Arc<Shared>,
    process: ProcessId,
    group: GroupId,
    group_path: Arc<str>,
    priority: IoPriority,
}

impl Client {
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

    /// Write `buffer` at byte `offset`; the buffer comes back in the
    /// [`IoResult`](crate::IoResult). Blocks while the submission queue is full.
    pub fn write(&self, offset: u64, buffer: AlignedBuffer) -> IoFuture {
        let len = buffer.len();
        if let Err(kind) = self.check(offset, len) {
            return self.refuse(Direction::Write, offset, len, kind);
        }
        let address = buffer.as_slice().as_ptr() as u64;
        if !address.is_multiple_of(self.shared.logical_block_size) {
            let kind = IoErrorKind::Misaligned {
                what: "buffer address",
                alignment: self.shared.logical_block_size,
            };
            return self.refuse(Direction::Write, offset, len, kind);
        }
        self.submit(Direction::Write, offset, buffer)
    }

    /// Tell the policy this process will submit nothing more (it stops idling for it).
    /// Requests already submitted still complete.
    pub fn exit(self) {
        if self.shared.accepting.load(Ordering::Acquire) {
            self.shared.send(Message::Exit(self.process));
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
        let error = crate::IoError {
            direction,
            offset,
            len: len as u64,
            kind,
        };
        IoFuture::ready(Err(error), direction, offset, len as u64)
    }

    fn submit(&self, direction: Direction, offset: u64, buffer: AlignedBuffer) -> IoFuture {
        let len = buffer.len() as u64;
        if !self.shared.accepting.load(Ordering::Acquire) {
            let error = crate::IoError {
                direction,
                offset,
                len,
                kind: IoErrorKind::ShutDown,
            };
            return IoFuture::ready(Err(error), direction, offset, len);
        }
        let (future, completer) = IoFuture::pair(
            direction,
            offset,
            len,
            Arc::clone(&self.shared.recorder.cancelled),
        );
        self.shared.send(Message::Submit(Submission {
            process: self.process,
            group: self.group,
            group_path: Arc::clone(&self.group_path),
            priority: self.priority,
            direction,
            offset,
            buffer,
            submitted: Instant::now(),
            completer,
        }));
        future
    }
}
