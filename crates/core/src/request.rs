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

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    /// Data from the device.
    Read,
    /// Data to the device.
    Write,
}

impl Direction {
    /// Index 0 (read) or 1 (write), for per-direction arrays.
    pub fn index(self) -> usize {
        self as usize
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
    /// Read or write.
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
    /// time 0; reads are sync, writes async. Change the other fields with struct update syntax.
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
