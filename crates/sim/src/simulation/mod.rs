//! The discrete-event driver: job processes, one policy and one device model in virtual time.
//!
//! Each job (each `numjobs` clone) is a process with its own queue. The driver asks the
//! policy for a request whenever the device has a free slot, and again when a
//! `WaitUntil` comes due: the dispatch loop and the traced calls to the policy are the
//! engine's too ([`ioslice_core::request_queue`]). Time starts at a seed-derived instant within the first second,
//! which sets the disk's rotational position at the start; everything reported is relative
//! to that start. All randomness comes from the seed, so a run is reproducible to the byte.
//!
//! [`run_traced`] also hands every event of the run to a trace sink ([`ioslice_core::trace`]):
//! each request's arrival, dispatch and completion as the driver sees them, and every
//! decision the policy records, stamped with the virtual time since the start. The trace is
//! as reproducible as the run.
//!
//! The page cache's side of buffered I/O (read-ahead, writeback) is in `memory`; building the
//! processes and the final report, in `report`; what a completion sets off, in `completion`; which statistics each
//! job keeps, in `statistics`; ending a run early when asked (SIGINT), in `stop`; fio's
//! `null` engine, whose requests pass the policy but not the device, in `null_engine`; the
//! pending events in time order, in `events`; fio's flow control between jobs, in `flow`;
//! jobs that wait for another (`wait_for=`), in `waitee`.

use std::collections::VecDeque;

use events::EventQueue;
use ioslice_core::request::SECTOR_SIZE;
use ioslice_core::request_queue::{run_queue, QueueDevice, RequestQueue};
use ioslice_core::{
    build_scheduler, with_layers_for_changes, Direction, GroupId, Inserted, IoPriority, Nanos,
    ProcessId, Request, RequestId, SchedulerContext, StopSignal, TraceSink, TunableError,
};
use ioslice_fio::jobfile::{check_discard, check_simulable, check_supported};
use ioslice_fio::logs::JobLogs;
use ioslice_fio::pattern::{DataDirection, IoPattern, IoUnit};
use ioslice_fio::run_spec::limits_set_by;
use ioslice_fio::workload::{JobClock, Step};
use ioslice_fio::{CgroupSettings, JobFile, JobStats, RunReport};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::config::{BlockLayer, DirectWrites};
pub use crate::config::{GroupAction, GroupChange, SimConfig};
use crate::device::driver_queue::DriverQueue;
use crate::device::{Command, DeviceModel};
use crate::id_hash::IdMap;
use crate::layout::LayoutError;
use crate::page_cache::PageCache;
use crate::preset::{build as build_device, DeviceError};
use crate::readahead::FileReadahead;

mod completion;
mod cpu_engine;
mod events;
mod flow;
mod memory;
mod null_engine;
mod progress;
mod regroup;
mod report;
mod statistics;
mod stop;
mod waitee;
mod zone_trim;
mod zoned;

pub use statistics::Statistics;

use report::build_processes;

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
    /// A log file (`write_bw_log=`, …) that cannot be written.
    #[error("{0}")]
    Log(#[from] ioslice_fio::logs::LogError),
    /// A scheduler a zoned device does not take.
    #[error("{0}")]
    Zoned(String),
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
    run_with_statistics(job_file, config, Statistics::Detailed)
}

/// Run a job file in simulation keeping only the statistics `kept` asks for (see
/// [`Statistics`]); [`run`] keeps them all.
pub fn run_with_statistics(
    job_file: &JobFile,
    config: &SimConfig,
    kept: Statistics,
) -> Result<SimOutcome, SimError> {
    let mut sim = Simulation::new(job_file, config, None)?;
    sim.statistics = kept;
    sim.run();
    sim.finish(config)
}

