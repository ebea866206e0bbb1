//! Per-group bandwidth and IOPS limits (cgroup v2 `io.max`) that keep I/O priorities.
//!
//! # Where the kernel loses priorities
//!
//! The kernel's blk-throttle (`block/blk-throttle.c`: `tg_may_dispatch`, `throtl_dispatch_tg`)
//! works above the elevator. A group's bios over its limit wait in one FIFO per direction, and
//! timer-driven rounds hand each group at most 8 bios at a time (about 75 % reads, 25 % writes)
//! down to the elevator. Inside a group, the order is arrival order: an RT0 reader and a BE7
//! reader sharing an 8 MB/s limit leave the throttle in turns and each gets 4.2 MB/s
//! (seed 002). The elevator below never sees enough of either to apply its priorities, because
//! the throttle, not the disk, is the bottleneck.
//!
//! # What ioslice does instead
//!
//! The limit layer ([`LimitLayer`]) wraps any policy and holds back the requests of limited
//! groups, but it releases them in priority order, so the limit decides *how much* a group
//! gets and priorities still decide *who inside the group* gets it:
//!
//! - **Classes first.** Among the held requests of one group and direction, RT leaves before
//!   BE and BE before IDLE.
//! - **Levels by weight.** Within a class, processes share by start-time fair queueing with
//!   BFQ's per-level weight `(8 − level) × 10`: a BE0 reader gets eight times the bytes of a
//!   BE7 reader while both wait. Each process's requests leave in arrival order.
//! - **Groups by weight.** Sibling groups waiting under a shared limited ancestor share it by
//!   the same fair queueing on their group weights; a group's own processes count as one more
//!   sibling with the group's weight. A sibling held back by a limit of its own is skipped
//!   and comes back without credit for the time it waited.
//!
//! Once released, a request goes into the wrapped policy with its submit time unchanged,
//! and that policy orders it as it would any other (sector order, slices, idling). The layer
//! decides the order in which a limited group's requests reach the policy; a policy that
//! itself holds a released request back can still change who goes first.
//! Requests of a group with no limit on itself or any ancestor, in that direction, go
//! straight into the policy.
//!
//! # Keeping the order through an idling policy
//!
//! A policy that idles waits for the process it served last. Anticipatory scheduling, which
//! knows no priorities, used to wait for a BE reader while an RT reader's released request
//! sat in it; the BE reader's next request then left the layer (the RT request was no longer
//! there to go first) and AS sent it ahead, over and over until the RT request's deadline:
//! an RT and a BE reader that keep one request each in flight shared a limited group evenly.
//!
//! So the layer tells the policy which processes are *outranked*
//! ([`Scheduler::set_outranked`](crate::Scheduler::set_outranked)): a process of a limited
//! group is, while a request of another process of the same limited subtree, released by
//! the layer, waits in the policy and the buckets would hold the process's next request
//! back. The layer released that request first, so it leaves first; the policy does not
//! wait for an outranked process. While the buckets would let the process's next request
//! straight through, the limit does not bind and the policy may idle as it would without
//! the layer. Policies that ignore the news (the trait's default) are unaffected.
//!
//! # Throttling above the elevator instead
//!
//! `throttle=above` on a group ([`Throttle::Above`]) makes its limit behave as blk-throttle's
//! and io-throttle's: the group's held requests leave in arrival order, whatever their
//! classes and levels, and the policy is never told that a process is outranked. Sibling
//! groups under a shared limited ancestor still share it by weight. Such a group's limits
//! are not token buckets but blk-throttle's slices ([`ThrottleSlice`]): a whole slice's worth
//! of the rate (the `burst`, 100 ms by default) becomes available at each slice boundary, so
//! a group that keeps requests queued sends them in bursts a slice apart, released by
//! blk-throttle's timer-driven rounds (at most 8 requests of a group a round, 6 reads and 2
//! writes, 32 in all; `layer/rounds.rs`). This is the second-level controller the 2009
//! debate measured through Andrea Righi's io-throttle (seed 002: an RT0 and a BE7 reader sharing
//! 8 MiB/s get 4.2 MB/s each): `throttle=io-throttle` ([`Throttle::IoThrottle`]) holds
//! requests above the elevator in arrival order too, but paces them by the token buckets
//! below, each request leaving as soon as its tokens are there, as io-throttle slept a task
//! until its I/O was within the limit.
//!
//! # Accounting
//!
//! Held in the controller (the default), every limit is a token bucket per group and direction, one for bytes (`rbps`, `wbps`)
//! and one for requests (`riops`, `wiops`), refilled continuously at the rate in exact
//! integer arithmetic ([`TokenBucket`]). A bucket holds `rate × burst`, where the burst is
//! [`DEFAULT_BURST`] (100 ms, blk-throttle's `throtl_slice` on rotational devices) unless set.
//! Buckets start full: like the kernel's first slice, a group may send one burst's worth at
//! once at the start. A request of `s` bytes may leave when every bucket of its group and of
//! every ancestor holds at least `min(s, depth)` (so a request larger than a bucket still
//! leaves once that bucket is full), and it is then charged to all of them, which may go
//! into debt. A child never exceeds its parent: the parent's bucket is on the child's path.
//! Reads and writes are limited independently. Requests are charged once, as submitted; a
//! request merged into another later, inside the policy, does not refund its charge.
//!
//! A zero rate is taken as one byte or one request per second; the command line refuses it.

