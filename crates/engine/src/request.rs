//! A request between a client and the engine's core: a read or write as a client asks for
//! it ([`Transfer`], public through [`crate::batch`]), what a client hands over ([`Message`])
//! and the request as the core keeps it until it completes ([`Submission`]).
//!
//! Made on a client's thread (`handle`), kept under the engine's lock by whichever thread runs
//! a turn (`dispatcher`).

use std::sync::Arc;
use std::time::Instant;

use ioslice_core::{Direction, GroupId, IoPriority, ProcessId};

use crate::buffer::AlignedBuffer;
use crate::completion::Completer;
use crate::stats::Sample;

/// A request on its way into the policy.
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
    /// The backend lane it completes on (see [`Client::open_lane`]).
    ///
    /// [`Client::open_lane`]: crate::handle::Client::open_lane
    pub lane: usize,
}

/// What clients hand the engine.
#[derive(Debug)]
pub(crate) enum Message {
    /// A read or write.
    Submit(Submission),
    /// A process will submit nothing more.
    Exit(ProcessId),
}

/// One read or write for [`Batch::submit`](crate::Batch::submit): into or from `buffer`
/// (its length is the request's) at byte `offset`. Its latency
/// ([`IoResult::latency`](crate::IoResult)) counts from `submitted`, which may be earlier
/// than the submission itself, when the caller read the clock before preparing the buffer.
#[derive(Debug)]
pub struct Transfer {
    /// Read, write or discard.
    pub direction: Direction,
    /// Byte offset, aligned to [`Handle::logical_block_size`](crate::Handle::logical_block_size).
    pub offset: u64,
    /// Where a read lands, or what a write writes; it comes back with the outcome.
    pub buffer: AlignedBuffer,
    /// When the request was asked for.
    pub submitted: Instant,
}

impl Transfer {
    /// A read into `buffer` at `offset`, asked for now.
    pub fn read(offset: u64, buffer: AlignedBuffer) -> Self {
        Self::now(Direction::Read, offset, buffer)
    }

    /// A write of `buffer` at `offset`, asked for now.
    pub fn write(offset: u64, buffer: AlignedBuffer) -> Self {
        Self::now(Direction::Write, offset, buffer)
    }

    fn now(direction: Direction, offset: u64, buffer: AlignedBuffer) -> Self {
        Self {
            direction,
            offset,
            buffer,
            submitted: crate::sync::now(),
        }
    }
}

impl Submission {
    /// The statistics' record of this request's `bytes`, done (`ok`) or failed after
    /// `latency`.
    pub(crate) fn sample(&self, bytes: usize, ok: bool, latency: std::time::Duration) -> Sample {
        Sample {
            group: Arc::clone(&self.group_path),
            group_index: self.group.0,
            process: self.process.0,
            direction: self.direction,
            bytes: bytes as u64,
            ok,
            latency,
        }
    }
}
