//! What happens when a request comes back: the device's bookkeeping of the command, the
//! policy's `complete`, each I/O in the request (and whatever merged into it) counted in its
//! job's statistics and logs, and the process's next move after the host's reaction time.

use ioslice_core::{Completion, Nanos, Request};
use ioslice_fio::logs::LoggedIo;
use ioslice_fio::pattern::IoUnit;
use ioslice_fio::workload::{direction_index, JobClock};

use super::{Event, InService, PendingIo, Simulation};

impl Simulation<'_> {
    pub(super) fn complete_command(&mut self, tag: u64) {
        let Some(InService {
            request,
            dispatch_time,
        }) = self.in_service[tag as usize].take()
        else {
            self.duplicates += 1;
            return;
        };
        self.free_tags.push(tag);
        if let Some(d) = super::disk_slot(request.direction) {
            self.disk.ios[d] += 1;
            self.disk.service_ns[d] += self.now - dispatch_time;
        }
        let error = self.device.take_error(tag);
        self.finish_request(request, dispatch_time, error);
    }

    /// A request the device (or a null engine) is done with: the policy hears of it, then
    /// every I/O in it (and whatever merged into it) completes.
    pub(super) fn finish_request(
        &mut self,
        request: Request,
        dispatch_time: Nanos,
        error: Option<i32>,
    ) {
        let completion = Completion {
            request,
            dispatch_time,
            error,
        };
        self.queue.complete(&completion, self.now);
        for id in completion.request.ids() {
            match error {
                Some(errno) => self.fail_io(id.0, errno),
                None => self.complete_io(id.0),
            }
        }
    }

    /// An I/O of a job that the device failed: the job hears of the error, and the process
    /// reaps it without counting its bytes.
    fn fail_io(&mut self, id: u64, errno: i32) {
        let Some(io) = self.pending.remove(id) else {
            // Writeback and read-ahead requests carry no job's error.
            self.complete_io(id);
            return;
        };
        self.io_failed(&io, errno);
        let zbd = &mut self.processes[io.process as usize].zbd;
        zbd.at_device = zbd.at_device.saturating_sub(1);
        self.completed += 1;
        self.after_completion(io.process);
    }

    pub(super) fn complete_io(&mut self, id: u64) {
        if let Some(io) = self.writeback.remove(id) {
            self.writeback_done(io);
            return;
        }
        if let Some(io) = self.readahead_ios.remove(id) {
            self.readahead_done(io);
            return;
        }
        let Some(io) = self.pending.remove(id) else {
            self.duplicates += 1;
            return;
        };
        self.completed += 1;
        let process = &mut self.processes[io.process as usize];
        process.zbd.at_device = process.zbd.at_device.saturating_sub(1);
        let null_engine = process.null_engine;
        if !io.buffered && !null_engine {
            self.disk.in_queue_ns += u128::from(self.now - io.submit_time);
        }
        let process = &mut self.processes[io.process as usize];
        let clock = process
            .clock
            .as_mut()
            .expect("a process with I/O has started");
        clock.on_io_done(self.now, io.direction, io.bytes, self.now - io.submit_time);
        let ramp_end = clock.ramp_end();
        if self.now >= ramp_end {
            let d = direction_index(io.direction);
            let (clat, since_start) = (self.now - io.submit_time, self.now - ramp_end);
            let direction = &mut process.stats.directions[d];
            self.statistics
                .record(direction, io.bytes, clat, since_start);
            if let Some(logs) = &mut process.logs {
                let (bytes, offset) = (io.bytes, io.offset);
                logs.record(&LoggedIo {
                    direction: d,
                    bytes,
                    offset,
                    slat: 0,
                    clat,
                    since_start,
                });
            }
        }
        self.after_completion(io.process);
    }

    /// An I/O that never reaches the elevator or the device (a zone reset done for a trim,
    /// a `cpuio` cycle): counted as issued now, done `after` nanoseconds with `bytes`.
    pub(super) fn complete_off_device(
        &mut self,
        index: u32,
        unit: IoUnit,
        bytes: u64,
        after: Nanos,
    ) {
        self.processes[index as usize].zbd.at_device += 1;
        // Not the device's: no time in its queue.
        let id = self.open_io(index, &unit, bytes, true);
        self.push_event(self.now + after, Event::Buffered(id));
    }

    /// An I/O of process `index` begins now: it takes the next request id, counts as
    /// issued at the process's depth, and waits in `pending` for its completion (`buffered`:
    /// one the device's queue never holds). Returns its id.
    #[inline(always)]
    pub(super) fn open_io(&mut self, index: u32, unit: &IoUnit, bytes: u64, buffered: bool) -> u64 {
        let id = self.next_request_id;
        self.next_request_id += 1;
        let process = &mut self.processes[index as usize];
        let in_flight = process.clock.as_ref().map_or(1, JobClock::in_flight);
        let depth = if process.reaps_in_batches {
            let spec = &self.job_file.jobs[process.spec_index];
            spec.reported_depth(in_flight, || process.stats.issued.iter().sum())
        } else {
            in_flight
        };
        process.stats.record_depth(depth);
        process.stats.issued[direction_index(unit.direction)] += 1;
        self.pending.insert(
            id,
            PendingIo {
                process: index,
                direction: unit.direction,
                bytes,
                offset: unit.offset,
                submit_time: self.now,
                buffered,
            },
        );
        self.submitted += 1;
        id
    }

    /// The process reaps a completion after the host's latency (or its null engine's).
    fn after_completion(&mut self, process: u32) {
        if self.processes[process as usize].null_engine {
            self.schedule_null_reap(process);
        } else if self.host_latency == 0 {
            self.reap(process);
        } else {
            // Completions come in time order and the host latency is fixed: reaps fall due
            // in the order they are scheduled.
            self.events
                .push_in_order(self.now + self.host_latency, Event::Reap(process));
        }
    }

    /// The process of a completed request reacts: one fewer in flight, maybe think, issue more.
    pub(super) fn reap(&mut self, index: u32) {
        let process = &mut self.processes[index as usize];
        let clock = process
            .clock
            .as_mut()
            .expect("a process with I/O has started");
        clock.on_complete(self.now);
        self.zbd_release(index);
        self.pump_job(index);
    }
}
