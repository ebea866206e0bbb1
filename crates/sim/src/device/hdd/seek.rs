//! The seek-time curve: Lee's equation as DiskSim's `curve` seek type uses it. A seek of
//! `d ≥ 1` cylinders takes `t(d) = single + a·√(d−1) + b·(d−1)`: the square-root term
//! dominates short seeks (the arm accelerates and decelerates), the linear term long ones
//! (the arm coasts). `a` and `b` are fitted so that the curve passes exactly through the
//! three datasheet anchors: single-track time at 1 cylinder, average time at one third of
//! the stroke and full-stroke time at the last cylinder.

use ioslice_core::Nanos;

/// A seek-time curve through three anchors.
#[derive(Debug, Clone, PartialEq)]
pub struct SeekCurve {
    single_ns: f64,
    sqrt_ns: f64,
    linear_ns: f64,
    cylinders: u64,
}

/// Nanoseconds in a millisecond, as a float.
const NS_PER_MS: f64 = 1e6;

impl SeekCurve {
    /// Fit the curve to single-track, average (one-third stroke) and full-stroke times in
    /// milliseconds over `cylinders` cylinders. Fails, with a one-line reason, when the
    /// anchors cannot give a curve that rises with distance.
    pub fn new(
        single_ms: f64,
        average_ms: f64,
        full_ms: f64,
        cylinders: u64,
    ) -> Result<Self, String> {
        if cylinders < 4 {
            return Err(format!(
                "a seek curve needs at least 4 cylinders, got {cylinders}"
            ));
        }
        if !(0.0 < single_ms && single_ms < average_ms && average_ms < full_ms) {
            return Err(format!(
                "seek anchors must rise: single-track {single_ms} ms < average {average_ms} ms < full stroke {full_ms} ms"
            ));
        }
        let x1 = (Self::average_distance(cylinders) - 1) as f64;
        let x2 = (cylinders - 1) as f64;
        let avg = (average_ms - single_ms) * NS_PER_MS;
        let full = (full_ms - single_ms) * NS_PER_MS;
        let det = x1.sqrt() * x2 - x1 * x2.sqrt();
        let sqrt_ns = (avg * x2 - full * x1) / det;
        let linear_ns = (full * x1.sqrt() - avg * x2.sqrt()) / det;
        if sqrt_ns < 0.0 || linear_ns < 0.0 {
            return Err(format!(
                "seek anchors single-track {single_ms} ms, average {average_ms} ms, full stroke {full_ms} ms \
                 give a non-monotone curve; keep full stroke between about 1.7× and 3× the average"
            ));
        }
        Ok(Self {
            single_ns: single_ms * NS_PER_MS,
            sqrt_ns,
            linear_ns,
            cylinders,
        })
    }

    /// The distance, in cylinders, at which the curve takes the average seek time: one third
    /// of the stroke (the mean distance between two uniformly random cylinders).
    pub fn average_distance(cylinders: u64) -> u64 {
        (cylinders / 3).max(2)
    }

    /// Cylinders the curve was fitted over.
    pub fn cylinders(&self) -> u64 {
        self.cylinders
    }

    /// Time to seek `distance` cylinders (0 for no movement).
    pub fn time(&self, distance: u64) -> Nanos {
        if distance == 0 {
            return 0;
        }
        let x = (distance - 1) as f64;
        (self.single_ns + self.sqrt_ns * x.sqrt() + self.linear_ns * x).round() as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_through_anchors() {
        let curve = SeekCurve::new(0.8, 8.5, 18.0, 90_000).expect("valid anchors");
        assert_eq!(curve.time(0), 0);
        assert_eq!(curve.time(1), 800_000);
        assert_eq!(curve.time(SeekCurve::average_distance(90_000)), 8_500_000);
        assert_eq!(curve.time(90_000), 18_000_000);
    }

    #[test]
    fn rejects_non_monotone_anchors() {
        assert!(SeekCurve::new(0.8, 8.5, 9.0, 90_000).is_err());
        assert!(SeekCurve::new(0.8, 8.5, 40.0, 90_000).is_err());
        assert!(SeekCurve::new(9.0, 8.5, 18.0, 90_000).is_err());
    }
}
