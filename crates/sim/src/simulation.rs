//! The discrete-event driver: job processes, one policy and one device model in virtual time.
//!
//! Each job (each `numjobs` clone) is a process with its own queue. The driver asks the
//! policy for a request whenever the device has a free slot, and again when a
//! `WaitUntil` comes due. Time starts at a seed-derived instant within the first second,
//! which sets the disk's rotational position at the start; everything reported is relative
//! to that start. All randomness comes from the seed, so a run is reproducible to the byte.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::{
    build_scheduler, Completion, Direction, Dispatch, GroupId, GroupTree, Inserted, IoPriority,
    Nanos, ProcessId, Request, RequestId, SchedSpec, Scheduler, SchedulerContext, TunableError,
};
use ioslice_fio::jobfile::check_supported;
use ioslice_fio::pattern::{plan_files, DataDirection, IoPattern, IoUnit};
use ioslice_fio::workload::{direction_index, JobClock, Step};
use ioslice_fio::{
    CgroupSettings, DiskUtil, JobDescription, JobFile, JobReport, JobStats, RunReport,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::device::driver_queue::DriverQueue;
use crate::device::{Command, DeviceModel};
use crate::host::DirectWrites;
use crate::id_hash::IdMap;
use crate::layout::{Layout, LayoutError};
use crate::page_cache::{PageCache, PageCacheConfig};
use crate::preset::{build as build_device, DeviceError, DeviceSpec};
use crate::readahead::{FileReadahead, ReadPlan};

/// What a simulation runs with.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The run's seed: job random streams and the disk's starting rotational position.
    pub seed: u64,
    /// The policy and its tunables.
    pub scheduler: SchedSpec,
    /// The device preset and its overrides.
    pub device: DeviceSpec,
    /// Group weights given outside the job file (`--cgroup NAME:weight=N`), applied after it.
    pub group_weights: Vec<(String, u32)>,
    /// Group limits (`--cgroup NAME:rbps=…`, cgroup v2 `io.max`), applied after the weights;
    /// a later entry for the same group replaces an earlier one.
    pub group_limits: Vec<(String, ioslice_core::limit::Limits)>,
    /// Time from a request's completion at the device to its process reacting (waking up,
    /// returning to user space, issuing its next request). During it the policy already
    /// sees the device free and may dispatch another process's request: the "deceptive
    /// idleness" that anticipation and idling exist to defeat.
    pub host_latency: Nanos,
    /// Memory and writeback parameters for buffered writes.
    pub page_cache: PageCacheConfig,
    /// How O_DIRECT writes reach the elevator.
    pub direct_writes: DirectWrites,
    /// Commands the host's driver takes before the device's own queue, first come first
    /// served (the loop device's 128 tags over `ioslice emulate`); the elevator sees this
    /// depth. 0, or no more than the device's own depth: none, the elevator sees the
    /// device's.
    pub driver_queue: usize,
}

impl SimConfig {
    /// The default host latency: 20 µs, a wake-up and two system calls on a
    /// mid-2000s to present-day machine.
    pub const DEFAULT_HOST_LATENCY: Nanos = 20_000;

    /// A configuration with no extra groups and the default host latency.
    pub fn new(seed: u64, scheduler: SchedSpec, device: DeviceSpec) -> Self {
        Self {
            seed,
            scheduler,
            device,
            group_weights: Vec::new(),
            group_limits: Vec::new(),
            host_latency: Self::DEFAULT_HOST_LATENCY,
            page_cache: PageCacheConfig::default(),
            direct_writes: DirectWrites::Sync,
            driver_queue: 0,
        }
    }
}

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Bad scheduler name or tunable.
    #[error("{0}")]
    Scheduler(#[from] TunableError),
    /// Bad device preset or parameter.
    #[error("{0}")]
    Device(#[from] DeviceError),
    /// A job that cannot be run as written.
    #[error("{0}")]
    Job(String),
    /// Files that do not fit on the device.
    #[error("{0}")]
    Layout(#[from] LayoutError),
}

/// A finished simulation: the report, and the accounting that proves nothing was lost.
#[derive(Debug, Clone)]
pub struct SimOutcome {
    /// What fio would print.
    pub report: RunReport,
    /// Requests the jobs submitted.
    pub submitted: u64,
    /// Requests that completed (each id once).
    pub completed: u64,
    /// Completions of an id that had already completed or was never submitted (must be 0).
    pub duplicate_completions: u64,
    /// Virtual time the run took.
    pub elapsed: Nanos,
    /// The writeback flusher's accounting.
    pub writeback: WritebackCounts,
    /// Read-ahead's accounting.
    pub readahead: ReadaheadCounts,
}

/// What read-ahead did: every window it read completed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadaheadCounts {
    /// Read-ahead windows read from the device.
    pub submitted: u64,
    /// Of those, completed.
    pub completed: u64,
    /// Buffered reads served from memory without waiting.
    pub hits: u64,
}

/// What the writeback flusher did: every dirtied byte is written back by the end of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WritebackCounts {
    /// Async write requests the flusher submitted.
    pub submitted: u64,
    /// Of those, completed.
    pub completed: u64,
    /// Bytes buffered writes newly dirtied.
    pub bytes_dirtied: u64,
    /// Bytes the flusher wrote back.
    pub bytes_written: u64,
}

