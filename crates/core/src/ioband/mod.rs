//! dm-ioband, the proportional-bandwidth controller that sat above the elevator: one of the
//! three I/O controllers of the 2009 debate (seed 002), as a mode of a run
//! (`--controller ioband`), beside the elevator's own groups (cfq's and bfq's) and the
//! throttles above it (`throttle=io-throttle` or `throttle=above` on a limit).
//!
//! # What dm-ioband did
//!
//! Ryo Tsuruta's dm-ioband (VA Linux, 2008–2009; `Documentation/device-mapper/ioband.txt`
//! and `drivers/md/dm-ioband-policy.c` of its patches) was a device-mapper target. Each
//! *ioband group* (a cgroup, a uid, a pid) had a weight, and the groups shared the device in
//! *tokens*:
//!
//! - **Epochs.** At each epoch every group gets `bucket × weight / Σ weights + 1` tokens,
//!   where the bucket is twice `io_limit` (`DEFAULT_BUCKET` 2). A group may issue while it
//!   has tokens left (it may go into debt with its last request). When every group that has
//!   I/O waiting has used its tokens, a new epoch begins; a group that sat out epochs takes
//!   the tokens of up to `carryover` of them at once (`token` / bucket, 2048 / 256 = 8 by
//!   default). But while the device is busy, no new epoch begins as long as the *dominant*
//!   group (the active one with the most tokens left) still has more than an eighth of its
//!   share: the others wait for it to spend them. That is what keeps a slow group's share.
//! - **Token policies.** `weight` (the default) charges one token per request, so groups
//!   share *requests* by weight; `weight-iosize` charges the request's size (tokens in
//!   sectors, the bucket scaled by 8), so they share *bytes*. Neither counts disk time.
//! - **Which group goes.** Among the groups with tokens, the one with the most left in
//!   proportion to its share; it keeps going for a batch of 20 tokens before another is
//!   chosen.
//! - **Only when busy.** While fewer than `io_throttle` (4) requests are in progress below
//!   it, a request passes whatever its group's tokens; past `io_limit` (128) nothing passes.
//! - **FIFO inside a group.** A group's held bios wait in one queue, in arrival order.
//!
//! It knew nothing of the elevator below, and the elevator (cfq of 2.6.29, which had no
//! groups) knew nothing of the groups. So, as its critics said (seed 002): it breaks the
//! classes and priorities of cfq inside a group, because held requests leave in arrival
//! order; and a seeky group gets as many requests (or bytes) as a sequential one of the same
//! weight, which costs it far more disk time.
//!
//! # Here
//!
//! [`IobandLayer`] wraps any policy. Every group of the tree is one ioband group (flat: the
//! tree's nesting does not matter to dm-ioband), weighing its `cgroup_weight` or dm-ioband's
//! default of 100; the root is the default group. A request released to the policy is handed
//! over as if it belonged to the root group, so that the elevator applies no group scheduling
//! of its own, and gets its group back when the policy dispatches it. "In progress" is what
//! the layer released and the device has not completed. Left out: the extra tokens handed
//! out from the previous epoch's leftovers, and a group "going down" (losing its processes).

mod layer;

pub use layer::{IobandLayer, WORKER};

/// How a request is charged in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenPolicy {
    /// One token per request (dm-ioband's `weight`, its default).
    #[default]
    Weight,
    /// One token per sector (dm-ioband's `weight-iosize`).
    WeightIosize,
}

impl TokenPolicy {
    /// dm-ioband's name for it.
    pub fn name(self) -> &'static str {
        match self {
            TokenPolicy::Weight => "weight",
            TokenPolicy::WeightIosize => "weight-iosize",
        }
    }

    /// The policy named `name`, as dm-ioband names them.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "weight" => Some(TokenPolicy::Weight),
            "weight-iosize" => Some(TokenPolicy::WeightIosize),
            _ => None,
        }
    }

    /// log2 of the sectors a token stands for in the bucket's size (dm-ioband scales the
    /// bucket by a page's sectors for `weight-iosize`).
    fn unit_shift(self) -> u32 {
        match self {
            TokenPolicy::Weight => 0,
            TokenPolicy::WeightIosize => 3,
        }
    }
}

/// dm-ioband's settings, with its names and defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IobandSettings {
    /// How requests are charged.
    pub policy: TokenPolicy,
    /// The token pool (`token`): how many epochs' tokens a group may carry over, as
    /// `token / bucket`; 0 is dm-ioband's default, 2048 (in the policy's units).
    pub token: u64,
    /// Below this many requests in progress, requests pass whatever their tokens.
    pub io_throttle: usize,
    /// At this many requests in progress, nothing passes; also sizes the bucket.
    pub io_limit: usize,
}

impl Default for IobandSettings {
    fn default() -> Self {
        Self {
            policy: TokenPolicy::Weight,
            token: 0,
            io_throttle: 4,
            io_limit: 128,
        }
    }
}

/// dm-ioband's default group weight.
pub const DEFAULT_WEIGHT: u32 = 100;
/// dm-ioband's default token pool, in the policy's units.
const DEFAULT_TOKEN_POOL: u64 = 2048;
/// The bucket is this many times `io_limit`.
const BUCKET_FACTOR: u64 = 2;
/// Tokens a chosen group spends before another may be chosen.
const BATCH_TOKENS: i64 = 20;

/// Which controller enforces the groups' weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Controller {
    /// The elevator's own groups (cfq's and bfq's; the others have none).
    #[default]
    Elevator,
    /// dm-ioband above the elevator.
    Ioband(IobandSettings),
    /// Elevator fair queuing: an elevator per group under one B-WF2Q+ tree of groups
    /// ([`crate::elvfq`]).
    ElvFq(crate::elvfq::ElvFqSettings),
    /// blk-iocost above the elevator: each request's cost charged to its group's vtime,
    /// budgets by `io.weight`, vrate set from the device's saturation ([`crate::iocost`]).
    Iocost(crate::iocost::settings::IocostSettings),
}
