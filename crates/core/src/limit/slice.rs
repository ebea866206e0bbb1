//! blk-throttle's slice accounting: how much a group held above the elevator may dispatch,
//! and when its next request may go.
//!
//! Learnt from `block/blk-throttle.c` of Linux 6.16–6.18 (`tg_update_slice`,
//! `throtl_extend_slice`, `throtl_set_slice_end`, `tg_within_bps_limit`,
//! `tg_within_iops_limit`, `throtl_trim_slice`, `calculate_bytes_allowed`); this is our own
//! code. A group and direction keep a *slice*, a window of jiffies with a start and an end,
//! and count the bytes and requests dispatched since its start. A request may go when what
//! the rate allows over the time since the start, **rounded up to a whole slice**, covers
//! what was dispatched plus the request: so at the start of each slice a whole slice's worth
//! (100 ms of the rate on a rotational disk) becomes available at once, and a group that
//! keeps requests queued sends them in bursts, one slice apart. A request that does not fit
//! waits for the missing bytes at the rate (in whole jiffies, at least one) plus the rest of
//! the rounded slice; the pending timer then fires on that jiffy. A slice is extended while
//! requests flow (its end moves to a whole slice past the last evaluation, rounded up to a
//! multiple of the slice), and a new one, with nothing counted, starts only when a request
//! comes to an empty queue after the slice ended. After each dispatch the slice is trimmed:
//! once two slices or more have passed since its start, all but the last whole one are cut
//! off, with what they allowed.
//!
//! Time is counted in jiffies of [`JIFFY`] (HZ = 250, the kernel the throttle rows were
//! measured on: its trace logs slices of 25 jiffies, HZ / 10). The slice is the group's
//! `burst` ([`super::Limits::burst_or_default`]): 100 ms by default, the kernel's
//! `DFL_THROTL_SLICE_HD`; on a non-rotational device the kernel uses HZ / 50 (20 ms), which
//! `burst=20ms` gives.
//!
//! One difference: when a group has both a byte and a request limit in a direction, the
//! kernel (6.16 on) charges a request's bytes as soon as the byte limit lets it by and then
//! holds it for the request limit; here both are charged when it leaves.

use crate::time::ms;
use crate::Nanos;

/// One jiffy at HZ = 250.
pub const JIFFY: Nanos = ms(4);
/// Jiffies a second.
const HZ: u64 = 250;

/// The slice of one group in one direction, with its limits (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleSlice {
    bps: Option<u64>,
    iops: Option<u64>,
    /// The slice length, jiffies (at least 1).
    slice: u64,
    /// First jiffy of the slice.
    start: u64,
    /// Last jiffy of the slice.
    end: u64,
    bytes_dispatched: u64,
    requests_dispatched: u64,
}

fn jiffies(now: Nanos) -> u64 {
    now / JIFFY
}

fn round_up(value: u64, to: u64) -> u64 {
    value.div_ceil(to).saturating_mul(to)
}

/// What `rate` per second allows over `jiffies`.
fn allowed(rate: u64, jiffies: u64) -> u64 {
    let allowed = u128::from(rate) * u128::from(jiffies) / u128::from(HZ);
    u64::try_from(allowed).unwrap_or(u64::MAX)
}

impl ThrottleSlice {
    /// A slice for these limits (a zero rate is taken as 1), `slice` long, none begun.
    pub fn new(bps: Option<u64>, iops: Option<u64>, slice: Nanos) -> Self {
        Self {
            bps: bps.map(|r| r.max(1)),
            iops: iops.map(|r| r.max(1)),
            slice: jiffies(slice).max(1),
            start: 0,
            end: 0,
            bytes_dispatched: 0,
            requests_dispatched: 0,
        }
    }

    /// The slice as (start, end) in jiffies, and the bytes and requests counted in it.
    pub fn state(&self) -> (u64, u64, u64, u64) {
        (
            self.start,
            self.end,
            self.bytes_dispatched,
            self.requests_dispatched,
        )
    }

    fn used(&self, jiffy: u64) -> bool {
        !(self.start..=self.end).contains(&jiffy)
    }

    fn extend(&mut self, to: u64) {
        if self.end < to {
            self.end = round_up(to, self.slice);
        }
    }

    /// Jiffies a request of `bytes` must wait at jiffy `j`; 0 if it may go.
    fn wait(&self, bytes: u64, j: u64) -> u64 {
        let elapsed = j.saturating_sub(self.start);
        if let Some(bps) = self.bps {
            let rounded = round_up(elapsed.max(1), self.slice);
            let limit = allowed(bps, rounded);
            let wanted = self.bytes_dispatched.saturating_add(bytes);
            if wanted > limit {
                let extra = u128::from(wanted - limit) * u128::from(HZ) / u128::from(bps);
                let extra = u64::try_from(extra).unwrap_or(u64::MAX).max(1);
                return extra.saturating_add(rounded - elapsed);
            }
        }
        if let Some(iops) = self.iops {
            let rounded = round_up(elapsed + 1, self.slice);
            let limit = allowed(iops, rounded);
            if limit == 0 || self.requests_dispatched + 1 > limit {
                return (rounded - elapsed).max(HZ / iops + 1);
            }
        }
        0
    }

