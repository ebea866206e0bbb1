//! **BFQ** (Budget Fair Queueing), as in Linux 5.x–6.x with hierarchical groups.
//!
//! Every process has a sync queue; async writeback goes to queues shared per group, class and
//! level. One queue at a time is *in service* and owns the device until it has used its
//! *budget* (in sectors), runs dry and BFQ chooses not to idle for it, exceeds its *budget
//! timeout* (`timeout_sync`), or is preempted. The next queue is chosen by B-WF2Q+ (`wf2q.rs`):
//! at every level of the group hierarchy, among the eligible entities of the highest busy class,
//! the one whose virtual finish time comes first, so that each entity gets service in proportion
//! to its weight — `(8 − level) × 10` for a queue, 1–1000 (default 100) for a group. Service is
//! counted in sectors, so sequential processes get bandwidth fairness; slow and seeky ones are
//! charged for the time they hold the device instead (`budget.rs`). Budgets adapt to each queue's
//! behaviour, and the largest budget follows the measured peak rate (`peak_rate.rs`).
//!
//! BFQ idles for an emptied sync queue only where that pays (`idling.rs`): to keep a sequential
//! stream on a disk, or to preserve guarantees when weights, classes or groups differ; while it
//! idles it *injects* requests of other queues into the device's idle time, up to a limit it
//! learns so the idled-for queue is not slowed (`injection.rs`). With `low_latency`,
//! interactive and soft real-time queues are *weight raised* (`weight_raising.rs`), so that an
//! application starts quickly however many greedy readers run. Processes that read one stream
//! in interleaved chunks have their queues merged early, so the disk sees one sequential stream
//! (`cooperation.rs`).
//!
//! On non-rotational devices ioslice departs from the kernel by default (`parallel=1`,
//! `parallel.rs`): every dispatch is a one-request turn of B-WF2Q+, so several queues are at the
//! device at once in virtual-time order, and weights are kept by letting a queue that ran dry
//! *linger* — stay in the sum of weights, with virtual time waiting at its finish — for a window
//! scaled to its think time, instead of idling the device for it.
//!
//! Source: Linux's `block/bfq-iosched.c`, `bfq-wf2q.c` and `bfq-cgroup.c` (5.x–6.x), the
//! kernel's `Documentation/block/bfq-iosched.rst`, and `Documentation/block/ioprio.rst` for the
//! I/O priority classes and levels; Paolo Valente and Fabio Checconi, "High Throughput Disk
//! Scheduling with Fair Bandwidth Distribution" (IEEE Trans. Computers, 2010); Valente and
//! Andreolini, "Improving Application Responsiveness with the BFQ Disk I/O Scheduler"
//! (SYSTOR 2012). This is our own code, written from those sources.
//!
//! Deviations, all documented in place: the tag depth limits and EQM's delayed "stable merge"
//! are not modelled, and a process split off a shared queue starts from the shared queue's
//! history rather than its own saved state; a group that is already active is not repositioned
//! when a child with an earlier finish joins it; preemption does not check the kernel's cheap
//! `next_queue_may_preempt`.

mod arrival;
mod budget;
mod busy;
mod completion;
mod cooperation;
mod idling;
mod injection;
mod parallel;
mod peak_rate;
mod queue;
mod service;
mod stable_merge;
mod tracing;
mod weight_raising;
pub(crate) mod wf2q;

use std::collections::BTreeMap;

use crate::id_map::IdMap;

use crate::scheduler::SchedulerContext;
use crate::sector_order::SeekCost;
use crate::time::{ms, us};
use crate::trace::TraceBuffer;
use crate::tunable::{TunableDef, TunableError, Tunables};
use crate::{
    Completion, Dispatch, Group, GroupId, GroupTree, Inserted, Nanos, ProcessId, Request,
    Scheduler, TraceEvent,
};

use busy::BusyCounts;
use idling::{HwTag, IdleInputs, IdleTimer};
use peak_rate::PeakRate;
use queue::{Queue, QueueId, RequestStore};
use weight_raising::BurstDetector;
use wf2q::{EntityId, Owner, Wf2q, CLASSES};

