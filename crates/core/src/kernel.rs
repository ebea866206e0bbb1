//! Kernel releases: the `version` tunable of the policies whose behaviour changed across
//! Linux releases, and the kernel a run models.
//!
//! A release is written as the kernel numbers it (`2.6.10`, `2.6.28`, `4.4`) and kept as one
//! integer, `major × 10000 + minor × 100 + patch` (2.6.28 is 20628, 4.4 is 40400), so that a
//! tunable of unit [`UNIT`] orders and compares like any other. A policy with a `version`
//! tunable behaves as the newest release it models that is not after the value (so a later
//! release, `6.18` say, runs its newest model; one before its oldest is refused); `ioslice
//! schedulers` lists the releases each models and what differs.
//!
//! The kernel of a run (`--kernel 2.6.28`, or a job file's `; ioslice-kernel: 2.6.28`) sets
//! `version=` on whichever scheduler runs, if it has the tunable and was not given one
//! ([`crate::registry::with_kernel`]): a seed's scenario thereby brings its era's elevators
//! as it brings its disk.

/// The unit of a tunable whose values are kernel releases.
pub const UNIT: &str = "kernel";

/// The name of the tunable that selects a policy's release.
pub const TUNABLE: &str = "version";

/// The integer a release's text stands for: `2.6.28` → 20628, `4.4` → 40400; `None` for
/// text that is not two or three dot-separated numbers (minor and patch below 100).
pub fn parse(text: &str) -> Option<i64> {
    let mut parts = text.trim().split('.');
    let major: i64 = parts.next()?.parse().ok()?;
    let minor: i64 = parts.next()?.parse().ok()?;
    let patch: i64 = match parts.next() {
        Some(part) => part.parse().ok()?,
        None => 0,
    };
    if parts.next().is_some() || !(0..100).contains(&minor) || !(0..100).contains(&patch) {
        return None;
    }
    (0..1000)
        .contains(&major)
        .then_some(major * 10_000 + minor * 100 + patch)
}

/// The release an integer stands for, as the kernel writes it (`20628` → `2.6.28`,
/// `40400` → `4.4`).
pub fn format(value: i64) -> String {
    let (major, minor, patch) = (value / 10_000, value / 100 % 100, value % 100);
    if patch == 0 {
        format!("{major}.{minor}")
    } else {
        format!("{major}.{minor}.{patch}")
    }
}

/// Check a `--kernel` or `ioslice-kernel:` value: a release as the kernel writes it.
pub fn check(text: &str) -> Result<(), String> {
    parse(text).map(|_| ()).ok_or_else(|| {
        format!(
            "kernel release '{text}': expected one as the kernel writes it, such as 2.6.28 or 4.4"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_round_trip() {
        assert_eq!(parse("2.6.10"), Some(20610));
        assert_eq!(parse("2.6.28"), Some(20628));
        assert_eq!(parse(" 4.4 "), Some(40400));
        assert_eq!(format(20635), "2.6.35");
        assert_eq!(format(40400), "4.4");
        for text in [
            "", "2", "2.6.", "2.x.1", "2.6.100", "2.6.28.1", "-1.2", "1000.0",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
        assert!(check("2.6.28").is_ok());
        assert!(check("two").unwrap_err().contains("'two'"));
    }
}