    /// When a request of `bytes` may go, as the slice now stands: `now` if it may now, else
    /// the jiffy the pending timer would fire on.
    pub fn ready_at(&self, bytes: u64, now: Nanos) -> Nanos {
        let j = jiffies(now);
        match self.wait(bytes, j) {
            0 => now,
            wait => j.saturating_add(wait).saturating_mul(JIFFY),
        }
    }

    /// Evaluate a request of `bytes` at the head of the queue at `now`, as the kernel does
    /// each time it works out a dispatch time: start a new slice if the last one ended and
    /// nothing was queued (`queue_empty`), else extend it a slice past now, and then to the
    /// request's dispatch time.
    pub fn evaluate(&mut self, bytes: u64, queue_empty: bool, now: Nanos) {
        let j = jiffies(now);
        if self.used(j) && queue_empty {
            self.start = j;
            self.end = j + self.slice;
            self.bytes_dispatched = 0;
            self.requests_dispatched = 0;
        } else {
            self.extend(j + self.slice);
        }
        let wait = self.wait(bytes, j);
        self.extend(j.saturating_add(wait));
    }

    /// Count a request of `bytes` dispatched at `now`, and trim the slice.
    pub fn charge(&mut self, bytes: u64, now: Nanos) {
        self.bytes_dispatched = self.bytes_dispatched.saturating_add(bytes);
        self.requests_dispatched += 1;
        self.trim(jiffies(now));
    }

    fn trim(&mut self, j: u64) {
        if self.used(j) {
            return;
        }
        self.end = round_up(j + self.slice, self.slice);
        let elapsed = (j - self.start) / self.slice * self.slice;
        if elapsed < 2 * self.slice {
            return;
        }
        // The last whole slice is kept, for timers that fire late.
        let elapsed = elapsed - self.slice;
        let bytes = self
            .bps
            .map_or(0, |bps| allowed(bps, elapsed).min(self.bytes_dispatched));
        let requests = self.iops.map_or(0, |iops| {
            allowed(iops, elapsed).min(self.requests_dispatched)
        });
        if bytes == 0 && requests == 0 {
            return;
        }
        self.bytes_dispatched -= bytes;
        self.requests_dispatched -= requests;
        self.start += elapsed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB64: u64 = 65536;

    #[test]
    fn a_whole_slice_is_allowed_at_once_and_the_next_request_waits_for_the_next_slice() {
        // 8 MiB/s over 25 jiffies: 838860 bytes, 12 requests of 64 KiB and most of a 13th.
        let mut slice = ThrottleSlice::new(Some(8 << 20), None, ms(100));
        slice.evaluate(KIB64, true, ms(1000));
        assert_eq!(slice.state(), (250, 275, 0, 0));
        for _ in 0..12 {
            assert_eq!(slice.ready_at(KIB64, ms(1000)), ms(1000));
            slice.charge(KIB64, ms(1000));
        }
        // 786432 + 65536 - 838860 = 13108 bytes short: 13108 * 250 / 8 MiB = 0 -> 1 jiffy,
        // plus the 25 left of the rounded slice.
        assert_eq!(slice.ready_at(KIB64, ms(1000)), ms(1000) + 26 * JIFFY);
        // Evaluated, the slice reaches past the dispatch time, rounded up to a slice.
        slice.evaluate(KIB64, false, ms(1000));
        assert_eq!(slice.state().1, 300);
    }

    #[test]
    fn trimming_keeps_the_last_whole_slice() {
        let mut slice = ThrottleSlice::new(Some(8 << 20), None, ms(100));
        slice.evaluate(KIB64, true, 0);
        for _ in 0..13 {
            slice.charge(KIB64, 0);
        }
        // Two slices later (jiffy 50): 25 jiffies' worth (838860 bytes) is cut off.
        slice.evaluate(KIB64, false, ms(200));
        slice.charge(KIB64, ms(200));
        assert_eq!(slice.state(), (25, 75, 14 * KIB64 - 838_860, 14));
    }

    #[test]
    fn an_iops_limit_waits_at_least_one_request_s_interval() {
        let mut slice = ThrottleSlice::new(None, Some(40), ms(100));
        slice.evaluate(4096, true, 0);
        // 40/s over one slice (rounded up from elapsed + 1): 4 requests.
        for _ in 0..4 {
            assert_eq!(slice.ready_at(4096, 0), 0);
            slice.charge(4096, 0);
        }
        // The rest of the slice (25 jiffies) is longer than HZ / 40 + 1 = 7.
        assert_eq!(slice.ready_at(4096, 0), 25 * JIFFY);
        // Near the end of the slice the wait is the interval: jiffy 24 + 7.
        assert_eq!(slice.ready_at(4096, ms(96)), 31 * JIFFY);
    }

    #[test]
    fn a_new_slice_starts_only_for_an_empty_queue_after_the_last_one_ended() {
        let mut slice = ThrottleSlice::new(Some(1 << 20), None, ms(100));
        slice.evaluate(KIB64, true, 0);
        slice.charge(KIB64, 0);
        // Queued: extended, counts kept.
        slice.evaluate(KIB64, false, ms(400));
        assert_eq!(slice.state(), (0, 125, KIB64, 1));
        // Empty queue after the end: a fresh slice.
        slice.evaluate(KIB64, true, ms(1000));
        assert_eq!(slice.state(), (250, 275, 0, 0));
    }
}