/// Largest value of the kernel's `int` tunables.
const INT_MAX: i64 = i32::MAX as i64;
/// BFQ's group weights.
pub const GROUP_WEIGHT_RANGE: std::ops::RangeInclusive<u32> = 1..=1000;
/// A group's weight when none is set (`io.bfq.weight` default).
pub const DEFAULT_GROUP_WEIGHT: u32 = 100;
/// Async requests cost this many times their size in a symmetric scenario.
const ASYNC_CHARGE_FACTOR: u64 = 3;

/// The tunables in the algorithm's units.
#[derive(Debug, Clone)]
struct Config {
    slice_idle: Nanos,
    timeout_sync: Nanos,
    /// `None`: auto (from the peak rate).
    max_budget: Option<u64>,
    fifo_expire_sync: Nanos,
    fifo_expire_async: Nanos,
    seek: SeekCost,
    low_latency: bool,
    strict_guarantees: bool,
    /// Parallel service asked for (it applies on non-rotational devices only).
    parallel: bool,
    /// Parallel service: turns a queue may be served ahead of its share before it waits.
    parallel_lead: u32,
}

impl Config {
    fn new(tunables: &Tunables) -> Result<Self, TunableError> {
        let slice_idle = slice_idle(tunables)?;
        let strict_guarantees = tunables.get_bool("strict_guarantees");
        Ok(Self {
            // strict_guarantees raises slice_idle to at least 8 ms.
            slice_idle: if strict_guarantees {
                slice_idle.max(ms(8))
            } else {
                slice_idle
            },
            timeout_sync: ms(tunables.get_u64("timeout_sync")),
            max_budget: Some(tunables.get_u64("max_budget")).filter(|&b| b > 0),
            fifo_expire_sync: ms(tunables.get_u64("fifo_expire_sync")),
            fifo_expire_async: ms(tunables.get_u64("fifo_expire_async")),
            seek: SeekCost {
                back_seek_max: tunables.get_u64("back_seek_max").saturating_mul(2),
                back_seek_penalty: tunables.get_u64("back_seek_penalty"),
            },
            low_latency: tunables.get_bool("low_latency"),
            strict_guarantees,
            parallel: tunables.get_bool("parallel"),
            parallel_lead: u32::try_from(tunables.get_u64("parallel_lead")).unwrap_or(u32::MAX),
        })
    }
}

/// `slice_idle` (ms) and `slice_idle_us` set one variable; both given must agree.
fn slice_idle(tunables: &Tunables) -> Result<Nanos, TunableError> {
    let from_ms = ms(tunables.get_u64("slice_idle"));
    let from_us = us(tunables.get_u64("slice_idle_us"));
    match (
        tunables.is_set("slice_idle"),
        tunables.is_set("slice_idle_us"),
    ) {
        (true, true) if from_ms != from_us => Err(TunableError::Conflict {
            scheduler: "bfq".into(),
            why: format!(
                "slice_idle={} ms and slice_idle_us={} µs set the same idle time: give one of them",
                tunables.get("slice_idle"),
                tunables.get("slice_idle_us")
            ),
        }),
        (_, true) => Ok(from_us),
        _ => Ok(from_ms),
    }
}

/// A request at the device: its queue.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    queue: QueueId,
}

/// The BFQ policy.
#[derive(Debug, Clone)]
pub struct Bfq {
    config: Config,
    rotational: bool,
    engine: Wf2q,
    /// The root group's entity.
    root: EntityId,
    /// Each group's entity, by group index.
    group_entities: Vec<EntityId>,
    queues: Vec<Option<Queue>>,
    free_queues: Vec<QueueId>,
    store: RequestStore,
    sync_queues: BTreeMap<ProcessId, QueueId>,
    async_queues: BTreeMap<(GroupId, usize, u8), QueueId>,
    /// Per group, the sync queue created last and when: later queues created soon after
    /// merge into it (`stable_merge.rs`).
    last_created: BTreeMap<GroupId, (QueueId, Nanos)>,
    in_service: Option<QueueId>,
    /// The idle timer: BFQ waits for the in-service queue's next request (`idling.rs`).
    idle: IdleTimer,
    in_flight: IdMap<InFlight>,
    /// What injection measures and remembers (`injection.rs`).
    injection: injection::InjectionState,
    queued: usize,
    last_position: u64,
    /// Where the queue in service's last request ended (`in_serv_last_pos`): early queue
    /// merging looks for requests close to it.
    in_service_last_position: u64,
    /// Queue activations so far: each busy queue's `activation` is its place in this order.
    activations: u64,
    hw_tag: HwTag,
    peak: PeakRate,
    /// The largest budget and how many were assigned (`budget.rs`).
    budgets: budget::Budgets,
    /// What the busy queues are, for the asymmetry test (`busy.rs`).
    busy: BusyCounts,
    burst: BurstDetector,
    last_completion: Nanos,
    last_completed_queue: Option<QueueId>,
    /// Parallel service: whether it is on, whom it lingers for, the device's service time
    /// (`parallel.rs`).
    parallel: parallel::Parallel,
    /// Budgets, idling, weight raising, preemption and injection, when tracing is on.
    trace: TraceBuffer,
}