/// The writeback flusher's process: the jobs are processes 1, 2, …
const FLUSHER: ProcessId = ProcessId(0);

/// Run a job file in simulation.
pub fn run(job_file: &JobFile, config: &SimConfig) -> Result<SimOutcome, SimError> {
    let mut sim = Simulation::new(job_file, config)?;
    sim.run();
    Ok(sim.finish(config))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    Waiting,
    Running,
    Done,
}

struct Process {
    spec_index: usize,
    pid: ProcessId,
    group: GroupId,
    priority: IoPriority,
    phase: usize,
    /// Sync writes: O_DIRECT or O_SYNC. Buffered writes are async writeback.
    sync_writes: bool,
    /// Reads go through the page cache (not O_DIRECT): sequential ones get read-ahead.
    buffered_reads: bool,
    /// O_DIRECT writes reach the elevator as async requests (2004 kernels).
    direct_writes_async: bool,
    file_sectors: Vec<u64>,
    file_sizes: Vec<u64>,
    readahead: Vec<FileReadahead>,
    pattern: Option<IoPattern>,
    clock: Option<JobClock>,
    rng: ChaCha8Rng,
    stats: JobStats,
    lifecycle: Lifecycle,
    wake_at: Option<Nanos>,
    end: Nanos,
    groupid: u32,
}

struct PendingIo {
    process: u32,
    direction: DataDirection,
    bytes: u64,
    submit_time: Nanos,
    /// A buffered write, done by the page cache rather than the device.
    buffered: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Start(u32),
    Wake(u32),
    /// A process learns that one of its requests completed.
    Reap(u32),
    /// A buffered write's data is in the page cache: the write (this id) is done.
    Buffered(u64),
}

/// A buffered write waiting for the dirty limit: its id and sectors.
struct ThrottledWrite {
    id: u64,
    start: u64,
    end: u64,
}

/// A read-ahead window in the scheduler or on the device, and the reads waiting for it.
struct ReadaheadIo {
    process: u32,
    file: usize,
    start: u64,
    end: u64,
    submit_time: Nanos,
    waiters: Vec<u64>,
}

/// A flusher request in the scheduler or on the device.
struct WritebackIo {
    sectors: u64,
    submit_time: Nanos,
}

struct InService {
    request: Request,
    dispatch_time: Nanos,
}

#[derive(Default)]
struct DiskCounters {
    ios: [u64; 2],
    merges: [u64; 2],
    service_ns: [u64; 2],
    in_queue_ns: u128,
    busy_ns: u64,
    busy_since: Option<Nanos>,
}

struct Simulation<'a> {
    job_file: &'a JobFile,
    scheduler: Box<dyn Scheduler>,
    device: Box<dyn DeviceModel>,
    queue_depth: usize,
    host_latency: Nanos,
    processes: Vec<Process>,
    phases: usize,
    current_phase: usize,
    events: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    event_seq: u64,
    scheduler_wake: Option<Nanos>,
    pending: IdMap<PendingIo>,
    in_service: Vec<Option<InService>>,
    free_tags: Vec<u64>,
    next_request_id: u64,
    epoch: Nanos,
    now: Nanos,
    submitted: u64,
    completed: u64,
    duplicates: u64,
    disk: DiskCounters,
    done_tags: Vec<u64>,
    cache: PageCache,
    throttled: VecDeque<ThrottledWrite>,
    writeback: IdMap<WritebackIo>,
    writeback_counts: WritebackCounts,
    readahead_ios: IdMap<ReadaheadIo>,
    /// The request reading each window in flight: (process, file, window end) → request id.
    readahead_windows: std::collections::BTreeMap<(u32, usize, u64), u64>,
    readahead_counts: ReadaheadCounts,
    read_ahead_bytes: u64,
    /// Every group but the root with the weight the policy gives it and its limits.
    cgroups: Vec<CgroupSettings>,
}