mod bucket;
mod fair;
mod layer;
mod slice;

pub use bucket::TokenBucket;
pub use fair::{process_weight, Lane, VirtualClock};
pub use layer::LimitLayer;
pub use slice::{ThrottleSlice, JIFFY};

use crate::time::ms;
use crate::{Direction, Nanos};

/// The burst a bucket holds when none is set: 100 ms worth of its rate.
pub const DEFAULT_BURST: Nanos = ms(100);

/// Where a group's limit holds its requests, and so in what order they leave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Throttle {
    /// In the controller, released in priority order: classes first, then levels by weight
    /// (ioslice's own; see the module doc).
    #[default]
    Priority,
    /// Above the elevator, as blk-throttle and io-throttle hold them: one queue per group and
    /// direction, released in arrival order whatever the priorities, and the policy is not
    /// told whom not to idle for. `throttle=above` on the command line.
    Above,
    /// Above the elevator as Andrea Righi's io-throttle (the 2009 patches seed 002 ran)
    /// held them: in arrival order, as [`Throttle::Above`], but each limit a token bucket that
    /// lets a request go as soon as its tokens are there, without blk-throttle's slices.
    /// `throttle=io-throttle` on the command line.
    IoThrottle,
}

impl Throttle {
    /// The name `--cgroup NAME:throttle=…` takes.
    pub fn name(self) -> &'static str {
        match self {
            Throttle::Priority => "priority",
            Throttle::Above => "above",
            Throttle::IoThrottle => "io-throttle",
        }
    }
}

/// A group's limits; `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Read bytes per second.
    pub read_bps: Option<u64>,
    /// Write bytes per second.
    pub write_bps: Option<u64>,
    /// Read requests per second.
    pub read_iops: Option<u64>,
    /// Write requests per second.
    pub write_iops: Option<u64>,
    /// How much of each rate a bucket holds, as a duration; `None` is [`DEFAULT_BURST`].
    pub burst: Option<Nanos>,
    /// In what order held requests leave.
    pub throttle: Throttle,
    /// The io.latency target (`--cgroup NAME:latency=…`): not a limit on the group itself
    /// but on its siblings, whose depth is cut while the group misses it
    /// ([`crate::iolatency`]); `None` or 0: none. Not counted by [`Limits::is_unlimited`].
    pub latency: Option<Nanos>,
}

impl Limits {
    /// Whether no limit is set (a burst alone limits nothing).
    pub fn is_unlimited(&self) -> bool {
        [
            self.read_bps,
            self.write_bps,
            self.read_iops,
            self.write_iops,
        ]
        .iter()
        .all(Option::is_none)
    }

    /// Bytes per second in a direction; a discard is held to the write limit, as
    /// blk-throttle indexes its limits by `bio_data_dir`.
    pub fn bps(&self, direction: Direction) -> Option<u64> {
        match direction {
            Direction::Read => self.read_bps,
            Direction::Write | Direction::Discard => self.write_bps,
        }
    }

    /// Requests per second in a direction; a discard counts against the write limit.
    pub fn iops(&self, direction: Direction) -> Option<u64> {
        match direction {
            Direction::Read => self.read_iops,
            Direction::Write | Direction::Discard => self.write_iops,
        }
    }

    /// The burst duration in force.
    pub fn burst_or_default(&self) -> Nanos {
        self.burst.unwrap_or(DEFAULT_BURST)
    }
}

/// The policy with the limit layer around it when a group has limits (see the module doc);
/// the policy itself, untouched, when none has.
pub fn wrap(
    policy: Box<dyn crate::Scheduler>,
    groups: &crate::GroupTree,
) -> Box<dyn crate::Scheduler> {
    if !groups.has_limits() {
        return policy;
    }
    Box::new(LimitLayer::new(policy, groups))
}