impl Bfq {
    /// BFQ's tunables with the kernel's names, units and defaults.
    pub const TUNABLES: &'static [TunableDef] = &[
        TunableDef {
            name: "slice_idle",
            default: 8,
            min: 0,
            max: INT_MAX,
            unit: "ms",
            help: "how long to idle for an emptied sync queue when idling pays",
        },
        TunableDef {
            name: "slice_idle_us",
            default: 8000,
            min: 0,
            max: INT_MAX,
            unit: "µs",
            help: "slice_idle in microseconds (the same setting)",
        },
        TunableDef {
            name: "timeout_sync",
            default: 125,
            min: 1,
            max: INT_MAX,
            unit: "ms",
            help: "budget timeout: longest service slot of a queue",
        },
        TunableDef {
            name: "max_budget",
            default: 0,
            min: 0,
            max: INT_MAX,
            unit: "sectors",
            help: "largest budget; 0 = auto from the peak rate and timeout_sync",
        },
        TunableDef {
            name: "fifo_expire_sync",
            default: 125,
            min: 1,
            max: INT_MAX,
            unit: "ms",
            help: "deadline of a sync request within its queue",
        },
        TunableDef {
            name: "fifo_expire_async",
            default: 250,
            min: 1,
            max: INT_MAX,
            unit: "ms",
            help: "deadline of an async request within its queue",
        },
        TunableDef {
            name: "back_seek_max",
            default: 16_384,
            min: 0,
            max: INT_MAX,
            unit: "KiB",
            help: "largest backward seek preferred to a forward one",
        },
        TunableDef {
            name: "back_seek_penalty",
            default: 2,
            min: 1,
            max: INT_MAX,
            unit: "factor",
            help: "cost multiplier of a backward seek",
        },
        TunableDef {
            name: "low_latency",
            default: 1,
            min: 0,
            max: 1,
            unit: "bool",
            help: "weight-raise interactive and soft real-time queues",
        },
        TunableDef {
            name: "strict_guarantees",
            default: 0,
            min: 0,
            max: 1,
            unit: "bool",
            help: "always idle, one request at a time at the device",
        },
        TunableDef {
            name: "parallel",
            default: 1,
            min: 0,
            max: 1,
            unit: "bool",
            help: "non-rotational devices: serve several queues at once in virtual-time order \
                   instead of idling (ioslice's; 0 = the kernel's one queue in service)",
        },
        TunableDef {
            name: "parallel_lead",
            default: 8,
            min: 0,
            max: 1024,
            unit: "requests",
            help: "parallel service: requests a process with one request in flight may be \
                   served ahead of its share in virtual time before it waits for the others \
                   (0 = none)",
        },
    ];

    /// BFQ for a device and group hierarchy. Fails on conflicting tunables or on a group
    /// weight outside 1–1000.
    pub fn new(tunables: &Tunables, context: &SchedulerContext) -> Result<Self, TunableError> {
        let config = Config::new(tunables)?;
        let parallel = config.parallel && !context.rotational && !config.strict_guarantees;
        let max_budget = config.max_budget.unwrap_or(budget::DEFAULT_MAX_BUDGET);
        let mut engine = Wf2q::default();
        if parallel {
            engine.set_lead(config.parallel_lead);
        }
        let group_entities = build_groups(&mut engine, &context.groups)?;
        Ok(Self {
            config,
            rotational: context.rotational,
            root: group_entities[0],
            busy: BusyCounts::new(group_entities.len()),
            group_entities,
            engine,
            queues: Vec::new(),
            free_queues: Vec::new(),
            store: RequestStore::default(),
            sync_queues: BTreeMap::new(),
            async_queues: BTreeMap::new(),
            last_created: BTreeMap::new(),
            in_service: None,
            idle: IdleTimer::default(),
            in_flight: IdMap::default(),
            injection: injection::InjectionState::default(),
            queued: 0,
            last_position: 0,
            in_service_last_position: 0,
            activations: 0,
            hw_tag: HwTag::default(),
            peak: PeakRate::new(context.rotational),
            budgets: budget::Budgets::new(max_budget),
            burst: BurstDetector::default(),
            last_completion: 0,
            last_completed_queue: None,
            parallel: parallel::Parallel::new(parallel),
            trace: TraceBuffer::default(),
        })
    }

    fn queue(&self, id: QueueId) -> &Queue {
        self.queues[id].as_ref().expect("live queue")
    }

    fn queue_mut(&mut self, id: QueueId) -> &mut Queue {
        self.queues[id].as_mut().expect("live queue")
    }

    fn busy_queues(&self) -> usize {
        self.busy.queues()
    }

    /// The scenario is asymmetric for `queue` ([`BusyCounts::asymmetric`]).
    fn asymmetric(&self, queue: QueueId) -> bool {
        self.busy.asymmetric(self.queue(queue).weight())
    }

    /// The inputs of the idling decision for a queue.
    fn idle_inputs(&self, id: QueueId) -> IdleInputs {
        let queue = self.queue(id);
        IdleInputs {
            slice_idle: self.config.slice_idle,
            strict: self.config.strict_guarantees,
            rotational: self.rotational,
            queueing: self.hw_tag.queueing(),
            sync: queue.sync,
            idle_class: queue.class_index() == CLASSES - 1,
            process_gone: queue.process_gone,
            seeky: queue.seek.seeky(),
            io_bound: queue.io_bound,
            short_think_time: self.short_think_time(id),
            raising: queue.raising.coefficient,
            dispatched: queue.dispatched,
            in_flight: self.in_flight.len(),
            busy_queues: self.busy_queues(),
            raised_busy_queues: self.busy.raised(),
            asymmetric: self.asymmetric(id),
        }
    }

    /// Mean think time within slice_idle (or too few samples to say otherwise), for a live process.
    fn short_think_time(&self, id: QueueId) -> bool {
        let queue = self.queue(id);
        if !queue.sync || queue.process_gone {
            return false;
        }
        !queue.think_time.valid() || queue.think_time.mean <= self.config.slice_idle
    }

    fn better_to_idle(&self, id: QueueId) -> bool {
        self.idle_inputs(id).better_to_idle()
    }

    /// What a request costs its queue's budget: its size, ×3 for async requests of an unraised
    /// queue in a symmetric scenario.
    fn cost(&self, id: QueueId, request: &Request) -> u64 {
        let queue = self.queue(id);
        let sectors = u64::from(request.sectors);
        if queue.sync || queue.raising.coefficient > 1 || self.asymmetric(id) {
            sectors
        } else {
            sectors * ASYNC_CHARGE_FACTOR
        }
    }

    /// The cost of a queue's next request (0 if it has none).
    fn next_cost(&self, id: QueueId) -> u64 {
        self.queue(id)
            .next_request
            .map_or(0, |slot| self.cost(id, self.store.slab.get(slot)))
    }

    fn fifo_expire(&self, sync: bool) -> Nanos {
        if sync {
            self.config.fifo_expire_sync
        } else {
            self.config.fifo_expire_async
        }
    }
}