/// A 64-bit mix (SplitMix64's finaliser): decorrelates seeds derived from one another.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<'a> Simulation<'a> {
    fn new(job_file: &'a JobFile, config: &SimConfig) -> Result<Self, SimError> {
        check_supported(job_file).map_err(job_error)?;
        let mut device = build_device(&config.device)?;
        if config.driver_queue > device.info().queue_depth {
            device = Box::new(DriverQueue::new(device, config.driver_queue));
        }
        let info = device.info();
        let groups = job_file
            .group_tree(&config.group_weights, &config.group_limits)
            .map_err(job_error)?;
        let context = SchedulerContext {
            groups: groups.clone(),
            rotational: info.rotational,
            queue_depth: info.queue_depth,
        };
        let scheduler = build_scheduler(&config.scheduler, &context)?;
        let cgroups = CgroupSettings::of_run(&groups, scheduler.as_ref());
        let capacity = info.capacity_sectors * SECTOR_SIZE;
        let (mut processes, phases) = build_processes(job_file, &groups, capacity, config.seed)?;
        if config.direct_writes == DirectWrites::Async {
            for process in &mut processes {
                process.direct_writes_async = job_file.jobs[process.spec_index].direct;
            }
        }
        let epoch = mix(config.seed) % 1_000_000_000;
        Ok(Self {
            job_file,
            scheduler,
            queue_depth: info.queue_depth.max(1),
            host_latency: config.host_latency,
            device,
            processes,
            phases,
            current_phase: 0,
            events: BinaryHeap::new(),
            event_seq: 0,
            scheduler_wake: None,
            pending: IdMap::default(),
            in_service: Vec::new(),
            free_tags: Vec::new(),
            next_request_id: 1,
            epoch,
            now: epoch,
            submitted: 0,
            completed: 0,
            duplicates: 0,
            disk: DiskCounters::default(),
            done_tags: Vec::new(),
            cache: PageCache::new(config.page_cache),
            throttled: VecDeque::new(),
            writeback: IdMap::default(),
            writeback_counts: WritebackCounts::default(),
            readahead_ios: IdMap::default(),
            readahead_windows: std::collections::BTreeMap::new(),
            readahead_counts: ReadaheadCounts::default(),
            read_ahead_bytes: config.page_cache.read_ahead_bytes,
            cgroups,
        })
    }

    fn push_event(&mut self, at: Nanos, event: Event) {
        self.event_seq += 1;
        self.events.push(Reverse((at, self.event_seq, event)));
    }

    fn start_phase(&mut self, phase: usize) {
        self.current_phase = phase;
        let now = self.now;
        for index in 0..self.processes.len() {
            if self.processes[index].phase != phase {
                continue;
            }
            let (low, high) = self.job_file.jobs[self.processes[index].spec_index].startdelay;
            let delay = if high > low {
                self.processes[index].rng.gen_range(low..=high)
            } else {
                low
            };
            self.push_event(now + delay, Event::Start(index as u32));
        }
    }

    fn next_time(&self) -> Option<Nanos> {
        [
            self.events.peek().map(|Reverse((at, _, _))| *at),
            self.device.next_event(),
            self.scheduler_wake,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn run(&mut self) {
        if !self.processes.is_empty() {
            self.start_phase(0);
        }
        while let Some(at) = self.next_time() {
            self.now = at.max(self.now);
            if self.device.next_event().is_some_and(|t| t <= self.now) {
                self.device_completions();
            }
            while let Some(Reverse((at, _, event))) = self.events.peek().copied() {
                if at > self.now {
                    break;
                }
                self.events.pop();
                self.handle(event);
            }
            if self.scheduler_wake.is_some_and(|t| t <= self.now) {
                self.scheduler_wake = None;
            }
            self.pump_dispatch();
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Start(index) => {
                let process = &mut self.processes[index as usize];
                let spec = &self.job_file.jobs[process.spec_index];
                let pattern = process.pattern.take().expect("a process starts once");
                process.clock = Some(JobClock::new(spec, pattern, self.now));
                process.lifecycle = Lifecycle::Running;
                self.pump_job(index);
            }
            Event::Reap(index) => self.reap(index),
            Event::Buffered(id) => self.complete_io(id),
            Event::Wake(index) => {
                let process = &mut self.processes[index as usize];
                if process.wake_at.is_some_and(|t| t <= self.now) {
                    process.wake_at = None;
                    self.pump_job(index);
                }
            }
        }
    }

    /// Let a job issue all it wants to now.
    fn pump_job(&mut self, index: u32) {
        loop {
            let process = &mut self.processes[index as usize];
            if process.lifecycle != Lifecycle::Running {
                return;
            }
            let clock = process
                .clock
                .as_mut()
                .expect("running processes have a clock");
            match clock.poll(self.now, &mut process.rng) {
                Step::Submit(unit) => self.submit(index, unit),
                Step::WaitUntil(at) => {
                    if process.wake_at.is_none_or(|t| at < t) {
                        process.wake_at = Some(at);
                        self.push_event(at, Event::Wake(index));
                    }
                    return;
                }
                Step::AwaitCompletion => return,
                Step::Done => {
                    process.lifecycle = Lifecycle::Done;
                    process.end = self.now;
                    let pid = process.pid;
                    self.scheduler.process_exited(pid, self.now);
                    self.maybe_next_phase();
                    self.maybe_drain_cache();
                    return;
                }
            }
        }
    }

    fn maybe_next_phase(&mut self) {
        let phase = self.current_phase;
        let phase_done = self
            .processes
            .iter()
            .filter(|p| p.phase == phase)
            .all(|p| p.lifecycle == Lifecycle::Done);
        if phase_done && phase + 1 < self.phases {
            self.start_phase(phase + 1);
        }
    }

    fn submit(&mut self, index: u32, unit: IoUnit) {
        let process = &mut self.processes[index as usize];
        // Trim jobs are refused by `check_supported` in `Simulation::new`, so no trim gets here.
        let direction = match unit.direction {
            DataDirection::Read | DataDirection::Trim => Direction::Read,
            DataDirection::Write => Direction::Write,
        };
        let id = self.next_request_id;
        self.next_request_id += 1;
        let request = Request {
            id: RequestId(id),
            process: process.pid,
            group: process.group,
            priority: process.priority,
            direction,
            sync: direction == Direction::Read
                || process.sync_writes && !process.direct_writes_async,
            sector: process.file_sectors[unit.file] + unit.offset / SECTOR_SIZE,
            sectors: u32::try_from(unit.length.div_ceil(SECTOR_SIZE)).unwrap_or(u32::MAX),
            submit_time: self.now,
            merged: Vec::new(),
        };
        let process_sync_writes = process.sync_writes;
        let in_flight = process.clock.as_ref().map_or(1, JobClock::in_flight);
        process.stats.record_depth(in_flight);
        process.stats.issued[direction_index(unit.direction)] += 1;
        self.pending.insert(
            id,
            PendingIo {
                process: index,
                direction: unit.direction,
                bytes: unit.length,
                submit_time: self.now,
                buffered: !process.sync_writes && direction == Direction::Write
                    || process.buffered_reads && direction == Direction::Read,
            },
        );
        self.submitted += 1;
        if direction == Direction::Write && !process_sync_writes {
            self.buffered_write(request);
            return;
        }
        if direction == Direction::Read && self.processes[index as usize].buffered_reads {
            self.buffered_read(index, &unit, request);
            return;
        }
        self.insert(request);
    }

    /// A buffered read: from memory, from a read-ahead window in flight, or from the device.
    fn buffered_read(&mut self, index: u32, unit: &IoUnit, request: Request) {
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
    fn issue_windows(&mut self, index: u32, file: usize, windows: &[(u64, u64)], like: &Request) {
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
    fn readahead_done(&mut self, io: ReadaheadIo) {
        self.readahead_counts.completed += 1;
        self.disk.in_queue_ns += u128::from(self.now - io.submit_time);
        self.readahead_windows
            .remove(&(io.process, io.file, io.end));
        self.processes[io.process as usize].readahead[io.file].window_done(io.start, io.end);
        for id in io.waiters {
            self.complete_io(id);
        }
    }

    fn insert(&mut self, request: Request) {
        let direction = request.direction;
        if let Inserted::Merged(_) = self.scheduler.insert(request, self.now) {
            self.disk.merges[direction.index()] += 1;
        }
    }

    /// A buffered write goes to the page cache: done once copied, unless the dirty limit
    /// makes its writer wait for writeback.
    fn buffered_write(&mut self, request: Request) {
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
    fn pump_flusher(&mut self) {
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
    fn writeback_done(&mut self, io: WritebackIo) {
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
    fn maybe_drain_cache(&mut self) {
        if self
            .processes
            .iter()
            .all(|p| p.lifecycle == Lifecycle::Done)
        {
            self.cache.drain();
            self.pump_flusher();
        }
    }

    /// Hand the device requests while it has free slots and the policy has any to give.
    fn pump_dispatch(&mut self) {
        while self.device.in_flight() < self.queue_depth {
            match self.scheduler.dispatch(self.now) {
                Dispatch::Request(request) => self.send_to_device(request),
                Dispatch::WaitUntil(at) => {
                    // A policy asking to be woken now or in the past is woken at the next nanosecond.
                    let at = at.max(self.now + 1);
                    self.scheduler_wake = Some(self.scheduler_wake.map_or(at, |t| t.min(at)));
                    return;
                }
                Dispatch::Empty => return,
            }
        }
    }

    fn send_to_device(&mut self, request: Request) {
        let tag = self.free_tags.pop().unwrap_or_else(|| {
            self.in_service.push(None);
            (self.in_service.len() - 1) as u64
        });
        let command = Command {
            tag,
            direction: request.direction,
            sector: request.sector,
            sectors: request.sectors,
            fua: false,
        };
        if self.device.in_flight() == 0 {
            self.disk.busy_since = Some(self.now);
        }
        self.in_service[tag as usize] = Some(InService {
            request,
            dispatch_time: self.now,
        });
        self.device.submit(command, self.now);
    }

    fn device_completions(&mut self) {
        let mut done = std::mem::take(&mut self.done_tags);
        self.device.advance(self.now, &mut done);
        for &tag in &done {
            self.complete_command(tag);
        }
        done.clear();
        self.done_tags = done;
        if self.device.in_flight() == 0 {
            if let Some(since) = self.disk.busy_since.take() {
                self.disk.busy_ns += self.now - since;
            }
        }
    }

    fn complete_command(&mut self, tag: u64) {
        let Some(InService {
            request,
            dispatch_time,
        }) = self.in_service[tag as usize].take()
        else {
            self.duplicates += 1;
            return;
        };
        self.free_tags.push(tag);
        let d = request.direction.index();
        self.disk.ios[d] += 1;
        self.disk.service_ns[d] += self.now - dispatch_time;
        let completion = Completion {
            request,
            dispatch_time,
            error: None,
        };
        self.scheduler.complete(&completion, self.now);
        for id in completion.request.ids() {
            self.complete_io(id.0);
        }
    }

    fn complete_io(&mut self, id: u64) {
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
        if !io.buffered {
            self.disk.in_queue_ns += u128::from(self.now - io.submit_time);
        }
        let process = &mut self.processes[io.process as usize];
        let clock = process
            .clock
            .as_ref()
            .expect("a process with I/O has started");
        let ramp_end = clock.ramp_end();
        if self.now >= ramp_end {
            let direction = &mut process.stats.directions[direction_index(io.direction)];
            direction.record(io.bytes, 0, self.now - io.submit_time, self.now - ramp_end);
        }
        if self.host_latency == 0 {
            self.reap(io.process);
        } else {
            self.push_event(self.now + self.host_latency, Event::Reap(io.process));
        }
    }

    /// The process of a completed request reacts: one fewer in flight, maybe think, issue more.
    fn reap(&mut self, index: u32) {
        let process = &mut self.processes[index as usize];
        let clock = process
            .clock
            .as_mut()
            .expect("a process with I/O has started");
        clock.on_complete(self.now);
        self.pump_job(index);
    }

    fn finish(mut self, config: &SimConfig) -> SimOutcome {
        let elapsed = self.now - self.epoch;
        let mut jobs = Vec::with_capacity(self.processes.len());
        for process in &mut self.processes {
            let spec = &self.job_file.jobs[process.spec_index];
            let ramp_end = process
                .clock
                .as_ref()
                .map_or(process.end, JobClock::ramp_end);
            process.stats.runtime = process.end.saturating_sub(ramp_end);
            jobs.push(JobReport {
                description: JobDescription::of(
                    spec,
                    process.groupid,
                    process.pid.0,
                    process.priority,
                ),
                stats: std::mem::take(&mut process.stats),
            });
        }
        let disk = &self.disk;
        let to_ms = |ns: u64| ns / 1_000_000;
        let disk_util = DiskUtil {
            name: self.device.info().name,
            ios: disk.ios,
            merges: disk.merges,
            ticks: [to_ms(disk.service_ns[0]), to_ms(disk.service_ns[1])],
            in_queue: u64::try_from(disk.in_queue_ns / 1_000_000).unwrap_or(u64::MAX),
            util: if elapsed == 0 {
                0.0
            } else {
                100.0 * disk.busy_ns as f64 / elapsed as f64
            },
        };
        SimOutcome {
            report: RunReport {
                version: format!("ioslice-{}", env!("CARGO_PKG_VERSION")),
                timestamp: 0,
                global_options: self.job_file.global_options.clone(),
                jobs,
                disk_util: vec![disk_util],
                scheduler: config.scheduler.to_string(),
                device: self.device.info().name,
                cgroups: std::mem::take(&mut self.cgroups),
            },
            submitted: self.submitted,
            completed: self.completed,
            duplicate_completions: self.duplicates,
            elapsed,
            writeback: WritebackCounts {
                bytes_dirtied: self.cache.bytes_dirtied,
                bytes_written: self.cache.bytes_written,
                ..self.writeback_counts
            },
            readahead: self.readahead_counts,
        }
    }
}

/// One process per job clone, in job order, with its files placed on the disk, its
/// reporting group and its stonewall phase. Returns the processes and the number of phases.
fn build_processes(
    job_file: &JobFile,
    groups: &GroupTree,
    capacity: u64,
    seed: u64,
) -> Result<(Vec<Process>, usize), SimError> {
    let mut layout = Layout::new(capacity);
    let mut processes = Vec::new();
    let slots = ioslice_fio::job::phases_and_groups(&job_file.jobs);
    for (spec_index, (spec, &(phase, groupid))) in job_file.jobs.iter().zip(&slots).enumerate() {
        let group = groups.of_job(spec.cgroup.as_deref());
        for clone in 0..spec.numjobs.max(1) {
            let index = processes.len() as u32;
            let plans = plan_files(spec, clone, capacity).map_err(job_error)?;
            let file_sectors = plans
                .iter()
                .map(|plan| layout.place(&plan.name, plan.size))
                .collect::<Result<Vec<_>, _>>()?;
            let pattern = IoPattern::new(spec, &plans, clone).map_err(job_error)?;
            let stream = spec.randseed.unwrap_or(seed);
            processes.push(Process {
                spec_index,
                pid: ProcessId(index + 1),
                group,
                priority: spec.priority.unwrap_or_default(),
                phase,
                sync_writes: spec.direct || spec.sync_writes,
                buffered_reads: !spec.direct,
                direct_writes_async: false,
                file_sizes: plans.iter().map(|plan| plan.size).collect(),
                readahead: vec![FileReadahead::default(); plans.len()],
                file_sectors,
                pattern: Some(pattern),
                clock: None,
                rng: ChaCha8Rng::seed_from_u64(mix(stream ^ mix(u64::from(index)))),
                stats: JobStats::default(),
                lifecycle: Lifecycle::Waiting,
                wake_at: None,
                end: 0,
                groupid,
            });
        }
    }
    let phases = slots.last().map_or(1, |&(phase, _)| phase + 1);
    Ok((processes, phases))
}

fn job_error(error: impl std::fmt::Display) -> SimError {
    SimError::Job(error.to_string())
}
