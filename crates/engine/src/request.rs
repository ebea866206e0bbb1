//! A request between a client and the engine's core: a read or write as a client asks for
//! it ([`Transfer`]), what a client hands over ([`Message`]) and the request as the core keeps it until it completes ([`Submission`]).
//!
//! Made on a client's thread (`handle`), kept under the engine's lock by whichever thread runs
//! a turn (`dispatcher`).

use std::sync::Arc;
use std::time::Instant;

use ioslice_core::{Direction, GroupId, IoPriority, ProcessId};

use crate::buffer::AlignedBuffer;
use crate::completion::Completer;

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

/// One read or write as a client asks for it: into or from `buffer` (its length is the
/// request's), at `offset`, asked for at `submitted` (the client may have read the clock
/// already, for its own accounting).
#[derive(Debug)]
pub(crate) struct Transfer {
    pub direction: Direction,
    pub offset: u64,
    pub buffer: AlignedBuffer,
    pub submitted: Instant,
}