/// BFQ's weight for a group: its own when set (1–1000, else an error), 100 otherwise.
fn bfq_group_weight(group: &Group) -> Result<u32, TunableError> {
    if !group.weight_set {
        return Ok(DEFAULT_GROUP_WEIGHT);
    }
    if !GROUP_WEIGHT_RANGE.contains(&group.weight) {
        return Err(TunableError::GroupWeight {
            scheduler: "bfq".into(),
            group: group.path.clone(),
            weight: group.weight,
            min: *GROUP_WEIGHT_RANGE.start(),
            max: *GROUP_WEIGHT_RANGE.end(),
        });
    }
    Ok(group.weight)
}

/// An entity per group, parents before children, with BFQ's weights: the group's own when
/// set (1–1000), 100 otherwise.
fn build_groups(engine: &mut Wf2q, groups: &GroupTree) -> Result<Vec<EntityId>, TunableError> {
    let mut entities: Vec<EntityId> = Vec::with_capacity(groups.len());
    push_group_entities(engine, &mut entities, groups, groups.len())?;
    Ok(entities)
}

/// Entities for the groups of `groups` from the first `entities` lacks up to (not
/// including) index `upto`, each under its parent's (parents come first in a tree).
fn push_group_entities(
    engine: &mut Wf2q,
    entities: &mut Vec<EntityId>,
    groups: &GroupTree,
    upto: usize,
) -> Result<(), TunableError> {
    for (id, group) in groups.iter().take(upto).skip(entities.len()) {
        let weight = bfq_group_weight(group)?;
        let parent = group.parent.map(|p| entities[p.index()]);
        entities.push(engine.add(Owner::Group(id.index()), parent, 1, u64::from(weight)));
    }
    Ok(())
}

