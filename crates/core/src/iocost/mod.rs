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
//! - [`vrate`]: the period's busy level and the vrate step it takes within `[min, max]`.
//!
//! Every function takes its inputs as arguments and reads no clock.

pub mod budget;
pub mod donation;
pub mod hweight;
pub mod model;
pub mod qos;
pub mod vrate;

/// Virtual time units in one second of device time at vrate 100% (2^37, as the kernel).
pub const VTIME_PER_SEC: u64 = 1 << 37;
/// Virtual time units in one microsecond at vrate 100%.
pub const VTIME_PER_USEC: u64 = VTIME_PER_SEC / 1_000_000;
/// Parts per million, the unit of percentiles and vrate bounds in `io.cost.qos`.
pub const MILLION: u64 = 1_000_000;
