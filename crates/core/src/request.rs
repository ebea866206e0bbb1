//! The request model: what a process asks of the device, and what comes back.

use crate::{GroupId, IoPriority, Nanos};

/// Bytes in a sector: every position and length is counted in 512-byte sectors.
pub const SECTOR_SIZE: u64 = 512;

/// A request's identity, unique within a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// The issuing process; each process has its own queue in the per-process schedulers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProcessId(pub u32);

/// Read, write or discard: the operation a request carries.
///
/// A discard (fio's trim, the kernel's `REQ_OP_DISCARD`) tells the device a range no
/// longer holds data. The kernel gives it the write data direction (`op_is_write` is true
/// of every odd operation, and `REQ_OP_DISCARD` is 3), so the elevators that keep
/// per-direction FIFOs and sort lists (deadline, mq-deadline, anticipatory) put it with
/// the writes: [`Direction::index`] is 1 for it. It is not sync (`op_is_sync` holds only
/// for reads and for operations flagged `REQ_SYNC`/`REQ_FUA`/`REQ_PREFLUSH`, which
/// `blkdev_issue_discard` does not set), so cfq and bfq queue it on the async queues. It
/// never merges with a read or a write (`blk_rq_merge_ok` refuses requests of different
/// operations); [`Request::mergeable_with`] asks for the same direction.
/// Sources: `include/linux/blk_types.h` (`op_is_write`, `op_is_sync`), `block/blk-merge.c`
/// (`blk_rq_merge_ok`, `blk_try_merge`), Linux 6.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// Data from the device.
    Read,
    /// Data to the device.
    Write,
    /// A range the device may forget (trim, `REQ_OP_DISCARD`); carries no data.
    Discard,
}

impl Direction {
    /// The data direction, for per-direction arrays: 0 for a read, 1 for a write and for a
    /// discard (the kernel's `rq_data_dir`, see the type's doc).
    pub fn index(self) -> usize {
        match self {
            Self::Read => 0,
            Self::Write | Self::Discard => 1,
        }
    }

    /// Whether the request moves data to the device or forgets it (the kernel's
    /// `op_is_write`): a write or a discard.
    pub fn is_write(self) -> bool {
        self.index() == 1
    }

    /// The data direction alone (the kernel's `rq_data_dir`): a discard is a write.
    pub fn data(self) -> Direction {
        match self {
            Self::Read => Self::Read,
            Self::Write | Self::Discard => Self::Write,
        }
    }
}

/// One request as the scheduler sees it. Several submitted requests may be merged into
/// one; the ids of those absorbed are kept in `merged` so that each is completed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Identity of the first request; see `merged` for the others this one carries.
    pub id: RequestId,
    /// The issuing process (its queue).
    pub process: ProcessId,
    /// The group the process belongs to.
    pub group: GroupId,
    /// The I/O priority of the issuing process.
    pub priority: IoPriority,
    /// Read, write or discard.
    pub direction: Direction,
    /// Synchronous (reads, O_DIRECT and fsync'd writes) or asynchronous (buffered writeback).
    pub sync: bool,
    /// First sector.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u32,
    /// When the process submitted it.
    pub submit_time: Nanos,
    /// Requests absorbed into this one by merging, each to be completed with it.
    pub merged: Vec<RequestId>,
}

impl Request {
    /// A request from `process` in the root group at the default priority, submitted at
    /// time 0; reads are sync, writes and discards async. Change the other fields with struct update syntax.
    pub fn new(
        id: RequestId,
        process: ProcessId,
        direction: Direction,
        sector: u64,
        sectors: u32,
    ) -> Self {
        Self {
            id,
            process,
            group: GroupId::ROOT,
            priority: IoPriority::default(),
            direction,
            sync: direction == Direction::Read,
            sector,
            sectors,
            submit_time: 0,
            merged: Vec::new(),
        }
    }

    /// The sector just past the end.
    pub fn end_sector(&self) -> u64 {
        self.sector + u64::from(self.sectors)
    }

    /// Length in bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.sectors) * SECTOR_SIZE
    }

    /// Every request id this request completes: its own, then the merged ones.
    pub fn ids(&self) -> impl Iterator<Item = RequestId> + '_ {
        std::iter::once(self.id).chain(self.merged.iter().copied())
    }

    /// Whether both have the same direction, sync-ness, process and priority, so they may merge.
    pub fn mergeable_with(&self, other: &Request) -> bool {
        self.direction == other.direction
            && self.sync == other.sync
            && self.process == other.process
            && self.group == other.group
            && self.priority == other.priority
    }
}

/// A request the device has finished, handed back to the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The request as it was dispatched.
    pub request: Request,
    /// When the policy dispatched it.
    pub dispatch_time: Nanos,
    /// `None` on success, else the errno the device returned.
    pub error: Option<i32>,
}