/// Run a job file in simulation and hand every event of the run to `trace`, stamped with the
/// virtual time since the start of the run. The same seed gives the same events at the same
/// times.
pub fn run_traced(
    job_file: &JobFile,
    config: &SimConfig,
    trace: &mut dyn TraceSink,
) -> Result<SimOutcome, SimError> {
    let mut sim = Simulation::new(job_file, config, Some(trace))?;
    sim.run();
    sim.finish(config)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    /// Its start is scheduled (after its `startdelay`).
    Waiting,
    /// Not started until the job it waits for (`wait_for=`) is done.
    Held,
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
    /// fio's report counts its depth otherwise than by what is in flight (`vsync`).
    reaps_in_batches: bool,
    /// O_DIRECT writes reach the elevator as async requests (2004 kernels).
    direct_writes_async: bool,
    file_sectors: Vec<u64>,
    file_sizes: Vec<u64>,
    readahead: Vec<FileReadahead>,
    pattern: Option<IoPattern>,
    clock: Option<JobClock>,
    rng: ChaCha8Rng,
    stats: JobStats,
    /// The job's log files, if it writes any.
    logs: Option<JobLogs>,
    lifecycle: Lifecycle,
    wake_at: Option<Nanos>,
    end: Nanos,
    groupid: u32,
    /// `ioengine=null`: its requests complete at dispatch, without the device.
    null_engine: bool,
    /// A null-engine job: when its thread is done with the completions it has reaped.
    cpu_free_at: Nanos,
    /// fio's zone mode: the job's I/O at the device, and a write held until that is done
    /// because it resets its zone first (fio quiesces before a zone reset).
    zbd: zoned::ZbdProcess,
}

struct PendingIo {
    process: u32,
    direction: DataDirection,
    bytes: u64,
    offset: u64,
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
    /// The policy, traced into the run's sink when there is one.
    queue: RequestQueue<&'a mut dyn TraceSink>,
    device: Box<dyn DeviceModel>,
    queue_depth: usize,
    host_latency: Nanos,
    /// From a completion to the elevator's next dispatch ([`SimConfig::queue_run_delay`]).
    queue_run_delay: Nanos,
    /// When the queue runs after a completion, unless a submission runs it first.
    queue_run_at: Option<Nanos>,
    /// Whether each submission runs the queue at once (blk-mq), rather than once all of an
    /// instant's submissions are in (the single queue's plugging).
    dispatch_on_insert: bool,
    processes: Vec<Process>,
    phases: usize,
    current_phase: usize,
    events: EventQueue<Event>,
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
    /// Which statistics each job keeps.
    statistics: Statistics,
    /// Asked from outside to end the run early ([`SimConfig::stop`]).
    stop: StopSignal,
    /// Whether the jobs were told to stop: they issue nothing more and drain.
    stopping: bool,
    /// Where the run's progress goes, if anyone follows it ([`SimConfig::progress`]).
    progress: Option<ioslice_core::Progress>,
    /// The processes of null-engine jobs (empty in most runs).
    null_processes: Vec<ProcessId>,
    /// Whether `pump_dispatch` is under way: completing a null request at dispatch may
    /// submit another, whose insert must not dispatch from within.
    dispatching: bool,
    /// A submission during `pump_dispatch` asked for another round.
    redispatch: bool,
    /// fio's flow groups (`flow_id`, `flow`): empty unless a job has a weight.
    flows: flow::Flows,
    /// The groups with their weights and limits as they now are.
    groups: ioslice_core::GroupTree,
    /// Changes to groups still to come, in time order ([`SimConfig::group_changes`]).
    group_changes: VecDeque<regroup::DueChange>,
    /// fio's write pointers on a zoned device (`zonemode=zbd`); `None` on other devices.
    zbd: Option<zoned::ZbdWriter>,
    /// Why the run stopped short (a scheduled group removal found a job still in it).
    failure: Option<SimError>,
}