impl Bfq {
    /// Entities for the groups of `groups` up to `group`, each under its parent's, and their
    /// busy counts.
    fn grow_groups(&mut self, group: GroupId, groups: &GroupTree) -> Result<(), TunableError> {
        let before = self.group_entities.len();
        let upto = group.index() + 1;
        let answer = push_group_entities(&mut self.engine, &mut self.group_entities, groups, upto);
        for _ in before..self.group_entities.len() {
            self.busy.add_group();
        }
        answer
    }
}

impl Scheduler for Bfq {
    fn name(&self) -> &'static str {
        "bfq"
    }

    fn insert(&mut self, request: Request, now: Nanos) -> Inserted {
        self.arrive(request, now)
    }

    fn dispatch(&mut self, now: Nanos) -> Dispatch {
        self.dispatch_request(now)
    }

    fn complete(&mut self, completion: &Completion, now: Nanos) {
        self.completed(completion, now);
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn process_exited(&mut self, process: ProcessId, now: Nanos) {
        self.exited(process, now);
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_enabled(on);
    }

    fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        self.trace.drain_into(out);
    }

    /// The weight of the group's entity: the group's own (1–1000) when set, else 100.
    fn group_weight(&self, group: GroupId) -> Option<u32> {
        if group == GroupId::ROOT {
            return None;
        }
        let entity = *self.group_entities.get(group.index())?;
        u32::try_from(self.engine.get(entity).weight).ok()
    }

    /// The new weight waits in the group entity's `new_weight` and takes effect when the
    /// entity is next put on its service tree (activated or requeued after service), as the
    /// kernel's `__bfq_entity_update_weight_prio` applies `entity->new_weight` when
    /// `prio_changed` is set (block/bfq-wf2q.c, 5.x–6.x): the timestamps the entity holds
    /// were computed with the old weight and stay. BFQ limits nothing: limits are ignored.
    fn update_group(
        &mut self,
        group: GroupId,
        settings: &Group,
        _now: Nanos,
    ) -> Result<(), TunableError> {
        let weight = bfq_group_weight(settings)?;
        if let Some(&entity) = self.group_entities.get(group.index()) {
            self.engine.get_mut(entity).new_weight = u64::from(weight);
        }
        Ok(())
    }

    /// A new group entity under its parent's, idle until a queue of the group becomes
    /// busy, as `bfq_pd_alloc`/`bfq_pd_init` make a `bfq_group` when a cgroup is created
    /// (block/bfq-cgroup.c, 5.x–6.x).
    fn add_group(
        &mut self,
        group: GroupId,
        groups: &GroupTree,
        _now: Nanos,
    ) -> Result<(), TunableError> {
        self.grow_groups(group, groups)
    }
}

#[cfg(test)]
mod tests;
