//! The FUSE filesystem: a directory holding one file, `disk`, as large as the emulated disk.
//!
//! The file is opened for direct I/O (`FOPEN_DIRECT_IO`), so reads and writes reach the
//! emulator whole and unbuffered, and asynchronous direct I/O (`FUSE_ASYNC_DIO`) lets the
//! loop device above it keep many in flight. Requests of up to 1 MiB arrive as one (256
//! pages). A read is served from the store and a write goes to it as the request arrives;
//! the reply waits for the disk thread, which sends it when the model completes the
//! command. A request the store fails is answered with `EIO` at once. The fault plan is
//! decided here, as each request arrives (a failed write leaves the store as it was, a torn
//! one writes its prefix); the disk thread answers as it says.
//!
//! Touched by the FUSE session thread.

use std::ffi::OsStr;
use std::io;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, WriteFlags,
};
use ioslice_core::Direction;

use crate::disk::{Answer, Arrival, Buffers, Message, ReadAnswer, WriteAnswer};
use crate::fault::{CommandInfo, Fate, FaultCounts, Faults, Verdict};
use crate::store::Store;
use crate::transport::Transport;

/// The file's name in the mounted directory.
pub const DISK_FILE: &str = "disk";
/// The disk file's inode (the root directory is 1).
const DISK_INODE: INodeNo = INodeNo(2);
/// Largest request the kernel sends at once.
pub(crate) const MAX_REQUEST: u32 = 1 << 20;
/// How long the kernel may cache attributes: they never change.
const TTL: Duration = Duration::from_secs(3600);

/// What the filesystem shares with the emulator.
pub(crate) struct Parts {
    pub store: Store,
    pub capacity: u64,
    pub requests: Sender<Message>,
    /// Most asynchronous requests the kernel keeps outstanding at the emulator.
    pub max_background: u16,
    pub owner: (u32, u32),
    /// Taken out of each request's arrival time (see [`crate::transport`]).
    pub transport: Transport,
    pub buffers: Arc<Buffers>,
    /// The fault plan's state, if there is a plan.
    pub faults: Option<Mutex<Faults>>,
    /// What the faults injected.
    pub fault_counts: Arc<FaultCounts>,
    /// The emulator's start: fault times count from it.
    pub started: Instant,
}

/// The emulator's filesystem.
pub(crate) struct DiskFilesystem {
    parts: Parts,
}

impl DiskFilesystem {
    pub(crate) fn new(parts: Parts) -> Self {
        Self { parts }
    }

    fn attr(&self, inode: INodeNo) -> Option<FileAttr> {
        let (kind, size, perm, nlink) = match inode {
            INodeNo::ROOT => (FileType::Directory, 0, 0o755, 2),
            DISK_INODE => (FileType::RegularFile, self.parts.capacity, 0o644, 1),
            _ => return None,
        };
        Some(FileAttr {
            ino: inode,
            size,
            blocks: size.div_ceil(512),
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink,
            uid: self.parts.owner.0,
            gid: self.parts.owner.1,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// The faults of a request arriving now.
    fn decide(&self, direction: Direction, offset: u64, len: u64) -> Verdict {
        let Some(faults) = &self.parts.faults else {
            return Verdict::CLEAN;
        };
        let command = CommandInfo {
            direction,
            sector: offset / 512,
            sectors: u32::try_from(len.div_ceil(512).max(1)).unwrap_or(u32::MAX),
        };
        let now = u64::try_from(self.parts.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut faults = faults.lock().unwrap_or_else(PoisonError::into_inner);
        faults.decide(command, now, &self.parts.fault_counts)
    }

    /// Time the request on the emulated disk; its answer goes out when the model completes
    /// it (an error if `verdict` fails it). If the disk thread has stopped, the request fails.
    fn time(
        &self,
        direction: Direction,
        (offset, len): (u64, u64),
        answer: Box<dyn Answer>,
        verdict: Verdict,
    ) {
        let now = Instant::now();
        let arrival = Arrival {
            direction,
            offset,
            len,
            answer,
            arrived: now.checked_sub(self.parts.transport.of(len)).unwrap_or(now),
            verdict,
        };
        if let Err(returned) = self.parts.requests.send(Message::Request(arrival)) {
            if let Message::Request(arrival) = returned.0 {
                arrival.answer.fail();
            }
        }
    }
}

impl Filesystem for DiskFilesystem {
    fn init(&mut self, _request: &Request, config: &mut KernelConfig) -> io::Result<()> {
        // Where the kernel lacks asynchronous direct I/O, requests come one at a time.
        let _ = config.add_capabilities(InitFlags::FUSE_ASYNC_DIO);
        let _ = config.set_max_write(MAX_REQUEST);
        let _ = config.set_max_readahead(MAX_REQUEST);
        let _ = config.set_max_background(self.parts.max_background);
        Ok(())
    }

    fn lookup(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.attr(DISK_INODE) {
            Some(attr) if parent == INodeNo::ROOT && name == DISK_FILE => {
                reply.entry(&TTL, &attr, fuser::Generation(0));
            }
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(
        &self,
        _request: &Request,
        inode: INodeNo,
        _fh: Option<FileHandle>,
        reply: ReplyAttr,
    ) {
        match self.attr(inode) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _request: &Request, inode: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if inode == DISK_INODE {
            reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
        } else {
            reply.error(Errno::EISDIR);
        }
    }

    fn read(
        &self,
        _request: &Request,
        inode: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if inode != DISK_INODE {
            return reply.error(Errno::EISDIR);
        }
        let mut data = self.parts.buffers.take(size as usize);
        match self.parts.store.read(offset, &mut data) {
            Ok(0) => reply.data(&[]),
            Ok(read) => {
                data.truncate(read);
                let verdict = self.decide(Direction::Read, offset, read as u64);
                let answer = Box::new(ReadAnswer(reply, data));
                self.time(Direction::Read, (offset, read as u64), answer, verdict);
            }
            Err(_) => reply.error(Errno::EIO),
        }
    }

    fn write(
        &self,
        _request: &Request,
        inode: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if inode != DISK_INODE {
            return reply.error(Errno::EISDIR);
        }
        let len = data
            .len()
            .min(usize::try_from(self.parts.capacity.saturating_sub(offset)).unwrap_or(usize::MAX));
        if len == 0 {
            // Nothing of it lies on the disk: the device's end.
            return reply.error(Errno::ENOSPC);
        }
        let verdict = self.decide(Direction::Write, offset, len as u64);
        let reaching = match verdict.fate {
            Fate::Served => len,
            Fate::Failed => 0,
            Fate::Torn { keep } => len.min(keep as usize * 512),
        };
        let stored = reaching == 0
            || matches!(self.parts.store.write(offset, &data[..reaching]), Ok(n) if n > 0);
        if !stored {
            return reply.error(Errno::EIO);
        }
        let len32 = u32::try_from(len).unwrap_or(u32::MAX);
        self.time(
            Direction::Write,
            (offset, len as u64),
            Box::new(WriteAnswer(reply, len32)),
            verdict,
        );
    }

    fn flush(
        &self,
        _request: &Request,
        _inode: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _request: &Request,
        _inode: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.parts.store.sync() {
            Ok(()) => reply.ok(),
            Err(_) => reply.error(Errno::EIO),
        }
    }

    fn readdir(
        &self,
        _request: &Request,
        inode: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if inode != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (DISK_INODE, FileType::RegularFile, DISK_FILE),
        ];
        for (index, (inode, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(inode, index as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
