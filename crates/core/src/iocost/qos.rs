//! The QoS parameters (`io.cost.qos`): latency targets and vrate bounds.
//!
//! `rpct`/`wpct` are the percentiles (percent) of read/write completion latencies that must
//! stay under `rlat`/`wlat` (microseconds); `min`/`max` bound vrate (percent of the model's
//! nominal speed). A zero percentile disables that latency check. The period of the vrate
//! timer follows from the looser of the two targets, as in `block/blk-iocost.c` (5.4 to
//! 6.x): the target times a multiplier that is 10 at the 50th percentile and 2 from the
//! 90th up, clamped to 1 ms..1 s.

use super::MILLION;
use std::fmt;

/// Lowest vrate the kernel accepts, in ppm (1%).
pub const VRATE_MIN_PPM: u64 = 10_000;
/// Highest vrate the kernel accepts, in ppm (10000%).
pub const VRATE_MAX_PPM: u64 = 100_000_000;
const MIN_PERIOD_US: u64 = 1_000;
const MAX_PERIOD_US: u64 = 1_000_000;

/// `io.cost.qos` in the kernel's internal units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Qos {
    /// Read latency percentile, ppm (0: no read target).
    pub rppm: u64,
    /// Read latency target, microseconds.
    pub rlat_us: u64,
    /// Write latency percentile, ppm (0: no write target).
    pub wppm: u64,
    /// Write latency target, microseconds.
    pub wlat_us: u64,
    /// Lowest vrate, ppm.
    pub min_ppm: u64,
    /// Highest vrate, ppm.
    pub max_ppm: u64,
}

impl Qos {
    /// The kernel's default for rotational disks: 250 ms targets, no percentile.
    pub const HDD: Qos = Qos::with_latency(250_000);
    /// The kernel's default for SSDs: 25 ms targets, no percentile.
    pub const SSD: Qos = Qos::with_latency(25_000);

    const fn with_latency(lat_us: u64) -> Qos {
        Qos {
            rppm: 0,
            rlat_us: lat_us,
            wppm: 0,
            wlat_us: lat_us,
            min_ppm: VRATE_MIN_PPM,
            max_ppm: VRATE_MAX_PPM,
        }
    }

    /// The vrate period in microseconds.
    pub fn period_us(&self) -> u64 {
        let (ppm, lat) = if self.rlat_us >= self.wlat_us {
            (self.rppm, self.rlat_us)
        } else {
            (self.wppm, self.wlat_us)
        };
        let multi = if ppm == 0 {
            2
        } else {
            (MILLION.saturating_sub(ppm) / 50_000).max(2)
        };
        (multi * lat).clamp(MIN_PERIOD_US, MAX_PERIOD_US)
    }

    /// Applies `key=value` pairs in `io.cost.qos` syntax (`rpct=95.00 rlat=5000 ...`;
    /// percentages may carry two decimals). `enable` and `ctrl` are accepted and ignored.
    pub fn apply(&mut self, text: &str) -> Result<(), QosError> {
        for pair in text.split_whitespace() {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| QosError(format!("`{pair}`: expected key=value")))?;
            match key {
                "rpct" => self.rppm = percent_ppm(value, 100)?,
                "wpct" => self.wppm = percent_ppm(value, 100)?,
                "rlat" => self.rlat_us = micros(value)?,
                "wlat" => self.wlat_us = micros(value)?,
                "min" => self.min_ppm = percent_ppm(value, 10_000)?.max(VRATE_MIN_PPM),
                "max" => self.max_ppm = percent_ppm(value, 10_000)?.min(VRATE_MAX_PPM),
                "enable" | "ctrl" => {}
                _ => {
                    return Err(QosError(format!(
                        "`{key}`: expected one of rpct, rlat, wpct, wlat, min, max"
                    )))
                }
            }
        }
        if self.min_ppm > self.max_ppm {
            return Err(QosError(format!(
                "min {}% above max {}%",
                self.min_ppm / 10_000,
                self.max_ppm / 10_000
            )));
        }
        Ok(())
    }
}

/// A malformed `io.cost.qos` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QosError(pub String);

impl fmt::Display for QosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "io.cost.qos: {}", self.0)
    }
}

impl std::error::Error for QosError {}

/// A percentage with up to two decimals (`95`, `95.5`, `99.99`) in ppm, if it is one and is
/// not above `ceiling` percent.
pub fn parse_percent(value: &str, ceiling: u64) -> Option<u64> {
    percent_ppm(value, ceiling).ok()
}

fn percent_ppm(value: &str, ceiling: u64) -> Result<u64, QosError> {
    let bad = || {
        QosError(format!(
            "`{value}`: expected a percentage 0..{ceiling} with up to two decimals"
        ))
    };
    let (whole, frac) = value.split_once('.').unwrap_or((value, ""));
    if frac.len() > 2 {
        return Err(bad());
    }
    let whole: u64 = whole.parse().map_err(|_| bad())?;
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<2}").parse().map_err(|_| bad())?
    };
    if whole > ceiling || (whole == ceiling && frac > 0) {
        return Err(bad());
    }
    Ok(whole * 10_000 + frac * 100)
}

fn micros(value: &str) -> Result<u64, QosError> {
    value
        .parse()
        .map_err(|_| QosError(format!("`{value}`: expected microseconds")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_file_syntax() {
        let mut q = Qos::SSD;
        q.apply("enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=90.5 wlat=10000 min=50.00 max=150")
            .unwrap();
        assert_eq!(
            q,
            Qos {
                rppm: 950_000,
                rlat_us: 5_000,
                wppm: 905_000,
                wlat_us: 10_000,
                min_ppm: 500_000,
                max_ppm: 1_500_000,
            }
        );
    }

    #[test]
    fn period_follows_the_looser_target() {
        assert_eq!(Qos::SSD.period_us(), 50_000);
        assert_eq!(Qos::HDD.period_us(), 500_000);
        let mut q = Qos::SSD;
        q.apply("rpct=50 rlat=30000").unwrap();
        assert_eq!(q.period_us(), 300_000);
    }

    #[test]
    fn rejects_bad_values_naming_them() {
        let mut q = Qos::SSD;
        assert_eq!(
            q.apply("rpct=101").unwrap_err().to_string(),
            "io.cost.qos: `101`: expected a percentage 0..100 with up to two decimals"
        );
        assert!(q.apply("min=90 max=80").is_err());
        assert!(q.apply("bogus=1").is_err());
    }
}
