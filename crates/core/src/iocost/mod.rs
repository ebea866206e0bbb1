//! iocost: the building blocks of the kernel's cgroup v2 proportional I/O controller.
//!
//! Learnt from Linux's `block/blk-iocost.c` (introduced in 5.4; the parameter tables and
//! the period logic as of 6.x) and the paper "IOCost: Block IO Control for Containers in
//! Datacenters" (ASPLOS '22). The code here is written afresh from the mechanism.
//!
//! This module owns the pure arithmetic of iocost, one concept per submodule:
//! - [`model`]: the linear cost model (`io.cost.model`) and its sequential/random rule,
//! - [`qos`]: the QoS parameters (`io.cost.qos`) and the period they imply,
//! - [`budget`]: the device vtime clock, group vtime, budget and debt,
//! - [`donation`]: lending unused share to busy siblings (work conservation),
//! - [`hweight`]: `io.weight` and the hierarchical weights derived from it,
//! - [`vrate`]: the period's busy level and the vrate step it takes within `[min, max]`,
//! - [`settings`]: the keys a run sets over the kernel's defaults for the device kind.
//!
//! Every function takes its inputs as arguments and reads no clock.
//!
//! # As a controller of a run
//!
//! [`IocostLayer`] (`--controller iocost[:key=value,...]`) puts these together above any
//! elevator, as the kernel runs iocost above the elevator:
//!
//! - **Cost.** Each request costs what the model says (sequential when it starts within
//!   16 MiB of where its group's last request ended, random beyond, plus its pages),
//!   charged to its group's vtime at the group's `hweight_inuse`.
//! - **Budget.** A group's request goes into the elevator while the group's vtime plus the
//!   charge does not pass the device's `vnow`, which runs at vrate; else it waits, in
//!   arrival order within its group, until `vnow` catches up. A group's unused budget is
//!   kept up to half a period's vtime.
//! - **Shares.** `hweight_active` is a group's `io.weight` over its active siblings', down
//!   the tree ([`hweight`]); a group stops counting after a period with no I/O.
//! - **Period.** Every QoS period (from the looser latency target) the layer judges the
//!   device: saturated when requests waited for a request slot more than 5% of the period,
//!   or when more reads or writes than `rpct`/`wpct` allow missed `rlat`/`wlat`; idle with
//!   groups short of budget otherwise. The busy level moves vrate down or up within
//!   `[min, max]` ([`vrate`]).
//! - **Donation.** A group that used well under its share lowers its `hweight_inuse` to its
//!   usage plus a margin, and the others are charged at the rest ([`donation`]); a donor
//!   that cannot afford its next request takes its share back at once.
//!
//! Left out: the debt of requests that cannot wait (swap, filesystem metadata), since no
//! request of a run is such (the arithmetic is [`budget::Account::force`]); the delay the
//! kernel adds on return to user space for a group in debt; the switch to `AUTOP_SSD_FAST`.
//! Donation follows 5.10 on (a donor's surplus to every taker by its active share), not
//! 5.4 to 5.9's walk that gave it to the donor's siblings first.

pub mod budget;
pub mod donation;
mod groups;
pub mod hweight;
mod layer;
pub mod model;
pub mod qos;
pub mod settings;
pub mod vrate;

pub use layer::IocostLayer;
pub use settings::IocostSettings;

/// Virtual time units in one second of device time at vrate 100% (2^37, as the kernel).
pub const VTIME_PER_SEC: u64 = 1 << 37;
/// Virtual time units in one microsecond at vrate 100%.
pub const VTIME_PER_USEC: u64 = VTIME_PER_SEC / 1_000_000;
/// Parts per million, the unit of percentiles and vrate bounds in `io.cost.qos`.
pub const MILLION: u64 = 1_000_000;
