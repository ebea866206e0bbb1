//! fio's `null` engine in simulation: a job with `ioengine=null` moves no data. Its requests
//! still pass the policy (inserted, dispatched and completed, so the elevator's and the
//! controller's accounting see them) but never reach the device model, the page cache or the
//! disk's statistics: each completes the instant the policy dispatches it, with no device
//! time, and takes no device slot.
//!
//! What bounds such a job is fio's own per-request CPU time, which the simulation charges as
//! [`NULL_IO_COST`] on the job's one thread: a request's completion is reaped that long after
//! the job's previous one, so the job issues at most one request per `NULL_IO_COST` whatever
//! its `iodepth` (which still bounds how many it keeps in flight), and a `time_based` null
//! job reaches its end in virtual time. fio's engine (fio 3.33, `engines/null.c`) likewise
//! completes each request in its queue call or at the next `getevents`, touching nothing.

use ioslice_core::{Nanos, Request};

use super::{Event, Simulation};

/// fio's own CPU time per request with the null engine: fio 3.33 on the development machine
/// ran `fio --name=n --ioengine=null --size=1g --rw=randread` at 9362k IOPS (1 GiB in
/// 28 ms), 107 ns a request, of which the engine itself is a few.
pub(super) const NULL_IO_COST: Nanos = 107;

impl Simulation<'_> {
    /// Whether `request` is a null-engine job's: then it completes at dispatch.
    pub(super) fn is_null_io(&self, request: &Request) -> bool {
        !self.null_processes.is_empty() && self.null_processes.contains(&request.process)
    }

    /// Complete a null-engine request the instant the policy dispatched it, without the
    /// device (and whatever merged into it with it).
    pub(super) fn complete_null(&mut self, request: Request) {
        self.finish_request(request, self.now, None);
    }

    /// Reap a null-engine job's completion [`NULL_IO_COST`] after its thread is free, which
    /// it then is no longer until that moment.
    pub(super) fn schedule_null_reap(&mut self, index: u32) {
        let process = &mut self.processes[index as usize];
        let at = process.cpu_free_at.max(self.now) + NULL_IO_COST;
        process.cpu_free_at = at;
        self.push_event(at, Event::Reap(index));
    }
}
