//! The emulator's own transport time, and how it can be taken out of the model's view.
//!
//! Between an application and the emulator a request crosses the loop device, FUSE and a
//! copy of its data, and its answer crosses them back. With `sim:null` behind it (a device
//! that answers at once), 4 KiB reads at queue depth 1 through the loop device take about
//! 45 µs on this 2-vCPU VM and 64 KiB reads about 55 µs, against the 10–30 µs of a real
//! host's path to a real disk. For a disk that takes milliseconds it does not matter (4 KiB
//! random reads and 64 KiB sequential reads on `sim:sata-7200` come within 0.1 % of the
//! simulator's); for `sim:ssd` at queue depth 1 it adds a third to the model's 78 µs.
//!
//! Given a transport (`--transport FIXED_US+PER_MIB_US`, measured by the user, with `sim:null`
//! for instance), the emulator hands each request to the model that much earlier than it
//! arrived, so that the model sees it about when the application issued it. The model's
//! clock never goes back: a request is never handed over before the model's last event.
//! None is taken out by default: measuring it from inside the emulator gave 7 µs in one run
//! and 40 µs in the next (idle vCPUs wake at different speeds), which is worse than nothing.
//!
//! Touched by the FUSE session thread.

use std::time::Duration;

/// A round trip of `fixed` plus `per_mib` for each MiB of data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transport {
    /// What any request costs.
    pub fixed: Duration,
    /// What each MiB of data adds.
    pub per_mib: Duration,
}

impl Transport {
    /// No transport taken out: requests reach the model when they reach the emulator.
    pub const NONE: Self = Self {
        fixed: Duration::ZERO,
        per_mib: Duration::ZERO,
    };

    /// The round trip of a request of `bytes`.
    pub fn of(&self, bytes: u64) -> Duration {
        let per_byte = self.per_mib.as_nanos() as f64 / f64::from(1u32 << 20);
        self.fixed + Duration::from_nanos((per_byte * bytes as f64) as u64)
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1} µs + {:.1} µs per MiB",
            self.fixed.as_nanos() as f64 / 1e3,
            self.per_mib.as_nanos() as f64 / 1e3
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_grows_with_the_data() {
        let transport = Transport {
            fixed: Duration::from_micros(40),
            per_mib: Duration::from_micros(800),
        };
        assert_eq!(transport.of(0), Duration::from_micros(40));
        assert_eq!(transport.of(1 << 20), Duration::from_micros(840));
        assert_eq!(transport.of(64 << 10), Duration::from_micros(90));
        assert_eq!(Transport::NONE.of(1 << 20), Duration::ZERO);
        assert_eq!(transport.to_string(), "40.0 µs + 800.0 µs per MiB");
    }
}