impl<'a> Simulation<'a> {
    fn new(
        job_file: &'a JobFile,
        config: &SimConfig,
        trace: Option<&'a mut dyn TraceSink>,
    ) -> Result<Self, SimError> {
        check_supported(job_file).map_err(job_error)?;
        check_simulable(job_file).map_err(job_error)?;
        let mut device = build_device(&config.device)?;
        if config.driver_queue > device.info().queue_depth {
            device = Box::new(DriverQueue::new(device, config.driver_queue));
        }
        let info = device.info();
        check_discard(job_file, &info.name, info.discard).map_err(job_error)?;
        zoned::check_zbd(job_file, info.zones, &info.name)?;
        let scheduler_spec = zoned::scheduler_for(&config.run.scheduler, info.zones, &info.name)?;
        let mut groups = job_file
            .group_tree(&config.run.group_weights, &config.run.group_limits)
            .map_err(job_error)?;
        groups.set_controller(config.run.controller);
        let context = SchedulerContext {
            groups: groups.clone(),
            rotational: info.rotational,
            queue_depth: info.queue_depth,
        };
        let epoch = ioslice_fio::plan::mix(config.run.seed) % 1_000_000_000;
        let group_changes =
            regroup::resolve(&config.run.group_changes, &context, config, job_file, epoch)?;
        let scheduler = build_scheduler(&scheduler_spec, &context)?;
        // Under the limit layer and io.latency as well when a change needs them and no group
        // had them at the start.
        let (limits, targets) = limits_set_by(&config.run.group_changes);
        let scheduler = with_layers_for_changes(scheduler, &context, limits, targets);
        let cgroups = CgroupSettings::of_run(&groups, |id| scheduler.group_weight(id));
        let capacity = info.capacity_sectors * SECTOR_SIZE;
        let (mut processes, phases) = build_processes(job_file, &groups, capacity, config)?;
        if config.direct_writes == DirectWrites::Async {
            for process in &mut processes {
                process.direct_writes_async = job_file.jobs[process.spec_index].direct;
            }
        }
        let null_processes = processes
            .iter()
            .filter(|p| p.null_engine)
            .map(|p| p.pid)
            .collect();
        let queue = RequestQueue::new(scheduler, trace, epoch, &groups);
        Ok(Self {
            job_file,
            queue,
            queue_depth: info.queue_depth.max(1),
            host_latency: config.host_latency,
            queue_run_delay: config.queue_run_delay_for(),
            queue_run_at: None,
            dispatch_on_insert: config.block_layer_for() == BlockLayer::BlkMq,
            device,
            processes,
            phases,
            current_phase: 0,
            events: EventQueue::new(),
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
            statistics: Statistics::default(),
            stop: config.run.stop.clone(),
            stopping: false,
            progress: config.run.progress.clone(),
            null_processes,
            dispatching: false,
            redispatch: false,
            flows: flow::Flows::default(),
            groups,
            group_changes,
            zbd: info.zones.map(zoned::ZbdWriter::new),
            failure: None,
        })
    }

    fn push_event(&mut self, at: Nanos, event: Event) {
        self.events.push(at, event);
    }

    fn start_phase(&mut self, phase: usize) {
        self.current_phase = phase;
        let now = self.now;
        for index in 0..self.processes.len() {
            if self.processes[index].phase != phase {
                continue;
            }
            if self.held_by_waitee(index) {
                self.processes[index].lifecycle = Lifecycle::Held;
                continue;
            }
            self.schedule_start(index, now);
        }
    }

    /// Schedule a process's start: after its `startdelay` from `now` (at once when stopping).
    fn schedule_start(&mut self, index: usize, now: Nanos) {
        let (low, high) = self.job_file.jobs[self.processes[index].spec_index].startdelay;
        let delay = if high > low {
            self.processes[index].rng.gen_range(low..=high)
        } else {
            low
        };
        let delay = if self.stopping { 0 } else { delay };
        self.push_event(now + delay, Event::Start(index as u32));
    }

