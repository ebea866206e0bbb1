//! The simulated host's memory between the jobs and the elevator: buffered reads served
//! from the page cache or from read-ahead windows, and buffered writes that dirty the page
//! cache until the writeback flusher turns them into async writes.

use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::{Direction, Request, RequestId};
use ioslice_fio::pattern::IoUnit;

use super::{Event, Lifecycle, ReadaheadIo, Simulation, ThrottledWrite, WritebackIo, FLUSHER};
use crate::readahead::ReadPlan;

impl Simulation<'_> {
    /// A buffered read: from memory, from a read-ahead window in flight, or from the device.
    pub(super) fn buffered_read(&mut self, index: u32, unit: &IoUnit, request: Request) {
        let process = &mut self.processes[index as usize];
        let size = process.file_sizes[unit.file];
        let plan = process.readahead[unit.file].read(
            unit.offset,
            unit.offset + unit.length,
            size,
            self.read_ahead_bytes,
        );
        match plan {
            ReadPlan::Random => self.insert(request),
            ReadPlan::Hit { issue } => {
                self.readahead_counts.hits += 1;
                self.issue_windows(index, unit.file, &issue, &request);
                self.push_event(self.now, Event::Buffered(request.id.0));
            }
            ReadPlan::Wait { issue, window_end } => {
                self.issue_windows(index, unit.file, &issue, &request);
                let key = (index, unit.file, window_end);
                let window = self.readahead_windows.get(&key).copied();
                match window.and_then(|id| self.readahead_ios.get_mut(id)) {
                    Some(io) => io.waiters.push(request.id.0),
                    None => self.insert(request),
                }
            }
        }
    }

    /// Read the windows read-ahead asked for, as sync reads of the reading process.
    pub(super) fn issue_windows(
        &mut self,
        index: u32,
        file: usize,
        windows: &[(u64, u64)],
        like: &Request,
    ) {
        let base = self.processes[index as usize].file_sectors[file];
        for &(start, end) in windows {
            let id = self.next_request_id;
            self.next_request_id += 1;
            let first = base + start / SECTOR_SIZE;
            let request = Request {
                id: RequestId(id),
                sector: first,
                sectors: u32::try_from((base + end.div_ceil(SECTOR_SIZE)) - first)
                    .unwrap_or(u32::MAX),
                submit_time: self.now,
                merged: Vec::new(),
                ..like.clone()
            };
            self.readahead_ios.insert(
                id,
                ReadaheadIo {
                    process: index,
                    file,
                    start,
                    end,
                    submit_time: self.now,
                    waiters: Vec::new(),
                },
            );
            self.readahead_windows.insert((index, file, end), id);
            self.readahead_counts.submitted += 1;
            self.insert(request);
        }
    }

    /// A read-ahead window is in memory: the reads waiting for it are done.
    pub(super) fn readahead_done(&mut self, io: ReadaheadIo) {
        self.readahead_counts.completed += 1;
        self.disk.in_queue_ns += u128::from(self.now - io.submit_time);
        self.readahead_windows
            .remove(&(io.process, io.file, io.end));
        self.processes[io.process as usize].readahead[io.file].window_done(io.start, io.end);
        for id in io.waiters {
            self.complete_io(id);
        }
    }

    /// A buffered write goes to the page cache: done once copied, unless the dirty limit
    /// makes its writer wait for writeback.
    pub(super) fn buffered_write(&mut self, request: Request) {
        let write = ThrottledWrite {
            id: request.id.0,
            start: request.sector,
            end: request.end_sector(),
        };
        if self.cache.throttled() || !self.throttled.is_empty() {
            self.throttled.push_back(write);
        } else {
            self.cache.write(write.start, write.end);
            self.push_event(self.now, Event::Buffered(write.id));
        }
        self.pump_flusher();
    }

    /// Let the flusher issue the writeback it wants to now.
    pub(super) fn pump_flusher(&mut self) {
        while let Some((start, end)) = self.cache.next_writeback(!self.throttled.is_empty()) {
            let id = self.next_request_id;
            self.next_request_id += 1;
            let request = Request {
                submit_time: self.now,
                ..Request::new(
                    RequestId(id),
                    FLUSHER,
                    Direction::Write,
                    start,
                    u32::try_from(end - start).unwrap_or(u32::MAX),
                )
            };
            self.writeback.insert(
                id,
                WritebackIo {
                    sectors: end - start,
                    submit_time: self.now,
                },
            );
            self.writeback_counts.submitted += 1;
            self.insert(request);
        }
    }

    /// A flusher write completed: its memory is clean, and throttled writers may go on.
    pub(super) fn writeback_done(&mut self, io: WritebackIo) {
        self.writeback_counts.completed += 1;
        self.disk.in_queue_ns += u128::from(self.now - io.submit_time);
        self.cache.written(io.sectors);
        while !self.cache.throttled() {
            let Some(write) = self.throttled.pop_front() else {
                break;
            };
            self.cache.write(write.start, write.end);
            self.push_event(self.now, Event::Buffered(write.id));
        }
        self.pump_flusher();
    }

    /// Once every job is done, the flusher writes back whatever is still dirty.
    pub(super) fn maybe_drain_cache(&mut self) {
        if self
            .processes
            .iter()
            .all(|p| p.lifecycle == Lifecycle::Done)
        {
            self.cache.drain();
            self.pump_flusher();
        }
    }
}
