//! AS's two classes of request, sync and async: each has its own sort list, FIFO and expire
//! time, and batches alternate between them (Linux's `block/as-iosched.c`).

use crate::{Direction, Request};

/// AS's two classes of request. Reads and sync writes (O_DIRECT, O_SYNC, fsync) are sync;
/// buffered writeback is async. Batches alternate between the classes, not directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Class {
    /// Reads and sync writes.
    Sync,
    /// Async writes.
    Async,
}

impl Class {
    /// The class of a request: every read is sync, a write is sync if flagged so.
    pub fn of(request: &Request) -> Self {
        if request.direction == Direction::Read || request.sync {
            Class::Sync
        } else {
            Class::Async
        }
    }

    /// 0 (sync) or 1 (async), for per-class arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}