    fn next_time(&self) -> Option<Nanos> {
        let next = [
            self.events.next_time(),
            self.device.next_event(),
            self.scheduler_wake,
            self.queue_run_at,
        ]
        .into_iter()
        .flatten()
        .min()?;
        // A change to a group matters only while something else is still to happen.
        Some(self.next_change().map_or(next, |change| change.min(next)))
    }

    fn run(&mut self) {
        if !self.processes.is_empty() {
            self.start_phase(0);
        }
        let mut turns = 0u32;
        while let Some(at) = self.next_time().filter(|_| self.failure.is_none()) {
            turns = turns.wrapping_add(1);
            if turns.is_multiple_of(stop::CHECK_EVERY) {
                self.check_stop();
                self.publish_progress();
            }
            self.now = at.max(self.now);
            // Whether the queue runs now: after a submission or a timer, always; after a
            // completion alone, only once the queue run delay has passed.
            let mut run_queue = false;
            // A device's internal work (a member's read-ahead, a destage) completes nothing the
            // host sees and runs no queue.
            if self.device.next_event().is_some_and(|t| t <= self.now) && self.device_completions()
            {
                if self.queue_run_delay == 0 {
                    run_queue = true;
                } else if self.queue_run_at.is_none() {
                    self.queue_run_at = Some(self.now + self.queue_run_delay);
                }
            }
            if self.apply_due_changes() {
                run_queue = true;
            }
            while let Some(event) = self.events.pop_due(self.now) {
                self.handle(event);
                run_queue = true;
            }
            if self.scheduler_wake.is_some_and(|t| t <= self.now) {
                self.scheduler_wake = None;
                run_queue = true;
            }
            if self.queue_run_at.is_some_and(|t| t <= self.now) {
                run_queue = true;
            }
            if run_queue {
                self.queue_run_at = None;
                self.pump_dispatch();
            }
        }
        self.publish_progress();
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Start(index) => {
                let process = &mut self.processes[index as usize];
                let spec = &self.job_file.jobs[process.spec_index];
                let pattern = process.pattern.take().expect("a process starts once");
                let mut clock = JobClock::new(spec, pattern, self.now);
                if self.stopping {
                    clock.abort();
                }
                process.clock = Some(clock);
                process.lifecycle = Lifecycle::Running;
                self.flow_join(index);
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
            if self.flow_holds(index) {
                return;
            }
            let process = &mut self.processes[index as usize];
            if process.lifecycle != Lifecycle::Running {
                return;
            }
            let clock = process
                .clock
                .as_mut()
                .expect("running processes have a clock");
            match clock.poll(self.now, &mut process.rng) {
                Step::Submit(unit) => {
                    self.flow_issued(index);
                    self.submit(index, unit);
                }
                Step::WaitUntil(at) => {
                    if process.wake_at.is_none_or(|t| at < t) {
                        process.wake_at = Some(at);
                        self.push_event(at, Event::Wake(index));
                    }
                    return;
                }
                Step::AwaitCompletion => return,
                Step::ResetStatistics => {
                    let spec = &self.job_file.jobs[process.spec_index];
                    process.stats = process.stats.restarted(spec);
                }
                Step::Done => {
                    process.lifecycle = Lifecycle::Done;
                    process.end = self.now;
                    let pid = process.pid;
                    self.flow_leave(index);
                    self.queue.process_exited(pid, self.now);
                    self.release_held();
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

    fn submit(&mut self, index: u32, mut unit: IoUnit) {
        if self.zbd_trim(index, &mut unit) {
            let length = unit.length;
            self.complete_off_device(index, unit, length, 0);
            return;
        }
        if let Some(burn) = self.cpu_cycle(index) {
            self.complete_off_device(index, unit, 0, burn);
            return;
        }
        let Some(unit) = self.zbd_place(index, unit) else {
            return;
        };
        let process = &mut self.processes[index as usize];
        let direction = match unit.direction {
            DataDirection::Read => Direction::Read,
            DataDirection::Write => Direction::Write,
            DataDirection::Trim => Direction::Discard,
        };
        let buffered = !process.null_engine
            && (!process.sync_writes && direction == Direction::Write
                || process.buffered_reads && direction == Direction::Read);
        let id = self.open_io(index, &unit, unit.length, buffered);
        let process = &self.processes[index as usize];
        let request = Request {
            id: RequestId(id),
            process: process.pid,
            group: process.group,
            priority: process.priority,
            direction,
            // A discard is never sync (the kernel's `op_is_sync`: no `REQ_SYNC` on it).
            sync: match direction {
                Direction::Read => true,
                Direction::Write => process.sync_writes && !process.direct_writes_async,
                Direction::Discard => false,
            },
            sector: process.file_sectors[unit.file] + unit.offset / SECTOR_SIZE,
            sectors: u32::try_from(unit.length.div_ceil(SECTOR_SIZE)).unwrap_or(u32::MAX),
            submit_time: self.now,
            merged: Vec::new(),
        };
        let process_sync_writes = process.sync_writes;
        if process.null_engine {
            self.insert(request);
            return;
        }
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

    fn insert(&mut self, request: Request) {
        let direction = request.direction;
        let inserted = self.queue.insert(request, self.now);
        if let (Inserted::Merged(_), Some(d)) = (inserted, disk_slot(direction)) {
            self.disk.merges[d] += 1;
        }
        if self.dispatch_on_insert {
            self.pump_dispatch();
        }
    }

    /// Hand the device requests while it has free slots and the policy has any to give;
    /// complete null-engine requests as they come, and go round again for what their
    /// completions submitted.
    fn pump_dispatch(&mut self) {
        if self.dispatching {
            self.redispatch = true;
            return;
        }
        self.dispatching = true;
        loop {
            self.redispatch = false;
            self.dispatch_while_room();
            if !self.redispatch {
                break;
            }
        }
        self.dispatching = false;
    }

    /// The shared dispatch loop ([`run_queue`]); a policy's "wait until" becomes the
    /// earliest pending wake-up.
    fn dispatch_while_room(&mut self) {
        if let Some(at) = run_queue(self, self.now) {
            self.scheduler_wake = Some(self.scheduler_wake.map_or(at, |t| t.min(at)));
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

    /// Run the device to now and complete what it finished; whether anything completed.
    fn device_completions(&mut self) -> bool {
        let mut done = std::mem::take(&mut self.done_tags);
        self.device.advance(self.now, &mut done);
        for &tag in &done {
            self.complete_command(tag);
        }
        let completed = !done.is_empty();
        done.clear();
        self.done_tags = done;
        if self.device.in_flight() == 0 {
            if let Some(since) = self.disk.busy_since.take() {
                self.disk.busy_ns += self.now - since;
            }
        }
        completed
    }
}

/// The simulator's side of the dispatch loop: room while the device model has a free slot; a
/// null engine's request completes at dispatch, any other goes to the device.
impl<'a> QueueDevice for Simulation<'a> {
    type Sink = &'a mut dyn TraceSink;

    fn queue(&mut self) -> &mut RequestQueue<Self::Sink> {
        &mut self.queue
    }

    #[inline]
    fn has_room(&self) -> bool {
        self.device.in_flight() < self.queue_depth
    }

    #[inline]
    fn issue(&mut self, request: Request, _now: Nanos) {
        if self.is_null_io(&request) {
            self.complete_null(request);
        } else {
            self.send_to_device(request);
        }
    }
}

/// The slot of fio's disk statistics a request counts in: reads and writes; the kernel
/// counts discards apart (the discard fields of `/proc/diskstats`, since Linux 4.18), and fio
/// reads only the read and write fields, so discards count in none.
pub(super) fn disk_slot(direction: Direction) -> Option<usize> {
    match direction {
        Direction::Read => Some(0),
        Direction::Write => Some(1),
        Direction::Discard => None,
    }
}

fn job_error(error: impl std::fmt::Display) -> SimError {
    SimError::Job(error.to_string())
}
