//! Which CFQ a `version` value selects, and what each modelled release changed.
//!
//! `version` is `major × 10000 + minor × 100 + patch` (2.6.28 → 20628); CFQ behaves as the
//! newest release modelled here that is not after it. Four releases are modelled:
//!
//! | release | what it changed (and the source read) |
//! |---|---|
//! | 2.6.10 | Jens Axboe's first time-sliced CFQ ("Time sliced CFQ io scheduler", LKML 2004-12-02, patched on 2.6.10): one queue per process holding *all* its requests, reads and writes, sync or not; every queue gets the same slice (83 ms) and may idle 4 ms for its next request; queues take turns round robin; the slice starts at the queue's first dispatch; up to `quantum` requests move to the block layer's dispatch list at a time. The post gives only the defaults and the behaviour; the structure follows the closest stored descendant, `drivers/block/cfq-iosched.c` of 2.6.13 (`cfq_select_queue`, `cfq_arm_slice_timer`, `__cfq_dispatch_requests`). |
//! | 2.6.28 | The 2.6.2x CFQ (`block/cfq-iosched.c` of 2.6.28/2.6.29): writeback shares one async queue per priority; sync slices 100 ms, async 40 ms; queues on one service tree keyed by join time plus a priority offset; slices start at the first completion; a dispatch round moves requests to the dispatch list until the caps stop it — `quantum` (4) per queue only while other queues are busy, so a lone async queue empties itself into the list; async waits while sync requests are out; a seeky process (mean seek over 8192 sectors) gets no idle window on a queueing device and a 2 ms one otherwise; no idling while any request is at the device; preemption by a sync request over async, a request close to the head while idling, or an expired slice. |
//! | 2.6.30 | One request per dispatch call instead of batches ("cfq-iosched: change dispatch logic to deal with single requests at the time", the fix that came out of the January 2009 latency thread): the dispatch list is gone, `quantum` bounds each queue's requests at the device (4 × `quantum` for a lone queue), and an async slice ends after its request budget counted over the slice. |
//! | 4.4 | Everything else in this module: groups, workload types, `low_latency`, the async depth ramp, IOPS mode (Linux 4.2–4.4). From 2.6.33 to 2.6.38 `group_isolation` defaulted to 0; a value in that range keeps that default. |
//!
//! Releases between those modelled behave as the one before them (2.6.31 as 2.6.30, 3.0 as
//! 4.4's engine with `group_isolation=1`).

/// 2.6.10 with the December 2004 time-sliced patch.
pub const V2_6_10: i64 = 20610;
/// 2.6.28.
pub const V2_6_28: i64 = 20628;
/// 2.6.30.
pub const V2_6_30: i64 = 20630;
/// 2.6.33: groups and workload types (the modern engine) from here on.
pub const V2_6_33: i64 = 20633;
/// 2.6.39: seeky queues always stay in their groups.
pub const V2_6_39: i64 = 20639;
/// 4.4: the default.
pub const V4_4: i64 = 40400;

/// The CFQ generation a version selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// The December 2004 time-sliced patch: per-process queues for everything.
    TimeSliced2004,
    /// 2.6.28: one service tree, batches into the dispatch list.
    Tree2628,
    /// 2.6.30: as 2.6.28, one request per dispatch call.
    Tree2630,
    /// 2.6.33 onwards, modelled as 4.2–4.4.
    Modern,
}

impl Era {
    /// The generation `version` selects.
    pub fn of(version: i64) -> Self {
        if version >= V2_6_33 {
            Self::Modern
        } else if version >= V2_6_30 {
            Self::Tree2630
        } else if version >= V2_6_28 {
            Self::Tree2628
        } else {
            Self::TimeSliced2004
        }
    }

    /// Whether the legacy (pre-group) engine runs it.
    pub fn legacy(self) -> bool {
        self != Self::Modern
    }
}

/// A tunable default that differs from 4.4's in the selected release, if it does.
pub fn default_for(version: i64, name: &str) -> Option<i64> {
    let era = Era::of(version);
    match (era, name) {
        // HZ/12 and HZ/250 in the 2004 patch ("83ms slice time with allowed 4ms idle period").
        (Era::TimeSliced2004, "slice_sync") => Some(83),
        (Era::TimeSliced2004, "slice_idle") => Some(4),
        // `cfq_quantum = 4` until 2.6.33 raised it to 8.
        (Era::TimeSliced2004 | Era::Tree2628 | Era::Tree2630, "quantum") => Some(4),
        // group_isolation existed from 2.6.33 to 2.6.38 with default 0.
        (Era::Modern, "group_isolation") if version < V2_6_39 => Some(0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_select_the_newest_modelled_release_not_after_them() {
        assert_eq!(Era::of(20610), Era::TimeSliced2004);
        assert_eq!(Era::of(20627), Era::TimeSliced2004);
        assert_eq!(Era::of(20628), Era::Tree2628);
        assert_eq!(Era::of(20629), Era::Tree2628);
        assert_eq!(Era::of(20630), Era::Tree2630);
        assert_eq!(Era::of(20632), Era::Tree2630);
        assert_eq!(Era::of(20635), Era::Modern);
        assert_eq!(Era::of(V4_4), Era::Modern);
    }

    #[test]
    fn defaults_follow_the_release() {
        assert_eq!(default_for(20610, "slice_sync"), Some(83));
        assert_eq!(default_for(20610, "slice_idle"), Some(4));
        assert_eq!(default_for(20628, "slice_sync"), None);
        assert_eq!(default_for(20628, "quantum"), Some(4));
        assert_eq!(default_for(20635, "group_isolation"), Some(0));
        assert_eq!(default_for(20639, "group_isolation"), None);
        assert_eq!(default_for(V4_4, "quantum"), None);
    }
}
