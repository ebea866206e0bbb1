//! What a simulation runs with ([`SimConfig`]): the run's description shared with the
//! real-I/O driver ([`RunSpec`]: seed, policy, groups, ...), the device, and the simulated
//! host's settings, with the host's choices of
//! block layer ([`BlockLayer`]) and of how O_DIRECT writes are marked ([`DirectWrites`]).
//!
//! The driver (`simulation`) reads this configuration and `--host key=value,...` (`host`)
//! writes into it; neither is needed to build one.

use ioslice_core::{Nanos, SchedSpec};
pub use ioslice_fio::run_spec::{GroupAction, GroupChange, RunSpec};

use crate::page_cache::PageCacheConfig;
use crate::preset::DeviceSpec;

/// How the block layer marks O_DIRECT writes for the elevator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectWrites {
    /// Sync requests, as Linux has marked them since the direct-I/O sync-write hint of
    /// December 2004 (`PF_SYNCWRITE`, later `WRITE_ODIRECT`/`REQ_SYNC`).
    Sync,
    /// Async requests, as the 2.6 kernels before that hint treated them (seed 003's kernel).
    Async,
}

/// The block layer between the jobs and the elevator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockLayer {
    /// Linux 2.6's single request queue: a completion dispatches the next request at once,
    /// and requests submitted at one instant meet in the elevator before it dispatches
    /// (plugging). noop, deadline, anticipatory and cfq were written for it.
    SingleQueue,
    /// blk-mq (Linux 3.13 and later): each submission runs the queue, so a request goes to a
    /// device with a free tag as soon as it is inserted; after a completion the queue is run
    /// by a worker thread [`SimConfig::BLK_MQ_QUEUE_RUN_DELAY`] later. bfq and mq-deadline were
    /// written for it.
    BlkMq,
}

/// What a simulation runs with.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The seed, policy, groups (weights, limits, changes during the run), controller, job
    /// limit, stop signal, progress and logs: what the real-I/O driver is given too.
    pub run: RunSpec,
    /// The device preset and its overrides.
    pub device: DeviceSpec,
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
    /// The block layer around the elevator; `None`: the one the policy was written for
    /// (see [`SimConfig::block_layer_for`]).
    pub block_layer: Option<BlockLayer>,
    /// From a completion to the elevator's next dispatch, when no submission runs the queue
    /// first; `None`: the block layer's (see [`SimConfig::queue_run_delay_for`]).
    pub queue_run_delay: Option<Nanos>,
}

impl SimConfig {
    /// blk-mq's queue run after a completion: the completion path hands it to a worker
    /// thread (kblockd) instead of dispatching itself, so a process woken by the completion
    /// usually submits its next request first. Measured on Linux 6.18 under bfq with a
    /// loop device over `ioslice emulate`: 41 µs from a completion to the worker's dispatch
    /// (median; 33 µs at the 10th percentile, 58 µs at the 90th), while the woken process
    /// submitted after 21 µs (`docs/fidelity.md`).
    pub const BLK_MQ_QUEUE_RUN_DELAY: Nanos = 40_000;

    /// The block layer: what was set, else the one the policy was written for. bfq and
    /// mq-deadline are blk-mq elevators; noop, deadline, anticipatory and cfq are the 2.6
    /// single-queue elevators, whose completion path ran the queue itself (the policy sees
    /// the device free at the completion: the deceptive idleness anticipation and idling
    /// defeat) and whose plugging let requests submitted together meet before dispatch.
    pub fn block_layer_for(&self) -> BlockLayer {
        self.block_layer.unwrap_or_else(|| {
            let blk_mq = ioslice_core::registry::lookup(&self.run.scheduler.name)
                .is_ok_and(|info| info.blk_mq);
            if blk_mq {
                BlockLayer::BlkMq
            } else {
                BlockLayer::SingleQueue
            }
        })
    }

    /// The queue run delay: what was set, else the block layer's.
    pub fn queue_run_delay_for(&self) -> Nanos {
        self.queue_run_delay
            .unwrap_or(match self.block_layer_for() {
                BlockLayer::BlkMq => Self::BLK_MQ_QUEUE_RUN_DELAY,
                BlockLayer::SingleQueue => 0,
            })
    }

    /// The default host latency: 20 µs, a wake-up and two system calls on a
    /// mid-2000s to present-day machine.
    pub const DEFAULT_HOST_LATENCY: Nanos = 20_000;

    /// A configuration with no extra groups and the default host latency.
    pub fn new(seed: u64, scheduler: SchedSpec, device: DeviceSpec) -> Self {
        Self {
            run: RunSpec::new(seed, scheduler),
            device,
            host_latency: Self::DEFAULT_HOST_LATENCY,
            page_cache: PageCacheConfig::default(),
            direct_writes: DirectWrites::Sync,
            driver_queue: 0,
            block_layer: None,
            queue_run_delay: None,
        }
    }
}
