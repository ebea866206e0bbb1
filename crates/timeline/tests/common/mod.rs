//! What the timeline's tests share: requests and their dispatch and completion events.

use ioslice_core::trace::{RequestInfo, TraceEvent};
use ioslice_core::{Direction, GroupId, IoPriority, Nanos, ProcessId, RequestId};

/// A millisecond.
pub const MS: Nanos = 1_000_000;

/// Request `id` of `process`: a sync 4 KiB read at sector `id * 8`.
pub fn request(id: u64, process: u32) -> RequestInfo {
    RequestInfo {
        id: RequestId(id),
        process: ProcessId(process),
        group: GroupId::ROOT,
        priority: IoPriority::default(),
        direction: Direction::Read,
        sync: true,
        sector: id * 8,
        sectors: 8,
    }
}

/// Request `id` of `process` goes to the device.
pub fn dispatch(id: u64, process: u32) -> TraceEvent {
    TraceEvent::Dispatch {
        request: request(id, process),
        merged: 0,
    }
}

/// Request `id` of `process` completes.
pub fn complete(id: u64, process: u32) -> TraceEvent {
    TraceEvent::Complete {
        request: request(id, process),
        merged: 0,
        latency: 0,
        service: 0,
        error: None,
    }
}
