//! The period timer's vrate control: a busy level from device saturation and a vrate step.
//!
//! At the end of each period iocost judges the device (`block/blk-iocost.c`, 5.4 to 6.x):
//! saturated when more than [`RQ_WAIT_BUSY_PCT`] of the period was spent waiting for
//! request slots or when more completions than the QoS percentile allows missed their
//! latency target; clearly idle when all three signals are under [`UNBUSY_THR_PCT`] of
//! their thresholds. Saturation raises a busy level, idleness with groups short of budget
//! lowers it, anything else resets it; but while some group has a request in flight since
//! before the period began (lagging: the device may be slower than the signals say), an
//! idle device's level only stops falling below zero and vrate is not raised (5.10 on). The level indexes a table of percentage steps
//! (growing with persistence) that move vrate down or up within `[min, max]`; a vrate
//! outside the bounds is brought back by [`CLAMP_ADJ_PCT`] a period.

use super::qos::Qos;
use super::MILLION;

/// Share of the period waiting for request slots that counts as saturation.
pub const RQ_WAIT_BUSY_PCT: u64 = 5;
/// Signals under this share of their thresholds count as idle.
pub const UNBUSY_THR_PCT: u64 = 75;
/// Per-period step that brings an out-of-bounds vrate back inside.
pub const CLAMP_ADJ_PCT: u64 = 4;
/// Busy level bound either way.
pub const BUSY_LEVEL_MAX: i32 = 1000;

/// Step in percent for each busy level (absolute value); the last entry applies beyond.
const ADJ_PCT: [u64; 49] = {
    let mut t = [0u64; 49];
    let mut i = 0;
    while i < 49 {
        t[i] = match i {
            0..=3 => 0,
            4..=19 => 1,
            20..=35 => 2,
            36..=43 => 4,
            44..=47 => 8,
            _ => 16,
        };
        i += 1;
    }
    t
};

/// What one period measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PeriodStats {
    /// Share of the period requests waited for a slot, percent.
    pub rq_wait_pct: u64,
    /// Reads that missed `rlat`, ppm of completed reads.
    pub read_missed_ppm: u64,
    /// Writes that missed `wlat`, ppm of completed writes.
    pub write_missed_ppm: u64,
    /// Groups that ran out of budget with requests waiting.
    pub shortages: u32,
    /// Groups with a request in flight since before the period began (and issued within
    /// the last [`MAX_LAGGING_PERIODS`]): the device may be slower than it looks.
    pub lagging: u32,
}

/// A request in flight longer than this many periods no longer counts as lagging.
pub const MAX_LAGGING_PERIODS: u64 = 10;

/// The next busy level after a period.
pub fn next_busy_level(level: i32, qos: &Qos, s: &PeriodStats) -> i32 {
    let rthr = MILLION - qos.rppm.min(MILLION);
    let wthr = MILLION - qos.wppm.min(MILLION);
    let over = s.rq_wait_pct > RQ_WAIT_BUSY_PCT
        || (qos.rppm > 0 && s.read_missed_ppm > rthr)
        || (qos.wppm > 0 && s.write_missed_ppm > wthr);
    let under = s.rq_wait_pct <= RQ_WAIT_BUSY_PCT * UNBUSY_THR_PCT / 100
        && s.read_missed_ppm <= rthr * UNBUSY_THR_PCT / 100
        && s.write_missed_ppm <= wthr * UNBUSY_THR_PCT / 100;
    let next = if over {
        level.max(0) + 1
    } else if under {
        if s.shortages > 0 && s.lagging == 0 {
            level.min(0) - 1
        } else if s.shortages > 0 {
            // Throttling with spare capacity, but requests span periods: stop slowing
            // down, and wait them out before pushing the device harder.
            level.min(0)
        } else {
            level
        }
    } else {
        0
    };
    next.clamp(-BUSY_LEVEL_MAX, BUSY_LEVEL_MAX)
}

/// The next vrate (ppm of nominal) for a busy level: down when busy, up when short of
/// budget on an idle device, unchanged at level zero and while requests are lagging
/// behind an idle-looking device.
pub fn adjust(vrate_ppm: u64, busy_level: i32, lagging: u32, qos: &Qos) -> u64 {
    if busy_level == 0 || (busy_level < 0 && lagging > 0) {
        return vrate_ppm;
    }
    if vrate_ppm < qos.min_ppm {
        return (vrate_ppm * (100 + CLAMP_ADJ_PCT) / 100).min(qos.min_ppm);
    }
    if vrate_ppm > qos.max_ppm {
        return (vrate_ppm * (100 - CLAMP_ADJ_PCT) / 100).max(qos.max_ppm);
    }
    let idx = (busy_level.unsigned_abs() as usize).min(ADJ_PCT.len() - 1);
    let pct = if busy_level > 0 {
        100 - ADJ_PCT[idx]
    } else {
        100 + ADJ_PCT[idx]
    };
    (vrate_ppm * pct)
        .div_ceil(100)
        .clamp(qos.min_ppm, qos.max_ppm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qos() -> Qos {
        let mut q = Qos::SSD;
        q.apply("rpct=95 rlat=5000 min=50 max=150").unwrap();
        q
    }

    #[test]
    fn missed_latency_raises_the_busy_level_and_slows_vrate() {
        let q = qos();
        let busy = PeriodStats {
            read_missed_ppm: 60_000,
            ..Default::default()
        };
        let mut level = 0;
        let mut vrate = MILLION;
        for _ in 0..10 {
            level = next_busy_level(level, &q, &busy);
            vrate = adjust(vrate, level, 0, &q);
        }
        assert_eq!(level, 10);
        // Levels 1..3 hold, 4..10 take 1% each: 0.99^7 of nominal, rounded up each step.
        assert_eq!(vrate, 932_069);
    }

    #[test]
    fn shortage_on_an_idle_device_speeds_vrate_up_to_max() {
        let q = qos();
        let short = PeriodStats {
            shortages: 1,
            ..Default::default()
        };
        let mut level = 0;
        let mut vrate = MILLION;
        for _ in 0..200 {
            level = next_busy_level(level, &q, &short);
            vrate = adjust(vrate, level, 0, &q);
        }
        assert_eq!(level, -200);
        assert_eq!(vrate, 1_500_000);
    }

    #[test]
    fn lagging_requests_hold_the_level_and_the_vrate() {
        let q = qos();
        let lagging = PeriodStats {
            shortages: 1,
            lagging: 1,
            ..Default::default()
        };
        // A slowed-down device stops slowing, but is not sped up while requests lag.
        assert_eq!(next_busy_level(6, &q, &lagging), 0);
        assert_eq!(next_busy_level(-4, &q, &lagging), -4);
        assert_eq!(adjust(800_000, -4, 1, &q), 800_000);
        assert_eq!(adjust(800_000, -4, 0, &q), 808_000);
    }

    #[test]
    fn middling_signals_reset_and_out_of_bounds_vrate_creeps_back() {
        let q = qos();
        let mid = PeriodStats {
            rq_wait_pct: 4,
            ..Default::default()
        };
        assert_eq!(next_busy_level(7, &q, &mid), 0);
        assert_eq!(adjust(2_000_000, 5, 0, &q), 1_920_000);
        assert_eq!(adjust(100_000, -5, 0, &q), 104_000);
        assert_eq!(adjust(100_000, 0, 0, &q), 100_000);
    }
}
