//! io.latency's arithmetic: the window a target implies, the parent's scale cookie steps, and
//! a group's depth steps (see the [module doc](super)). Pure functions, unit-tested here.

use crate::time::{ms, SECOND};
use crate::Nanos;

/// Where every parent's scale cookie starts, and where it means "no throttling".
pub const DEFAULT_COOKIE: u32 = 1_000_000;
/// The shortest window.
const MIN_WINDOW: Nanos = ms(100);
/// The longest window.
const MAX_WINDOW: Nanos = SECOND;
/// A window is this many targets long, within the bounds.
const WINDOW_TARGETS: u64 = 16;
/// At most one scale event per parent in this time.
pub(super) const MIN_ADJUST: Nanos = ms(500);
/// A scale group's met windows must hold this many requests to raise the cookie.
pub(super) const MIN_GOOD_SAMPLES: u64 = 5;
/// The timer's period.
pub(super) const TIMER: Nanos = SECOND;
/// The timer forgets the scale group this long after the last scale event.
pub(super) const FORGET_SCALE_GROUP: Nanos = 5 * SECOND;

/// The window a group of `target` is judged over: 16 targets, within 100 ms and 1 s.
pub fn window_of(target: Nanos) -> Nanos {
    target
        .saturating_mul(WINDOW_TARGETS)
        .clamp(MIN_WINDOW, MAX_WINDOW)
}

/// A step's size: a quarter of `nr_requests` down, a sixteenth up, at least one.
fn step(nr_requests: u32, up: bool) -> u32 {
    let shift = if up { 4 } else { 2 };
    (nr_requests >> shift).max(1)
}

/// The scale cookie after one step from `cookie`, up or down, for a queue of `nr_requests`.
/// Up: back to the default if a full step would pass it, by one while the cookie is more
/// than `nr_requests` below the default, else by a step. Down: by a step while it is within
/// `nr_requests` of the default, then by one, and no further once it is twice
/// `nr_requests` below.
pub fn cookie_step(cookie: u32, nr_requests: u32, up: bool) -> u32 {
    let scale = step(nr_requests, up);
    let below = DEFAULT_COOKIE.saturating_sub(cookie);
    if up {
        if cookie.saturating_add(scale) > DEFAULT_COOKIE {
            DEFAULT_COOKIE
        } else if below > nr_requests {
            cookie + 1
        } else {
            cookie + scale
        }
    } else if below > nr_requests {
        if below < nr_requests.saturating_mul(2) {
            cookie.saturating_sub(1)
        } else {
            cookie
        }
    } else {
        cookie.saturating_sub(scale)
    }
}

/// A group's depth after one step from `depth` (`None`: unlimited), up or down, for a queue
/// of `nr_requests`: halved down to 1, or raised by a sixteenth of `nr_requests` up to it.
pub fn depth_step(depth: Option<u32>, nr_requests: u32, up: bool) -> Option<u32> {
    let current = depth.unwrap_or(u32::MAX).min(nr_requests);
    if up {
        if current < nr_requests {
            Some((current + step(nr_requests, true)).min(nr_requests))
        } else {
            depth
        }
    } else {
        Some((current >> 1).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::us;

    #[test]
    fn windows_are_sixteen_targets_within_bounds() {
        assert_eq!(window_of(us(500)), ms(100));
        assert_eq!(window_of(ms(10)), ms(160));
        assert_eq!(window_of(ms(75)), SECOND);
        assert_eq!(window_of(Nanos::MAX), SECOND);
    }

    /// With 64 requests: 16 down while within 64 of the default, then by one down to 128
    /// below, where it stays; up by one until within 64, then by 4, then to the default.
    #[test]
    fn the_cookie_steps_as_the_kernel_scales_it() {
        let mut cookie = DEFAULT_COOKIE;
        let mut downs = Vec::new();
        for _ in 0..6 {
            cookie = cookie_step(cookie, 64, false);
            downs.push(DEFAULT_COOKIE - cookie);
        }
        assert_eq!(downs, [16, 32, 48, 64, 80, 81]);
        let mut floor = cookie;
        for _ in 0..100 {
            floor = cookie_step(floor, 64, false);
        }
        assert_eq!(DEFAULT_COOKIE - floor, 128);
        let mut up = floor;
        let mut ups = 0;
        while DEFAULT_COOKIE - up > 64 {
            up = cookie_step(up, 64, true);
            ups += 1;
        }
        assert_eq!(ups, 64);
        assert_eq!(cookie_step(up, 64, true), DEFAULT_COOKIE - 60);
        assert_eq!(cookie_step(DEFAULT_COOKIE - 3, 64, true), DEFAULT_COOKIE);
        assert_eq!(cookie_step(DEFAULT_COOKIE, 64, true), DEFAULT_COOKIE);
        // A queue of 2: steps of one.
        assert_eq!(cookie_step(DEFAULT_COOKIE, 2, false), DEFAULT_COOKIE - 1);
    }

    #[test]
    fn depth_halves_to_one_and_climbs_by_sixteenths() {
        let mut depth = None;
        let mut downs = Vec::new();
        for _ in 0..8 {
            depth = depth_step(depth, 64, false);
            downs.push(depth.unwrap_or(0));
        }
        assert_eq!(downs, [32, 16, 8, 4, 2, 1, 1, 1]);
        let mut ups = Vec::new();
        for _ in 0..17 {
            depth = depth_step(depth, 64, true);
            ups.push(depth.unwrap_or(0));
        }
        assert_eq!(ups[..4], [5, 9, 13, 17]);
        assert_eq!(ups[15..], [64, 64]);
        assert_eq!(depth_step(None, 64, true), None, "unlimited stays so");
    }
}
