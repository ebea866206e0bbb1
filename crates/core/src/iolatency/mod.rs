//! io.latency: cgroup v2's latency-target controller (blk-iolatency) as a layer above any
//! elevator. A group given a target is *protected*: when its completions miss the target,
//! its sibling groups with looser targets, or none, have the number of requests they may
//! have in flight cut down, and given back step by step once the target is met again.
//!
//! Learnt from Linux's `block/blk-iolatency.c` (Josef Bacik, 4.19; as of 5.x–6.x) and the
//! "IO Latency" part of `Documentation/admin-guide/cgroup-v2.rst`; written afresh from the
//! mechanism.
//!
//! # The mechanism
//!
//! - **Target and window.** A group's target is `io.latency`'s `target=` (µs in the kernel;
//!   here `--cgroup NAME:latency=75ms`). Its latencies are judged over windows of 16 times the
//!   target, at least 100 ms and at most 1 s (`iolatency_set_min_lat_nsec`). A window ends at
//!   the first of the group's completions past its length; latency is from submission
//!   (before any wait in this layer) to completion, as the kernel times a bio.
//! - **Percentile or mean.** On a non-rotational device a window is met when fewer than a
//!   tenth of its requests (at least one) took the target or longer: a p90 (`latency_sum_ok`,
//!   `ssd`); on a rotational one when the mean latency is within the target.
//! - **Scale cookie.** The parent keeps one *scale cookie* for its children, starting at
//!   1 000 000. A missed window lowers it (the protected group becomes the parent's *scale
//!   group* unless a tighter one is), a met window of the scale group raises it, at most once
//!   every 500 ms per parent; windows in between add up. Steps are a quarter of the queue's
//!   `nr_requests` down and a sixteenth up, by one once the cookie is more than `nr_requests`
//!   below the default, and it never sinks more than twice `nr_requests` below it
//!   (`scale_cookie_change`). A met window that is not the scale group's changes nothing;
//!   while the cookie is at its default a met window is not even added up. Fewer than 5
//!   requests in the added-up windows are too few to raise it.
//! - **Depth.** Each group compares the cookie with the last it saw whenever it submits:
//!   lower halves its depth (down to 1), higher adds a sixteenth of `nr_requests` (up to
//!   `nr_requests`), back at the default lifts the limit (`check_scale_change`,
//!   `scale_change`). A group whose own target is as tight as the scale group's or tighter,
//!   or that did 5 % of its siblings' sampled requests or fewer, is not scaled down. A
//!   request over its group's depth, or over an ancestor's, waits in this layer in arrival
//!   order until completions make room: only siblings at one level throttle each other.
//! - **Timer.** A one-second timer, armed by a submission, raises a lowered cookie whose
//!   parent has no scale group, and forgets the scale group 5 s after the last scale event:
//!   when the protected group stops, its siblings get their depth back over the following
//!   seconds.
//!
//! # Here
//!
//! [`IolatencyLayer`] wraps the policy, inside the limit layer (blk-throttle works on bios
//! before the request queue's rq-qos hooks) and around the other controllers (dm-ioband
//! hands the policy below it every request as the root group's, which would hide the groups
//! from this layer). `nr_requests` is the blk-mq default with an elevator, twice the
//! device's queue depth capped at 128 (`blk_mq_init_sched`). The device kind comes from
//! [`SchedulerContext::rotational`](crate::SchedulerContext): the simulator's device model
//! says it, the engine reads it from sysfs.
//!
//! A target is a per-group setting, as `io.latency` is a file of each cgroup: `--cgroup
//! NAME:latency=75ms` beside `weight=` and `io.max`'s keys (`latency=max` removes it), kept
//! with the group's limits ([`crate::limit::Limits::latency`]) so that every path that
//! carries a group's settings (job files' `; ioslice-at:` changes, the engine's builder, the
//! report) carries it too; the layer exists when some group has a target. It is not a
//! `--controller`: the kernel's io.latency runs beside whichever weight controller (or none)
//! the elevator has.
//!
//! Left out: the induced delay of a group already at depth 1 (`use_delay`, which throttles
//! I/O issued on its behalf by the root, such as swap), and the running average
//! `io.stat` reports.

mod layer;
mod scale;
mod stat;

pub use layer::IolatencyLayer;
pub use scale::{cookie_step, depth_step, window_of, DEFAULT_COOKIE};

use crate::{GroupTree, Scheduler, SchedulerContext};

/// The queue's `nr_requests` for a device of `queue_depth` commands: blk-mq's default with
/// an elevator, twice the depth capped at 128 (`BLKDEV_MAX_RQ`).
pub fn nr_requests(queue_depth: usize) -> u32 {
    let depth = u32::try_from(queue_depth.clamp(1, 128)).unwrap_or(128);
    2 * depth
}

/// Whether a group of `groups` has a latency target.
pub fn has_targets(groups: &GroupTree) -> bool {
    groups
        .iter()
        .any(|(_, group)| group.limits.latency.is_some())
}

/// The policy with the io.latency layer around it when a group has a latency target; the
/// policy itself, untouched, when none has.
pub fn wrap(policy: Box<dyn Scheduler>, context: &SchedulerContext) -> Box<dyn Scheduler> {
    if !has_targets(&context.groups) {
        return policy;
    }
    Box::new(IolatencyLayer::new(policy, context))
}
